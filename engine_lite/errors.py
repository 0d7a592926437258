"""The one error type of the rules core.

`code` is stable (tests, the serial link and the ring's error blink key on
it); `message` names the field or the rule that was broken. `line` is set by
`replay` to the 1-based input line. Raising one means nothing was applied.
"""


class EngineError(ValueError):
    def __init__(self, code, message, line=None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.line = line

    def __str__(self):
        if self.line is None:
            return self.message
        return "line %d: %s" % (self.line, self.message)


def quote(value):
    """`value` quoted in a message, the same on both runtimes: repr, except
    that a non-ASCII character a name can hold prints as itself. MicroPython's
    repr escapes every one ('Zo\\xeb' for 'Zoë'), CPython's does not; control
    characters and the line separators stay escaped, so a message stays one
    line."""
    if type(value) is not str:
        return repr(value)
    out = "'"
    for ch in value:  # U+2028/2029 (ord >> 1 == 0x1014) are line breaks
        out += ch if ord(ch) >= 0xA0 and ord(ch) >> 1 != 0x1014 else repr(ch)[1:-1]
    return out + "'"


# Stable error codes. Short strings: they travel over the serial link.
BAD_JSON = "bad_json"  # the line is not a JSON object
BAD_EVENT = "bad_event"  # unknown `ev`, or an event the game does not have
BAD_FIELD = "bad_field"  # a field is missing, unknown or of the wrong type/range
NOT_STARTED = "not_started"  # first event is not `start`
ALREADY_STARTED = "already_started"
GAME_OVER = "game_over"  # play event after the game ended
NOT_OVER = "not_over"  # portfolio before the game ended
TURN_INCOMPLETE = "turn_incomplete"  # ending a turn / harvesting too early
UPKEEP = "upkeep"  # an action after the turn's first harvest
NO_TOKENS = "no_tokens"  # no Seedy Business token left
FLUSH_USED = "flush_used"  # second flush by the same player
EXCHANGE_EMPTY = "exchange_empty"  # nothing to plant or swap
TOO_MANY = "too_many"  # more than 25 tokens of a flower, or than the garden holds (R10)
PORTFOLIO_SIZE = "portfolio_size"  # a portfolio that is not 12/10/8 tokens (ruling R6)
ALREADY_ENTERED = "already_entered"  # second portfolio for a player
TRIGGERED = "triggered"  # manual crash after an end trigger
MIXED_TURN = "mixed_turn"  # take and plant in one turn, or two takes
HAND_SHORT = "hand_short"  # not enough seed cards for a plant
ORCHID_TAKEN = "orchid_taken"  # an orchid name planted twice, or a name both orchid and flora (R11)
DISPLAY_EMPTY = "display_empty"  # a 4th orchid or 5th flora in one turn (R14)
LAST_ROUND = "last_round"  # take in the last round
NOTHING_TO_UNDO = "nothing_to_undo"

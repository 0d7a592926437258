"""Game-record events <-> compact records.

The game record (docs/game-record.md) is JSON Lines of event dicts. The
engine, the board's flash log and the serial link work on compact records
instead: a `bytes` whose first byte is an opcode. Encoding is the ONE place
where an event's fields are checked (presence, type, range), so the state
machines in stalk.py and orchids.py only judge the rules. `decode` gives the
dict back exactly (optional start fields stay absent if they were absent).
"""

from engine_lite import const, tables
from engine_lite.errors import EngineError, BAD_EVENT, BAD_FIELD, NOT_STARTED, quote

STALK: int = const(0)  # annotated: mypy cannot follow const through engine_lite while it is half imported
ORCHIDS: int = const(1)
from engine_lite.vocab import GAMES  # by the start record's game byte

OP_START = const(1)  # game, n, flags, S, then n x (len, ascii name)
OP_PLANT = const(2)  # Stalk Exchange plant
OP_SWAP = const(3)
OP_FLUSH = const(4)
OP_HARVEST = const(5)  # flower index, count
OP_CRASH = const(6)
OP_END_TURN = const(7)  # both games; a second byte 1 = ended early (ruling R3)
OP_PORTFOLIO = const(8)  # seat, mask of flowers given, five counts
OP_TAKE = const(9)  # seeds
OP_SOW = const(10)  # Orchids plant: kind, points, seeds, name length, utf-8 name
OP_UNDO = const(11)  # only in raw logs (the board's flash); never in an effective log
OP_STUCK = const(12)  # Stalk Exchange: no action possible, go to the upkeep (ruling R3)

F_SHORT = const(1)  # start flags
F_LENGTH = const(2)  # `length` was given
F_TRACK = const(4)  # `track_start` was given
# Flags 8 (nonce), 16 (at), 32 (uptime): the game's identity and start time
# after the names (written by firmware/hw.py, read by engine_lite/stamp.py).

KINDS = ("orchid", "flora")  # a sow record's kind byte indexes it: 0 orchid, 1 flora
FLOWER_NAME_MAX = 48  # characters of an Orchids flower name
POINTS_MAX = 99  # flower points printed on a card (docs/rulings.md)

# Records without fields are constants, so the board never allocates them.
PLANT = bytes((OP_PLANT,))
SWAP = bytes((OP_SWAP,))
FLUSH = bytes((OP_FLUSH,))
CRASH = bytes((OP_CRASH,))
END_TURN = bytes((OP_END_TURN,))
UNDO = bytes((OP_UNDO,))
END_EARLY = bytes((OP_END_TURN, 1))
STUCK = bytes((OP_STUCK,))

_BARE = {"plant": PLANT, "swap": SWAP, "flush": FLUSH, "crash": CRASH, "end_turn": END_TURN, "stuck": STUCK}


def _bad(what):
    raise EngineError(BAD_FIELD, what)


def _whole(ev, key, lo, hi):
    """ev[key] as an int in lo..hi (bools and floats are refused)."""
    v = ev.get(key)
    if type(v) is not int or v < lo or v > hi:
        _bad("%s: %s must be a whole number from %d to %d" % (ev["ev"], key, lo, hi))
    return v


def _only(ev, keys):
    for k in ev:
        if k != "ev" and k not in keys:
            _bad("%s: unknown field %s" % (ev["ev"], k))


def check_name(name):
    """Player names: 1-12 printable ASCII characters, no outer spaces.
    (min/max of the UTF-8 bytes run in C: a loop over the characters was
    most of a game start's time on the board; any non-ASCII character
    encodes to bytes above 126.)"""
    if type(name) is not str or not 1 <= len(name) <= tables.NAME_MAX:
        return False
    b = name.encode("utf-8", "surrogatepass")  # CPython: a lone surrogate too
    return min(b) >= 32 and max(b) <= 126 and name.strip() == name


def player_names(names, where):
    """Validated list of 2-5 unique player names."""
    if type(names) is not list:
        _bad("%s: players must be a list of names" % where)
    if not tables.MIN_PLAYERS <= len(names) <= tables.MAX_PLAYERS:
        _bad("%s: players must be 2 to 5 names, got %d" % (where, len(names)))
    for i, name in enumerate(names):
        if not check_name(name):
            _bad("%s: player name %s must be 1-12 printable ASCII characters" % (where, quote(name)))
        if names.index(name) < i:  # an earlier seat has it (no slice copy)
            _bad("%s: player name %s is given twice" % (where, name))
    return names


def flower_index(name, where):
    if name not in tables.FLOWERS:
        _bad("%s: unknown flower %s" % (where, quote(name)))
    return tables.FLOWERS.index(name)


def flower_counts(counts, where, hi=tables.TOKENS_PER_FLOWER):
    """A {flower: count} dict as 6 bytes: a mask of the flowers named, then
    the five counts (a missing flower counts 0; the mask lets decode give
    back exactly the keys that were written)."""
    if type(counts) is not dict:
        _bad("%s must be an object of flower counts" % where)
    out = bytearray(6)
    for k in counts:
        i = flower_index(k, where)
        v = counts[k]
        if type(v) is not int or v < 0 or v > hi:
            _bad("%s: %s must be a whole number from %d to %d" % (where, k, 0, hi))  # _whole's words
        out[0] |= 1 << i
        out[1 + i] = v
    return out


def encode_start(ev):
    _only(ev, ("game", "players", "length", "track_start", "nonce", "at", "uptime"))
    game = ev.get("game")
    if game not in GAMES:
        _bad("start: unknown game %s" % quote(game))
    names = player_names(ev.get("players"), "start")
    n = len(names)
    flags = 0
    track = 0
    if game == "stalk-exchange":
        if "length" in ev:
            if n != 2:
                _bad("start: length applies to 2 players only")
            if ev["length"] not in ("long", "short"):
                _bad("start: length must be long or short")
            flags |= F_LENGTH
            if ev["length"] == "short":
                flags |= F_SHORT
        if "track_start" in ev:
            track = _whole(ev, "track_start", 1, tables.TRACK_START_MAX)
            flags |= F_TRACK
        else:
            key = tables.track_key(n, flags & F_SHORT)
            track = tables.TRACK_START_PLACEHOLDER[key]
    else:
        for k in ("length", "track_start"):
            if k in ev:
                _bad("start: %s is a Stalk Exchange field" % k)
    out = bytearray((OP_START, GAMES.index(game), n, flags, track))
    for name in names:
        out.append(len(name))
        out.extend(name.encode())
    if "nonce" in ev or "at" in ev or "uptime" in ev:  # JSON from a host (host-only module)
        from engine_lite.stamp import encode_fields

        return encode_fields(ev, out)
    return bytes(out)


def encode(ev, game, names):
    """Check an event dict's fields and return its compact record.

    `game` is STALK/ORCHIDS once a start was applied (None before);
    `names` the seat-ordered player names (portfolio events name a player).
    Raises EngineError(BAD_EVENT/BAD_FIELD) naming what is wrong.
    """
    if type(ev) is not dict:
        raise EngineError(BAD_EVENT, "event must be a JSON object")
    kind = ev.get("ev")
    if type(kind) is not str:
        raise EngineError(BAD_EVENT, "event has no \"ev\" name")
    if kind == "start":
        return encode_start(ev)
    if kind == "undo":
        _only(ev, ())
        return UNDO
    if kind == "end_turn":
        _only(ev, ("early",))
        if "early" not in ev:
            return END_TURN
        if ev["early"] is not True:
            _bad("end_turn: early must be true")
        return END_EARLY
    if game == STALK:
        if kind in _BARE:
            _only(ev, ())
            return _BARE[kind]
        if kind == "harvest":
            _only(ev, ("flower", "count"))
            f = flower_index(ev.get("flower"), "harvest")
            return encode_harvest(f, _whole(ev, "count", 1, tables.TOKENS_PER_FLOWER))
        if kind == "portfolio":
            _only(ev, ("player", "counts"))
            who = ev.get("player")
            if who not in names:
                _bad("portfolio: unknown player %s" % quote(who))
            counts = flower_counts(ev.get("counts"), "portfolio counts")
            return bytes((OP_PORTFOLIO, names.index(who))) + bytes(counts)
    elif game == ORCHIDS:
        if kind == "take":
            _only(ev, ("seeds",))
            return encode_take(_whole(ev, "seeds", 1, tables.SEED_DISPLAY))
        if kind == "plant":
            return encode_sow(ev)
    if game is None:
        raise EngineError(NOT_STARTED, "%s before start: the first event must be start" % kind)
    raise EngineError(BAD_EVENT, "unknown event %s for %s" % (quote(kind), GAMES[game]))


def encode_harvest(flower, count):
    """A harvest of `count` tokens of flower index `flower` (checked when applied)."""
    return bytes((OP_HARVEST, flower, count))


def encode_take(seeds):
    """An Oh My. Orchids! take of `seeds` Seed cards (checked when applied)."""
    return bytes((OP_TAKE, seeds))


def encode_portfolio(seat, counts):
    """A portfolio entered on the board: the seat and its five counts, every
    flower given (mask 31). The counts are checked when it is applied."""
    return bytes((OP_PORTFOLIO, seat, 31)) + bytes(counts)


def encode_sow(ev):
    _only(ev, ("name", "kind", "points", "seeds"))
    name = ev.get("name")
    if type(name) is not str or not name.strip() or len(name) > FLOWER_NAME_MAX:
        _bad("plant: name must be 1 to %d characters" % FLOWER_NAME_MAX)
    if ev.get("kind") not in KINDS:
        _bad("plant: kind must be orchid or flora")
    raw = name.encode()
    head = (
        OP_SOW,
        KINDS.index(ev["kind"]),
        _whole(ev, "points", 0, POINTS_MAX),
        _whole(ev, "seeds", 1, tables.HAND_LIMIT),
        len(raw),
    )
    return bytes(head) + raw


def start_names(rec):
    """Player names from a start record."""
    names = []
    i = 5
    for _ in range(rec[2]):
        k = rec[i]
        names.append(str(rec[i + 1 : i + 1 + k], "ascii"))  # decoded from the slice: no bytes() copy
        i += 1 + k
    return names


def sow_name(rec):
    return str(rec[5 : 5 + rec[4]], "utf-8")

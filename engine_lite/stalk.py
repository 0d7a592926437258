"""Stalk Exchange table rules: what the board can follow without seeing the garden.

State is a handful of ints and bytearrays, so applying a record allocates
nothing (the board's hot path). `apply` checks every rule BEFORE it changes
anything: a refused record leaves the state exactly as it was.
Rulings referenced below are in docs/rulings.md.
"""

from engine_lite import const, errors, record, tables
from engine_lite.ranking import ranked

# engine_lite/record.py's title, opcodes and start flags that these rules
# read, as private copies (tests/house/test_folded_consts.py holds them equal to
# record's): a const folds only within its module, and each `record.X` cost
# its name here and two lookups on every use.
_STALK = const(0)
_OP_PLANT = const(2)
_OP_SWAP = const(3)
_OP_FLUSH = const(4)
_OP_HARVEST = const(5)
_OP_CRASH = const(6)
_OP_END_TURN = const(7)
_OP_PORTFOLIO = const(8)
_OP_STUCK = const(12)
_F_SHORT = const(1)
_F_TRACK = const(4)

# What triggered the game's end (StalkState.trigger; the readout names it
# by TRIGGERS). Private: the compiler folds them into the code, no globals.
_NO_TRIGGER = const(0)
_CRASH = const(1)
_BAG = const(2)
TRIGGERS = (None, "crash", "bag")


class StalkState:
    game = _STALK  # which game these rules are (Game.game: no isinstance per event)

    def __init__(self, start):
        n = start[2]
        self.names = record.start_names(start)
        self.n = n
        self.track_start = start[4]
        self.track_given = bool(start[3] & _F_TRACK)
        self.short = bool(start[3] & _F_SHORT)
        self.values = bytearray(5)  # Stalk Values = harvested tokens per flower
        self.harvested = 0  # H: tokens on the market track
        self.bag = tables.bag_start(n)
        self.exchange = tables.EXCHANGE_SLOTS
        self.tokens = bytearray(tables.SEEDY_TOKENS[n])
        self.flushed = bytearray(n)
        self.player = 0
        self.turn = 1  # turns started, counting every seat's turns
        self.actions = 0  # basic actions (plant/swap) done this turn
        self.upkeep = False  # the first harvest closed the action phase
        self.trigger = _NO_TRIGGER
        self.over = False
        self.portfolios = bytearray(5 * n)
        self.entered = bytearray(n)
        self.garden = tables.GARDEN_SEED[n]  # tokens that may be harvested (R10)
        self.sown = 0  # bulbs planted this turn: not harvestable until the next

    # -- rules ----------------------------------------------------------

    def turn_done(self):
        """Two basic actions are done, the exchange is empty, or the players
        declared the turn stuck (ruling R3)."""
        return self.actions >= tables.BASIC_ACTIONS or self.exchange == 0 or self.upkeep

    def crash_distance(self):
        """Fewest further harvested tokens that could trigger the market crash.

        Each token of the leading flower moves both ends of the track one
        step closer, hence the halving (ruling R1)."""
        gap = self.track_start + 1 - self.harvested - max(self.values)
        return (gap + 1) // 2 if gap > 0 else 0

    def _draw(self, wanted):
        """Draw up to `wanted` tokens from the bag; emptying it triggers the end."""
        k = wanted if wanted < self.bag else self.bag
        self.bag -= k
        if self.bag == 0 and self.trigger == _NO_TRIGGER:
            self.trigger = _BAG
        return k

    def refused(self, op, early=False):
        """The error code that forbids `op` (record.OP_*) now, or None: the
        turn's rules only; what a record carries (counts, seats) is judged
        by apply. Allocates nothing (the ring asks after every event).
        `early`: an end of turn the players declared early (ruling R3)."""
        if op == _OP_PORTFOLIO:
            return None if self.over else errors.NOT_OVER
        if self.over:
            return errors.GAME_OVER
        if op == _OP_PLANT or op == _OP_SWAP or op == _OP_FLUSH or op == _OP_STUCK:
            if self.upkeep:  # "the action phase closed with the first harvest"
                return errors.UPKEEP
            if op == _OP_FLUSH and self.flushed[self.player]:  # once per game
                return errors.FLUSH_USED
            if op != _OP_STUCK and op != _OP_FLUSH and self.exchange == 0:
                return errors.EXCHANGE_EMPTY
            if self.cost(op) > self.tokens[self.player]:
                return errors.NO_TOKENS
        elif op == _OP_HARVEST or op == _OP_END_TURN:
            if not (self.turn_done() or early):
                return errors.TURN_INCOMPLETE
        elif op == _OP_CRASH:
            if self.trigger != _NO_TRIGGER:
                return errors.TRIGGERED
        else:
            return errors.BAD_EVENT
        return None

    def cost(self, op, k=0):
        """Seedy Business tokens `op` costs now: a flush one; a plant or a
        swap after the turn's two basic actions one ("Extra Actions")."""
        if op == _OP_FLUSH:
            return 1
        if (op == _OP_PLANT or op == _OP_SWAP) and self.actions >= tables.BASIC_ACTIONS:
            return 1
        return 0

    def apply(self, rec):
        op = rec[0]
        code = self.refused(op, op == _OP_END_TURN and len(rec) > 1)
        if code is not None:  # in words
            who = self.names[self.player]
            if code == errors.NOT_OVER:
                why = "portfolios come after the game"
            elif code == errors.GAME_OVER:
                why = "the game is over: only portfolios and undo remain"
            elif code == errors.UPKEEP:
                why = "the action phase closed with the first harvest"
            elif code == errors.FLUSH_USED:
                why = "%s has already flushed this game" % who
            elif code == errors.EXCHANGE_EMPTY:
                why = "the Stalk Exchange is empty"
            elif code == errors.NO_TOKENS:
                why = "%s has no Seedy Business token left for %s" % (who, "a flush" if op == _OP_FLUSH else "an extra action")
            elif code == errors.TURN_INCOMPLETE:
                why = "harvest: after the two basic actions (upkeep)" if op == _OP_HARVEST else "a turn ends after its two basic actions (R3)"
            elif code == errors.TRIGGERED:
                why = "the game end was already triggered (%s)" % TRIGGERS[self.trigger]
            else:
                why = "record %d is not a Stalk Exchange event" % op
            raise errors.EngineError(code, why)
        if op == _OP_PORTFOLIO:
            return self._portfolio(rec)
        if op == _OP_PLANT or op == _OP_SWAP:
            self.tokens[self.player] -= self.cost(op)
            self.actions += 1
            if op == _OP_PLANT:
                self.exchange -= 1
                self.sown += 1
        elif op == _OP_FLUSH:
            self.tokens[self.player] -= 1
            self.flushed[self.player] = 1
            self.exchange = self._draw(tables.EXCHANGE_SLOTS)
        elif op == _OP_HARVEST:
            f = rec[1]
            if self.values[f] + rec[2] > tables.TOKENS_PER_FLOWER:
                raise errors.EngineError(errors.TOO_MANY, "harvest: only %d %s tokens exist" % (tables.TOKENS_PER_FLOWER, tables.FLOWERS[f]))
            if rec[2] > self.garden:  # ruling R10
                raise errors.EngineError(errors.TOO_MANY, "harvest: at most %d tokens in the garden (R10: not this turn's bulbs)" % self.garden)
            self.garden -= rec[2]
            self.upkeep = True
            self.values[f] += rec[2]
            self.harvested += rec[2]
            if self.trigger == _NO_TRIGGER and self.crash_distance() == 0:
                self.trigger = _CRASH
        elif op == _OP_STUCK:  # ruling R3: straight to the upkeep
            self.upkeep = True
        elif op == _OP_CRASH:
            self.trigger = _CRASH
        else:  # OP_END_TURN
            # Upkeep step 4: compost the rightmost token, shift, refill.
            if self.exchange > 0:
                self.exchange -= 1
            self.exchange += self._draw(tables.EXCHANGE_SLOTS - self.exchange)
            if self.trigger != _NO_TRIGGER:
                self.over = True
            else:
                self.player = (self.player + 1) % self.n
                self.turn += 1
            self.actions = 0
            self.upkeep = False
            self.garden += self.sown
            self.sown = 0

    def _portfolio(self, rec):
        seat = rec[1]
        if self.entered[seat]:
            raise errors.EngineError(errors.ALREADY_ENTERED, "%s's portfolio is already in (undo to correct it)" % self.names[seat])
        size = sum(rec[3:8])
        if size != tables.PORTFOLIO_SIZE[self.n]:  # ruling R6: a swap is one for one
            raise errors.EngineError(errors.PORTFOLIO_SIZE, "portfolio: %s holds %d tokens, not %d" % (self.names[seat], size, tables.PORTFOLIO_SIZE[self.n]))
        for f in range(5):
            total = self.values[f] + rec[3 + f]
            for s in range(self.n):
                total += self.portfolios[5 * s + f]
            if total > tables.TOKENS_PER_FLOWER:
                raise errors.EngineError(
                    errors.TOO_MANY,
                    "portfolio: %s would make %d %s tokens, only %d exist" % (self.names[seat], total, tables.FLOWERS[f], tables.TOKENS_PER_FLOWER),
                )
        for f in range(5):
            self.portfolios[5 * seat + f] = rec[3 + f]
        self.entered[seat] = 1

    # -- snapshot (boot restore on the board) ---------------------------

    def dump_size(self):
        """Bytes of the mutable state as dump_into writes it (`load` is its inverse)."""
        return 18 + 8 * self.n  # 13 counters, values (5), per seat tokens, flushed, entered and a portfolio (5)

    def dump_into(self, out, i):
        """Write dump() into `out` from index i (Game.snapshot's one buffer)."""
        h, t = self.harvested, self.turn
        for v in (h & 255, h >> 8, self.bag, self.exchange, self.player, t & 255, t >> 8, self.actions, self.upkeep, self.trigger, self.over, self.garden, self.sown):
            out[i] = v
            i += 1
        for arr in (self.values, self.tokens, self.flushed, self.portfolios, self.entered):
            out[i : i + len(arr)] = arr
            i += len(arr)

    def load(self, b):
        n = self.n
        self.harvested = b[0] | b[1] << 8
        self.bag, self.exchange, self.player = b[2], b[3], b[4]
        self.turn = b[5] | b[6] << 8
        self.actions = b[7]
        self.upkeep = bool(b[8])
        self.trigger = b[9]
        self.over = bool(b[10])
        self.garden, self.sown = b[11], b[12]
        i = 13
        for arr in (self.values, self.tokens, self.flushed, self.portfolios, self.entered):
            arr[:] = b[i : i + len(arr)]
            i += len(arr)
        if i != len(b) or n != len(self.tokens):
            raise ValueError("snapshot size")

    # -- views ----------------------------------------------------------

    def all_entered(self):
        return self.over and min(self.entered) == 1

    def final(self):
        """The `final` dict (bust, scores, ranks): the board's results screen
        asks for this alone, not for the whole state dict around it."""
        portfolios = [self.portfolios[5 * s : 5 * s + 5] for s in range(self.n)]
        return final_scores(self.values, self.names, portfolios)


def flower_dict(counts):
    d = {}
    for i in range(5):
        d[tables.FLOWERS[i]] = counts[i]
    return d


def bust(values):
    """Final Stalk Values and the busted flowers.

    "The highest valued flower loses half of its value rounded-up ... In the
    event of a tie, ALL the tied Flower Stalks bust." v - ceil(v/2) == v // 2.
    With every value at 0 nothing busts (ruling R5)."""
    top = max(values)
    final = bytearray(values)
    busted = []
    if top > 0:
        for i in range(5):
            if values[i] == top:
                final[i] = top // 2
                busted.append(tables.FLOWERS[i])
    return final, busted


def score_rows(values, portfolios):
    """(final values, busted flowers, rows): bust, then per seat
    (score = sum(count x final value), tie-break key, seat), the rows that
    `ranked` orders.

    Tie-break key (ruling R2): from the highest final value down (the
    distinct final values, highest first: `levels`), the combined count of the flower types holding that value. Each flower's
    place in that order is found once, so a seat's key and score take one
    pass over its five counts (the board computes this on its results
    screen; the host explains a tie-break from the same rows)."""
    final, busted = bust(values)
    levels = sorted(set(final), reverse=True)
    place = [levels.index(v) for v in final]
    rows = []
    for s in range(len(portfolios)):
        c = portfolios[s]
        score = 0
        key = [0] * len(levels)
        for i in range(5):
            score += c[i] * final[i]
            key[place[i]] += c[i]
        rows.append((score, key, s))
    return final, busted, rows


def final_scores(values, names, portfolios):
    """The `final` dict: bust, then score = sum(count x final value), ranked
    (score_rows)."""
    final, busted, rows = score_rows(values, portfolios)
    return {
        "game": "stalk-exchange",
        "values": flower_dict(final),
        "busted": busted,
        "players": ranked(rows, names),
    }

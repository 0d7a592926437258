"""Stalk Exchange table rules: what the board can follow without seeing the garden.

State is a handful of ints and bytearrays, so applying a record allocates
nothing (the board's hot path). `apply` checks every rule BEFORE it changes
anything: a refused record leaves the state exactly as it was.
Rulings referenced below are in docs/rulings.md.
"""

try:
    from micropython import const
except ImportError:  # CPython

    def const(x):
        return x


from engine_lite import errors as E
from engine_lite import record as R
from engine_lite import tables as T
from engine_lite.ranking import ranked

NO_TRIGGER = const(0)
CRASH = const(1)
BAG = const(2)
TRIGGERS = (None, "crash", "bag")


class StalkState:
    game = R.STALK  # which game these rules are (Game.game: no isinstance per event)

    def __init__(self, start):
        n = start[2]
        self.names = R.start_names(start)
        self.n = n
        self.track_start = start[4]
        self.track_given = bool(start[3] & R.F_TRACK)
        self.short = bool(start[3] & R.F_SHORT)
        self.values = bytearray(5)  # Stalk Values = harvested tokens per flower
        self.harvested = 0  # H: tokens on the market track
        self.bag = T.bag_start(n)
        self.exchange = T.EXCHANGE_SLOTS
        self.tokens = bytearray(T.SEEDY_TOKENS[n])
        self.flushed = bytearray(n)
        self.player = 0
        self.turn = 1  # turns started, counting every seat's turns
        self.actions = 0  # basic actions (plant/swap) done this turn
        self.upkeep = False  # the first harvest closed the action phase
        self.trigger = NO_TRIGGER
        self.over = False
        self.portfolios = bytearray(5 * n)
        self.entered = bytearray(n)
        self.garden = T.GARDEN_SEED[n]  # tokens that may be harvested (R10)
        self.sown = 0  # bulbs planted this turn: not harvestable until the next

    # -- rules ----------------------------------------------------------

    def turn_done(self):
        """Two basic actions are done, the exchange is empty, or the players
        declared the turn stuck (ruling R3)."""
        return self.actions >= T.BASIC_ACTIONS or self.exchange == 0 or self.upkeep

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
        if self.bag == 0 and self.trigger == NO_TRIGGER:
            self.trigger = BAG
        return k

    def apply(self, rec):
        op = rec[0]
        if op == R.OP_PORTFOLIO:
            return self._portfolio(rec)
        if self.over:
            raise E.EngineError(E.GAME_OVER, "the game is over: only portfolios and undo remain")
        if op == R.OP_PLANT or op == R.OP_SWAP:
            self._check_action()
            if self.exchange == 0:
                raise E.EngineError(E.EXCHANGE_EMPTY, "the Stalk Exchange is empty")
            if self.actions >= T.BASIC_ACTIONS:
                self._check_token("an extra action")
                self.tokens[self.player] -= 1
            self.actions += 1
            if op == R.OP_PLANT:
                self.exchange -= 1
                self.sown += 1
        elif op == R.OP_FLUSH:
            self._check_action()
            if self.flushed[self.player]:
                raise E.EngineError(E.FLUSH_USED, "%s has already flushed this game" % self.names[self.player])
            self._check_token("a flush")
            self.tokens[self.player] -= 1
            self.flushed[self.player] = 1
            self.exchange = self._draw(T.EXCHANGE_SLOTS)
        elif op == R.OP_HARVEST:
            if not self.turn_done():
                raise E.EngineError(E.TURN_INCOMPLETE, "harvest: after the two basic actions (upkeep)")
            f = rec[1]
            if self.values[f] + rec[2] > T.TOKENS_PER_FLOWER:
                raise E.EngineError(E.TOO_MANY, "harvest: only %d %s tokens exist" % (T.TOKENS_PER_FLOWER, T.FLOWERS[f]))
            if rec[2] > self.garden:  # ruling R10
                raise E.EngineError(E.TOO_MANY, "harvest: at most %d tokens in the garden (R10: not this turn's bulbs)" % self.garden)
            self.garden -= rec[2]
            self.upkeep = True
            self.values[f] += rec[2]
            self.harvested += rec[2]
            if self.trigger == NO_TRIGGER and self.crash_distance() == 0:
                self.trigger = CRASH
        elif op == R.OP_STUCK:  # ruling R3: straight to the upkeep
            self._check_action()
            self.upkeep = True
        elif op == R.OP_CRASH:
            if self.trigger != NO_TRIGGER:
                raise E.EngineError(E.TRIGGERED, "the game end was already triggered (%s)" % TRIGGERS[self.trigger])
            self.trigger = CRASH
        elif op == R.OP_END_TURN:
            if not self.turn_done() and len(rec) == 1:
                raise E.EngineError(E.TURN_INCOMPLETE, "a turn ends after its two basic actions (R3)")
            # Upkeep step 4: compost the rightmost token, shift, refill.
            if self.exchange > 0:
                self.exchange -= 1
            self.exchange += self._draw(T.EXCHANGE_SLOTS - self.exchange)
            if self.trigger != NO_TRIGGER:
                self.over = True
            else:
                self.player = (self.player + 1) % self.n
                self.turn += 1
            self.actions = 0
            self.upkeep = False
            self.garden += self.sown
            self.sown = 0
        else:
            raise E.EngineError(E.BAD_EVENT, "record %d is not a Stalk Exchange event" % op)

    def _check_action(self):
        if self.upkeep:
            raise E.EngineError(E.UPKEEP, "the action phase closed with the first harvest")

    def _check_token(self, what):
        if self.tokens[self.player] == 0:
            raise E.EngineError(E.NO_TOKENS, "%s has no Seedy Business token left for %s" % (self.names[self.player], what))

    def _portfolio(self, rec):
        seat = rec[1]
        if not self.over:
            raise E.EngineError(E.NOT_OVER, "portfolios come after the game")
        if self.entered[seat]:
            raise E.EngineError(E.ALREADY_ENTERED, "%s's portfolio is already in (undo to correct it)" % self.names[seat])
        size = sum(rec[3:8])
        if size != T.PORTFOLIO_SIZE[self.n]:  # ruling R6: a swap is one for one
            raise E.EngineError(E.PORTFOLIO_SIZE, "portfolio: %s holds %d tokens, not %d" % (self.names[seat], size, T.PORTFOLIO_SIZE[self.n]))
        for f in range(5):
            total = self.values[f] + rec[3 + f]
            for s in range(self.n):
                total += self.portfolios[5 * s + f]
            if total > T.TOKENS_PER_FLOWER:
                raise E.EngineError(
                    E.TOO_MANY,
                    "portfolio: %s would make %d %s tokens, only %d exist" % (self.names[seat], total, T.FLOWERS[f], T.TOKENS_PER_FLOWER),
                )
        for f in range(5):
            self.portfolios[5 * seat + f] = rec[3 + f]
        self.entered[seat] = 1

    # -- snapshot (boot restore on the board) ---------------------------

    def dump_size(self):
        """Bytes of the mutable state as dump_into writes it (`load` is its inverse)."""
        return 13 + len(self.values) + len(self.tokens) + len(self.flushed) + len(self.portfolios) + len(self.entered)

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

    def to_dict(self):
        d = {
            "game": "stalk-exchange",
            "players": self.names,
            "current_player": None if self.over else self.names[self.player],
            "turn": self.turn,
            "actions": self.actions,
            "phase": "over" if self.over else ("upkeep" if self.upkeep else "action"),
            "values": flower_dict(self.values),
            "harvested": self.harvested,
            "bag": self.bag,
            "exchange": self.exchange,
            "tokens": {},
            "flush_used": {},
            "end_triggered": TRIGGERS[self.trigger],
            "game_over": self.over,
            "track_start": self.track_start,
            "track_start_placeholder": not self.track_given,
            "tokens_until_crash": self.crash_distance(),
            "portfolios_entered": [self.names[s] for s in range(self.n) if self.entered[s]],
        }
        for s in range(self.n):
            d["tokens"][self.names[s]] = self.tokens[s]
            d["flush_used"][self.names[s]] = bool(self.flushed[s])
        if self.all_entered():
            d["final"] = self.final()
        return d

    def final(self):
        """The `final` dict (bust, scores, ranks): the board's results screen
        asks for this alone, not for the whole state dict around it."""
        portfolios = [self.portfolios[5 * s : 5 * s + 5] for s in range(self.n)]
        return final_scores(self.values, self.names, portfolios)


def flower_dict(counts):
    d = {}
    for i in range(5):
        d[T.FLOWERS[i]] = counts[i]
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
                busted.append(T.FLOWERS[i])
    return final, busted


def final_scores(values, names, portfolios):
    """The `final` dict: bust, then score = sum(count x final value), ranked.

    Tie-break key (ruling R2): from the highest final value down, the
    combined count of the flower types holding that value. Each flower's
    place in that order is found once, so a seat's key and score take one
    pass over its five counts (the board computes this on its results
    screen)."""
    final, busted = bust(values)
    levels = sorted(set(final), reverse=True)
    place = [levels.index(v) for v in final]
    rows = []
    for s in range(len(names)):
        c = portfolios[s]
        score = 0
        key = [0] * len(levels)
        for i in range(5):
            score += c[i] * final[i]
            key[place[i]] += c[i]
        rows.append((score, key, s))
    return {
        "game": "stalk-exchange",
        "values": flower_dict(final),
        "busted": busted,
        "players": ranked(rows, names),
    }

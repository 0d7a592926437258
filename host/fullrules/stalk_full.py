"""Stalk Exchange with every physical component: the full-rules engine.

engine_lite follows the table from what players tell it; this module IS the
table. It keeps the garden (host/fullrules/garden.py), the six ordered exchange slots,
the greenhouse bag, the compost, the market track and every portfolio, each
as real token identities (0..124; a token's flower is `id // 25`), and plays
complete games with seeded policies.

Everything it does is also told to an `engine_lite.Game` as the table events
a player would enter (plant, swap, flush, harvest, end_turn, portfolio). It
never decides a table rule a second time: what is legal now and what it
costs (basic and extra actions, Seedy Business tokens, the flush, the end of
the action phase) it asks the engine's table (`Game.table.refused`, `cost`,
`turn_done`); Stalk Values, the end triggers, game over, bust and final
scores are read back from `Game.state()`. What it does itself is only what the board cannot see:
which token went where, which groups the garden harvests, what the bag gives.
With `check=True` it compares its own physical counts (bag, exchange, market
track per flower) with the engine's after every turn: that is the
cross-check of the core that tests/rules/test_full_stalk.py runs over many games.

Rulings for situations the rulebook leaves open are in docs/rulings.md,
section "Full engine (host)".
"""

import random

import engine_lite
from engine_lite import record
from engine_lite import tables
from host.fullrules.fullgame import begin, play_turns, record_lines, summary

from host.fullrules.garden import BULB, EMPTY, FLOWERS, Garden, default_layout

SLOTS = tables.EXCHANGE_SLOTS
NF = len(FLOWERS)
PER_FLOWER = tables.TOKENS_PER_FLOWER

PLANT = "plant"
SWAP = "swap"
FLUSH = "flush"

_track_defaults = {}


def default_track_start(players, length=None):
    """The engine's start space S for this table (its settings table).

    Asked from engine_lite once per table shape, so the simulator knows S
    without copying the number. A record leaves `track_start` out unless it
    was given: a placeholder must never read as the printed number."""
    key = (players, length)
    if key not in _track_defaults:
        g = engine_lite.Game()
        ev = {"ev": "start", "game": "stalk-exchange", "players": ["P%d" % i for i in range(players)]}
        if length is not None:
            ev["length"] = length
        g.apply(ev)
        _track_defaults[key] = g.state()["track_start"]
    return _track_defaults[key]


class Mismatch(AssertionError):
    """The full engine and engine_lite disagree: a bug in one of them."""


class StalkGame:
    """One complete game. Build it, call `play()`, read `result()`.

    `policies` is one policy per seat (see RandomPolicy / GreedyPolicy);
    `rng` drives every random draw of the bag, so a seed fixes the game."""

    def __init__(self, names, seed=0, policies=None, length=None, track_start=None, layout=None, check=True, max_turns=1000):
        begin(self, "Stalk Exchange", names, seed, policies, GreedyPolicy, check, max_turns)
        n = self.n
        self.length = length
        self.track_start = default_track_start(n, length) if track_start is None else track_start
        layout = default_layout() if layout is None else layout
        seeding = layout.bee if n == 2 else layout.butterfly
        if len(seeding) != tables.GARDEN_SEED[n]:
            raise ValueError(
                "layout %s has %d %s spaces, a %d-player game seeds %d" % (layout.name, len(seeding), "Bee" if n == 2 else "Butterfly", n, tables.GARDEN_SEED[n])
            )

        # Setup 2: all 125 tokens into the greenhouse bag, mixed. Drawing is
        # pop() from a shuffled list: the same as drawing at random.
        bag = list(range(PER_FLOWER * NF))
        self.rng.shuffle(bag)
        self.bag = bag
        self.compost = []
        self.market = []  # harvested tokens, in the order they reach the track
        # Setup 5: portfolios, per player per flower a list of token ids.
        self.portfolios = []
        for _ in range(n):
            pf = [[] for _ in range(NF)]
            for _ in range(tables.PORTFOLIO_SIZE[n]):
                t = bag.pop()
                pf[t // PER_FLOWER].append(t)
            self.portfolios.append(pf)
        # Setup 6: seed the garden, flower side up.
        self.garden = Garden(layout)
        for i in seeding:
            t = bag.pop()
            self.garden.seed(i, t // PER_FLOWER, t)
        # Setup 7: the exchange, slot 0 leftmost (next to the bag), 5 rightmost.
        self.exchange = [bag.pop() for _ in range(SLOTS)]

        start = {"ev": "start", "game": "stalk-exchange", "players": self.names}
        if track_start is not None:  # a placeholder stays one: replay says track_start_placeholder
            start["track_start"] = track_start
        if length is not None:
            start["length"] = length
        self.g = engine_lite.Game()
        self.g.apply(start)
        # The engine's compact records of the events this module emits, encoded
        # once per game by the engine itself (Game.encode) and applied with
        # Game.apply_record: the same checks, without re-parsing a dict per event.
        enc = self.g.encode
        self._rec_plant = enc({"ev": "plant"})
        self._rec_swap = enc({"ev": "swap"})
        self._rec_flush = enc({"ev": "flush"})
        self._rec_end = enc({"ev": "end_turn"})
        self._rec_harvest = {}
        self.seat = 0
        self.turns = 0
        self.garden_changed = True  # the first upkeep checks the seeded garden
        self.end_reason = None
        self.final = None
        self.values = [0] * NF
        self.stats = {PLANT: 0, SWAP: 0, FLUSH: 0, "extra": 0, "harvest_events": 0}
        if check:
            self.cross_check(self.g.state())

    # -- what a policy may ask -------------------------------------------
    # The action economy (basic and extra actions, Seedy Business tokens, the
    # once-per-game flush, when a turn may end) is engine_lite's: these ask
    # its table (refused/cost/turn_done) and never count for themselves.

    @property
    def tokens_left(self):
        """The active player's Seedy Business tokens, as engine_lite holds them."""
        table = self.g.table
        return table.tokens[table.player]

    @property
    def flush_used(self):
        table = self.g.table
        return bool(table.flushed[table.player])

    def exchange_count(self):
        return SLOTS - self.exchange.count(None)

    def action_cost(self):
        """Seedy Business tokens the next plant or swap costs: 0 while a
        basic action is left, 1 for an extra action (engine_lite's cost)."""
        return self.g.table.cost(record.OP_PLANT)

    def may_act(self):
        """Another plant/swap is legal now (engine_lite's refused): the action
        phase is open, the exchange holds a token, and a basic action is
        left or a Seedy Business token pays for an extra."""
        return self.g.table.refused(record.OP_PLANT) is None

    def may_end(self):
        """The turn may move on to the upkeep (two basic actions done, or the
        exchange is empty: ruling "Turn with an empty exchange"): engine_lite's
        turn_done."""
        return self.g.table.turn_done()

    def may_flush(self):
        """A flush is legal now: a token left and not flushed yet this game
        (engine_lite's refused)."""
        return self.g.table.refused(record.OP_FLUSH) is None

    def occupied_slots(self):
        return [i for i in range(SLOTS) if self.exchange[i] is not None]

    def legal_swaps(self, seat=None):
        """(slot, flower given) pairs: "replaces it with a different type of
        Flower token from their Portfolio"."""
        pf = self.portfolios[self.seat if seat is None else seat]
        out = []
        for s in range(SLOTS):
            t = self.exchange[s]
            if t is None:
                continue
            a = t // PER_FLOWER
            for b in range(NF):
                if b != a and pf[b]:
                    out.append((s, b))
        return out

    def counts(self, seat):
        return [len(x) for x in self.portfolios[seat]]

    # -- actions (each told to the engine first, then done on the table) ----

    def do_plant(self, slot, cell):
        t = self.exchange[slot]
        if t is None or self.garden.cells[cell] != EMPTY:
            raise ValueError("plant: slot %d is empty or space %d is occupied" % (slot, cell))
        extra = self.g.table.cost(record.OP_PLANT) > 0  # asked before the engine counts it
        self.g.apply_record(self._rec_plant)
        self.exchange[slot] = None
        self.garden.plant(cell, t // PER_FLOWER, t)
        self.garden_changed = True
        self.stats[PLANT] += 1
        if extra:
            self.stats["extra"] += 1

    def do_swap(self, slot, give):
        t = self.exchange[slot]
        pf = self.portfolios[self.seat]
        if t is None or give == t // PER_FLOWER or not pf[give]:
            raise ValueError("swap: needs a token on slot %d and a different type in the portfolio" % slot)
        extra = self.g.table.cost(record.OP_SWAP) > 0  # asked before the engine counts it
        self.g.apply_record(self._rec_swap)
        pf[t // PER_FLOWER].append(t)
        self.exchange[slot] = pf[give].pop()
        self.stats[SWAP] += 1
        if extra:
            self.stats["extra"] += 1

    def do_flush(self):
        """Everything on the exchange to the compost, then refill all six
        slots from the bag (as many as it still holds)."""
        self.g.apply_record(self._rec_flush)
        ex = self.exchange
        for s in range(SLOTS):
            if ex[s] is not None:
                self.compost.append(ex[s])
                ex[s] = None
        self._refill()
        self.stats[FLUSH] += 1

    def _refill(self):
        """Fill empty slots from the right, so a short bag leaves the gaps
        at the left (next to the bag)."""
        ex = self.exchange
        bag = self.bag
        for s in range(SLOTS - 1, -1, -1):
            if ex[s] is None:
                if not bag:
                    return
                ex[s] = bag.pop()

    def move_exchange(self):
        """Upkeep step 4: "Move the rightmost flower on the Stalk Exchange into
        the Compost bag. Then shift the remaining Flower tokens as far right as
        possible. Lastly, refill the Stalk Exchange from the Greenhouse Bag."

        Rightmost means the rightmost token present (a gap left by a plant
        is skipped); the shift keeps the tokens' order."""
        ex = self.exchange
        for s in range(SLOTS - 1, -1, -1):
            if ex[s] is not None:
                self.compost.append(ex[s])
                ex[s] = None
                break
        kept = [t for t in ex if t is not None]
        self.exchange = [None] * (SLOTS - len(kept)) + kept
        self._refill()

    # -- the turn ----------------------------------------------------------

    def begin_turn(self, st):
        """The Stalk Values the policies weigh, from the engine's state dict
        (actions, tokens and the flush are read from its table when asked)."""
        v = st["values"]
        self.values = [v[f] for f in FLOWERS]

    def play_turn(self, st):
        """One turn: the policy's action phase, then the four upkeep steps.
        Returns the engine state after end_turn."""
        self.begin_turn(st)
        policy = self.policies[self.seat]
        while True:
            act = policy.choose(self)
            if act is None:
                if self.may_end():
                    break
                if self._stuck():
                    return None
                raise ValueError("policy %r stopped before its two basic actions" % policy)
            kind = act[0]
            if kind == PLANT:
                self.do_plant(act[1], act[2])
            elif kind == SWAP:
                self.do_swap(act[1], act[2])
            elif kind == FLUSH:
                self.do_flush()
            else:
                raise ValueError("unknown action %r" % (act,))
        if self.garden_changed:
            # Upkeep step 1 + 3: harvest, and tell the engine per flower.
            harvested = self.garden.harvest()
            for f in range(NF):
                got = harvested[f]
                if got:
                    key = (f, len(got))
                    rec = self._rec_harvest.get(key)
                    if rec is None:
                        rec = self._rec_harvest[key] = self.g.encode({"ev": "harvest", "flower": FLOWERS[f], "count": len(got)})
                    self.g.apply_record(rec)
                    self.market.extend(got)
                    self.stats["harvest_events"] += 1
            # Step 2: bloom.
            self.garden.bloom()
            self.garden_changed = False
        # (Unchanged since the last upkeep: an upkeep leaves no surrounded
        # group and no bulb next to an empty space, and swaps and flushes
        # never touch the garden, so steps 1-3 would find nothing.)
        # Step 4: move the exchange.
        self.g.apply_record(self._rec_end)
        self.move_exchange()
        self.turns += 1
        st = self.g.state()
        self.seat = (self.seat + 1) % self.n
        if self.check:
            self.cross_check(st)
            if not st["game_over"] and st["current_player"] != self.names[self.seat]:
                raise Mismatch("turn order: engine says %s, table %s" % (st["current_player"], self.names[self.seat]))
        return st

    def _stuck(self):
        """No legal action is left but the engine still wants basic actions.

        Happens only when the garden is full and no swap is possible (every
        exchange token is the one type the player holds) and no flush is
        available. The rulebook says "If it is no longer possible to take any
        actions, move onto the Upkeep phase" (players declare it with an early
        end_turn, ruling R3); the full engine does not play such turns and
        records the game as stalled (ruling H7)."""
        if self.may_act() and self.exchange_count() and (self.garden.empty_spaces() or self.legal_swaps()):
            return False
        if self.may_flush():
            return False
        self.end_reason = "stalled"
        return True

    def play(self):
        """Play to the end, enter every portfolio, return result()."""
        st = play_turns(self)
        if st is None:
            return self.result()
        self.end_reason = st["end_triggered"]
        for s in range(self.n):
            c = self.counts(s)
            self.g.apply({"ev": "portfolio", "player": self.names[s], "counts": dict(zip(FLOWERS, c))})
        st = self.g.state()
        self.final = st["final"]
        if self.check:
            self.cross_check(st)
        return self.result()

    # -- results and checks --------------------------------------------------

    def result(self):
        """Plain summary: end reason, turns, per-seat scores and ranks."""
        return summary(self, "stalk-exchange")

    def events(self):
        return self.g.events()

    def record_lines(self):
        return record_lines(self.g)

    def cross_check(self, st):
        """Physical table vs. engine_lite: bag, exchange, market track per
        flower, every token accounted for exactly once."""
        if st["bag"] != len(self.bag):
            raise Mismatch("bag: engine %d, table %d" % (st["bag"], len(self.bag)))
        if st["exchange"] != self.exchange_count():
            raise Mismatch("exchange: engine %d, table %d" % (st["exchange"], self.exchange_count()))
        per = [0] * NF
        for t in self.market:
            per[t // PER_FLOWER] += 1
        for f in range(NF):
            if st["values"][FLOWERS[f]] != per[f]:
                raise Mismatch("value of %s: engine %d, market track %d" % (FLOWERS[f], st["values"][FLOWERS[f]], per[f]))
        if st["harvested"] != len(self.market):
            raise Mismatch("harvested: engine %d, market track %d" % (st["harvested"], len(self.market)))
        everything = list(self.bag) + self.compost + self.market + [t for t in self.exchange if t is not None]
        everything += [t for t in self.garden.tokens if t is not None]
        for pf in self.portfolios:
            for lst in pf:
                everything.extend(lst)
        if sorted(everything) != list(range(PER_FLOWER * NF)):
            raise Mismatch("the 125 tokens are not each in exactly one place")


# ---------------------------------------------------------------------------
# Policies. A policy's choose(game) returns ("plant", slot, space),
# ("swap", slot, flower given), ("flush",) or None to go to the upkeep.


class RandomPolicy:
    """A random legal move, with a seeded rng: a random occupied slot, then
    plant or swap with even odds (whichever is possible), on a random empty
    space or for a random different type held.

    After its two basic actions it spends a Seedy Business token on an extra
    action one time in five, and flushes (when allowed) one decision in
    twenty: enough to exercise every event in the cross-check."""

    name = "random"

    def __init__(self, rng):
        self.rng = rng

    def choose(self, game):
        r = self.rng
        if game.action_cost() and (game.tokens_left == 0 or r.random() < 0.8):
            return None
        if game.may_flush() and r.random() < 0.05:
            return (FLUSH,)
        ex = game.exchange
        if game.may_act() and game.exchange_count():
            # Draw a random occupied slot, then a move for it: plant it on a
            # random empty space, or swap it for a random different held type.
            while True:
                slot = int(r.random() * SLOTS)
                if ex[slot] is not None:
                    break
            a = ex[slot] // PER_FLOWER
            counts = game.counts(game.seat)
            give = [b for b in range(NF) if b != a and counts[b]]
            garden = game.garden
            can_plant = garden.empty != 0
            if can_plant and (not give or r.random() < 0.5):
                cells = garden.cells
                while True:
                    cell = int(r.random() * len(cells))
                    if cells[cell] == EMPTY:
                        return (PLANT, slot, cell)
            if give:
                return (SWAP, slot, give[int(r.random() * len(give))])
            if not can_plant:
                swaps = game.legal_swaps()  # another slot may still allow a swap
                if swaps:
                    s, b = swaps[r.randrange(len(swaps))]
                    return (SWAP, s, b)
        if not game.may_end() and game.may_flush():
            return (FLUSH,)
        return None


class GreedyPolicy:
    """One-step greedy: the best immediate gain for its own portfolio.

    It values a flower at its Stalk Value, or at the busted value when that
    flower leads (a leader will lose half). A swap gains the value of what it
    takes minus what it gives. A plant gains, for every bloomed group that
    the planted bulb surrounds (the group's last empty neighbour), how much
    that harvest would raise its score above a typical opponent's (one
    holding an even share of every flower), bust included, were the game to
    end now; a third of that for the second-to-last empty neighbour, which
    sets the harvest up. The bulb it plants is the flower it holds most. Any plant
    is worth `plant_bonus` and any swap costs `swap_cost`, because bulbs are
    what moves the market and a swap for a flower worth the same is a waste.
    Extra actions are bought only for a gain of at least `extra_threshold`;
    it flushes only when it owes a basic action and has no other move.
    """

    name = "greedy"

    def __init__(self, rng, extra_threshold=3.0, swap_cost=1.0, plant_bonus=0.5):
        self.rng = rng
        self.extra_threshold = extra_threshold
        self.swap_cost = swap_cost
        self.plant_bonus = plant_bonus

    def choose(self, game):
        if not game.may_act():
            return None
        slots = game.occupied_slots()
        if not slots:
            return None
        values = game.values
        top = max(values)
        counts = game.counts(game.seat)
        share = sum(counts) / NF
        eff = [v // 2 if v == top and top > 0 else v for v in values]
        # How many of each flower it holds above a typical opponent's share.
        want = [counts[f] - share for f in range(NF)]

        def lead(vals):
            # its score minus a typical opponent's, were the game to end now
            top = max(vals)
            total = 0.0
            for t in range(NF):
                v = vals[t]
                if v == top and top > 0:
                    v = top // 2  # the bust, as the policy expects it
                total += want[t] * v
            return total

        base = lead(values)
        harvest_gain = {}

        def gain_of(flower, size):
            key = flower * 64 + size
            g = harvest_gain.get(key)
            if g is None:
                vals = list(values)
                vals[flower] += size
                g = harvest_gain[key] = lead(vals) - base
            return g

        best = None
        best_gain = -1e9
        ex = game.exchange
        # Give away the held flower worth least (the next one if it is the
        # same type as the one taken).
        held = sorted((eff[b], b) for b in range(NF) if counts[b])
        for s in slots:
            a = ex[s] // PER_FLOWER
            for vb, b in held:
                if b != a:
                    gain = eff[a] - vb - self.swap_cost
                    if gain > best_gain:
                        best_gain = gain
                        best = (SWAP, s, b)
                    break

        garden = game.garden
        empty = garden.empty
        if empty:
            # Gains keyed by the space's bit on the bitboard (cheaper than
            # converting every frontier to indexes).
            gains = {}
            pb = self.plant_bonus
            for flower, members, frontier in garden.group_masks():
                if not frontier:
                    continue  # already caught by an earlier plant this turn
                low = frontier & -frontier
                rest = frontier ^ low
                if not rest:
                    # The last empty neighbour: planting there harvests it now.
                    w = gain_of(flower, members.bit_count())
                    gains[low] = gains.get(low, pb) + w
                elif not rest & (rest - 1):
                    # One of the last two: sets the harvest up for later.
                    w = gain_of(flower, members.bit_count()) * 0.3
                    gains[low] = gains.get(low, pb) + w
                    gains[rest] = gains.get(rest, pb) + w
            # The bulb to plant: the flower it most wants to see harvested later.
            slot = slots[0]
            for s in slots:
                if want[ex[s] // PER_FLOWER] > want[ex[slot] // PER_FLOWER]:
                    slot = s
            L = garden.layout
            cellbit = 0
            gain = pb
            if gains:
                cellbit = max(gains, key=gains.__getitem__)
                gain = gains[cellbit]
            if gain < 0 or not cellbit:
                safe = empty
                for k in gains:
                    safe &= ~k
                if safe:
                    cellbit = 0
                    gain = pb
                    cells = L.indexes(safe)
                    cell = cells[self.rng.randrange(len(cells))]
            if cellbit:
                cell = L.index_of_pos[cellbit.bit_length() - 1]
            if gain > best_gain or best is None:
                best_gain = gain
                best = (PLANT, slot, cell)

        if best is None and not game.may_end() and game.may_flush():
            return (FLUSH,)  # no plant or swap left: a flush is the only way on
        if game.action_cost() and best_gain < self.extra_threshold:
            return None
        return best


POLICIES = {"random": RandomPolicy, "greedy": GreedyPolicy}


def play_game(names, seed, policy_names=("greedy",), length=None, track_start=None, layout=None, check=True):
    """Play one seeded game; `policy_names` is cycled over the seats.

    Every policy gets its own rng derived from the game seed, so a seat's
    choices never shift the bag's draws."""
    master = random.Random(seed)
    policies = []
    for i in range(len(names)):
        cls = POLICIES[policy_names[i % len(policy_names)]]
        policies.append(cls(random.Random(master.getrandbits(64))))
    game = StalkGame(names, seed=master.getrandbits(64), policies=policies, length=length, track_start=track_start, layout=layout, check=check)
    game.play()
    return game

"""Oh My. Orchids! table rules: seeds in hand, flowers planted, the last round.

As in stalk.py, `apply` checks every rule before it changes anything.
Flowers are kept as (name, kind, points, hash of the identity key) tuples:
names matter for the variety bonus and for "each orchid card is unique"
(rulings R7, R11). The hash is a small int (no heap); the key itself (a
tuple of bytes, ~130 bytes a flower on the 64-bit port) is rebuilt from the
name only where a hash matches and at the final score.
"""

from engine_lite import const, errors, record, tables
from engine_lite.ranking import ranked

# engine_lite/record.py's title and opcodes these rules read, as private copies
# (tests/house/test_folded_consts.py holds them equal to record's): a const folds
# only within its module.
_ORCHIDS = const(1)
_OP_END_TURN = const(7)
_OP_TAKE = const(9)
_OP_SOW = const(10)

_NONE = const(0)  # what the player has done this turn: nothing, a take,
_TOOK = const(1)  # or _TOOK + k for k plants (their cards are the last k of the
# seat's flowers: the display bound, ruling R14, counts them by kind)


class OrchidsState:
    game = _ORCHIDS  # which game these rules are (Game.game: no isinstance per event)

    def __init__(self, start):
        self.names = record.start_names(start)
        self.n = n = len(self.names)
        self.hand = bytearray(tables.STARTING_SEEDS[:n])
        self.composted = [0] * n
        self.flowers = [[] for _ in range(n)]
        self.player = 0
        self.turn = 1
        self.done = _NONE
        self.last_round = False
        self.remaining = 0  # last-round turns still to play
        self.over = False

    def refused(self, op, early=False):
        """The error code that forbids `op` (record.OP_*) now, or None: the
        turn's rules only (a plant's cards and name are judged by apply).
        `early`: a pass the players declared (ruling R3)."""
        if self.over:
            return errors.GAME_OVER
        if op == _OP_TAKE:
            if self.last_round:  # "one last turn ... plant only"
                return errors.LAST_ROUND
            if self.done != _NONE:  # R9: one take, or plants, per turn
                return errors.MIXED_TURN
        elif op == _OP_SOW:
            if self.done == _TOOK:
                return errors.MIXED_TURN
        elif op == _OP_END_TURN:
            if self.done == _NONE and not self.last_round and not early:
                return errors.TURN_INCOMPLETE
        else:
            return errors.BAD_EVENT
        return None

    def cost(self, op, k=0):
        """What `op` costs the active player now, in Seed cards: a plant its
        `k` cards; a take of `k` cards the excess over the hand limit, which
        "must immediately" be composted."""
        if op == _OP_SOW:
            return k
        if op == _OP_TAKE:
            over = self.hand[self.player] + k - tables.HAND_LIMIT
            return over if over > 0 else 0
        return 0

    def apply(self, rec):
        op = rec[0]
        p = self.player
        code = self.refused(op, op == _OP_END_TURN and len(rec) > 1)
        if code is not None:  # in words
            if code == errors.GAME_OVER:
                why = "the game is over"
            elif code == errors.LAST_ROUND:
                why = "last round: plant only"
            elif code == errors.MIXED_TURN and op == _OP_SOW:
                why = "no planting after a take this turn"
            elif code == errors.MIXED_TURN:
                why = "took seeds already" if self.done == _TOOK else "planted: no take now"
            elif code == errors.TURN_INCOMPLETE:
                why = "a turn takes seeds or plants first"
            else:
                why = "record %d is not an Oh My. Orchids! event" % op
            raise errors.EngineError(code, why)
        if op == _OP_TAKE:
            over = self.cost(op, rec[1])  # composted at once
            self.composted[p] += over
            self.hand[p] += rec[1] - over
            self.done = _TOOK
        elif op == _OP_SOW:
            name = record.sow_name(rec)
            kind = record.KINDS[rec[1]]
            if rec[3] > self.hand[p]:
                raise errors.EngineError(errors.HAND_SHORT, "plant: Seed cards short: %s costs %d, %s holds %d" % (name, rec[3], self.names[p], self.hand[p]))
            # "any of the 7 Flower cards in the Orchid or Flora displays ...
            # replenished to 3 and 4 ... after" the action (ruling R14)
            row = self.flowers[p]
            cap = left = tables.DISPLAYS[rec[1]]
            for f in row[len(row) + _TOOK - self.done :]:  # this turn's plants
                if f[1] == kind:
                    left -= 1
            if not left:
                raise errors.EngineError(errors.DISPLAY_EMPTY, "plant: the %s display holds %d cards: refill comes after the turn" % (("Orchid", "Flora")[rec[1]], cap))
            key = clash(self.flowers, name, kind, "plant")
            self.hand[p] -= self.cost(op, rec[3])
            row.append((name, kind, rec[2], key))
            self.done = (self.done or _TOOK) + 1
        else:  # OP_END_TURN
            if self.last_round:
                self.remaining -= 1
                self.over = self.remaining == 0
            elif self.ends_game(p):
                # "All other players now have one last turn"
                self.last_round = True
                self.remaining = self.n - 1
            if not self.over:
                self.player = (p + 1) % self.n
                self.turn += 1
            self.done = _NONE

    def planted(self, seat):
        return len(self.flowers[seat])

    def ends_game(self, seat):
        """This seat has planted enough flowers to start the last round
        ("at least 7 flowers planted")."""
        return self.planted(seat) >= tables.LAST_ROUND_FLOWERS

    def new_name(self, kind):
        """A name for a plant entered without one (the board) that keeps the
        variety count right (ruling R7): every orchid distinct ("Orchid 3");
        kind 1, a flora of a type new to the player, a name they have not
        used ("Flora 2"); kind 2, a flora of a type already planted, the
        name of one they have (variety counts names), None if they have
        planted no flora."""
        if kind == 2:
            for f in self.flowers[self.player]:
                if f[1] == "flora":
                    return f[0]
            return None
        if kind:
            mine = [f[0] for f in self.flowers[self.player]]
            k = 1
            while "Flora %d" % k in mine:
                k += 1
            return "Flora %d" % k
        k = 1
        for row in self.flowers:
            for f in row:
                if f[1] == "orchid":
                    k += 1
        while True:  # the first free name from there
            name = "Orchid %d" % k
            try:
                clash(self.flowers, name, "orchid", "plant")
                return name
            except errors.EngineError:
                k += 1

    def dump_size(self):
        """Bytes of the mutable state as dump_into writes it (`load` is its inverse)."""
        n = 7 + 4 * self.n
        for row in self.flowers:
            for f in row:
                n += 3 + len(f[0].encode())
        return n

    def dump_into(self, out, i):
        """Write dump() into `out` from index i (Game.snapshot's one buffer)."""
        for v in (self.player, self.turn & 255, self.turn >> 8, self.done, self.last_round, self.remaining, self.over):
            out[i] = v
            i += 1
        out[i : i + self.n] = self.hand
        i += self.n
        for s in range(self.n):
            out[i] = self.composted[s] & 255
            out[i + 1] = self.composted[s] >> 8
            out[i + 2] = len(self.flowers[s])
            i += 3
            for f in self.flowers[s]:
                raw = f[0].encode()
                out[i] = record.KINDS.index(f[1])
                out[i + 1] = f[2]
                out[i + 2] = len(raw)
                out[i + 3 : i + 3 + len(raw)] = raw
                i += 3 + len(raw)

    def load(self, b):
        self.player = b[0]
        self.turn = b[1] | b[2] << 8
        self.done = b[3]
        self.last_round = bool(b[4])
        self.remaining = b[5]
        self.over = bool(b[6])
        n = self.n
        self.hand[:] = b[7 : 7 + n]
        i = 7 + n
        for s in range(n):
            self.composted[s] = b[i] | b[i + 1] << 8
            k = b[i + 2]
            i += 3
            row = []
            for _ in range(k):
                m = b[i + 2]
                name = str(bytes(b[i + 3 : i + 3 + m]), "utf-8")
                row.append((name, record.KINDS[b[i]], b[i + 1], hash(flower_key(name))))
                i += 3 + m
            self.flowers[s] = row
        if i != len(b):
            raise ValueError("snapshot size")

    def final(self):
        """The `final` dict alone (the board's results screen)."""
        return final_scores(self.names, self.flowers, self.composted)


def flower_key(name):
    """A flower's identity (ruling R11): its words with ASCII letters folded,
    as bytes. ASCII only: that is all MicroPython folds and splits at, and
    board and host must agree. A tuple: one allocation fewer than a join."""
    return tuple(name.encode().lower().split())


def clash(rows, name, kind, where):
    """Refuse a flower whose name is taken: every orchid is unique, and a
    name is either an orchid's or a flora's, never both (ruling R11).
    Returns the hash of the new flower's key; planted flowers keep theirs
    as f[3], so the check allocates nothing per planted flower (a key is
    rebuilt only where the hashes match, to tell a collision from a clash)."""
    k = flower_key(name)
    h = hash(k)
    for row in rows:
        for f in row:
            if f[3] == h and (kind == "orchid" or f[1] == "orchid") and flower_key(f[0]) == k:
                raise errors.EngineError(errors.ORCHID_TAKEN, "%s: %s is taken by the %s %s (orchids are unique)" % (where, name, f[1], f[0]))
    return h


def flower_points(flowers):
    total = 0
    for f in flowers:
        total += f[2]
    return total


def final_scores(names, flowers, composted):
    """Flower points + variety bonus - composted; ties -> more orchid cards.

    Variety counts distinct flower names: every orchid is its own type,
    copies of a flora card share one (rulings R7, R11)."""
    rows = []
    for s in range(len(names)):
        fp = flower_points(flowers[s])
        kinds = set()
        orchids = 0
        for f in flowers[s]:
            kinds.add(flower_key(f[0]))  # the key, not its hash: a collision must not merge two types
            if f[1] == "orchid":
                orchids += 1
        vb = tables.variety_bonus(len(kinds))
        rows.append((fp + vb - composted[s], [orchids], s, fp, vb, composted[s]))
    return {
        "game": "oh-my-orchids",
        "players": ranked(
            rows,
            names,
            lambda r: {"flower_points": r[3], "variety_bonus": r[4], "composted": r[5], "orchids": r[1][0]},
        ),
    }

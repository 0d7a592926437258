"""The Stalk Exchange garden: a hex board that only the host can see.

The board (engine_lite) hears "plant" and "harvest tulip x3" from the players;
it never sees where a flower went. This module is the garden itself, so the
full-rules engine (host/fullrules/stalk_full.py) can decide *which* flowers the upkeep
harvests and then tell engine_lite exactly what a player would have told it.

Coordinates are axial (q, r); the six neighbours of (q, r) are
(q+1, r), (q-1, r), (q, r+1), (q, r-1), (q+1, r-1), (q-1, r+1). A space with
fewer than six neighbours on the board touches the border.

Cell encoding (one small int per space, so copies and comparisons are cheap):
  0            empty
  1..5         a bloomed flower, FLOWERS index + 1
  BULB | 1..5  a bulb (flower side down) of that type

Two bloomed cells belong to one group exactly when their codes are equal and
they are adjacent; a bulb never equals a bloomed code, so bulbs are obstacles
"regardless of what kind of Flower it will be when it blooms".

The real board's shape is not known to us: the default layout in
data/garden_layout.json is a documented approximation (docs/simulation.md),
and any other layout file with the same format can be loaded instead.
"""

import functools
import os

from host.fullrules.fullgame import load_json

from engine_lite.vocab import FLOWERS
EMPTY = 0
BULB = 8
# Letters for hand-drawn boards: upper case = bloomed, lower case = bulb.
LETTERS = "DFGST"  # Dahlia, daFfodil, Globemaster, Snowdrop, Tulip

DIRECTIONS = ((1, 0), (-1, 0), (0, 1), (0, -1), (1, -1), (-1, 1))
DEFAULT_LAYOUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "garden_layout.json")


class LayoutError(ValueError):
    """A garden layout file that cannot be a garden (one-line message)."""


class Layout:
    """The fixed shape of a garden: its spaces, their neighbours and marks.

    Immutable and shared by every Garden built on it, so a simulation of
    thousands of games computes neighbour lists once."""

    def __init__(self, spaces, name="custom", bee=(), butterfly=()):
        self.name = name
        self.coords = list(spaces)
        self.index = {}
        for i, c in enumerate(self.coords):
            if c in self.index:
                raise LayoutError("layout %s: space %r appears twice" % (name, c))
            self.index[c] = i
        nbrs = []
        for q, r in self.coords:
            row = []
            for dq, dr in DIRECTIONS:
                j = self.index.get((q + dq, r + dr))
                if j is not None:
                    row.append(j)
            nbrs.append(tuple(row))
        self.neighbours = tuple(nbrs)
        # Bitboard: space (q, r) is bit (r - rmin + 1) * W + (q - qmin + 1) of
        # an int, with a blank column and row all around, so the six axial
        # neighbour moves are the shifts by 1, W and W - 1 either way and
        # nothing wraps onto a real space. Flood fills over these ints keep
        # the garden rules fast enough for thousands of games a minute.
        if self.coords:
            qmin = min(q for q, _ in self.coords)
            qmax = max(q for q, _ in self.coords)
            rmin = min(r for _, r in self.coords)
        else:
            qmin = qmax = rmin = 0
        self.width = qmax - qmin + 3
        self.bits = [1 << ((r - rmin + 1) * self.width + (q - qmin + 1)) for q, r in self.coords]
        self.index_of_pos = {}
        mask = 0
        for i, b in enumerate(self.bits):
            mask |= b
            self.index_of_pos[b.bit_length() - 1] = i
        self.mask = mask
        self.bee = tuple(self._indexes(bee, "bee"))
        self.butterfly = tuple(self._indexes(butterfly, "butterfly"))
        self._check_connected()

    def _indexes(self, coords, what):
        out = []
        for c in coords:
            c = tuple(c)
            if c not in self.index:
                raise LayoutError("layout %s: %s space %r is not on the board" % (self.name, what, c))
            out.append(self.index[c])
        if len(set(out)) != len(out):
            raise LayoutError("layout %s: a %s space is listed twice" % (self.name, what))
        return out

    def _check_connected(self):
        if not self.coords:
            raise LayoutError("layout %s: no spaces" % self.name)
        seen = {0}
        todo = [0]
        while todo:
            for j in self.neighbours[todo.pop()]:
                if j not in seen:
                    seen.add(j)
                    todo.append(j)
        if len(seen) != len(self.coords):
            raise LayoutError("layout %s: the spaces are not one connected board" % self.name)

    def __len__(self):
        return len(self.coords)

    def spread(self, m):
        """The spaces next to any space of bitboard `m` (m itself not included)."""
        w = self.width
        v = w - 1
        return ((m << 1) | (m >> 1) | (m << w) | (m >> w) | (m << v) | (m >> v)) & self.mask

    def reach(self, seed, within):
        """Every space of `within` connected to `seed` through `within`."""
        r = seed & within
        while True:
            n = (r | self.spread(r)) & within
            if n == r:
                return r
            r = n

    def indexes(self, m):
        """Space indexes of the bits set in bitboard `m`, lowest bit first."""
        out = []
        pos = self.index_of_pos
        while m:
            low = m & -m
            out.append(pos[low.bit_length() - 1])
            m ^= low
        return out

    @classmethod
    def load(cls, path=None):
        """Read a layout JSON file (format in docs/simulation.md)."""
        path = DEFAULT_LAYOUT if path is None else path
        data = load_json(path, "layout", LayoutError)
        try:
            spaces = [(int(q), int(r)) for q, r in data["spaces"]]
            bee = [tuple(c) for c in data.get("bee", [])]
            butterfly = [tuple(c) for c in data.get("butterfly", [])]
        except (KeyError, TypeError, ValueError):
            raise LayoutError("layout %s: needs \"spaces\": [[q, r], ...] and optional \"bee\"/\"butterfly\" lists" % path)
        return cls(spaces, data.get("name", os.path.basename(path)), bee, butterfly)


@functools.cache
def default_layout():
    """The shipped approximation, loaded once per process."""
    return Layout.load()


class Garden:
    """The spaces of one game's garden and what lies on them.

    `cells[i]` is the cell code of space i (see module docstring) and
    `tokens[i]` the identity of the physical token there (None when empty,
    or when a hand-drawn test board does not care). The same facts are kept
    as bitboards for the rules: `empty`, `bulbs` and `bloomed[f]` per flower.
    Change the garden only through seed/plant/harvest/bloom, which keep the
    two views in step."""

    __slots__ = ("layout", "cells", "tokens", "empty", "bulbs", "bloomed", "_groups")

    def __init__(self, layout=None):
        self.layout = default_layout() if layout is None else layout
        n = len(self.layout)
        self.cells = [EMPTY] * n
        self.tokens = [None] * n
        self.empty = self.layout.mask
        self.bulbs = 0
        self.bloomed = [0] * len(FLOWERS)
        self._groups = None  # group_masks() cache, valid while `bloomed` is unchanged

    def _sync(self):
        """Rebuild the bitboards from `cells` (after a drawing sets them)."""
        bits = self.layout.bits
        self._groups = None
        self.empty = 0
        self.bulbs = 0
        self.bloomed = [0] * len(FLOWERS)
        for i, c in enumerate(self.cells):
            if c == EMPTY:
                self.empty |= bits[i]
            elif c & BULB:
                self.bulbs |= bits[i]
            else:
                self.bloomed[c - 1] |= bits[i]

    # -- building --------------------------------------------------------

    @classmethod
    def from_drawing(cls, text):
        """A garden from a hand-drawn picture, for tests and rulings.

        Each line is a row; characters sit on a doubled-width hex grid, so a
        cell at column x of row y touches (x +- 2, y) and (x +- 1, y +- 1)
        (all cells on columns of one parity per row, alternating by row).
        `.` is an empty space, D F G S T a bloomed dahlia, daffodil,
        globemaster, snowdrop, tulip, lower case the same as a bulb. Blanks
        are not spaces: whatever is not drawn is the border."""
        spaces = []
        codes = []
        lines = text.strip("\n").split("\n")
        parity = None  # the drawing may start on an odd column
        for y, line in enumerate(lines):
            for x, ch in enumerate(line):
                if ch == " ":
                    continue
                if parity is None:
                    parity = (x + y) % 2
                if (x + y) % 2 != parity:
                    raise LayoutError("drawing: %r at row %d column %d is off the hex grid" % (ch, y, x))
                if ch == ".":
                    code = EMPTY
                elif ch in LETTERS:
                    code = LETTERS.index(ch) + 1
                elif ch in LETTERS.lower():
                    code = (LETTERS.lower().index(ch) + 1) | BULB
                else:
                    raise LayoutError("drawing: unknown cell %r" % ch)
                spaces.append(((x - y - parity) // 2, y))
                codes.append(code)
        g = cls(Layout(spaces, "drawing"))
        g.cells = codes
        g._sync()
        return g

    def drawing(self):
        """The inverse of from_drawing (tests, debugging, rulings)."""
        xs = {}
        for i, (q, r) in enumerate(self.layout.coords):
            xs[(2 * q + r, r)] = self.cells[i]
        if not xs:
            return ""
        minx = min(x for x, _ in xs)
        rows = []
        for y in range(min(r for _, r in xs), max(r for _, r in xs) + 1):
            line = []
            for x in range(minx, max(x for x, _ in xs) + 1):
                c = xs.get((x, y))
                if c is None:
                    line.append(" ")
                elif c == EMPTY:
                    line.append(".")
                elif c & BULB:
                    line.append(LETTERS[(c & 7) - 1].lower())
                else:
                    line.append(LETTERS[c - 1])
            rows.append("".join(line).rstrip())
        return "\n".join(rows)

    def cell_at(self, q, r):
        return self.cells[self.layout.index[(q, r)]]

    def empty_spaces(self):
        """Indexes of the unoccupied spaces, in layout order."""
        cells = self.cells
        return [i for i in range(len(cells)) if cells[i] == EMPTY]

    # -- the rules ---------------------------------------------------------

    def seed(self, i, flower, token=None):
        """Setup 6: a seeding token lies flower side up (bloomed)."""
        if self.cells[i] != EMPTY:
            raise ValueError("space %d is occupied" % i)
        b = self.layout.bits[i]
        self.cells[i] = flower + 1
        self.tokens[i] = token
        self.empty ^= b
        self.bloomed[flower] |= b
        self._groups = None

    def plant(self, i, flower, token=None):
        """Plant: "places it in any unoccupied space in the Garden, Bulb side up"."""
        if self.cells[i] != EMPTY:
            raise ValueError("space %d is occupied" % i)
        b = self.layout.bits[i]
        self.cells[i] = (flower + 1) | BULB
        self.tokens[i] = token
        self.empty ^= b
        self.bulbs |= b

    def group_masks(self):
        """Every group of bloomed flowers as (flower, members, frontier) bitboards.

        A group is a maximal set of adjacent bloomed flowers of one type. Its
        frontier is the set of empty spaces it touches: every other neighbour
        is a different type, a bulb or the border, so a group with an empty
        frontier is surrounded.

        Groups depend only on the bloomed flowers, which change only in the
        upkeep; plants only fill empty spaces. So the flood fills (the greedy
        policy's inner loop) are cached until a flower blooms, is seeded or is
        harvested, and only the frontiers are recomputed against `empty`."""
        if self._groups is None:
            L = self.layout
            w = L.width
            v = w - 1
            found = []
            for f in range(len(FLOWERS)):
                m = self.bloomed[f]
                rest = m
                while rest:
                    r = rest & -rest
                    while True:  # Layout.reach, inlined
                        s = r | (r << 1) | (r >> 1) | (r << w) | (r >> w) | (r << v) | (r >> v)
                        n = s & m
                        if n == r:
                            break
                        r = n
                    rest &= ~r
                    found.append((f, r, s))
            self._groups = found
        empty = self.empty
        return [(f, r, s & empty) for f, r, s in self._groups]

    def groups(self):
        """group_masks() with space indexes instead of bitboards."""
        ix = self.layout.indexes
        return [(f, ix(c), ix(fr)) for f, c, fr in self.group_masks()]

    def surrounded(self):
        """Per flower, the bitboard of every bloomed space in a surrounded group.

        Instead of testing group by group: the spaces of flower f that can
        reach an empty space through f are free; all other f spaces are in
        groups with no empty neighbour."""
        L = self.layout
        w = L.width
        v = w - 1
        e = self.empty
        touch = (e << 1) | (e >> 1) | (e << w) | (e >> w) | (e << v) | (e >> v)
        out = []
        for m in self.bloomed:
            if not m:
                out.append(0)
                continue
            r = touch & m
            while True:  # Layout.reach, inlined (once per upkeep per flower)
                n = (r | (r << 1) | (r >> 1) | (r << w) | (r >> w) | (r << v) | (r >> v)) & m
                if n == r:
                    break
                r = n
            out.append(m & ~r)
        return out

    def harvest(self):
        """Upkeep step 1: remove every surrounded group, all at once.

        "All harvesting happens simultaneously": the groups are found on the
        board as it stands, and only then removed, so a harvest never opens a
        space that lets another group escape (or get caught) this turn.
        Returns, per flower, the list of tokens removed (their identities, or
        the space index when the garden has no identities)."""
        found = self.surrounded()
        out = [[] for _ in FLOWERS]
        cells = self.cells
        tokens = self.tokens
        indexes = self.layout.indexes
        for f in range(len(FLOWERS)):
            m = found[f]
            if not m:
                continue
            got = out[f]
            for i in indexes(m):
                t = tokens[i]
                got.append(i if t is None else t)
                cells[i] = EMPTY
                tokens[i] = None
            self.bloomed[f] &= ~m
            self.empty |= m
            self._groups = None
        return out

    def bloom(self):
        """Upkeep step 2: "Flip over all Bulbs with at least one empty hexagon space around them".

        Run after harvest(), so a bulb planted this turn is never harvested
        this turn. Blooming empties nothing, so the order of flips is
        irrelevant. Returns the number of bulbs that bloomed."""
        flips = self.bulbs & self.layout.spread(self.empty)
        if not flips:
            return 0
        cells = self.cells
        bits = self.layout.bits
        self.bulbs &= ~flips
        self._groups = None
        k = 0
        for i in self.layout.indexes(flips):
            c = cells[i] & 7
            cells[i] = c
            self.bloomed[c - 1] |= bits[i]
            k += 1
        return k

    def counts(self):
        """(bloomed, bulbs, empty) numbers of spaces, for statistics and checks."""
        b = 0
        for m in self.bloomed:
            b += m.bit_count()
        return b, self.bulbs.bit_count(), self.empty.bit_count()

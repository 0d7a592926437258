"""Numbers entered with the flower buttons, every press undoable.

Why one object: the start space, a plant's points and its Seed cards are
one number (flower k adds k, held subtracts k); a portfolio is five (one
per flower, a press adds or takes one). Both are "a press changes a slot
by d within 0..hi, UNDO takes the last press back", so both are this.
No allocation: the values and the presses live in two bytearrays.
"""

try:
    from micropython import const
except ImportError:  # CPython

    def const(x):
        return x


HIST_MAX = const(48)  # presses remembered for UNDO


class NumberEntry:
    def __init__(self, slots=1):
        self.values = bytearray(slots)
        self.hist = bytearray(HIST_MAX)  # per press: slot << 4 | d, +128 if d < 0
        self.n = 0

    def start(self, value=0):
        """A new entry: slot 0 = value, the others 0, nothing to undo."""
        v = self.values
        for i in range(len(v)):
            v[i] = 0
        v[0] = value
        self.n = 0

    def value(self):
        return self.values[0]

    def add(self, slot, d, hi):
        """Change a slot by d (may be negative); False (and no change) if
        the result leaves 0..hi or the press history is full."""
        x = self.values[slot] + d
        if x < 0 or x > hi or self.n >= HIST_MAX:
            return False
        self.values[slot] = x
        self.hist[self.n] = slot << 4 | (128 - d if d < 0 else d)
        self.n += 1
        return True

    def undo(self):
        """Take the last press back; False if there is none."""
        if not self.n:
            return False
        self.n -= 1
        h = self.hist[self.n]
        d = h & 15
        self.values[h >> 4 & 7] += d if h & 128 else -d
        return True

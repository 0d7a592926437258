"""The guest setup of the allocation proofs (tests/board/test_app_alloc.py) and of
the bench's per-event and instruction figures (bench/bench_board.py,
bench/bench_speed.py): the board's modules imported, a RAM stand-in for the
Store with a preallocated log (so that an event's own flash I/O, which must
allocate, is not what heap_lock catches), a MicroPython-style NeoPixel, and
locked(fn), which runs fn with the heap locked.

MicroPython source as one string, run by tests/kit/mpy_harness.run_mpy as
`setup`; here rather than in the test module so that bench/ reads the same
setup without importing a test.
"""

SETUP = """
import gc, micropython
from engine_lite import Game
from boardkit.hw_sim import SimHW
from boardkit.memfs import MemFS
from firmware.storage import Store
from firmware.app import App
import firmware.ring


class FixedLog:
    # The engine's log interface on one preallocated bytearray ([n][rec][n] frames).
    def __init__(self, cap=4096):
        self.buf = bytearray(cap)
        self.end = 0
        self.count = 0

    def __len__(self):
        return self.count

    def append(self, rec):
        buf = self.buf
        e = self.end
        n = len(rec)
        buf[e] = n
        buf[e + 1 : e + 1 + n] = rec  # a slice store: no allocation
        buf[e + 1 + n] = n
        self.end = e + n + 2
        self.count += 1

    def pop(self):
        self.end -= self.buf[self.end - 1] + 2
        self.count -= 1

    def records(self, start=0):
        mv = memoryview(self.buf)
        i = 0
        k = 0
        while i < self.end:
            n = self.buf[i]
            if k >= start:
                yield mv[i + 1 : i + 1 + n]
            k += 1
            i += n + 2


class RamStore:
    # Store's interface with the log in preallocated RAM (no flash I/O).
    game_id = "ram"

    def boot(self):
        return None

    def settings(self):
        return {"brightness": 255}

    def save_settings(self, d):
        pass

    def new_game(self, rec, later=False):
        g = Game(FixedLog())
        g.apply_record(rec)
        return g

    def apply(self, game, rec, later=False):
        game.apply_record(rec)

    def flush(self):
        pass

    def quiet(self):
        pass  # no flash: no quiet work (the loop's tidy asks for it)

    def undo(self, game):
        game.undo()

    def finish(self):
        pass


class NeoPixel:
    # Stand-in for MicroPython's neopixel.NeoPixel: buf in GRB ORDER, write().
    ORDER = (1, 0, 2, 3)

    def __init__(self, n):
        self.bpp = 3
        self.buf = bytearray(3 * n)
        self.writes = 0

    def __setitem__(self, i, v):
        for j in range(3):
            self.buf[3 * i + self.ORDER[j]] = v[j]

    def write(self):
        self.writes += 1



def untouched(fn):
    # Run fn() with the heap open: 'ok' if it allocated no byte (not even a
    # call's frame, which heap_lock does not see), else the bytes.
    t = micropython.mem_total()
    fn()
    t = micropython.mem_total() - t
    return 'ok' if t == 0 else '%dB' % t


def locked(fn):
    # Run fn() with the heap locked: 'ok', or 'ALLOC' if it tried to allocate.
    micropython.heap_lock()
    try:
        fn()
        r = 'ok'
    except MemoryError:
        r = 'ALLOC'
    micropython.heap_unlock()
    return r
"""

"""Simulated backend: in-memory pins, pixels and clock (tests, simulator).

MicroPython-compatible, so heap_lock tests can run the app on it inside a
real MicroPython: press/release/write allocate nothing.
"""

import time  # once: an import per utc() call cost ~12 us of every game start (Unix port)


class SimPin:
    def __init__(self):
        self.v = 1  # released (pull-up)

    def value(self):
        return self.v


class SimStrip:
    def __init__(self, hw, count):
        self.hw = hw
        self.buf = [(0, 0, 0)] * count
        self.writes = 0

    def __setitem__(self, i, rgb):
        self.buf[i] = rgb

    def __getitem__(self, i):
        return self.buf[i]

    def write(self):
        px = self.hw.pixels
        buf = self.buf
        for i in range(len(buf)):
            px[i] = buf[i]
        self.writes += 1


class SimHW:
    """`.press(i)` / `.release(i)` drive button i (BUTTONS order); `.pixels`
    is what the strip showed at its last write(); the clock is `.now`
    (ms), set it or `advance(ms)`. The wall clock is the host's, shifted
    by `.wall` seconds (set_utc), or unknown while `.wall` is None; `.uid`
    is set by whoever builds the board (the simulator keeps one per flash
    directory: host/board_sim/flashdir.py)."""

    def __init__(self, spec=None, count=None):
        if count is None:
            count = spec["pixel_count"] if spec else 24
        self.spec = spec
        self.count = count
        self.pins = [SimPin() for _ in range(8)]
        self.pixels = [(0, 0, 0)] * count
        self.strip = SimStrip(self, count)
        self.now = 0
        self.uid = "sim"
        self.wall = 0

    def utc(self):
        return None if self.wall is None else int(time.time()) + self.wall

    def set_utc(self, t):
        self.wall = t - int(time.time())

    def uptime(self):
        return self.now // 1000

    def ticks_ms(self):
        return self.now

    def advance(self, ms):
        self.now += ms

    def press(self, i):
        self.pins[i].v = 0

    def release(self, i):
        self.pins[i].v = 1

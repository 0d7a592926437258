"""Eight buttons to ground: debounce, short and long press, an event queue.

Why pure logic: pins are anything with `.value()` (1 released, 0 pressed,
pull-ups) and the clock is any function returning milliseconds, so tests
step time exactly and the same code runs on every backend.

Debounce: a press counts only once the raw input has held it for
`debounce_ms`; its release fires at once, on the first edge, because a tap
fires on release and that is the wait a player feels (peterhinch's
Pushbutton acts on the first edge too). The press's hold is what locks
bounces out: after the release edge, a contact chattering back down can
only fire again by holding down for the full `debounce_ms`, as a real press
must, so a glitch can never make a press and a bounce can never fire twice.
A press fires SHORT on release, or LONG once as soon as it has been held
`long_ms` (while still held); releasing after a LONG fires nothing.
A button already held when Buttons is made is ignored until released.

No allocation in `poll()` or `get_into()` (the hot path; a heap_lock test
proves it): state lives in preallocated bytearrays/lists of small ints and
events in a fixed ring buffer; when it is full, new events are dropped and
counted in `dropped`.
"""

try:
    from micropython import const
except ImportError:  # CPython

    def const(x):  # type: ignore[misc]  # the stub's signature is generic
        return x


from engine_lite.vocab import BUTTONS, DEBOUNCE_MS, LONG_PRESS_MS

SHORT = const(1)
LONG = const(2)

_HALF = const(0x20000000)
_MASK = const(0x3FFFFFFF)


def ticks_diff(a, b):
    """a - b for a millisecond clock that may wrap at 2**30 (MicroPython's
    ticks_ms period); exact for a clock that never wraps."""
    return ((a - b + _HALF) & _MASK) - _HALF


class ButtonEvent:
    """Filled in place by Buttons.get_into (one per consumer, reused)."""

    def __init__(self):
        self.button = 0
        self.kind = 0


class Buttons:
    def __init__(self, pins, clock, debounce_ms=DEBOUNCE_MS, long_ms=LONG_PRESS_MS, queue=16):
        self.pins = pins
        self.clock = clock
        self.debounce_ms = debounce_ms
        self.long_ms = long_ms
        n = len(pins)
        now = clock()
        self.raw = bytearray(n)  # last raw sample
        self.level = bytearray(n)  # debounced level (1 released, 0 pressed)
        self.done = bytearray(n)  # 1: this press already fired (LONG) or is suppressed
        self.since = [now] * n  # when raw last changed
        self.edge = now  # when any pin's raw level last changed; -1: the loop has collected since (firmware/main.py)
        for i in range(n):
            v = 1 if pins[i].value() else 0
            self.raw[i] = v
            self.level[i] = v
            self.done[i] = 1 - v  # held at start: ignore this press
        self.q = bytearray(2 * queue)
        self.head = 0
        self.count = 0
        self.dropped = 0

    def _push(self, button, kind):
        cap = len(self.q) >> 1
        if self.count == cap:
            self.dropped += 1
            return
        i = self.head + self.count
        if i >= cap:
            i -= cap
        self.q[2 * i] = button
        self.q[2 * i + 1] = kind
        self.count += 1

    def poll(self):
        """Sample every pin once; call every few milliseconds."""
        now = self.clock()
        raw = self.raw
        level = self.level
        since = self.since
        pins = self.pins
        for i in range(len(raw)):
            v = 1 if pins[i].value() else 0
            if v != raw[i]:
                raw[i] = v
                since[i] = now
                self.edge = now
                if v and not level[i]:  # the release edge of a press: it acts at once
                    level[i] = 1
                    if not self.done[i]:
                        self._push(i, SHORT)
                    continue
            elif v == level[i] and (v or self.done[i]):
                continue  # settled, and no hold to time: most pins, most polls
            held = ticks_diff(now, since[i])
            if v != level[i] and held >= self.debounce_ms:  # a press (a release never waits)
                level[i] = 0
                self.done[i] = 0
            if not level[i] and not self.done[i] and held >= self.long_ms:
                self.done[i] = 1
                self._push(i, LONG)

    def get_into(self, ev):
        """Move the oldest event into `ev`; False if there is none."""
        if not self.count:
            return False
        h = self.head
        ev.button = self.q[2 * h]
        ev.kind = self.q[2 * h + 1]
        h += 1
        self.head = 0 if h == len(self.q) >> 1 else h
        self.count -= 1
        return True

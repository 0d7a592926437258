"""Eight buttons to ground: debounce, short and long press, an event queue.

Why pure logic: pins are anything with `.value()` (1 released, 0 pressed,
pull-ups) and the clock is any function returning milliseconds, so tests
step time exactly and the same code runs on every backend.

Debounce: a press counts only if the raw input held it for more than
`debounce_ms`, timed at the release edge itself; the release fires at once,
on that first edge, because a tap fires on release and that is the wait a
player feels (peterhinch's Pushbutton acts on the first edge too). The
press's hold is what locks bounces out: after the release edge, a contact
chattering back down can only fire again by holding down for the full
`debounce_ms`, as a real press must, so a glitch can never make a press
and a bounce can never fire twice. A press fires SHORT on release, or LONG
once as soon as it has been held `long_ms` (while still held, or at its
release if no poll saw it held that long); releasing after a LONG fires
nothing. A button already held when Buttons is made is ignored until
released. Timing each edge as it is taken, before acting on it, is what
keeps a press whose release is seen only after a flash stall: no poll in
between ever saw it held past `debounce_ms`.

Presses during flash work: pins that have `irq()` (machine.Pin, on
firmware/hw_mp.py) get a hard interrupt on both edges (`Buttons.irq`, which
says what it relies on in MicroPython's source) that latches each edge with
its tick; poll() first replays the latched edges in order, each at its
tick, as a poll at that instant would have seen it, and then only times
those pins, never samples them (the latch is the one record of their
level). An edge inside a flash stall reaches its interrupt only when the
stall ends, so its true time is somewhere in the flash work: the Store
marks when each piece of flash work begins (`busy`, firmware/storage.py
Store.mark), and a press latched then is dated from that mark, the earliest
it can have been, while a release is dated at the stall's end, the latest.
So a hold is never read shorter than it was (a long press begun inside a
400 ms erase stays long), and a tap is read longer by at most one piece of
flash work: an 80 ms tap is misread long only by work over 520 ms, more
than one erase at the datasheet's maximum (docs/design.md, "Gestures
through flash stalls"). A press whose fall and rise both came inside one
stall (one interrupt with both flags, the level back where it was) counts
as one short press whatever its hold, since the stall hid it; a contact's
bounce comes with a press's own edges, which the interrupts see apart. Any
more edges inside the same stall latch the same two flags and are lost:
two whole presses in one stall arrive as one, and a held press released
inside a stall and pressed and released again in it arrives as its first
press only (each needs a release, a gap and a 20 ms press inside one
stall: none fits in a 45 ms erase at a player's pace, and the datasheet's
400 ms is a worn chip's). Without `irq()` (CircuitPython, the simulator)
the pins are sampled each poll, and a press that begins and ends between
two polls is not seen.

No allocation in `poll()` or `get_into()` (the hot path; a heap_lock test
proves it): state lives in preallocated bytearrays/lists of small ints and
events in a fixed ring buffer; when it is full, new events are dropped and
counted in `dropped`.
"""

from engine_lite import const


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
        self.raw = bytearray(n)  # last raw level (1 released, 0 pressed)
        self.done = bytearray(n)  # 1: this press already fired (LONG) or is suppressed
        self.since = [now] * n  # when raw last changed
        self.edge = now  # when any pin's raw level last changed; -1: the loop has collected since (firmware/main.py)
        for i in range(n):
            v = pins[i].value()  # 1 or 0 (or True, False)
            self.raw[i] = v
            self.done[i] = 1 - v  # held at start: ignore this press
        self.q = bytearray(queue)  # events: button << 2 | kind
        self.head = 0
        self.count = 0
        self.dropped = 0
        self.busy = -1  # when the flash work under way began (Store.mark sets it), or -1: none
        self.lat = hasattr(pins[0], "irq") and bytearray(32)  # latched edges (irq)
        self.w = self.r = 0  # their ring's writer and reader
        if self.lat:
            self.at = [0] * 32
            for p in pins:
                p.irq(self.irq, 12, True)  # IRQ_FALLING | IRQ_RISING, hard

    def irq(self, p):
        """The pins' hard interrupt handler: one edge (or two) latched.

        Why: a flash erase or program stops the RP2040's code (45 ms
        typical, 400 ms at the datasheet's maximum), so a poll cannot see a
        press that starts and ends inside it. The chip's edge detector
        latches it anyway, and this writes it down when the stall ends.
        What it relies on, read in MicroPython's source:
        * ports/rp2/rp2_flash.c runs every erase and program between
          save_and_disable_interrupts() and restore_interrupts(); an edge in
          between stays pending in IO_BANK0's raw INTR bits and its
          interrupt fires when they are restored, at the stall's end.
        * ports/rp2/machine_pin.c gpio_irq: one handler call per pin per
          interrupt, however many edges were latched; `irq->flags = intr &
          irq->trigger`, so `Pin.irq().flags()` holds IRQ_FALLING (4) and
          IRQ_RISING (8) both when both happened (their order is not kept:
          the level read here, after them, tells it). `Pin.irq()` with no
          argument returns the pin's irq object and changes nothing; its
          flags() is a small int.
        * shared/runtime/mpirq.c mp_irq_handler: a hard handler runs at
          once, inside the interrupt, with the heap locked (gc_lock); a
          soft one is only scheduled, and a second interrupt would
          overwrite the flags before it reads them. So this is hard, and
          allocates nothing: each entry is a byte in `lat` (pin << 4 | the
          flags | the level) and a tick in `at`, in a ring of 32 that `w`
          writes and poll() reads behind (`r`). The tick is when this ran
          (for edges latched in a stall, the stall's end), but a fall
          alone while flash work is under way is dated from when that
          work began (`busy`): the press may have come at any moment of
          it, and its hold is timed from the earliest. 32: a stall
          latches at most 8 entries (one a pin); a contact bouncing 32
          times within one loop turn (each call here takes tens of
          microseconds on the chip) would lap the reader, which would then
          lose them all."""
        j = self.w
        f = p.irq().flags()
        self.lat[j] = self.pins.index(p) << 4 | f | p.value()  # type: ignore[index]  # armed only where lat is a bytearray
        self.at[j] = self.busy if f == 4 and self.busy >= 0 else self.clock()
        self.w = j + 1 & 31

    def poll(self):
        """Replay the latched edges in order, then sample (or, latched,
        time) every pin once; call every few milliseconds.

        Why it is cut into small methods: MicroPython takes a call's frame
        from the heap when it needs more than 11 slots (locals plus the
        value stack; VM_MAX_STATE_ON_STACK in py/objfun.c), and heap_lock
        does not see it (the call falls back to the C stack). A frame a
        poll, 250 polls a second, filled the heap in seconds and brought
        the collection it was avoiding. Each method here stays within 11
        (tests/board/test_main_loop.py counts every byte an idle turn allocates)."""
        now = self.clock()
        self.busy = -1  # no flash work runs while the loop polls (a mark an exception left behind ends here)
        if self.r != self.w:
            self._replay()
        raw = self.raw
        i = 0
        while i < len(raw):
            v = raw[i] if self.lat else self.pins[i].value()
            if v != raw[i] or not (v or self.done[i]):  # an edge, or a hold to time: most pins, most polls, neither
                self._see(i, v, now)
            i += 1

    def _replay(self):
        """Each latched edge, in order, at the tick its interrupt ran."""
        r = self.r
        while r != self.w:
            c = self.lat[r]  # type: ignore[index]  # only latched pins fill the ring
            t = self.at[r]
            r = r + 1 & 31
            if c & 12 == 12:  # fell and rose inside one stall
                self._both(c >> 4, c & 1, t)
            self._see(c >> 4, c & 1, t)
        self.r = r

    def _both(self, i, v, t):
        """A fall and a rise inside one stall, the level now v: in order,
        what they can mean."""
        d = t - self.debounce_ms - 1
        w = self.raw[i]
        if not w:
            self._see(i, 1, t)  # the held press's release
        if w or v:  # a whole press hidden in the stall: its hold is unknown, so it counts
            self._see(i, 0, d)
            if not v:
                self._see(i, 1, t)

    def _see(self, i, v, now):
        """Pin i is at level v at time now: first time what it held until
        now (a LONG due; a release's SHORT, if held past debounce_ms), then
        note its edge. Timed at the edge itself, a release seen after a
        stall still fires the press it ends. (No local for raw, and k is
        the hold and then the event: the frame stays within 11 slots.)"""
        if not self.raw[i] and not self.done[i]:  # held, and nothing fired yet
            k = ticks_diff(now, self.since[i])
            # LONG once held long_ms; SHORT (True: 1) at the release, if held past debounce_ms
            k = LONG if k >= self.long_ms else v and k > self.debounce_ms
            if k:
                self.done[i] = 1
                if self.count == len(self.q):  # full: new events are dropped
                    self.dropped += 1
                else:
                    self.q[(self.head + self.count) % len(self.q)] = i << 2 | k
                    self.count += 1
        if v != self.raw[i]:
            self.raw[i] = v
            self.since[i] = now
            self.edge = now
            self.done[i] = 0

    def get_into(self, ev):
        """Move the oldest event into `ev`; False if there is none."""
        if not self.count:
            return False
        h = self.head
        c = self.q[h]
        ev.button = c >> 2
        ev.kind = c & 3
        self.head = (h + 1) % len(self.q)
        self.count -= 1
        return True

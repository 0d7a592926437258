"""CircuitPython's buttons, fed into firmware/buttons.py's ring of latched
edges with their true times: on an RP2040 whose eight buttons sit on
consecutive GPIOs (the Pico's GP2-GP9), by a PIO state machine and DMA
(`PioWatch`, `PioButtons`); elsewhere (the Feather RP2040's buttons are
spread over its header) by `keypad.Keys` (`KeypadButtons`).
`hw_cp.CircuitPythonHW` picks. One module: on CircuitPython each module
file costs ~7 ms of the boot to open, whatever its size.

Why either: CircuitPython has no pin interrupts in Python, and the loop
samples its pins once a turn; a save on CircuitPython's FAT drive holds
the loop for up to ~470 ms (several 4 KB erases and their programs, each
with interrupts off), so a tap inside it was missed and a hold's release
was timed at the loop's next turn.

## keypad

`keypad.Keys` scans the pins from the supervisor's 1 ms
tick interrupt (shared-module/keypad/__init__.c keypad_tick), every
`SCAN_MS`, whatever Python is doing, and queues each change with
`supervisor.ticks_ms()` at that scan (`Event.timestamp`, CircuitPython 8+).
So a press is seen between two of a save's erases, and its true duration
is kept: the loop replays each edge at its scan's tick, exactly as
firmware/buttons.py replays the edges its interrupt handler latched on
MicroPython (`Buttons.irq`: an entry is pin << 4 | the edge's flag | the
level, with its tick), and a long press is never read as short because
the loop came late.

What it cannot see: a scan needs interrupts, and a flash erase or program
turns them off (45 ms typical for a 4 KB erase, 400 ms at the W25Q16JV
datasheet's maximum). An edge inside one stall is seen at the first scan
after it, so a hold that began inside it is timed from the stall's end
(up to one stall shorter), and a press whose fall and rise both fell
inside one stall is not seen at all (the chip bench misread taps at
45/70 ms and at the datasheet's maximum: docs/controls.md). That is what
the PIO watch is for.

## The PIO watch

A PIO state machine and the DMA run on their own while the core waits
for the flash, and the PIO's own clock times each change: the gesture
keeps its true start and duration, however long the loop was held.

The program (firmware/keys_cp.pio, assembled into `PROGRAM`; tests
assemble it with adafruit_pioasm and run it on rp2040js's PIO; the bundle
carries only the words) reads the eight pins once a sample, every
`SAMPLE_CYCLES` PIO cycles whether they changed or not, and counts the
samples; when the pins differ from the last word it pushes one word:

    bits 29..22  the eight levels (1 released), button i at bit 22 + i
    bit  21      0 (so no word equals EMPTY)
    bits 20..0   the sample's count, running down from 0 at the start
                 (-k for sample k) and never reset: it wraps every
                 2**21 samples (3.06 h)

At `FREQUENCY` (8 kHz: 125 MHz / 15625, an exact divider) a sample is
42 cycles, 5.25 ms: a button's bounce settles within it, as keypad's
5 ms scan did, and a 45 ms tap spans eight samples. The words stay under
2**30, so reading one allocates nothing. Why a count that is never
reset: each word then carries its own time, so a word lost to a full
FIFO shifts no later one (a count since the last change, tried first,
dated every later press early by the lost word's gap, and a tap then
read LONG).

The DMA writes the words into `ring` (background_read's loop: it starts
over at the ring's end, from the DMA interrupt). The loop takes each word
that is not EMPTY and writes EMPTY back. A stall holds the DMA's restart
too, so at the ring's end the PIO's FIFO (4 words, 8 when joined) is
what one stall can hold. The ring is 512 words (2 KB): 256 taps, 30 s
of tapping at 45/70 ms. Why so many: the loop takes the words between
its turns, and on CircuitPython's FAT drive one turn's flash work can
last seconds at the datasheet's maximum erase time (a drain of the nvm
journal onto FAT: a few erases, 400 ms each; before the journal held a
whole game, up to 36 in one event, 16 s, on the emulated Pico:
docs/storage.md). A word the full FIFO dropped is
counted as a dropped event (`rxstall`); the words after it keep their
times.

Buttons themselves (debounce, SHORT/LONG, the event queue) are
firmware/buttons.py's, unchanged: this only feeds them. No allocation in
poll(): one keypad.Event is reused (EventQueue.get_into); a PIO word is a
small int.
"""

from engine_lite import const
from firmware.buttons import Buttons

SCAN_MS = 5  # keypad's scan interval: a gesture's edges are timed to within this (its default 20 ms would meet the 20 ms debounce)
_T29 = const(0x1FFFFFFF)  # supervisor.ticks_ms() (the events' timestamps) wraps at 2**29
_MASK = const(0x3FFFFFFF)  # the board's ticks_ms wraps at 2**30 (firmware/hw_cp.py)


class KeyPin:
    """One button as Buttons sees it: its level as the last edge left it
    (1 released, 0 pressed). Having `irq` is what makes Buttons keep its ring
    of latched edges and time the pins from it instead of sampling them;
    KeypadButtons or PioButtons fills the ring, so the handler is not kept."""

    def __init__(self):
        self.level = 1

    def value(self):
        return self.level

    def irq(self, handler=None, trigger=0, hard=False):
        return None


class FedButtons(Buttons):
    """Buttons whose edges a scanner in C or in hardware latches with their
    times (`_feed`, each subclass's own): poll() takes them, then lets
    Buttons replay them, then holds the quiet work off an undecided press."""

    def poll(self):
        """Take the latched edges (`_feed`), replay them, then time the held
        buttons up to when their levels are known: now, or, while edges
        still wait behind the full ring (a backlog after seconds of flash
        work), the last edge taken (`_feed` returns which). Why: a press
        whose release still waits was held, for all anyone knows, only
        until then; timed to now it read LONG (on the emulated Pico, taps
        read long after a 10 s stretch of erases at the datasheet's
        maximum). The pins are latched, never sampled (Buttons.poll's
        loop, for them).

        A press still undecided after that (held, neither its LONG nor its
        release yet) counts as the buttons moving (`edge`): the loop's
        quiet spell (the journal's drain onto FAT, a piece of a finish, a
        collection: firmware/main.py tidy) waits for the gesture's end.
        Why: a hold is still for 300 ms before its LONG at 600, and
        CircuitPython's FAT work then (several 45 ms erases) came inside
        the gesture: on the emulated Pico a LONG lit 185 ms late and the
        next tap was misread."""
        now = self._feed()
        self.busy = -1
        if self.r != self.w:
            self._replay()
        raw = self.raw
        i = 0
        while i < len(raw):
            if not (raw[i] or self.done[i]):
                self._see(i, 0, now)
                if not self.done[i]:
                    self.edge = self.clock()
            i += 1


class KeypadButtons(FedButtons):
    """Buttons fed by a `keypad.Keys` (or anything with its `events` queue:
    `get_into(event)`, `overflowed`, `clear()`, and `reset()` on the
    scanner). `pins` are KeyPins, one a key; `clock` the board's ticks_ms,
    whose low 29 bits are supervisor.ticks_ms() (hw_cp.CircuitPythonHW)."""

    def __init__(self, keys, pins, clock, event, **kw):
        self.keys = keys
        self.kev = event  # the one keypad.Event, reused
        self.stamped = hasattr(event, "timestamp")  # CircuitPython 8+; else the edge is timed when the loop takes it
        for p in pins:  # keys already held at start (the scan at Keys() queued them): Buttons ignores them until released
            p.level = 1
        while keys.events.get_into(event):
            pins[event.key_number].level = 0 if event.pressed else 1
        Buttons.__init__(self, pins, clock, **kw)

    def _feed(self):
        """Each queued keypad event into the ring of latched edges, at its
        scan's tick, while the ring has room (the rest wait in keypad's own
        queue for the next poll). A full keypad queue lost edges: counted
        as a dropped event, and the scanner restarts from "all released"
        (a key still held then comes again as a press)."""
        ev = self.kev
        q = self.keys.events
        now = self.clock()
        t = now
        while (self.w + 1) & 31 != self.r:
            if not q.get_into(ev):
                t = now  # all taken: the levels are known until now
                break
            i = ev.key_number
            t = (now - ((now - ev.timestamp) & _T29)) & _MASK if self.stamped else now
            j = self.w
            self.lat[j] = i << 4 | 4 | 0 if ev.pressed else i << 4 | 8 | 1  # type: ignore[index]  # armed: KeyPins have irq
            self.at[j] = t
            self.w = j + 1 & 31
            self.pins[i].level = 0 if ev.pressed else 1
        if q.overflowed:
            self.dropped += 1
            q.clear()
            self.keys.reset()
        return t


# The PIO watch

PROGRAM = (
    0xA0E3, 0xA0C3, 0x4008, 0xA046, 0x000A,
    0xBFC3, 0x4008, 0xA046, 0x00AA, 0x030E,
    0xA022, 0x4061, 0x40F5, 0x8000,
    0xA047, 0x0090, 0xA0E2,
)
WRAP_TARGET = 5
WRAP = 16
FREQUENCY = 8000  # the PIO's clock, Hz: 125 MHz / 15625
SAMPLE_CYCLES = 42  # a sample, either path: a delay of 31 and 10 instructions (the quiet path's 4 in one with a delay of 3)
EMPTY = const(0x3FFFFFFF)  # a ring slot with no word (bit 21 set: never a word)
_COUNT = const(0x1FFFFF)  # the sample count's 21 bits
RING = 512  # words: a power of two


def pin_numbers(names, board, pin_module):
    """The GPIO number of each board pin name, or None where it is not the
    GPIO its digits say (board.GP2 is microcontroller.pin.GPIO2 on a Pico;
    the Feather's A0 is GPIO26, so None). Eight lookups: no list of every
    pin at boot."""
    out = []
    for name in names:
        i = len(name)
        while i and name[i - 1] in "0123456789":
            i -= 1
        k = int(name[i:]) if i < len(name) else -1
        out.append(k if getattr(pin_module, "GPIO%d" % k, None) is getattr(board, name) else None)
    return out


def consecutive(numbers):
    """True when the buttons are GPIOs n, n+1, ... in button order: one
    state machine reads them all (`in pins, 8`)."""
    return len(numbers) == 8 and None not in numbers and numbers == list(range(numbers[0], numbers[0] + 8))


def _ticks_add(t, d):
    """(t + d) mod 2**30 for 0 <= t, d < 2**30, with no value past a
    32-bit port's small ints (2**30 - 1): a sum past them would be a long
    int, allocated, in the loop's poll."""
    return (t - (_MASK - d) - 1) & _MASK


class PioWatch:
    """The state machine and its ring (CircuitPython: rp2pio, array)."""

    def __init__(self, first_pin, clock):
        import rp2pio
        from array import array

        self.ring = array("L", [EMPTY] * RING)
        self.sm = rp2pio.StateMachine(
            array("H", PROGRAM),
            frequency=FREQUENCY,
            first_in_pin=first_pin,
            in_pin_count=8,
            pull_in_pin_up=0xFF,
            in_shift_right=False,
            wrap_target=WRAP_TARGET,
            wrap=WRAP,
        )
        self.t0 = clock()  # the first word's time: the machine started just now
        self.hz = self.sm.frequency
        self.sm.background_read(loop=self.ring)


class PioButtons(FedButtons):
    """Buttons fed by PioWatch's words: each change of levels becomes one
    latched edge a button (firmware/buttons.py's ring), at the time the
    PIO's count gives it.

    Times: the first word is sample 0, the machine's start (`t0`); a word
    is its sample's (`k`, from its count) samples after the word before,
    in microseconds carried over (`us`), so no word is ever dated from
    when the loop read it, and one lost word (a full FIFO) shifts no later
    one. The count wraps every 2**21 samples (3.06 h): a word read more
    than half a wrap after the one before, by the loop's clock, gets the
    wraps that clock says went by. A time past the loop's clock is clamped
    to it."""

    def __init__(self, watch, pins, clock, **kw):
        self.watch = watch
        self.i = 0  # the next ring slot to read
        self.k = -1  # the last word's sample (its count's 21 bits), -1: none yet
        self.t = watch.t0
        self.us = 0  # microseconds past self.t, carried
        self.p_us = SAMPLE_CYCLES * 1000000 // watch.hz  # a sample: 5,250 us
        self.wrap = (_COUNT + 1) * self.p_us // 1000  # ms the count takes to wrap: 11,010,048 (3.06 h)
        self.levels = 0xFF
        for p in pins:
            p.level = 1
        FedButtons.__init__(self, pins, clock, **kw)
        n = 0
        while watch.ring[0] == EMPTY and n < 1000:  # the first word, the levels at start: DMA writes it within microseconds
            n += 1
        self._feed()

    def _feed(self):
        """Each word in the ring, in order, while the latch ring has room
        for eight edges (the rest wait in the ring for the next poll); the
        time the levels are known until (FedButtons.poll): now, or the
        last word's while words wait."""
        ring = self.watch.ring
        now = self.clock()
        while (self.r - self.w - 1) & 31 >= 8:
            v = ring[self.i]
            if v == EMPTY:
                break
            ring[self.i] = EMPTY
            self.i = self.i + 1 & RING - 1
            if self.k < 0:
                self._first(v)
            else:
                self._word(v, now)
        sm = self.watch.sm
        if sm.rxstall and not sm.in_waiting:  # the FIFO was full: a word is lost (and its edges); the next words keep their times
            self.dropped += 1
            sm.clear_rxfifo()  # only once the DMA has emptied it: clearing it reads away what it holds
        return now if ring[self.i] == EMPTY else self.t

    def _first(self, v):
        """The levels at the machine's start: a button held then is ignored
        until released, as Buttons does at its start."""
        self.k = 0
        self.levels = v >> 22
        i = 0
        while i < 8:
            if not self.levels >> i & 1:
                self.pins[i].level = self.raw[i] = 0
                self.done[i] = 1
            i += 1

    def _word(self, v, now):
        """One word: its time, then an edge for each button it changed,
        latched at that time or, were it ahead of the loop's clock, now
        (the chain itself keeps the word's own time)."""
        k = -v & _COUNT  # its sample: the count runs down from 0
        n = k - self.k & _COUNT  # samples since the last word
        self.k = k
        us = self.us + (n % 1000) * self.p_us
        t = _ticks_add(self.t, (n // 1000) * self.p_us + us // 1000)
        self.us = us % 1000
        d = (now - t) & _MASK
        if d <= 0x20000000 and d > self.wrap >> 1:  # read hours after the word before: the count wrapped meanwhile
            t = _ticks_add(t, (d + (self.wrap >> 1)) // self.wrap * self.wrap)
        self.t = t
        if (now - t) & _MASK > 0x20000000:  # ahead of the loop's clock
            t = now
        x = (v >> 22) ^ self.levels
        self.levels = v >> 22
        k = 0
        while x:
            if x & 1:
                lv = self.levels >> k & 1
                j = self.w
                self.lat[j] = k << 4 | 8 | 1 if lv else k << 4 | 4  # type: ignore[index]  # KeyPins have irq: the ring exists
                self.at[j] = t
                self.w = j + 1 & 31
                self.pins[k].level = lv
            x >>= 1
            k += 1

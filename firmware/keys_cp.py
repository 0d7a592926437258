"""CircuitPython's buttons: `keypad.Keys` scans them in C, the edges go into
Buttons' ring of latched edges at the instant the scan saw them.

Why: CircuitPython has no pin interrupts in Python, and the loop samples
its pins once a turn; a save on CircuitPython's FAT drive holds the loop for
up to ~470 ms (several 4 KB erases and their programs, each with interrupts
off), so a tap inside it was missed and a hold's release was timed at the
loop's next turn. `keypad.Keys` scans the pins from the supervisor's 1 ms
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
inside one stall is not seen at all (MicroPython's edge latch still counts
it as one short press). At a player's pace no tap fits inside a 45 ms
erase (docs/controls.md).

Buttons themselves (debounce, SHORT/LONG, the event queue) are
firmware/buttons.py's, unchanged: this only feeds them. No allocation in
poll(): one keypad.Event is reused (EventQueue.get_into).
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
    KeypadButtons fills the ring, so the handler is not kept."""

    def __init__(self):
        self.level = 1

    def value(self):
        return self.level

    def irq(self, handler=None, trigger=0, hard=False):
        return None


class KeypadButtons(Buttons):
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

    def poll(self):
        self._feed()
        Buttons.poll(self)
        self._held()

    def _held(self):
        """A press not yet decided (held, neither its LONG nor its release
        yet) counts as the buttons moving: the loop's quiet spell (the
        journal's drain onto FAT, a piece of a finish, a collection:
        firmware/main.py tidy) waits for the gesture's end. Why: a hold is
        still for 300 ms before its LONG at 600, and CircuitPython's FAT
        work then (several 45 ms erases) came inside the gesture: on the
        emulated Pico a LONG lit 185 ms late and the next tap was misread."""
        raw = self.raw
        i = 0
        while i < len(raw):
            if not (raw[i] or self.done[i]):
                self.edge = self.clock()
                return
            i += 1

    def _feed(self):
        """Each queued keypad event into the ring of latched edges, at its
        scan's tick, while the ring has room (the rest wait in keypad's own
        queue for the next poll). A full keypad queue lost edges: counted
        as a dropped event, and the scanner restarts from "all released"
        (a key still held then comes again as a press)."""
        ev = self.kev
        q = self.keys.events
        now = self.clock()
        while (self.w + 1) & 31 != self.r and q.get_into(ev):
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

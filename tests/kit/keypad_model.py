"""CircuitPython's keypad.Keys as its C scanner behaves, driven by a script
(keypad is CircuitPython's own C module: Blinka's keypad.py is a Python
thread without timestamps, so no real one runs here).

What is modelled, read in CircuitPython's source (shared-module/keypad/
__init__.c and Keys.c): the supervisor's 1 ms tick interrupt calls
keypad_tick, which scans a Keys once `interval` has passed since its last
scan; a scan compares each key with its last state and queues a change as
an Event(key_number, pressed, timestamp = supervisor.ticks_ms(), which
wraps at 2**29); a full queue drops the event and sets `overflowed`;
reset() forgets the state ("all released"). While a flash erase or program
has interrupts off no tick runs, so nothing is scanned; the first tick
after it scans.

`play` runs a whole script through it, millisecond by millisecond: a
player's gestures (key, hold), the board's loop polling every `turn_ms`
except while it saves, and each event the loop takes starting a save made
of flash stalls with interrupts off. It returns the gestures Buttons
reported, for KeypadButtons (fed by this model), for PioButtons (fed by
the shipped PIO program run on rp2040js for the same script:
tests/kit/pio_script.py) or for the Buttons that samples its pins once a
loop turn (the CircuitPython backend before). The loop is the same for
all three, so their figures compare.
"""

from collections import deque

from firmware.buttons import Buttons, ButtonEvent
from firmware.keys_cp import KeyPin, KeypadButtons, PioButtons

T29 = 0x1FFFFFFF


class Event:
    """keypad.Event's API (CircuitPython 8+), filled by get_into."""

    def __init__(self):
        self.key_number = 0
        self.pressed = False
        self.timestamp = 0


class EventQueue:
    def __init__(self, max_events):
        self.q = deque()
        self.max = max_events
        self.overflowed = False

    def get_into(self, ev):
        if not self.q:
            return False
        ev.key_number, ev.pressed, ev.timestamp = self.q.popleft()
        return True

    def clear(self):
        self.q.clear()
        self.overflowed = False

    def record(self, i, pressed, t):
        if len(self.q) == self.max:
            self.overflowed = True
        else:
            self.q.append((i, pressed, t & T29))


class ScriptedKeys:
    """A keypad.Keys on `n` keys to ground, scanned by `scan(t)` calls."""

    def __init__(self, n=8, interval=5, max_events=64):
        self.level = [1] * n  # the pins: 1 released (pull-up), 0 pressed
        self.pressed = [False] * n
        self.interval = interval
        self.next = 0
        self.events = EventQueue(max_events)
        self.resets = 0

    def reset(self):
        self.pressed = [False] * len(self.pressed)
        self.resets += 1

    def tick(self, t):
        """The 1 ms tick at t (interrupts on): a scan if one is due."""
        if t >= self.next:
            self.next = t + self.interval
            for i, v in enumerate(self.level):
                if (v == 0) != self.pressed[i]:
                    self.pressed[i] = v == 0
                    self.events.record(i, v == 0, t)


class _SampledPin:
    def __init__(self, keys, i):
        self.keys = keys
        self.i = i

    def value(self):
        return self.keys.level[self.i]


def gestures_script(gestures, gap, start=0):
    """[(t, key, level)] edges of `gestures` [(key, hold_ms)], `gap` ms apart."""
    edges = []
    t = start
    for key, hold in gestures:
        edges.append((t, key, 0))
        edges.append((t + hold, key, 1))
        t += hold + gap
    return edges, t


def play(edges, end, feed, stall_ms, stalls_per_save=2, cpu_ms=3, turn_ms=2, t0=0):
    """Run the script; `feed`: "keypad" (KeypadButtons), "pio" (PioButtons,
    its ring written with rp2040js's words for the script at their push
    times, stalls or not: the DMA does not stop) or "sampled" (pins read
    once a turn). Each event the loop takes starts a save: `cpu_ms` of
    work, then `stalls_per_save` stalls of `stall_ms` with interrupts off,
    each followed by `cpu_ms` with them on; the loop polls again after it.
    The loop runs until 2 s after the script's `end`, and on while a save
    is under way then, until the poll after it: why, a save of six 400 ms
    stalls (2.4 s) outlasts those 2 s, and the gestures whose edges wait
    through it (in keypad's queue, in the PIO's ring) would be cut off
    unread and counted lost, though the board reads them at that poll.
    `t0`: the clock's start (29-bit timestamps wrap inside the game when near
    2**29). Returns [(button, kind)]."""
    keys = ScriptedKeys()
    T = [t0]

    def clock():
        return T[0] & 0x3FFFFFFF

    keys.tick(t0)
    watch = None
    if feed == "keypad":
        b = KeypadButtons(keys, [KeyPin() for _ in range(8)], clock, Event())
    elif feed == "pio":
        from tests.kit.pio_script import ScriptWatch, script_words

        watch = ScriptWatch(script_words(edges, end + 2000), t0)
        watch.dma(0)
        b = PioButtons(watch, [KeyPin() for _ in range(8)], clock)
    else:
        b = Buttons([_SampledPin(keys, i) for i in range(8)], clock)
    ev = ButtonEvent()
    got = []
    todo = sorted(edges)
    k = 0
    next_turn = 0
    save = []  # the save in progress: [(start, end, interrupts_off)]
    dt = -1
    while True:
        dt += 1
        if dt >= end + 2000 and not save:  # a save under way then: on until it ends and the loop has polled after it
            break
        t = t0 + dt
        T[0] = t
        while k < len(todo) and todo[k][0] <= dt:
            keys.level[todo[k][1]] = todo[k][2]
            k += 1
        if watch:
            watch.dma(dt)
        while save and save[0][1] <= dt:
            save.pop(0)
        off = bool(save) and save[0][0] <= dt and save[0][2]
        if not off:
            keys.tick(t)
        if not save and dt >= next_turn:
            next_turn = dt + turn_ms
            b.poll()
            n = len(got)
            while b.get_into(ev):
                got.append((ev.button, ev.kind))
            if len(got) > n:  # an event: the loop saves it
                s = dt + cpu_ms
                for _ in range(stalls_per_save):
                    save.append((s, s + stall_ms, True))
                    save.append((s + stall_ms, s + stall_ms + cpu_ms, False))
                    s += stall_ms + cpu_ms
    assert not watch or watch.n == len(watch.words)  # every word was written
    return got

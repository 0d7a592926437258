"""firmware/buttons.py: debounce, short/long press, the allocation-free queue.

What the buttons must do: "Debounced (configurable, default ~20 ms), short and long
press, events queued without allocating. Pure logic driven by an injected
clock, so tests step time exactly." and "nothing fires twice from a bouncing
contact". Time is stepped 1 ms per poll unless a test says otherwise.
"""

import pytest
from hypothesis import given, settings, strategies as st

from firmware.buttons import BUTTONS, LONG, SHORT, ButtonEvent, Buttons, ticks_diff
from tests.kit.mpy_harness import run_mpy


class Pin:
    def __init__(self):
        self.v = 1

    def value(self):
        return self.v


class Rig:
    """Eight pins and a clock; `run(ms)` polls once per ms and collects events."""

    def __init__(self, t0=0, **kw):
        self.t = t0
        self.pins = [Pin() for _ in BUTTONS]
        self.b = Buttons(self.pins, lambda: self.t, **kw)
        self.ev = ButtonEvent()
        self.log = []  # (time, button, kind)

    def run(self, ms, pattern=None):
        for k in range(ms):
            if pattern is not None:
                pattern(k)
            self.t += 1
            self.b.poll()
            while self.b.get_into(self.ev):
                self.log.append((self.t, self.ev.button, self.ev.kind))

    def set(self, i, v):
        self.pins[i].v = v


def test_button_order_matches_contract():
    assert BUTTONS == ("dahlia", "daffodil", "globemaster", "snowdrop", "tulip", "undo", "ok", "menu")
    assert (SHORT, LONG) == (1, 2)


def test_clean_short_press_fires_once_on_release_after_debounce():
    """A press needs 20 ms; the release that fires the tap acts on its
    first edge (the wait a player feels between letting go and the ring
    answering: none beyond the poll that sees it)."""
    r = Rig()
    r.run(5)
    r.set(2, 0)
    r.run(100)
    assert r.log == []  # a short press fires on release, not on press
    r.set(2, 1)  # the poll at t=106 sees the release edge
    r.run(1)
    assert r.log == [(106, 2, SHORT)]  # at that very poll
    r.run(1000)
    assert r.log == [(106, 2, SHORT)]


def test_bounces_after_the_release_edge_fire_nothing_twice():
    """The release acts on its first edge, then the press's own hold locks
    bounces out: chatter after the edge (each low level shorter than the
    20 ms a press needs) fires nothing more, however long it lasts."""
    r = Rig()
    r.set(3, 0)
    r.run(40)
    r.set(3, 1)
    r.run(1)
    assert r.log == [(41, 3, SHORT)]
    chatter = [1, 0, 0, 1, 0, 1, 1, 0] * 3 + [0] * 19 + [1] * 5 + [0] * 19  # lows up to 19 ms
    r.run(len(chatter), lambda k: r.set(3, chatter[k]))
    r.set(3, 1)
    r.run(700)
    assert r.log == [(41, 3, SHORT)]
    r.set(3, 0)  # a real press after the bounce: held 20 ms, it counts again
    r.run(25)
    r.set(3, 1)
    r.run(1)
    assert [(b, k) for _, b, k in r.log] == [(3, SHORT), (3, SHORT)]


def test_a_release_glitch_before_the_press_counts_makes_nothing():
    """A press that has not yet held 20 ms has nothing to release: an edge
    up then (the press's own bounce) fires nothing, and the hold restarts."""
    r = Rig()
    r.set(1, 0)
    r.run(15)
    r.set(1, 1)  # up after 15 ms: not yet a press
    r.run(2)
    r.set(1, 0)
    r.run(19)  # 19 ms down again: still not a press
    r.set(1, 1)
    r.run(50)
    assert r.log == []


def test_bouncing_contacts_fire_exactly_once():
    """Contacts chatter for 8 ms on press and on release (2 ms per level):
    one SHORT, never two."""
    r = Rig()
    bounce = [0, 0, 1, 1, 0, 0, 1, 1]
    r.run(3, lambda k: r.set(0, bounce[k % 8]))
    r.run(8, lambda k: r.set(0, bounce[k]))
    r.set(0, 0)
    r.run(200)
    r.run(8, lambda k: r.set(0, 1 - bounce[k]))
    r.set(0, 1)
    r.run(200)
    assert [(b, kind) for _, b, kind in r.log] == [(0, SHORT)]


def test_glitch_shorter_than_debounce_is_ignored():
    r = Rig()
    r.set(4, 0)
    r.run(19)  # 19 ms low: noise, not a press
    r.set(4, 1)
    r.run(100)
    assert r.log == []


def test_long_press_fires_while_held_and_release_fires_nothing():
    r = Rig()
    r.set(5, 0)  # the first poll (t=1) sees the press edge
    r.run(600)
    assert r.log == []
    r.run(1)
    assert r.log == [(601, 5, LONG)]  # 600 ms after the edge, still held
    r.run(3000)  # holding on fires no second LONG
    r.set(5, 1)
    r.run(500)
    assert r.log == [(601, 5, LONG)]
    r.set(5, 0)  # the next press is a fresh one
    r.run(50)
    r.set(5, 1)
    r.run(50)
    assert r.log[-1][1:] == (5, SHORT)


def test_configurable_times():
    r = Rig(debounce_ms=5, long_ms=100)
    r.set(1, 0)
    r.run(99)
    r.set(1, 1)  # edge sampled at t=100
    r.run(6)
    assert r.log == [(100, 1, SHORT)]  # release: on its edge
    r.set(1, 0)  # edge sampled at t=106
    r.run(101)
    assert r.log[-1] == (206, 1, LONG)
    r.set(1, 1)
    r.set(2, 0)
    r.run(4)  # 4 ms: shorter than this debounce
    r.set(2, 1)
    r.run(10)
    assert len(r.log) == 2


def test_button_held_at_start_is_suppressed():
    r = Rig()
    r.pins[7].v = 0
    r.b = Buttons(r.pins, lambda: r.t)
    r.run(2000)
    r.set(7, 1)
    r.run(100)
    assert r.log == []


def test_simultaneous_presses_queue_in_order_and_overflow_drops_new():
    r = Rig(queue=4)
    for i in range(8):
        r.set(i, 0)
    r.t += 50
    r.b.poll()  # raw change seen
    r.t += 50
    r.b.poll()  # debounced pressed
    for i in range(8):
        r.set(i, 1)
    r.b.poll()
    r.t += 50
    r.b.poll()  # 8 SHORTs, room for 4
    got = []
    while r.b.get_into(r.ev):
        got.append((r.ev.button, r.ev.kind))
    assert got == [(0, SHORT), (1, SHORT), (2, SHORT), (3, SHORT)]
    assert r.b.dropped == 4
    assert not r.b.get_into(r.ev)


def test_clock_wrap_at_2_pow_30():
    """MicroPython's ticks_ms wraps at 2**30; a press across the wrap works."""
    t0 = (1 << 30) - 300
    r = Rig(t0=t0)
    r.set(3, 0)
    r.run(200)
    r.t = r.t & ((1 << 30) - 1)
    r.run(450)  # crosses the wrap while held
    assert [(b, k) for _, b, k in r.log] == [(3, LONG)]
    assert ticks_diff(5, (1 << 30) - 5) == 10
    assert ticks_diff(100, 40) == 60


@pytest.mark.slow
@settings(max_examples=150, deadline=None, derandomize=True)
@given(
    st.lists(st.integers(1, 19), min_size=0, max_size=9),
    st.integers(21, 500),
    st.lists(st.integers(1, 19), min_size=0, max_size=9),
)
def test_any_bounce_shorter_than_debounce_gives_one_event(press_bounce, hold, release_bounce):
    """Whatever the chatter (each level held < 20 ms), one press (held
    >= 20 ms) gives one event: SHORT if held < long_ms, LONG otherwise.
    `hold` counts polls, so the level is held hold-1 ms after its edge."""
    r = Rig()
    level = 0
    for d in press_bounce:
        r.set(6, level)
        r.run(d)
        level ^= 1
    r.set(6, 0)
    r.run(hold)
    level = 1
    for d in release_bounce:
        r.set(6, level)
        r.run(d)
        level ^= 1
    r.set(6, 1)
    r.run(700)
    kinds = [k for _, b, k in r.log]
    assert len(kinds) == 1
    assert kinds[0] == (LONG if hold - 1 >= 600 else SHORT)


# Both guests' buttons and their driver: B on PINS, `step(ms)` polls each
# millisecond and writes every event into OUT (button * 16 + kind).
DRIVE = """
B = Buttons(PINS, clock)
EV = ButtonEvent()
OUT = bytearray(64)
N = [0]
def step(ms):
    for _ in range(ms):
        T[0] += 1
        B.poll()
        while B.get_into(EV):
            OUT[N[0]] = EV.button * 16 + EV.kind
            N[0] += 1
"""


MPY_SETUP = """
import micropython, gc
from firmware.buttons import Buttons, ButtonEvent
class Pin:
    def __init__(self):
        self.v = 1
    def value(self):
        return self.v
T = [0]
def clock():
    return T[0]
PINS = [Pin() for _ in range(8)]
""" + DRIVE + """def script():
    PINS[0].v = 0
    step(5)
    PINS[0].v = 1
    step(3)
    PINS[0].v = 0
    step(100)
    PINS[0].v = 1
    step(50)
    PINS[7].v = 0
    step(700)
    PINS[7].v = 1
    step(50)
"""


# Control: the lock really bites in this interpreter (an allocation raises).
LOCK_WORKS = """
micropython.heap_lock()
try:
    bytearray(16)
    print('no-lock')
except MemoryError:
    print('locked')
micropython.heap_unlock()
"""


@pytest.mark.mpy
def test_poll_and_get_into_allocate_nothing_in_real_micropython():
    """Bouncing short press on dahlia + long press on menu, all under
    micropython.heap_lock(): any allocation would raise MemoryError."""
    r = run_mpy(
        "gc.collect()\nmicropython.heap_lock()\nscript()\nmicropython.heap_unlock()\nprint(list(OUT[:N[0]]))\n" + LOCK_WORKS,
        setup=MPY_SETUP,
    )
    assert r.stdout.splitlines() == [str([0 * 16 + SHORT, 7 * 16 + LONG]), "locked"]


# ---------------------------------------------- the edge latch (flash stalls)
#
# Pins that have irq() (machine.Pin; here host/board_sim/mpy_guest's
# stand-in, which latches edges while interrupts are off as the RP2040's
# IO_BANK0 does, and fires one handler call per pin with every latched
# flag when they come back: disable_irq/enable_irq) are armed by Buttons,
# and poll() takes their edges from the latch. A flash stall is
# disable_irq(), the edges, time passing, enable_irq().

LATCH_SETUP = """
import sys
sys.path.insert(0, '_stubs')
import machine
from firmware.buttons import Buttons, ButtonEvent
T = [0]
def clock():
    return T[0]
PINS = [machine.Pin(n, machine.Pin.IN, machine.Pin.PULL_UP) for n in range(2, 10)]
""" + DRIVE + """def stall(ms, edges):
    # the chip runs no code for ms; (at ms, pin, level) happen meanwhile
    s = machine.disable_irq()
    t0 = T[0]
    for at, i, level in edges:
        T[0] = t0 + at
        PINS[i].level = level
    T[0] = t0 + ms
    machine.enable_irq(s)
"""


def _latched_rig():
    """The same in CPython: the stand-in machine module, fresh pins."""
    from host.board_sim.mpy_guest import machine

    machine.Pin.made = []
    r = Rig()
    r.pins = [machine.Pin(n, machine.Pin.IN, machine.Pin.PULL_UP) for n in range(2, 10)]
    r.b = Buttons(r.pins, lambda: r.t)

    def stall(ms, edges, work=False):
        """`work`: the stall is flash work the Store marked (Store._mark),
        as every flash write of the board's is."""
        s = machine.disable_irq()
        t0 = r.t
        if work:
            r.b.busy = t0
        for at, i, level in edges:
            r.t = t0 + at
            r.pins[i].level = level
        r.t = t0 + ms
        machine.enable_irq(s)
        if work:
            r.b.busy = -1

    r.stall = stall
    r.set = lambda i, v: setattr(r.pins[i], "level", v)
    return r


def test_pins_with_irq_are_latched_and_plain_pins_are_sampled():
    r = _latched_rig()
    assert r.b.lat and all(p.handler is not None and p.trigger == 12 for p in r.pins)
    assert not Rig().b.lat  # value() only (the simulator, CircuitPython): sampled each poll


def test_a_press_entirely_inside_a_stall_arrives_once_after_it():
    r = _latched_rig()
    r.run(10)
    r.stall(45, [(5, 2, 0), (35, 2, 1)])  # a 30 ms tap inside one 45 ms erase
    assert r.pins[2]._irq.f == 12  # one interrupt, both flags
    r.run(1)
    assert r.log == [(56, 2, SHORT)]  # at the first poll after the stall
    r.run(1000)
    assert r.log == [(56, 2, SHORT)]


def test_without_the_latch_the_same_press_is_lost():
    """The control: the polling loop cannot see a press that starts and
    ends between two polls (what the latch is for)."""
    r = Rig()
    r.run(10)
    r.set(2, 0)
    r.t += 30  # no poll: the chip is stalled
    r.set(2, 1)
    r.t += 15
    r.run(1000)
    assert r.log == []


def test_a_press_begun_before_a_stall_and_released_in_it_fires_at_its_end():
    r = _latched_rig()
    r.set(4, 0)
    r.run(5)  # seen held, not yet 20 ms
    r.stall(45, [(20, 4, 1)])  # let go inside the erase
    r.run(1)
    assert r.log == [(51, 4, SHORT)]


def test_presses_inside_one_stall_arrive_in_order_one_per_button():
    r = _latched_rig()
    r.run(10)
    r.stall(400, [(10, 0, 0), (70, 0, 1), (130, 6, 0), (190, 6, 1)])  # dahlia then ok in a 400 ms erase
    r.run(1)
    assert [(b, k) for _, b, k in r.log] == [(0, SHORT), (6, SHORT)]


def test_a_held_press_released_in_a_stall_and_a_tap_in_the_same_stall_are_two():
    """Rise, fall, rise latched as one interrupt with both flags, the
    level back up: the held press's release, then a whole press."""
    r = _latched_rig()
    r.set(6, 0)
    r.run(100)
    r.stall(400, [(20, 6, 1), (80, 6, 0), (140, 6, 1)])
    r.run(1)
    assert [(b, k) for _, b, k in r.log] == [(6, SHORT), (6, SHORT)]


def test_a_release_and_a_new_press_in_one_stall_end_the_old_press_and_time_the_new():
    r = _latched_rig()
    r.set(1, 0)
    r.run(100)
    r.stall(400, [(20, 1, 1), (80, 1, 0)])  # let go, pressed again, still held
    r.run(1)
    assert [(b, k) for _, b, k in r.log] == [(1, SHORT)]
    r.run(600)  # held from the stall's end: a LONG
    assert [(b, k) for _, b, k in r.log] == [(1, SHORT), (1, LONG)]


def test_two_whole_presses_of_one_button_inside_one_stall_arrive_as_one():
    """What the hardware cannot tell apart: the latch keeps one rising and
    one falling flag per pin, not a count, so a second whole press of the
    same button in the same stall is lost (it needs two taps inside one
    erase: 400 ms, a worn chip's, not the typical 45 ms)."""
    r = _latched_rig()
    r.run(10)
    r.stall(400, [(10, 3, 0), (70, 3, 1), (130, 3, 0), (190, 3, 1)])
    r.run(1)
    assert [(b, k) for _, b, k in r.log] == [(3, SHORT)]


def test_latched_edges_outside_stalls_keep_the_debounce_and_the_long_press():
    r = _latched_rig()
    r.run(10)
    r.set(5, 0)
    r.run(5)
    r.set(5, 1)  # a 5 ms glitch: no press
    r.run(50)
    assert r.log == []
    r.set(5, 0)
    r.run(700)
    r.set(5, 1)
    r.run(50)
    assert [(b, k) for _, b, k in r.log] == [(5, LONG)]


# Finger timings of a player: 80 ms taps, 700 ms holds; a W25Q16JV erase
# takes 45 ms typically and 400 ms at the datasheet's maximum.

@pytest.mark.parametrize("begun_at", [0, 50, 200, 399])
def test_a_long_press_begun_inside_a_400_ms_erase_is_long(begun_at):
    r = _latched_rig()
    r.run(10)
    r.stall(400, [(begun_at, 6, 0)], work=True)
    r.run(700 - (400 - begun_at))
    r.set(6, 1)
    r.run(50)
    assert [(b, k) for _, b, k in r.log] == [(6, LONG)]


def test_without_the_flash_mark_that_long_press_was_read_short():
    """The control (what the chip showed): dated at the stall's end, a
    700 ms hold begun 200 ms into a 400 ms erase looked 500 ms long."""
    r = _latched_rig()
    r.run(10)
    r.stall(400, [(200, 6, 0)])
    r.run(500)
    r.set(6, 1)
    r.run(50)
    assert [(b, k) for _, b, k in r.log] == [(6, SHORT)]


@pytest.mark.parametrize("ms", [45, 400])
@pytest.mark.parametrize("begun_at_end", [1, 20, 79])
def test_a_tap_begun_inside_an_erase_is_short(ms, begun_at_end):
    r = _latched_rig()
    r.run(10)
    r.stall(ms, [(ms - begun_at_end, 2, 0)], work=True)  # 80 ms tap, its end after the erase
    r.run(80 - begun_at_end)
    r.set(2, 1)
    r.run(50)
    assert [(b, k) for _, b, k in r.log] == [(2, SHORT)]


@pytest.mark.parametrize("ms", [45, 400])
def test_a_long_press_released_inside_an_erase_is_long(ms):
    """A 700 ms hold let go 10 ms before an erase ends: the release is
    dated at the stall's end, the latest it can have been."""
    r = _latched_rig()
    r.set(5, 0)
    r.run(700 - ms + 10)
    r.stall(ms, [(ms - 10, 5, 1)], work=True)
    r.run(50)
    assert [(b, k) for _, b, k in r.log] == [(5, LONG)]


def test_the_store_marks_each_piece_of_flash_work_and_ends_the_mark():
    """Store._mark, as the board's Store runs it: the mark is set while the
    frame's write runs, and cleared when flush() returns."""
    from boardkit.memfs import MemFS
    from firmware.storage import Store
    import engine_lite
    from engine_lite import record
    from tests.kit.mpy_harness import REPO
    from tests.kit.storage_script import load_events

    start = engine_lite.Game().encode(load_events(REPO / "tests/records/orchids-5p.jsonl")[0])
    seen = []

    class Mark:
        busy = -1

    fs = MemFS()
    t = [100]
    store = Store(fs=fs, clock=lambda: t[0])
    store.mark = Mark()
    real_open = fs.open

    def open_(path, mode="rb"):
        if "w" in mode or "a" in mode:
            seen.append(store.mark.busy)
        return real_open(path, mode)

    fs.open = open_
    store.boot()
    g = store.new_game(start)
    t[0] = 250
    seen.clear()
    store.apply(g, record.encode_take(1), later=True)
    store.flush()
    assert seen and all(b == 250 for b in seen)
    assert store.mark.busy == -1


@pytest.mark.mpy
def test_a_long_press_begun_inside_an_erase_in_real_micropython():
    r = run_mpy(
        "step(10)\n"
        "B.busy = T[0]\n"  # the Store's mark: flash work begins
        "stall(400, [(200, 6, 0)])\n"
        "B.busy = -1\n"
        "step(500)\n"
        "PINS[6].level = 1\n"
        "step(50)\n"
        "print(list(OUT[:N[0]]))\n",
        setup=LATCH_SETUP,
    )
    assert r.stdout.splitlines() == [str([6 * 16 + LONG])]


@pytest.mark.mpy
def test_the_latch_in_real_micropython_a_press_inside_a_stall_arrives_once():
    r = run_mpy(
        "step(10)\n"
        "stall(45, [(5, 2, 0), (35, 2, 1)])\n"
        "step(1)\n"
        "print(list(OUT[:N[0]]), T[0])\n"
        "stall(400, [(20, 2, 0), (80, 2, 1), (140, 7, 0), (200, 7, 1)])\n"
        "step(1000)\n"
        "print(list(OUT[:N[0]]))\n",
        setup=LATCH_SETUP,
    )
    assert r.stdout.splitlines() == [str([2 * 16 + SHORT]) + " 56", str([2 * 16 + SHORT, 2 * 16 + SHORT, 7 * 16 + SHORT])]


@pytest.mark.mpy
def test_the_interrupt_handler_and_poll_allocate_nothing_in_real_micropython():
    """The handler runs as a hard interrupt on the board, where the heap is
    locked (mpirq.c: gc_lock): here every edge's handler call and every
    poll that replays them run under micropython.heap_lock()."""
    r = run_mpy(
        "step(10)\n"
        "gc.collect()\n"
        "micropython.heap_lock()\n"
        "PINS[0].level = 0\n"  # an edge outside a stall: its handler runs at once
        "step(30)\n"
        "PINS[0].level = 1\n"
        "step(5)\n"
        "s = machine.disable_irq()\n"
        "PINS[7].level = 0\n"
        "PINS[7].level = 1\n"
        "machine.enable_irq(s)\n"  # both flags, one handler call
        "step(5)\n"
        "micropython.heap_unlock()\n"
        "print(list(OUT[:N[0]]))\n" + LOCK_WORKS,
        setup="import gc, micropython\n" + LATCH_SETUP,
    )
    assert r.stdout.splitlines() == [str([0 * 16 + SHORT, 7 * 16 + SHORT]), "locked"]

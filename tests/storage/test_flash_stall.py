"""No press is lost or merged while the flash is busy, and the ring answers
before the flash work.

On the Pico a sector erase stops the whole chip for ~45 ms (code runs from
the flash being erased): no poll sees the buttons meanwhile. The board
therefore shows an event first and writes it after, in the same loop step
(firmware/app.py settle), so the stall falls just after the release that
the player waits on, in the gap before the next press. Here the simulated
flash (boardkit/memfs.py `stall`) makes the clock jump by the W25Q16JV's
typical times, and a whole 5-player Stalk Exchange game is played through
the pins at one press every 150 ms: every gesture arrives, once, and the
game on flash is the record's. Presses shorter than a stall, begun and
ended inside one, arrive too on pins whose edges are latched (the Pico's
machine.Pin: firmware/buttons.py `Buttons.irq`), and only on those.
"""

import pytest

from boardkit import script
from firmware.buttons import LONG
from boardkit.hw_sim import SimHW
from firmware.main import loop_step
from boardkit.memfs import MemFS
from firmware.storage import Store
from firmware.app import App
from host.board_sim.headless import run_script_text
from tests.kit.button_scripts import load_events, stalk_script
from tests.kit.mpy_harness import REPO

pytestmark = pytest.mark.slow  # whole games played a press every 150 ms on a stalling flash

RECORD = REPO / "tests" / "records" / "stalk-5p-bag.jsonl"
PERIOD_MS = 150  # one press every 150 ms
LONG_PERIOD_MS = script.LONG_HOLD_MS + 90


def presses():
    """(button, kind) of every gesture of the record, from setup to the next game."""
    out = []
    for g in script.parse(stalk_script(load_events(RECORD))):
        out += [g[:2]] * g[2]
    return out


class Run:
    """The game played on the sim backend, its flash stalling the clock.
    `latched`: the pins are machine.Pin's stand-in (host/board_sim/
    mpy_guest/machine.py), so Buttons arms their interrupts as on the
    Pico; a stall then runs with interrupts off (the edges scheduled inside
    it land there, latched) and they fire at its end. `slow`: each stall
    that many times longer (a slower flash than the typical W25Q16JV)."""

    def __init__(self, hold_ms, period_ms=PERIOD_MS, latched=False, slow=1):
        self.hw = hw = SimHW(None, 24)
        self.stalls = []  # (start ms, length ms)
        self.latched = latched
        if latched:
            from host.board_sim.mpy_guest import machine

            machine.Pin.made = []
            hw.pins = [machine.Pin(n, machine.Pin.IN, machine.Pin.PULL_UP) for n in range(8)]

        def stall(ms):
            ms = int(ms * slow)
            self.stalls.append((hw.now, ms))
            if not latched:
                hw.advance(ms)
                return
            s = machine.disable_irq()  # rp2_flash.c: interrupts off for the erase or program
            end = hw.now + ms
            while self.k < len(self.edges) and self.edges[self.k][0] < end:  # the fingers go on meanwhile
                t, b, level = self.edges[self.k]
                hw.now = max(hw.now, t)
                hw.pins[b].level = level
                self.k += 1
            hw.now = end
            machine.enable_irq(s)  # the latched edges interrupt now

        self.edges = []  # (scheduled time, button, level)
        self.k = 0  # the next edge to happen (the boot's own flash work stalls too)
        self.fs = MemFS(stall=stall)
        self.app = app = App(hw, Store(fs=self.fs))
        self.delivered = []
        press = app.press

        def counted(b, kind):
            self.delivered.append((b, kind))
            press(b, kind)

        app.press = counted  # the loop's own entry for each gesture
        self.lit = []  # when the strip was written
        write = hw.strip.write

        def lit():
            self.lit.append(hw.now)
            write()

        hw.strip.write = lit
        self.acks = []  # (time of the ack, time of the last light before it)
        app.on_event.append(lambda gid, i, rec: self.acks.append((hw.now, self.lit[-1])))
        t = 100
        for b, kind in presses():
            hold = script.LONG_HOLD_MS if kind == LONG else hold_ms
            self.edges += [(t, b, 0), (t + hold, b, 1)]
            t += LONG_PERIOD_MS if kind == LONG else period_ms
        self.end = t + 2000

    def play(self):
        hw = self.hw
        edges = self.edges
        while hw.now < self.end:
            while self.k < len(edges) and edges[self.k][0] <= hw.now:  # what the fingers did meanwhile
                _, b, level = edges[self.k]
                if self.latched:
                    hw.pins[b].level = level  # an edge: its interrupt runs now
                else:
                    hw.pins[b].v = level
                self.k += 1
            loop_step(self.app, hw.advance)
        return self

    def during_a_stall(self):
        """Scheduled edges that fell inside a flash stall (seen only after it)."""
        return [e for e in self.edges if any(s < e[0] < s + n for s, n in self.stalls)]

    def presses_inside_a_stall(self):
        """Presses whose press and release edges both fell inside one stall."""
        down = {}
        out = []
        for t, b, level in self.edges:
            if not level:
                down[b] = t
            elif any(s < down[b] and t < s + n for s, n in self.stalls):
                out.append((down[b], b))
        return out


@pytest.mark.parametrize("hold_ms", [60, 100])
def test_presses_150_ms_apart_through_erase_stalls_all_arrive_once(hold_ms):
    run = Run(hold_ms).play()
    assert run.delivered == presses()  # none lost, none merged, none doubled
    assert run.app.buttons.dropped == 0 and run.app.faults == 0
    store = run.app.store
    (gid, _), = store.archived()
    # the game on flash is the one the same presses make without any stall
    calm = run_script_text(stalk_script(load_events(RECORD)))
    # (after its start record, which holds each game's own nonce and time)
    assert store.records(gid)[1:] == list(calm.last_game.log.records())[1:]
    assert len(calm.last_game.log) == len(load_events(RECORD))
    # the stalls were real: erases, and edges that came while the chip was stalled
    assert run.fs.erases >= 10 and max(n for _, n in run.stalls) >= 45
    assert run.during_a_stall()


def test_the_ring_answers_before_the_flash_work_and_the_ack_after_it():
    run = Run(60).play()
    events = len(run.acks)
    assert events == len(run.app.last_game.log)  # every event once
    assert all(lit <= acked for acked, lit in run.acks)
    # the events whose write erased a sector: lit, then 45 ms of flash, then acknowledged
    slow = [acked - lit for acked, lit in run.acks if acked - lit >= 45]
    assert len(slow) >= 10


def test_the_press_that_finishes_the_game_lights_setup_before_the_finish_is_written():
    """finish() copies the game into its archive file (a new file's block
    erased, a rename: ~200 ms on the chip); in a loop step it is queued, as
    an event is, and written by settle after the redraw: the ring shows
    setup first, then the finish's flash work, all in the press's step."""
    run = Run(60)
    app, fs = run.app, run.fs
    order = []  # ("lit", screen) and ("op", name, path), as they happen
    write = run.hw.strip.write

    def lit():
        order.append(("lit", app.screen))
        write()

    run.hw.strip.write = lit
    for name in ("open", "rename", "remove"):
        def op(*a, _f=getattr(fs, name), _name=name):
            if _name != "open" or "w" in a[1] or "a" in a[1]:
                order.append(("op", _name, a[0]))
            return _f(*a)

        setattr(fs, name, op)
    run.play()
    assert app.store.archived() == [("0001", False)] and app.faults == 0
    tmp = [i for i, e in enumerate(order) if e[0] == "op" and e[2].endswith(".fin.tmp")]
    assert tmp, "the finish copied the game into .fin.tmp"
    first = tmp[0]
    done = [i for i, e in enumerate(order) if e == ("op", "rename", "/bk/0001.fin.tmp")][0]
    results = max(i for i, e in enumerate(order[:first]) if e == ("lit", "results"))
    setup = [i for i, e in enumerate(order) if e[0] == "lit" and e[1].startswith("setup") and i > results][0]
    # results, then setup lit with no flash op in between, then the finish's ops
    assert results < setup < first < done
    assert all(e[0] == "lit" for e in order[results:setup])
    assert all(e[0] == "op" for e in order[setup + 1 : done + 1])  # then the work, in the same step
    assert ("op", "remove", "/bk-snap/0001.snp") in order[setup + 1 : first]  # the snapshot goes first


def test_presses_shorter_than_a_stall_inside_it_all_arrive_once_through_the_latch():
    """Taps of 30 ms, 100 ms apart, on a flash whose stalls last 8/3 of the
    typical times (a 45 ms erase takes 120 ms, within the datasheet's
    400 ms): presses begin and end inside erases, and still every gesture
    arrives once, in order, and the game on flash is the record's."""
    run = Run(30, period_ms=100, latched=True, slow=8 / 3).play()
    assert run.presses_inside_a_stall()  # the case: no poll ever saw these pins low
    assert run.delivered == presses()
    assert run.app.buttons.dropped == 0 and run.app.faults == 0
    (gid, _), = run.app.store.archived()
    calm = run_script_text(stalk_script(load_events(RECORD)))
    assert run.app.store.records(gid)[1:] == list(calm.last_game.log.records())[1:]


def test_without_the_latch_presses_inside_a_stall_are_lost():
    """The control: the same taps on pins that are only sampled."""
    run = Run(30, period_ms=100, slow=8 / 3).play()
    assert run.presses_inside_a_stall()
    assert run.delivered != presses()

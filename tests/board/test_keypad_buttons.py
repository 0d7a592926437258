"""firmware/keys_cp.py: CircuitPython's buttons through keypad.Keys, every
gesture seen through a save, with its true duration.

keypad is CircuitPython's C module and does not run here: Blinka ships a
keypad.py, but it is a Python thread scanning in real time, and its events
carry no timestamp (CircuitPython 8+ adds one), so it cannot say what the
board's does (one test runs the feed on it: the same API, edges timed when
taken). The keypad here is tests/kit/keypad_model.py: the scanner as
CircuitPython's source describes it (a scan every interval from the 1 ms
tick interrupt, none while a flash stall has interrupts off, each change
queued with the scan's 29-bit tick), fed by a player's script. Buttons is
the real firmware/buttons.py, fed by the real KeypadButtons.

The campaign compares it with the PIO watch (PioButtons, the feed on the
Pico) on the same scripts and the same loop: the shipped PIO program run
on rp2040js for each script's pin levels (tests/kit/pio_script.py), its
words written into the ring at their push times, stalls or not.
"""

import difflib
import json
import os
import random
import subprocess
import sys

import pytest

from firmware.buttons import LONG, SHORT, ButtonEvent
from firmware.keys_cp import KeyPin, KeypadButtons
from tests.kit.keypad_model import Event, ScriptedKeys, gestures_script, play
from tests.kit.mpy_harness import REPO, run_mpy
from tests.kit.pio_script import MISSING as NO_NODE

HOLD = 700  # a player's long press (LONG from 600 ms)


def _lost_and_extra(want, got):
    """Gestures missing from `got` and gestures it has that were not made
    (a misread one counts in both)."""
    sm = difflib.SequenceMatcher(a=want, b=got, autojunk=False)
    same = sum(m.size for m in sm.get_matching_blocks())
    return len(want) - same, len(got) - same


def _game(seed, tap, n=40):
    rng = random.Random(seed)
    g = [(rng.randrange(8), HOLD if rng.random() < 0.25 else tap) for _ in range(n)]
    return g, [(k, LONG if h >= 600 else SHORT) for k, h in g]


def _campaign(feed, tap, gap, stall, per_save, starts=range(0, 100, 9)):
    lost = extra = total = 0
    for i, start in enumerate(starts):
        g, want = _game(i, tap)
        edges, end = gestures_script(g, gap, start)
        a, b = _lost_and_extra(want, play(edges, end, feed, stall, per_save))
        lost, extra, total = lost + a, extra + b, total + len(want)
    return lost, extra, total


@pytest.mark.slow
def test_a_save_that_holds_the_loop_loses_no_gesture_and_misreads_none():
    """Each event the loop takes starts a save of six 45 ms stalls (about
    300 ms: the snapshot's or the finish's, on FAT) during which the loop
    does not poll: keypad scans between the stalls and keeps each edge's
    tick, so at a player's pace (80 ms taps, 700 ms holds, 220 ms gaps)
    every gesture arrives, each of its kind. The pins sampled once a loop
    turn (the backend before) lose a third of them: the same script."""
    assert _campaign("keypad", 80, 220, 45, 6) == (0, 0, 480)
    lost, extra, total = _campaign("sampled", 80, 220, 45, 6)
    assert lost > total // 5


@pytest.mark.slow
def test_what_survives_45_and_400_ms_stalls():
    """The figures docs/controls.md gives (pytest -s prints them). At the
    pace of 80 ms taps and 220 ms gaps, 45 ms stalls lose nothing with
    keypad, two or six a save. What keypad cannot see is what no scan
    sees: a tap pressed inside a stall is timed from its end (at 45 ms taps
    and 70 ms gaps some are left under the 20 ms debounce), and in 400 ms
    stalls (the datasheet's maximum erase) most gestures are gone either
    way; MicroPython's edge latch keeps those as short presses. The PIO
    watch (the same scripts, the same loop) loses and misreads none in any
    row: its machine and the DMA run through the stalls and each word
    carries its sample's time, which is why the Pico uses it."""
    rows = []
    for tap, gap in ((80, 220), (45, 70)):
        for stall in (45, 400):
            for per in (2, 6):
                k = _campaign("keypad", tap, gap, stall, per, range(0, 100, 25))
                s = _campaign("sampled", tap, gap, stall, per, range(0, 100, 25))
                p = None if NO_NODE else _campaign("pio", tap, gap, stall, per, range(0, 100, 25))
                rows.append((tap, gap, stall, per, k, s, p))
    print("\ntap/gap  stall x per save   keypad lost/extra of n   sampled lost/extra   pio lost/extra")  # pytest -s shows it
    for tap, gap, stall, per, k, s, p in rows:
        print("%3d/%-3d  %3d ms x %d        %3d/%-3d of %d            %3d/%-3d            %s" % (
            tap, gap, stall, per, k[0], k[1], k[2], s[0], s[1], "%3d/%d" % p[:2] if p else "(no node)"))
    by = {(r[0], r[2], r[3]): r for r in rows}
    assert by[80, 45, 2][4][:2] == (0, 0) and by[80, 45, 6][4][:2] == (0, 0)
    for r in rows:  # keypad never does worse than sampling
        assert r[4][0] <= r[5][0], r
    if NO_NODE:
        pytest.skip("the pio column: " + NO_NODE)
    for r in rows:  # the PIO watch: nothing lost, nothing misread, whatever the stalls
        assert r[6] == (0, 0, 160), r


@pytest.mark.slow
@pytest.mark.skipif(NO_NODE is not None, reason=NO_NODE or "")
def test_the_pio_watch_reads_every_gesture_of_the_worst_row_where_keypad_loses_them():
    """The table's worst row on its own: 160 gestures at 45 ms taps and
    70 ms gaps (a quarter of them 700 ms holds), each event the loop takes
    starting a save of six 400 ms stalls (2.4 s at the datasheet's
    maximum erase, the loop away all along): through the PIO watch every
    gesture arrives, in order, each of its kind. The control, keypad on
    the same scripts and the same loop, loses most of them (133): so the PIO
    feed's 0/0 is its own, not an easy script's."""
    assert _campaign("pio", 45, 70, 400, 6, range(0, 100, 25)) == (0, 0, 160)
    lost, _, total = _campaign("keypad", 45, 70, 400, 6, range(0, 100, 25))
    assert total == 160 and lost > 0


def _rig(t0=0, held=()):
    keys = ScriptedKeys()
    T = [t0]
    for i in held:
        keys.level[i] = 0
    keys.tick(t0)  # keypad.Keys() scans once when it is made
    b = KeypadButtons(keys, [KeyPin() for _ in range(8)], lambda: T[0] & 0x3FFFFFFF, Event())
    return keys, T, b


def _run(keys, T, b, ms, scan=True, poll=True):
    got = []
    ev = ButtonEvent()
    for _ in range(ms):
        T[0] += 1
        if scan:
            keys.tick(T[0])
        if poll:
            b.poll()
            while b.get_into(ev):
                got.append((ev.button, ev.kind))
    return got


def test_no_quiet_spell_inside_a_press_until_its_long_or_its_release():
    """tidy's quiet spell (the FAT work, a piece of a finish) waits for a
    gesture's end: a hold is no quiet spell until its LONG fired, a tap
    none until its release, then QUIET_MS of rest as after any edge."""
    from firmware.main import QUIET_MS
    from firmware.buttons import ticks_diff

    keys, T, b = _rig()
    _run(keys, T, b, 10)

    def quiet():
        return b.edge >= 0 and ticks_diff(b.clock(), b.edge) >= QUIET_MS

    keys.level[6] = 0  # a hold long past its LONG
    seen = []
    for ms in range(1, 600 + QUIET_MS + 20):
        seen += _run(keys, T, b, 1)
        assert not quiet() or (seen == [(6, LONG)] and ms >= 600 + QUIET_MS)  # never while undecided
    assert quiet()  # decided at 600 ms: the rest of the hold is inert, quiet once it has lasted QUIET_MS
    keys.level[6] = 1
    _run(keys, T, b, 10)
    assert not quiet()  # the release moved
    _run(keys, T, b, QUIET_MS)
    assert quiet()


def test_a_hold_taken_after_the_loop_was_away_is_long_and_a_tap_short():
    """The loop polls only once, 1.5 s after a 700 ms hold and an 80 ms tap
    ended: their true durations come from the scans' ticks."""
    keys, T, b = _rig()
    _run(keys, T, b, 10)
    keys.level[7] = 0
    _run(keys, T, b, HOLD, poll=False)
    keys.level[7] = 1
    _run(keys, T, b, 100, poll=False)
    keys.level[2] = 0
    _run(keys, T, b, 80, poll=False)
    keys.level[2] = 1
    _run(keys, T, b, 600, poll=False)
    assert _run(keys, T, b, 1) == [(7, LONG), (2, SHORT)]


def test_durations_are_true_across_the_29_bit_wrap_of_the_timestamps():
    """supervisor.ticks_ms() (the events' timestamps) wraps at 2**29, the
    board's ticks_ms at 2**30: a hold across the wrap is timed right."""
    keys, T, b = _rig(t0=(1 << 29) - 300)
    keys.level[5] = 0
    _run(keys, T, b, HOLD, poll=False)
    keys.level[5] = 1
    _run(keys, T, b, 50, poll=False)
    keys.level[0] = 0
    _run(keys, T, b, 80, poll=False)
    keys.level[0] = 1
    assert _run(keys, T, b, 20) == [(5, LONG), (0, SHORT)]


def test_a_button_held_at_start_is_ignored_until_released():
    keys, T, b = _rig(held=(6,))
    assert b.pins[6].value() == 0
    _run(keys, T, b, 900)
    keys.level[6] = 1
    assert _run(keys, T, b, 50) == []
    keys.level[6] = 0
    _run(keys, T, b, 80)
    keys.level[6] = 1
    assert _run(keys, T, b, 20) == [(6, SHORT)]


def test_a_bounce_shorter_than_the_debounce_is_no_press():
    keys, T, b = _rig()
    keys.level[1] = 0
    _run(keys, T, b, 10)
    keys.level[1] = 1
    assert _run(keys, T, b, 100) == []


def test_a_full_keypad_queue_counts_a_dropped_event_and_the_scanner_restarts():
    """keypad drops what a full queue cannot take (`overflowed`): the feed
    counts it in Buttons.dropped and resets the scanner, so a key still
    held comes again as a press and is not stuck."""
    keys, T, b = _rig()
    keys.events.max = 4
    for _ in range(3):  # 6 edges, the queue takes 4
        keys.level[3] = 0
        _run(keys, T, b, 30, poll=False)
        keys.level[3] = 1
        _run(keys, T, b, 30, poll=False)
    keys.level[4] = 0
    _run(keys, T, b, 30, poll=False)
    assert keys.events.overflowed
    got = _run(keys, T, b, 1)
    assert got == [(3, SHORT), (3, SHORT)]
    assert b.dropped == 1 and keys.resets == 1 and not keys.events.overflowed
    _run(keys, T, b, 60)  # the held key 4 comes again after the reset
    keys.level[4] = 1
    assert _run(keys, T, b, 20) == [(4, SHORT)]


MPY_SETUP = """
import micropython, gc
from firmware.keys_cp import KeyPin, KeypadButtons
from firmware.buttons import ButtonEvent
class Event:
    def __init__(self):
        self.key_number = 0
        self.pressed = False
        self.timestamp = 0
class Queue:  # a preallocated script of (key, pressed, tick): get_into allocates nothing
    def __init__(self, script):
        self.s = script
        self.i = 0
        self.overflowed = False
    def get_into(self, ev):
        if self.i == len(self.s) or self.s[self.i][2] > T[0]:
            return False
        ev.key_number, ev.pressed, ev.timestamp = self.s[self.i]
        self.i += 1
        return True
class Keys:
    def __init__(self, script):
        self.events = Queue(script)
    def reset(self):
        pass
T = [0]
def clock():
    return T[0]
keys = Keys([(0, True, 10), (0, False, 90), (7, True, 200), (7, False, 900)])
b = KeypadButtons(keys, [KeyPin() for _ in range(8)], clock, Event())
OUT = bytearray(8)
N = [0]
ev = ButtonEvent()
def script():
    while T[0] < 1000:
        T[0] += 1
        b.poll()
        while b.get_into(ev):
            OUT[N[0]] = ev.button << 4 | ev.kind
            N[0] += 1
"""


@pytest.mark.mpy
def test_the_keypad_feed_allocates_nothing_in_real_micropython():
    """poll() with its feed under micropython.heap_lock(): the loop's hot
    path on CircuitPython allocates nothing (the same VM's rules)."""
    r = run_mpy("gc.collect()\nmicropython.heap_lock()\nscript()\nmicropython.heap_unlock()\nprint(list(OUT[:N[0]]))\n",
                setup=MPY_SETUP)
    assert r.stdout.splitlines() == [str([0 << 4 | SHORT, 7 << 4 | LONG])]


BLINKA_KEYPAD_SCRIPT = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1])
import board, keypad
from firmware.keys_cp import KeyPin, KeypadButtons
from firmware.buttons import ButtonEvent

names = ["Dx_INPUT_TRUE", "Dx_INPUT_FALSE", "Dx_INPUT_TRUE_PULL_UP", "Dx_INPUT_TRUE_PULL_DOWN",
         "Dx_OUTPUT", "Dx_INPUT_TOGGLE", "DOTSTAR_DATA", "DOTSTAR_CLK"]
from adafruit_blinka.microcontroller.generic_agnostic_board import pin as generic
level = [True] * 8  # released (pull-up)
ids = [getattr(board, n).id for n in names]
P = generic.Pin
setattr(P, "read", lambda self: level[ids.index(self.id)])  # each generic pin's lowest layer, set before keypad's thread reads it
keys = keypad.Keys([getattr(board, n) for n in names], value_when_pressed=False, pull=True, interval=0.005)
def settle(n):  # until keypad's thread has queued n events (never a timing assertion: a wait)
    for _ in range(2000):
        if len(keys.events) >= n:
            return
        time.sleep(0.001)
    raise SystemExit("keypad queued %d events, not %d" % (len(keys.events), n))
T = [0]
b = KeypadButtons(keys, [KeyPin() for _ in names], lambda: T[0], keypad.Event())
ev = ButtonEvent()
got = []
def poll_at(t):
    T[0] = t
    b.poll()
    while b.get_into(ev):
        got.append([ev.button, ev.kind])
level[7] = False; settle(1); poll_at(100)     # menu down, taken at 100
level[7] = True; settle(1); poll_at(800)      # up, taken at 800: held 700
level[2] = False; settle(1); poll_at(900)
level[2] = True; settle(1); poll_at(980)      # globemaster: 80 ms
print(json.dumps({"stamped": b.stamped, "got": got}))
"""


@pytest.mark.slow
def test_the_feed_takes_blinkas_real_keypad_events_without_timestamps():
    """Blinka's keypad.py (a real keypad API: Keys, EventQueue.get_into,
    Event.key_number/pressed) has no timestamps, as CircuitPython 7 had
    none: each edge is then timed when the loop takes it. Its scanning
    thread reads real Blinka pins, steered at their lowest layer."""
    env = dict(os.environ, BLINKA_OS_AGNOSTIC="1")
    p = subprocess.run([sys.executable, "-c", BLINKA_KEYPAD_SCRIPT, str(REPO)], capture_output=True, text=True, env=env, cwd="/", timeout=120)
    assert p.returncode == 0, p.stderr + p.stdout
    out = json.loads(p.stdout.strip().splitlines()[-1])
    assert out == {"stamped": False, "got": [[7, LONG], [2, SHORT]]}

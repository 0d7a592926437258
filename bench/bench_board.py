"""The firmware on the board: bundle bytes, heap, allocation, fuel, restore, power cuts.

Every figure is measured here, none is assumed:

* ``mpy_bytes_total``: the .mpy files the Pico bundle puts on flash
  (host.bundle, -march=armv6m); ``mpy_bytes_bundle_files`` adds main.py and
  the pin map. Budget 48 KB, goal 32 KB (issue 3).
* ``heap_min_kb_full_game``: the smallest heap (KB) in which a whole 5-player
  Stalk Exchange game (tests/records/stalk-5p-bag.jsonl, turned into the
  button presses a scorekeeper would make) runs in real MicroPython on the
  board application: SimHW pins + debounce + App + Store on MemFS (the flash
  lives in the guest's RAM here, so the figure includes the flash contents;
  on the board they are on flash). Found by ballast bisection
  (tests.mpy_harness.run_mpy(heap_kb=k)); a run that raises MemoryError is
  "too small". ``heap_min_kb_replay_5p`` is the same for a plain
  engine_lite.replay of the record. Budget 64 KB, goal 32 KB.
* ``frame_alloc_bytes``: gc.mem_alloc() difference around one Ring.render
  with the GC disabled, the largest over many screens and instants;
  ``frame_renders_under_heap_lock`` says whether they all ran under
  micropython.heap_lock().
* ``fuel_per_event``: MicroPython fuel (deterministic instruction count) of
  one button event through the pins (press, debounce, gesture, engine judge,
  durable write to the flash Store on MemFS, redraw), as (run with N events
  - run with the same idle steps and no presses) / N.
  ``fuel_per_event_ram_store``: the same with a RAM store (no flash I/O).
* ``restore_fuel_ratio_2000_vs_100``: Store.boot fuel of a 2,000-record game
  over a 100-record game (tests/test_storage.py's boot_fuel). Budget 1.5.
* ``powercut_points_tried`` / ``powercut_events_lost``: the campaign of
  tests/test_powercut.py, counting instead of asserting: a cut at every flash
  op (three kinds of lost bytes), a cut at every op of the recovery boot
  itself, a torn write at every byte of every write (rest missing / erased),
  and seeded random cuts with random tears. After each cut a fresh Store
  boots on the surviving bytes; acknowledged events (those whose Store call
  returned) missing from what it restored are counted as lost.

Run:  .venv/bin/python -m bench.bench_board
API:  measure() -> dict
"""

import json
import random
import sys
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine_lite.tables import FLOWERS, TRACK_START_PLACEHOLDER
from tests.mpy_harness import run_mpy
from tests.ring_tour import RING_TOUR

ROOT = Path(__file__).resolve().parent.parent
RECORD = "tests/records/stalk-5p-bag.jsonl"
MPY_BUDGET = 48 * 1024
MPY_GOAL = 32 * 1024
HEAP_BUDGET_KB = 64
HEAP_GOAL_KB = 32
RESTORE_BUDGET = 1.5
HEAP_LO, HEAP_HI = 8, 256


def load_events(path=RECORD):
    with open(ROOT / path) as f:
        return [json.loads(line) for line in f if line.strip()]


def script_of(events):
    """A Stalk Exchange game record -> the button script a scorekeeper
    presses for it (docs/controls.md); ends with OK = next game (archive)."""
    start = events[0]
    n = len(start["players"])
    key = str(n)  # 5 players here; 2-player lengths are not needed
    lines = ["ok", FLOWERS[n - 1], "ok"]
    d = start.get("track_start", TRACK_START_PLACEHOLDER[key]) - TRACK_START_PLACEHOLDER[key]
    while d >= 5:
        lines.append("tulip")
        d -= 5
    while d <= -5:
        lines.append("long tulip")
        d += 5
    if d > 0:
        lines.append(FLOWERS[d - 1])
    elif d < 0:
        lines.append("long " + FLOWERS[-d - 1])
    lines.append("ok")
    for e in events[1:]:
        k = e["ev"]
        if k == "plant":
            lines.append("ok")
        elif k == "swap":
            lines.append("menu")
        elif k == "end_turn":
            lines.append("long ok")
        elif k == "flush":
            lines += ["long menu", "dahlia"]
        elif k == "harvest":
            lines += ["%s x%d" % (e["flower"], e["count"]), "ok"]
        elif k == "portfolio":
            lines += ["%s x%d" % (f, c) for f, c in e["counts"].items() if c]
            lines.append("ok")
        else:
            raise ValueError("no button script for %r" % k)
    lines.append("ok")  # results -> next game: the finished game is archived
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------ .mpy bytes


def bundle_figures():
    from host import bundle

    sizes = bundle.bundle_sizes()
    return {
        "mpy_bytes_total": bundle.bundle_bytes(),
        "mpy_bytes_bundle_files": sum(sizes.values()),
        "mpy_bytes_budget": MPY_BUDGET,
        "mpy_bytes_goal": MPY_GOAL,
    }


# ------------------------------------------------------------------ heap


# Imports (and the input: the button script / the record lines) come before
# the ballast; everything the game builds and keeps is inside the heap.
GAME_SETUP = """
import gc
from firmware.hw_sim import SimHW
from firmware.memfs import MemFS
from firmware.storage import Store
from firmware.app import App
from firmware import script as S
GESTURES = S.parse(%r)
NAMES = %r
"""

GAME_CODE = """
hw = SimHW(None, 24)
app = App(hw, Store(fs=MemFS()))
app.push_settings({'names': NAMES})
def run_for(ms):
    t = 0
    while t < ms:
        hw.advance(S.STEP_MS)
        app.step()
        if gc.mem_free() < 6144:
            gc.collect()
        t += S.STEP_MS
for g in GESTURES:  # firmware.script.play; collects between steps when < 6 KB is free
    if g[0] == S.WAIT:
        run_for(g[1])
        continue
    for _ in range(g[2]):
        hw.press(g[0])
        run_for(S.LONG_HOLD_MS if g[1] == S.LONG else S.SHORT_HOLD_MS)
        hw.release(g[0])
        run_for(S.GAP_MS)
g = app.last_game
f = g.state()['final']
print('RESULT', app.screen, len(g.log), ' '.join('%s:%d' % (p['name'], p['score']) for p in f['players']))
"""

REPLAY_SETUP = """
import gc, json, engine_lite
LINES = [l for l in open('/input/%s').read().split('\\n') if l]
"""

REPLAY_CODE = """
g = engine_lite.Game()
for l in LINES:  # engine_lite.replay; collects between events when < 6 KB is free
    g.apply(json.loads(l))
    if gc.mem_free() < 6144:
        gc.collect()
s = g.state()
print('RESULT', ' '.join('%s:%d' % (p['name'], p['score']) for p in s['final']['players']))
"""


def _fits(code, setup, heap_kb, want):
    """True if `code` runs in heap_kb; False on MemoryError; anything else raises."""
    try:
        r = run_mpy(code, setup=setup, heap_kb=heap_kb, fuel=50_000_000_000, timeout=600)
    except AssertionError as err:
        if "MemoryError" in str(err):
            return False
        if "trapped" in str(err) and "out of bounds memory access" in str(err):
            # an automatic collection inside a step (the code collects
            # between steps when < 6 KB is free, so the step alone outgrew
            # the free heap) hit
            # KNOWN_WASM_GC_BUG: counted as too small (conservative)
            return "trap"
        raise
    got = [line for line in r.stdout.splitlines() if line.startswith("RESULT")]
    if got != [want]:
        raise AssertionError("wrong result at %d KB: %r, expected %r" % (heap_kb, got, want))
    return True


def heap_min_kb(code, setup, want, lo=HEAP_LO, hi=HEAP_HI):
    """Smallest integer KB in [lo, hi] in which the run succeeds (bisection;
    the run is deterministic). Returns (kb, {kb: fits} tried)."""
    tried = {}

    def fits(k):
        tried[k] = _fits(code, setup, k, want)
        return tried[k] is True

    if not fits(hi):
        return None, tried
    if fits(lo):
        return lo, tried
    while hi - lo > 1:  # lo fails, hi fits
        mid = (lo + hi) // 2
        if fits(mid):
            hi = mid
        else:
            lo = mid
    return hi, tried


def final_words(events):
    import engine_lite

    s = engine_lite.replay(json.dumps(e) for e in events)
    return " ".join("%s:%d" % (p["name"], p["score"]) for p in s["final"]["players"]), len(events)


def heap_figures(events):
    scores, n = final_words(events)
    names = events[0]["players"]
    setup = GAME_SETUP % (script_of(events), names)
    full, tried_full = heap_min_kb(GAME_CODE, setup, "RESULT setup_game %d %s" % (n, scores))
    replay, tried_replay = heap_min_kb(REPLAY_CODE, REPLAY_SETUP % RECORD, "RESULT " + scores)
    return {
        "heap_min_kb_full_game": full,
        "heap_min_kb_replay_5p": replay,
        "heap_min_kb_budget": HEAP_BUDGET_KB,
        "heap_min_kb_goal": HEAP_GOAL_KB,
        "heap_bisection_full_game": {str(k): v for k, v in sorted(tried_full.items())},
        "heap_bisection_replay_5p": {str(k): v for k, v in sorted(tried_replay.items())},
    }


# ------------------------------------------------------------- frame, fuel


def _alloc_setup():
    # tests/test_app_alloc.py's guest setup: imports, RamStore, NeoPixel, locked()
    from tests.test_app_alloc import SETUP

    return SETUP


# A 5-player Stalk Exchange game set up on the board (as test_app_alloc does),
# the store given by STORE.
BOARD_5P = """
hw = SimHW(None, 24)
hw.strip = NeoPixel(24)
app = App(hw, STORE)
for b in (6, 4, 6, 6):  # Stalk Exchange, 5 players, start space, go
    app.press(b, 1)
assert app.screen == 'stalk', app.screen
gc.collect()
"""

FRAME_CODE = """
STORE = Store(fs=MemFS())
""" + BOARD_5P + """
ring = app.ring
view = app.view
worst = [0, 0]
def frames():
    gc.collect()
    gc.disable()
    t = 0
    while t < 3000:
        a = gc.mem_alloc()
        ring.render(view, t)
        b = gc.mem_alloc()
        worst[1] += 1
        if b - a > worst[0]:
            worst[0] = b - a
        t += 111
    gc.enable()
def render_locked():
    t = 0
    while t < 3000:
        ring.render(view, t)
        t += 111
locks = []
def screen():
    frames()
    locks.append(locked(render_locked))
""" + RING_TOUR + """
print('FRAME', worst[0], worst[1], ' '.join(locks))
"""


def frame_figures():
    r = run_mpy(FRAME_CODE, setup=_alloc_setup(), fuel=20_000_000_000, timeout=600)
    line = [x for x in r.stdout.splitlines() if x.startswith("FRAME")][0].split()
    worst, frames, locks = int(line[1]), int(line[2]), line[3:]
    return {
        "frame_alloc_bytes": worst,
        "frame_alloc_frames_measured": frames,
        "frame_renders_under_heap_lock": all(x == "ok" for x in locks),
    }


# One turn = plant, plant, end turn (hold OK), through the pins: press, the
# gesture's hold time in 5 ms steps, release, the gap. PRESS = 0 runs the very
# same steps with nothing pressed (the baseline).
FUEL_CODE = """
STORE = %s
""" + BOARD_5P + """
from firmware import script as S
TURNS = %d
PRESS = %d
t = 0
while t < TURNS:
    for b, hold in ((6, S.SHORT_HOLD_MS), (6, S.SHORT_HOLD_MS), (6, S.LONG_HOLD_MS)):
        if PRESS:
            hw.press(b)
        S.run_for(app, hw, hold)
        if PRESS:
            hw.release(b)
        S.run_for(app, hw, S.GAP_MS)
    t += 1
print('EVENTS', len(app.game.log) - 1, hw.strip.writes)
"""


def fuel_per_event(store, turns=8):
    setup = _alloc_setup()
    base = run_mpy(FUEL_CODE % (store, turns, 0), setup=setup)
    full = run_mpy(FUEL_CODE % (store, turns, 1), setup=setup)
    events = int(full.stdout.split()[1])
    if events != 3 * turns or base.stdout.split()[1] != "0":
        raise AssertionError("fuel runs did not play the expected events: %r / %r" % (full.stdout, base.stdout))
    return (full.fuel_used - base.fuel_used) / events


def fuel_figures():
    return {
        "fuel_per_event": round(fuel_per_event("Store(fs=MemFS())")),
        "fuel_per_event_ram_store": round(fuel_per_event("RamStore()")),
    }


def restore_figures():
    from tests.test_storage import boot_fuel

    f100, f2000 = boot_fuel(100), boot_fuel(2000)
    return {
        "restore_fuel_100": f100,
        "restore_fuel_2000": f2000,
        "restore_fuel_ratio_2000_vs_100": round(f2000 / f100, 3),
        "restore_fuel_ratio_budget": RESTORE_BUDGET,
    }


# ------------------------------------------------------------------ power cuts


class Campaign:
    """Counts cut points and acknowledged events lost (never asserts)."""

    def __init__(self):
        import engine_lite
        from firmware.memfs import MemFS, PowerCut
        from firmware.storage import Store
        from tests import test_powercut as P

        self.E, self.MemFS, self.PowerCut, self.Store, self.P = engine_lite, MemFS, PowerCut, Store, P
        self.points = {}
        self.lost = 0
        self.extra = 0
        self.bad_points = 0
        self.failures = []

    def _count(self, kind):
        self.points[kind] = self.points.get(kind, 0) + 1

    def _lost_between(self, want, got):
        """Acknowledged events (want) not restored (got): want minus the
        common prefix; unacknowledged restored events counted as extra."""
        want = want or []
        got = got or []
        i = 0
        while i < len(want) and i < len(got) and want[i] == got[i]:
            i += 1
        return len(want) - i, len(got) - i

    def check(self, fs, shadow, kind, keep_playing=True):
        """Boot on `fs` (a survivor) and count what is lost."""
        P = self.P
        lost = extra = 0
        try:
            store = self.Store(fs=fs, snapshot_every=P.SNAP)
            game = store.boot()
            got = None if game is None else game.events()
            a, b = self._lost_between(shadow.events(), got)
            lost, extra = lost + a, extra + b
            arch = P.archived_events(store)
            for i, want in enumerate(shadow.finished):
                a, b = self._lost_between(want, arch[i] if i < len(arch) else None)
                lost, extra = lost + a, extra + b
            if keep_playing and game is not None and len(game.log) > 1:
                last = bytes(list(game.log.records())[-1])
                store.undo(game)
                store.apply(game, last)
                again = self.Store(fs=fs.survivor(), snapshot_every=P.SNAP).boot()
                a, b = self._lost_between(got, None if again is None else again.events())
                lost, extra = lost + a, extra + b
        except Exception as err:  # a boot that crashes loses the whole game
            lost += len(shadow.events() or []) + sum(len(f) for f in shadow.finished)
            self.failures.append("%s: %r" % (kind, err))
        self._count(kind)
        self.lost += lost
        self.extra += extra
        if lost or extra:
            self.bad_points += 1
            if len(self.failures) < 20:
                self.failures.append("%s: lost %d, extra %d" % (kind, lost, extra))

    def _play_until_cut(self, fs):
        P = self.P
        shadow = P.Shadow()
        try:
            P.play(self.Store(fs=fs, snapshot_every=P.SNAP), P.STEPS, shadow)
        except self.PowerCut:
            return shadow, True
        return shadow, False

    def every_op(self, junk):
        P = self.P
        for cut in range(1, len(P.TRACE) + 1):
            fs = self.MemFS(cut_at=cut, junk=junk)
            shadow, cut_happened = self._play_until_cut(fs)
            if not cut_happened:
                self.failures.append("op %d: no power cut happened" % cut)
            probe = fs.survivor()
            probe.trace = []
            self.Store(fs=probe, snapshot_every=P.SNAP).boot()
            for j in range(1, len(probe.trace) + 1):  # cut the recovery boot too
                half = fs.survivor(cut_at=j)
                try:
                    self.Store(fs=half, snapshot_every=P.SNAP).boot()
                except self.PowerCut:
                    pass
                self.check(half.survivor(), shadow, "recovery", keep_playing=False)
            self.check(fs.survivor(), shadow, "op")

    def torn_bytes(self):
        P = self.P
        shadow = P.Shadow()

        def on_torn(survivor, op, k, junk):
            self.check(survivor, shadow, "torn_byte", keep_playing=(self.points.get("torn_byte", 0) % 8 < 2))

        P.play(self.Store(fs=P.ForkFS(on_torn), snapshot_every=P.SNAP), P.STEPS, shadow)

    def random_cuts(self, n, seed=7):
        P = self.P
        rnd = random.Random(seed)
        for _ in range(n):
            cut = rnd.randint(1, len(P.TRACE))
            fs = self.MemFS(cut_at=cut, torn=rnd.randint(0, 300), junk=rnd.choice((None, 0, 0xFF, 0x55)))
            shadow, _ = self._play_until_cut(fs)
            self.check(fs.survivor(), shadow, "random")


def powercut_figures(random_cuts=3000):
    t0 = time.monotonic()
    c = Campaign()
    for junk in (None, 0xFF, 0x00):
        c.every_op(junk)
    c.torn_bytes()
    c.random_cuts(random_cuts)
    return {
        "powercut_points_tried": sum(c.points.values()),
        "powercut_points_by_kind": dict(sorted(c.points.items())),
        "powercut_events_lost": c.lost,
        "powercut_unacknowledged_events_kept": c.extra,
        "powercut_bad_points": c.bad_points,
        "powercut_failures": c.failures[:20],
        "powercut_session_flash_ops": len(c.P.TRACE),
        "powercut_seconds": round(time.monotonic() - t0, 1),
    }


# ------------------------------------------------------------------ all


def measure():
    out = {}
    events = load_events()
    for name, fn in (
        ("bundle", bundle_figures),
        ("heap", lambda: heap_figures(events)),
        ("frame", frame_figures),
        ("fuel", fuel_figures),
        ("restore", restore_figures),
        ("powercut", powercut_figures),
    ):
        t0 = time.monotonic()
        out.update(fn())
        print("  %s: %.1f s" % (name, time.monotonic() - t0), flush=True)
    return out


def main():
    m = measure()
    print(json.dumps(m, indent=2, sort_keys=True))
    return m


if __name__ == "__main__":
    main()

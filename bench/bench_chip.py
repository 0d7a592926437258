"""The chip bench: whole games played on an emulated RP2040 running MicroPython.

What runs: rp2040js (npm, pinned in bench/chip/package-lock.json) executes
the MicroPython UF2 it is given (the official v1.28.0 ``RPI_PICO`` image,
or a frozen Bloomkeeper build) with the RP2040's own bootrom, and a
littlefs image in the flash's file-system area (bench/chip_image.py: the
rp2 port's geometry). On a stock image that file system holds the
``make firmware`` bundle (``.mpy`` files and main.py, as ``bloomkeeper
flash`` puts them); on a frozen one it starts empty (the bundle is inside
the image). bench/chip/run.mjs boots it, presses the buttons on their GPIO
pins (firmware/pinmap.json's ``pico``) and decodes the ring's WS2812
bitstream from its data pin; docs/chip-bench.md says what the emulator
does and does not model.

The gestures: the 5-player games of both titles
(tests/kit/button_scripts.py on tests/records/), pressed with a finger's
timing, not the board's: a tap held ``SHORT_MS``, a long press held
``LONG_MS``, ``GAP_MS`` released between gestures, whatever the board is
doing (a press during a flash stall is not waited for); and when an erase
starts while the next gesture is a long press, that press comes down
``LONG_INTO_ERASE`` of the way into the erase's stall (the later gestures
move with it), so that every game has long presses begun inside an erase.

The same gestures at the same milliseconds go through the firmware in
CPython (the simulator's SimHW, stepped every ms: REFERENCE), which gives
the ring each gesture should leave and the final one, drawn at the chip's
own milliseconds.

Figures (per build, title and flash timing):

* ``boot_ms``: reset (core at the start of flash, the boot2 stage) to the
  first bit of the first frame, on a fresh file system (the board makes its
  folders: erases and programs); ``boot_ms_second``: the next boot, on the
  file system the first one left. The bootrom's own few ms before boot2
  are not in either.
* ``press_to_light_ms`` p50/p90/max: a tap's release edge (it fires on
  release) to the first bit of the first frame written after it; a long
  press: the moment it has been held ``LONG_PRESS_MS`` to the first frame
  after that. A gesture no frame follows before the next press is
  ``unlit`` (the ring did not change: e.g. a refused gesture whose blink
  has not started, or an acknowledgement already shown).
* ``misread``: gestures after which the ring, as the next press finds it,
  is none CPython draws from TOL_MS before that frame to 5 ms after (a
  press lost, misread or read late shows here); ``final_ring_equal``: the
  last frame passes the same check; ``stale``: gestures whose frame passes
  it but is not what CPython shows just before the next press (a board
  that stopped drawing, or a change a flash stall held back).
* ``erases`` / ``programs`` / ``pages``: flash operations from the first
  press on (the game), and at boot; ``long_in_erase``: long presses whose
  press edge fell inside a sector erase's stall; ``long_held_in_erase``:
  long presses held while one ran (the quiet spell's erases start 300 ms
  into a long hold: its long mark at 600 ms and its release fall inside a
  400 ms erase); ``taps_in_erase``: taps with an edge inside one.

Run:  .venv/bin/python -m bench.bench_chip --uf2 PATH [--frozen-uf2 PATH]
      (make chip-bench UF2=... FROZEN_UF2=...)
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import bench_path, chip_fat, chip_image  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
CHIP = ROOT / "bench" / "chip"
CACHE = Path(os.environ.get("BK_CHIP_CACHE", Path.home() / ".cache" / "bk-chip"))
BOOTROM = CACHE / "bootrom.ts"

SHORT_MS = 80  # a tap
LONG_MS = 700  # a long press (firmware LONG_PRESS_MS is 600)
GAP_MS = 220  # released between two gestures
LONG_INTO_ERASE = 0.5  # a long press that is next when an erase starts comes down halfway into its stall (run.mjs longIntoErase)
SETTLE_MS = 1000  # first light -> first press: boot's own flash work is done
END_MS = 1500  # after the last gesture, and after the board's last flash operation: the loop's flash work finishes
END_CAP_MS = 60000  # ...but no run goes on more than this after its last gesture (a finish at datasheet-maximum flash: ~20 s)

# W25Q16JV datasheet: 4 KiB sector erase and 256-byte page program, typical and maximum.
FLASH = {"typical": (45e6, 0.4e6), "max": (400e6, 3e6)}

TITLES = bench_path.TITLES  # the same 5-player records as make bench


def pico_spec():
    with open(ROOT / "firmware" / "pinmap.json") as f:
        return json.load(f)["boards"]["pico"]


def gestures(title, short_ms=SHORT_MS):
    """[(button index, kind, hold ms)] of the title's 5-player game, held as
    a finger holds (a tap `short_ms`, LONG_MS); a wait line is (-1, 0, ms)."""
    return bench_path.gestures(title, short_ms=short_ms, long_ms=LONG_MS)


def fs_files(frozen):
    """The file system the board starts with: the bundle (stock image) or nothing (frozen)."""
    if frozen:
        return {}
    from host.build import bundle

    d = Path(tempfile.mkdtemp(prefix="bk-chip-bundle-"))
    try:
        bundle.build("micropython", d / "b", ROOT)
        return chip_image.tree_files(d / "b")
    finally:
        shutil.rmtree(d, ignore_errors=True)


# The heap probe: /boot.py for the heap runs only (never the timing runs:
# gc.mem_alloc() walks the whole heap, milliseconds on the chip). It takes a
# pad of PAD bytes first, so the board runs on a heap that much smaller (one
# heap, less of it free: the same as a firmware built with a smaller heap,
# but for the GC's allocation table, which stays sized for the whole heap,
# a few KB outside the heap either way), then starts firmware/main.py as the
# board's own main.py does (probe_files says why from boot.py), with two hooks looked up in firmware.main's
# globals: run (a reading of the live heap after a collection, before the
# loop starts) and tidy (a reading right after the collection of each quiet
# spell; the peak is kept). The readings are kept in a bytearray of the
# heap that begins with MARKER, which the runner finds in the chip's RAM
# at the end: no output channel is needed (USB stays unattached, and
# MicroPython's UART driver waits on a transmit interrupt rp2040js does
# not raise). The marker is written byte by byte, so no other copy of it
# (a literal's) is in RAM.
MARKER = "BKHEAP01"
PROBE = """import gc
pad = bytearray(%d) if %d else None
gc.collect()
import struct
mark = bytearray(24)
for i, c in enumerate((66, 75, 72, 69, 65, 80, 48, 49)):
    mark[i] = c
n = len(pad) if pad else 0
struct.pack_into("<I", mark, 8, gc.mem_alloc() + gc.mem_free() - n)
import firmware.main as m
t = m.tidy
def tidy(app):
    b = app.buttons
    due = b.edge >= 0 and m.ticks_diff(b.clock(), b.edge) >= m.QUIET_MS
    t(app)
    if due:
        a = gc.mem_alloc() - n
        if a > struct.unpack_from("<I", mark, 16)[0]:
            struct.pack_into("<I", mark, 16, a)
r = m.run
def run(app, sleep_ms):
    gc.collect()
    struct.pack_into("<I", mark, 12, gc.mem_alloc() - n)
    r(app, sleep_ms)
m.tidy = tidy
m.run = run
m.main()
"""


def probe_files(files, pad):
    """`files` with /boot.py the heap probe with a pad of `pad` bytes. Why
    boot.py: a frozen build's frozen main.py runs before any main.py on the
    file system (MicroPython's pyexec_file_if_exists looks in the frozen
    modules first), and boot.py is frozen in neither build. The probe never
    returns, so main.py never runs; and the rp2 port starts its USB device
    after boot.py (ports/rp2/main.c), which a probe in boot.py never reaches:
    the heap runs have no USB stack, as the timing runs have no USB host."""
    f = dict(files)
    f["/boot.py"] = (PROBE % (pad, pad)).encode()
    return f


def heap_readings(marks):
    """{heap, boot, peak} bytes from the probe's bytearray (the runner's
    ram_marks: the bytes after each copy of MARKER; the probe's is the one
    with a heap size in it)."""
    import struct

    for h in marks or ():
        heap, boot, peak = struct.unpack_from("<III", bytes.fromhex(h))
        if heap:
            return {"heap": heap, "boot": boot, "peak": peak}
    return {}


def faults(image):
    """The fault log the board left on its flash (App.recover), or ''."""
    files = chip_image.read(image)
    return b"".join(v for k, v in files.items() if k.endswith("/faults.txt")).decode("utf-8", "replace")


def node():
    return shutil.which("node")


def run_chip(uf2, files, plan, flash, work, boot_only=False, usb_console=False, marker=None, image=None, cp=False, boot_timeout_ms=5000, gap_ms=GAP_MS):
    """One emulated run; the runner's JSON (frames, presses, flash operations).
    The flash's file system: `files` in a fresh littlefs, or `image` (bytes:
    what an earlier run left, fs-after.img). `cp`: a CircuitPython image,
    whose drive is CIRCUITPY (bench/chip_fat.py: `image` is that FAT volume,
    `files` unused) and whose NeoPixel frames come from the PIO (run.mjs
    pio_step). `gap_ms`: released between two gestures."""
    spec = pico_spec()
    work = Path(work)
    img = work / "fs.img"
    img.write_bytes(chip_image.build(files) if image is None else image)
    layout = chip_fat if cp else chip_image
    erase_ns, page_ns = FLASH[flash]
    job = {
        "uf2": str(uf2),
        "bootrom": str(BOOTROM),
        "fs_image": str(img),
        "fs_offset": layout.FS_OFFSET,
        "fs_size": layout.FS_BYTES,
        "fs_out": str(work / "fs-after.img"),
        "pixel_pin": int(spec["pixel_pin"].lstrip("GP")),
        "buttons": [int(spec["buttons"][b].lstrip("GP")) for b in _button_names()],
        "gestures": [] if boot_only else [[b, hold, gap_ms] if b >= 0 else [-1, hold, 0] for b, _k, hold in plan],
        "settle_ms": SETTLE_MS,
        "end_ms": 300 if boot_only else END_MS,
        "end_cap_ms": 300 if boot_only else END_CAP_MS,
        "boot_timeout_ms": boot_timeout_ms,
        "erase_ns": erase_ns,
        "page_ns": page_ns,
        "uart": False,
        "usb_console": usb_console,
        "long_into_erase": 0 if boot_only else LONG_INTO_ERASE,
        "ram_marker": marker,
        "pio_step": cp,
        "watch_pins": [25] if cp else [],  # the Pico's LED: CircuitPython's status light (its safe-mode wait blinks it)
    }
    (work / "job.json").write_text(json.dumps(job))
    subprocess.run(["nice", node(), str(CHIP / "run.mjs"), str(work / "job.json"), str(work / "out.json")], cwd=CHIP, check=True)
    return json.loads((work / "out.json").read_text())


def _button_names():
    from firmware.buttons import BUTTONS

    return BUTTONS


# The reference: the firmware's Python in CPython, on the simulator's pins,
# stepped every ms, its buttons pressed and released at the chip's own
# milliseconds. Run in a process of its own with the source tree the image
# was built from first on sys.path (a frozen image carries bytecode, not
# its source: --frozen-src names the tree), so the chip is compared with
# the very code it runs. For each query (a chip frame's ms) it renders the
# ring as it stands at every ms from TOL_MS before to 5 ms after
# (Ring.render: the same view at the same ms gives the same pixels, so an
# animation is compared at the chip's own phase, whichever ms the chip's
# loop drew it at), and prints the distinct rings of each query as hex.
REFERENCE = """
import json, sys
from boardkit.hw_sim import SimHW
from boardkit.memfs import MemFS
from firmware.app import App
from firmware.hw import make_hw
from firmware.storage import Store

presses, queries, before, after, epoch = json.load(open(sys.argv[1]))
hw = make_hw("pico", backend=SimHW)
app = App(hw, Store(fs=MemFS()))
events = []
for p in presses:
    events.append((int(p["down_ns"] // 1e6), 0, p["button"]))
    events.append((int(p["up_ns"] // 1e6), 1, p["button"]))
seen = [set() for _ in queries]
ei = lo = 0
for t in range(max(queries) + after + 1):
    hw.now = epoch + t
    while ei < len(events) and events[ei][0] <= t:
        (hw.release if events[ei][1] else hw.press)(events[ei][2])
        ei += 1
    app.step()
    while lo < len(queries) and queries[lo] + after < t:
        lo += 1
    qi = lo
    while qi < len(queries) and queries[qi] - before <= t:
        seen[qi].add(bytes(app.ring.render(app.view, epoch + t)).hex())
        qi += 1
from bench.bench_chip import game_records
json.dump({"rings": [sorted(s) for s in seen], "games": game_records(app.store)}, sys.stdout)
"""


def source_tree(spec, dst):
    """A source tree for the reference: a directory, or REPO@REV (a git
    commit, exported with git archive: nothing is written into REPO)."""
    if "@" not in spec:
        return Path(spec)
    repo, rev = spec.rsplit("@", 1)
    dst = Path(dst)
    dst.mkdir(parents=True, exist_ok=True)
    arc = subprocess.run(["git", "-C", repo, "archive", rev, "boardkit", "firmware", "engine_lite"], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(dst)], input=arc, check=True)
    return dst


def reference_rings(presses, queries, src=ROOT, epoch=0, games=None):
    """For each query ms (ascending), the rings the reference draws within
    TOL_MS before to 5 ms after it (REFERENCE), as a set of hex strings.
    `epoch`: the board's ticks_ms at reset (the reference's clock reads
    epoch + the chip's ms, so an animation is drawn at the chip's phase):
    0 on MicroPython, whose ticks_ms counts from reset; on CircuitPython
    supervisor.ticks_ms() starts 65,536 ms before its 2**29 wrap
    (CP_EPOCH_MS). `games`, a list: the reference's finished games
    (game_records) are added to it."""
    with tempfile.TemporaryDirectory(prefix="bk-chip-ref-") as tmp:
        arg = Path(tmp) / "job.json"
        arg.write_text(json.dumps([presses, queries, TOL_MS, 5, epoch]))
        env = dict(os.environ, PYTHONPATH=str(src), PYTHONDONTWRITEBYTECODE="1")
        env["PYTHONPATH"] += os.pathsep + str(ROOT)  # bench.bench_chip's game_records, beside a source tree of another revision
        p = subprocess.run([sys.executable, "-c", REFERENCE, str(arg)], cwd=tmp, env=env, check=True, capture_output=True, text=True)
    out = json.loads(p.stdout)
    if games is not None:
        games.extend(out["games"])
    return [set(r) for r in out["rings"]]


def game_records(store):
    """Every finished game in `store` as its effective records (hex), the
    start record reduced to what the players chose (its opcode, title,
    players, flags and names: not the board's nonce and clock)."""
    from engine_lite.record import start_names

    out = []
    for gid, _synced in store.archived():
        recs = store.records(gid)
        start = recs[0]
        out.append([bytes(start[:3]).hex() + "%02x" % (start[3] & 7) + "|" + ",".join(start_names(start))] + [bytes(r).hex() for r in recs[1:]])
    return out


def drive_games(files, root="/bk"):
    """game_records of the Store a board left in `files` ({path: bytes}, a
    drive's files: chip_fat.read)."""
    from boardkit.memfs import MemFS
    from firmware.storage import Store

    fs = MemFS()
    for path, data in files.items():
        parts = path.split("/")
        for i in range(2, len(parts)):
            fs.dirs["/".join(parts[:i])] = 1
        fs.files[path] = bytearray(data)
    store = Store(root, fs=fs)
    store.boot()
    return game_records(store)


TOL_MS = 25  # the chip's frame against the reference's rings this many ms before it: the 20 ms frame cadence, a press handled late by a loop turn


def rgb_hex(frame, order):
    """A decoded frame's bytes (the strip's order) as RGB hex, the reference's form."""
    b = bytes.fromhex(frame["hex"])
    ri, gi, bi = order.index("R"), order.index("G"), order.index("B")
    return bytes(x for i in range(0, len(b) - 2, 3) for x in (b[i + ri], b[i + gi], b[i + bi])).hex()


def pct(xs, q):
    if not xs:
        return None
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q / 100 * (len(xs) - 1))))]


def figures(out, plan, order="GRB", src=ROOT, epoch=0, drive=None):
    """The run's figures (module docstring); `epoch`: reference_rings'.
    `drive`: the files the board left on its drive (chip_fat.read), whose
    finished games are compared, record by record, with the reference's
    (`record_equal`: the board read every gesture as the player made it,
    however late it drew them)."""
    from engine_lite.vocab import LONG_PRESS_MS

    frames = out["frames"]
    presses = out["presses"]
    starts = [f["start_ns"] for f in frames]
    import bisect

    def first_frame_after(t):
        i = bisect.bisect_left(starts, t)
        return frames[i] if i < len(frames) else None

    kinds = [k for b, k, _h in plan if b >= 0]
    taps, longs, unlit = [], [], 0
    for i, p in enumerate(presses):
        long_ = kinds[i] == 2
        t = p["down_ns"] + LONG_PRESS_MS * 1e6 if long_ else p["up_ns"]
        f = first_frame_after(t)
        limit = presses[i + 1]["down_ns"] if i + 1 < len(presses) else out["end_ns"]
        if f is None or f["start_ns"] >= limit:
            unlit += 1
            continue
        (longs if long_ else taps).append((f["start_ns"] - t) / 1e6)
    game_from = presses[0]["down_ns"] if presses else out["end_ns"]
    ops = out["flash"]
    erases = [o for o in ops if o["op"] == "E"]

    def in_erase(t):
        return any(e["at_ns"] <= t < e["at_ns"] + e["stall_ns"] for e in erases)

    fig = {
        "boot_ms": round(out["first_light_ns"] / 1e6, 1) if out["first_light_ns"] is not None else None,
        "gestures": len(presses),
        "press_to_light_ms_p50": _r(pct(taps, 50)),
        "press_to_light_ms_p90": _r(pct(taps, 90)),
        "press_to_light_ms_max": _r(max(taps) if taps else None),
        "long_press_ms_p50": _r(pct(longs, 50)),
        "long_press_ms_max": _r(max(longs) if longs else None),
        "unlit": unlit,
        "erases_boot": sum(o["n"] for o in erases if o["at_ns"] < game_from),
        "erases": sum(o["n"] for o in erases if o["at_ns"] >= game_from),
        "programs": sum(1 for o in ops if o["op"] == "P" and o["at_ns"] >= game_from),
        "pages": sum(o["n"] for o in ops if o["op"] == "P" and o["at_ns"] >= game_from),
        "long_in_erase": sum(1 for i, p in enumerate(presses) if kinds[i] == 2 and in_erase(p["down_ns"])),
        "long_held_in_erase": sum(1 for i, p in enumerate(presses) if kinds[i] == 2 and any(e["at_ns"] < p["up_ns"] and p["down_ns"] < e["at_ns"] + e["stall_ns"] for e in erases)),
        "taps_in_erase": sum(1 for i, p in enumerate(presses) if kinds[i] != 2 and (in_erase(p["down_ns"]) or in_erase(p["up_ns"]))),
        "bad_frames": sum(1 for f in frames if f["bad"]),
        "frames": len(frames),
        "cpu_busy_pct": round(100 * out["cycles_busy"] * 8 / out["end_ns"], 1),
        "emulator_wall_s": out.get("wall_s"),
    }
    if presses:
        checks = []  # the frame each next press finds (and the last frame)
        for t in [p["down_ns"] for p in presses[1:]] + [out["end_ns"]]:
            checks.append(bisect.bisect_left(starts, t) - 1)
        queries = [int(frames[j]["start_ns"] // 1e6) if j >= 0 else 0 for j in checks]
        ref_games = []
        refs = reference_rings(presses, queries, src, epoch, games=ref_games)
        if drive is not None:
            board = drive_games(drive)
            fig["games_finished"] = len(board)
            fig["record_equal"] = board == ref_games
            diff = [i for g, r in zip(board, ref_games) for i in range(max(len(g), len(r))) if g[i:i + 1] != r[i:i + 1]]
            fig["record_first_diff"] = diff[0] if diff else None
        misread = [i for i, (j, ref) in enumerate(zip(checks, refs)) if j < 0 or rgb_hex(frames[j], order) not in ref]
        fig["misread"] = len(misread)
        fig["misread_first"] = misread[:5]
        fig["final_ring_equal"] = bool(misread[-1:] != [len(checks) - 1])
        # stale: the frame the next press finds is right for when it was
        # drawn, but not what CPython shows just before that press (the
        # window ends 1 ms before it): the board stopped drawing (a hung
        # loop passes the check above), or a flash stall held back the
        # change the player should see by then.
        at = [int(t // 1e6) - 6 for t in [p["down_ns"] for p in presses[1:]] + [out["end_ns"]]]
        now = reference_rings(presses, at, src, epoch)
        stale = [i for i, (j, ref) in enumerate(zip(checks, now)) if j >= 0 and i not in misread and rgb_hex(frames[j], order) not in ref]
        fig["stale"] = len(stale)
        fig["stale_first"] = stale[:5]
        # every tap that changes the ring (the frame the board showed at
        # its release is not what CPython shows just before the next
        # press), lit whenever its first frame came, before the next press
        # or after it: the budget's press-to-light with no tap left out for
        # being late. (Not CPython's ring before the tap: that can be a
        # transient, e.g. the last frame of a long press's hold, which the
        # board had already drawn over.)
        lit = []
        for i, p in enumerate(presses):
            j = bisect.bisect_left(starts, p["up_ns"]) - 1
            if kinds[i] != 2 and (j < 0 or rgb_hex(frames[j], order) not in now[i]):
                f = first_frame_after(p["up_ns"])
                lit.append((f["start_ns"] - p["up_ns"]) / 1e6 if f else float("inf"))
        fig["changing_taps"] = len(lit)
        fig["changing_taps_ms_p50"] = _r(pct(lit, 50))
        fig["changing_taps_ms_p90"] = _r(pct(lit, 90))
        fig["changing_taps_ms_max"] = _r(max(lit) if lit else None)
        fig["changing_taps_over_25ms"] = sum(1 for x in lit if x > 25)
        fig["final_ring_equal"] = fig["final_ring_equal"] and stale[-1:] != [len(checks) - 1]
    return fig


def _r(x, nd=2):
    return None if x is None else round(x, nd)


def bench(uf2, frozen, titles, flashes, keep=None, src=ROOT):
    """{(title, flash): figures} for one image."""
    files = fs_files(frozen)
    res = {}
    work = Path(tempfile.mkdtemp(prefix="bk-chip-"))
    try:
        boot = run_chip(uf2, files, [], "typical", work, boot_only=True)
        res["boot"] = {"boot_ms": round(boot["first_light_ns"] / 1e6, 1) if boot["first_light_ns"] else None}
        if boot["first_light_ns"] is None:  # it never lit: ask its console why (USB attached only for this)
            why = run_chip(uf2, files, [], "typical", work, boot_only=True, usb_console=True)["usb"]
            res["boot"]["console"] = why[-600:]
            print("  %s: no light within the boot timeout; its console says:\n%s" % (uf2, why[-600:]), flush=True)
            return res
        again = run_chip(uf2, None, [], "typical", work, boot_only=True, image=(work / "fs-after.img").read_bytes())
        res["boot"]["boot_ms_second"] = round(again["first_light_ns"] / 1e6, 1) if again["first_light_ns"] else None
        print("  %s boot" % ("frozen" if frozen else "stock"), json.dumps(res["boot"]), flush=True)
        for title in titles:
            plan = gestures(title)
            for flash in flashes:
                out = run_chip(uf2, files, plan, flash, work)
                res["%s/%s" % (title, flash)] = figures(out, plan, src=src)
                if keep:
                    Path(keep).mkdir(parents=True, exist_ok=True)  # a directory named for the first time
                    shutil.copy(work / "out.json", Path(keep) / ("%s-%s-%s.json" % ("frozen" if frozen else "stock", title, flash)))
                print("  %s %s %s" % ("frozen" if frozen else "stock", title, flash), json.dumps(res["%s/%s" % (title, flash)]), flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return res


def heap_run(uf2, files, title, pad, work, src=ROOT):
    """One whole game under the heap probe with a pad of `pad` bytes:
    (did it finish as CPython's, {heap, boot, peak}, fault log)."""
    plan = gestures(title)
    out = run_chip(uf2, probe_files(files, pad), plan, "typical", work, marker=MARKER)
    fig = figures(out, plan, src=src)
    log = faults((Path(work) / "fs-after.img").read_bytes())
    ok = fig["misread"] == 0 and fig["final_ring_equal"] and not log
    return ok, heap_readings(out.get("ram_marks")), log


def heap(uf2, frozen, title, steps, work, src=ROOT):
    """The live heap of a whole game and the smallest heap that finishes
    it, to within the last step: a run on the whole heap first (the live
    peak), then one on the peak plus a quarter (rounded up to the KiB),
    then `steps` bisections of the bracket that leaves (the peak fails for
    sure: no room left to allocate; the whole heap finished)."""
    files = fs_files(frozen)
    ok, r, log = heap_run(uf2, files, title, 0, work, src)
    res = {"heap": r.get("heap"), "live_boot": r.get("boot"), "live_peak": r.get("peak"), "whole_heap_ok": ok}
    if not ok or "peak" not in r:
        res["fault"] = log[-300:]
        return res
    lo, hi = r["peak"], r["heap"]

    def attempt(size):
        ok_, _r, log_ = heap_run(uf2, files, title, r["heap"] - size, work, src)
        print("    %s heap %d B: %s" % (title, size, "finishes" if ok_ else "fails " + log_.strip().replace("\n", " | ")[-160:]), flush=True)
        return ok_

    first = -(-(r["peak"] * 5 // 4) // 1024) * 1024
    if first < hi:
        if attempt(first):
            hi = first
        else:
            lo = first
    for _ in range(steps):
        mid = (lo + hi) // 2 // 256 * 256
        if mid <= lo or mid >= hi:
            break
        if attempt(mid):
            hi = mid
        else:
            lo = mid
    res["smallest_heap_finishes"] = hi
    res["largest_heap_fails"] = lo
    return res


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--uf2", help="the stock MicroPython RPI_PICO UF2 (the bundle goes on its littlefs)")
    ap.add_argument("--frozen-uf2", help="a frozen Bloomkeeper UF2 (its file system starts empty)")
    ap.add_argument("--frozen-src", help="the source tree the frozen UF2 was built from, for the CPython reference: a directory or REPO@REV (default: this tree)")
    ap.add_argument("--titles", default="stalk,orchids")
    ap.add_argument("--flash", default="typical,max")
    ap.add_argument("--json", help="write the figures here")
    ap.add_argument("--keep", help="a directory for the runs' raw timelines")
    ap.add_argument("--heap", type=int, default=-1, metavar="STEPS", help="also the heap runs, with STEPS bisections of the smallest heap per title (-1: none)")
    a = ap.parse_args(argv)
    problems = []
    if node() is None:
        problems.append("node is not installed (the emulator is rp2040js, a Node package)")
    if not (CHIP / "node_modules" / "rp2040js").is_dir():
        problems.append("rp2040js is not installed: cd bench/chip && npm ci")
    if not BOOTROM.is_file():
        problems.append("no RP2040 bootrom at %s (docs/chip-bench.md: how to fetch it)" % BOOTROM)
    if not a.uf2 and not a.frozen_uf2:
        problems.append("no image: give --uf2 and/or --frozen-uf2 (docs/chip-bench.md)")
    for p in (a.uf2, a.frozen_uf2):
        if p and not Path(p).is_file():
            problems.append("no such UF2: %s" % p)
    if problems:
        for p in problems:
            print("chip-bench: " + p, file=sys.stderr)
        return 2
    titles = a.titles.split(",")
    flashes = [f for f in a.flash.split(",") if f]
    out = {}
    src_dir = tempfile.mkdtemp(prefix="bk-chip-src-")
    for build, uf2 in (("stock", a.uf2), ("frozen", a.frozen_uf2)):
        if not uf2:
            continue
        src = source_tree(a.frozen_src, src_dir) if build == "frozen" and a.frozen_src else ROOT
        out[build] = bench(uf2, build == "frozen", titles, flashes, a.keep, src) if flashes else {}
        if a.heap >= 0:
            work = Path(tempfile.mkdtemp(prefix="bk-chip-heap-"))
            try:
                for title in titles:
                    out[build]["heap/" + title] = h = heap(uf2, build == "frozen", title, a.heap, work, src)
                    print("  %s heap %s" % (build, title), json.dumps(h), flush=True)
            finally:
                shutil.rmtree(work, ignore_errors=True)
    report(out)
    if a.json:
        Path(a.json).write_text(json.dumps(out, indent=1) + "\n")
    return 0


def report(out):
    builds = list(out)
    keys = sorted({k for b in builds for k in out[b]})
    for k in keys:
        print("== %s" % k)
        fields = sorted({f for b in builds for f in out[b].get(k, {})})
        for f in fields:
            print("  %-24s" % f + "".join("%22s" % (out[b].get(k, {}).get(f, "-"),) for b in builds))


if __name__ == "__main__":
    sys.exit(main())

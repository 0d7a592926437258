"""The chip bench on CircuitPython: whole games on an emulated Pico running an
official CircuitPython UF2, the bundle on its CIRCUITPY drive.

What runs: the same emulator, gestures, WS2812 decoding and CPython reference
as the MicroPython chip bench (bench/bench_chip.py, docs/chip-bench.md), with:

* the image: an official CircuitPython UF2 for the Raspberry Pi Pico
  (``adafruit-circuitpython-raspberry_pi_pico-en_US-<version>.uf2``: 9.x and
  10.x; docs/chip-bench.md says where each comes from, by repository and
  commit);
* the drive: CIRCUITPY, a FAT12 volume in the flash's second MiB
  (bench/chip_fat.py). CircuitPython formats it itself: the bench boots the
  image once on an erased drive and keeps the volume it made
  (``formatted``), then copies ``make firmware``'s
  ``build/firmware-circuitpython/`` onto it (``boot.py``, ``code.py``,
  ``firmware/``, ``engine_lite/``, ``lib/neopixel.py``: as a user copies the
  bundle; as ``.mpy`` files when $BLOOMKEEPER_CP_MPY_CROSS names
  CircuitPython's own mpy-cross, host/build/bundle.py). Every run starts
  from that drive: the board's first boot with the bundle on it;
* the ring: CircuitPython sends NeoPixel frames through a PIO state machine
  fed by DMA, so the runner steps the PIO on the CPU's clock (run.mjs
  ``pio_step``) and decodes the bitstream from the data pin as before;
* the flash: every ``flash_range_erase``/``flash_range_program`` of the
  image (CIRCUITPY's 4 KB cache sector written back, ``microcontroller.nvm``
  writes) stalls the chip for the W25Q16JV's typical or maximum time, as in
  the MicroPython bench (CircuitPython runs them with interrupts off too).

Figures: the MicroPython bench's (bench_chip.figures), and on the heap runs
(``--heap``) CircuitPython's free heap (``gc.mem_free()``), read by a
``code.py`` the bench writes onto the drive in place of the bundle's
(PROBE: it runs the app exactly as the bundle's code.py does, and reads the
heap at its start, after setup and at each quiet spell).

Run:  .venv/bin/python -m bench.bench_chip_cp [--uf2 PATH ...]   (make chip-bench-cp)
"""

import argparse
import hashlib
import json
import shutil
import struct
import sys
import tempfile
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import bench_chip, chip_fat, chip_image  # noqa: E402
from bench.bench_chip import CACHE, ROOT  # noqa: E402

IMAGES = ("adafruit-circuitpython-raspberry_pi_pico-en_US-9.2.8.uf2", "adafruit-circuitpython-raspberry_pi_pico-en_US-10.0.0.uf2")
# The board's clock at reset: CircuitPython's supervisor.ticks_ms() is
# (ms since reset + 0x1FFF0000) % 2**29 (shared-bindings/supervisor/__init__.c:
# it starts 65,536 ms before its wrap, so code meets the wrap early), and
# firmware/hw_cp.py's ticks_ms carries it on past the wrap (2**30). The
# CPython reference runs on the same clock, so an animation's phase is the chip's.
CP_EPOCH_MS = 0x1FFF0000
FORMAT_MS = 6000  # a blank drive: CircuitPython's safe-mode wait, its format and first files are done by then
BOOT_TIMEOUT_MS = 20000  # first light of the bundle: CircuitPython compiles its .py source at boot (seconds)


def formatted(uf2, work):
    """CIRCUITPY as this image formats an erased drive (bytes), kept in
    CACHE beside the image (named by the image's sha256): a derived file,
    never committed."""
    sha = hashlib.sha256(Path(uf2).read_bytes()).hexdigest()[:16]
    keep = CACHE / ("circuitpy-%s.img" % sha)
    if keep.is_file():
        return keep.read_bytes()
    out = bench_chip.run_chip(uf2, None, [], "typical", work, boot_only=True, image=chip_fat.blank(), cp=True, boot_timeout_ms=FORMAT_MS)
    vol = (Path(work) / "fs-after.img").read_bytes()
    if vol[510:512] != b"\x55\xaa":
        raise RuntimeError("%s left no FAT volume on a blank drive in %d ms (%d flash operations)" % (uf2, FORMAT_MS, len(out["flash"])))
    keep.write_bytes(vol)
    return vol


def bundle_files():
    """{drive path: bytes} of the CircuitPython bundle (`make firmware`'s
    build/firmware-circuitpython/), as .mpy when $BLOOMKEEPER_CP_MPY_CROSS
    names CircuitPython's mpy-cross."""
    from host.build import bundle

    d = Path(tempfile.mkdtemp(prefix="bk-chip-cp-bundle-"))
    try:
        bundle.build("circuitpython", d / "b", ROOT, cp_cross=bundle.cp_mpy_cross())
        return chip_image.tree_files(d / "b")
    finally:
        shutil.rmtree(d, ignore_errors=True)


# The heap probe: code.py for the heap runs only (gc.mem_free() walks the
# heap's allocation table: milliseconds a call, so the timing runs never
# call it). It runs the app as the bundle's code.py does (firmware.main's
# main()), with two hooks looked up in firmware.main's globals, as the
# MicroPython probe's: run (a reading after a collection, before the loop
# starts) and tidy (a reading just before and just after the collection of
# each quiet spell; the lowest of each is kept). The readings stay in a
# bytearray that begins with MARKER, which the runner finds in the chip's
# RAM at the end (the USB stays unattached). The marker is written byte by
# byte, so no other copy of it (a literal's) is in RAM.
MARKER = "BKCPHP01"
PROBE = """import gc
import struct
mark = bytearray(32)
for i, c in enumerate((66, 75, 67, 80, 72, 80, 48, 49)):
    mark[i] = c
def put(o, v):
    struct.pack_into("<I", mark, o, v)
def low(o, v):
    if v < struct.unpack_from("<I", mark, o)[0]:
        put(o, v)
gc.collect()
put(8, gc.mem_free() + gc.mem_alloc())
put(12, gc.mem_free())
put(20, 0xFFFFFFFF)
put(24, 0xFFFFFFFF)
import firmware.main as m
t = m.tidy
def tidy(app):
    b = app.buttons
    due = b.edge >= 0 and m.ticks_diff(b.clock(), b.edge) >= m.QUIET_MS
    if due:
        low(24, gc.mem_free())
    t(app)
    if due:
        low(20, gc.mem_free())
r = m.run
def run(app, sleep_ms, step=m.loop_step):
    gc.collect()
    put(16, gc.mem_free())
    r(app, sleep_ms, step)
m.tidy = tidy
m.run = run
m.main()
"""


def heap_readings(marks):
    """{heap, free_start, free_setup, free_low, free_low_before} bytes from the probe's bytearray."""
    names = ("heap", "free_start", "free_setup", "free_low", "free_low_before")
    for h in marks or ():
        b = bytes.fromhex(h)
        vals = struct.unpack_from("<%dI" % min(len(names), len(b) // 4), b)
        if vals and vals[0]:
            return dict(zip(names, vals))  # a runner that returned fewer bytes: only the readings it returned
    return {}


def drive_files(image):
    """The files on the drive a run left (chip_fat.read), or None where
    mtools cannot read it (a run cut inside a sector's rewrite)."""
    try:
        return chip_fat.read(image)
    except RuntimeError:
        return None


def faults(files):
    """The fault log the board left on CIRCUITPY (App.recover), from its
    drive's files (drive_files), or '' (or that the drive was unreadable)."""
    if files is None:
        return "drive unreadable at the run's end"
    return b"".join(v for k, v in files.items() if k.endswith("/faults.txt")).decode("utf-8", "replace")


def why_dark(work):
    """What a board that never lit left on its drive: boot_out.txt (boot.py's
    output and CircuitPython's banner)."""
    try:
        files = chip_fat.read((Path(work) / "fs-after.img").read_bytes())
    except (OSError, RuntimeError) as e:
        return "drive unreadable: %s" % e
    return files.get("/boot_out.txt", b"").decode("utf-8", "replace")


def bench(uf2, titles, flashes, keep=None, heap=False, paces=((bench_chip.SHORT_MS, bench_chip.GAP_MS),)):
    """{"boot": ..., "TITLE/FLASH": figures, "heap/TITLE": readings} for one image."""
    name = Path(uf2).name
    res = {}
    work = Path(tempfile.mkdtemp(prefix="bk-chip-cp-"))
    try:
        drive = chip_fat.add(formatted(uf2, work), bundle_files())
        boot = bench_chip.run_chip(uf2, None, [], "typical", work, boot_only=True, image=drive, cp=True, boot_timeout_ms=BOOT_TIMEOUT_MS)
        res["boot"] = boot_figures(boot)
        if boot["first_light_ns"] is None:
            res["boot"]["boot_out"] = why_dark(work)[-600:]
            print("  %s: no light within %d ms; boot_out.txt says:\n%s" % (name, BOOT_TIMEOUT_MS, res["boot"]["boot_out"]), flush=True)
            return res
        again = bench_chip.run_chip(uf2, None, [], "typical", work, boot_only=True, image=(work / "fs-after.img").read_bytes(), cp=True, boot_timeout_ms=BOOT_TIMEOUT_MS)
        res["boot"].update({k + "_second": v for k, v in boot_figures(again).items()})
        if "max" in flashes:
            slow = bench_chip.run_chip(uf2, None, [], "max", work, boot_only=True, image=drive, cp=True, boot_timeout_ms=BOOT_TIMEOUT_MS)
            res["boot"]["boot_ms_max_flash"] = _ms(slow["first_light_ns"])
        print("  %s boot" % name, json.dumps(res["boot"]), flush=True)
        for title in titles:
            for tap, gap in paces:
                plan = bench_chip.gestures(title, tap)
                for flash in flashes:
                    key = "%s/%s" % (title, flash) if (tap, gap) == (bench_chip.SHORT_MS, bench_chip.GAP_MS) else "%s/%s/%d-%d" % (title, flash, tap, gap)
                    out = bench_chip.run_chip(uf2, None, plan, flash, work, image=drive, cp=True, boot_timeout_ms=BOOT_TIMEOUT_MS, gap_ms=gap)
                    if keep:
                        Path(keep).mkdir(parents=True, exist_ok=True)
                        shutil.copy(work / "out.json", Path(keep) / ("cp-%s-%s.json" % (name, key.replace("/", "-"))))
                        shutil.copy(work / "fs-after.img", Path(keep) / ("cp-%s-%s.img" % (name, key.replace("/", "-"))))
                    left = drive_files((work / "fs-after.img").read_bytes())
                    fig = res[key] = bench_chip.figures(out, plan, epoch=CP_EPOCH_MS, drive=left)
                    fig["tap_gap_ms"] = [tap, gap]
                    fig["faults"] = faults(left)[-300:]
                    print("  %s %s" % (name, key), json.dumps(fig), flush=True)
            if heap:
                res["heap/" + title] = h = heap_run(uf2, drive, title, work)
                if keep:
                    shutil.copy(work / "out.json", Path(keep) / ("cp-%s-%s-heap.json" % (name, title)))
                print("  %s heap %s" % (name, title), json.dumps(h), flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return res


def heap_run(uf2, drive, title, work):
    """One whole game, typical flash, under the heap probe (code.py replaced
    by PROBE): the heap readings, whether the board recorded the game
    CPython records (`finished`), and the fault log."""
    plan = bench_chip.gestures(title)
    probe = chip_fat.add(drive, {"/code.py": PROBE.encode()})
    out = bench_chip.run_chip(uf2, None, plan, "typical", work, image=probe, cp=True, boot_timeout_ms=BOOT_TIMEOUT_MS, marker=MARKER)
    left = drive_files((Path(work) / "fs-after.img").read_bytes())
    fig = bench_chip.figures(out, plan, epoch=CP_EPOCH_MS, drive=left)
    log = faults(left)
    r = heap_readings(out.get("ram_marks"))
    r["finished"] = bool(fig.get("record_equal") and not log)  # the game the board recorded is CPython's (the probe's collections make its lights later: `misread`)
    r["misread"] = fig.get("misread")
    r["fault"] = log[-300:]
    return r


def boot_figures(out):
    """A boot's figures: `boot_ms` (reset to the first bit of the first
    frame), `wait_end_ms` (the last change of the Pico's LED before it:
    the end of CircuitPython's safe-mode wait, which blinks it), their
    difference `after_wait_ms` (boot.py, code.py's imports, the app's
    setup and its first frame, with their flash work), and the sector
    erases before the first light."""
    light = out["first_light_ns"]
    fig = {"boot_ms": _ms(light), "erases_boot": sum(o["n"] for o in out["flash"] if o["op"] == "E" and (light is None or o["at_ns"] < light))}
    led = [t for _g, _l, t in out.get("pin_edges", ()) if light is not None and t < light]
    if led:
        fig["wait_end_ms"] = _ms(led[-1])
        fig["after_wait_ms"] = _ms(light - led[-1])
    return fig


def _ms(ns):
    return None if ns is None else round(ns / 1e6, 1)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--uf2", action="append", help="an official CircuitPython UF2 for the Raspberry Pi Pico (repeat for several; default: %s in the cache)" % " and ".join(IMAGES))
    ap.add_argument("--titles", default="stalk,orchids")
    ap.add_argument("--flash", default="typical,max", help="flash timings of the whole games (typical, max; empty: boot only)")
    ap.add_argument("--pace", default="%d/%d" % (bench_chip.SHORT_MS, bench_chip.GAP_MS), help="tap hold/gap ms of the whole games, comma-separated (e.g. 80/220,45/70); long presses are held %d ms" % bench_chip.LONG_MS)
    ap.add_argument("--heap", action="store_true", help="also a heap run per title (typical flash, the probe's code.py)")
    ap.add_argument("--json", help="write the figures here")
    ap.add_argument("--keep", help="a directory for the runs' raw timelines and the drives they left")
    ap.add_argument("--refigure", metavar="TIMELINE", help="only the figures of a kept timeline (--keep's cp-IMAGE-TITLE-FLASH.json; --titles: its title), no run")
    a = ap.parse_args(argv)
    if a.refigure:
        out = json.loads(Path(a.refigure).read_text())
        holds = [p["hold_ms"] for p in out["presses"] if p["hold_ms"] < bench_chip.LONG_MS]
        img = Path(a.refigure).with_suffix(".img")  # the drive the run left, kept beside its timeline
        drive = drive_files(img.read_bytes()) if img.is_file() else None
        fig = bench_chip.figures(out, bench_chip.gestures(a.titles.split(",")[0], holds[0] if holds else bench_chip.SHORT_MS), epoch=CP_EPOCH_MS, drive=drive)
        print(json.dumps(fig))
        return 0
    uf2s = a.uf2 or [str(CACHE / n) for n in IMAGES]
    problems = []
    if bench_chip.node() is None:
        problems.append("node is not installed (the emulator is rp2040js, a Node package)")
    if not (bench_chip.CHIP / "node_modules" / "rp2040js").is_dir():
        problems.append("rp2040js is not installed: cd bench/chip && npm ci")
    if not bench_chip.BOOTROM.is_file():
        problems.append("no RP2040 bootrom at %s (docs/chip-bench.md: how to fetch it)" % bench_chip.BOOTROM)
    if chip_fat.mtools():
        problems.append(chip_fat.mtools())
    problems += ["no such UF2: %s (docs/chip-bench.md: where to fetch it)" % p for p in uf2s if not Path(p).is_file()]
    if problems:
        for p in problems:
            print("chip-bench-cp: " + p, file=sys.stderr)
        return 2
    flashes = [f for f in a.flash.split(",") if f]
    try:
        paces = [tuple(int(x) for x in p.split("/")) for p in a.pace.split(",")]
        if not all(len(p) == 2 and min(p) > 0 for p in paces):
            raise ValueError
    except ValueError:
        print("chip-bench-cp: --pace wants TAP/GAP in ms, e.g. 80/220,45/70 (got %r)" % a.pace, file=sys.stderr)
        return 2
    out = {}
    for uf2 in uf2s:
        out[Path(uf2).name] = bench(uf2, a.titles.split(","), flashes, a.keep, a.heap, paces)
    bench_chip.report(out)
    if a.json:
        Path(a.json).write_text(json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The Pico W's image on the emulated RP2040: does it boot with no radio
answering, and how much heap does it leave.

What runs: a frozen ``RPI_PICO_W`` image (``make uf2 BOARD=pico_w``: the
board's bundle, the table server, its page and WiFi frozen in) in rp2040js,
with bench/chip/run.mjs as bench_chip runs the Pico's images (the same
bootrom, the same wiring on the same pins, USB unattached), on an empty
file system but for /boot.py, the probe (PROBE). The Pico W's file system
is smaller than the Pico's, its image larger: MicroPython v1.28.0's
``ports/rp2/boards/RPI_PICO_W/mpconfigboard.h`` gives it 848 KiB
(``MICROPY_HW_FLASH_STORAGE_BYTES``) at the end of the 2 MiB flash (offset
0x12C000), with the Pico's littlefs settings otherwise (bench/chip_image.py).
A littlefs image written at the Pico's offset (0xA0000) lands in the Pico W
image's code: the chip then runs off into RAM at once. The emulated chip has no
CYW43 behind the pins MicroPython's cyw43 driver talks to it over (a PIO
SPI on GP23-GP25 and GP29): nothing answers the driver there.

The probe runs first (a frozen build's main.py runs after boot.py) and never
returns: it boots the board as the image's main.py does
(firmware/pico_w.main), with firmware/pico_w.with_table wrapped so that the
heap is read around it. Readings (``gc.mem_free()`` after a collection,
bytes; the heap is MicroPython's whole GC heap), kept in a marked
bytearray that the runner finds in the chip's RAM at the end (as
bench_chip's heap probe: no output channel is needed):

* ``heap``: ``gc.mem_alloc() + gc.mem_free()``, the whole heap;
* ``free_boot``: at the start of boot.py: MicroPython started (its main.c
  has run ``cyw43_init``, which sets up the driver's state and talks to no
  chip), nothing of the board imported. The probe's own bytecode (its
  boot.py, compiled into the heap) is already in it;
* ``free_board``: the board built (firmware/main.py's load, the Store, the
  App, the link) and its first frame drawn, WiFi not yet asked: the moment
  before ``Wifi.up()``;
* ``free_wifi``: after ``with_table`` returned: WiFi up and the table
  server listening, or, if WiFi failed, the board's plain loop (``wifi``
  says which; the fault the board logged says why);
* ``free_loop``: after ``LOOP_TURNS`` turns of the loop that follows;
* ``stage``: how far it got: 1 boot.py ran, 2 the board was built, 3
  ``with_table`` returned, 4 the loop turned ``LOOP_TURNS`` times;
* ``radio``: what the access point interface says once ``with_table``
  returned: 1 + ``active()`` + 2 x ``isconnected()`` + 4 x (``status()`` +
  3) (0: not asked; ``radio_status``, ``radio_active`` decode it).
  MicroPython's ``active()`` is its own flag, set by ``active(True)``
  whatever the driver's bring-up returned (extmod/network_cyw43.c);
  ``status()`` is the access point's link (3: up), what firmware/wifi.py
  asks;
* ``ms_boot``, ``ms_board``, ``ms_wifi``: ``time.ticks_ms()`` (ms since
  reset) at the start of boot.py, before ``with_table`` and after it: the
  last minus the middle is what asking the radio cost the boot.

A stage that stays at 2 means the image hangs asking its radio to come up.

Run:  .venv/bin/python -m bench.bench_chip_pico_w --uf2 build/uf2/bloomkeeper-0.1.0-RPI_PICO_W.uf2
"""

import argparse
import json
import shutil
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import bench_chip, chip_image  # noqa: E402

FS_BYTES = 848 * 1024  # RPI_PICO_W's MICROPY_HW_FLASH_STORAGE_BYTES
FS_OFFSET = chip_image.FLASH_BYTES - FS_BYTES  # 0x12C000
MARKER = "BKPICOW1"
LOOP_TURNS = 200
BOOT_TIMEOUT_MS = 3000  # emulated ms to first light before the run stops (a boot that hangs)
END_MS = 1000  # emulated ms after first light
FIELDS = ("heap", "free_boot", "free_board", "free_wifi", "free_loop", "stage", "wifi", "radio", "ms_boot", "ms_board", "ms_wifi")
# Eight 16-bit fields after the marker (the runner reports 16 bytes): the
# heap figures in 16-byte units (the RP2040 build's GC block: exact).
PROBE = """import gc
gc.collect()
import struct
import time
mark = bytearray(48)
for i, c in enumerate((66, 75, 80, 73, 67, 79, 87, 49)):
    mark[i] = c
    mark[24 + i] = c
def put(k, v):
    struct.pack_into("<H", mark, 8 + 2 * k + (8 if k > 7 else 0), v)
put(8, time.ticks_ms())
put(0, (gc.mem_alloc() + gc.mem_free()) // 16)
put(1, gc.mem_free() // 16)
put(5, 1)
import firmware.pico_w as w
wt = w.with_table
def with_table(app):
    gc.collect()
    put(2, gc.mem_free() // 16)
    put(5, 2)
    put(9, time.ticks_ms())
    turn = wt(app)
    put(10, time.ticks_ms())
    gc.collect()
    put(3, gc.mem_free() // 16)
    put(6, 0 if turn is w.board.loop_step else 1)
    import network
    nic = network.WLAN(network.AP_IF)
    put(7, 1 + nic.active() + 2 * nic.isconnected() + 4 * (nic.status() + 3))
    put(5, 3)
    n = [0]
    def counted(app, sleep_ms):
        turn(app, sleep_ms)
        n[0] += 1
        if n[0] == %d:
            gc.collect()
            put(4, gc.mem_free() // 16)
            put(5, 4)
    return counted
w.with_table = with_table
w.main()
""" % LOOP_TURNS


def readings(marks):
    """{field: value} from the probe's bytearray: the copy of the marker
    with a heap after it, then the one 24 bytes on (the times)."""
    marks = list(marks or ())
    for i, h in enumerate(marks[:-1]):
        v = struct.unpack_from("<8H", bytes.fromhex(h)) + struct.unpack_from("<3H", bytes.fromhex(marks[i + 1]))
        if v[0]:
            out = dict(zip(FIELDS, v))
            for k in FIELDS[:5]:
                out[k] *= 16
            return out
    return {}


def fs_image(files):
    """The Pico W's file-system area with `files` in it (chip_image's
    littlefs settings, FS_BYTES of blocks)."""
    from littlefs import LittleFS

    fs = LittleFS(block_size=chip_image.BLOCK, block_count=FS_BYTES // chip_image.BLOCK, prog_size=chip_image.PROG,
                  read_size=chip_image.READ, lookahead_size=chip_image.LOOKAHEAD, disk_version=chip_image.DISK_VERSION)
    for path, data in files.items():
        with fs.open(path.strip("/"), "wb") as f:
            f.write(data)
    return bytes(fs.context.buffer)


def run_chip(uf2, files, work, end_ms):
    """One boot of `uf2` with `files` on its file system: run.mjs's answer
    (first light, RAM marks, the file-system area after the run)."""
    img = work / "fs.img"
    img.write_bytes(fs_image(files))
    erase_ns, page_ns = bench_chip.FLASH["typical"]
    job = {"uf2": str(Path(uf2).resolve()), "bootrom": str(bench_chip.BOOTROM), "fs_image": str(img), "fs_offset": FS_OFFSET,
           "fs_size": FS_BYTES, "fs_out": str(work / "fs-after.img"), "pixel_pin": int(bench_chip.pico_spec()["pixel_pin"].lstrip("GP")),
           "buttons": [], "gestures": [], "settle_ms": 0, "end_ms": end_ms, "boot_timeout_ms": BOOT_TIMEOUT_MS,
           "erase_ns": erase_ns, "page_ns": page_ns, "uart": False, "usb_console": False, "long_into_erase": 0, "ram_marker": MARKER}
    (work / "job.json").write_text(json.dumps(job))
    subprocess.run(["nice", bench_chip.node(), str(bench_chip.CHIP / "run.mjs"), str(work / "job.json"), str(work / "out.json")],
                   cwd=bench_chip.CHIP, check=True)
    return json.loads((work / "out.json").read_text())


def faults(image):
    """The fault log the board left on its file system, or ''."""
    from littlefs import LittleFS, UserContext

    ctx = UserContext(len(image))
    ctx.buffer[:] = image
    fs = LittleFS(ctx, block_size=chip_image.BLOCK, block_count=FS_BYTES // chip_image.BLOCK, prog_size=chip_image.PROG,
                  read_size=chip_image.READ, lookahead_size=chip_image.LOOKAHEAD, disk_version=chip_image.DISK_VERSION)
    out = []
    for top, _dirs, names in fs.walk("/"):
        for n in names:
            if n == "faults.txt":
                with fs.open(top.rstrip("/") + "/" + n, "rb") as f:
                    out.append(f.read().decode("utf-8", "replace"))
    return "".join(out)


def measure(uf2, work=None):
    """One boot of the Pico W image with the probe: its readings, first
    light (ms from reset, or None), and the fault log the board left."""
    work = Path(work or tempfile.mkdtemp(prefix="bk-chip-picow-"))
    work.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    out = run_chip(uf2, {"/boot.py": PROBE.encode()}, work, END_MS)
    r = readings(out.get("ram_marks"))
    if r.get("ms_wifi"):
        r["wifi_bringup_ms"] = r["ms_wifi"] - r["ms_board"]
    if r.get("radio"):
        r["radio_active"] = bool((r["radio"] - 1) & 1)
        r["radio_status"] = (r["radio"] - 1) // 4 - 3
    r["first_light_ms"] = None if out.get("first_light_ns") is None else round(out["first_light_ns"] / 1e6, 1)
    r["emulated_ms"] = round(out["end_ns"] / 1e6, 1)
    r["fault_log"] = faults((work / "fs-after.img").read_bytes()).strip()
    r["host_s"] = round(time.monotonic() - t0, 1)
    return r


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--uf2", required=True, help="the frozen RPI_PICO_W image (make uf2 BOARD=pico_w)")
    ap.add_argument("--keep", help="keep the run's files in this directory")
    args = ap.parse_args(argv)
    if not bench_chip.node() or not bench_chip.BOOTROM.is_file():
        sys.stderr.write("bench_chip_pico_w: needs node and %s (docs/chip-bench.md)\n" % bench_chip.BOOTROM)
        return 2
    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="bk-chip-picow-"))
    try:
        r = measure(args.uf2, work)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    print(json.dumps(r, indent=1))
    if r.get("heap"):
        print("heap %d B; free at boot %d B (%.1f%%), board built %s, after WiFi %s, after %d turns %s; stage %d, wifi %s"
              % (r["heap"], r["free_boot"], 100.0 * r["free_boot"] / r["heap"], r["free_board"] or "-", r["free_wifi"] or "-",
                 LOOP_TURNS, r["free_loop"] or "-", r["stage"], "up" if r["wifi"] else "off"))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The Pico's CIRCUITPY drive as CircuitPython makes it, as a file: a FAT12 volume.

Why a module of its own: the chip bench (bench/bench_chip.py) writes it into
the emulated flash of a CircuitPython run and reads back what the board
left on it. Read from adafruit/circuitpython's raspberrypi port (9.x, 10.x):
the drive is the flash from offset 1 MiB (``CIRCUITPY_CIRCUITPY_DRIVE_START_ADDR``
for a 2 MiB board) to the end, 1 MiB, 512-byte sectors, with no partition
table: a bare FAT12 volume (supervisor/shared/filesystem.c formats it with
oofatfs ``f_mkfs(FM_FAT | FM_SFD)`` when it finds none).

The volume itself is never made here: the bench boots CircuitPython on a
blank (erased) drive once and keeps what CircuitPython formatted, with the
files it puts there (boot_out.txt, code.py, lib/, the hidden files for
macOS). The bundle is then copied onto that volume, as a user copies
``build/firmware-circuitpython/`` onto CIRCUITPY, by GNU mtools (the Debian
package ``mtools``: ``mcopy``, ``mmd``), which writes a FAT volume in a
file with no mount and no root. Only the chip bench needs it.
"""

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

FLASH_BYTES = 2 * 1024 * 1024  # the Pico's W25Q16JV
FS_OFFSET = 0x100000  # CIRCUITPY: the second MiB of the flash
FS_BYTES = FLASH_BYTES - FS_OFFSET
SECTOR = 512
ENV = dict(os.environ, MTOOLS_SKIP_CHECK="1", MTOOLS_NO_VFAT="0")


def mtools():
    """None when mtools is installed, else the line that says what to install."""
    if shutil.which("mcopy") and shutil.which("mmd"):
        return None
    return "mtools is not installed (the chip bench copies the bundle onto CIRCUITPY with it): apt-get install mtools"


def blank():
    """The drive as a freshly erased flash holds it: every byte 0xFF, no volume."""
    return b"\xff" * FS_BYTES


def _mt(*args):
    p = subprocess.run(list(args), env=ENV, capture_output=True, text=True)
    if p.returncode:
        raise RuntimeError("%s: %s" % (" ".join(args[:2]), (p.stderr or p.stdout).strip()))
    return p.stdout


def add(image, files):
    """`image` (the drive's bytes, a FAT volume) with `files` ({path on the
    drive: bytes}) copied onto it, folders made as the paths need them,
    files already there overwritten."""
    if len(image) != FS_BYTES:
        raise ValueError("a CIRCUITPY image is %d bytes, not %d" % (FS_BYTES, len(image)))
    with tempfile.TemporaryDirectory(prefix="bk-chip-fat-") as tmp:
        img = Path(tmp) / "drive.img"
        img.write_bytes(image)
        have = set(listing(img))
        for path in sorted(files):
            parts = path.strip("/").split("/")
            for i in range(1, len(parts)):
                d = "/".join(parts[:i])
                if d not in have:
                    _mt("mmd", "-i", str(img), "::/" + d)
                    have.add(d)
            src = Path(tmp) / "f"
            src.write_bytes(files[path])
            _mt("mcopy", "-o", "-i", str(img), str(src), "::/" + "/".join(parts))
        return img.read_bytes()


def listing(img):
    """The folders and files of a volume in a file, as drive paths without the leading /."""
    out = _mt("mdir", "-/", "-b", "-i", str(img), "::/")
    return [line.strip()[3:].rstrip("/") for line in out.splitlines() if line.strip().startswith("::/")]


def read(image):
    """The files of a drive's bytes: {path on the drive: bytes}."""
    with tempfile.TemporaryDirectory(prefix="bk-chip-fat-") as tmp:
        img = Path(tmp) / "drive.img"
        img.write_bytes(image)
        dst = Path(tmp) / "out"
        dst.mkdir()
        _mt("mcopy", "-s", "-n", "-i", str(img), "::/", str(dst))
        return {"/" + p.relative_to(dst).as_posix(): p.read_bytes() for p in sorted(dst.rglob("*")) if p.is_file()}

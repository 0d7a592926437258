"""Reading a UF2 file before it goes onto a board in BOOTSEL mode
(`bloomkeeper flash --uf2`), and finding the newest one `make uf2` built.

UF2 (Microsoft's USB Flashing Format, github.com/microsoft/uf2) is a
sequence of 512-byte blocks, each carrying up to 476 bytes of payload and
the flash address it goes to, framed by three magic numbers. The RP2040's
boot ROM (its RPI-RP2 drive) writes a block only if it has the family-id
flag with the RP2040 family (0xE48BFF56), is not flagged "not main flash"
and carries exactly 256 bytes; it silently IGNORES every other block. So a
file that is not an RP2040 UF2 (a zip, a truncated download, an RP2350
image, a UF2 for another chip) "copies" without an error and the board
just stays in BOOTSEL mode. That is why the file is checked here first,
with the boot ROM's own rules, and refused in one line naming what is
wrong: the board is then never touched.

The checks, beyond the boot ROM's: every block has the same block count
and the block numbers cover 0..count-1 exactly once (a cut or spliced file
fails here, where the boot ROM would wait forever for the missing blocks),
and every payload lands in the RP2040's flash window, page-aligned.
"""

import os
import re
from pathlib import Path

BLOCK = 512
MAGIC_START0 = 0x0A324655  # "UF2\n"
MAGIC_START1 = 0x9E5D5157
MAGIC_END = 0x0AB16F30
FLAG_NOT_MAIN_FLASH = 0x00000001
FLAG_FILE_CONTAINER = 0x00001000
FLAG_FAMILY_ID = 0x00002000
FLAG_MD5 = 0x00004000
FLAG_EXTENSION_TAGS = 0x00008000
PAYLOAD_MAX = 476  # 512 - 32 bytes of header - 4 of the final magic

RP2040_FAMILY = 0xE48BFF56
FAMILIES = {  # the ones a Pico user meets; others are named by their number
    RP2040_FAMILY: "RP2040",
    0xE48BFF57: "RP2 absolute",
    0xE48BFF58: "RP2 data",
    0xE48BFF59: "RP2350 (Arm)",
    0xE48BFF5A: "RP2350 (RISC-V)",
    0xE48BFF5B: "RP2350 (Arm, non-secure)",
    0x68ED2B88: "SAMD21",
    0x55114460: "SAMD51",
    0xADA52840: "nRF52840",
    0x1C5F21B0: "ESP32",
    0xC47E5767: "ESP32-S3",
}
# The RP2040's boot ROM: 256-byte pages into the flash XIP window (16 MB at most).
RP2040_PAGE = 256
RP2040_FLASH = (0x10000000, 0x11000000)
MAX_FILE = (RP2040_FLASH[1] - RP2040_FLASH[0]) // RP2040_PAGE * BLOCK  # a whole 16 MB flash: 32 MB of UF2

# Where MicroPython's littlefs file system (the board's saved games, /bk)
# begins in flash, per MICROPY_BOARD: the top MICROPY_HW_FLASH_STORAGE_BYTES
# of the board's flash (ports/rp2: 1408 KB of the Pico's 2 MB, 848 KB of the
# Pico W's). A UF2 that writes at or above it would overwrite the saved games.
FS_START = {
    "RPI_PICO": 0x10000000 + 2 * 1024 * 1024 - 1408 * 1024,
    "RPI_PICO_W": 0x10000000 + 2 * 1024 * 1024 - 848 * 1024,
}

# What `make uf2` names its output: bloomkeeper-<version>-<MICROPY_BOARD>.uf2
NAME = re.compile(r"^bloomkeeper-(?P<version>[0-9A-Za-z.+!_]+?)-(?P<board>[A-Z0-9_]+)\.uf2$")
UF2_DIR = "uf2"  # below the build directory


class Uf2Error(ValueError):
    """The file is not a UF2 the RP2040's boot ROM would write whole (one line)."""


class Uf2Image:
    """What a checked UF2 holds: its blocks, the flash range they cover."""

    def __init__(self, blocks, start, end, payload):
        self.blocks = blocks
        self.start = start  # lowest flash address written
        self.end = end  # one past the highest
        self.payload = payload  # bytes of payload in all

    def describe(self):
        return "%d blocks, %d bytes for RP2040 flash 0x%08x-0x%08x" % (self.blocks, self.payload, self.start, self.end)


def _u32(data, off):
    return int.from_bytes(data[off:off + 4], "little")


def family_name(fid):
    return FAMILIES.get(fid, "0x%08x" % fid)


def parse(data, what="the file"):
    """Check `data` (a whole UF2) as the RP2040 boot ROM reads it; an Uf2Image, or Uf2Error."""
    n = len(data)
    if n == 0:
        raise Uf2Error("%s is empty: not a UF2 firmware image" % what)
    if n % BLOCK:
        raise Uf2Error("%s is not a UF2 firmware image: %d bytes is not a whole number of 512-byte UF2 blocks "
                       "(a cut download?)" % (what, n))
    count = None
    seen = bytearray()
    start, end, payload = None, None, 0
    for i in range(n // BLOCK):
        b = data[i * BLOCK:(i + 1) * BLOCK]
        if _u32(b, 0) != MAGIC_START0 or _u32(b, 4) != MAGIC_START1 or _u32(b, 508) != MAGIC_END:
            raise Uf2Error("%s is not a UF2 firmware image: block %d (byte %d) lacks the UF2 magic numbers"
                           % (what, i, i * BLOCK))
        flags, addr, size, no, total, fid = (_u32(b, 8), _u32(b, 12), _u32(b, 16), _u32(b, 20), _u32(b, 24), _u32(b, 28))
        if not flags & FLAG_FAMILY_ID:
            raise Uf2Error("%s: UF2 block %d has no family id: the RP2040's boot ROM ignores it (not an RP2040 image)"
                           % (what, i))
        if fid != RP2040_FAMILY:
            raise Uf2Error("%s is a UF2 for %s, not for the RP2040 (family 0x%08x): a Pico would ignore it"
                           % (what, family_name(fid), RP2040_FAMILY))
        if flags & (FLAG_NOT_MAIN_FLASH | FLAG_FILE_CONTAINER):
            raise Uf2Error("%s: UF2 block %d is not for the main flash (flags 0x%08x): not a firmware image" % (what, i, flags))
        if size != RP2040_PAGE:
            raise Uf2Error("%s: UF2 block %d carries %d bytes; the RP2040's boot ROM writes only %d-byte pages"
                           % (what, i, size, RP2040_PAGE))
        if not (RP2040_FLASH[0] <= addr and addr + size <= RP2040_FLASH[1]) or addr % RP2040_PAGE:
            raise Uf2Error("%s: UF2 block %d goes to 0x%08x, outside the RP2040's flash (0x%08x-0x%08x, 256-byte pages)"
                           % (what, i, addr, RP2040_FLASH[0], RP2040_FLASH[1]))
        if count is None:
            count = total
            if count == 0 or count > n // BLOCK:
                raise Uf2Error("%s: the UF2 says it has %d blocks but holds %d: a cut or damaged file"
                               % (what, count, n // BLOCK))
            seen = bytearray(count)
        elif total != count:
            raise Uf2Error("%s: UF2 block %d says the image has %d blocks, block 0 says %d: two images spliced?"
                           % (what, i, total, count))
        if no >= count or seen[no]:
            raise Uf2Error("%s: UF2 block %d has block number %d %s" % (
                what, i, no, "of %d" % count if no >= count else "twice: a damaged file"))
        seen[no] = 1
        start = addr if start is None else min(start, addr)
        end = addr + size if end is None else max(end, addr + size)
        payload += size
    if n // BLOCK != count:
        raise Uf2Error("%s: the UF2 says it has %d blocks but holds %d: a cut or damaged file" % (what, count, n // BLOCK))
    return Uf2Image(count, start, end, payload)


def read(path):
    """The bytes of the UF2 at `path` and its Uf2Image, or Uf2Error (one line).
    The size is checked before anything is read, so a wrong path (a disk
    image, a video) costs nothing."""
    p = Path(path)
    try:
        if p.is_dir():
            raise Uf2Error("%s is a directory, not a UF2 file" % path)
        size = p.stat().st_size
        if size > MAX_FILE:
            raise Uf2Error("%s is %d bytes, more than a UF2 for the RP2040's largest flash (%d): not a Pico firmware image"
                           % (path, size, MAX_FILE))
        data = p.read_bytes()
    except Uf2Error:
        raise
    except OSError as err:
        raise Uf2Error("cannot read %s: %s" % (path, err.strerror or err))
    return data, parse(data, str(path))


def check_keeps_files(image, board, what="the file"):
    """Uf2Error when the image would write over `board`'s file system (its
    saved games); boards whose layout is not known here are not checked."""
    start = FS_START.get(board)
    if start is not None and image.end > start:
        raise Uf2Error("%s writes flash up to 0x%08x, into the %s's file system (from 0x%08x) where the saved games are: "
                       "not flashed" % (what, image.end, board, start))


def name_parts(name):
    """(version, MICROPY_BOARD) from a `make uf2` file name, else None."""
    m = NAME.match(os.path.basename(os.fspath(name)))
    return (m.group("version"), m.group("board")) if m else None


def built(build_dirs, board=None):
    """Every `make uf2` output under the build directories' uf2/ folders
    (for `board`, a MICROPY_BOARD name, if given), newest first."""
    found = []
    for d in build_dirs:
        folder = Path(d) / UF2_DIR
        try:
            entries = list(folder.iterdir())
        except OSError:
            continue
        for f in entries:
            parts = name_parts(f.name)
            if parts and (board is None or parts[1] == board) and f.is_file():
                found.append((f.stat().st_mtime, f.name, f))
    found.sort(key=lambda t: (t[0], t[1]), reverse=True)
    seen, out = set(), []
    for _, _, f in found:
        key = f.resolve()
        if key not in seen:
            seen.add(key)
            out.append(f)
    return out

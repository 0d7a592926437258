"""A Pico in BOOTSEL mode, as the host sees it (`bloomkeeper flash --uf2`).

Held down at power-up (or asked by `machine.bootloader()`), the Pico's
BOOTSEL button starts the RP2040's boot ROM instead of the firmware. The
ROM shows up as a small USB drive, RPI-RP2, holding INDEX.HTM and
INFO_UF2.TXT, whose text the ROM writes as (pico-bootrom,
bootrom/info_uf2.txt):

    UF2 Bootloader v3.0
    Model: Raspberry Pi RP2
    Board-ID: RPI-RP2

A UF2 file copied onto that drive is written to flash and the board
restarts into it. The drive is recognised by that Board-ID line, never by
the volume's name alone (any USB stick can be called RPI-RP2).

Where drives are looked for: on Linux the mount table (/proc/mounts: FAT
file systems only, so network and system mounts are never touched), on
macOS /Volumes, on Windows the drive letters. A system that does not mount
removable drives by itself (a server, some minimal desktops) leaves the
drive unmounted: Linux still shows it in /dev/disk/by-label/RPI-RP2, which
`unmounted_device` reports so the user can be told how to mount it.

picotool (Raspberry Pi's USB tool, when it is on PATH) talks to the boot
ROM's other USB interface directly and needs no drive: `picotool load -x`.
"""

import os
import shutil
import string
import subprocess
import sys
from pathlib import Path

INFO_FILE = "INFO_UF2.TXT"
BOARD_ID = "RPI-RP2"  # the RP2040 boot ROM's Board-ID
MOUNTS = "/proc/mounts"
VOLUMES = "/Volumes"
BY_LABEL = "/dev/disk/by-label"
FAT_TYPES = ("vfat", "msdos", "fat", "fuseblk", "exfat")
INFO_MAX = 4096  # INFO_UF2.TXT is ~60 bytes; a larger file is not the boot ROM's


def info_fields(text):
    """The `Key: value` lines of an INFO_UF2.TXT (LF or CRLF) as a dict."""
    out = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip():
            out.setdefault(key.strip(), value.strip())
    return out


def board_id(drive):
    """The Board-ID a mounted UF2 drive names in its INFO_UF2.TXT, or None."""
    try:
        with open(os.path.join(drive, INFO_FILE), "rb") as f:
            raw = f.read(INFO_MAX + 1)
    except OSError:
        return None
    if len(raw) > INFO_MAX:
        return None
    return info_fields(raw.decode("ascii", "replace")).get("Board-ID")


def is_bootsel_drive(drive):
    return board_id(drive) == BOARD_ID


def _unescape(field):
    """/proc/mounts writes space, tab, newline and backslash as octal escapes (\\040)."""
    out, i = [], 0
    while i < len(field):
        if field[i] == "\\" and len(field[i + 1:i + 4]) == 3 and field[i + 1:i + 4].isdigit():
            out.append(chr(int(field[i + 1:i + 4], 8)))
            i += 4
        else:
            out.append(field[i])
            i += 1
    return "".join(out)


def linux_mounts(mounts=None):
    """The mount points of FAT file systems in a /proc/mounts-style table."""
    try:
        with open(mounts or MOUNTS) as f:
            lines = f.read().splitlines()
    except OSError:
        return []
    out = []
    for line in lines:
        parts = line.split()
        if len(parts) >= 3 and parts[2] in FAT_TYPES:
            out.append(_unescape(parts[1]))
    return out


def candidates(platform=None, mounts=None, volumes=None):
    """Every place a UF2 drive may be mounted on this system."""
    platform = platform or sys.platform
    if platform.startswith("win"):
        return ["%s:\\" % c for c in string.ascii_uppercase[2:]]  # C: to Z:
    if platform == "darwin":
        try:
            return sorted(str(p) for p in Path(volumes or VOLUMES).iterdir())
        except OSError:
            return []
    return linux_mounts(mounts)


def find_drives(**where):
    """The mounted RPI-RP2 drives (paths), each checked by its INFO_UF2.TXT."""
    return [d for d in candidates(**where) if is_bootsel_drive(d)]


def unmounted_device(by_label=None):
    """Linux: the RPI-RP2 block device when it is there but not mounted, else None."""
    dev = os.path.join(by_label or BY_LABEL, BOARD_ID)
    return dev if os.path.exists(dev) else None


def copy_uf2(data, name, drive):
    """Write the UF2 bytes onto the drive as `name`. The boot ROM writes each
    block to flash as it arrives and restarts the board after the last one,
    so the drive can vanish before the file is closed: an error after every
    byte was written, with the drive gone, is the board restarting, not a
    failure. Returns the path written."""
    path = os.path.join(drive, name)
    written = 0
    try:
        with open(path, "wb") as f:
            f.write(data)
            written = len(data)
            f.flush()
            os.fsync(f.fileno())
    except OSError:
        if written == len(data) and not is_bootsel_drive(drive):
            return path
        raise
    return path


# picotool's words when it reaches no board: none in BOOTSEL mode (1.x "No
# accessible RP2040 devices", 2.x "No accessible RP-series devices ..."), or
# a picotool built without USB support (as a pico-sdk build may fetch and
# build it, for its UF2 conversion only), which has no `load` at all.
PICOTOOL_NO_DEVICE = ("No accessible RP", "without USB support")


def picotool():
    """picotool's path when it is installed, else None."""
    return shutil.which("picotool")


def picotool_load(exe, uf2_path, timeout=120):
    """`picotool load -x FILE`: write the UF2 into a BOOTSEL board over USB and
    start it. (True, output) when it did; (False, output) when it reached no
    BOOTSEL board (none there, or a picotool without USB); (None, output)
    for any other failure."""
    try:
        p = subprocess.run([exe, "load", "-x", os.fspath(uf2_path)], capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as err:
        return None, str(err)
    out = (p.stdout or "") + (p.stderr or "")
    if p.returncode == 0:
        return True, out
    if any(s in out for s in PICOTOOL_NO_DEVICE):
        return False, out
    return None, out

"""The UF2 check `bloomkeeper flash --uf2` runs before it touches a board
(host/build/uf2_file.py), and the BOOTSEL drive finder (host/bootsel.py).

The UF2 bytes come from tests/kit/uf2_writer.py, a writer after Microsoft's
specification written apart from the reader. The drives are temporary
directories laid out as the RP2040's boot ROM shows its RPI-RP2 drive:
INDEX.HTM and INFO_UF2.TXT with the ROM's text (pico-bootrom,
bootrom/info_uf2.txt, LF line ends; CRLF is accepted too), found through a
mount table written as Linux's /proc/mounts writes it.
"""

import os
import shutil
import struct
import subprocess
from pathlib import Path

import pytest

from host import bootsel
from host.build import uf2_file
from tests.kit import uf2_writer

# The RP2040 boot ROM's INFO_UF2.TXT, byte for byte (raspberrypi/pico-bootrom, bootrom/info_uf2.txt)
ROM_INFO = b"UF2 Bootloader v3.0\nModel: Raspberry Pi RP2\nBoard-ID: RPI-RP2\n"
ROM_INDEX = (b"<html><head><meta http-equiv=\"refresh\" content=\"0;URL='https://raspberrypi.com/device/RP2?version="
             b"aabbccddeeff'\"/></head><body>Redirecting to <a href='https://raspberrypi.com/device/RP2?version="
             b"aabbccddeeff'>raspberrypi.com</a></body></html>")


def rom_drive(path, info=ROM_INFO):
    """A directory laid out as the RP2040 boot ROM's RPI-RP2 drive."""
    path.mkdir(parents=True, exist_ok=True)
    (path / "INDEX.HTM").write_bytes(ROM_INDEX)
    if info is not None:
        (path / "INFO_UF2.TXT").write_bytes(info)
    return path


IMAGE = uf2_writer.firmware_like(5000)
GOOD = uf2_writer.uf2(IMAGE)


def test_a_firmware_uf2_reads_as_the_boot_rom_would_write_it():
    img = uf2_file.parse(GOOD)
    assert img.blocks == 20 and img.payload == 20 * 256
    assert (img.start, img.end) == (0x10000000, 0x10000000 + 20 * 256)
    # block order does not matter to the ROM (each block names its address)
    blocks = uf2_writer.blocks(IMAGE)
    assert uf2_file.parse(b"".join(reversed(blocks))).blocks == 20


def _patched(data, block, word, value):
    b = bytearray(data)
    struct.pack_into("<I", b, block * 512 + word * 4, value)
    return bytes(b)


BAD = {
    "empty": (b"", "is empty"),
    "cut mid-block": (GOOD[:-100], "not a whole number of 512-byte UF2 blocks"),
    "cut at a block": (GOOD[:512 * 7], "says it has 20 blocks but holds 7"),
    "a zip file": (b"PK\x03\x04" + bytes(1020), "lacks the UF2 magic numbers"),
    "bad end magic": (_patched(GOOD, 3, 127, 0), "block 3 (byte 1536) lacks the UF2 magic numbers"),
    "RP2350 image": (uf2_writer.uf2(IMAGE, family=0xE48BFF59), "UF2 for RP2350 (Arm), not for the RP2040"),
    "SAMD21 image": (uf2_writer.uf2(IMAGE, family=0x68ED2B88), "UF2 for SAMD21"),
    "no family flag": (uf2_writer.uf2(IMAGE, flags=0), "has no family id"),
    "not main flash": (uf2_writer.uf2(IMAGE, flags=0x2001), "not for the main flash"),
    "476-byte payloads": (uf2_writer.uf2(IMAGE, payload=476), "carries 476 bytes"),
    "RAM address": (uf2_writer.uf2(IMAGE, base=0x20000000), "outside the RP2040's flash"),
    "unaligned": (uf2_writer.uf2(IMAGE, base=0x10000080), "outside the RP2040's flash"),
    "block twice": (GOOD[:512 * 19] + GOOD[:512], "block number 0 twice"),
    "spliced": (GOOD[:512 * 10] + uf2_writer.uf2(IMAGE + IMAGE)[512 * 10:512 * 20], "says the image has 40 blocks, block 0 says 20"),
    "block number past the count": (_patched(GOOD, 5, 5, 25), "block number 25 of 20"),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_every_file_the_rom_would_not_write_whole_is_one_line(name):
    data, words = BAD[name]
    with pytest.raises(uf2_file.Uf2Error) as e:
        uf2_file.parse(data, "x.uf2")
    msg = str(e.value)
    assert words in msg and "\n" not in msg and msg.startswith("x.uf2")


def test_read_checks_the_size_before_reading(tmp_path):
    huge = tmp_path / "disk.img"
    with open(huge, "wb") as f:
        f.truncate(uf2_file.MAX_FILE + 512)  # sparse: nothing is read, nothing is written
    with pytest.raises(uf2_file.Uf2Error, match="more than a UF2 for the RP2040's largest flash"):
        uf2_file.read(huge)
    with pytest.raises(uf2_file.Uf2Error, match="cannot read .*missing.uf2"):
        uf2_file.read(tmp_path / "missing.uf2")
    with pytest.raises(uf2_file.Uf2Error, match="is a directory"):
        uf2_file.read(tmp_path)
    ok = tmp_path / "fw.uf2"
    ok.write_bytes(GOOD)
    data, img = uf2_file.read(ok)
    assert data == GOOD and img.blocks == 20


def test_make_uf2_names_and_the_newest_built_one(tmp_path):
    assert uf2_file.name_parts("bloomkeeper-0.1.0-RPI_PICO.uf2") == ("0.1.0", "RPI_PICO")
    assert uf2_file.name_parts("/x/bloomkeeper-0.2.0.dev3+g1a2b-RPI_PICO_W.uf2") == ("0.2.0.dev3+g1a2b", "RPI_PICO_W")
    for bad in ("firmware.uf2", "bloomkeeper-0.1.0.uf2", "bloomkeeper-0.1.0-RPI_PICO.uf2.part", "RPI_PICO-20250415-v1.25.0.uf2"):
        assert uf2_file.name_parts(bad) is None
    a, b = tmp_path / "a", tmp_path / "b"
    (a / "uf2").mkdir(parents=True)
    (b / "uf2").mkdir(parents=True)
    old = a / "uf2" / "bloomkeeper-0.1.0-RPI_PICO.uf2"
    new = b / "uf2" / "bloomkeeper-0.2.0-RPI_PICO.uf2"
    other = b / "uf2" / "bloomkeeper-0.3.0-RPI_PICO_W.uf2"
    for i, f in enumerate((old, new, other)):
        f.write_bytes(GOOD)
        os.utime(f, (1_700_000_000 + i, 1_700_000_000 + i))
    (b / "uf2" / "notes.txt").write_text("x")
    assert uf2_file.built([a, b, tmp_path / "none"]) == [other, new, old]
    assert uf2_file.built([a, b], board="RPI_PICO") == [new, old]
    assert uf2_file.built([a, a]) == [old]  # the same folder twice counts once


# -- the RPI-RP2 drive ----------------------------------------------------------


@pytest.mark.parametrize("info", [ROM_INFO, ROM_INFO.replace(b"\n", b"\r\n")])
def test_the_rom_drive_is_known_by_its_info_file(tmp_path, info):
    d = rom_drive(tmp_path / "RPI-RP2", info)
    assert bootsel.board_id(d) == "RPI-RP2" and bootsel.is_bootsel_drive(d)


def test_other_drives_are_not_a_pico_in_bootsel(tmp_path):
    assert not bootsel.is_bootsel_drive(rom_drive(tmp_path / "stick", info=None))  # named like it, no info file
    rp2350 = b"UF2 Bootloader v1.0\nModel: Raspberry Pi RP2350\nBoard-ID: RP2350\n"
    assert bootsel.board_id(rom_drive(tmp_path / "p2", rp2350)) == "RP2350"
    assert not bootsel.is_bootsel_drive(tmp_path / "p2")
    assert not bootsel.is_bootsel_drive(rom_drive(tmp_path / "big", ROM_INFO + b"x" * 5000))  # not the ROM's file
    assert not bootsel.is_bootsel_drive(tmp_path / "absent")


def mount_line(device, point, fstype):
    """One /proc/mounts line: the kernel escapes space, tab, newline and backslash in octal."""
    esc = point.replace("\\", "\\134").replace(" ", "\\040").replace("\t", "\\011")
    return "%s %s %s rw,nosuid,nodev,relatime 0 0\n" % (device, esc, fstype)


def test_the_linux_mount_table_finds_the_rom_drive_only(tmp_path):
    pico = rom_drive(tmp_path / "media" / "ann" / "RPI RP2")  # a space: \040 in the table
    stick = rom_drive(tmp_path / "media" / "ann" / "STICK", info=None)
    p2 = rom_drive(tmp_path / "media" / "ann" / "RP2350", b"UF2 Bootloader v1.0\nBoard-ID: RP2350\n")
    ext4 = rom_drive(tmp_path / "home")  # a Linux file system is never looked into, whatever it holds
    table = tmp_path / "mounts"
    table.write_text("".join([
        mount_line("/dev/sda1", str(ext4), "ext4"),
        mount_line("proc", "/proc", "proc"),
        mount_line("/dev/sdb1", str(pico), "vfat"),
        mount_line("/dev/sdc1", str(stick), "vfat"),
        mount_line("/dev/sdd1", str(p2), "vfat"),
    ]))
    assert bootsel.linux_mounts(table) == [str(pico), str(stick), str(p2)]
    assert bootsel.find_drives(platform="linux", mounts=table) == [str(pico)]
    assert bootsel.find_drives(platform="linux", mounts=tmp_path / "no-such-table") == []


def test_macos_volumes(tmp_path):
    vols = tmp_path / "Volumes"
    rom_drive(vols / "RPI-RP2")
    rom_drive(vols / "Macintosh HD", info=None)
    assert bootsel.find_drives(platform="darwin", volumes=vols) == [str(vols / "RPI-RP2")]


def test_windows_drive_letters():
    assert bootsel.candidates(platform="win32")[:2] == ["C:\\", "D:\\"] and bootsel.candidates(platform="win32")[-1] == "Z:\\"


def test_an_unmounted_rom_drive_is_seen_by_its_label(tmp_path):
    assert bootsel.unmounted_device(tmp_path) is None
    (tmp_path / "RPI-RP2").symlink_to("../../sdb1")
    assert bootsel.unmounted_device(tmp_path) is None  # a dangling link: no such device
    (tmp_path / "sdb1").write_bytes(b"")
    (tmp_path / "RPI-RP2").unlink()
    (tmp_path / "RPI-RP2").symlink_to(tmp_path / "sdb1")
    assert bootsel.unmounted_device(tmp_path) == str(tmp_path / "RPI-RP2")


def test_copy_writes_the_file_whole(tmp_path):
    d = rom_drive(tmp_path / "RPI-RP2")
    path = bootsel.copy_uf2(GOOD, "bloomkeeper-0.1.0-RPI_PICO.uf2", d)
    assert open(path, "rb").read() == GOOD


def test_picotool_that_cannot_run_is_a_failure_not_a_missing_board(tmp_path):
    ok, out = bootsel.picotool_load(str(tmp_path / "no-picotool"), tmp_path / "x.uf2")
    assert ok is None and out


def test_an_image_that_reaches_the_file_system_would_lose_the_saved_games():
    """The Pico's littlefs (its saved games) is the top 1408 KB of its 2 MB
    flash: a UF2 for RPI_PICO must stay below 0x100A0000."""
    fits = uf2_file.parse(uf2_writer.uf2(bytes(640 * 1024)))
    assert fits.end == 0x100A0000
    uf2_file.check_keeps_files(fits, "RPI_PICO")
    over = uf2_file.parse(uf2_writer.uf2(bytes(256), base=0x100A0000))
    with pytest.raises(uf2_file.Uf2Error, match="into the RPI_PICO's file system .* where the saved games are"):
        uf2_file.check_keeps_files(over, "RPI_PICO", "x.uf2")
    uf2_file.check_keeps_files(over, "RPI_PICO_W")  # the Pico W's firmware region is larger
    uf2_file.check_keeps_files(over, None)  # a board whose layout is not known here


# -- against the real things, where this machine has them ----------------------------
# picotool (Raspberry Pi's, built from its public sources: on PATH, or PICOTOOL=its
# path) and the official MicroPython v1.28.0 RPI_PICO image the chip bench keeps
# (BK_CHIP_CACHE, default ~/.cache/bk-chip). Neither comes from a package
# registry, so a clean clone skips these.

PICOTOOL = os.environ.get("PICOTOOL") or shutil.which("picotool")
OFFICIAL = Path(os.environ.get("BK_CHIP_CACHE", Path.home() / ".cache" / "bk-chip")) / "RPI_PICO-20260406-v1.28.0.uf2"
needs_picotool = pytest.mark.skipif(not PICOTOOL, reason="no picotool (PATH or PICOTOOL=)")


@needs_picotool
def test_picotool_writes_the_same_uf2_as_the_kit_and_the_reader_takes_it(tmp_path):
    """Raspberry Pi's own converter and the kit's writer agree byte for
    byte, so the reader's tests stand on what the Pico's tools make."""
    image = uf2_writer.firmware_like(5000)
    (tmp_path / "fw.bin").write_bytes(image)
    p = subprocess.run([PICOTOOL, "uf2", "convert", str(tmp_path / "fw.bin"), str(tmp_path / "fw.uf2"), "--family", "rp2040"],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stdout + p.stderr
    made = (tmp_path / "fw.uf2").read_bytes()
    assert made == uf2_writer.uf2(image)
    assert uf2_file.parse(made).describe() == "20 blocks, 5120 bytes for RP2040 flash 0x10000000-0x10001400"


@needs_picotool
def test_a_picotool_that_reaches_no_board_is_not_a_failure(tmp_path):
    """`picotool load` with no Pico in BOOTSEL mode, or a picotool built
    without USB support: the flash goes on to its other ways. Run only with
    a picotool that cannot touch a board (no USB), never one that could
    flash a Pico plugged into this machine."""
    v = subprocess.run([PICOTOOL, "version"], capture_output=True, text=True, timeout=60)
    if "without USB support" not in v.stdout + v.stderr:
        pytest.skip("this picotool has USB support: it could flash a real board")
    f = tmp_path / "fw.uf2"
    f.write_bytes(GOOD)
    ok, out = bootsel.picotool_load(PICOTOOL, f)
    assert ok is False and "without USB support" in out


@pytest.mark.skipif(not OFFICIAL.is_file(), reason="no official MicroPython RPI_PICO image in BK_CHIP_CACHE (the chip bench says where it comes from)")
def test_the_official_micropython_image_reads_whole_and_leaves_the_file_system_alone():
    data, img = uf2_file.read(OFFICIAL)
    assert img.blocks == len(data) // 512 and img.start == 0x10000000
    uf2_file.check_keeps_files(img, "RPI_PICO")  # it ends below 0x100A0000, where its littlefs begins
    if PICOTOOL:  # picotool reads the same image and names its drive where FS_START says
        p = subprocess.run([PICOTOOL, "info", "-a", str(OFFICIAL)], capture_output=True, text=True, timeout=60)
        assert "embedded drive:    0x%08x-0x10200000 (1408K)" % uf2_file.FS_START["RPI_PICO"] in p.stdout

"""`bloomkeeper flash --uf2`: the whole way of a UF2 onto a Pico in BOOTSEL
mode, and plain `flash` refusing a frozen board.

The drive is a temporary directory laid out as the RP2040 boot ROM's
RPI-RP2 drive (tests/packaging/test_uf2_file.py checks that layout is
found), listed as a FAT mount in a mount table written as /proc/mounts
writes it. The board that "restarts into the UF2" is the product's
simulator (host/board_sim/board.SimBoard: the firmware's App and link on a
real pseudo-terminal): it answers nothing until the UF2 lands whole on the
drive, then the drive goes and the board is served, as a Pico restarts
after its last block. The UF2 bytes come from tests/kit/uf2_writer.py.

mpremote is never run against a board here (there is none): the restart
into BOOTSEL is checked against mpremote's own `bootloader` command, and
the step itself is replaced (`run_mpremote`) by what a board does then,
its drive appearing.
"""

import os
import shutil
import subprocess
import threading
import time

import pytest

from host import __version__, bootsel, cli
from host.board_sim import serve_record
from host.board_sim.board import SimBoard
from host.commands import flash, uf2_flash
from tests.kit import uf2_writer
from tests.kit.frozen_sim import run_frozen

pytestmark = pytest.mark.slow  # a simulated board on a pty, and hello waits of a few seconds

ROM_INFO = b"UF2 Bootloader v3.0\nModel: Raspberry Pi RP2\nBoard-ID: RPI-RP2\n"  # pico-bootrom, bootrom/info_uf2.txt
UF2_NAME = "bloomkeeper-%s-RPI_PICO.uf2" % __version__
DATA = uf2_writer.uf2(uf2_writer.firmware_like(20000))




@pytest.fixture
def place(tmp_path, monkeypatch):
    """A clean place: a mount table (empty until a drive is put in it), no
    picotool on PATH, no USB MicroPython board, and the user's files."""
    table = tmp_path / "mounts"
    table.write_text("/dev/sda1 / ext4 rw,relatime 0 0\n")
    monkeypatch.setattr(bootsel, "MOUNTS", str(table))
    monkeypatch.setattr(bootsel, "BY_LABEL", str(tmp_path / "by-label"))
    (tmp_path / "bin").mkdir()
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    monkeypatch.setattr("host.sync.link.micropython_ports", lambda: [])
    monkeypatch.setattr(uf2_flash, "DRIVE_WAIT", 1.0)
    uf2 = tmp_path / UF2_NAME
    uf2.write_bytes(DATA)

    class Place:
        path = tmp_path
        file = uf2

        def drive(self, name="RPI-RP2"):
            d = tmp_path / "media" / name
            d.mkdir(parents=True)
            (d / "INDEX.HTM").write_text("<html></html>")
            (d / "INFO_UF2.TXT").write_bytes(ROM_INFO)
            with open(table, "a") as f:
                f.write("/dev/sdb1 %s vfat rw,nosuid,nodev 0 0\n" % str(d).replace(" ", "\\040"))
            return d

    return Place()


class Pico:
    """A board that restarts into the UF2 once the file lies whole on its drive."""

    def __init__(self, drive, frozen=True):
        self.sb = SimBoard(state_dir=None).start()  # its pty exists; nothing answers yet
        if frozen:
            run_frozen(self.sb)
        self.drive = drive
        self.got = None
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        target = os.path.join(self.drive, UF2_NAME) if self.drive else None
        while not self.stop.is_set():
            if target and os.path.exists(target) and os.path.getsize(target) == len(DATA):
                with open(target, "rb") as f:
                    self.got = f.read()
                os.remove(os.path.join(self.drive, "INFO_UF2.TXT"))  # the ROM's drive goes as the board restarts
                break
            if target is None:
                break
            time.sleep(0.02)
        serve_record.serve(self.sb, self.stop.is_set)

    def close(self):
        self.stop.set()
        self.thread.join(10)
        self.sb.close()


@pytest.fixture
def pico():
    boards = []

    def make(drive, frozen=True):
        boards.append(Pico(drive, frozen))
        return boards[-1]

    yield make
    for b in boards:
        b.close()


def fails(capsys, argv):
    with pytest.raises(SystemExit) as e:
        cli.main(argv)
    assert e.value.code == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "Traceback" not in err
    return err


def tree(path):
    return sorted((str(p.relative_to(path)), p.read_bytes() if p.is_file() else None) for p in path.rglob("*"))


# -- the way onto the board ------------------------------------------------------


def test_a_uf2_goes_onto_the_rom_drive_and_the_board_answers_frozen(place, pico, capsys):
    drive = place.drive()
    board = pico(drive)
    assert cli.main(["flash", "--uf2", str(place.file), "--port", board.sb.link_path, "--wait", "20"]) == 0
    out = capsys.readouterr().out
    assert board.got == DATA  # byte for byte, found through the mount table
    assert "copying it onto the RPI-RP2 drive %s" % drive in out
    assert "hello from %s: firmware %s (frozen build)" % (board.sb.link_path, __version__) in out


def test_a_board_that_does_not_answer_frozen_after_the_copy_is_one_line(place, pico, capsys):
    """The copy landed, but the board that answers runs files (or older
    firmware): it did not start the image. One line, exit 2."""
    drive = place.drive()
    board = pico(drive, frozen=False)
    err = fails(capsys, ["flash", "--uf2", str(place.file), "--port", board.sb.link_path, "--wait", "20"])
    assert board.got == DATA
    assert "not frozen: it did not start the UF2" in err and "hold the BOOTSEL button" in err


def test_without_a_file_the_newest_built_uf2_is_taken(place, pico, capsys):
    drive = place.drive()
    out_dir = place.path / "build"
    (out_dir / "uf2").mkdir(parents=True)
    older = out_dir / "uf2" / "bloomkeeper-0.0.1-RPI_PICO.uf2"
    older.write_bytes(uf2_writer.uf2(b"old" * 100))
    os.utime(older, (1_600_000_000, 1_600_000_000))
    (out_dir / "uf2" / UF2_NAME).write_bytes(DATA)
    board = pico(drive)
    assert cli.main(["flash", "--uf2", "--out", str(out_dir), "--port", board.sb.link_path]) == 0
    assert board.got == DATA and not (drive / older.name).exists()


def test_a_running_board_is_restarted_into_bootsel_then_flashed(place, pico, capsys, monkeypatch):
    """No drive: the MicroPython board on USB is asked to restart into
    BOOTSEL with mpremote's own `bootloader` command; its drive appears and
    the UF2 goes onto it."""
    import mpremote.main as mp_main

    config = type("Config", (), {"commands": {}})()
    mp_main.prepare_command_expansions(config)
    ran = []
    box = {}

    def restart(argv):  # what the board does: its USB serial goes, its RPI-RP2 drive comes
        ran.append(argv)
        box["drive"] = place.drive()
        return 1, "mpremote: SerialException: device reports readiness to read but returned no data\n"

    monkeypatch.setattr(flash, "run_mpremote", restart)
    monkeypatch.setattr("host.sync.link.micropython_ports", lambda: ["/dev/ttyACM5"])
    board = pico(None)
    board.stop.set()  # this board restarts below, once the drive holds the file
    board.thread.join(10)
    board.stop.clear()

    def watch():
        while "drive" not in box:
            time.sleep(0.02)
        board.drive = str(box["drive"])
        board._run()

    board.thread = threading.Thread(target=watch, daemon=True)
    board.thread.start()
    assert cli.main(["flash", "--uf2", str(place.file), "--port", board.sb.link_path]) == 0
    out = capsys.readouterr().out
    assert len(ran) == 1 and ran[0][:3] == ["mpremote", "connect", board.sb.link_path]
    assert ran[0][3:] == mp_main._command_expansions["bootloader"][1]  # exactly mpremote's own bootloader command
    assert "no board in BOOTSEL mode: restarting" in out and board.got == DATA


def test_the_restart_without_a_drive_appearing_says_what_to_do(place, capsys, monkeypatch):
    monkeypatch.setattr(flash, "run_mpremote", lambda argv: (0, ""))
    monkeypatch.setattr("host.sync.link.micropython_ports", lambda: ["/dev/ttyACM5"])
    err = fails(capsys, ["flash", "--uf2", str(place.file)])
    assert "/dev/ttyACM5 was asked to restart into BOOTSEL mode, but no RPI-RP2 drive appeared" in err
    assert "hold the BOOTSEL button while you plug the Pico in, then drag %s onto the RPI-RP2 drive" % place.file in err
    # Linux sees the drive but nothing mounted it: say how to mount it
    (place.path / "by-label").mkdir()
    (place.path / "sdb1").write_bytes(b"")
    (place.path / "by-label" / "RPI-RP2").symlink_to(place.path / "sdb1")
    err = fails(capsys, ["flash", "--uf2", str(place.file)])
    assert "its RPI-RP2 drive is not mounted" in err and "udisksctl mount -b %s" % (place.path / "by-label" / "RPI-RP2") in err


def test_a_restart_that_cannot_reach_the_board_is_one_line(place, capsys, monkeypatch):
    """mpremote could not open the board's port: said as plain flash says it
    (flash.explain), and no drive is waited for."""
    master, slave = os.openpty()  # a real serial device that opens: so the port was busy a moment ago
    name = os.ttyname(slave)
    try:
        monkeypatch.setattr(flash, "run_mpremote", lambda argv: (1, "mpremote: failed to access %s (it may be in use by another program)\n" % name))
        monkeypatch.setattr("host.sync.link.micropython_ports", lambda: [name])
        err = fails(capsys, ["flash", "--uf2", str(place.file)])
    finally:
        os.close(master)
        os.close(slave)
    assert "port %s is busy" % name in err


def test_nothing_plugged_in_says_what_to_do_by_hand(place, capsys):
    err = fails(capsys, ["flash", "--uf2", str(place.file)])
    assert err.startswith("bloomkeeper: no board found in BOOTSEL mode (no RPI-RP2 drive) nor a MicroPython board") or \
        "no board found in BOOTSEL mode (no RPI-RP2 drive) nor a MicroPython board" in err
    assert "hold the BOOTSEL button while you plug the Pico in, then drag %s onto the RPI-RP2 drive" % place.file in err


def test_dry_run_says_where_it_would_go_and_writes_nothing(place, capsys):
    drive = place.drive()
    before = tree(drive)
    assert cli.main(["flash", "--uf2", str(place.file), "--dry-run"]) == 0
    assert "would copy it onto the RPI-RP2 drive %s" % drive in capsys.readouterr().out
    assert tree(drive) == before


# -- bad input: one line, exit 2, nothing changed ------------------------------------


@pytest.mark.parametrize("content, words", [
    (b"PK\x03\x04" + bytes(508), "lacks the UF2 magic numbers"),
    (DATA[:-10], "not a whole number of 512-byte UF2 blocks"),
    (uf2_writer.uf2(b"x" * 1000, family=0xE48BFF59), "UF2 for RP2350 (Arm), not for the RP2040"),
    (b"", "is empty"),
])
def test_a_file_that_is_not_an_rp2040_uf2_changes_nothing(place, capsys, tmp_path, content, words):
    drive = place.drive()
    before = tree(drive)
    bad = tmp_path / "firmware.uf2"
    bad.write_bytes(content)
    err = fails(capsys, ["flash", "--uf2", str(bad)])
    assert words in err and str(bad) in err
    assert tree(drive) == before


def test_bad_paths_and_drives_are_one_line(place, capsys, tmp_path):
    drive = place.drive()
    before = tree(drive)
    assert "cannot read %s" % (tmp_path / "nope.uf2") in fails(capsys, ["flash", "--uf2", str(tmp_path / "nope.uf2")])
    assert "is a directory" in fails(capsys, ["flash", "--uf2", str(tmp_path)])
    stick = tmp_path / "STICK"
    stick.mkdir()
    err = fails(capsys, ["flash", "--uf2", str(place.file), "--drive", str(stick)])
    assert "is not a Pico in BOOTSEL mode: it has no INFO_UF2.TXT naming Board-ID: RPI-RP2" in err
    assert list(stick.iterdir()) == []
    assert "no such directory" in fails(capsys, ["flash", "--uf2", str(place.file), "--drive", str(tmp_path / "gone")])
    assert "--drive is for --uf2" in fails(capsys, ["flash", "--drive", str(drive)])
    place.drive("RPI-RP2 (2)")
    err = fails(capsys, ["flash", "--uf2", str(place.file)])
    assert "several boards in BOOTSEL mode" in err and "--drive" in err
    assert tree(drive) == before


def test_no_built_uf2_says_how_to_build_one(place, capsys, tmp_path):
    err = fails(capsys, ["flash", "--uf2", "--out", str(tmp_path / "empty")])
    assert "no UF2 built yet" in err and "make uf2 MICROPY_DIR=" in err and "`bloomkeeper docs hardware`, \"Build the UF2\"" in err
    both = tmp_path / "two" / "uf2"
    both.mkdir(parents=True)
    (both / "bloomkeeper-0.1.0-RPI_PICO.uf2").write_bytes(DATA)
    (both / "bloomkeeper-0.1.0-RPI_PICO_W.uf2").write_bytes(DATA)
    err = fails(capsys, ["flash", "--uf2", "--out", str(tmp_path / "two")])
    assert "several boards" in err and "RPI_PICO, RPI_PICO_W" in err


# -- plain flash on a frozen board ---------------------------------------------------


def test_plain_flash_refuses_a_frozen_board_and_copies_nothing(place, pico, capsys, monkeypatch):
    ran = []
    monkeypatch.setattr(flash, "run_mpremote", lambda argv: (ran.append(argv), (0, ""))[1])
    board = pico(None)
    err = fails(capsys, ["flash", "--port", board.sb.link_path])
    assert "runs a frozen Bloomkeeper image (firmware %s)" % __version__ in err
    assert "bloomkeeper flash --uf2" in err and ran == []


def test_plain_flash_goes_on_for_a_board_that_is_not_frozen(place, pico, capsys, monkeypatch):
    """The precheck asks the real hello (the simulator's firmware): a board
    running files, or older firmware, is updated as before."""
    ran = []
    monkeypatch.setattr(flash, "run_mpremote", lambda argv: (ran.append(argv), (1, "mpremote: could not enter raw repl\n"))[1])
    board = pico(None, frozen=False)
    err = fails(capsys, ["flash", "--port", board.sb.link_path])
    assert len(ran) == 1 and "raw REPL" in err


def test_a_uf2_that_would_overwrite_the_saved_games_is_refused(place, capsys):
    drive = place.drive()
    before = tree(drive)
    place.file.write_bytes(uf2_writer.uf2(bytes(700 * 1024)))  # past the Pico's 640 KB firmware region
    err = fails(capsys, ["flash", "--uf2", str(place.file)])
    assert "file system (from 0x100a0000) where the saved games are: not flashed" in err
    assert tree(drive) == before


def test_plain_flash_on_a_pico_in_bootsel_mode_points_to_the_uf2(place, capsys):
    drive = place.drive()
    err = fails(capsys, ["flash"])
    assert "a Pico in BOOTSEL mode (RPI-RP2 drive %s): it takes a UF2: bloomkeeper flash --uf2" % drive in err


def test_port_auto_finds_the_restarted_pico_on_usb(place, pico, capsys, monkeypatch):
    """--port auto after the copy: the Pico's USB serial (2E8A:0005) that
    comes up, asked for its hello."""
    drive = place.drive()
    board = pico(drive)
    monkeypatch.setattr("host.sync.link.micropython_ports", lambda: [board.sb.link_path] if board.got else [])
    assert cli.main(["flash", "--uf2", str(place.file)]) == 0
    assert "hello from %s: firmware %s (frozen build)" % (board.sb.link_path, __version__) in capsys.readouterr().out


PICOTOOL = os.environ.get("PICOTOOL") or shutil.which("picotool")


def _picotool_without_usb():
    if not PICOTOOL:
        return False
    v = subprocess.run([PICOTOOL, "version"], capture_output=True, text=True, timeout=60)
    return "without USB support" in v.stdout + v.stderr


@pytest.mark.skipif(not _picotool_without_usb(), reason="needs a picotool built without USB support (PICOTOOL=), "
                    "one that cannot flash a board plugged into this machine")
def test_a_picotool_on_path_that_reaches_no_board_is_said_in_the_one_line(place, capsys):
    """The real picotool on PATH reaching no board, no drive, no board on
    USB serial: one line that says so and what to do by hand, exit 2."""
    (place.path / "bin" / "picotool").symlink_to(PICOTOOL)
    err = fails(capsys, ["flash", "--uf2", str(place.file)])
    assert "no RPI-RP2 drive, picotool sees none" in err

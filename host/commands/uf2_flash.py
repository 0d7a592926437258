"""`bloomkeeper flash --uf2 [FILE]`: put a whole Bloomkeeper firmware image
(a UF2 from `make uf2`: MicroPython with the board code, its entry point
and the pin map frozen in) onto a Pico, the way Pico users do.

1. The file: FILE, or the newest `bloomkeeper-<version>-<BOARD>.uf2` under
   the build directory's uf2/ (a clone's build/ too). It is checked as the
   RP2040's boot ROM reads it (host/build/uf2_file.py) before anything is
   touched: the ROM silently ignores what is not an RP2040 UF2, which would
   leave the board waiting in BOOTSEL mode with no word said.
2. The board in BOOTSEL mode (host/bootsel.py): `--drive PATH`, or the one
   mounted RPI-RP2 drive, or picotool when it is installed. With none of
   them, a board running MicroPython on the serial port (the Bloomkeeper app
   or the REPL) is asked to restart into BOOTSEL (mpremote's
   `machine.bootloader()`), and its drive is waited for. When no drive
   comes (nothing plugged in, or a system that does not mount it), one line
   says exactly what to do by hand.
3. The copy, then the board's hello on the serial link: it must say it runs
   a frozen build of the file's version.

Updates: a board that runs a frozen build is updated with a new UF2. Its
saved games (/bk on the littlefs file system) live outside the firmware's
part of the flash and survive. Plain `bloomkeeper flash` (the .mpy files on
the file system) refuses such a board (`refuse_frozen`): the frozen entry
puts the image's own modules first on sys.path, so copied .mpy files would
never run. The hello's `build` key (docs/protocol.md) says which kind a
board runs; `doctor` prints it (`build_words`).
"""

import os
import shlex
import time
from pathlib import Path

from host import bootsel
from host.build import bundle, uf2_file
from host.errors import UserError
from host.io_util import show

DRIVE_WAIT = 15.0  # seconds for the RPI-RP2 drive to appear after machine.bootloader()
POLL = 0.25
PRECHECK_CAP = 3.0  # seconds plain `flash` spends asking the board's hello for its build kind
BOOTLOADER = "import time, machine; time.sleep_ms(100); machine.bootloader()"  # as mpremote's own `bootloader`
# mpremote's words when the restart did not reach the board (flash.explain turns them into one line);
# any other exit is the USB link dropping as the board restarts, which is what should happen
REBOOT_FAILURES = ("no device found", "failed to access", "in use", "could not enter raw repl", "not-micropython")
BUILD_HELP = "make uf2 MICROPY_DIR=/path/to/micropython in a clone (`bloomkeeper docs hardware`, \"Build the UF2\")"

BUILD_KINDS = {
    "frozen": "frozen image (the code is inside the MicroPython firmware; update it with a new UF2: bloomkeeper flash --uf2)",
    "files": ".mpy files on the board's file system (update them with bloomkeeper flash)",
}


def field(info, key, limit=40):
    """A field of a board's hello as it can be printed: escaped, bounded ("?" if absent)."""
    v = info.get(key)
    return "?" if v is None else show(v if type(v) is str else str(v))[:limit]


def build_words(info):
    """What the hello's `build` says, in words for `doctor`."""
    kind = info.get("build")
    if kind is None:
        return "unknown (firmware from before the hello named its build)"
    if type(kind) is str and kind in BUILD_KINDS:
        return BUILD_KINDS[kind]
    return "unknown (%s)" % (field(info, "build") if type(kind) is str else type(kind).__name__)


def update_command(info, port="auto"):
    """The command that updates this board: a frozen one takes a new UF2."""
    flash = "bloomkeeper flash" + (" --uf2" if info.get("build") == "frozen" else "")
    return flash + ("" if port in (None, "", "auto") else " --port %s" % port)


def refuse_frozen(port):
    """Plain `flash`, before it copies anything: a board whose hello says it
    runs a frozen build is refused in one line (its frozen modules come first
    on sys.path, so copied .mpy files would not run). A board that does not
    answer the hello (the REPL, a crashed app, older firmware) goes on as
    before: nothing is refused on a guess."""
    from host.sync import link

    try:
        lk = link.connect(port, cap=PRECHECK_CAP, request_timeout=0.5)
    except UserError:
        return
    info = lk.info or {}
    lk.close()
    if info.get("build") == "frozen":
        raise UserError("the board on %s runs a frozen Bloomkeeper image (firmware %s): .mpy files copied onto it would "
                        "not run (the image's own modules come first); update it with a new UF2: bloomkeeper flash --uf2"
                        % (port, field(info, "fw")))


def refuse_bootsel_board(port, dry_run=False):
    """Plain `flash` with --port auto and no MicroPython board on USB serial,
    but a Pico in BOOTSEL mode: say that it takes a UF2 (one line)."""
    if dry_run or port not in (None, "", "auto"):
        return
    from host.sync.link import micropython_ports

    if micropython_ports():
        return
    drives = bootsel.find_drives()
    if drives:
        raise UserError("no MicroPython board on USB serial, but a Pico in BOOTSEL mode (RPI-RP2 drive %s): it takes a "
                        "UF2: bloomkeeper flash --uf2 (the frozen build; `bloomkeeper docs hardware`, \"Install the UF2\")"
                        % drives[0])


# -- the file ------------------------------------------------------------------


def build_dirs(out):
    """Where `make uf2` may have put its output: --out's uf2/, and a clone's build/uf2/ when --out is the default."""
    dirs = [Path(out)]
    if Path(out) == Path(bundle.BUILD):
        dirs.append(bundle.ROOT / "build")
    return dirs


def choose_file(given, out):
    """The UF2 to flash: the one given, else the newest built one."""
    if given:
        return Path(given)
    found = uf2_file.built(build_dirs(out))
    where = " or ".join(str(d / uf2_file.UF2_DIR) for d in build_dirs(out))
    if not found:
        raise UserError("no UF2 built yet (looked in %s): build one with %s, or give the file: bloomkeeper flash --uf2 FILE"
                        % (where, BUILD_HELP))
    boards = sorted({uf2_file.name_parts(f.name)[1] for f in found})
    if len(boards) > 1:
        raise UserError("UF2s for several boards in %s (%s): give the one for your board: bloomkeeper flash --uf2 FILE"
                        % (where, ", ".join(boards)))
    return found[0]


# -- the board in BOOTSEL mode -------------------------------------------------


def manual_steps(path):
    return ("hold the BOOTSEL button while you plug the Pico in, then drag %s onto the RPI-RP2 drive that appears "
            "(or run bloomkeeper flash --uf2 %s --drive PATH-OF-THAT-DRIVE)" % (path, shlex.quote(str(path))))


def _one_drive(drives):
    if len(drives) > 1:
        raise UserError("several boards in BOOTSEL mode (%s): choose one with --drive PATH" % ", ".join(drives))
    return drives[0] if drives else None


def check_drive(drive):
    if not os.path.isdir(drive):
        raise UserError("--drive %s: no such directory (the RPI-RP2 drive's mount point)" % drive)
    found = bootsel.board_id(drive)
    if found != bootsel.BOARD_ID:
        raise UserError("--drive %s is not a Pico in BOOTSEL mode: %s" % (drive, (
            "its %s names Board-ID %s, not %s" % (bootsel.INFO_FILE, found, bootsel.BOARD_ID)) if found else (
            "it has no %s naming Board-ID: %s" % (bootsel.INFO_FILE, bootsel.BOARD_ID))))
    return drive


def reboot_command(port):
    """The mpremote argument list that restarts a MicroPython board into BOOTSEL."""
    return ["mpremote", "connect", port, "exec", "--no-follow", BOOTLOADER]


def serial_board(port):
    """The port of a MicroPython board that could be restarted into BOOTSEL, or None."""
    if port not in (None, "", "auto"):
        return port
    from host.sync.link import micropython_ports

    ports = micropython_ports()
    if len(ports) > 1:
        raise UserError("no board in BOOTSEL mode, and several MicroPython boards on USB (%s): choose one with --port, "
                        "or put the one to flash in BOOTSEL mode by hand" % ", ".join(ports))
    return ports[0] if ports else None


def wait_for_drive(wait):
    deadline = time.monotonic() + wait
    while True:
        drive = _one_drive(bootsel.find_drives())
        if drive or time.monotonic() >= deadline:
            return drive
        time.sleep(POLL)


def no_drive_after_reboot(port, path, wait):
    dev = bootsel.unmounted_device()
    if dev:
        return ("%s restarted into BOOTSEL mode, but its RPI-RP2 drive is not mounted (this system does not mount it by "
                "itself): mount it (udisksctl mount -b %s) and run bloomkeeper flash --uf2 %s --drive MOUNT-POINT"
                % (port, dev, shlex.quote(str(path))))
    return ("%s was asked to restart into BOOTSEL mode, but no RPI-RP2 drive appeared within %g s (no automount?): "
            % (port, wait)) + manual_steps(path)


# -- the command ---------------------------------------------------------------


def flash_uf2(args):
    path = choose_file(args.uf2, args.out)
    try:
        data, image = uf2_file.read(path)
        parts = uf2_file.name_parts(path.name)
        uf2_file.check_keeps_files(image, parts[1] if parts else None, str(path))
    except uf2_file.Uf2Error as err:
        raise UserError(str(err))
    print("UF2: %s (%s%s)" % (path, image.describe(), ", firmware %s for %s" % parts if parts else ""))
    drive = check_drive(args.drive) if args.drive else _one_drive(bootsel.find_drives())
    tool = None if drive else bootsel.picotool()
    if args.dry_run:
        print(plan(path, drive, tool, args.port))
        return 0
    put_on_board(path, data, drive, tool, args.port)
    check_hello(path, parts[0] if parts else None, *wait_for_frozen_hello(args.port, args.wait, path))
    return 0


def plan(path, drive, tool, port):
    """--dry-run: what flash_uf2 would do, in one line (nothing is touched)."""
    if drive:
        return "would copy it onto the RPI-RP2 drive %s" % drive
    if tool:
        return "would load it with: %s" % shlex.join([tool, "load", "-x", str(path)])
    port = serial_board(port)
    if port is None:
        raise UserError("no board found in BOOTSEL mode nor on USB serial: " + manual_steps(path))
    return "would restart %s into BOOTSEL mode with: %s" % (port, shlex.join(reboot_command(port)))


def _picotool(tool, path):
    """picotool load: True when it wrote the image, False when it reached no board."""
    ok, output = bootsel.picotool_load(tool, path)
    if ok is None:
        last = [ln for ln in output.strip().splitlines() if ln.strip()]
        raise UserError("picotool load failed: %s" % (last[-1].strip() if last else "no output"))
    if ok:
        print("loaded with picotool (%s): the board restarts into it" % tool)
    return ok


def put_on_board(path, data, drive, tool, port):
    """The image onto the board in BOOTSEL mode: its drive, else picotool,
    else a MicroPython board on USB serial restarted into BOOTSEL first."""
    from host.commands import flash

    if not drive and not (tool and _picotool(tool, path)):
        port = serial_board(port)
        if port is None:
            raise UserError("no board found in BOOTSEL mode (no RPI-RP2 drive%s) nor a MicroPython board on USB serial: %s"
                            % (", picotool sees none" if tool else "", manual_steps(path)))
        argv = reboot_command(port)
        print("no board in BOOTSEL mode: restarting %s into it: %s" % (port, shlex.join(argv)))
        status, output = flash.run_mpremote(argv)
        text = " ".join(output.split()).lower()
        if status != 0 and any(s in text for s in REBOOT_FAILURES):
            raise UserError(flash.explain("the restart into BOOTSEL", port, output))
        drive = wait_for_drive(DRIVE_WAIT)
        if not drive:
            if tool and _picotool(tool, path):  # no drive mounted, but picotool reaches the boot ROM over USB
                return
            raise UserError(no_drive_after_reboot(port, path, DRIVE_WAIT))
    if drive:
        print("copying it onto the RPI-RP2 drive %s" % drive)
        try:
            bootsel.copy_uf2(data, path.name, drive)
        except OSError as err:
            raise UserError("cannot write %s onto %s: %s (was the board unplugged?)" % (path.name, drive, err.strerror or err))


def check_hello(path, version, info, port):
    """The board that answered after the copy runs the image: build frozen, the file's version."""
    kind = info.get("build")
    print("hello from %s: firmware %s (%s build), board %s, link protocol %s" % (
        port, field(info, "fw"), field(info, "build") if kind is not None else "unknown", field(info, "board"), field(info, "proto")))
    if kind != "frozen":
        raise UserError("the board on %s answers, but its hello says build %s, not frozen: it did not start the UF2 "
                        "(if it still shows the RPI-RP2 drive, the copy did not take; try again or %s)"
                        % (port, field(info, "build") if kind is not None else "unknown (older firmware)", manual_steps(path)))
    if version and info.get("fw") != version:
        raise UserError("the board on %s answers firmware %s, not the UF2's %s: it did not take the update (try again, or %s)"
                        % (port, field(info, "fw"), version, manual_steps(path)))


def wait_for_frozen_hello(port, wait, path):
    """(hello info, port) once the board restarted from the UF2, or a UserError."""
    from host.sync import link

    deadline = time.monotonic() + wait
    last = None
    cap = min(10.0, max(wait, 1.0))
    while True:
        try:
            if port in (None, "", "auto"):  # the Pico that restarted, never a simulator that happens to run
                lk = link.discover(cap=cap, request_timeout=0.5, ports=link.micropython_ports())
            else:
                lk = link.connect(port, cap=cap, request_timeout=0.5)
        except UserError as err:
            last = err
            if "speaks link protocol" in str(err):
                raise UserError("the board answers with another firmware version: %s" % err)
            if time.monotonic() >= deadline:
                break
            time.sleep(0.5)
            continue
        info = lk.info or {}
        name = lk.name
        lk.close()
        return info, name
    raise UserError("wrote %s to the board, but no Bloomkeeper hello came within %g s (%s): if the RPI-RP2 drive is still "
                    "there the copy did not take; else see what the board says: mpremote repl" % (path.name, wait, last))

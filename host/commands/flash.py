"""`bloomkeeper flash [--port auto|PATH|URL] [--dry-run]`: put the firmware on a Pico.

Builds the MicroPython bundle (host/build/bundle.py, firmware-micropython/
under the build directory), then runs the real mpremote (a dependency) ONCE,
its commands chained with `+` so that it connects, enters the raw REPL and
resets the board only once:

1. ``exec``: refuse a board that is not MicroPython, and delete only the
   files of engine_lite/ and firmware/ that the new bundle does not have (a
   stale ``x.py`` would shadow the new ``x.mpy``: MicroPython looks for .py
   first). Nothing else is deleted: saved games in /bk stay, and so do the
   files the bundle is about to copy.
2. ``fs cp -r``: copy the bundle's top-level entries to the flash root.
   mpremote compares each file's SHA-256 with the board's copy and skips the
   unchanged ones ("Up to date"), so an update writes only what changed
   (fewer flash erases, and a cut copy leaves fewer half-written files).
3. ``reset``: hard reset; the board boots into main.py, the app.

Then it waits for the app's hello on the serial link (host/sync/link.py) and
checks that the firmware that answered is the version just built (the bundle
is stamped with the package version): a board that still answers another
version refused the update, which is one line, exit 2. ``--dry-run`` prints
the exact mpremote command line and touches nothing. A port URL
(``rfc2217://localhost:4000``, the Wokwi simulator in VS Code) works like a
device path.

``--uf2 [FILE]`` instead puts a whole firmware image (``make uf2``: the board
code frozen into MicroPython) onto a board in BOOTSEL mode, and a board
whose hello says it runs such a frozen build is refused by the path above
(the copied files would not run): host/commands/uf2_flash.py.
"""

import os
import shlex
import stat
import subprocess
import sys
import time

from host import pages
from host.build import bundle
from host.commands import options
from host.errors import UserError
from host.io_util import duration

BOARD_DIRS = ("engine_lite", "firmware")  # where step 1 looks for stale files


def prepare(keep):
    """The one line of MicroPython run on the board before copying (mpremote
    exec): refuse another firmware; remove the files of BOARD_DIRS that are
    not in `keep` (bundle paths such as "firmware/app.mpy")."""
    return (
        'import sys,os;n=sys.implementation.name;assert n=="micropython","NOT-MICROPYTHON "+n;k=%s;'
        '[os.remove("/"+d+"/"+f) for d in (%s) if d in os.listdir("/") for f in os.listdir("/"+d) if d+"/"+f not in k]'
        % ("{%s}" % ",".join('"%s"' % f for f in sorted(keep)) if keep else "()",
           ",".join('"%s"' % d for d in BOARD_DIRS))
    )


HELLO_WAIT = 20.0  # seconds for the board to reboot and answer


def register(sub):
    p = sub.add_parser("flash", help="copy the firmware to a MicroPython board with mpremote and check its hello",
                       description="Build the MicroPython bundle (as bloomkeeper firmware), update the board with one "
                       "mpremote run (only changed files are copied, stale engine_lite/ and firmware/ files removed, "
                       "saved games in /bk stay), reset it and check that the app's hello names this version. "
                       "--dry-run prints the mpremote command line. --uf2 instead puts a whole firmware image onto a Pico in "
                       "BOOTSEL mode, and a board running such a frozen image is refused without it.")
    options.port(p, "auto: the one USB device with VID:PID 2E8A:0005")
    p.add_argument("--dry-run", action="store_true", help="print the mpremote command line, run nothing")
    p.add_argument("--out", default=str(bundle.BUILD), metavar="DIR",
                   help="build directory (default: the user's cache, %s)" % bundle.BUILD)
    p.add_argument("--wait", type=duration, default=HELLO_WAIT, metavar="S",
                   help="seconds to wait for the hello after the reset (default %g)" % HELLO_WAIT)
    p.add_argument("--uf2", nargs="?", const="", default=None, metavar="FILE",
                   help="instead, put a whole firmware image (make uf2) onto a Pico in BOOTSEL mode (its RPI-RP2 drive, "
                   "or picotool): FILE, or the newest UF2 built under --out; a board running MicroPython is restarted "
                   "into BOOTSEL first. The way to install and update a frozen build (`bloomkeeper docs hardware`, \"Install the UF2\")")
    p.add_argument("--drive", metavar="PATH", help="with --uf2: the RPI-RP2 drive's mount point (default: found)")
    p.set_defaults(func=flash_cmd)


def resolve_port(port, dry_run=False):
    """auto -> the single Pico (USB VID:PID 2E8A:0005) or a UserError; else port as given."""
    if port not in (None, "", "auto"):
        return port
    from host.sync.link import micropython_ports

    ports = micropython_ports()  # a CircuitPython board is updated by copying files, not with mpremote
    if len(ports) == 1:
        return ports[0]
    if dry_run:
        return "auto"  # mpremote's own auto: the first USB serial device
    if not ports:
        raise UserError("no board found: no USB serial device with VID:PID 2E8A:0005 (MicroPython on a Pico); "
                        "plug it in, install Bloomkeeper's UF2 (bloomkeeper flash --uf2, %s), or give --port PATH"
                        % pages.ref("hardware"))
    raise UserError("several boards found (%s): choose one with --port" % ", ".join(ports))


def bundle_files(bundle_dir):
    """The bundle's files below BOARD_DIRS, as paths on the board ("firmware/app.mpy")."""
    out = []
    for d in BOARD_DIRS:
        top = os.path.join(bundle_dir, d)
        for base, _, names in os.walk(top):
            for n in names:
                out.append(os.path.relpath(os.path.join(base, n), bundle_dir).replace(os.sep, "/"))
    return sorted(out)


def mpremote_command(port, bundle_dir):
    """The one mpremote argument list (starting with 'mpremote') of a flash:
    connect, then exec, cp and reset chained with '+'."""
    bundle_dir = _short(os.fspath(bundle_dir))
    entries = sorted(os.listdir(bundle_dir))
    if "main.py" not in entries:
        raise UserError("%s has no main.py: not a MicroPython bundle (bloomkeeper firmware)" % bundle_dir)
    entries.remove("main.py")
    entries.append("main.py")  # the entry goes last: a cut copy leaves the old one in charge
    return (["mpremote", "connect", port, "exec", prepare(bundle_files(bundle_dir)), "+",
             "fs", "cp", "-r"] + [os.path.join(bundle_dir, e) for e in entries] + [":", "+", "reset"])


def _short(path):
    """path relative to the working directory when it lies below it (mpremote runs there too)."""
    rel = os.path.relpath(os.path.abspath(path))
    return path if rel.startswith("..") else rel


def run_mpremote(argv):
    """Run one mpremote command line (argv[0] == 'mpremote') with this Python: (status, output)."""
    try:
        p = subprocess.run([sys.executable, "-m", "mpremote"] + list(argv[1:]), capture_output=True, text=True, timeout=180)
    except subprocess.TimeoutExpired:
        return 1, "mpremote: timed out after 180 s"
    return p.returncode, (p.stdout or "") + (p.stderr or "")


def port_trouble(port):
    """Why PORT (a device path) cannot be a board's port: absent, or not a
    device at all (a file, a directory), in the words `sync` and `doctor`
    use; None when it is a device (or a URL, or a Windows COM name, which
    only opening can judge). mpremote answers "failed to access" for all of
    these and for a busy port alike, so flash asks the path itself."""
    if "://" in port or os.name == "nt":
        return None
    try:
        mode = os.stat(port).st_mode
    except FileNotFoundError:
        return "no such port %s (see `--port auto`)" % port
    except OSError as err:
        return "cannot use port %s: %s (see `--port auto`)" % (port, err.strerror or err)
    if not stat.S_ISCHR(mode):
        return "%s is %s, not a serial port (see `--port auto`)" % (port, "a directory" if stat.S_ISDIR(mode) else "a file")
    return None


def access_trouble(port):
    """After mpremote's "failed to access": the real cause, asked as `sync`
    asks it (host/sync/link.open_serial: absent, permission denied, busy);
    busy when the port opens now (another program had it a moment ago)."""
    from host.sync import link

    trouble = port_trouble(port)
    if trouble:
        return trouble
    try:
        link.open_serial(port).close()
    except UserError as err:
        return str(err)
    return "port %s is busy: another program has it open (a serial monitor, Thonny, bloomkeeper follow?)" % port


def explain(step, port, output):
    """One line for a failed mpremote step."""
    text = " ".join(output.split())
    if "NOT-MICROPYTHON" in text:
        impl = (text.split("NOT-MICROPYTHON", 1)[1].split() or ["another firmware"])[0]
        return ("%s runs %s, not MicroPython: for CircuitPython copy %s onto the CIRCUITPY drive "
                "(bloomkeeper firmware builds it); for a Pico install Bloomkeeper's UF2 (bloomkeeper flash --uf2, %s)"
                % (port, impl, bundle.BUILD / bundle.OUT_DIRS["circuitpython"], pages.ref("hardware")))
    if "no device found" in text:
        return "no board found on %s (plugged in? give --port PATH)" % port
    if "failed to access" in text or "in use" in text:
        return access_trouble(port)
    if "could not enter raw repl" in text.lower():
        return ("%s does not give a MicroPython raw REPL: is it a MicroPython board? "
                "(if the Bloomkeeper app hangs it, unplug and replug and try again)" % port)
    last = [ln for ln in output.strip().splitlines() if ln.strip()]
    return "%s failed on %s: %s" % (step, port, last[-1].strip() if last else "mpremote exited with an error")


def wait_for_hello(port, wait):
    """The board's hello info after the reset, or a UserError that says why not."""
    from host.sync import link

    deadline = time.monotonic() + wait
    last = None
    while True:
        try:
            lk = link.connect(port, cap=min(10.0, max(wait, 1.0)), request_timeout=0.5)
        except UserError as err:
            last = err
            if "speaks link protocol" in str(err):
                raise UserError("the board on %s answers with another firmware version: %s" % (port, err))
            if time.monotonic() >= deadline:
                break
            time.sleep(0.5)
            continue
        info = lk.info or {}
        lk.close()
        return info
    raise UserError("copied the firmware to %s, but no Bloomkeeper hello within %g s after the reset (%s); "
                    "see the app's error: mpremote connect %s repl, then Ctrl-D" % (port, wait, last, port))


def flash_cmd(args):
    from host.commands import uf2_flash

    if args.uf2 is not None:
        return uf2_flash.flash_uf2(args)
    if args.drive:
        raise UserError("--drive is for --uf2 (a UF2 onto a board in BOOTSEL mode)")
    out_dir = os.path.join(args.out, bundle.OUT_DIRS["micropython"])
    if os.path.exists(args.out) and not os.path.isdir(args.out):
        raise UserError("--out %s is a file: give a directory to build in (default: build/)" % args.out)
    trouble = None if args.dry_run or args.port in (None, "", "auto") else port_trouble(args.port)
    if trouble:  # before the build: a wrong --port is said at once and changes nothing
        raise UserError(trouble)
    try:
        files = bundle.build("micropython", out_dir)
    except bundle.BundleError as err:
        raise UserError("cannot build the firmware: %s" % err)
    except OSError as err:
        raise UserError("cannot write the firmware bundle to %s: %s" % (out_dir, err.strerror or err))
    uf2_flash.refuse_bootsel_board(args.port, args.dry_run)  # a Pico in BOOTSEL mode takes a UF2, not files
    port = resolve_port(args.port, dry_run=args.dry_run)
    argv = mpremote_command(port, out_dir)
    if args.dry_run:
        print(shlex.join(argv))
        return 0
    import importlib.util

    if importlib.util.find_spec("mpremote") is None:
        raise UserError("mpremote is not installed in this Python (pip install mpremote)")
    uf2_flash.refuse_frozen(port)  # its frozen modules would shadow the copied files
    version = bundle.firmware_version()
    mpy = sum(n for r, n in files.items() if r.endswith(".mpy"))
    print("bundle: firmware %s, %d files, %d bytes of .mpy (%s)" % (version, len(files), mpy, out_dir))
    print("updating the board (unchanged files are skipped): %s" % shlex.join(argv))
    status, output = run_mpremote(argv)
    if status != 0:
        raise UserError(explain("flash", port, output))
    skipped = output.count("Up to date")
    if skipped:
        print("%d files were already up to date" % skipped)
    # after the reset the board re-enumerates: with --port auto, find it again
    info = wait_for_hello(args.port if args.port in (None, "", "auto") else port, args.wait)
    print("hello from %s: firmware %s, board %s%s, link protocol %s%s" % (
        port, info.get("fw", "?"), info.get("board", "?"), " (id %s, clock set)" % info["id"] if info.get("id") else "",
        info.get("proto", "?"),
        ", game in progress %s" % info["game"] if info.get("game") else ""))
    if info.get("fw") != version:
        raise UserError("the board on %s still answers firmware %s, not %s: it did not take the update "
                        "(is its flash full or read-only? see mpremote connect %s fs df)" % (port, info.get("fw"), version, port))
    return 0

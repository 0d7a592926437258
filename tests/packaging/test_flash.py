"""`bloomkeeper flash`: it builds the exact mpremote command line, one
chained run (tested against mpremote's own command parsing, without a board).

`mpremote_actions()` walks an argument list exactly as mpremote.main.main()
does (its command table `_COMMANDS`, its shortcut expansions, its argparse
builders, the `+` terminator), but records the parsed actions instead of
running the handlers. Failures of the real steps are simulated by replacing
`run_mpremote` / `host.sync.link.connect`, so every user-facing message is
checked to be one line (exit 2, no traceback).
"""

import argparse
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from host.build import bundle
from host import cli
from host.commands import flash
from host.errors import UserError
from tests.kit.mpy_harness import run_mpy

mp_main = pytest.importorskip("mpremote.main")


def mpremote_actions(argv):
    """[(command, argparse.Namespace)] that mpremote would execute for argv (argv[0] == 'mpremote')."""
    assert argv[0] == "mpremote"
    config = type("Config", (), {})()
    config.commands = {}  # no user config: only mpremote's built-in shortcuts
    mp_main.prepare_command_expansions(config)
    remaining = list(argv[1:])
    actions = []
    while remaining:
        if remaining[0] == "+":
            remaining.pop(0)
            continue
        mp_main.do_command_expansion(remaining)
        cmd = remaining.pop(0)
        assert cmd in mp_main._COMMANDS, "%r is not an mpremote command" % cmd
        _handler, parser_func = mp_main._COMMANDS[cmd]
        if "+" in remaining:
            t = remaining.index("+")
            command_args, extra = remaining[:t], remaining[t:]
        else:
            command_args, extra = remaining, []
        parser = parser_func()
        parser.prog = cmd
        parser.add_argument("next_command", nargs=argparse.REMAINDER)  # as mpremote.main.main()
        parser.exit = lambda status=0, message=None: pytest.fail("mpremote would reject %r: %s" % (argv, message))
        args = parser.parse_args(command_args)
        actions.append((cmd, args))
        remaining = args.next_command + extra
    return actions


_REAL_BUILD = bundle.build
_CACHE = {}


@pytest.fixture(autouse=True)
def _build_once(monkeypatch, tmp_path_factory):
    """`flash` builds the bundle every time; build it once here and copy it."""
    cache = _CACHE

    def build(runtime, out_dir, *a, **kw):
        if runtime not in cache:
            d = tmp_path_factory.mktemp("cached") / "b"
            cache[runtime] = (d, _REAL_BUILD(runtime, d, *a, **kw))
        src, files = cache[runtime]
        if Path(out_dir).exists():
            shutil.rmtree(out_dir)
        shutil.copytree(src, out_dir)
        return dict(files)

    monkeypatch.setattr(bundle, "build", build)


@pytest.fixture
def tty():
    """A real serial device's path (a pty's other end), for the runs whose
    mpremote step is simulated: flash asks the path before it builds."""
    master, slave = os.openpty()
    yield os.ttyname(slave)
    os.close(master)
    os.close(slave)


def _dry_run(capsys, port, *more):
    assert cli.main(["flash", "--dry-run", "--port", port] + list(more)) == 0
    out = capsys.readouterr().out
    return [shlex.split(line) for line in out.splitlines()]


@pytest.fixture(scope="module")
def bundle_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("build")
    _REAL_BUILD("micropython", out / "firmware-micropython")
    return out


@pytest.mark.slow
@pytest.mark.parametrize("port", ["/dev/ttyACM0", "COM3", "rfc2217://localhost:4000"])
def test_dry_run_prints_one_chained_mpremote_run_that_mpremote_parses(capsys, port, bundle_dir):
    """One mpremote run (one connection, one raw REPL): check and clean-up,
    copy, reset, chained with '+'."""
    lines = _dry_run(capsys, port, "--out", str(bundle_dir))
    assert len(lines) == 1
    acts = mpremote_actions(lines[0])
    assert [a[0] for a in acts] == ["connect", "exec", "fs", "exec"]
    assert acts[0][1].device == [port]
    # 1: exec the board check / stale-file clean-up snippet and wait for it (follow)
    ex = acts[1][1]
    files = flash.bundle_files(bundle_dir / "firmware-micropython")
    assert ex.expr == [flash.prepare(files)] and ex.follow is True
    # 2: fs cp -r <bundle entries> :   with main.py last; no --force, so mpremote
    # compares hashes and skips the files the board already has
    fs = acts[2][1]
    assert fs.command == ["cp"] and fs.recursive is True and fs.force is False
    assert fs.path[-1] == ":"
    assert [s.rsplit("/", 1)[-1] for s in fs.path[:-1]] == ["engine_lite", "firmware", "main.py"]
    # 3: reset = mpremote's own shortcut: exec --no-follow ... machine.reset()
    rs = acts[3][1]
    assert rs.follow is False and "machine.reset()" in rs.expr[0]
    assert lines[0][-1] == "reset"


@pytest.mark.slow
def test_the_clean_up_keeps_exactly_the_bundle_files(bundle_dir):
    files = flash.bundle_files(bundle_dir / "firmware-micropython")
    assert "firmware/app.mpy" in files and "firmware/pinmap.json" in files and "engine_lite/game.mpy" in files
    assert "main.py" not in files and all(f.split("/")[0] in flash.BOARD_DIRS for f in files)
    for f in files:
        assert '"%s"' % f in flash.prepare(files)


@pytest.mark.slow
def test_dry_run_copies_the_built_bundle(capsys, tmp_path):
    assert cli.main(["flash", "--dry-run", "--port", "/dev/ttyACM1", "--out", str(tmp_path)]) == 0
    cp = shlex.split(capsys.readouterr().out.splitlines()[0])
    srcs = cp[cp.index("-r") + 1 : cp.index(":")]
    for s in srcs:
        assert s.startswith(str(tmp_path / "firmware-micropython"))
    assert (tmp_path / "firmware-micropython" / "main.py").is_file()
    assert (tmp_path / "firmware-micropython" / "firmware" / "app.mpy").is_file()


@pytest.mark.slow
def test_mpremote_itself_accepts_the_commands_syntax():
    """The real mpremote executable's parser (no board: only `--help`-level checks):
    each step's command is a known mpremote command."""
    p = subprocess.run([sys.executable, "-m", "mpremote", "help"], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0
    for word in ("connect", "exec", "fs", "reset"):
        assert word in p.stdout


FAKE_OS = """
import sys
class FakeOS:
    tree = {'/': ['bk', 'engine_lite', 'firmware', 'main.py'], '/bk': ['g1.log', 'settings.json'],
            '/engine_lite': ['game.py', 'game.mpy'], '/firmware': ['app.py', 'app.mpy', 'old.mpy']}
    removed = []
    def listdir(self, p):
        return list(self.tree[p])
    def remove(self, p):
        self.removed.append(p)
sys.modules['os'] = FakeOS()
"""


@pytest.mark.mpy
def test_prepare_snippet_runs_in_micropython_and_keeps_saved_games():
    """Step 1 in a real MicroPython (os replaced by a stand-in that keeps
    the board's tree and notes removals): only the files the new bundle does
    not have go (a stale .py would shadow its .mpy); the bundle's own files
    stay for mpremote's hash check, and /bk (the saved games) is untouched."""
    snippet = flash.prepare(["engine_lite/game.mpy", "firmware/app.mpy"])
    assert "\n" not in snippet  # one command line
    r = run_mpy(snippet + "\nprint(sorted(sys.modules['os'].removed))", setup=FAKE_OS)
    assert r.stdout.strip() == str(sorted(["/engine_lite/game.py", "/firmware/app.py", "/firmware/old.mpy"]))


def test_prepare_snippet_refuses_another_python():
    with pytest.raises(AssertionError, match="NOT-MICROPYTHON cpython"):
        exec(flash.prepare(["firmware/app.mpy"]), {})


def test_auto_port_without_a_board_is_one_clear_line(monkeypatch, capsys):
    monkeypatch.setattr("host.sync.link.micropython_ports", lambda: [])
    with pytest.raises(SystemExit) as e:
        cli.main(["flash"])
    assert e.value.code == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "no board found" in err and "2E8A:0005" in err


def test_auto_port_picks_the_single_pico_and_refuses_two(monkeypatch, capsys):
    monkeypatch.setattr("host.sync.link.micropython_ports", lambda: ["/dev/ttyACM7"])
    lines = _dry_run(capsys, "auto")
    assert all(line[:3] == ["mpremote", "connect", "/dev/ttyACM7"] for line in lines)
    monkeypatch.setattr("host.sync.link.micropython_ports", lambda: ["/dev/ttyACM0", "/dev/ttyACM1"])
    with pytest.raises(UserError, match="several boards"):
        flash.resolve_port("auto")


@pytest.mark.parametrize(
    "output, expect",
    [
        ("mpremote: no device found\n", "no board found"),
        ("mpremote: failed to access /dev/ttyACM0 (it may be in use by another program)\n", "busy"),
        ("mpremote: could not enter raw repl\n", "raw REPL"),
        ("Traceback (most recent call last):\n  File \"<stdin>\", line 1\nAssertionError: NOT-MICROPYTHON circuitpython\n",
         "runs circuitpython, not MicroPython"),
    ],
)
def test_failed_steps_become_one_line(monkeypatch, capsys, output, expect, tty):
    calls = []

    def fake(argv):
        calls.append(argv)
        return 1, output

    monkeypatch.setattr(flash, "run_mpremote", fake)
    with pytest.raises(SystemExit) as e:
        cli.main(["flash", "--port", tty])
    assert e.value.code == 2
    err = capsys.readouterr().err.strip()
    assert expect in err and "\n" not in err and "Traceback" not in err
    assert len(calls) == 1  # stops at the first failed step


def _fake_steps(monkeypatch):
    ran = []
    monkeypatch.setattr(flash, "run_mpremote", lambda argv: (ran.append(argv), (0, ""))[1])
    return ran


class _Link:
    def __init__(self, info):
        self.info = info

    def close(self):
        pass


def test_flash_runs_one_mpremote_then_checks_the_hello(monkeypatch, capsys, tty):
    ran = _fake_steps(monkeypatch)
    seen = []
    version = bundle.firmware_version()

    def connect(port, cap=60.0, request_timeout=1.0):
        seen.append(port)
        if len(seen) < 3:  # the board is still rebooting
            raise UserError("%s does not answer the hello" % port)
        return _Link({"proto": 1, "fw": version, "board": "pico", "game": None})

    monkeypatch.setattr("host.sync.link.connect", connect)
    monkeypatch.setattr(flash.time, "sleep", lambda s: None)
    assert cli.main(["flash", "--port", tty]) == 0
    out = capsys.readouterr().out
    assert len(ran) == 1 and ran[0][3:5] == ["exec", ran[0][4]] and ran[0][-1] == "reset"
    assert seen == [tty] * 3
    assert "hello from %s: firmware %s, board pico, link protocol 1" % (tty, version) in out


def test_a_board_that_keeps_its_old_firmware_is_one_line(monkeypatch, capsys, tty):
    """The hello after the reset still names another version: the update did
    not take. One line, exit 2."""
    _fake_steps(monkeypatch)
    monkeypatch.setattr("host.sync.link.connect", lambda port, cap=60.0, request_timeout=1.0:
                        _Link({"proto": 1, "fw": "0.0.1", "board": "pico", "game": None}))
    with pytest.raises(SystemExit) as e:
        cli.main(["flash", "--port", tty])
    assert e.value.code == 2
    err = capsys.readouterr().err.strip()
    assert "still answers firmware 0.0.1, not %s" % bundle.firmware_version() in err and "\n" not in err


def test_no_hello_after_reset_says_the_app_did_not_start(monkeypatch, capsys, tty):
    _fake_steps(monkeypatch)

    def connect(port, cap=60.0, request_timeout=1.0):
        raise UserError("%s does not answer the hello: is the Bloomkeeper app running (not the REPL)?" % port)

    monkeypatch.setattr("host.sync.link.connect", connect)
    monkeypatch.setattr(flash.time, "sleep", lambda s: None)
    with pytest.raises(SystemExit):
        cli.main(["flash", "--port", tty, "--wait", "0"])
    err = capsys.readouterr().err.strip()
    assert "no Bloomkeeper hello" in err and "mpremote connect %s repl" % tty in err and "\n" not in err


def test_wrong_firmware_answering_the_hello(monkeypatch, capsys, tty):
    _fake_steps(monkeypatch)

    def connect(port, cap=60.0, request_timeout=1.0):
        raise UserError("%s speaks link protocol 9, this bloomkeeper speaks 1: update the firmware or the host tool" % port)

    monkeypatch.setattr("host.sync.link.connect", connect)
    with pytest.raises(SystemExit):
        cli.main(["flash", "--port", tty])
    err = capsys.readouterr().err.strip()
    assert "another firmware version" in err and "protocol 9" in err and "\n" not in err


@pytest.mark.parametrize("kind", ["absent", "file", "directory"])
def test_a_port_that_is_no_serial_port_is_named_before_the_build(monkeypatch, capsys, tmp_path, kind):
    """An absent port, a file or a directory is not "busy": flash says what
    it is, as sync does, before building anything or running mpremote."""
    port = {"absent": tmp_path / "ttyACM7", "file": tmp_path / "notes.txt", "directory": tmp_path}[kind]
    if kind == "file":
        port.write_text("x")
    ran = _fake_steps(monkeypatch)
    built = []
    monkeypatch.setattr(bundle, "build", lambda *a, **kw: built.append(a))
    with pytest.raises(SystemExit) as e:
        cli.main(["flash", "--port", str(port), "--out", str(tmp_path / "out")])
    assert e.value.code == 2
    err = capsys.readouterr().err.strip()
    want = {"absent": "no such port %s (see `--port auto`)" % port,
            "file": "%s is a file, not a serial port" % port, "directory": "%s is a directory, not a serial port" % port}[kind]
    assert want in err and "busy" not in err and "\n" not in err
    assert ran == [] and built == [] and not (tmp_path / "out").exists()


def test_an_absent_port_says_the_same_as_sync(tmp_path):
    from host.sync import link

    port = str(tmp_path / "ttyACM7")
    with pytest.raises(UserError) as from_sync:
        link.open_serial(port)
    assert flash.port_trouble(port) == str(from_sync.value)


def test_failed_to_access_on_a_port_that_vanished_is_not_busy(monkeypatch, capsys, tmp_path):
    """The board was unplugged between the check and mpremote's connect."""
    port = str(tmp_path / "ttyACM7")
    assert flash.explain("flash", port, "mpremote: failed to access %s (it may be in use by another program)\n" % port) \
        == "no such port %s (see `--port auto`)" % port


def test_failed_to_access_on_a_port_another_program_holds_is_busy(tty):
    """A real exclusive hold (pyserial's, as `follow` has it): busy, as sync says."""
    from host.sync import link

    held = link.open_serial(tty)
    try:
        why = flash.explain("flash", tty, "mpremote: failed to access %s (it may be in use by another program)\n" % tty)
    finally:
        held.close()
    assert "port %s is busy" % tty in why

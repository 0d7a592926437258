"""A simulator's registration (host/runtime.py `sim-<pid>.json`) is checked,
not trusted: `--port auto` uses its pty only if the pid runs, is the
process that wrote the file (its start time) and holds that pty, and the
pty's hello gives the board id the file names. A file that fails is
removed; nothing is written to a pty that is not proven a simulator's.

The finding: a terminal closed under a simulator left its file; once the
pid was reused by a process in another terminal, `--port auto` wrote frames
into that terminal. Here that terminal is a real pty held by a real
process (`sleep`), and what reaches it is read from its master side.
"""

import json
import os
import subprocess
import sys

import pytest

from host import runtime
from host.sync import link
from tests.kit.mpy_harness import REPO

RECORDS = os.path.join(REPO, "tests", "records")


@pytest.fixture
def rundir(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    monkeypatch.setattr(link.list_ports, "comports", lambda *a, **k: [])  # no board plugged in
    return tmp_path / "bloomkeeper"


@pytest.fixture
def terminal():
    """Another program's terminal: a pty whose slave a live process holds."""
    master, slave = os.openpty()
    os.set_blocking(master, False)
    proc = subprocess.Popen(["sleep", "60"], stdin=slave)
    try:
        yield proc, master, os.ttyname(slave)
    finally:
        proc.kill()
        proc.wait(10)
        os.close(master)
        os.close(slave)


def register(d, **info):
    d.mkdir(exist_ok=True)
    path = d / ("sim-%s.json" % info.get("pid", "x"))
    path.write_text(json.dumps(info))
    return path


def written(master):
    try:
        return os.read(master, 4096)
    except BlockingIOError:
        return b""


def test_a_reused_pid_is_not_taken_for_the_simulator(rundir, terminal):
    proc, master, tty = terminal
    start = runtime.started(proc.pid)
    assert start is not None  # Linux: /proc says when a process started
    f = register(rundir, pid=proc.pid, start=start - 1, port=tty, id="simcabe0000")  # the dead simulator's start
    assert runtime.running_sims() == []
    assert not f.exists(), "the stale file is removed"
    with pytest.raises(link.UserError) as err:
        link.discover(request_timeout=0.2)
    assert "no board found" in str(err.value) and "\n" not in str(err.value)
    assert written(master) == b"", "nothing was written into the other program's terminal"


def test_a_process_that_does_not_hold_the_pty_is_not_the_simulator(rundir, terminal, tmp_path):
    proc, master, tty = terminal
    other = subprocess.Popen(["sleep", "60"])
    try:
        f = register(rundir, pid=other.pid, start=runtime.started(other.pid), port=tty, id="simcabe0000")
        assert runtime.running_sims() == [] and not f.exists()
    finally:
        other.kill()
        other.wait(10)
    assert written(master) == b""


@pytest.mark.parametrize("pid", [0, -1, "12", None, 2 ** 40])
def test_a_pid_that_names_no_one_process_is_invalid(rundir, terminal, pid):
    proc, master, tty = terminal
    f = register(rundir, pid=pid, start=0, port=tty, id="simcabe0000")
    assert not runtime.alive(pid if type(pid) is int else 0)
    assert runtime.running_sims() == [] and not f.exists()
    assert written(master) == b""


@pytest.mark.parametrize("text", ["", "[1, 2]", "{\"pid\": " * 3000, "\x00\x00"])
def test_an_unreadable_registration_is_removed(rundir, text):
    rundir.mkdir()
    f = rundir / "sim-1.json"
    f.write_text(text)
    assert runtime.running_sims() == [] and not f.exists()


def test_a_fifo_where_a_registration_should_be_does_not_hang(rundir):
    rundir.mkdir()
    f = rundir / "sim-1.json"
    os.mkfifo(f)
    assert runtime.running_sims() == [] and not f.exists()


@pytest.mark.slow
def test_a_simulator_that_answers_as_another_board_is_not_used(rundir, tmp_path):
    """The pid, its start and its pty check out, but the hello's id is not
    the one published: not used, and nothing beyond the hello was sent."""
    env = dict(os.environ, XDG_RUNTIME_DIR=str(tmp_path))
    p = subprocess.Popen([sys.executable, "-m", "host.cli", "sim", "--headless", "--record", os.path.join(RECORDS, "stalk-2p.jsonl")],
                         cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        path = p.stdout.readline().split(" ", 1)[1].strip()
        [f] = list(rundir.glob("sim-*.json"))
        assert runtime.running_sims() == [(path, json.loads(f.read_text())["id"])]  # the real one checks out
        info = json.loads(f.read_text())
        info["id"] = "simcabe0000"
        f.write_text(json.dumps(info))
        with pytest.raises(link.UserError) as err:
            link.discover(request_timeout=0.5)
        msg = str(err.value)
        assert "answers as another board" in msg and path in msg and "\n" not in msg
    finally:
        p.kill()
        p.wait(10)


def test_a_file_where_the_runtime_directory_should_be_is_no_traceback(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    monkeypatch.setattr(link.list_ports, "comports", lambda *a, **k: [])
    (tmp_path / "bloomkeeper").write_text("not a directory")
    with pytest.raises(link.UserError) as err:
        runtime.runtime_dir()
    assert "\n" not in str(err.value) and "runtime directory" in str(err.value)
    assert runtime.running_sims() == [] and runtime.relays() == [] and runtime.publish_sim("/dev/pts/9", "sim1") is None
    with pytest.raises(link.UserError) as err:
        link.discover(request_timeout=0.2)
    assert "no board found" in str(err.value)
    from host.sync import relay

    rel = relay.Relay("/dev/ttyACM0", relay.Requests())
    assert rel.open() is False and "runtime directory" in rel.note
    rel.close()

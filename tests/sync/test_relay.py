"""The names relay (host/sync/relay.py) never removes a socket it cannot
prove dead, bounds every request in time and depth, answers each in one
line, and keeps its socket path under the AF_UNIX limit.

Real Unix sockets in a private runtime directory; the relay's owner is
this process (its owner file names it), a dead owner a pid no process has.
"""

import json
import os
import socket
import threading
import time

import pytest

from host import runtime
from host.errors import UserError
from host.sync import relay

DEAD_PID = 2 ** 22 + 4321  # above Linux's largest pid_max: no process has it


@pytest.fixture
def rundir(monkeypatch, tmp_path):
    d = tmp_path / "r"
    d.mkdir(mode=0o700)  # platformdirs takes XDG_RUNTIME_DIR only if private
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(d))
    return d


@pytest.fixture
def live(rundir):
    rel = relay.Relay("/dev/ttyACM0", relay.Requests())
    assert rel.open()
    yield rel
    rel.close()


def raw_request(path, data, pause=0.0):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(10)
    s.connect(path)
    with s:
        try:
            for i in range(0, len(data), 1 if pause else len(data)):
                s.sendall(data[i:i + (1 if pause else len(data))])
                time.sleep(pause)
        except BrokenPipeError:  # the relay answered and closed before the trickle ended
            pass
        out = b""
        while not out.endswith(b"\n"):
            chunk = s.recv(4096)
            if not chunk:
                break
            out += chunk
    return out


def test_concurrent_clients_never_remove_a_live_relays_socket(live):
    """The finding: eight clients at once removed a live `serve`'s socket
    (a full backlog taken for a dead socket)."""
    answers = []

    def ask():
        try:
            answers.append(relay.ask_socket(live.path, None))
        except UserError as err:
            answers.append(str(err))

    for _ in range(5):
        threads = [threading.Thread(target=ask) for _ in range(32)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
    assert os.path.exists(live.path)
    assert answers.count({"ok": True}) >= 32 * 5 - 10, answers[:5]
    assert relay.ask_socket(live.path, None) == {"ok": True}


def test_a_busy_socket_is_not_taken_for_a_dead_one(rundir, monkeypatch):
    """An owner that does not accept (its backlog full): clients time out,
    the socket stays."""
    monkeypatch.setattr(relay, "ANSWER_S", 0.3)
    path = runtime.relay_path("/dev/ttyACM9")
    relay._write_owner(path)
    busy = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    busy.bind(path)
    busy.listen(0)
    try:
        for _ in range(4):
            try:
                relay.ask_socket(path, None)
            except UserError as err:
                assert "\n" not in str(err)
        assert os.path.exists(path)
    finally:
        busy.close()


def _dead_socket(path, owner):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(path)
    s.close()  # the file stays; nobody listens: a connection is refused
    with open(path + ".pid", "w") as f:
        json.dump(owner, f)


def test_a_refused_socket_whose_owner_is_gone_is_removed(rundir):
    path = runtime.relay_path("/dev/ttyACM1")
    _dead_socket(path, [DEAD_PID, 1])
    assert relay.ask_socket(path, None) is None
    assert not os.path.exists(path) and not os.path.exists(path + ".pid")


def test_a_refused_socket_whose_owner_runs_is_kept(rundir):
    """Between its bind and its listen an owner refuses: not dead."""
    path = runtime.relay_path("/dev/ttyACM1")
    _dead_socket(path, relay._me())
    assert relay.ask_socket(path, None) is None
    assert os.path.exists(path)
    assert relay.Relay("/dev/ttyACM1", relay.Requests()).open() is False  # nor replaced by another owner


def test_a_new_owner_replaces_a_socket_proven_dead(rundir):
    path = runtime.relay_path("/dev/ttyACM1")
    _dead_socket(path, [DEAD_PID, 1])
    rel = relay.Relay("/dev/ttyACM1", relay.Requests())
    try:
        assert rel.open() is True and relay.ask_socket(path, None) == {"ok": True}
    finally:
        rel.close()
    assert not os.path.exists(path)


def test_a_trickled_request_is_cut_off_at_its_deadline_with_one_line(live, monkeypatch):
    monkeypatch.setattr(relay, "REQUEST_S", 0.5)
    t0 = time.monotonic()
    out = raw_request(live.path, b'{"names": ["Ann"]}\n', pause=0.1)
    ans = json.loads(out)
    assert out.count(b"\n") == 1 and "within its time" in ans["error"]
    assert time.monotonic() - t0 < 5


@pytest.mark.parametrize("depth", [40, 2000])
def test_a_deeply_nested_request_is_answered_in_one_line(live, depth):
    out = raw_request(live.path, b"[" * depth + b"]" * depth + b"\n")
    ans = json.loads(out)
    assert out.count(b"\n") == 1 and ans["error"].startswith("bad relay request") and "nested" in ans["error"]
    assert relay.ask_socket(live.path, None) == {"ok": True}  # the relay goes on


def _fake_relay(path, answer, pause=0.0):
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(path)
    srv.listen(4)

    def run():
        while True:
            try:
                conn, _ = srv.accept()
            except OSError:
                return
            with conn:
                conn.recv(4096)
                try:
                    for i in range(len(answer)):
                        conn.sendall(answer[i:i + 1])
                        time.sleep(pause)
                except OSError:
                    pass

    threading.Thread(target=run, daemon=True).start()
    return srv


@pytest.mark.parametrize("answer", [b"[1, 2]\n", b'{"names": 3}\n', b'{"ok": true}\n', b"[" * 3000 + b"\n", b"\xff\n"])
def test_an_odd_relay_answer_is_one_line(rundir, answer):
    path = runtime.relay_path("/dev/ttyACM2")
    srv = _fake_relay(path, answer)
    try:
        with pytest.raises(UserError) as err:
            relay.send_names("/dev/ttyACM2", ["Ann"])
        assert "\n" not in str(err.value) and "Traceback" not in str(err.value)
    finally:
        srv.close()


def test_a_relay_that_trickles_its_answer_is_given_up_in_time(rundir, monkeypatch):
    monkeypatch.setattr(relay, "ANSWER_S", 0.3)
    path = runtime.relay_path("/dev/ttyACM2")
    srv = _fake_relay(path, b'{"ok": true, "names": ["Ann"]}\n', pause=0.2)
    try:
        t0 = time.monotonic()
        with pytest.raises(UserError) as err:
            relay.send_names("/dev/ttyACM2", ["Ann"])
        assert "did not answer" in str(err.value) and time.monotonic() - t0 < 5
    finally:
        srv.close()


def test_the_socket_path_stays_under_the_af_unix_limit(monkeypatch, tmp_path):
    d = tmp_path / ("x" * max(1, 60 - len(str(tmp_path))))  # a long XDG_RUNTIME_DIR (the old name passed 108 bytes here)
    d.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(d))
    port = "/dev/serial/by-id/usb-Raspberry_Pi_Pico_E6614C311B4A7B2F-if00-" + "y" * 60
    path = runtime.relay_path(port)
    assert path.startswith(str(d)) and len(path.encode()) < 104
    rel = relay.Relay(port, relay.Requests())
    try:
        assert rel.open() and relay.ask_socket(path, None) == {"ok": True}
    finally:
        rel.close()


def test_a_socket_that_cannot_be_made_is_a_note_not_a_failure(monkeypatch, tmp_path):
    d = tmp_path / ("z" * 120)
    d.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(d))
    assert runtime.relay_path("/dev/ttyACM0").startswith(str(d))
    rel = relay.Relay("/dev/ttyACM0", relay.Requests())
    assert rel.open() is False and "no relay for `names`" in rel.note and "\n" not in rel.note
    rel.close()

"""The host's fault campaign: nothing stored, sent by a board or sent to the
dashboard can lock a player out of their plays.

Three parts, every command in its own process (`python -m host.cli`), the
board on a real pty (tests/kit/hostile_board.py), the server on loopback only:

* the damaged-database matrix: every case of tests/kit/damaged_db.py
  (malformed pages, missing tables, empty/TEXT records, bad dates, an empty
  or foreign file, a stored refused record) through `plays`, `export`,
  `sync` (a good board attached) and `serve` (its /history page);
* a hostile board: refused records, odd hellos and replies, ids and texts
  with terminal escapes, through `sync`, `plays` and `doctor`;
* an HTTP campaign against `bloomkeeper serve`: path traversal, odd
  methods, foreign Host headers, half-sent requests, 100 event-stream
  clients at once, abandoned and reset connections.

Counted (the budget of the last four is 0):
host_fault_cases               commands / requests tried
host_fault_tracebacks          a Python traceback on stderr or in a page
host_fault_wrong_acceptances   something that should have been refused was
                               not: a refused file changed or read as good, a
                               refused record stored in a play, a raw control
                               character printed, a foreign Host or traversal
                               answered with a page
host_fault_hangs               a command past its time cap, a request with no
                               answer, a half-sent request never closed
host_fault_plays_unreadable    plays whose own records are intact that a
                               command did not show (or a sync made unreadable)
"""

import json
import os
import re
import shutil
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CMD_CAP_S = 60  # a command that takes longer is a hang
HALF_SENT = 30  # slowloris connections
SSE_CLIENTS = 100
ESC = "\x1b]0;owned\x07\x1b[2J"


class Tally:
    def __init__(self):
        self.cases = self.tracebacks = self.wrong = self.hangs = self.unreadable = 0
        self.notes = []

    def note(self, kind, what):
        setattr(self, kind, getattr(self, kind) + 1)
        if len(self.notes) < 20:
            self.notes.append("%s: %s" % (kind, what))


def bk(t, *args):
    """One command; counted; a traceback or a hang tallied. Returns the
    CompletedProcess, or None when it hung."""
    t.cases += 1
    try:
        r = subprocess.run([sys.executable, "-m", "host.cli", *args], cwd=ROOT, capture_output=True, text=True,
                           timeout=CMD_CAP_S)
    except subprocess.TimeoutExpired:
        t.note("hangs", " ".join(args)[:120])
        return None
    if "Traceback" in r.stderr or "Traceback" in r.stdout:
        t.note("tracebacks", " ".join(args)[:120])
    return r


def _raw_control(text):
    return any(c in text for c in "\x1b\x07\x9b")


def intact_plays(path):
    """Plays whose rows SQLite reads and the engine accepts whole, counted
    straight from the file (None if the file cannot be opened at all)."""
    import host.sync.db

    try:
        con = sqlite3.connect("file:%s?mode=ro" % path, uri=True)
        ids = [r[0] for r in con.execute("SELECT id FROM games")]
    except sqlite3.Error:
        return None
    n = 0
    for pid in ids:
        try:
            recs = [r[0] for r in con.execute("SELECT record FROM events WHERE game=? ORDER BY idx", (pid,))]
        except sqlite3.Error:
            continue
        if recs and host.sync.db.judge(recs)[1] is None:
            n += 1
    con.close()
    return n


def shown_plays(t, path):
    r = bk(t, "plays", "--json", "--db", path)
    if r is None or r.returncode != 0:
        return None
    try:
        return len(json.loads(r.stdout))
    except ValueError:
        return None


def good_board(uid="fresh"):
    from tests.kit.hostile_board import HostileBoard

    b = HostileBoard(uid=uid)
    with open(os.path.join(ROOT, "tests", "records", "stalk-2p.jsonl")) as f:
        b.load([x for x in f.read().splitlines() if x.strip()], finish=True)
    return b


# -- the damaged-database matrix ----------------------------------------------------

def serve_history(t, path):
    """`serve --port none` on the file: its /history page, or its one line."""
    t.cases += 1
    p = subprocess.Popen([sys.executable, "-m", "host.cli", "serve", "--port", "none", "--db", path, "--http", "127.0.0.1:0"],
                         cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = p.stdout.readline()
        m = re.search(r"http://(\S+):(\d+)/", line)
        if not m:
            p.wait(CMD_CAP_S)
            err = p.stderr.read()
            if "Traceback" in err:
                t.note("tracebacks", "serve %s" % path)
            return None, err
        import urllib.request
        import urllib.error

        try:
            with urllib.request.urlopen("http://%s:%s/history" % m.groups(), timeout=CMD_CAP_S) as r:
                body = r.read().decode()
        except urllib.error.HTTPError as e:
            body = e.read().decode()
        except OSError:
            t.note("hangs", "serve /history %s" % path)
            body = ""
        return body, ""
    finally:
        p.kill()
        p.wait(10)
        err = p.stderr.read() if p.stderr else ""
        if "Traceback" in err:
            t.note("tracebacks", "serve %s" % path)


def damaged_matrix(t, tmp):
    from tests.kit import damaged_db
    from tests.kit.hostile_board import served

    for name, (make, kind) in sorted(damaged_db.CASES.items()):
        path = os.path.join(tmp, name + ".sqlite3")
        make(path)
        before = open(path, "rb").read()
        intact = intact_plays(path) if kind == "read" else None
        for cmd in (["plays"], ["export", "--format", "json"], ["export", "--format", "csv"]):
            r = bk(t, *cmd, "--db", path)
            if r is None:
                continue
            if kind == "refuse" and (r.returncode != 2 or open(path, "rb").read() != before):
                t.note("wrong", "%s accepted %s" % (cmd[0], name))
            if _raw_control(r.stdout):
                t.note("wrong", "%s printed a raw control character for %s" % (cmd[0], name))
        if kind == "read":
            shown = shown_plays(t, path)
            if shown is None or shown < intact:
                t.note("unreadable", "%s: %s of %d intact plays shown" % (name, shown, intact))
        body, _ = serve_history(t, path)
        if kind == "read" and (body is None or body.count('<tr class="play">') < intact):
            t.note("unreadable", "serve /history %s" % name)
        if kind == "refuse" and body is not None and '<tr class="play">' in body:
            t.note("wrong", "serve showed plays of %s" % name)
        with served(good_board()) as port:
            r = bk(t, "sync", "--port", port, "--db", path)
        if r is not None and name == "empty-file":  # what an older release's cut sync left: sync takes it as new
            if r.returncode != 0:
                t.note("wrong", "sync refused %s" % name)
        elif r is not None and kind == "refuse" and (r.returncode != 2 or open(path, "rb").read() != before):
            t.note("wrong", "sync accepted %s" % name)
        if kind == "read":
            after = intact_plays(path)
            if after is not None and intact is not None and after < intact:
                t.note("unreadable", "sync into %s made plays unreadable" % name)


# -- a hostile board -----------------------------------------------------------------

def hostile_board(t, tmp):
    from tests.kit.hostile_board import HostileBoard, served

    db = os.path.join(tmp, "hostile.sqlite3")
    with served(good_board("good")) as port:
        bk(t, "sync", "--port", port, "--db", db)
    lines = [x for x in open(os.path.join(ROOT, "tests", "records", "orchids-2p.jsonl")).read().splitlines() if x.strip()]
    refusals = [[b"\xff"], [b"\x00"], [b""], [b"\x01\x02\x03\x04\x05\x06\x07\x08"], [bytes(range(200))]]
    for i, extra in enumerate(refusals):
        b = HostileBoard(uid="bad%d" % i)
        b.load(lines[:8])
        b.extra[b.current()] = extra
        with served(b) as port:
            r = bk(t, "sync", "--port", port, "--db", db)
        if r is not None and (r.returncode != 2 or "refused" not in r.stderr):
            t.note("wrong", "sync of refused record %r exited %s" % (extra[0][:8], r.returncode))
    hellos = [{"board": None}, {"board": 7}, {"id": ["x"]}, {"board": "b" * 300}, {"proto": None}, {"id": 3.5}]
    for h in hellos:
        b = good_board("odd")
        b.hello = h
        with served(b) as port:
            for cmd in (["sync", "--db", db], ["doctor"]):
                r = bk(t, *cmd, "--port", port)
                if r is not None and r.returncode != 2:
                    t.note("wrong", "%s accepted hello %r" % (cmd[0], h))
    replies = [("games", {"current": None}), ("games", {"current": "0001", "archived": [["0001"]]}),
               ("games", {"current": ESC, "archived": []}), ("faults", {}), ("faults", {"faults": 1}),
               ("status", {"screen": ESC}), ("time", {"up": "soon"}), ("settings", {"names": ESC})]
    for op, reply in replies:
        b = good_board("reply")
        b.replies[op] = reply
        with served(b) as port:
            for cmd in (["sync", "--db", db], ["doctor"]):
                r = bk(t, *cmd, "--port", port)
                if r is not None and _raw_control(r.stdout + r.stderr):
                    t.note("wrong", "%s printed raw control characters from %s" % (cmd[0], op))
    for uid in ("evil" + ESC, "\x9b31m", "tab\there", "new\nline"):
        b = good_board(uid)
        b.faults = lambda: ESC + "\n"
        with served(b) as port:
            for cmd in (["sync", "--db", db], ["doctor"]):
                r = bk(t, *cmd, "--port", port)
                if r is not None and _raw_control(r.stdout + r.stderr):
                    t.note("wrong", "%s printed a board id raw" % cmd[0])
    r = bk(t, "plays", "--db", db)
    if r is not None:
        if r.returncode != 0:
            t.note("unreadable", "plays after the hostile boards: exit %d" % r.returncode)
        if _raw_control(r.stdout):
            t.note("wrong", "plays printed a board id raw")
    import host.sync.db

    con = sqlite3.connect(db)
    for (pid,) in con.execute("SELECT id FROM games").fetchall():
        recs = [x[0] for x in con.execute("SELECT record FROM events WHERE game=? ORDER BY idx", (pid,))]
        if host.sync.db.judge(recs)[1] is not None:
            t.note("wrong", "a refused record is stored in play %d" % pid)
    con.close()
    shown = shown_plays(t, db)
    if shown is None or shown < intact_plays(db):
        t.note("unreadable", "plays after the hostile boards: %s shown" % shown)


# -- HTTP ----------------------------------------------------------------------------

def _ask(host, port, data, timeout=20):
    """Raw bytes in, the whole answer out; None if nothing came back in time."""
    try:
        with socket.create_connection((host, port), timeout=timeout) as c:
            c.sendall(data)
            out = b""
            while True:
                got = c.recv(65536)
                if not got:
                    return out.decode("utf-8", "replace")
                out += got
    except socket.timeout:
        return None
    except OSError as e:
        return "RESET %s" % e


def _status(reply):
    try:
        return int(reply.split(" ", 2)[1])
    except (IndexError, ValueError, AttributeError):
        return None


def http_campaign(t, tmp):
    from tests.kit import dashboard_kit

    db = os.path.join(tmp, "http.sqlite3")
    dashboard_kit.fill_db(db, names=("stalk-2p.jsonl", "orchids-2p.jsonl"))
    p = subprocess.Popen([sys.executable, "-m", "host.cli", "serve", "--port", "none", "--db", db, "--http", "127.0.0.1:0"],
                         cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        m = re.search(r"http://(\S+):(\d+)/", p.stdout.readline())
        host, port = m.group(1), int(m.group(2))
        me = "127.0.0.1:%d" % port

        def req(method, path, hosthdr=me, expect=None, forbidden="<tr"):
            t.cases += 1
            r = _ask(host, port, ("%s %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n" % (method, path, hosthdr)).encode())
            if r is None:
                t.note("hangs", "%s %s" % (method, path))
                return
            if "Traceback" in r:
                t.note("tracebacks", "%s %s" % (method, path))
            code = _status(r)
            if expect is not None and code not in expect:
                t.note("wrong", "%s %s Host %s answered %s" % (method, path, hosthdr, code))
            elif forbidden and forbidden in r and code != 200:
                t.note("wrong", "%s %s leaked a page" % (method, path))

        for path in ("/../../etc/passwd", "/%2e%2e/%2e%2e/etc/passwd", "/..%2f..%2fetc/passwd", "//etc/passwd",
                     "/game?play=../../etc/passwd", "/history/../../../etc/passwd", "/static/../../x", "/\x00",
                     "/game?play=1%00", "/game?play=" + "9" * 5000, "/" + "a" * 10000):
            req("GET", path, expect=(400, 404, 414, 431))
        for method in ("POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE", "CONNECT", "BREW", "get", "M" * 300):
            req(method, "/history", expect=(405, 400, 501))
        for hosthdr in ("evil.example", "evil.example:%d" % port, "127.0.0.1.nip.io:%d" % port, "", "localhost.evil",
                        "[::2]:%d" % port, "0.0.0.0:%d" % port):
            req("GET", "/history", hosthdr=hosthdr, expect=(421,))
        for path in ("/", "/history", "/state.json"):
            req("GET", path, expect=(200,), forbidden=None)
            req("HEAD", path, expect=(200,), forbidden=None)
        # half-sent requests: each must be closed by the server (its request deadline)
        socks = []
        for i in range(HALF_SENT):
            t.cases += 1
            s = socket.create_connection((host, port), timeout=60)
            s.sendall(b"GET /history HTTP/1.1\r\nHost: " + me.encode() + (b"\r\nX-slow: 1" if i % 2 else b""))
            socks.append(s)
        for s in socks:
            try:
                if s.recv(100) not in (b"",):
                    pass  # an answer (408/400) is fine too: the point is that it ends
            except socket.timeout:
                t.note("hangs", "a half-sent request was never closed")
            except OSError:
                pass
            s.close()
        # abandoned: connect and close, or reset mid-request
        import struct

        for i in range(50):
            t.cases += 1
            s = socket.create_connection((host, port), timeout=10)
            if i % 2:
                s.sendall(b"GET /history HTTP/1.1\r\nHost: " + me.encode() + b"\r\n")
                s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            s.close()
        # 100 event-stream clients at once
        streams = []
        for i in range(SSE_CLIENTS):
            t.cases += 1
            s = socket.create_connection((host, port), timeout=30)
            s.sendall(("GET /events HTTP/1.1\r\nHost: %s\r\n\r\n" % me).encode())
            streams.append(s)
        for s in streams:
            try:
                head = s.recv(4096)
                if not head.startswith(b"HTTP/1.0 200"):
                    t.note("wrong", "an event stream client got %r" % head[:40])
            except socket.timeout:
                t.note("hangs", "an event stream client got nothing")
        req("GET", "/history", expect=(200,), forbidden=None)  # served while 100 streams are open
        for s in streams:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            s.close()
        req("GET", "/history", expect=(200,), forbidden=None)
    finally:
        p.terminate()
        try:
            p.wait(10)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait(10)
        err = p.stderr.read()
        if "Traceback" in err:
            t.note("tracebacks", "serve's terminal: %s" % err[err.index("Traceback"):][:200])


def measure():
    t0 = time.monotonic()
    t = Tally()
    tmp = tempfile.mkdtemp(prefix="bk-host-faults-")
    try:
        damaged_matrix(t, tmp)
        hostile_board(t, tmp)
        http_campaign(t, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    for n in t.notes:
        print("  " + n)
    return {
        "host_fault_cases": t.cases,
        "host_fault_tracebacks": t.tracebacks,
        "host_fault_wrong_acceptances": t.wrong,
        "host_fault_hangs": t.hangs,
        "host_fault_plays_unreadable": t.unreadable,
        "host_fault_seconds": round(time.monotonic() - t0, 1),
    }


if __name__ == "__main__":
    sys.path.insert(0, ROOT)
    for k, v in measure().items():
        print("%-34s %s" % (k, v))

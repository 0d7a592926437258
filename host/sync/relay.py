"""The next game's names, while another process holds the board's port.

A serial port has one owner: while `serve` or `follow` runs, `names` cannot
open it. So the owner takes the request instead: it listens on a Unix
socket in the user's runtime directory (host/runtime.py `relay_path`), and
the dashboard's names form hands it the same request in-process. Either
way the request waits in `Requests` until the owner's own loop sends it
over its link (HostLink.settings, the very call `names` makes), so the
link is only ever used from the thread that owns it.

The wire between `names` and the owner: one JSON line each way,
{"names": [...]} -> {"ok": true, "names": [...]} or {"error": "one line"}.
"""

import errno
import json
import os
import queue
import socket
import threading
import time

from host import runtime
from host.errors import UserError
from host.io_util import loads_strict, read_bytes

ANSWER_S = 10.0  # the owner answers within this (its loop turns every 0.1-0.2 s)
REQUEST_MAX = 4096  # bytes of one request line
REQUEST_S = 5.0  # a request line comes whole within this, or is answered "not sent whole" (a trickle holds no thread)


def check_names(names):
    """The names as the board takes them (1-12 printable ASCII characters
    each, at most 5, all different), or UserError naming what is wrong."""
    from engine_lite import record
    from engine_lite.tables import MAX_PLAYERS

    if type(names) is not list:
        raise UserError("names must be a list of names")
    for n in names:
        if not record.check_name(n):
            raise UserError("player name %r must be 1-12 printable ASCII characters" % (n,))
    if len(names) > MAX_PLAYERS or len(set(names)) != len(names):
        raise UserError("give up to %d different names" % MAX_PLAYERS)
    return list(names)


def names_words(names):
    """What the board will do with these names: they fill the first seats of
    the next game, the seats after them keep their default "Seat k"."""
    from engine_lite.tables import MAX_PLAYERS

    out = "names on the board: %s" % (", ".join(names) or "none")
    if len(names) < MAX_PLAYERS:
        rest = range(len(names) + 1, MAX_PLAYERS + 1)
        out += "; seat%s %s keep%s the default (%s) when the table has them" % (
            "s" if len(rest) > 1 else "", ", ".join(str(k) for k in rest), "" if len(rest) > 1 else "s",
            ", ".join("Seat %d" % k for k in rest))
    return out



class Requests:
    """Names waiting for the port's owner to send them (thread-safe)."""

    def __init__(self):
        self.q = queue.Queue()

    def submit(self, names, timeout=ANSWER_S):
        """Check the names, wait for the owner to send them; the names the
        board now holds, or UserError (nothing changed)."""
        names = check_names(names)
        box = {"done": threading.Event()}
        self.q.put((names, box))
        if not box["done"].wait(timeout):
            raise UserError("the board's link did not take the names within %g s (is the board connected?)" % timeout)
        if "error" in box:
            raise UserError(box["error"])
        return box["names"]

    def serve(self, link):
        """Send what is waiting (the owner's loop calls this)."""
        while True:
            try:
                names, box = self.q.get_nowait()
            except queue.Empty:
                return
            try:
                s = link.settings({"names": names})
                box["names"] = s.get("names", []) if type(s) is dict else None  # odd reply: the asker says so
            except UserError as err:
                box["error"] = str(err)
            box["done"].set()

    def fail_all(self, why):
        """No link now: answer whoever waits."""
        while True:
            try:
                _, box = self.q.get_nowait()
            except queue.Empty:
                return
            box["error"] = why
            box["done"].set()


class Relay(threading.Thread):
    """The owner's socket: each connection is one request for `requests`.

    Beside the socket, `<socket>.pid` names its owner (pid and start time,
    host/runtime.py), written before the socket is bound: a socket is
    removed only when it is proven dead, that is when a connection to it
    is refused AND its owner is gone (`_stale`). A busy socket (its
    backlog full, a slow owner) is never taken for a dead one."""

    def __init__(self, port, requests):
        threading.Thread.__init__(self, name="relay", daemon=True)
        self.requests = requests
        self.sock = None
        self.note = None  # why this process does not relay (None: it does, or another live one does)
        try:
            self.path = runtime.relay_path(port)
        except UserError as err:  # no runtime directory: no relay, all else goes on
            self.path = None
            self.note = "no relay for `names`: %s" % err

    def open(self):
        """Listen (a socket proven dead is replaced); False when another
        process relays this port, or when the socket cannot be made (then
        `note` says why: `names` cannot reach this board, all else goes on)."""
        if self.path is None or os.path.exists(self.path) and not _stale(self.path):
            return False
        try:
            _write_owner(self.path)
            runtime.unpublish(self.path)
            self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self.sock.bind(self.path)
            os.chmod(self.path, 0o600)
            self.sock.listen(16)
        except OSError as err:
            self.note = "no relay for `names` at %s: %s" % (self.path, err.strerror or err)
            if self.sock is not None:
                self.sock.close()
                self.sock = None
            return False
        self.start()
        return True

    def close(self):
        if self.sock is not None:
            if _owner(self.path) == _me():  # still ours (not replaced by a later owner)
                runtime.unpublish(self.path)
                runtime.unpublish(self.path + ".pid")
            try:
                self.sock.close()
            except OSError:
                pass

    def run(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return  # closed
            threading.Thread(target=self._one, args=(conn,), daemon=True).start()

    def _one(self, conn):
        with conn:
            try:
                req = loads_strict(_line(conn, time.monotonic() + REQUEST_S))
                if type(req) is not dict:
                    raise UserError("a relay request is a JSON object")
                if "names" not in req:  # a liveness check
                    ans = {"ok": True}
                else:
                    ans = {"ok": True, "names": self.requests.submit(req["names"])}
            except UserError as err:
                ans = {"error": str(err)}
            except (ValueError, OSError) as err:  # JsonInputError (too deep, not JSON) is a ValueError
                ans = {"error": "bad relay request: %s" % " ".join(str(err).split())}
            try:
                conn.settimeout(2.0)
                conn.sendall((json.dumps(ans) + "\n").encode())
            except OSError:
                pass


def _line(conn, deadline):
    """One line from `conn`, whole before `deadline` (time.monotonic()): a
    peer that trickles bytes is cut off there, not waited for byte by byte."""
    data = b""
    while not data.endswith(b"\n"):
        left = deadline - time.monotonic()
        if left <= 0:
            raise ValueError("not sent whole within its time")
        conn.settimeout(left)
        try:
            chunk = conn.recv(512)
        except socket.timeout:
            raise ValueError("not sent whole within its time")
        if not chunk:
            break
        data += chunk
        if len(data) > REQUEST_MAX:
            raise ValueError("request too long")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError("not UTF-8")


def _me():
    return [os.getpid(), runtime.started(os.getpid())]


def _write_owner(path):
    tmp = path + ".pid.tmp"
    with open(tmp, "w") as fh:
        json.dump(_me(), fh)
    os.replace(tmp, path + ".pid")


def _owner(path):
    """[pid, start] of the process that made the socket, or None (no
    readable owner file)."""
    try:
        v = json.loads(read_bytes(path + ".pid", 256))
    except (OSError, ValueError, UserError, RecursionError):
        return None
    return v if type(v) is list and len(v) == 2 else None


def _owner_gone(path):
    who = _owner(path)
    if who is None:
        return True  # no owner file: a socket of an older release, or one whose owner removed its file on exit
    pid, start = who
    if not runtime.alive(pid):
        return True
    now = runtime.started(pid)
    return now is not None and start is not None and now != start  # the pid is another process's now


def _connect(path):
    """A connected socket, or the errno of the failure."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(ANSWER_S + 2)
    try:
        s.connect(path)
        return s, None
    except OSError as err:
        s.close()
        return None, err.errno if err.errno is not None else -1


def _stale(path):
    """Proven dead: a connection is refused (nobody listens) and the owner
    is gone. A full backlog, a timeout or an owner still running is not."""
    s, err = _connect(path)
    if s is not None:
        s.close()
        return False
    return err in (errno.ECONNREFUSED, errno.ENOENT) and _owner_gone(path)


def ask_socket(path, names):
    """Send `names` (None: only ask whether it is alive) through one relay
    socket: the answer dict, or None if nobody answers there. A socket is
    removed only when proven dead (`_stale`); the answer must come whole,
    within its time, as a JSON object, else one line (UserError)."""
    s, err = _connect(path)
    if s is None:
        if err in (errno.ECONNREFUSED, errno.ENOENT) and _owner_gone(path):
            runtime.unpublish(path)  # nobody listens and its owner is gone: a socket left by a process that died
            runtime.unpublish(path + ".pid")
        return None
    with s:
        try:
            s.sendall((json.dumps({} if names is None else {"names": names}) + "\n").encode())
            ans = loads_strict(_line(s, time.monotonic() + ANSWER_S + 2))
        except (ValueError, OSError) as err:
            raise UserError("the process holding the port did not answer: %s" % " ".join(str(err).split()))
    if type(ans) is not dict or ("error" in ans and type(ans["error"]) is not str) or (
            "names" in ans and (type(ans["names"]) is not list or not all(type(n) is str for n in ans["names"]))):
        raise UserError("the process holding the port gave an odd answer (not a bloomkeeper relay?)")
    return ans


def send_names(port, names):
    """Through the process that holds `port` (`auto`: the one relay there
    is): the names the board now holds, or None when no process relays it."""
    if port in (None, "", "auto"):
        paths = [p for p in runtime.relays() if ask_socket(p, None) is not None]
        if len(paths) > 1:
            raise UserError("several bloomkeeper processes hold a board: choose one with --port")
    else:
        try:
            paths = [runtime.relay_path(port)]
        except UserError:  # no runtime directory: no relay; `names` goes over the link itself
            return None
    for p in paths:
        if os.path.exists(p):
            ans = ask_socket(p, names)
            if ans is None:
                continue
            if "error" in ans:
                raise UserError(ans["error"])
            if "names" not in ans:
                raise UserError("the process holding the port gave an odd answer (no names)")
            return ans["names"]
    return None

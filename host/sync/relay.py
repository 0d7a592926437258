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

import json
import os
import queue
import socket
import threading

from host import runtime
from host.errors import UserError

ANSWER_S = 10.0  # the owner answers within this (its loop turns every 0.1-0.2 s)
REQUEST_MAX = 4096  # bytes of one request line


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
    """The owner's socket: each connection is one request for `requests`."""

    def __init__(self, port, requests):
        threading.Thread.__init__(self, name="relay", daemon=True)
        self.path = runtime.relay_path(port)
        self.requests = requests
        self.sock = None

    def open(self):
        """Listen (a socket left by a process that died is replaced); False
        when another live process already relays this port."""
        if os.path.exists(self.path) and ask_socket(self.path, None) is not None:
            return False
        runtime.unpublish(self.path)
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(self.path)
        os.chmod(self.path, 0o600)
        self.sock.listen(4)
        self.start()
        return True

    def close(self):
        if self.sock is not None:
            runtime.unpublish(self.path)
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
            conn.settimeout(ANSWER_S + 2)
            try:
                req = json.loads(_line(conn))
                if type(req) is not dict:
                    raise UserError("a relay request is a JSON object")
                if "names" not in req:  # a liveness check
                    ans = {"ok": True}
                else:
                    ans = {"ok": True, "names": self.requests.submit(req["names"])}
            except UserError as err:
                ans = {"error": str(err)}
            except (ValueError, OSError) as err:
                ans = {"error": "bad relay request: %s" % err}
            try:
                conn.sendall((json.dumps(ans) + "\n").encode())
            except OSError:
                pass


def _line(conn):
    data = b""
    while not data.endswith(b"\n"):
        chunk = conn.recv(512)
        if not chunk:
            break
        data += chunk
        if len(data) > REQUEST_MAX:
            raise ValueError("request too long")
    return data.decode("utf-8")


def ask_socket(path, names):
    """Send `names` (None: only ask whether it is alive) through one relay
    socket: the answer dict, or None if nobody listens there (a stale
    socket is removed)."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(ANSWER_S + 2)
    try:
        s.connect(path)
    except OSError:
        s.close()
        runtime.unpublish(path)  # nobody listens: a socket left by a process that died
        return None
    with s:
        s.sendall((json.dumps({} if names is None else {"names": names}) + "\n").encode())
        try:
            return json.loads(_line(s))
        except (ValueError, OSError) as err:
            raise UserError("the process holding the port did not answer: %s" % err)


def send_names(port, names):
    """Through the process that holds `port` (`auto`: the one relay there
    is): the names the board now holds, or None when no process relays it."""
    if port in (None, "", "auto"):
        paths = [p for p in runtime.relays() if ask_socket(p, None) is not None]
        if len(paths) > 1:
            raise UserError("several bloomkeeper processes hold a board: choose one with --port")
    else:
        paths = [runtime.relay_path(port)]
    for p in paths:
        if os.path.exists(p):
            ans = ask_socket(p, names)
            if ans is None:
                continue
            if "error" in ans:
                raise UserError(ans["error"])
            return ans["names"]
    return None

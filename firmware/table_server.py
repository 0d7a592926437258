"""The table on the players' phones: a tiny read-only web server, polled in
the board's loop (the Pico W image; the simulator runs the same code).

Why polled sockets and not threads or asyncio: the board's loop already
turns every ~2 ms (firmware/main.py); one more call per turn, poll(), that
asks the sockets with `select.poll().ipoll(0)` (allocation-free in
MicroPython) costs nothing while no phone talks, and the game's own work
(press -> light -> flash) always comes first in the turn.

What it serves (GET or HEAD only; anything a request sends is read, never
acted on: the server holds no reference to anything that changes the game
or the settings, only to the App whose game it reads):
  /            the table page (firmware/table_page.py: gzip if accepted)
  /events      Server-Sent Events: `event: state` with the table as JSON,
               pushed in the loop turn after the ring showed a change
  /state.json  the same JSON once
Anything else is a 4xx and one log line.

Bounds (docs/design.md "The table on the phones"):
  MAX_CONN connections at once (more are accepted and closed at once:
  the backlog never fills); a request line and its headers within REQ_MAX
  bytes and REQ_MS; no send may stall longer than SEND_MS (a phone that
  vanished is dropped then, its buffer is shared and nothing else is
  held); an idle event stream gets a comment every KEEP_MS. Each
  connection's buffer is preallocated: a request costs no heap but its
  socket object and its parsed line.

The round so far (the events of the last n turns, engine_lite/readout.py
last_round) comes from the records the App acknowledges: its on_event hook
keeps a reference to each in a ring of ROUND_MAX slots made at start (the
records are the engine's immutable bytes: no copy, nothing allocated in
the press's turn); the state is built from them off the press's path.

The state JSON is built once per change (not per phone) and every event
stream sends the same bytes object; a phone that is still sending an older
state gets the newest one when it is done (each state is whole: nothing is
queued per phone).
"""

import json
import select
import socket

from engine_lite import const
from firmware.buttons import ticks_diff

MAX_CONN = 8  # 6 phones and 2 spare (a reload opens a new stream before the old one closes)
REQ_MAX = 1024  # bytes of request line + headers
REQ_MS = 3000  # a request must arrive whole within this
SEND_MS = 5000  # a send that makes no progress for this long: the phone is gone
KEEP_MS = 15000  # an idle event stream gets a comment this often (phones drop silent streams)
CHECK_MS = 100  # deadlines are looked at this often, not every turn
ROUND_MAX = 40  # records kept for the round so far: engine_lite/readout.py ROUND_MAX (tests/board/test_table_server.py holds them equal)
_OP_UNDO = const(11)  # record.OP_UNDO, folded (tests/house/test_folded_consts.py): App.on_event's undo

_FREE = 0
_READ = 1  # reading the request
_SEND = 2  # sending a response, closing after it
_STREAM = 3  # an event stream

_PIN = select.POLLIN
_POUT = select.POLLOUT
_PERR = select.POLLERR | select.POLLHUP

_HEAD = b"HTTP/1.1 %d %s\r\nContent-Type: %s\r\nCache-Control: no-store\r\nConnection: close\r\n"
_REASONS = {400: "Bad Request", 404: "Not Found", 405: "Method Not Allowed", 431: "Request Header Fields Too Large"}


class _Conn:
    """One connection slot; the slots and their buffers live as long as the server."""

    def __init__(self):
        self.sock = None
        self.fd = None  # its file number where poll() answers with numbers (CPython)
        self.mode = _FREE
        self.buf = bytearray(REQ_MAX)
        self.got = 0
        self.at = 0  # when the current read or send last made progress (or began)
        self.out = None  # bytes being sent
        self.off = 0
        self.then = None  # sent after `out` (a page's body after its head)
        self.v = 0  # the state version this stream sent last


def _send(sock, data, off):
    """Bytes sent now (0 if the socket would block)."""
    try:
        n = sock.send(memoryview(data)[off:] if off else data)
    except OSError as e:
        if e.args and e.args[0] in (11, 35):  # EAGAIN / EWOULDBLOCK (Linux, macOS)
            return 0
        raise
    return n or 0


def _recv(sock, n):
    """Bytes read now: b"" at the peer's close, None if it would block."""
    try:
        return sock.recv(n)
    except OSError as e:
        if e.args and e.args[0] in (11, 35):
            return None
        raise


class TableServer:
    """poll() once per loop turn; close() at the end."""

    def __init__(self, app, host="0.0.0.0", port=80, clock=None, log=None, board=""):
        from firmware import table_page
        import engine_lite.readout  # noqa: F401 - at start, not in the turn after a game's first press: its import is the slowest push (docs/design.md)

        self.app = app
        self.clock = clock if clock is not None else app.clock
        self.log = log  # fn(line), or None: refusals are only counted (the board's USB is the host link)
        self.board = board
        self.page = table_page.PAGE
        self.page_gz = table_page.PAGE_GZ
        self.refused = 0  # requests answered with an error or dropped
        self.served = 0
        self.last_refusal = ""
        ai = socket.getaddrinfo(host, port)[0][-1]
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(ai)
        s.listen(4)
        s.setblocking(False)
        self.sock = s
        # MicroPython's ipoll answers with the registered objects and
        # allocates nothing; CPython's poll answers with file numbers
        self._fds = s.fileno() if not hasattr(select.poll(), "ipoll") else None
        self.poller = select.poll()
        self.poller.register(s, _PIN)
        self.conns = [_Conn() for _ in range(MAX_CONN)]
        self._game = None  # the game object the last state was built from
        self._n = -1  # its log length then
        self.v = 0  # the state version (bumped on each change)
        self.event = b""  # the newest state as one SSE event
        self.state = b"{}"  # the newest state as JSON
        self._check_at = self.clock()
        self._recs = [None] * ROUND_MAX  # the newest records, slot = log index % ROUND_MAX
        self._gid = None  # the game they are of
        self._lo = 1  # the first log index held (the start record is not a round's)
        self._top = 1  # one past the highest index written since _lo
        self._count = 1  # the game's log length as last heard
        self._seed()
        app.on_event.append(self._heard)
        self._rebuild()

    # -- the loop's call -------------------------------------------------

    def poll(self):
        """Serve what the sockets have ready, push a changed state. An idle
        turn (no traffic, no change) allocates nothing, not even a call's
        frame: every function here keeps to a few locals (a frame of more
        than 11 slots comes from the heap in MicroPython, every call)."""
        if self._changed():
            self._rebuild()
            self._push()
        self._sockets()
        if ticks_diff(self.clock(), self._check_at) >= CHECK_MS:
            self._deadlines()

    def _sockets(self):
        if self._fds is None:
            for ready in self.poller.ipoll(0):
                self._serve(ready[0], ready[1])
        else:
            for ready in self.poller.poll(0):
                self._serve(ready[0], ready[1])

    def _deadlines(self):
        now = self._check_at = self.clock()
        for c in self.conns:
            if c.mode != _FREE:
                self._due(c, now)

    def _changed(self):
        """Is the game (or the last one) not the one the state was built from?"""
        g = self.app.game
        if g is None:
            g = self.app.last_game
        return g is not self._game or (g is not None and len(g.log) != self._n)

    def _serve(self, obj, ev):
        if obj is self.sock or obj == self._fds:
            self._accept()
        else:
            self._ready(obj, ev)

    def close(self):
        for c in self.conns:
            if c.sock is not None:
                self._close(c)
        self.poller.unregister(self.sock)
        self.sock.close()

    # -- the round so far ---------------------------------------------------

    def _seed(self):
        """The game in progress's newest records, read once at start (a
        board that restarts mid-round shows the round it left)."""
        g = self.app.game
        if g is None or g.table is None:
            return
        n = len(g.log)
        lo = max(1, n - ROUND_MAX)
        i = lo
        for rec in g.log.records(lo):
            self._recs[i % ROUND_MAX] = bytes(rec)
            i += 1
        self._gid, self._lo, self._top, self._count = self.app.store.game_id, lo, n, n

    def _heard(self, gid, index, rec):
        """App.on_event: a durable change. No allocation (a press's turn)."""
        if gid != self._gid or index == 0:
            self._gid, self._lo, self._top, self._count = gid, index if index else 1, index, index
        if rec[0] == _OP_UNDO:
            self._count = index  # the log holds `index` records now
            return
        if index:
            self._recs[index % ROUND_MAX] = rec
        self._count = index + 1
        if self._count > self._top:
            self._top = self._count

    def _round(self, g):
        """The round so far of game `g` (the one the records are of), or []."""
        lo = max(self._lo, self._top - ROUND_MAX)
        if self._gid is None or g is None or g.table is None or len(g.log) != self._count or self._count <= lo:
            return []
        from engine_lite.readout import last_round

        return last_round([self._recs[i % ROUND_MAX] for i in range(lo, self._count)], g.table)

    # -- the state -------------------------------------------------------

    def _rebuild(self):
        """The table as JSON (the page's one input), built once per change."""
        app = self.app
        g = app.game
        live = g is not None
        if g is None:
            g = app.last_game
        self._game = g
        self._n = len(g.log) if g is not None else -1
        st = g.state() if g is not None and g.table is not None else {"game": None}
        if st["game"] == "stalk-exchange" and "final" not in st:
            # who would bust if the game ended now: the rule's one place, engine_lite.stalk.bust
            from engine_lite import stalk
            from engine_lite.vocab import FLOWERS

            st["will_bust"] = [] if st["game_over"] else stalk.bust(bytearray([st["values"][f] for f in FLOWERS]))[1]
        doc = json.dumps({"board": self.board, "live": live, "v": self.v + 1, "table": st, "round": self._round(g)})
        self.v += 1
        self.state = doc.encode() if isinstance(doc, str) else doc
        self.event = b"event: state\ndata: " + self.state + b"\n\n"

    def _push(self):
        for c in self.conns:
            if c.mode == _STREAM and c.out is None:
                self._stream_next(c)

    def _stream_next(self, c):
        """Give a stream the newest state, or nothing if it has it."""
        if c.v != self.v:
            c.v = self.v
            c.out, c.off, c.at = self.event, 0, self.clock()
            self._flush(c)

    # -- connections -----------------------------------------------------

    def _slot(self, sock):
        for c in self.conns:
            if c.sock is sock or (c.fd is not None and c.fd == sock):
                return c
        return None

    def _accept(self):
        try:
            s, addr = self.sock.accept()
        except OSError:
            return
        s.setblocking(False)
        try:  # TCP_NODELAY (IPPROTO_TCP 6, option 1): a push is not held for the last one's ACK (Nagle)
            s.setsockopt(6, 1, 1)
        except OSError:  # a stack without it (lwIP's sockets on the Pico W): the phone's ACK paces pushes, well within a second
            pass
        for c in self.conns:
            if c.mode == _FREE:
                c.sock, c.mode, c.got, c.at, c.out, c.then, c.v = s, _READ, 0, self.clock(), None, None, 0
                c.fd = s.fileno() if self._fds is not None else None
                self.poller.register(s, _PIN)
                return
        self._refuse(None, "too many connections (%d)" % MAX_CONN)
        try:
            s.send(b"HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nRetry-After: 2\r\n\r\n")
        except OSError:
            pass
        s.close()

    def _ready(self, sock, ev):
        c = self._slot(sock)
        if c is None:  # not ours any more
            try:
                self.poller.unregister(sock)
            except (OSError, KeyError, ValueError):
                pass
            return
        try:
            if ev & _PIN or (ev & _PERR and c.mode != _SEND):
                if c.mode == _READ:
                    self._read(c)
                else:  # a stream or response's peer sent more, or closed: a request is one GET
                    d = _recv(c.sock, 64)
                    if not d and d is not None:
                        self._close(c)
                        return
            if c.sock is not None and c.out is not None and ev & (_POUT | _PERR):
                self._flush(c)
        except OSError as e:
            self._refuse(c, "connection error %s" % (e.args[0] if e.args else e))

    def _read(self, c):
        d = _recv(c.sock, REQ_MAX - c.got)
        if d is None:
            return
        if not d:
            self._close(c)  # gone before asking: nothing to log
            return
        n = len(d)
        c.buf[c.got : c.got + n] = d
        c.got += n
        c.at = self.clock()
        end = bytes(c.buf[: c.got]).find(b"\r\n\r\n")
        if end < 0:
            if c.got >= REQ_MAX:
                self._error(c, 431, "request headers over %d bytes" % REQ_MAX)
            return
        self._answer(c, bytes(c.buf[:end]))

    def _answer(self, c, head):
        lines = head.split(b"\r\n")
        parts = lines[0].split(b" ")
        if len(parts) != 3 or not parts[2].startswith(b"HTTP/1."):
            self._error(c, 400, "malformed request line %r" % lines[0][:60])
            return
        method, path = parts[0], parts[1].split(b"?")[0]
        if method not in (b"GET", b"HEAD"):
            self._error(c, 405, "method %r: the table is read-only" % method[:10])
            return
        body = method == b"GET"
        self.served += 1
        if path == b"/":
            gz = False
            for ln in lines[1:]:
                k = ln.split(b":")[0].lower()
                if k == b"accept-encoding" and b"gzip" in ln.lower():
                    gz = True
            data = self.page_gz if gz else self.page
            head = _HEAD % (200, b"OK", b"text/html; charset=utf-8")
            head += (b"Content-Encoding: gzip\r\n" if gz else b"") + b"Vary: Accept-Encoding\r\nContent-Length: %d\r\n\r\n" % len(data)
            self._respond(c, head, data if body else None)
        elif path == b"/state.json":
            head = _HEAD % (200, b"OK", b"application/json") + b"Content-Length: %d\r\n\r\n" % len(self.state)
            self._respond(c, head, self.state if body else None)
        elif path == b"/events":
            head = _HEAD % (200, b"OK", b"text/event-stream") + b"\r\n"
            if not body:
                self._respond(c, head, None)
                return
            c.mode, c.v = _STREAM, 0
            c.out, c.off, c.then, c.at = head, 0, None, self.clock()
            self._flush(c)
        else:
            self._error(c, 404, "no page %r" % path[:60])

    def _respond(self, c, head, body):
        c.mode, c.out, c.off, c.then, c.at = _SEND, head, 0, body, self.clock()
        self._flush(c)

    def _error(self, c, code, why):
        self._refuse(None, "%d %s" % (code, why))
        reason = _REASONS[code]
        msg = ("%d %s: %s\n" % (code, reason, why)).encode()
        head = _HEAD % (code, reason.encode(), b"text/plain") + b"Content-Length: %d\r\n\r\n" % len(msg)
        self._respond(c, head, msg)

    def _flush(self, c):
        """Send what the socket takes now; then the next part, the next
        state (a stream) or the close (a response)."""
        while c.out is not None:
            n = _send(c.sock, c.out, c.off)
            if n <= 0:
                self.poller.modify(c.sock, _PIN | _POUT)
                return
            c.off += n
            c.at = self.clock()
            if c.off < len(c.out):
                continue
            c.out, c.off, c.then = c.then, 0, None
        self.poller.modify(c.sock, _PIN)
        if c.mode == _SEND:
            self._close(c)
        elif c.mode == _STREAM and c.v != self.v:
            self._stream_next(c)

    def _due(self, c, now):
        """Drop a connection past its deadline; keep an idle stream alive."""
        waited = ticks_diff(now, c.at)
        if c.mode == _READ:
            if waited >= REQ_MS:
                self._refuse(c, "request not whole within %d ms (%d bytes)" % (REQ_MS, c.got))
        elif c.out is not None:
            if waited >= SEND_MS:
                self._refuse(c, "a send stalled %d ms: the phone is gone" % SEND_MS)
        elif c.mode == _STREAM and waited >= KEEP_MS:
            self._keepalive(c, now)

    def _keepalive(self, c, now):
        c.out, c.off, c.at = b": still here\n\n", 0, now
        try:
            self._flush(c)
        except OSError as e:
            self._refuse(c, "connection error %s" % (e.args[0] if e.args else e))

    def _refuse(self, c, why):
        """One log line; the connection (if any) closed."""
        self.refused += 1
        self.last_refusal = why
        if self.log is not None:
            self.log("table page: %s" % why)
        if c is not None:
            self._close(c)

    def _close(self, c):
        s = c.sock
        c.sock, c.fd, c.mode, c.out, c.then, c.got = None, None, _FREE, None, None, 0
        if s is None:
            return
        try:
            self.poller.unregister(s)
        except (OSError, KeyError, ValueError):
            pass
        try:
            s.close()
        except OSError:
            pass

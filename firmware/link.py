"""The board's side of the serial link (docs/protocol.md).

`Link(board, port)` answers requests that arrive as frames on `port` and
pushes new events to a subscribed host. It never blocks: the application
calls `poll()` once per loop (App.step does, when given a link). Every frame
is read and written through firmware/codec.py (the wire format, shared with
the host); this module is the device's I/O and its answers to requests:
an 'R' answer, an 'X' error (nothing changed) or the 'E' events.

`board` is any object with this duck-typed interface (AppBoard below wraps
the real App and Store; the tests may use a stand-in):
  board_id, fw, build               strings for the hello (board_id = the board TYPE; build: "frozen" or "files")
  uid                                this board's unique id (or None)
  utc() -> unix seconds or None      its wall clock; set_time(t) sets it
  uptime() -> seconds since boot
  current() -> game id or None       the game in progress
  records(gid) -> list of bytes       its effective records (KeyError: unknown)
  window(gid, start, room) -> (count, prefix crc, records from start)|None
                                     an archived game's, reading only the frames asked for (storage.Store.window)
  archived() -> list of (gid, synced)
  mark_synced(gid)
  status() -> dict                    extra fields for the status answer
  settings() -> dict / push_settings(dict)
  new_game(start_record) / erase(gid) the two dangerous requests
  watch(fn)                           call fn(gid, index, record) after each durable change
  remote_buttons (bool), press(i, kind)  simulator only
  faults() -> str                     the fault log, one line per fault

Every request that is not understood gets an 'X' reply and changes nothing;
dangerous requests (new_game, erase) change something only when they carry
the one-time token that the board gave in its "confirm" error reply.
MicroPython-compatible; no allocation while idle.
"""

import binascii

from engine_lite.tables import TRACK_START_PLACEHOLDER
from engine_lite.vocab import SETTINGS_KEYS
from firmware import codec
from firmware.hw import random32

from engine_lite import const


_MAX_PUSH = const(16)  # live events queued between two polls
_READ_MAX = const(256)  # bytes read per poll



class LinkError(Exception):
    """A request is refused: `code` and a message go back in an 'X' reply."""

    def __init__(self, code, msg, extra=None):
        super().__init__(msg)
        self.code = code
        self.msg = msg
        self.extra = extra


def _gid(req):
    g = req.get("game")
    if type(g) is not str or not 0 < len(g) <= 32:
        raise LinkError("bad_arg", "game: a game id string")
    return g


def _int(req, key, lo, hi, default=None):
    v = req.get(key, default)
    if type(v) is not int or v < lo or v > hi:
        raise LinkError("bad_arg", "%s must be a whole number from %d to %d" % (key, lo, hi))
    return v


def check_settings(s):
    """Validated copy of a settings dict pushed by the host (LinkError if not)."""
    from engine_lite import record

    if type(s) is not dict or not s:
        raise LinkError("bad_arg", "set: a non-empty object")
    out = {}
    for k in s:
        if k not in SETTINGS_KEYS:
            raise LinkError("bad_arg", "unknown setting %s" % k)
    if "names" in s:
        names = s["names"]
        if type(names) is not list or len(names) > 5:
            raise LinkError("bad_arg", "names: a list of up to 5 names")
        for i in range(len(names)):
            if not record.check_name(names[i]) or names[i] in names[:i]:
                raise LinkError("bad_arg", "names: 1-12 printable ASCII characters each, no repeats")
        out["names"] = list(names)
    if "brightness" in s:
        out["brightness"] = _int(s, "brightness", 0, 255)
    if "track_start" in s:
        t = s["track_start"]
        if type(t) is not dict:
            raise LinkError("bad_arg", "track_start: an object")
        out["track_start"] = {}
        for k in t:
            if k not in TRACK_START_PLACEHOLDER:  # its keys: one per table size
                raise LinkError("bad_arg", "track_start: unknown key %s" % k)
            out["track_start"][k] = _int(t, k, 1, 255)
    if "wifi" in s:
        out["wifi"] = check_wifi(s["wifi"])
    return out


def _text(w, key, lo, hi):
    v = w.get(key)
    if type(v) is not str or not lo <= len(v) <= hi or not all(" " <= c <= "~" for c in v):
        raise LinkError("bad_arg", "wifi: %s must be %d-%d printable ASCII characters" % (key, lo, hi))
    return v


def check_wifi(w):
    """The Pico W's network (firmware/wifi.py): {"mode": "ap"} (its own
    access point, the name and password on its card), "ap" with a new
    ssid and password, or "join" a network with its ssid and password."""
    if type(w) is not dict or w.get("mode") not in ("ap", "join") or [k for k in w if k not in ("mode", "ssid", "password")]:
        raise LinkError("bad_arg", "wifi: {mode: ap or join, ssid, password}")
    if w["mode"] == "ap" and len(w) == 1:
        return {"mode": "ap"}
    return {"mode": w["mode"], "ssid": _text(w, "ssid", 1, 32), "password": _text(w, "password", 8, 63)}


class Link:
    def __init__(self, board=None, port=None):
        self.port = port
        self.rx = codec.Deframer()
        self.sub = False
        self.pushes = []  # pending live-event frames
        self.push_seq = 0
        self.token = 0  # one-time confirm token (0 = none)
        self.token_for = None
        self.prev = (0, None)
        self.board = None
        if board is not None:
            self.attach(board)

    def attach(self, board):
        self.board = board
        board.watch(self.on_event)

    # -- the loop side -------------------------------------------------
    def poll(self):
        """Read what has arrived, answer it, send queued live events (in one
        write, through `feed`; nothing allocated when nothing came or waits)."""
        port = self.port
        if port is None:
            return
        data = port.read(_READ_MAX)
        if data or self.pushes:
            port.write(self.feed(data or b""))

    def feed(self, data):
        """Bytes in, reply bytes out (tests, fuzzing, the simulator)."""
        out = bytearray()
        for b in data:
            p = self.rx.feed_byte(b)
            if p is not None:
                out.extend(self.handle(p))
        while self.pushes:
            out.extend(self.pushes.pop(0))
        return bytes(out)

    def on_event(self, gid, index, rec):
        if not self.sub or len(self.pushes) >= _MAX_PUSH:
            return  # the host sees the gap in index and asks for the events
        self.pushes.append(codec.push(self.push_seq, gid, index, rec))
        self.push_seq = (self.push_seq + 1) & 0xFFFF

    # -- requests --------------------------------------------------------
    def handle(self, payload):
        """One payload in, one framed reply out. Never raises (but lets
        KeyboardInterrupt through: Ctrl-C must stop the application)."""
        seq = 0
        try:
            try:
                seq, req = codec.parse_request(payload)
            except codec.FrameError as e:
                seq = e.seq
                raise LinkError("bad_request", str(e))
            op = req["op"]
            fn = getattr(self, "op_" + op, None)  # the requests are the op_* methods
            if fn is None:
                raise LinkError("unknown_op", "unknown request %s" % op[:20])
            self.prev = (self.token, self.token_for)  # a confirm token is good for the very next request only
            self.token = 0
            self.token_for = None
            ans = fn(req)
            if type(ans) is bytes:
                return codec.events(seq, ans)
            return codec.reply(codec.K_OK, seq, ans)
        except LinkError as e:
            err = {"code": e.code, "msg": e.msg}
            if e.extra:
                err.update(e.extra)
        except Exception as e:  # a bug or a refused board call: report, never die
            code = getattr(e, "code", None)
            err = {"code": code if type(code) is str else "internal", "msg": str(e)[:80]}
        return codec.reply(codec.K_ERR, seq, err)

    def op_hello(self, req):
        b = self.board
        return {"proto": codec.PROTO, "fw": b.fw, "build": b.build, "board": b.board_id, "id": b.uid, "up": b.uptime(), "game": b.current(), "max": len(self.rx.buf) - 4}

    def op_time(self, req):
        """The host sets the board's clock (unix seconds UTC) whenever it talks to it."""
        b = self.board
        if "set" in req:
            b.set_time(_int(req, "set", 0, 0xFFFFFFFF))
        return {"utc": b.utc(), "up": b.uptime()}

    def op_status(self, req):
        b = self.board
        gid = b.current()
        ans = {"game": gid, "events": len(b.records(gid)) if gid else 0, "sub": self.sub}
        ans.update(b.status())
        return ans

    def op_games(self, req):
        return {"current": self.board.current(), "archived": [[g, bool(s)] for g, s in self.board.archived()]}

    def op_events(self, req):
        """The 'E' body of the game's records from "from" on (codec.events_body):
        at most what fits one frame (and the optional "max" payload bytes, but
        always one record); the host asks again from start + count until it
        has total. The prefix crc lets the host check that its copy of
        records[:start] is still the board's (an undo on the board can change
        the tail of the game)."""
        gid = _gid(req)
        start = _int(req, "from", 0, 0xFFFF)
        room = len(self.rx.buf) - 4
        m = req.get("max", 0xFFFF)
        try:  # an archived game's records through its index, only the frames asked for (storage.Store.window; the room left after the answer's head); else all of them
            w = type(m) is int and self.board.window(gid, start, min(room, m) - 13 - len(gid)) or (None, None, self.board.records(gid))
        except KeyError:
            raise LinkError("unknown_game", "no game %s on the board" % gid)
        recs = w[2]
        return codec.events_body(gid, recs, min(start, w[0] or len(recs)), room, _int(req, "max", 16, 0xFFFF, 0xFFFF), *w[:2])  # an undo shortened the log: the host sees start != from

    def op_mark_synced(self, req):
        gid = _gid(req)
        for g, _ in self.board.archived():
            if g == gid:
                self.board.mark_synced(gid)
                return {"game": gid, "synced": True}
        raise LinkError("unknown_game", "no archived game %s" % gid)

    def op_subscribe(self, req):
        on = req.get("on", True)
        if type(on) is not bool:
            raise LinkError("bad_arg", "on must be true or false")
        self.sub = on
        del self.pushes[:]
        gid = self.board.current()
        return {"on": on, "game": gid, "events": len(self.board.records(gid)) if gid else 0}

    def op_settings(self, req):
        if "set" in req:
            self.board.push_settings(check_settings(req["set"]))
        s = self.board.settings()
        if "wifi" in s:  # the network's password is never sent back
            s = dict(s)
            s["wifi"] = {k: v for k, v in s["wifi"].items() if k != "password"}
        return {"settings": s}

    def _confirm(self, req, what):
        """Dangerous request: first time -> 'confirm' error with a token;
        again with "confirm": token -> go ahead."""
        tok = req.get("confirm")
        token, token_for = self.prev
        if token and type(tok) is int and tok == token and token_for == what:
            return
        self.token = random32() & 0xFFFF | 0x10000  # never 0 (0 = no token)
        self.token_for = what
        raise LinkError("confirm", "%s: send again with this confirm token" % what, {"token": self.token})

    def op_new_game(self, req):
        from engine_lite import record, EngineError

        ev = req.get("start")
        if type(ev) is not dict or ev.get("ev") != "start":
            raise LinkError("bad_arg", "start must be a start event")
        try:
            rec = record.encode_start(ev)
        except EngineError as e:
            raise LinkError("bad_arg", e.message[:80])
        self._confirm(req, "new_game " + binascii.hexlify(rec).decode())
        self.board.new_game(rec)
        return {"game": self.board.current()}

    def op_erase(self, req):
        gid = _gid(req)
        if gid not in [g for g, _ in self.board.archived()]:
            raise LinkError("unknown_game", "no archived game %s" % gid)
        self._confirm(req, "erase " + gid)
        self.board.erase(gid)
        return {"erased": gid}

    def op_faults(self, req):
        """The fault log: firmware faults the board's loop survived (App.recover)."""
        return {"faults": self.board.faults()}

    def op_press(self, req):
        if not getattr(self.board, "remote_buttons", False):
            raise LinkError("unknown_op", "unknown request %s" % req["op"])  # as handle says it
        self.board.press(_int(req, "button", 0, 7), _int(req, "kind", 1, 2, 1))
        return {"screen": self.board.status().get("screen")}


class StdioPort:
    """MicroPython on the Pico: the link shares USB CDC with the REPL.
    Reads only what is waiting (select.poll), never blocks. Ctrl-C stays
    armed: frames never contain 0x01-0x05 (firmware/codec.py), so a Ctrl-C
    from mpremote interrupts the app and mpremote's Ctrl-A reaches the REPL."""

    def __init__(self):
        import sys
        import select

        self.inp = sys.stdin.buffer
        self.out = sys.stdout.buffer
        self.p = select.poll()
        self.p.register(sys.stdin, select.POLLIN)
        self.buf = bytearray(1)

    def read(self, n):
        data = None
        while n > 0 and self.p.poll(0):
            if self.inp.readinto(self.buf) != 1:
                break
            if data is None:
                data = bytearray()
            data.append(self.buf[0])
            n -= 1
        return data

    def write(self, data):
        self.out.write(data)


class AppBoard:
    """The board interface over the real App and Store (firmware/app.py,
    firmware/storage.py)."""

    remote_buttons = False

    def __init__(self, app, store, board_id="pico", fw="0", uid=None, build="files"):
        self.app = app
        self.store = store
        self.board_id = board_id
        self.fw = fw
        self.build = build  # "frozen": the code is inside the firmware image (firmware/hw.py image); "files": on the file system
        self.uid = uid or app.hw.uid
        self.window = store.window  # an archived game's records from an index: only the frames asked for

    def utc(self):
        return self.app.hw.utc()

    def set_time(self, t):
        self.app.hw.set_utc(t)

    def uptime(self):
        return self.app.hw.uptime()

    def current(self):
        return self.store.game_id if self.app.game is not None else None

    def records(self, gid):
        if gid is None:
            raise KeyError(gid)
        try:
            return self.store.records(gid)
        except (OSError, ValueError, KeyError):
            raise KeyError(gid)

    def archived(self):
        return self.store.archived()

    def mark_synced(self, gid):
        self.store.mark_synced(gid)

    def status(self):
        g = self.app.game
        return {"screen": self.app.screen, "over": g is not None and g.table is not None and g.table.over, "faults": self.app.faults}

    def settings(self):
        return self.store.settings()

    def push_settings(self, s):
        self.app.push_settings(s)

    def new_game(self, rec):
        self.app.new_game(rec)

    def erase(self, gid):
        self.store.erase(gid)

    def faults(self):
        return self.store.faults()

    def watch(self, fn):
        self.app.on_event.append(fn)

    def press(self, i, kind):
        self.app.press(i, kind)

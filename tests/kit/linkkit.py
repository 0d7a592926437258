"""Test kit for the serial link: a board over the real Store (no App needed),
and an in-memory serial port joining a host link to a device link.

StoreBoard implements the board interface of firmware/link.py on a real
firmware.storage.Store (on MemFS), and plays game records through it the
way the App does (Store.apply / undo / finish, then the on_event hooks).
"""

import json
import random

import engine_lite
import serial

from firmware import codec, link
from firmware.hw import stamp
from boardkit.hw_sim import SimHW
from boardkit.memfs import MemFS
from firmware.storage import Store
from host.sync import codec_host


class StoreBoard:
    remote_buttons = False

    def __init__(self, store=None, board_id="test-board", uid=None, clock=None):
        self.store = store or Store(fs=MemFS())
        self.game = self.store.boot()
        self.board_id = board_id
        self.uid = uid
        self.clock = clock or SimHW(count=1)  # utc / set_utc / uptime, as the board's hardware has them
        self.fw = "test"
        self.build = "files"
        self.hooks = []
        self._settings = None

    def utc(self):
        return self.clock.utc()

    def set_time(self, t):
        self.clock.set_utc(t)

    def uptime(self):
        return self.clock.uptime()

    # board interface
    def current(self):
        return self.store.game_id if self.game is not None else None

    def records(self, gid):
        if gid is None:
            raise KeyError(gid)
        return self.store.records(gid)

    def window(self, gid, start, room):
        """As firmware/link.py AppBoard's: an archived game's records read through its summary's index."""
        if gid is None:
            raise KeyError(gid)
        return self.store.window(gid, start, room)

    def archived(self):
        return self.store.archived()

    def mark_synced(self, gid):
        self.store.mark_synced(gid)

    def status(self):
        return {"screen": "play", "over": bool(self.game is not None and self.game.state().get("game_over"))}

    def settings(self):
        return self.store.settings()

    def push_settings(self, s):
        cur = self.store.settings()
        cur.update(s)
        self.store.save_settings(cur)

    def new_game(self, rec):
        rec = stamp(rec, self.clock)  # as App.new_game does
        self.game = self.store.new_game(rec)
        self._fire(0, rec)

    def erase(self, gid):
        self.store.erase(gid)

    def watch(self, fn):
        self.hooks.append(fn)

    # playing
    def _fire(self, index, rec):
        for fn in self.hooks:
            fn(self.store.game_id, index, rec)

    def play(self, ev):
        """One event dict through the Store (undo included), hooks fired."""
        if ev.get("ev") == "start":
            self.new_game(self.game_encode(ev))
            return
        if ev.get("ev") == "undo":
            self.store.undo(self.game)
            self._fire(len(self.game.log), engine_lite.record.UNDO)
            return
        rec = self.game.encode(ev)
        self.store.apply(self.game, rec)
        self._fire(len(self.game.log) - 1, rec)

    @staticmethod
    def game_encode(ev):
        return engine_lite.Game().encode(ev)

    def finish(self):
        self.store.finish()
        self.game = None

    def load(self, lines, finish=False):
        for line in lines:
            if line.strip():
                self.play(json.loads(line))
        if finish:
            self.finish()

    def snapshot(self):
        """Everything the link could change: for 'changes nothing' checks."""
        games = {}
        ids = [g for g, _ in self.archived()]
        if self.current():
            ids.append(self.current())
        for g in ids:
            games[g] = [bytes(r) for r in self.records(g)]
        return (self.current(), tuple(self.archived()), json.dumps(games, default=bytes.hex, sort_keys=True),
                json.dumps(self.settings(), sort_keys=True))


class LoopSerial:
    """A pyserial-like port whose other end is a device Link, in-process.

    `cut_after`: after that many bytes have crossed (either way) the link
    is cut: later writes are lost and reads raise SerialException (as when
    a USB cable is pulled). `drop` loses random bytes (noise)."""

    def __init__(self, dev_link, cut_after=None, noise=0.0, seed=0):
        self.dev = dev_link
        self.inbox = bytearray()
        self.timeout = 0.05
        self.cut_after = cut_after
        self.crossed = 0
        self.noise = noise
        self.rnd = random.Random(seed)
        self.closed = False

    @property
    def cut(self):
        return self.cut_after is not None and self.crossed >= self.cut_after

    def _pass(self, data):
        out = bytearray()
        for b in data:
            if self.cut:
                break
            self.crossed += 1
            if self.noise and self.rnd.random() < self.noise:
                continue
            out.append(b)
        return bytes(out)

    def write(self, data):
        if self.cut:
            raise serial.SerialException("device disconnected")
        reply = self.dev.feed(self._pass(data))
        self.inbox.extend(self._pass(reply))
        return len(data)

    @property
    def in_waiting(self):
        return len(self.inbox)

    def read(self, n=1):
        if self.cut and not self.inbox:
            raise serial.SerialException("device reports readiness to read but returned no data")
        k = min(n, len(self.inbox)) if self.inbox else 0
        data = bytes(self.inbox[:k])
        del self.inbox[:k]
        return data

    def close(self):
        self.closed = True


def host_for(board, **kw):
    """(device Link, HostLink) joined by a LoopSerial, hello done."""
    from host.sync.link import HostLink

    dev = link.Link(board)
    ser = LoopSerial(dev, **{k: v for k, v in kw.items() if k in ("cut_after", "noise", "seed")})
    hl = HostLink(ser, name="loop", read_timeout=0, request_timeout=kw.get("request_timeout", 0.05), cap=kw.get("cap", 30))
    return dev, ser, hl


# One request through a device Link, as the host frames it (the link tests
# and tests/board/test_faults.py read the board this way).


def request(dev, op, seq=7, **args):
    args["op"] = op
    wire = codec.encode(bytes((codec.K_REQ, seq & 0xFF, seq >> 8)) + json.dumps(args).encode())
    out = codec.Deframer(4096).feed(dev.feed(wire))
    return out


def answer(dev, op, seq=7, **args):
    out = request(dev, op, seq, **args)
    assert len(out) == 1
    p = out[0]
    assert p[1] | p[2] << 8 == seq, "the reply carries the request's sequence number"
    if p[0] == codec.K_EVENTS:
        return "E", codec_host.parse_events(p[3:])[1:]
    return chr(p[0]), json.loads(p[3:])

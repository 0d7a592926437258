"""The power-cut campaign on real littlefs, with the ring ahead of the flash.

Guest-side code: it runs INSIDE MicroPython (the Unix port), never in
CPython. Why: the board keeps its games on littlefs, and it now shows an
event on the ring before the same loop step writes it (firmware/app.py
settle), so a cut can land in the window between light and flash. What a
cut there costs must be counted on the file system the board really has
(tests/kit/lfs_flash.py: the rp2 port's geometry and littlefs settings).

How: one whole game is played through the pins (boardkit/script.py) by the
real App and Store, each step followed by the loop's tidy() (so the quiet
work between gestures, Store.quiet, is cut into too; an erase stalls the
board's clock 45 ms, as on the chip, so the Store sees its compactions),
on a RAM flash that records every block operation with its bytes,
together with how many events had been shown on the ring and how many
acknowledged (on_event) when it was attempted. Then, for every
operation k (and, for a program, again with it torn after half its bytes),
the flash as a cut at k leaves it is rebuilt (the image before the game
plus operations 0..k-1), mounted, and booted by a fresh Store, and every
game on it is compared with the events shown and acknowledged before k:

* `durable_lost`: acknowledged events missing from the flash (must be 0);
* `shown_lost`: events the ring had shown that the flash does not hold
  (the one event in flight; counted and reported, never more than 1 a cut);
* `kept`: events on the flash that had not been acknowledged (the frame
  landed, the step had not yet returned: legal, shown after the boot);
* `window`: cut points that fell between an event's light and its ack.

API: campaign(script_text, stride=1, torn=True, window=True) -> dict of
those figures (every stride-th operation, and with `window` every one
between a light and its ack),
plus `points` (boots tried), `ops` (block operations of the game) and
`bad` (the first few points that broke a rule, as text).
"""

import os

from engine_lite import record
from boardkit import script
from firmware.app import App
from firmware.main import tidy
from boardkit.hw_sim import SimHW
from firmware.storage import Store
from tests.kit.lfs_flash import PROG, READ, ERASE, BLOCK_SIZE, PAGE_SIZE, Flash, mount, unmount

ACKED = []  # (game id, index, record) as on_event reported them
SHOWN = []  # (game id, index, record) as App._changed took them (the ring shows them)


class ShowingApp(App):
    def _changed(self, index, rec):
        SHOWN.append((self.store.game_id, index, bytes(rec)))
        App._changed(self, index, rec)

    def step(self):
        App.step(self)
        tidy(self)  # as the board's loop turn: the quiet work (Store.quiet) between gestures is cut into too


class Recorder(Flash):
    """A RAM flash that keeps every operation, with the bytes a program
    wrote and the counts of shown and acknowledged events at that moment."""

    def __init__(self):
        Flash.__init__(self)
        self.tape = None
        self._buf = None
        self.stall = None  # fn(ms): an erase stalls the board's clock, as the chip's (the Store sees a compaction)

    def writeblocks(self, n, buf, off=None):
        self._buf = buf
        return Flash.writeblocks(self, n, buf, off)

    def _logged(self, kind, n, off, nb):
        Flash._logged(self, kind, n, off, nb)
        if kind == ERASE and self.stall:
            self.stall(45)
        if self.tape is not None:
            data = bytes(self._buf) if kind == PROG else None
            self.tape.append((kind, n, off, data, len(SHOWN), len(ACKED)))


def _apply(mem, op, torn=-1):
    kind, n, off, data = op[0], op[1], op[2], op[3]
    a = n * BLOCK_SIZE + off
    if kind == ERASE:
        ff = b"\xff" * PAGE_SIZE
        for i in range(0, BLOCK_SIZE, PAGE_SIZE):
            mem[a + i : a + i + PAGE_SIZE] = ff
    elif kind == PROG:
        k = len(data) if torn < 0 else torn
        mem[a : a + k] = data[:k]


def _games(events):
    """game id -> its effective records, from (gid, index, record) in order."""
    out = {}
    for gid, i, rec in events:
        recs = out.setdefault(gid, [])
        del recs[i:]
        if rec != record.UNDO:
            recs.append(rec)
    return out


def _common(a, b):
    n = 0
    while n < len(a) and n < len(b) and a[n] == b[n]:
        n += 1
    return n


def play(text):
    """Play button script `text` on a recording flash: (image before, tape)."""
    del ACKED[:]
    del SHOWN[:]
    f = Recorder()
    mount(f, "/flash")
    before = bytearray(f.mem)
    f.tape = []
    hw = SimHW(None, 24)
    f.stall = hw.advance
    app = ShowingApp(hw, Store("/flash/bk", clock=hw.ticks_ms))
    app.on_event.append(lambda gid, i, rec: ACKED.append((gid, i, bytes(rec))))
    script.play(app, hw, script.parse(text))
    tape = f.tape
    f.tape = None
    unmount("/flash")
    if app.faults:
        raise RuntimeError("the game itself faulted %d times" % app.faults)
    return before, tape


def check(flash, shown, acked, res, where):
    """Boot `flash` as the next power-up does and count what it kept."""
    try:
        mount(flash, "/chk", mkfs=False)
    except OSError:
        res["unmountable"] += 1
        res["bad"].append("%s: no file system" % where)
        return
    try:
        store = Store("/chk/bk")
        store.boot()
        a = _games(ACKED[:acked])
        for gid, s in _games(SHOWN[:shown]).items():
            try:
                on = store.records(gid)
            except KeyError:
                on = []
            ack = a.get(gid, [])
            lost = len(ack) - _common(ack, on)
            gone = len(s) - _common(s, on)
            extra = len(on) - _common(s, on)
            res["durable_lost"] += lost
            res["shown_lost"] += gone
            res["kept"] += max(0, len(on) - len(ack))
            res["shown_lost_max"] = max(res["shown_lost_max"], gone)
            if lost or gone > 1 or extra:
                res["bad"].append("%s game %s: %d acked lost, %d shown lost, %d unknown kept" % (where, gid, lost, gone, extra))
    finally:
        unmount("/chk")


def campaign(text, stride=1, torn=True, window=True):
    before, tape = play(text)
    res = {"ops": len(tape), "points": 0, "window": 0, "durable_lost": 0, "shown_lost": 0,
           "shown_lost_max": 0, "kept": 0, "unmountable": 0, "bad": [],
           "erases": len([1 for op in tape if op[0] == ERASE]), "progs": len([1 for op in tape if op[0] == PROG]),
           "reads": len([1 for op in tape if op[0] == READ]), "events": len(ACKED)}
    image = before  # the flash with operations 0..k-1 done
    scratch = Flash()
    for k in range(len(tape)):
        op = tape[k]
        if k % stride == 0 or window and op[4] > op[5]:  # every stride-th point, and every one in a light-to-flash window
            tears = (-1, len(op[3]) // 2) if torn and op[0] == PROG else (-1,)
            for t in tears:
                scratch.mem[:] = image
                if t >= 0:
                    _apply(scratch.mem, op, t)
                res["points"] += 1
                if op[4] > op[5]:
                    res["window"] += 1
                check(scratch, op[4], op[5], res, "cut at op %d%s" % (k, "" if t < 0 else " torn at %d" % t))
        _apply(image, op)
    res["bad"] = res["bad"][:10]
    return res

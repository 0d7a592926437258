"""The board's side of a sync, with 1, 10 and 50 finished games kept.

Inside the official MicroPython Unix port (tests/kit/mpy_harness.py), on
the board's real code (the .mpy bundle): firmware/storage.py's Store on
littlefs with the rp2 port's settings (tests/kit/lfs_flash.py, the image in
a host file), answering through firmware/link.py's Link exactly the
requests `bloomkeeper sync` sends (host/sync/db.py): the one-record
identity probe of a game (events from 0, max 16), "nothing new" on a game
the host already holds (events from its length), the last 8 records of a
game the host holds but for them (events from its length - 8), a whole
game fetched as the host fetches a game it does not hold (events from 0,
then from each answer's end, until the game's length: one answer of up to
600 bytes holds this game; and in answers of 64 payload bytes, as a host
whose line lost frames asks, 9 answers), and a whole later
sync of a board whose games are all held (hello, games, then "nothing new"
for each). Each game is tests/records/stalk-2p.jsonl (79 records); the
game asked about is the oldest.

Three ways of answering, by what an archived game has beside it:
* "index": its summary with the index its archiving writes (/bk-sum,
  storage.Store.window: its length, prefix crc and every 16th record's
  offset and prefix crc), so "nothing new" reads no frame and a fetch
  reads the frames from the index point before what it asks to the one
  after;
* "noindex": the summary as the firmware before the index wrote it (its
  first 12 bytes: length and prefix crc): "nothing new" reads no frame, a
  fetch walks the archive whole;
* "walk": no summary (an archive of a firmware before the summaries):
  everything walks the archive whole.

Figures: the board's time per request (µs, the least of 5, each after a
gc.collect(): the request's own work, not a collection the setup's garbage
starts, nor the other programs of a shared machine; a whole game's:
the sum of its requests'; Unix port on this machine: not Pico time,
but the ratio between the ways and its growth with the games kept is what
the board sees too) and the bytes littlefs read from the flash for it
(exact: the RP2040 reads them over XIP at ~10-20 MB/s, plus littlefs's own
work per block). Each figure includes the Link's parse of the request and
the framing of its answer, and the Store's directory lookups and file
reads; not the serial line.
"""

import sys

GUEST = r'''
import gc, json, os, time
import engine_lite
from firmware.storage import Store
from firmware import link, codec
from tests.kit.lfs_flash import Flash, mount, unmount

def recs_of(path):
    g = engine_lite.Game()
    out = []
    for line in open(path):
        if line.strip():
            r = g.encode(json.loads(line))
            g.apply_record(r)
            out.append(r)
    return out

RECS = recs_of("tests/records/stalk-2p.jsonl")

class Board:
    board_id = "pico"
    fw = "0"
    uid = "bench"
    def __init__(self, store):
        self.store = store
        self.window = store.window
    def watch(self, fn):
        pass
    def current(self):
        return None
    def uptime(self):
        return 1
    def records(self, gid):
        return self.store.records(gid)
    def archived(self):
        return self.store.archived()

SEQ = [0]

def ask(lk, fl, req):
    SEQ[0] += 1
    p = codec.head(codec.K_REQ, SEQ[0]) + json.dumps(req).encode()
    best = []
    for _ in range(5):
        gc.collect()  # the request's own work, not a collection the setup's garbage would start in it
        r0 = fl.read_bytes
        t = time.ticks_us()
        out = lk.handle(p)
        best.append((time.ticks_diff(time.ticks_us(), t), fl.read_bytes - r0, out))
    best.sort()
    return best[0]  # the least: other programs on the machine only ever add time

def whole(lk, fl, gid, cap):
    us = b = have = 0
    while True:
        t, r, out = ask(lk, fl, {"op": "events", "game": gid, "from": have, "max": cap})
        us += t
        b += r
        body = codec.Deframer().feed(out)[0][3:]
        g = body[0]
        total = body[g + 3] | body[g + 4] << 8
        n = body[g + 9]
        have += n
        if have >= total or not n:
            return us, b, have

for n in (1, 10, 50):
    fl = Flash(path="f%d.img" % n)
    mount(fl, "/flash")
    st = Store("/flash/bk", keep=100)
    st.boot()
    for i in range(n):
        g = st.new_game(RECS[0])
        for r in RECS[1:]:
            st.apply(g, r)
        st.finish()
    st.flush()
    lk = link.Link(Board(st))
    games = [g for g, _ in st.archived()]
    total = len(RECS)
    for mode in ("index", "noindex", "walk"):
        for g in games:
            p = "/flash/bk-sum/%s" % g
            if mode == "noindex":
                with open(p, "rb") as f:
                    b = f.read(12)
                with open(p, "wb") as f:
                    f.write(b)
            elif mode == "walk":
                os.remove(p)
        probe = ask(lk, fl, {"op": "events", "game": games[0], "from": 0, "max": 16})
        nothing = ask(lk, fl, {"op": "events", "game": games[0], "from": total})
        last = ask(lk, fl, {"op": "events", "game": games[0], "from": total - 8})
        w_us, w_b, got = whole(lk, fl, games[0], 0xFFFF)
        assert got == total, got
        s_us, s_b, got = whole(lk, fl, games[0], 64)
        assert got == total, got
        later_us = later_b = 0
        for req in [{"op": "hello"}, {"op": "games"}] + [{"op": "events", "game": g, "from": total} for g in games]:
            us, b, _ = ask(lk, fl, req)
            later_us += us
            later_b += b
        print("FIG %d %s %d %d %d %d %d %d %d %d %d %d %d %d" % (n, mode, probe[0], probe[1], nothing[0], nothing[1], last[0], last[1], w_us, w_b, s_us, s_b, later_us, later_b))
    unmount("/flash")
'''

NAMES = ("probe", "nothing_new", "last8", "whole_game", "whole_game_64", "later_sync")


def measure():
    from tests.kit.mpy_harness import run_mpy

    out = run_mpy(GUEST, timeout=1800).stdout
    figs = {}
    for line in out.splitlines():
        if line.startswith("FIG "):
            n, mode, *v = line.split()[1:]
            for i, name in enumerate(NAMES):
                key = "board_sync_%s_%sg_%s" % (mode, n, name)
                figs[key + "_us"] = int(v[2 * i])
                figs[key + "_bytes_read"] = int(v[2 * i + 1])
    if not figs:
        raise RuntimeError("the guest printed no figures: %s" % out[-2000:])
    return figs


if __name__ == "__main__":
    import os

    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    for k, v in measure().items():
        print("%-52s %s" % (k, v))

"""The board's side of a sync, with 1, 10 and 50 finished games kept.

Inside the official MicroPython Unix port (tests/kit/mpy_harness.py), on
the board's real code (the .mpy bundle): firmware/storage.py's Store on
littlefs with the rp2 port's settings (tests/kit/lfs_flash.py, the image in
a host file), answering through firmware/link.py's Link exactly the
requests `bloomkeeper sync` sends (host/sync/db.py): the one-record
identity probe of a game (events from 0, max 16), "nothing new" on a game
the host already holds (events from its length), and a whole later sync
of a board whose games are all held (hello, games, then "nothing new" for
each). Each game is tests/records/stalk-2p.jsonl (79 records).

Two ways of answering: through each archived game's summary (/bk-sum,
storage.Store.summary: its length and prefix crc, written when it was
archived, so "nothing new" reads no frame), and without it (the summary
files removed: the archive is walked whole, as firmware before the
summaries did, and as it still does for an archive of an older firmware
or a request that fetches records).

Figures: the board's time per request (µs, median of 5, Unix port on this
machine: not Pico time, but the ratio between the two ways and its
growth with the games kept is what the board sees too) and the bytes
littlefs read from the flash for it (exact: the RP2040 reads them over
XIP at ~10-20 MB/s, plus littlefs's own work per block).
"""

import sys

GUEST = r'''
import json, os, time
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
    def watch(self, fn):
        pass
    def current(self):
        return None
    def uptime(self):
        return 1
    def records(self, gid):
        return self.store.records(gid)
    def summary(self, gid):
        return self.store.summary(gid)
    def archived(self):
        return self.store.archived()

SEQ = [0]

def ask(lk, fl, req):
    SEQ[0] += 1
    p = codec.head(codec.K_REQ, SEQ[0]) + json.dumps(req).encode()
    best = []
    for _ in range(5):
        r0 = fl.read_bytes
        t = time.ticks_us()
        out = lk.handle(p)
        best.append((time.ticks_diff(time.ticks_us(), t), fl.read_bytes - r0))
    best.sort()
    return best[2]

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
    for mode in ("summary", "walk"):
        if mode == "walk":
            for g in games:
                os.remove("/flash/bk-sum/%s" % g)
        probe = ask(lk, fl, {"op": "events", "game": games[0], "from": 0, "max": 16})
        nothing = ask(lk, fl, {"op": "events", "game": games[0], "from": total})
        chunk = ask(lk, fl, {"op": "events", "game": games[0], "from": 40, "max": 4096})
        later_us = later_b = 0
        for req in [{"op": "hello"}, {"op": "games"}] + [{"op": "events", "game": g, "from": total} for g in games]:
            us, b = ask(lk, fl, req)
            later_us += us
            later_b += b
        print("FIG %d %s %d %d %d %d %d %d %d %d" % (n, mode, probe[0], probe[1], nothing[0], nothing[1], chunk[0], chunk[1], later_us, later_b))
    unmount("/flash")
'''


def measure():
    from tests.kit.mpy_harness import run_mpy

    out = run_mpy(GUEST, timeout=1800).stdout
    figs = {}
    for line in out.splitlines():
        if line.startswith("FIG "):
            n, mode, *v = line.split()[1:]
            p_us, p_b, n_us, n_b, c_us, c_b, l_us, l_b = (int(x) for x in v)
            key = "board_sync_%s_%sg" % (mode, n)
            figs[key + "_probe_us"] = p_us
            figs[key + "_probe_bytes_read"] = p_b
            figs[key + "_nothing_new_us"] = n_us
            figs[key + "_nothing_new_bytes_read"] = n_b
            figs[key + "_chunk_us"] = c_us
            figs[key + "_later_sync_us"] = l_us
            figs[key + "_later_sync_bytes_read"] = l_b
    if not figs:
        raise RuntimeError("the guest printed no figures: %s" % out[-2000:])
    return figs


if __name__ == "__main__":
    import os

    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    for k, v in measure().items():
        print("%-52s %s" % (k, v))

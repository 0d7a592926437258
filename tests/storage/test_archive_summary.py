"""An archived game's summary (firmware/storage.py FlashLog.archive,
Store.summary): "nothing new" for a game the host holds costs the board the
same whatever the game's length. The summary, written before the archive's
rename, gives the game's length and the prefix crc of all its records; the
link answers "nothing new" from it without reading a frame. Where there is
none, or the archive grew after it (a late record), the game is read whole,
as before. The same answers either way, on MemFS here and on littlefs in
the Unix port (bench/bench_board_sync.py gives the figures).
"""

import json

import pytest

from boardkit.memfs import MemFS
from firmware import codec
from firmware.link import Link
from firmware.storage import Store
from tests.kit.linkkit import StoreBoard
from tests.kit.mpy_harness import run_mpy
from tests.kit.storage_script import Shadow, load_events, play, session

STEPS = session(load_events())  # a 5-player game with undos (one crossing a snapshot), finish, and a next game


def played(fs=None, steps=STEPS):
    store = Store(fs=fs or MemFS(), snapshot_every=8)
    store.boot()
    play(store, steps, Shadow())
    return store


def ask(link, **req):
    req["op"] = "events"
    return link.handle(codec.head(codec.K_REQ, 7) + json.dumps(req).encode())


def test_the_summary_is_the_games_length_and_prefix_crc():
    store = played()
    recs = store.records("0001")
    assert len(recs) > 100 and store.summary("0001") == (len(recs), codec.prefix_crc(recs, len(recs)))
    assert store.summary("0002") is None  # the game in progress has none


def test_nothing_new_reads_no_frame_whatever_the_games_length():
    """The finding: a "nothing new" check cost the board the whole game."""
    whole = played().records("0001")
    cost, answers = [], []
    for n in (12, 130):
        store = Store(fs=MemFS())
        store.boot()
        g = store.new_game(whole[0])
        for r in whole[1:n]:
            store.apply(g, r)
        store.finish()
        link = Link(StoreBoard(store=store))
        recs = store.records("0001")
        before = store.fs.bytes_read
        out = ask(link, game="0001", **{"from": len(recs)})
        cost.append(store.fs.bytes_read - before)
        store.fs.files["/bk-sum/0001"] = bytearray(b"x")  # without it: the same answer, from the records
        answers.append((out, ask(link, game="0001", **{"from": len(recs)})))
    assert cost[0] == cost[1] == 12, cost  # the summary's 12 bytes, for 12 records as for 130
    assert all(a == b for a, b in answers)


def test_a_late_record_makes_the_summary_stale_and_the_records_are_read():
    store = played()
    log = store._log("0001", ".fin")
    log.load()
    log.append(bytes((1, 0)))
    log.flush()  # the archive grew after its summary
    recs = store.records("0001")
    assert store.summary("0001") is None
    link = Link(StoreBoard(store=store))
    out = ask(link, game="0001", **{"from": len(recs)})
    assert out == link.handle(codec.head(codec.K_REQ, 7) + json.dumps({"op": "events", "game": "0001", "from": len(recs)}).encode())
    body = codec.Deframer().feed(out)[0][3:]
    assert body[5:7] == bytes((len(recs) & 0xFF, len(recs) >> 8))  # total: the records as they are now


def test_pruning_and_erasing_remove_the_summary():
    store = played()
    store.mark_synced("0001")
    store.erase("0001")
    assert "/bk-sum/0001" not in store.fs.files and "/bk/0001.syn" not in store.fs.files


@pytest.mark.mpy
def test_in_micropython_on_littlefs_the_summary_answers_as_the_records():
    code = """
import os
from tests.kit.lfs_flash import Flash, mount
from tests.kit.storage_script import Shadow, load_events, play, session
from firmware.storage import Store
from firmware import codec
mount(Flash(path="f.img"), "/flash")
st = Store("/flash/bk", snapshot_every=8)
st.boot()
play(st, session(load_events()), Shadow())
recs = st.records("0001")
ok = st.summary("0001") == (len(recs), codec.prefix_crc(recs, len(recs))) and st.summary("0002") is None
print("OK" if ok else "MISMATCH", len(recs), sorted(os.listdir("/flash")))
"""
    out = run_mpy(code, timeout=300).stdout.strip()
    assert out.startswith("OK ") and "'bk-sum'" in out, out

"""An archived game's summary and index (firmware/storage.py
FlashLog.archive, Store.window): a sync's request costs the board the frames
it asks for, whatever the game's length. The summary, written before the
archive's rename, gives the game's length and the prefix crc of all its
records, so the link answers "nothing new" without reading a frame; its
index (every 16th record's offset and prefix crc; the archive holds only
the effective records) lets a fetch read from the index point before what
it asks. Where there is no summary, or one of the firmware before the index
(tests/fixtures/flash-before-index.json), or it is damaged, or the archive
grew after it (a late record), the game is walked whole, as before. The
same answers either way, byte for byte, on MemFS here (CountingFS counts
the frames read) and in the Unix port (bench/bench_board_sync.py gives the
figures on littlefs).
"""

import json
import os

import pytest

from boardkit.memfs import MemFS
from firmware import codec
from host.sync import codec_host
from firmware.link import Link
from firmware.storage import Store
from tests.kit.flash_images import orchids_marathon
from tests.kit.linkkit import StoreBoard
from tests.kit.mpy_harness import run_mpy
from tests.kit.storage_script import CountingFS, Shadow, load_events, play, session

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(__file__)), "fixtures")

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
    assert len(recs) > 100 and store.window("0001", len(recs), 0) == (len(recs), codec.prefix_crc(recs, len(recs)), ())
    assert store.window("0002", 0xFFFF, 0) is None  # the game in progress has none


def archived(recs, fs=None):
    """A Store on a CountingFS whose game 0001, of `recs`, is archived."""
    store = Store(fs=fs or CountingFS())
    store.boot()
    g = store.new_game(recs[0])
    for r in recs[1:]:
        store.apply(g, r)
    store.finish()
    store.fs.reset()
    return store


def frames_read(store, link, **req):
    """(answer, frames the Store read of game 0001's archive for it)."""
    store.fs.reset()
    out = ask(link, game="0001", **req)
    return out, store.fs.frames("/bk/0001.fin")


def walked(store, link, **req):
    """The answer with the summary set aside: the archive walked whole, as
    a firmware before the summaries answered (the summary put back after)."""
    keep = store.fs.files.pop("/bk-sum/0001")
    try:
        return ask(link, game="0001", **req)
    finally:
        store.fs.files["/bk-sum/0001"] = keep


def test_nothing_new_reads_no_frame_whatever_the_games_length():
    """The finding: a "nothing new" check cost the board the whole game."""
    for n in (12, 200):
        store = archived(orchids_marathon(n))
        link = Link(StoreBoard(store=store))
        out, frames = frames_read(store, link, **{"from": n})
        assert frames == 0 and store.fs.got["/bk-sum/0001"][0] == len(store.fs.files["/bk-sum/0001"])
        assert out == walked(store, link, **{"from": n})


def test_the_identity_probe_reads_one_frame_whatever_the_games_length():
    """The finding: the one-record probe of a game cost the board the whole game."""
    for n in (12, 200):
        store = archived(orchids_marathon(n))
        link = Link(StoreBoard(store=store))
        out, frames = frames_read(store, link, **{"from": 0, "max": 16})
        assert frames == 1, (n, frames)
        assert out == walked(store, link, **{"from": 0, "max": 16})


def test_a_fetch_reads_the_frames_from_the_index_point_before_it_on():
    """The last 8 records of a 130-record game: the frames from the index
    point at or before them (every 16th record) to the end, not the game."""
    store = archived(orchids_marathon(130))
    link = Link(StoreBoard(store=store))
    out, frames = frames_read(store, link, **{"from": 122})
    assert frames == 130 - 112
    assert out == walked(store, link, **{"from": 122})


def test_a_whole_game_in_small_answers_reads_each_frame_about_once():
    """A host on a noisy line asks 64 payload bytes at a time: each answer
    reads its own frames, at most 15 before them and the one that did not
    fit, not the game from its start each time."""
    store = archived(orchids_marathon(130))
    link = Link(StoreBoard(store=store))
    have = frames = answers = 0
    while have < 130:
        out, f = frames_read(store, link, **{"from": have, "max": 64})
        assert out == walked(store, link, **{"from": have, "max": 64})
        body = codec.Deframer().feed(out)[0][3:]
        n = body[body[0] + 9]
        assert 0 < f <= n + 16, (have, n, f)
        have += n
        frames += f
        answers += 1
    assert answers > 5 and frames < 130 + 16 * answers < 130 * answers


def test_every_request_answers_as_the_walk_does():
    """Byte for byte, for every start and a range of sizes asked, on a game
    with undos (its archive holds no undone record): through the index or
    the archive walked whole, the same answer."""
    store = played()
    link = Link(StoreBoard(store=store))
    count = len(store.records("0001"))
    for start in range(count + 2):
        for cap in (16, 20, 64, 300, 0xFFFF):
            req = {"from": start, "max": cap}
            assert ask(link, game="0001", **req) == walked(store, link, **req), req
    assert ask(link, game="0001", **{"from": 3, "max": "x"}) == walked(store, link, **{"from": 3, "max": "x"})  # refused alike
    assert b"unknown_game" in ask(link, game="0009", **{"from": 3, "max": 1})  # an unknown game said first, as before


def before_index():
    """A CountingFS holding tests/fixtures/flash-before-index.json: the
    session's flash as the firmware before the index wrote it
    (tests/fixtures/make_flash_before_index.py)."""
    with open(os.path.join(FIXTURES, "flash-before-index.json")) as f:
        d = json.load(f)
    fs = CountingFS()
    for p in d["dirs"]:
        fs.dirs[p] = 1
    for p, h in d["files"].items():
        fs.files[p] = bytearray(bytes.fromhex(h))
    return fs


def test_an_older_firmwares_archives_answer_as_before_by_walking_them():
    """Archives of the firmware before the index (undo frames in them; a
    12-byte summary, or none) answer every request as this firmware's own
    archive of the same session does through its index; they are walked."""
    old = Store(fs=before_index(), snapshot_every=8)
    assert old.boot() is not None and old.game_id == "0003"
    assert len(old.fs.files["/bk-sum/0001"]) == 12 and "/bk-sum/0002" not in old.fs.files
    new = Store(fs=CountingFS(), snapshot_every=8)
    new.boot()
    steps = session(load_events())
    play(new, steps, Shadow())
    new.finish()
    new.new_game(steps[0][1])
    assert len(new.fs.files["/bk-sum/0001"]) > 12 and len(new.fs.files["/bk/0001.fin"]) < len(old.fs.files["/bk/0001.fin"])
    links = Link(StoreBoard(store=old)), Link(StoreBoard(store=new))
    for gid in ("0001", "0002"):
        count = len(new.records(gid))
        for start in range(count + 2):
            for cap in (16, 64, 0xFFFF):
                req = {"game": gid, "from": start, "max": cap}
                assert ask(links[0], **req) == ask(links[1], **req), req
    old.fs.reset()
    ask(links[0], game="0001", **{"from": 0, "max": 16})
    assert old.fs.frames("/bk/0001.fin") > 100  # the probe walks the older archive whole
    old.fs.reset()
    ask(links[0], game="0001", **{"from": 104})
    assert old.fs.frames("/bk/0001.fin") == 0  # its summary still answers "nothing new"


def damage(store, fn):
    """The answers to a range of requests with game 0001's summary changed
    by `fn` (bytearray -> bytearray), and the frames they read."""
    b = store.fs.files["/bk-sum/0001"]
    store.fs.files["/bk-sum/0001"] = fn(bytearray(b))
    link = Link(StoreBoard(store=store))
    out = []
    store.fs.reset()
    for start in (0, 5, 16, 17, 40, 63, 100, 104, 200):
        out.append(ask(link, game="0001", **{"from": start, "max": 64}))
    frames = store.fs.frames("/bk/0001.fin")
    store.fs.files["/bk-sum/0001"] = b
    return out, frames


def flip(i):
    def fn(b):
        b[i] ^= 0x20
        return b
    return fn


@pytest.mark.parametrize("how", ["short", "long", "flipped offset", "flipped crc", "flipped check", "older size"])
def test_a_damaged_or_short_index_is_not_used(how):
    """A summary whose index is cut, padded or has a flipped bit is not
    used: the archive is walked and every answer is the walk's."""
    store = played(fs=CountingFS())
    good = damage(store, lambda b: b)
    n = len(store.fs.files["/bk-sum/0001"])
    fn = {"short": lambda b: b[:-8], "long": lambda b: b + bytes(8), "flipped offset": flip(12 + 8 * 3),
          "flipped crc": flip(16 + 8 * 3 + 1), "flipped check": flip(n - 1), "older size": flip(0)}[how]
    got = damage(store, fn)
    assert got[0] == good[0]
    assert got[1] > 5 * good[1]  # walked: each answer read the game


def test_a_damaged_frame_in_the_archive_is_never_answered_past():
    """A frame of the archive that fails its checksum ends every walk there:
    an answer whose frames reach it is the archive walked whole (the records
    before it); one that does not is read through the index, and its
    records are the game's own."""
    store = played(fs=CountingFS())
    link = Link(StoreBoard(store=store))
    recs = store.records("0001")
    fin = store.fs.files["/bk/0001.fin"]
    fin[len(fin) // 2] ^= 0x01
    cut = len(store.records("0001"))  # the records before the damaged frame
    assert 16 < cut < len(recs) - 32
    kinds = set()
    for start in range(0, len(recs) + 1, 3):
        for cap in (16, 64, 0xFFFF):
            req = {"from": start, "max": cap}
            got = codec_host.parse_events(codec.Deframer().feed(ask(link, game="0001", **req))[0][3:])
            want = codec_host.parse_events(codec.Deframer().feed(walked(store, link, **req))[0][3:])
            if got[2] == len(recs):  # through the index: the game's own records
                assert got[1] == start and got[4] == recs[start : start + len(got[4])], req
                kinds.add("index")
            else:  # the walk's answer, the walk's bytes
                assert got == want and got[2] == cut, req
                kinds.add("walk")
    assert kinds == {"index", "walk"}


def test_a_late_record_makes_the_summary_stale_and_the_records_are_read():
    store = played()
    log = store._log("0001", ".fin")
    log.load()
    log.append(bytes((1, 0)))
    log.flush()  # the archive grew after its summary
    recs = store.records("0001")
    assert store.window("0001", 0xFFFF, 0) is None
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
ok = st.window("0001", len(recs), 0) == (len(recs), codec.prefix_crc(recs, len(recs)), ()) and st.window("0002", 0xFFFF, 0) is None
print("OK" if ok else "MISMATCH", len(recs), sorted(os.listdir("/flash")))
"""
    out = run_mpy(code, timeout=300).stdout.strip()
    assert out.startswith("OK ") and "'bk-sum'" in out, out


@pytest.mark.mpy
def test_in_micropython_a_fetch_reads_only_the_frames_asked_for():
    """The board's real code (the .mpy bundle in the Unix port), counting
    the frames its Store reads of a 200-record archive: the probe reads one,
    the last 8 records the 16 from their index point to the end, and every
    answer is the archive walked whole's."""
    code = """
import json
from tests.kit.storage_script import CountingFS
from firmware.storage import Store
from firmware.link import Link
from firmware import codec
import engine_lite

g = engine_lite.Game()
g.apply({"ev": "start", "game": "oh-my-orchids", "players": ["A", "B"]})
while len(g.log) < 200:
    g.apply({"ev": "take", "seeds": 1})
    g.apply({"ev": "end_turn"})
recs = [bytes(r) for r in g.log.records()][:200]

class Board:
    def __init__(self, st):
        self.st = st
    def watch(self, fn):
        pass
    def records(self, gid):
        return self.st.records(gid)
    def window(self, gid, start, room):
        return self.st.window(gid, start, room)

st = Store(fs=CountingFS())
st.boot()
game = st.new_game(recs[0])
for r in recs[1:]:
    st.apply(game, r)
st.finish()
lk = Link(Board(st))

def ask(**req):
    req["op"] = "events"
    req["game"] = "0001"
    st.fs.reset()
    out = lk.handle(codec.head(codec.K_REQ, 7) + json.dumps(req).encode())
    return out, st.fs.frames("/bk/0001.fin")

res = []
for req in ({"from": 0, "max": 16}, {"from": 192}, {"from": 200}, {"from": 77, "max": 64}):
    out, frames = ask(**req)
    keep = st.fs.files.pop("/bk-sum/0001")
    walked, wframes = ask(**req)
    st.fs.files["/bk-sum/0001"] = keep
    res.append([frames, wframes, out == walked])
print(json.dumps(res))
"""
    res = json.loads(run_mpy(code, timeout=300).stdout.strip().splitlines()[-1])
    assert all(same for _, _, same in res), res
    assert [f for f, _, _ in res[:3]] == [1, 8, 0], res
    assert res[3][0] <= 16 + 30 and all(w >= 200 for _, w, _ in res[:2] + res[3:]), res

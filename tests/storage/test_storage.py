"""firmware/storage.py: the board's games on flash (docs/storage.md).

Storage that never loses a game: "append-only with a checksum
per record, plus a snapshot so that boot restores in time that does not
grow with the game's length ... Finished games stay archived on flash (say
the last 20) until the host has synced them." Power cuts: test_powercut.py.
"""

import json

import pytest

import engine_lite
from engine_lite import record
from boardkit.memfs import MemFS, PowerCut
from firmware import storage
from firmware.storage import SEG, SNP, FlashLog, Store, default_settings, frame
from tests.kit.flash_images import flash_literal, marathon_on_flash
from tests.kit.mpy_harness import run_mpy
from tests.kit.storage_script import Shadow, load_events, play, session

EVENTS = load_events()  # a full 5-player Stalk Exchange game


def recs_of(events):
    g = engine_lite.Game()
    out = []
    for ev in events:
        out.append(g.encode(ev))
        g.apply_record(out[-1])
    return out


RECS = recs_of(EVENTS)


def played(fs=None, n=len(RECS), **kw):
    fs = MemFS() if fs is None else fs
    store = Store(fs=fs, **kw)
    assert store.boot() is None
    game = store.new_game(RECS[0])
    for rec in RECS[1:n]:
        store.apply(game, rec)
    return fs, store, game


def segments(fs, gid="0001"):
    """The paths of a live log's segments, in order: the full ones in the
    root, the last (or, after a cut, the last two) in the live directory."""
    out = []
    while True:
        name = "%s%s" % (gid, ".l%d" % len(out) if out else ".log")
        p = [d + name for d in ("/bk/", "/bk-live/") if d + name in fs.files]
        if not p:
            return out
        out.append(p[0])


def log_bytes(fs, gid="0001"):
    return b"".join(bytes(fs.files[p]) for p in segments(fs, gid))


def reboot(fs, **kw):
    store = Store(fs=fs.survivor(), **kw)
    return store, store.boot()


def test_empty_flash_boots_to_no_game():
    fs = MemFS()
    store = Store(fs=fs)
    assert store.boot() is None
    assert fs.listdir("/") == ["bk", "bk-live", "bk-snap", "bk-sum"] and store.archived() == []


def test_a_full_game_survives_a_reboot_with_identical_state():
    fs, store, game = played()
    assert store.game_id == "0001"
    store2, g2 = reboot(fs)
    assert g2.events() == EVENTS
    assert g2.state() == game.state()
    assert g2.state()["final"] == engine_lite.replay(json.dumps(e) for e in EVENTS)["final"]
    assert store2.game_id == "0001"


def test_record_framing_is_length_record_crc32():
    import binascii

    f = frame(record.PLANT)
    assert f[:2] == bytes((1, record.OP_PLANT))
    assert int.from_bytes(f[2:], "little") == binascii.crc32(bytes((1, record.OP_PLANT)))
    fs, store, game = played(n=3)
    assert log_bytes(fs) == b"".join(bytes(frame(r)) for r in RECS[:3])


def test_refused_event_writes_nothing():
    fs, store, game = played(n=5)
    before = {p: bytes(d) for p, d in fs.files.items()}
    ops = fs.ops
    with pytest.raises(engine_lite.EngineError) as e:
        store.apply(game, bytes((record.OP_PORTFOLIO, 0, 31, 1, 1, 1, 1, 1)))
    assert e.value.code == "not_over"
    assert fs.ops == ops and {p: bytes(d) for p, d in fs.files.items()} == before
    with pytest.raises(engine_lite.EngineError):
        store.new_game(record.PLANT)  # not a start record: no game, no file
    assert fs.ops == ops


@pytest.mark.parametrize("n", range(3, 21))
def test_refused_event_writes_nothing_even_when_a_snapshot_is_due(n):
    """Whatever the position in the snapshot cycle (every 16 frames)."""
    fs, store, game = played(n=n)
    before = {p: bytes(d) for p, d in fs.files.items()}
    ops = fs.ops
    with pytest.raises(engine_lite.EngineError):
        store.apply(game, bytes((record.OP_PORTFOLIO, 0, 31, 1, 1, 1, 1, 1)))
    with pytest.raises(engine_lite.EngineError):
        store.apply(game, RECS[0])  # a second start
    assert fs.ops == ops and {p: bytes(d) for p, d in fs.files.items()} == before
    assert game.events() == EVENTS[:n]
    g1 = store.new_game(RECS[0])
    ops = fs.ops
    with pytest.raises(engine_lite.EngineError):
        store.undo(g1)  # nothing to undo
    assert fs.ops == ops


def test_undo_is_durable_and_an_undo_frame():
    fs, store, game = played(n=10)
    size = len(log_bytes(fs))
    store.undo(game)
    store.apply(game, record.UNDO)  # the same thing, as a record
    assert log_bytes(fs)[size:] == bytes(frame(record.UNDO)) * 2
    _, g2 = reboot(fs)
    assert g2.events() == EVENTS[:8]
    with pytest.raises(engine_lite.EngineError):  # the start cannot be undone
        g = store.new_game(RECS[0])
        store.undo(g)


def test_undo_reaching_back_before_the_snapshot():
    fs, store, game = played(n=20, snapshot_every=4)
    assert "/bk-snap/0001" + SNP in fs.files
    for _ in range(9):
        store.undo(game)
    assert game.events() == EVENTS[:11]
    _, g2 = reboot(fs, snapshot_every=4)
    assert g2.events() == EVENTS[:11]
    for rec in RECS[11:]:
        store.apply(game, rec)
    _, g3 = reboot(fs, snapshot_every=4)
    assert g3.events() == EVENTS


def test_snapshot_makes_boot_read_a_bounded_number_of_bytes():
    """Boot reads the snapshot, the first frame and the frames after the
    snapshot only: the same few hundred bytes for 100 or 2,000 records."""
    read = {}
    for n in (100, 2000):
        fs, game = marathon_on_flash(n)
        fs2 = fs.survivor()
        g2 = Store(fs=fs2).boot()
        assert len(g2.log) == n and g2.state() == game.state()
        read[n] = fs2.bytes_read
    assert read[2000] <= read[100] * 1.5, read
    assert read[2000] < 1000


def test_a_due_snapshot_is_written_after_the_frame_and_a_cut_in_it_keeps_the_event():
    """flush writes the waiting event's frame first (durable from then on),
    then the due snapshot of the game with that event in it (its work after
    the light). A cut at any op of the snapshot boots with the event (durable,
    not yet acknowledged: the one in flight) and the right state, from a
    full refold; a snapshot never covers a frame the flash does not hold."""
    fs, store, game = played(n=15, snapshot_every=16)
    want = engine_lite.Game()
    for rec in RECS[:16]:
        want.apply_record(rec)
    store.apply(game, RECS[15], later=True)  # the 16th frame since the start: a snapshot is due
    before = fs.ops
    store.flush()
    assert "/bk-snap/0001" + SNP in fs.files and store.log.since == 0
    for cut in range(1, fs.ops - before + 1):
        fs2, store2, game2 = played(n=15, snapshot_every=16)
        store2.apply(game2, RECS[15], later=True)
        fs2.cut_at = fs2.ops + cut
        with pytest.raises(PowerCut):
            store2.flush()
        _, g3 = reboot(fs2, snapshot_every=16)
        kept = EVENTS[:16] if cut > 2 else EVENTS[:15]  # the frame: open-ab, write
        assert g3.events() == kept and (cut <= 2 or g3.state() == want.state())


def _to_second_segment(store, game, fs, i=1):
    """Apply records from RECS[i] until the log's second segment has its
    first frame; the index of the next record."""
    while len(segments(fs)) < 2:
        store.apply(game, RECS[i])
        i += 1
    return i


def test_quiet_moves_the_full_segment_out_of_the_live_directory():
    """The segment a new one took over from leaves the live directory in
    the next quiet spell (Store.quiet, firmware/main.py tidy), not in an
    event's write; without a quiet spell, when the segment after it
    begins. Wherever a segment is, the log reads whole."""
    fs, store, game = played(n=1, clock=lambda: 0)
    i = _to_second_segment(store, game, fs)
    assert segments(fs) == ["/bk-live/0001.log", "/bk-live/0001.l1"]  # the event's write moved nothing
    store.quiet()
    assert segments(fs) == ["/bk/0001.log", "/bk-live/0001.l1"]
    _, g2 = reboot(fs)
    assert g2.events() == EVENTS[:i]
    fs, store, game = played(n=1)  # no clock: no quiet work; the move comes with the segment after
    i = _to_second_segment(store, game, fs)
    while len(segments(fs)) < 3:
        store.apply(game, RECS[i])
        i += 1
    assert segments(fs) == ["/bk/0001.log", "/bk-live/0001.l1", "/bk-live/0001.l2"]


def test_quiet_makes_the_live_directory_compact_ahead_of_the_next_event():
    """littlefs compacts a directory's 4 KB metadata block every ~15
    commits (one 45 ms erase). Once PUMP commits went to the live directory
    since its last compaction (a write that stalled _STALL_MS), the quiet
    spell rewrites a scratch file there until one stalls (at most five),
    so the erase falls in the pause, not in the next event's write. At boot
    the count is unknown: due."""
    now = [0]
    fs, store, game = played(n=2, clock=lambda: now[0])
    scratch = []
    frame_erases = [False]
    fs_open = fs.open

    def flash(path, mode="r"):  # the third scratch rewrite erases; an event's write when told
        if path.endswith(storage.SCRATCH):
            scratch.append(path)
            if len(scratch) == 3:
                now[0] += 45
        elif "a" in mode and frame_erases[0]:
            frame_erases[0] = False
            now[0] += 45
        return fs_open(path, mode)

    fs.open = flash
    store.quiet()
    assert scratch == ["/bk-live" + storage.SCRATCH] * 3  # due since boot: until the erase
    store.quiet()
    assert len(scratch) == 3  # nothing written since: nothing to do
    i = 2
    for _ in range(storage.PUMP - 1):
        store.apply(game, RECS[i])
        i += 1
    store.quiet()
    assert len(scratch) == 3  # not due yet
    store.apply(game, RECS[i])
    store.quiet()
    assert len(scratch) == 8  # due: five rewrites, none erased (the next spell goes on)
    frame_erases[0] = True  # an event's own write erased (no quiet spell came in time): it compacted
    store.apply(game, RECS[i + 1])
    store.quiet()
    assert len(scratch) == 8
    _, g2 = reboot(fs)
    assert g2.events() == EVENTS[: i + 2]  # the scratch file is no game's


def test_a_cut_in_the_quiet_work_loses_nothing():
    """The quiet work (a segment's move, scratch rewrites) changes no
    game: a cut at any of its operations boots with every event."""
    fs, store, game = played(n=1, clock=lambda: 0)
    i = _to_second_segment(store, game, fs)
    before = fs.ops
    store.quiet()
    assert fs.ops - before >= 3
    for cut in range(1, fs.ops - before + 1):
        fs2, store2, game2 = played(n=1, clock=lambda: 0)
        _to_second_segment(store2, game2, fs2)
        fs2.cut_at = fs2.ops + cut
        with pytest.raises(PowerCut):
            store2.quiet()
        _, g3 = reboot(fs2)
        assert g3.events() == EVENTS[:i]


def test_broken_snapshot_falls_back_to_a_full_refold():
    fs, store, game = played(snapshot_every=8)
    snap = fs.files["/bk-snap/0001" + SNP]
    snap[20] ^= 0x40  # crc32 no longer matches
    _, g2 = reboot(fs)
    assert g2.events() == EVENTS and g2.state() == game.state()
    del fs.files["/bk-snap/0001" + SNP]
    _, g3 = reboot(fs)
    assert g3.events() == EVENTS


def test_torn_tail_is_cut_off_and_later_frames_survive():
    fs, store, game = played(n=30)
    assert len(segments(fs)) > 1
    fs.files[segments(fs)[-1]] += bytes(frame(record.SWAP))[:3]  # torn last frame
    store2, g2 = reboot(fs)
    assert g2.events() == EVENTS[:30]
    for rec in RECS[30:40]:
        store2.apply(g2, rec)
    _, g3 = reboot(store2.fs)
    assert g3.events() == g2.events() == EVENTS[:40]


def test_a_live_log_is_small_segments_that_read_as_one():
    """littlefs keeps a file under its inline limit inside the directory's
    metadata: appending to it erases no block. So a live log is segments of
    at most SEG bytes (a frame never spans two), read back as one stream."""
    fs, store, game = played()
    segs = segments(fs)
    assert len(segs) == -(-len(log_bytes(fs)) // SEG) or len(segs) > 3
    assert all(0 < len(fs.files[p]) <= SEG for p in segs)
    assert log_bytes(fs) == b"".join(bytes(frame(r)) for r in RECS)
    _, g2 = reboot(fs)
    assert g2.events() == EVENTS and [bytes(r) for r in g2.log.records()] == RECS


def test_a_bad_frame_in_a_middle_segment_ends_the_log_there():
    fs, store, game = played(n=60, snapshot_every=1000)  # boot walks the whole log
    segs = segments(fs)
    assert len(segs) >= 3
    fs.files[segs[1]][len(fs.files[segs[1]]) // 2] ^= 0xFF  # bit rot in the middle of the second segment
    store2, g2 = reboot(fs, snapshot_every=1000)
    k = len(g2.log)
    assert g2.events() == game.events()[:k] and k < 60
    assert segments(store2.fs) == segs[:2] and len(store2.fs.files[segs[1]]) < len(fs.files[segs[1]])
    assert bytes(store2.fs.files[segs[0]]) == bytes(fs.files[segs[0]])
    for rec in RECS[k : k + 5]:  # later frames land after the intact prefix
        store2.apply(g2, rec)
    _, g3 = reboot(store2.fs, snapshot_every=1000)
    assert g3.events() == g2.events() == EVENTS[: k + 5]


def test_a_game_in_progress_written_by_the_old_firmware_boots_and_goes_on(monkeypatch):
    """The firmware before the live directory kept every file of a game in
    the root, and the one before that the whole log in one file, <gid>.log,
    with snapshots naming offsets in it. That file is simply a long first
    segment: boot reads it where it is (no migration), appends go to the
    next segment, in the live directory, finish archives it as usual. A
    snapshot in the root is dropped (one full refold)."""
    monkeypatch.setattr(storage.FlashLog, "seg", 1 << 15)  # one file, snapshots naming its byte offsets: the old layout
    fs, store, game = played(n=80, snapshot_every=8)
    monkeypatch.undo()
    fs.files["/bk/0001.log"] = fs.files.pop("/bk-live/0001.log")  # where the older firmware kept them
    fs.files["/bk/0001" + SNP] = fs.files.pop("/bk-snap/0001" + SNP)
    assert segments(fs) == ["/bk/0001.log"] and len(fs.files["/bk/0001.log"]) > 2 * SEG
    whole = log_bytes(fs)
    store2, g2 = reboot(fs)
    assert g2.events() == EVENTS[:80] and "/bk/0001" + SNP not in store2.fs.files
    for rec in RECS[80:90]:
        store2.apply(g2, rec)
    assert bytes(store2.fs.files["/bk/0001.log"]) == whole and "/bk-live/0001.l1" in store2.fs.files
    store3, g3 = reboot(store2.fs)
    assert g3.events() == EVENTS[:90]
    store3.undo(g3)
    store3.finish()
    assert store3.records("0001") == RECS[:89]
    store3.new_game(RECS[0])
    assert sorted(store3.fs.files) == ["/bk-live/0002.log", "/bk-sum/0001", "/bk/0001.fin"]


def test_finish_writes_one_file_and_a_cut_after_its_rename_is_finished_at_boot():
    """The rename of the archive file is finish()'s last op (its commit
    point), after its summary's; the segments it leaves go at the next new
    game, or boot."""
    fs, store, game = played(n=50)
    segs = segments(fs)
    store.finish()
    assert sorted(fs.files) == sorted(segs + ["/bk-sum/0001", "/bk/0001.fin"])
    assert store.records("0001") == RECS[:50] and store.archived() == [("0001", False)]
    store2, g2 = reboot(fs)
    assert g2 is None and sorted(store2.fs.files) == ["/bk-sum/0001", "/bk/0001.fin"]
    assert store2.records("0001") == RECS[:50] and store2.archived() == [("0001", False)]
    store.new_game(RECS[0])
    assert sorted(fs.files) == ["/bk-live/0002.log", "/bk-sum/0001", "/bk/0001.fin"]


def test_a_finish_later_waits_for_flush_and_a_cut_in_it_leaves_one_game_or_the_other():
    """finish(later=True) (the app in a loop step) writes nothing until
    flush(), which writes the frame waiting before it, then the finish.
    A cut at any op of that flush boots to the game in progress with every
    event whose apply returned, or to the finished game: never neither."""
    fs, store, game = played(n=len(RECS) - 1)
    store.apply(game, RECS[-1], later=True)  # the last event, shown, not yet written
    before = fs.ops
    store.finish(later=True)
    assert fs.ops == before and store.archived() == []  # queued: no flash op yet
    store.flush()
    n = fs.ops - before
    fsk, storek, gamek = played(n=len(RECS) - 1)
    storek.apply(gamek, RECS[-1], later=True)
    k = fsk.ops
    storek.log.flush()
    k = fsk.ops - k  # the ops of the event's frame (first), a due snapshot's and the finish's after them
    assert n >= k + 3 and store.archived() == [("0001", False)] and store.records("0001") == RECS
    for cut in range(1, n + 1):
        fs2, store2, game2 = played(n=len(RECS) - 1)
        store2.apply(game2, RECS[-1], later=True)
        store2.finish(later=True)
        fs2.cut_at = fs2.ops + cut
        with pytest.raises(PowerCut):
            store2.flush()
        store3, g3 = reboot(fs2)  # the cut op does not happen: the rename is the last one
        assert store3.archived() == [] and g3.events()[: len(RECS) - 1] == EVENTS[: len(RECS) - 1]
        assert g3.events() == EVENTS[: len(RECS) - (cut <= k)]  # and the shown one, once its frame landed
    store4, g4 = reboot(fs)  # the whole flush done: finished, with every event
    assert g4 is None and store4.archived() == [("0001", False)] and store4.records("0001") == RECS


def test_a_late_record_and_an_erase_right_after_finish_ignore_its_leftover_segments():
    """Between finish() and the next new game the segments are still there:
    the archive file is what records, sync and erase see."""
    fs, store, game = played(n=len(RECS) - 1)
    store.finish()
    store.apply(game, RECS[-1])  # a late record goes to the archive file
    assert store.records("0001") == RECS
    assert Store(fs=fs.survivor()).records("0001") == RECS
    store.mark_synced("0001")
    store.erase("0001")  # the host synced it: gone, segments and all
    assert fs.files == {} and store.archived() == []
    _, g2 = reboot(fs)
    assert g2 is None  # not taken back for a game in progress


def test_torn_start_record_means_no_game():
    fs = MemFS()
    fs.mkdir("/bk")
    fs.files["/bk/0001.log"] = bytearray(bytes(frame(RECS[0]))[:7])
    store = Store(fs=fs)
    assert store.boot() is None
    assert fs.listdir("/bk") == [] and fs.listdir("/bk-live") == []
    assert store.new_game(RECS[0]).events() == EVENTS[:1]


def test_finish_archives_and_records_gives_effective_records():
    fs, store, game = played()
    store.undo(game)
    store.apply(game, RECS[-1])
    store.finish()
    assert store.archived() == [("0001", False)]
    assert store.records("0001") == RECS
    assert "/bk-snap/0001" + SNP not in fs.files
    store2, g2 = reboot(fs)
    assert g2 is None and store2.archived() == [("0001", False)]
    g = store2.new_game(RECS[0])
    assert store2.game_id == "0002"
    store2.apply(g, RECS[1])
    assert store2.records("0002") == RECS[:2]
    with pytest.raises(KeyError):
        store2.records("0099")


def test_new_game_while_one_is_in_progress_archives_it():
    fs, store, game = played(n=12)
    store.new_game(RECS[0])
    assert store.archived() == [("0001", False)] and store.game_id == "0002"
    assert store.records("0001") == RECS[:12]


def test_archive_keeps_the_last_20_and_never_prunes_unsynced_games():
    store = Store(fs=MemFS(), keep=20)
    store.boot()
    for _ in range(23):
        g = store.new_game(RECS[0])
        store.apply(g, RECS[1])
        store.finish()
    assert len(store.archived()) == 23  # none synced: none pruned
    for gid, _ in store.archived()[:22]:
        assert store.mark_synced(gid)
    assert store.mark_synced("0004") is True  # already synced: still True
    assert store.mark_synced("0001") is False  # synced, then pruned
    assert store.mark_synced("0999") is False
    arch = store.archived()
    assert len(arch) == 20
    assert arch[-1] == ("0023", False) and arch[0][0] == "0004"
    assert [s for _, s in arch] == [True] * 19 + [False]
    g = store.new_game(RECS[0])
    assert store.game_id == "0024"  # ids never reused


def test_erase_an_archived_game_only():
    fs, store, game = played(n=6)
    store.finish()
    g = store.new_game(RECS[0])
    with pytest.raises(KeyError):
        store.erase("0002")  # in progress
    with pytest.raises(KeyError):
        store.erase("0042")
    store.erase("0001")
    assert store.archived() == [] and "/bk/0001.fin" not in fs.files
    assert store.game_id == "0002" and len(g.log) == 1


def test_settings_defaults_roundtrip_and_corruption():
    fs = MemFS()
    store = Store(fs=fs)
    store.boot()
    s = store.settings()
    assert s == default_settings()
    assert s["track_start"] == {}  # only start spaces the players gave, never the placeholders
    s["names"] = ["Ann", "Bo"]
    s["brightness"] = 20
    s["track_start"]["5"] = 18
    store.save_settings(s)
    assert Store(fs=fs.survivor()).settings() == s
    fs.files["/bk/settings.json"][:] = b"{not json"
    assert Store(fs=fs).settings() == default_settings()


def test_real_os_filesystem(tmp_path):
    """The default fs (os + open) on the host: the simulator's flash."""
    root = str(tmp_path / "bk")
    store = Store(root=root)
    assert store.boot() is None
    game = store.new_game(RECS[0])
    for rec in RECS[1:40]:
        store.apply(game, rec)
    store.undo(game)
    store.save_settings({"brightness": 9})
    g2 = Store(root=root).boot()
    assert g2.events() == EVENTS[:39]
    store.finish()
    assert Store(root=root).archived() == [("0001", False)]
    assert Store(root=root).settings()["brightness"] == 9


def test_flashlog_is_an_engine_log():
    fs = MemFS()
    fs.mkdir("/x")
    log = FlashLog(fs, "/x/a")
    g = engine_lite.Game(log)
    for rec in RECS[:15]:
        g.apply_record(rec)
    g.undo()
    assert len(log) == 14
    assert [bytes(r) for r in log.records()] == RECS[:14]
    assert [bytes(r) for r in log.records(10)] == RECS[10:14]
    log2 = FlashLog(fs, "/x/a")
    log2.load()
    assert engine_lite.Game(log2).events() == EVENTS[:14]


def test_finishing_keeps_the_records_no_undo_took_back():
    """FlashLog.archive copies the frames FlashLog._effective marks, a bit a
    frame: undos (runs of them too) take back the records before them, and
    an undo frame with nothing before it (which FlashLog.pop never writes)
    undoes nothing, so no record is lost to it."""
    fs = MemFS()
    fs.mkdir("/x")
    log = FlashLog(fs, "/x/a")
    log.append(record.UNDO)
    kept = []
    for i, rec in enumerate(RECS):
        log.append(rec)
        kept.append(rec)
        if i % 7 == 3:
            for _ in range(1 + i % 3):
                log.append(record.UNDO)
                kept.pop()
    for _ in log.archive(".fin", "/x/sum"):  # a generator: its pieces, run at once
        pass
    done = FlashLog(fs, "/x/a", ".fin")
    done.load()
    assert [bytes(r) for r in done.records()] == kept


# -- inside a real MicroPython ----------------------------------------------

MPY_SETUP = """
import engine_lite
from boardkit.memfs import MemFS, PowerCut
from firmware.storage import Store
from tests.kit.storage_script import Shadow, load_events, play, session
STEPS = session(load_events())
"""

MPY_CODE = """
out = []
for cut_at in CUTS:
    fs = MemFS(cut_at=cut_at)
    shadow = Shadow()
    try:
        play(Store(fs=fs, snapshot_every=8), STEPS, shadow)
        cut = False
    except PowerCut:
        cut = True
    st = Store(fs=fs.survivor(), snapshot_every=8)
    g = st.boot()
    got = None if g is None else g.events()
    arch = [len(st.records(gid)) for gid, synced in st.archived()]
    ok = cut and shadow.holds(g) and arch == [len(f) for f in shadow.finished]
    out.append('ok' if ok else 'BAD %d' % cut_at)
print(' '.join(out))
"""


@pytest.mark.mpy
@pytest.mark.parametrize("cuts", [[1, 2, 3, 40, 77, 150], [200, 260, 300, 318, 321, 323]])
def test_restore_after_cuts_in_real_micropython(cuts):
    """The same session and power cuts inside a real MicroPython: storage
    and MemFS run as they would on the board, in one interpreter whose
    collector runs whenever the heap asks (a 256 KB heap, many collections)."""
    r = run_mpy("CUTS = %r\n" % cuts + MPY_CODE, setup=MPY_SETUP, heapsize_kb=256)
    assert r.stdout.split() == ["ok"] * len(cuts)


# One boot from the flash: bytes it reads and records it folds (Game.judge).
BOOT_COST = """
from engine_lite.game import Game
from firmware.storage import Store
judged = [0]
_judge = Game.judge
def counting_judge(self, rec):
    judged[0] += 1
    return _judge(self, rec)
Game.judge = counting_judge
fs.bytes_read = 0
g = Store(fs=fs).boot()
print(fs.bytes_read, judged[0], len(g.log))
"""


def boot_cost(n):
    """(flash bytes read, records folded, records restored) of one boot, in MicroPython."""
    r = run_mpy(BOOT_COST, setup=flash_literal(n))
    return tuple(int(x) for x in r.stdout.split())


@pytest.mark.mpy
def test_boot_cost_does_not_grow_with_the_game_in_micropython():
    """The restore budget (docs/storage.md): restore at boot for a 2,000-record game costs at
    most 1.5x a 100-record game.

    Boot = fixed work (directory, snapshot file, first frame) + the frames
    written since the last snapshot (at most snapshot_every, 16); it does
    not read or fold the frames before the snapshot. Counted inside the
    real interpreter, in flash bytes read and records folded (the time per
    boot on the Unix port is a bench figure: bench/bench_board.py)."""
    cost = {n: boot_cost(n) for n in (100, 2000)}
    print("\nboot: 100 records %r, 2000 records %r (bytes read, folded, restored)" % (cost[100], cost[2000]))
    assert cost[100][2] == 100 and cost[2000][2] == 2000
    assert cost[2000][0] <= 1.5 * cost[100][0]
    every = Store(fs=MemFS()).snapshot_every
    assert cost[100][1] <= every and cost[2000][1] <= every

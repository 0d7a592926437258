"""firmware/journal_cp.py: CircuitPython's events to microcontroller.nvm first,
to the FAT drive in quiet spells (the power-cut campaign:
tests/storage/test_powercut_journal.py)."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine_lite import Game

from boardkit.memfs import MemFS
from firmware.journal_cp import JournalFS
from firmware.storage import Store
from tests.kit.mpy_harness import run_mpy
from tests.kit.nvm_flash import NorNvm
from tests.kit.powercut_session import STEPS
from tests.kit.storage_script import records


def _play(store, n=None, quiet=False, until=None):
    """The session's first n steps (a new game, events, undos, a refused
    one) on `store`, up to its finish at most, a quiet spell after each if
    `quiet` (FAT in step with the journal, as in play), and none after the
    one that made `until()` true; its game."""
    game = None
    for kind, rec in STEPS[:n]:
        if kind == "finish":
            break
        if kind == "new":
            game = store.new_game(rec)
        elif kind == "apply":
            store.apply(game, rec)
        elif kind == "undo":
            store.undo(game)
        if quiet:
            store.quiet()
        if until is not None and until():
            break
    return game


def test_the_journal_alone_restores_the_game_without_a_quiet_spell():
    """Power lost before any quiet spell: the FAT drive has none of the
    game, the next boot replays the journal onto it and restores it."""
    fs = MemFS()
    nvm = NorNvm(fs)
    store = Store(fs=JournalFS(fs, nvm))
    game = _play(store, 5)
    assert fs.files == {} and nvm.erases == 0  # only programs so far
    s = fs.survivor()
    again = Store(fs=JournalFS(s, nvm.survivor(s))).boot()
    assert again.events() == game.events()
    assert s.files  # the boot put it on FAT


def test_an_entry_that_does_not_fit_drains_the_journal_first():
    fs = MemFS()
    nvm = NorNvm(fs, size=256)
    store = Store(fs=JournalFS(fs, nvm))
    game = _play(store, 30)
    assert nvm.erases >= 1  # full: drained onto FAT, erased, and on
    assert Store(fs=JournalFS(fs.survivor(), NorNvm(fs, mem=nvm.mem))).boot().events() == game.events()


def test_what_nvm_held_before_is_no_entry_and_is_erased():
    """A board whose nvm held something else (a user's own data): nothing
    there passes an entry's crc32, so boot erases it and the journal
    starts empty."""
    fs = MemFS()
    nvm = NorNvm(fs, mem=bytes(range(256)) * 16)
    j = JournalFS(fs, nvm)
    assert fs.files == {} and nvm.mem == b"\xff" * 4096 and nvm.erases == 1
    assert j.end == 0


def test_a_drive_the_computer_owns_keeps_the_entries_for_a_later_boot():
    """MENU held at reset: the drive stays writable for the computer, so
    the app's writes to it fail (OSError). The journal is not replayed nor
    erased: the next boot that owns the drive replays it."""
    fs = MemFS()
    nvm = NorNvm(fs)
    store = Store(fs=JournalFS(fs, nvm))
    game = _play(store, 4)

    class ReadOnly(MemFS):
        def open(self, path, mode="r"):
            if "w" in mode or "a" in mode or "+" in mode:
                raise OSError(30)  # EROFS
            return MemFS.open(self, path, mode)

    ro = ReadOnly()
    j = JournalFS(ro, NorNvm(ro, mem=nvm.mem))
    assert j.end > 0 and ro.files == {}
    again = Store(fs=JournalFS(fs.survivor(), NorNvm(fs, mem=nvm.mem))).boot()
    assert again.events() == game.events()


@pytest.mark.mpy
def test_the_journal_runs_in_real_micropython():
    """The board's VM: a game written through the journal, an undo read
    through it, left there by a quiet spell, drained, restored by the next
    boot (nvm: a bytearray here)."""
    code = (
        "from boardkit.memfs import MemFS\n"
        "from firmware.journal_cp import JournalFS\n"
        "from firmware.storage import Store\n"
        "fs = MemFS()\n"
        "nvm = bytearray(b'\\xff' * 4096)\n"
        "st = Store(fs=JournalFS(fs, nvm))\n"
        "g = st.new_game(bytes(%s))\n"
        "for r in %s:\n"
        "    st.apply(g, bytes(r))\n"
        "st.undo(g)\n"  # reads the log back through the journal (firmware/journal_read_cp.py)
        "st.quiet()\n"
        "print(sorted(fs.files), nvm[0])\n"
        "st.fs.drain()\n"
        "print(sorted(fs.files), nvm[0])\n"
        "print(Store(fs=JournalFS(fs, nvm)).boot().events() == g.events())\n"
    ) % (list(STEPS[0][1]), [list(r) for _, r in STEPS[1:5]])
    r = run_mpy(code)
    # 3: the entry numbering the log's path; a quiet spell leaves a journal this small alone
    assert r.stdout.splitlines() == ["[] 3", "['/bk-live/0001.log'] 255", "True"]


def _spread_finish(store, fs):
    """finish(later=True), its flush (the press's step), then quiet spells
    until none is due: the flash ops of each, the step's first."""
    n = len(fs.trace)
    store.finish(later=True)
    store.flush()
    pieces = [fs.trace[n:]]
    more = True
    while more:
        n = len(fs.trace)
        more = store.quiet()
        pieces.append(fs.trace[n:])
    return pieces


def test_a_finish_on_the_journal_is_pieces_one_a_quiet_spell():
    """On CircuitPython the end of a game is no burst of FAT work: the press
    that finishes writes nothing, and each quiet spell does one piece (the
    snapshot's removal, the archive's copy, its summary,
    its rename, the pruning, one leftover segment's removal), each at
    most one FAT file written, renamed or removed and one nvm erase. The
    archive is the one a finish at once writes, byte for byte."""
    fs = MemFS(trace=True)
    store = Store(fs=JournalFS(fs, NorNvm(fs)))
    game = _play(store, quiet=True)
    pieces = _spread_finish(store, fs)
    assert pieces[0] == []  # the finishing press's step: no flash work at all
    for p in pieces[1:]:
        kinds = [k for k, _, _ in p]
        assert kinds.count("open-wb") + kinds.count("open-ab") + kinds.count("rename") + kinds.count("remove") <= 2, kinds
        assert kinds.count("nvm-erase") <= 1
        assert len([k for k in kinds if k in ("rename", "remove")]) <= 1
    copies = [p for p in pieces if any(k == "write" for k, _, _ in p)]
    assert len(copies) == 3  # the game the journal held (drained by the first piece), the archive's copy (one piece: on the journal a game's log is one file), its summary
    assert store.archived() == [("0001", False)] and not [n for n in fs.files if n.endswith(".log") or ".l" in n.rsplit("/", 1)[1]]

    once = MemFS()
    store2 = Store(fs=JournalFS(once, NorNvm(once)))
    _play(store2, quiet=True)
    store2.finish()
    assert {p: bytes(d) for p, d in once.files.items() if p.endswith(".fin") or "-sum/" in p} == {
        p: bytes(d) for p, d in fs.files.items() if p.endswith(".fin") or "-sum/" in p}
    assert store.records("0001") == list(game.log.records())


def test_any_other_store_call_ends_a_spread_finish_first():
    """A spread finish under way when the board needs the flash for
    something else (a new game, a sync's listing, a late record): the
    remaining pieces run first, so nothing reads a half-made archive."""
    fs = MemFS()
    store = Store(fs=JournalFS(fs, NorNvm(fs)))
    _play(store, quiet=True)
    store.finish(later=True)
    store.flush()
    assert store.quiet() is True  # one piece, more to come
    assert store.archived() == [("0001", False)]  # the rest, at once, before the listing
    assert store.quiet() is False
    assert store.new_game(STEPS[0][1]) is not None and store.game_id == "0002"


def test_a_quiet_spell_drains_the_journal_only_once_seven_eighths_full():
    """A drain costs FAT a few sector erases however few entries it holds,
    so a quiet spell leaves a journal under seven eighths full alone (its
    entries are durable already: a boot replays them) and drains a fuller
    one whole, in one call, with one nvm erase."""
    fs = MemFS(trace=True)
    nvm = NorNvm(fs, size=1024)
    store = Store(fs=JournalFS(fs, nvm), snapshot_every=4)
    j = store.fs
    spells = []  # (the journal's end before, the flash ops, its end after) of each quiet spell
    quiet = store.quiet

    def spell():
        n, end = len(fs.trace), j.end
        more = quiet()
        spells.append((end, [k for k, _, _ in fs.trace[n:]], j.end))
        return more

    store.quiet = spell
    game = _play(store, quiet=True)
    left = [s for s in spells if s[0] < 896]
    drained = [s for s in spells if s[0] >= 896]
    assert len(left) > 20 and all(ops == [] and after == end for end, ops, after in left)
    assert drained and all(after == 0 and ops.count("nvm-erase") == 1 for end, ops, after in drained)
    assert Store(fs=JournalFS(fs.survivor(), NorNvm(fs, mem=nvm.mem))).boot().events() == game.events()


_FAT_WRITES = ("open-wb", "open-ab", "write", "rename", "remove", "mkdir")


@pytest.mark.parametrize("game", ["stalk-5p-bag", "orchids-5p"])
def test_a_whole_game_played_without_a_rest_writes_no_fat_until_its_finish(game):
    """Nonstop play (no quiet spell in the whole game, as the chip bench
    plays it): every event is one or two nvm programs, nothing is erased
    and no FAT file is written until the game is over, so no press waits
    for FAT's erases. Before, the log's segment moves (renames) and the
    snapshot's read of the start record each drained the journal inside an
    event, and the entries' paths filled it at event 80-96. Then the quiet
    spells leave it in nvm (it is durable there), the finish puts it on
    FAT, and the next boot finds the game archived whole."""
    recs = records("tests/records/%s.jsonl" % game)
    fs = MemFS(trace=True)
    nvm = NorNvm(fs)
    store = Store(fs=JournalFS(fs, nvm), snapshot_every=JournalFS.snapshot_every)
    g = store.new_game(recs[0])
    n = len(fs.trace)
    for rec in recs[1:]:
        store.apply(g, rec, later=True)
        store.flush()
    during = fs.trace[n:]
    assert [k for k, _, _ in during if k in _FAT_WRITES] == [] and nvm.erases == 0
    assert len([k for k, _, _ in during if k == "nvm-program"]) <= 2 * len(recs)
    assert store.fs.end <= 0.8 * store.fs.size, store.fs.end  # a fifth of nvm to spare for undos
    end = store.fs.end
    assert store.quiet() is False and store.fs.end == end  # under seven eighths full: left for the finish
    want = list(g.log.records())
    store.finish()
    again = Store(fs=JournalFS(fs.survivor(), NorNvm(fs, mem=nvm.mem)))
    assert again.boot() is None and again.records("0001") == want


def test_a_file_written_whole_again_is_replayed_once_its_last():
    """The snapshot, written whole at every 32nd frame, goes to FAT once a
    drain, its newest bytes; the appends after it go in the same write (the
    archive's copy: its first frame is a whole write)."""
    fs = MemFS(trace=True)
    j = JournalFS(fs, NorNvm(fs))
    for i in range(3):
        with j.open("/s", "wb") as f:
            f.write(bytes([i]) * 10)
        with j.open("/s", "ab") as f:
            f.write(b"+%d" % i)
    with j.open("/t", "wb") as f:
        f.write(b"t")
    n = len(fs.trace)
    j.drain()
    assert [(k, p) for k, p, _ in fs.trace[n:] if k.startswith("open")] == [("open-wb", "/s"), ("open-wb", "/t")]  # the last whole and its append: one write
    assert bytes(fs.files["/s"]) == b"\x02" * 10 + b"+2" and bytes(fs.files["/t"]) == b"t"


def test_more_paths_than_an_entry_can_number_drain_first():
    """A path's number is one byte: the 257th path in one journal drains it
    first, and every file lands whole."""
    fs = MemFS()
    nvm = NorNvm(fs, size=64 * 1024)
    j = JournalFS(fs, nvm)
    for i in range(300):
        with j.open("/f%d" % i, "wb") as f:
            f.write(b"%d" % i)
    assert nvm.erases == 1 and len(j.ids) == 300 - 256
    j.drain()
    assert {p: bytes(d) for p, d in fs.files.items()} == {"/f%d" % i: b"%d" % i for i in range(300)}


def test_entries_the_earlier_firmware_left_in_nvm_are_replayed():
    """A bundle copied over a board whose journal still holds entries of the
    first layout (each with its path): the new firmware replays them, and
    the game goes on. journal_v1.json is what the firmware at commit
    2fc789e (firmware/journal_cp.py and firmware/storage.py of that commit)
    left after the first 55 records of tests/records/stalk-5p-bag.jsonl
    with no quiet spell: FAT's files and nvm's written bytes, two
    snapshots and 22 appends still in the journal."""
    import json
    from pathlib import Path

    old = json.loads((Path(__file__).parent / "journal_v1.json").read_text())
    fs = MemFS()
    for p in old["dirs"]:
        fs.dirs[p] = 1
    for p, h in old["fat"].items():
        fs.files[p] = bytearray(bytes.fromhex(h))
    nvm = NorNvm(fs, mem=bytes.fromhex(old["nvm"]).ljust(4096, b"\xff"))
    assert nvm.mem[0] == 2  # the first layout's whole file (the snapshot)
    recs = records(old["game"])
    store = Store(fs=JournalFS(fs, nvm))
    game = store.boot()
    want = Game()
    for rec in recs[: old["records"]]:
        want.apply_record(rec)
    assert game.events() == want.events() and nvm.mem[0] == 0xFF
    for rec in recs[old["records"] :]:
        store.apply(game, rec)
        want.apply_record(rec)
    assert Store(fs=JournalFS(fs.survivor(), NorNvm(fs, mem=nvm.mem))).boot().events() == want.events()


def test_settings_saved_on_the_journal_are_one_entry_and_drain_nothing():
    """Saving the settings (the press that starts a game saves the players'
    choices) is one whole-file entry: no temp file and rename, whose
    rename drained the journal inside that press (on the emulated Pico, 5
    erases: 2 s at the datasheet's maximum). A cut after it boots with
    them; the drive has them after a drain."""
    fs = MemFS(trace=True)
    nvm = NorNvm(fs)
    store = Store(fs=JournalFS(fs, nvm))
    store.save_settings({"brightness": 3})
    game = _play(store, 6)
    n = len(fs.trace)
    store.save_settings({"brightness": 5})
    assert [k for k, _, _ in fs.trace[n:]] in (["nvm-program"], ["nvm-program"] * 2)  # (the path's number first, if new)
    s = fs.survivor()
    again = Store(fs=JournalFS(s, NorNvm(s, mem=nvm.mem)))
    assert bytes(s.files["/bk/settings.json"]) == b'{"brightness": 5}'  # the boot's drain put it on the drive
    assert again.settings()["brightness"] == 5 and again.boot().events() == game.events()


def test_a_directory_lists_the_files_the_journal_made_without_draining():
    """A new game lists the games' directory right after the same press
    saved the settings there: the listing has the journal's new file, and
    FAT is not written (a drain there cost that press 5 erases on the
    emulated Pico)."""
    fs = MemFS(trace=True)
    nvm = NorNvm(fs)
    store = Store(fs=JournalFS(fs, nvm))
    store.boot()
    n = len(fs.trace)
    store.save_settings({"brightness": 4})
    game = store.new_game(STEPS[0][1])
    assert "settings.json" in store.fs.listdir("/bk") and "settings.json" not in fs.listdir("/bk")
    assert [k for k, _, _ in fs.trace[n:] if not k.startswith("nvm-program")] == []
    assert store.fs.listdir("/bk-live") == ["0001.log"]  # the first frame's file, in the journal only
    s = fs.survivor()
    assert Store(fs=JournalFS(s, NorNvm(s, mem=nvm.mem))).boot().events() == game.events()


@pytest.mark.mpy
def test_on_the_modeled_fat_drive_one_write_a_run_costs_fewer_erases():
    """bench/bench_fat_cp.py: CircuitPython's drive modeled (the Unix
    port's VfsFat through one 4 KB cache sector that any read or sync
    writes back). A run of appends written in one write() (journal_cp._Run)
    costs FAT fewer erases than frame by frame; whole games of both titles
    drain and finish through the real Store and JournalFS onto it with
    every record kept (the guest checks them)."""
    from bench.bench_fat_cp import measure

    fig = measure()
    assert fig["fat_append_2100b_erases_one_write"] < fig["fat_append_2100b_erases_frame_by_frame"]
    assert all(fig["fat_erases_game_drain_" + t] > 0 for t in ("stalk", "orchids"))


_OPS = st.lists(
    st.tuples(st.sampled_from(["/a", "/b", "/c"]), st.sampled_from(["ab", "ab", "ab", "wb"]), st.binary(min_size=0, max_size=40)),
    max_size=40,
)


@settings(max_examples=150, deadline=None)
@given(fat=st.dictionaries(st.sampled_from(["/a", "/b"]), st.binary(max_size=60)), ops=_OPS, cuts=st.lists(st.integers(0, 200), max_size=4))
def test_a_file_the_journal_holds_reads_as_a_drain_would_leave_it(fat, ops, cuts):
    """Any files on FAT, any appends and whole writes through the journal:
    each file read through it (firmware/journal_read_cp.py: whole, and from
    any offset in pieces) is byte for byte what FAT holds once the journal
    is drained, and the read drains nothing."""
    fs = MemFS(trace=True)
    for p, b in fat.items():
        fs.files[p] = bytearray(b)
    nvm = NorNvm(fs)
    j = JournalFS(fs, nvm)
    for p, mode, data in ops:
        with j.open(p, mode) as f:
            f.write(data)
    n = len(fs.trace)
    read = {}
    for p in sorted(j.sizes):
        with j.open(p, "rb") as f:
            read[p] = f.read()
            for c in cuts:  # from offset c, in pieces of 7
                f.seek(c)
                got = bytearray()
                piece = bytearray(7)
                while True:
                    k = f.readinto(piece)
                    if not k:
                        break
                    got += piece[:k]
                assert bytes(got) == read[p][c:]
    assert fs.trace[n:] == []
    s = fs.survivor()
    JournalFS(s, NorNvm(s, mem=nvm.mem))  # a boot: the journal drained
    assert read == {p: bytes(s.files[p]) for p in read}


def test_an_undo_reads_the_log_back_through_the_journal_and_drains_nothing():
    """An undo refolds from the snapshot, reading the log's frames after it
    back: through the journal, with no drain (each undo had held the board
    for a drain of everything since the last one: a few erases, ~2 s at
    the datasheet's maximum). The game after it is the one FAT holds once
    drained."""
    fs = MemFS(trace=True)
    nvm = NorNvm(fs)
    store = Store(fs=JournalFS(fs, nvm), snapshot_every=JournalFS.snapshot_every)
    recs = records("tests/records/stalk-5p-bag.jsonl")
    game = store.new_game(recs[0])
    for rec in recs[1:45]:
        store.apply(game, rec)
    n = len(fs.trace)
    store.undo(game)
    store.undo(game)
    store.apply(game, recs[43])
    assert [k for k, _, _ in fs.trace[n:]] == ["nvm-program"] * 3
    want = Game()
    for rec in recs[:44]:
        want.apply_record(rec)
    assert game.events() == want.events() and game.state() == want.state()
    s = fs.survivor()
    assert Store(fs=JournalFS(s, NorNvm(s, mem=nvm.mem))).boot().state() == want.state()

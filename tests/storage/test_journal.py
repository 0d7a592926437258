"""firmware/journal_cp.py: CircuitPython's events to microcontroller.nvm first,
to the FAT drive in quiet spells (the power-cut campaign:
tests/storage/test_powercut_journal.py)."""

import pytest

from boardkit.memfs import MemFS
from firmware.journal_cp import JournalFS
from firmware.storage import Store
from tests.kit.mpy_harness import run_mpy
from tests.kit.nvm_flash import NorNvm
from tests.kit.powercut_session import STEPS


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
    """The board's VM: a game written through the journal, drained by the
    quiet spell, restored by the next boot (nvm: a bytearray here)."""
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
        "print(sorted(fs.files), nvm[0])\n"
        "st.quiet()\n"
        "print(sorted(fs.files), nvm[0])\n"
        "print(Store(fs=JournalFS(fs, nvm)).boot().events() == g.events())\n"
    ) % (list(STEPS[0][1]), [list(r) for _, r in STEPS[1:5]])
    r = run_mpy(code)
    assert r.stdout.splitlines() == ["[] 3", "['/bk-live/0001.log'] 255", "True"]  # 3: the entry numbering the log's path


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
    assert len(copies) == 2  # the archive's copy (one piece: on the journal a game's log is one file), its summary
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


def test_a_backlog_drains_a_file_a_quiet_spell():
    """Events with no quiet spell between them (a fast player) leave the
    journal a backlog: the segment's frames, snapshots between them. The
    quiet spells put it on FAT a file a call (Store.quiet answers True
    while some remain, and tidy calls again next turn), not in one call;
    the journal is erased once, after the last; FAT ends as one whole
    drain leaves it."""
    fs = MemFS(trace=True)
    nvm = NorNvm(fs)
    store = Store(fs=JournalFS(fs, nvm), snapshot_every=4)
    game = _play(store, 14)
    once = fs.survivor()
    j2 = JournalFS(once, nvm.survivor(once))  # the same flash, the journal drained whole (as at a boot)
    pieces = []
    more = True
    while more:
        n = len(fs.trace)
        more = store.quiet()
        pieces.append(fs.trace[n:])
    written = [{p for k, p, _ in piece if k in ("open-wb", "open-ab")} for piece in pieces]
    assert len(pieces) >= 2 and all(len(w) <= 1 for w in written), written
    assert [k for piece in pieces for k, _, _ in piece].count("nvm-erase") == 1
    assert {p: bytes(d) for p, d in fs.files.items()} == {p: bytes(d) for p, d in once.files.items()}
    assert j2.end == 0 and Store(fs=JournalFS(fs, nvm)).boot().events() == game.events()


def test_a_journal_half_full_drains_whole_in_one_quiet_spell():
    """Pieces are erased only with the last; a journal past half full is
    drained whole by the next quiet call, so that it never fills up inside
    an event (which then waits for the whole backlog)."""
    fs = MemFS()
    nvm = NorNvm(fs, size=1024)
    store = Store(fs=JournalFS(fs, nvm), snapshot_every=4)
    _play(store, until=lambda: store.fs.end * 2 > store.fs.size)
    assert store.fs.end * 2 > store.fs.size
    assert store.quiet() is False and store.fs.end == 0

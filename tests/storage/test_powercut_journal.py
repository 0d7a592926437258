"""CircuitPython's layout (firmware/journal_cp.py): the same power-cut
guarantees with each event's write in the nvm journal and the FAT files
behind it.

The session of tests/storage/test_powercut.py (a whole 5-player Stalk
Exchange game with undos, a refused event, snapshots, the finish and the
next game's start) runs through Store on JournalFS: the FAT files on MemFS,
the journal on tests/kit/nvm_flash.py's NorNvm (microcontroller.nvm: pages
programmed while erased, else the sector erased and written back), both
counted as one stream of flash ops. Power dies at every one of them; the
next boot (JournalFS drains what the cut left, then Store.boot) must hold
exactly what was acknowledged, or that plus the event in flight. A second
run calls Store.quiet (the loop's quiet spell: the journal's drain) after
every third event, so cuts land inside drains too; a third finishes the
game as the board does on CircuitPython, spread over quiet spells (the
press's step writes nothing; each quiet spell does one piece: the
snapshot's removal, a segment of the archive's copy, its summary, its
rename, the pruning, a leftover segment's removal), so cuts land in every
piece of the end of the game.

What this does not model: the FAT drive's own sector writes (a cut in the
erase of a sector that holds directory entries), which firmware/journal_cp.py
cannot make safe and docs/storage.md states.
"""

import pytest

from boardkit.memfs import MemFS, PowerCut
from engine_lite import Game
from firmware.journal_cp import JournalFS
from firmware.storage import Store
from tests.kit.nvm_flash import NorNvm
from tests.kit.powercut_session import SNAP, STEPS, Shadow, archived_events, play


class JStore(Store):
    """The Store, telling the shadow when an undo is under way: its frame
    is in the journal before the undo reads the log back (which drains
    the journal onto FAT), so a cut can now fall between the two. The
    undo is then the one change in flight (docs/storage.md: durable, not
    yet acknowledged), as an apply's frame is."""

    shadow = None

    def undo(self, game):
        self.shadow.undoing = True
        Store.undo(self, game)
        self.shadow.undoing = False


class DrainStore(JStore):
    """A Store whose journal drains after every third event, as a full
    journal, a read of the log or a sync drains it (a quiet spell after
    every event: it drains only a journal seven eighths full), so that
    cuts fall in drains all through the game."""

    n = 0

    def apply(self, game, rec, later=False):
        Store.apply(self, game, rec, later)
        self.quiet()
        self.n += 1
        if self.n % 3 == 0:
            self.fs.drain()


class SpreadStore(DrainStore):
    """The finish spread over quiet spells: finish(later=True), the step's
    flush, then a quiet spell after another until none is due. Until the
    archive's rename (its commit point) a cut boots back to the game in
    progress; after it, to the game finished: the shadow takes either
    while the pieces run (docs/storage.md)."""

    def finish(self, later=False):
        self.shadow.finishing = True
        Store.finish(self, later=True)
        self.flush()
        while self.quiet():
            pass
        self.shadow.finishing = False


def _session(cls, fs, nvm, shadow):
    store = cls(fs=JournalFS(fs, nvm), snapshot_every=SNAP)
    store.shadow = shadow
    shadow.undoing = False
    shadow.finishing = False
    play(store, STEPS, shadow)


def _holds(shadow, game):
    """Shadow.holds, or the game with the undo under way done."""
    if shadow.holds(game):
        return True
    if not shadow.undoing or game is None:
        return False
    want = Game()
    for rec in shadow.game.log.records():
        want.apply_record(rec)
    want.undo()
    return game.events() == want.events() and game.state() == want.state()


def _trace(cls):
    fs = MemFS(trace=True)
    nvm = NorNvm(fs)
    _session(cls, fs, nvm, Shadow())
    return fs.trace, nvm


def _boot(fs, nvm):
    store = Store(fs=JournalFS(fs, nvm), snapshot_every=SNAP)
    return store, store.boot()


def _check(fs, nvm, shadow):
    store, game = _boot(fs, nvm)
    if shadow.finishing and game is None:  # past the spread finish's commit point: finished, whole
        assert archived_events(store) == shadow.finished + [shadow.game.events()]
        return "finished"
    if shadow.game is not None:
        assert game is not None, "the acknowledged game in progress was lost"
    assert _holds(shadow, game), "the game booted is neither what was acknowledged nor that plus the event in flight"
    assert archived_events(store) == shadow.finished
    if game is not None and len(game.log) > 1:  # the board plays on: undo + redo through the journal
        want = game.events()
        last = bytes(list(game.log.records())[-1])
        store.undo(game)
        store.apply(game, last)
        s2 = fs.survivor()
        again = Store(fs=JournalFS(s2, nvm.survivor(s2)), snapshot_every=SNAP).boot()
        assert again.events() == want
    return "in progress" if shadow.finishing else None


def test_an_event_costs_one_nvm_program_and_no_fat_write():
    """The session without cuts: what the flash does. Every event's frame
    is an nvm program (no erase); FAT is written only by drains (reads,
    renames, removes: the undo's reread, the finish, the next game) and by
    what no event waits for."""
    trace, nvm = _trace(JStore)
    applies = sum(1 for k, _ in STEPS if k == "apply")
    programs = [t for t in trace if t[0] == "nvm-program"]
    assert len(programs) >= applies
    assert nvm.erases < applies // 4
    fs = MemFS()
    nvm = NorNvm(fs)
    store = Store(fs=JournalFS(fs, nvm), snapshot_every=SNAP)
    game = store.new_game(STEPS[0][1])
    store.quiet()
    before = dict((p, bytes(d)) for p, d in fs.files.items())
    rec = next(r for k, r in STEPS[1:] if k == "apply")
    store.apply(game, rec)
    assert {p: bytes(d) for p, d in fs.files.items()} == before  # FAT untouched by the event
    store.fs.drain()  # a drain (the finish, a read, a full journal): FAT gets it, the journal is erased
    assert {p: bytes(d) for p, d in fs.files.items()} != before and nvm.mem[:8] == b"\xff" * 8
    assert _boot(fs, nvm)[1].events() == game.events()


@pytest.mark.slow
@pytest.mark.parametrize("cls, junk", [(JStore, 0xFF), (DrainStore, None), (SpreadStore, 0xFF)],
                         ids=["no-quiet-spells-junk", "drain-every-3-events", "finish-spread-over-quiet-spells-junk"])
def test_cut_at_every_flash_op_of_the_journal_and_fat(cls, junk):
    """A torn write keeps half its bytes; with junk the rest is erased
    flash (0xFF), so only a checksum or a read-back tells."""
    trace, _ = _trace(cls)
    kinds = {t[0] for t in trace}
    assert {"nvm-program", "nvm-erase", "write"} <= kinds
    finishing = []
    for cut in range(1, len(trace) + 1):
        fs = MemFS(cut_at=cut, junk=junk)
        nvm = NorNvm(fs)
        shadow = Shadow()
        with pytest.raises(PowerCut):
            _session(cls, fs, nvm, shadow)
        s = fs.survivor()
        finishing.append(_check(s, nvm.survivor(s), shadow))
    if cls is SpreadStore:  # cuts fell in the pieces on both sides of the commit point (after it: the log's one file removed)
        assert finishing.count("in progress") > 20 and finishing.count("finished") >= 1, finishing.count("finished")


@pytest.mark.slow
def test_a_cut_in_the_boot_drain_is_survived_too():
    """Boot replays the journal on FAT before the Store reads anything: cut
    it at each of its ops, then boot again."""
    trace, _ = _trace(DrainStore)
    checked = 0
    for cut in range(40, len(trace), 37):
        fs = MemFS(cut_at=cut)
        nvm = NorNvm(fs)
        shadow = Shadow()
        with pytest.raises(PowerCut):
            _session(DrainStore, fs, nvm, shadow)
        probe = fs.survivor()
        probe.trace = []
        _boot(probe, nvm.survivor(probe))
        for j in range(1, len(probe.trace) + 1):
            half = fs.survivor(cut_at=j)
            n2 = nvm.survivor(half)
            with pytest.raises(PowerCut):
                _boot(half, n2)
            s = half.survivor()
            _check(s, n2.survivor(s), shadow)  # the nvm as that cut boot left it
            checked += 1
    assert checked > 0

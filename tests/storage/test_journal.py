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


def _play(store, n):
    """The session's first n steps (a new game, events, undos, a refused
    one) on `store`; its game."""
    game = None
    for kind, rec in STEPS[:n]:
        if kind == "new":
            game = store.new_game(rec)
        elif kind == "apply":
            store.apply(game, rec)
        elif kind == "undo":
            store.undo(game)
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
    assert r.stdout.splitlines() == ["[] 1", "['/bk-live/0001.log'] 255", "True"]

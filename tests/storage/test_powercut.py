"""Power cuts at every instant of a full game (storage that never
loses a game: "A power cut at any moment (also mid-write, leaving a torn
record) must boot into a state that holds every event the board had
acknowledged ... cut power at every write of a scripted full game, and at
every byte of a torn write.").

The session (tests/kit/storage_script.py): a whole 5-player Stalk Exchange game
(both end conditions' bookkeeping, portfolios, final scores) played through
Store.apply, with undos (one crossing a snapshot, one sent as an R.UNDO
record), a refused event, finish (archive) and the start of a next game;
snapshots every 8 frames so many snapshot writes are cut too.

After every cut, a fresh Store boots on the surviving bytes and must hold
EXACTLY the acknowledged events (those whose Store call returned): no event
lost, no unacknowledged event kept. Then the board keeps playing on that
flash (undo + redo, i.e. appends after a cut-off torn tail) and boots once
more. Figures for docs/storage.md are printed with -s.
"""

import random
import time

import pytest

from boardkit.memfs import MemFile, MemFS, PowerCut
from firmware.storage import Store
from tests.kit.powercut_session import SNAP, STEPS, TRACE, ForkFS, Shadow, archived_events, play


def check_boot(fs, shadow, keep_playing=True):
    """Boot on `fs` (a survivor); assert it holds exactly what was acked
    (or that plus the apply in flight, whose frame may have landed)."""
    store = Store(fs=fs, snapshot_every=SNAP)
    game = store.boot()
    if shadow.game is not None:
        assert game is not None, "the acknowledged game in progress was lost"
    assert shadow.holds(game), "the game booted is neither what was acknowledged nor that plus the event in flight"
    assert archived_events(store) == shadow.finished
    if keep_playing and game is not None:
        want = game.events()
        if len(game.log) > 1:  # undo + redo: frames appended after the cut
            last = bytes(list(game.log.records())[-1])
            store.undo(game)
            store.apply(game, last)
            assert game.events() == want  # the LIVE log reads back the frames written after boot (docs/storage.md)
        again = Store(fs=fs.survivor(), snapshot_every=SNAP).boot()
        assert again.events() == want
    return store


def test_session_is_a_full_game_with_undos_snapshots_and_archive():
    kinds = [k for k, _ in STEPS]
    assert kinds.count("undo") >= 10 and "refused" in kinds and "finish" in kinds
    ops = [op for op, _, _ in TRACE]
    snapshots = [path for op, path, _ in TRACE if op == "open-wb" and path.endswith(".snp")]
    assert len(snapshots) >= 10 and ops.count("rename") >= 1  # snapshots (in place) + the archive
    shadow = Shadow()
    store = Store(fs=MemFS(), snapshot_every=SNAP)
    play(store, STEPS, shadow)
    final = shadow.finished[0]
    assert final[-1]["ev"] == "portfolio" and len(final) > 100


@pytest.mark.slow
@pytest.mark.parametrize("junk", [None, 0xFF])
def test_cut_at_every_flash_op(junk):
    """Every op of the session (open-for-write, write, rename, remove,
    mkdir) in turn is where power dies; a write keeps half its bytes (the
    rest missing, or erased flash). Boot itself (cleaning up a torn tail)
    is cut at each of its ops too."""
    t0 = time.time()
    recovery_cuts = 0
    for cut in range(1, len(TRACE) + 1):
        fs = MemFS(cut_at=cut, junk=junk)
        shadow = Shadow()
        with pytest.raises(PowerCut):
            play(Store(fs=fs, snapshot_every=SNAP), STEPS, shadow)
        probe = fs.survivor()
        probe.trace = []
        Store(fs=probe, snapshot_every=SNAP).boot()
        for j in range(1, len(probe.trace) + 1):  # cut the recovery too
            half = fs.survivor(cut_at=j)
            with pytest.raises(PowerCut):
                Store(fs=half, snapshot_every=SNAP).boot()
            check_boot(half.survivor(), shadow, keep_playing=False)
            recovery_cuts += 1
        check_boot(fs.survivor(), shadow)
    print("\ncut points (ops): %d, recovery cuts: %d, %.1f s" % (len(TRACE), recovery_cuts, time.time() - t0))
    assert recovery_cuts > 0


@pytest.mark.slow
def test_torn_write_at_every_byte_of_every_write():
    """Every byte of every write of the session, twice: the write cut
    after k bytes with the rest missing, and with the rest left as erased
    flash (0xFF: only the crc32 can tell): ~5,000 torn states, each booted.
    A sample is cross-checked byte for byte against a real
    cut_at/torn replay, so the fork is the same flash as a real cut."""
    t0 = time.time()
    shadow = Shadow()
    seen = []

    def on_torn(survivor, op, k, junk):
        if len(seen) % 97 == 0:  # before booting: boot repairs the flash
            samples.append((op, k, junk, {p: bytes(d) for p, d in survivor.files.items()}))
        check_boot(survivor, shadow, keep_playing=(len(seen) % 8 < 2))
        seen.append((op, k))

    samples = []
    play(Store(fs=ForkFS(on_torn), snapshot_every=SNAP), STEPS, shadow)
    written = sum(n for op, _, n in TRACE if op == "write")
    assert len(seen) == 2 * written
    for op, k, junk, files in samples:
        fs = MemFS(cut_at=op, torn=k, junk=junk)
        with pytest.raises(PowerCut):
            play(Store(fs=fs, snapshot_every=SNAP), STEPS, Shadow())
        assert {p: bytes(d) for p, d in fs.files.items()} == files
    print("\ntorn cut points (bytes): %d, %.1f s" % (len(seen), time.time() - t0))


@pytest.mark.slow
def test_random_cuts_with_random_tears_are_reproducible():
    rnd = random.Random(3)
    for _ in range(40):
        cut = rnd.randint(1, len(TRACE))
        fs = MemFS(cut_at=cut, torn=rnd.randint(0, 300), junk=rnd.choice((None, 0, 0xFF, 0x55)))
        shadow = Shadow()
        with pytest.raises(PowerCut):
            play(Store(fs=fs, snapshot_every=SNAP), STEPS, shadow)
        check_boot(fs.survivor(), shadow)

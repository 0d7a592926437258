"""A regression: "Any restore from flash followed by
two events and an undo" raised IndexError: the log tail cached at boot
served offsets of frames written after boot. These tests play on the LIVE
Store after a restore (not only on a fresh boot, which always read right)
and compare, after every step, what the live log reads back with the
engine's own fold of the events that should be there.

Both titles; restores without a snapshot, and with snapshots before the
restore and between the restore and the undos; one undo and undo chains
that reach back past the snapshot point.
"""

import pytest

import engine_lite
from boardkit.memfs import MemFS
from firmware.storage import Store, frame
from tests.kit.app_helpers import Board
from tests.kit.tablebot import orchids_game, stalk_game

TITLES = {
    "stalk": [bytes(r) for r in stalk_game(11, 3).log.records()],
    "orchids": [bytes(r) for r in orchids_game(12, 3).log.records()],
}


def check_live(store, game, want):
    """The live log reads back exactly `want`, and the state is its fold."""
    assert list(store.log.records()) == want
    assert len(store.log) == len(want)
    ref = engine_lite.Game()
    for rec in want:
        ref.apply_record(rec)
    assert game.state() == ref.state()
    assert store.records(store.game_id) == want


def restored(recs, before, snap_every):
    """`before` records played, power cut, and booted again on that flash."""
    fs = MemFS()
    store = Store(fs=fs, snapshot_every=snap_every)
    store.boot()
    game = store.new_game(recs[0])
    for rec in recs[1:before]:
        store.apply(game, rec)
    store = Store(fs=fs.survivor(), snapshot_every=snap_every)
    return store, store.boot()


# (records before the restore, snapshot_every, records after, undos)
CASES = [
    (3, 1000, 2, 1),  # the failing case: no snapshot anywhere
    (3, 1000, 2, 2),
    (12, 1000, 6, 9),  # undo chain past every frame written after boot
    (12, 5, 1, 1),  # restored from a snapshot, nothing in between
    (12, 5, 2, 1),
    (12, 5, 9, 3),  # a snapshot taken between the restore and the undos
    (12, 5, 9, 12),  # ... and undos back past both snapshot points
    (21, 8, 14, 20),
]


@pytest.mark.parametrize("title", sorted(TITLES))
@pytest.mark.parametrize("before,every,after,undos", CASES)
def test_events_and_undo_after_a_restore_read_the_live_log_right(title, before, every, after, undos):
    recs = TITLES[title]
    store, game = restored(recs, before, every)
    want = recs[:before]
    check_live(store, game, want)
    for rec in recs[before : before + after]:
        store.apply(game, rec)
        want.append(rec)
        check_live(store, game, want)
    for _ in range(undos):
        store.undo(game)
        want.pop()
        check_live(store, game, want)
    for rec in recs[len(want) : len(want) + 3]:  # and play on after the undos
        store.apply(game, rec)
        want.append(rec)
        check_live(store, game, want)
    store2 = Store(fs=store.fs.survivor(), snapshot_every=every)
    assert store2.boot().state() == game.state()


def test_a_torn_tail_cut_off_at_boot_is_never_read_back():
    """The boot cache holds the file as read, torn bytes included; after
    boot cuts the torn frame off (and restores from the snapshot, so the
    file is not read again), the next frames land where it was."""
    recs = TITLES["orchids"]
    store, game = restored(recs, 6, 4)
    longest = max(recs, key=len)
    f = store.fs.open(store.log.path(store.log.end >> 16, store.log.tip), "ab")
    f.write(frame(longest)[:-1])  # a long frame, torn one byte short
    f.close()
    store = Store(fs=store.fs.survivor(), snapshot_every=1000)
    game = store.boot()
    want = recs[:6]
    check_live(store, game, want)
    for rec in recs[6:9]:
        store.apply(game, rec)
        want.append(rec)
        check_live(store, game, want)
    store.undo(game)
    want.pop()
    check_live(store, game, want)


def test_plant_end_turn_undo_after_a_restart_on_the_real_app():
    """The failing case, reproduced through the buttons: start a Stalk
    Exchange game, plant, lose power, plant, end the turn, UNDO."""
    b = Board()
    b.do("ok\nok\nok\n")  # Stalk Exchange, 3 players (the default), default track start
    assert b.screen == "stalk"
    b.do("ok")
    b = b.reboot()
    assert b.screen == "stalk"
    before = b.state
    b.do("ok")
    planted = b.state
    b.do("long ok\nundo")
    assert b.screen == "stalk" and b.state == planted
    assert len(list(b.store.log.records())) == len(b.app.game.log) == 3
    b.do("undo")
    assert b.state == before

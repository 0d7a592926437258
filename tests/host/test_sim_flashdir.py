"""The simulator's flash lives inside its directory (host/board_sim/flashdir.py):
deleting the directory gives a fresh board, as the README says, and a
directory of the older layout (the games in it, the game in progress and
its snapshot in the siblings `D-live`, `D-snap`) moves into the new one on
first start without losing the game in progress.

The board is the real simulator (SimBoard: the firmware's App and Store on
a real directory); the sync is host/sync/link + host/sync/db over its pty.
"""

import os
import shutil
import threading

import pytest

import host.sync.db
from host.board_sim import flashdir
from host.board_sim.board import SimBoard
from host.board_sim.serve_record import load_into, record_events, serve
from host.errors import UserError
from host.sync.link import connect
from tests.kit.mpy_harness import REPO

RECORDS = os.path.join(REPO, "tests", "records")


def started(d, link=False):
    return SimBoard(state_dir=str(d), clock=lambda: 0, link=link).start()


def play(sb, name, lines=None):
    events = record_events(os.path.join(RECORDS, name))
    load_into(sb.app, events[:lines] if lines else events)
    sb.tick()
    return [bytes(r) for r in sb.store.records(sb.store.game_id)]


def in_progress(sb):
    """The records of the game the board resumed (None: no game in progress)."""
    if sb.store.log is None:
        return None
    return [bytes(r) for r in sb.store.records(sb.store.game_id)]


def to_older_layout(d):
    """What the older simulator left for directory `d`: the store's root was
    `d` itself, so the live and snapshot directories were its siblings."""
    root = flashdir.flash_root(str(d))
    for n in os.listdir(root):
        os.rename(os.path.join(root, n), os.path.join(str(d), n))
    os.rmdir(root)
    os.rename(root + "-live", str(d) + "-live")
    os.rename(root + "-snap", str(d) + "-snap")


def test_the_flash_is_inside_the_directory(tmp_path):
    d = tmp_path / "pico"
    sb = started(d)
    play(sb, "stalk-2p.jsonl", 8)
    sb.close()
    assert sorted(os.listdir(tmp_path)) == ["pico"]  # nothing beside it
    assert {"bk", "bk-live", "bk-snap", "board-id"} <= set(os.listdir(d))
    assert os.listdir(d / "bk-live")  # the game in progress is in there


def test_deleting_the_directory_gives_a_fresh_board(tmp_path):
    d = tmp_path / "pico"
    sb = started(d)
    recs = play(sb, "stalk-2p.jsonl", 8)
    old_id = sb.hw.uid
    sb.close()
    sb = started(d)
    assert in_progress(sb) == recs  # a restart resumes the game
    sb.close()
    shutil.rmtree(d)
    sb = started(d)
    try:
        assert in_progress(sb) is None and sb.store.archived() == [] and sb.hw.uid != old_id
    finally:
        sb.close()


def test_an_older_layout_moves_in_on_first_start_with_its_game_in_progress(tmp_path):
    d = tmp_path / "pico"
    sb = started(d)
    finished = play(sb, "orchids-2p.jsonl")
    going = play(sb, "stalk-2p.jsonl", 12)
    uid = sb.hw.uid
    archived = sorted(sb.store.archived())
    sb.close()
    to_older_layout(d)
    assert sorted(os.listdir(tmp_path)) == ["pico", "pico-live", "pico-snap"]
    sb = started(d)
    try:
        assert in_progress(sb) == going and sb.hw.uid == uid
        assert sorted(sb.store.archived()) == archived and archived
        assert [bytes(r) for r in sb.store.records(archived[0][0])] == finished
    finally:
        sb.close()
    assert sorted(os.listdir(tmp_path)) == ["pico"]  # the siblings moved in
    assert {"bk", "bk-live", "bk-snap"} <= set(os.listdir(d))


def test_a_move_cut_half_way_finishes_at_the_next_start(tmp_path):
    d = tmp_path / "pico"
    sb = started(d)
    going = play(sb, "stalk-2p.jsonl", 12)
    sb.close()
    to_older_layout(d)
    # cut after the siblings moved and one of the root's files was gathered
    os.rename(str(d) + "-live", str(d / "bk-live"))
    os.rename(str(d) + "-snap", str(d / "bk-snap"))
    os.makedirs(d / "bk.move")
    moved = [n for n in os.listdir(d) if n not in ("board-id", "sim.lock", "bk-live", "bk-snap", "bk.move")]
    if moved:
        os.rename(d / moved[0], d / "bk.move" / moved[0])
    sb = started(d)
    try:
        assert in_progress(sb) == going
    finally:
        sb.close()
    assert not os.path.exists(d / "bk.move")


def test_siblings_of_a_deleted_directory_are_not_taken_into_a_fresh_one(tmp_path):
    """The older simulator's bug: `rm -rf D` left D-live, and the next
    simulator on D resumed the old game under a new id."""
    d = tmp_path / "pico"
    sb = started(d)
    play(sb, "stalk-2p.jsonl", 12)
    sb.close()
    to_older_layout(d)
    shutil.rmtree(d)
    sb = started(d)
    try:
        assert in_progress(sb) is None
    finally:
        sb.close()
    assert os.path.isdir(str(d) + "-live")  # not ours to delete: left as it was


@pytest.mark.slow

def synced(sb, db):
    """`sync` of the simulated board `sb` into `db` over its real pty (the
    board served in a thread, as `bloomkeeper sim` serves it); the board is
    closed after. Whatever sync raises reaches the caller."""
    done = []
    t = threading.Thread(target=serve, args=(sb, lambda: done, 0.002), daemon=True)
    t.start()
    try:
        link = connect(sb.link_path, cap=30)
        try:
            return host.sync.db.sync(link, db)
        finally:
            link.close()
    finally:
        done.append(1)
        t.join(5)
        sb.close()

def test_a_deleted_and_reused_directory_syncs_as_a_new_board(tmp_path):
    """The finding: after `rm -rf D` every later sync was refused ("synced
    from board ..."). Now the board on D is new, and both syncs store."""
    d = tmp_path / "pico"
    db = host.sync.db.Database(str(tmp_path / "plays.sqlite3"))
    plays = []
    for _ in range(2):
        sb = SimBoard(state_dir=str(d)).start()
        play(sb, "stalk-2p.jsonl", 12)
        plays.append(synced(sb, db)["board"])
        shutil.rmtree(d)
    assert len(set(plays)) == 2 and len(db.plays()) == 2


def test_the_refusal_of_a_flash_under_another_id_says_how_to_go_on(tmp_path):
    """Still possible with a copied simulator directory: the line says what to do."""
    d = tmp_path / "pico"
    db = host.sync.db.Database(str(tmp_path / "plays.sqlite3"))
    msgs = []
    for n in range(2):
        sb = SimBoard(state_dir=str(d)).start()
        if n == 0:
            play(sb, "stalk-2p.jsonl", 12)
        try:
            synced(sb, db)
        except UserError as err:
            msgs.append(str(err))
        os.remove(d / flashdir.ID_FILE)  # the same flash under another id (a copy)
    assert len(msgs) == 1 and "\n" not in msgs[0] and "delete its --state-dir" in msgs[0], msgs

"""Faults on the link: "cut the link at random points (100+
trials): the database always ends equal to the board's log, never a
duplicate"; plus line noise, and a board whose game changes between syncs
(an undo after a sync rewrites the tail of the game in progress).

The board is the real Store (on MemFS) behind the real device Link; the host
is the real HostLink + sync; the wire is tests/kit/linkkit.LoopSerial, which can
cut the connection after any number of bytes.
"""

import random

import pytest

import host.sync.db
from host.errors import UserError
from tests.kit import tablebot
from tests.kit.linkkit import StoreBoard, host_for

pytestmark = pytest.mark.slow  # syncs cut at random points, on a pty

TRIALS = 120


def game_lines(seed):
    g = tablebot.stalk_game(seed, players=random.Random(seed).randint(2, 5)) if seed % 2 else tablebot.orchids_game(seed)
    return tablebot.record_lines(g)


def make_board(seed):
    """A board with two archived games and one in progress."""
    rnd = random.Random(seed)
    b = StoreBoard(board_id="b%d" % (seed % 3))
    b.load(game_lines(seed), finish=True)
    b.load(game_lines(seed + 1), finish=True)
    lines = game_lines(seed + 2)
    b.load(lines[: rnd.randint(1, len(lines))])
    return b


def assert_db_equals_board(db, b):
    board_id = b.board_id
    ids = [g for g, _ in b.archived()] + ([b.current()] if b.current() else [])
    for gid in ids:
        assert db.records(board_id, gid) == [bytes(r) for r in b.records(gid)], gid
    dup = db.con.execute(
        "SELECT COUNT(*) FROM (SELECT board, ident FROM games GROUP BY board, ident HAVING COUNT(*) > 1)"
    ).fetchone()[0]
    assert dup == 0, "one play per board game"
    for play, n, top in db.con.execute("SELECT game, COUNT(*), MAX(idx) FROM events GROUP BY game"):
        assert top == n - 1, "no gaps"
    for gid, synced in b.archived():
        if synced:
            assert db.records(board_id, gid) == [bytes(r) for r in b.records(gid)], "marked synced only when held"


def full_sync_bytes(seed):
    b = make_board(seed)
    dev, ser, hl = host_for(b)
    db = host.sync.db.Database(":memory:")
    host.sync.db.sync(hl, db)
    return ser.crossed


def mutate(b, rnd):
    """The table goes on between two syncs: undo some, play on, or finish."""
    if b.game is None:
        return
    for _ in range(rnd.randint(0, 3)):
        try:
            b.play({"ev": "undo"})
        except Exception:
            break
    if rnd.random() < 0.3 and b.game is not None:
        b.finish()


@pytest.mark.parametrize("block", range(4))
def test_cut_at_random_points_db_ends_equal_to_board(block, tmp_path):
    rnd = random.Random(block)
    for trial in range(TRIALS // 4):
        seed = block * 1000 + trial
        b = make_board(seed)
        total = full_sync_bytes(seed)
        db = host.sync.db.Database(str(tmp_path / ("t%d.sqlite3" % trial)))
        for cut in sorted(rnd.sample(range(1, total), 3)):
            _, ser, hl = host_for(b, cut_after=cut, request_timeout=0.01)
            with pytest.raises(UserError):
                hl.hello()
                host.sync.db.sync(hl, db)
                raise UserError("finished before the cut")  # the cut came after the last byte
            if rnd.random() < 0.5:
                mutate(b, rnd)
        _, ser, hl = host_for(b)
        host.sync.db.sync(hl, db)
        assert_db_equals_board(db, b)
        _, ser, hl = host_for(b)
        assert host.sync.db.sync(hl, db)["added"] == 0, "a second sync adds nothing"
        db.close()


def test_sync_through_line_noise(tmp_path):
    """Lost bytes: frames fail their checksum, requests are retried, the result is exact."""
    for seed in range(6):
        b = make_board(seed)
        db = host.sync.db.Database(":memory:")
        _, ser, hl = host_for(b, noise=0.004, seed=seed, request_timeout=0.005)
        hl.retries = 50
        hl.hello()
        host.sync.db.sync(hl, db)
        assert_db_equals_board(db, b)


def test_undo_on_the_board_after_a_sync_is_followed(tmp_path):
    b = StoreBoard()
    lines = game_lines(7)
    b.load(lines[:40])
    db = host.sync.db.Database(":memory:")
    host.sync.db.sync(host_for(b)[2], db)
    b.play({"ev": "undo"})
    b.play({"ev": "undo"})
    host.sync.db.sync(host_for(b)[2], db)
    assert_db_equals_board(db, b)
    b.load(lines[38:45])
    host.sync.db.sync(host_for(b)[2], db)
    assert_db_equals_board(db, b)


def test_a_board_that_never_answers_does_not_hang_the_host():
    class Mute:
        def feed(self, data):
            return b""

    from tests.kit.linkkit import LoopSerial
    from host.sync.link import HostLink
    import time

    hl = HostLink(LoopSerial(Mute()), name="mute", request_timeout=0.05, cap=5)
    t0 = time.monotonic()
    with pytest.raises(UserError, match="went unanswered"):
        hl.hello()
    assert time.monotonic() - t0 < 5


def test_the_overall_cap_stops_a_slow_exchange():
    class Trickle:
        """Answers nothing useful but keeps the line busy with garbage."""

        def feed(self, data):
            return b"\x07" * 10

    from tests.kit.linkkit import LoopSerial
    from host.sync.link import HostLink

    hl = HostLink(LoopSerial(Trickle()), name="slow", request_timeout=0.05, cap=0.2, retries=100)
    with pytest.raises(UserError, match="gave up"):
        hl.hello()

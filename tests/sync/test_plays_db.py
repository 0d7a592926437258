"""The plays database (host/sync/db.py): game identity, the one legitimate change
(an undo of a stored game's tail, same board, same game), migrations from
the release before, concurrent writers, and bad input as one line.

Boards here are tests/kit/linkkit.StoreBoard (the real Store on MemFS behind the
real device Link); the database is a real SQLite file.
"""

import multiprocessing
import os
import shutil
import sqlite3
import subprocess
import sys

import pytest

import host.sync.db
from host.errors import UserError
from tests.kit.linkkit import StoreBoard, host_for
from tests.kit.mpy_harness import REPO

RECORDS = os.path.join(REPO, "tests", "records")
FIXTURE_V0 = os.path.join(REPO, "tests", "fixtures", "plays-v0.sqlite3")


def lines(name, n=None):
    with open(os.path.join(RECORDS, name)) as f:
        out = [t for t in f.read().splitlines() if t.strip()]
    return out[:n] if n else out


def sync(board, db):
    return host.sync.db.sync(host_for(board)[2], db)


def bk(*args):
    return subprocess.run([sys.executable, "-m", "host.cli", *args], cwd=REPO, capture_output=True, text=True, timeout=60)


def n_plays(db):
    return db.con.execute("SELECT COUNT(*) FROM games").fetchone()[0]


# -- identity ---------------------------------------------------------------------

def test_an_undo_of_the_tail_on_the_same_board_changes_the_stored_game(tmp_path):
    """The one legitimate change to a stored game: same board, same game
    (same nonce), its tail undone and played differently."""
    b = StoreBoard(uid="u1")
    b.load(lines("stalk-4p.jsonl", 40))
    db = host.sync.db.Database(str(tmp_path / "p.sqlite3"))
    sync(b, db)
    for _ in range(3):
        b.play({"ev": "undo"})
    b.load(lines("stalk-4p.jsonl")[37:45])
    sync(b, db)
    assert n_plays(db) == 1
    assert db.records("u1", "0001") == [bytes(r) for r in b.records("0001")]


def test_a_different_game_with_the_same_number_is_a_new_play(tmp_path):
    """The bug this guards against: a board whose flash was erased counts from 0001
    again. Even the very same table (same record) is a new play: its nonce
    differs. The stored game is never replaced."""
    db = host.sync.db.Database(str(tmp_path / "p.sqlite3"))
    b = StoreBoard(uid="u1")
    b.load(lines("stalk-2p.jsonl"), finish=True)
    sync(b, db)
    first = db.records("u1", "0001")
    erased = StoreBoard(uid="u1")  # same board, empty flash
    erased.load(lines("stalk-2p.jsonl", 5))
    sync(erased, db)
    plays = db.plays()
    assert len(plays) == 2 and [p["game_id"] for p in plays] == ["0001", "0001"]
    assert plays[0]["events"][1:] != plays[1]["events"][1:]
    kept = [p for p in plays if "final" in p]
    assert len(kept) == 1 and len(kept[0]["events"]) == len(first), "the finished game is intact"
    sync(b, db)  # the old flash again (a restored backup): still two plays, nothing changed
    sync(erased, db)
    assert n_plays(db) == 2


def test_a_game_without_identity_is_never_replaced(tmp_path):
    """Older firmware wrote no nonce: a changed game there cannot
    be told from another game, so it is kept as a second play (nothing is
    lost), and the next sync continues the newer one."""

    class OldBoard(StoreBoard):
        def new_game(self, rec):
            self.game = self.store.new_game(rec)  # no stamp
            self._fire(0, rec)

    db = host.sync.db.Database(str(tmp_path / "p.sqlite3"))
    b = OldBoard(board_id="rp2")
    b.load(lines("orchids-2p.jsonl", 12))
    sync(b, db)
    b.play({"ev": "undo"})
    b.play({"ev": "undo"})
    sync(b, db)
    sync(b, db)
    assert n_plays(db) == 2
    assert db.records("rp2", "0001") == [bytes(r) for r in b.records("0001")]


def test_two_old_boards_of_one_type_with_the_same_start_are_two_plays(tmp_path):
    """Firmware without board ids or nonces: two Picos, game 0001 each, the
    same players. Synced alternately they stay two plays (no flip-flop
    copies): each sync continues the play that is a prefix of the board's."""

    class OldBoard(StoreBoard):
        def new_game(self, rec):
            self.game = self.store.new_game(rec)

    db = host.sync.db.Database(str(tmp_path / "p.sqlite3"))
    a, b = OldBoard(board_id="rp2"), OldBoard(board_id="rp2")
    a.load(lines("stalk-4p.jsonl", 10))
    b.load(lines("stalk-4p.jsonl", 4) + ['{"ev":"swap"}'])
    for _ in range(3):
        sync(a, db)
        sync(b, db)
    assert n_plays(db) == 2
    stored = sorted(len(db.play_records(p)) for (p,) in db.con.execute("SELECT id FROM games"))
    assert stored == [5, 10]


def test_a_flash_that_reports_another_board_id_is_one_line_and_changes_nothing(tmp_path):
    db = host.sync.db.Database(str(tmp_path / "p.sqlite3"))
    b = StoreBoard(uid="u1")
    b.load(lines("orchids-2p.jsonl"), finish=True)
    b.load(lines("stalk-2p.jsonl", 10))
    sync(b, db)
    before = db.plays()
    b.uid = "u2"  # the same games, another id
    b.load(lines("orchids-2p.jsonl", 3))  # and a new game: not stored either
    with pytest.raises(UserError) as err:
        sync(b, db)
    msg = str(err.value)
    assert "\n" not in msg and "u2" in msg and "u1" in msg and "another board id" in msg and "--state-dir" in msg
    assert db.plays() == before


@pytest.mark.slow
def test_an_abandoned_game_is_listed_as_abandoned(tmp_path):
    """Menu -> new game archives the game unfinished: `plays` says
    abandoned, not "in progress" forever."""
    db = str(tmp_path / "p.sqlite3")
    b = StoreBoard(uid="u1")
    b.load(lines("stalk-4p.jsonl", 15))
    d = host.sync.db.Database(db)
    sync(b, d)
    assert [p["abandoned"] for p in d.plays()] == [False]
    b.finish()  # what confirm_new does (App.finish)
    b.load(lines("orchids-2p.jsonl", 4))
    sync(b, d)
    d.close()
    r = bk("plays", "--db", db)
    assert r.returncode == 0, r.stderr
    rows = r.stdout.splitlines()
    assert "abandoned" in rows[0] and "stalk" in rows[0] and "in progress" in rows[1]
    r = bk("export", "--db", db, "--format", "json")
    import json

    assert [p["state"] for p in json.loads(r.stdout)] == ["abandoned", "in progress"]


# -- versions ------------------------------------------------------------------------

@pytest.mark.slow
def test_a_database_of_the_release_before_upgrades_in_place_with_nothing_lost(tmp_path):
    """tests/fixtures/plays-v0.sqlite3 was written by the code before game
    nonces (tests/fixtures/make_plays_v0.py): every record survives the upgrade,
    and a board with new firmware that still holds one of those games
    (unstamped) continues it instead of storing it twice."""
    path = str(tmp_path / "old.sqlite3")
    shutil.copy(FIXTURE_V0, path)
    old = sqlite3.connect(path)
    assert old.execute("PRAGMA user_version").fetchone()[0] == 0
    before = {}
    for board, gid in old.execute("SELECT board, game_id FROM games"):
        before[(board, gid)] = [bytes(r[0]) for r in old.execute(
            "SELECT record FROM events WHERE board=? AND game_id=? ORDER BY idx", (board, gid))]
    old.close()
    r = bk("plays", "--db", path)
    assert r.returncode == 0 and len(r.stdout.splitlines()) == 4 + 1, r.stdout + r.stderr
    db = host.sync.db.Database(path)
    assert db.version() == host.sync.db.VERSION
    assert {(p["board"], p["game_id"]): [bytes(x) for x in db.records(p["board"], p["game_id"])] for p in db.plays()} == before
    assert all(p["date_estimated"] for p in db.plays()), "version 0 kept only the sync time"

    class UpgradedBoard(StoreBoard):  # new firmware, its flash still holding the old, unstamped games
        def new_game(self, rec):
            self.game = self.store.new_game(rec)

    b = UpgradedBoard(board_id="sim-pico", uid="pico-7")
    b.load(lines("stalk-5p-crash.jsonl"), finish=True)
    b.load(lines("orchids-2p.jsonl"), finish=True)
    b.load(lines("stalk-4p.jsonl", 25))  # the game in progress went on since
    sync(b, db)
    plays = db.plays()
    assert len(plays) == 4, "adopted, not stored twice"
    assert db.records("pico-7", "0003") == [bytes(r) for r in b.records("0003")]
    assert sorted(p["board"] for p in plays) == ["pico-7", "pico-7", "pico-7", "rp2"]


@pytest.mark.slow
def test_a_database_from_a_newer_release_is_refused_naming_the_version(tmp_path):
    path = str(tmp_path / "new.sqlite3")
    host.sync.db.Database(path).close()
    con = sqlite3.connect(path)
    con.execute("PRAGMA user_version = 7")
    con.close()
    for args in (("plays", "--db", path), ("export", "--db", path)):
        r = bk(*args)
        assert r.returncode == 2 and r.stderr.count("\n") == 1 and "version 7" in r.stderr and "newer" in r.stderr, r.stderr


@pytest.mark.slow
def test_plays_on_a_missing_file_is_an_error_and_creates_nothing(tmp_path):
    path = tmp_path / "nope.sqlite3"
    for args in (("plays", "--db", str(path)), ("export", "--db", str(path), "--format", "csv")):
        r = bk(*args)
        assert r.returncode == 2 and r.stderr.count("\n") == 1 and str(path) in r.stderr, r.stderr
    assert not path.exists()


@pytest.mark.slow
def test_a_file_that_is_not_a_database_is_one_line(tmp_path):
    path = tmp_path / "junk.sqlite3"
    path.write_bytes(b"not a database at all" * 100)
    r = bk("plays", "--db", str(path))
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "is not a plays database" in r.stderr


# -- concurrency ---------------------------------------------------------------------

def _sync_many(path, board, rounds):
    db = host.sync.db.Database(path)
    for _ in range(rounds):
        host.sync.db.sync(host_for(board)[2], db)
    db.close()


@pytest.mark.slow
def test_two_syncs_at_once_neither_corrupt_nor_duplicate(tmp_path):
    """WAL + busy timeout + IMMEDIATE transactions: two processes syncing
    the same board into one file at the same time."""
    path = str(tmp_path / "p.sqlite3")
    b = StoreBoard(uid="u1")
    for name in ("stalk-5p-crash.jsonl", "orchids-5p.jsonl", "stalk-4p.jsonl"):
        b.load(lines(name), finish=True)
    b.load(lines("orchids-2p.jsonl", 20))
    host.sync.db.Database(path).close()
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_sync_many, args=(path, b, 4)) for _ in range(3)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    db = host.sync.db.Database(path)
    assert db.con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert db.con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert n_plays(db) == 4
    for gid in ("0001", "0002", "0003", "0004"):
        assert db.records("u1", gid) == [bytes(r) for r in b.records(gid)]


# -- bad input, one line -----------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("at", ["2026-11-29 19:30:00", "2026-02-30T10:00:00Z", "2026-11-29T19:30:00+01:00", "yesterday", 1764444600])
def test_a_record_whose_at_is_not_a_utc_time_is_one_line(at):
    import json

    rec = json.dumps({"ev": "start", "game": "oh-my-orchids", "players": ["Ann", "Bo"], "at": at}) + "\n"
    r = subprocess.run([sys.executable, "-m", "host.cli", "replay", "-"], input=rec, cwd=REPO, capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "line 1" in r.stderr and "at" in r.stderr, r.stderr


@pytest.mark.slow
def test_replay_reads_the_start_fields_a_board_writes():
    import json

    rec = json.dumps({"ev": "start", "game": "oh-my-orchids", "players": ["Ann", "Bo"], "nonce": 4294967295,
                      "at": "2026-11-29T19:30:00Z"}) + "\n"
    r = subprocess.run([sys.executable, "-m", "host.cli", "replay", "-"], input=rec, cwd=REPO, capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0 and json.loads(r.stdout)["players"]["Ann"]["hand"] >= 0, r.stderr


@pytest.mark.slow
def test_a_second_simulator_on_a_flash_directory_in_use_refuses_in_one_line(tmp_path):
    """A lock that dies with its process: while another process holds the
    directory, `bloomkeeper sim` refuses naming it; once that process is
    killed, the directory is free at once (here the command then stops at
    the next check: no terminal)."""
    d = str(tmp_path / "flash")
    os.makedirs(d)
    holder = subprocess.Popen([sys.executable, "-c", "import sys, time; from host.board_sim import flashdir; flashdir.claim(sys.argv[1]); "
                               "print('held', flush=True); time.sleep(60)", d], cwd=REPO, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        r = bk("sim", "--state-dir", d)
        assert r.returncode == 2 and r.stderr.count("\n") == 1 and d in r.stderr and "in use" in r.stderr, r.stderr
    finally:
        holder.kill()
        holder.wait(10)
    r = bk("sim", "--state-dir", d)
    assert r.returncode == 2 and "in use" not in r.stderr and "terminal" in r.stderr, r.stderr


# -- dates ---------------------------------------------------------------------------

def test_start_dates_come_from_the_record_or_are_estimated_and_say_so():
    from engine_lite import record
    from firmware.hw import stamp

    class Clock:
        def __init__(self, utc, up):
            self.t, self.up = utc, up

        def utc(self):
            return self.t

        def uptime(self):
            return self.up

    start = record.encode_start({"ev": "start", "game": "oh-my-orchids", "players": ["Ann", "Bo"]})
    known = stamp(start, Clock(1796068200, 5))
    assert host.sync.db.start_date(known, "2027-01-01T00:00:00Z", (1796100000, 99)) == ("2026-11-30T19:50:00Z", 0)
    unknown = stamp(start, Clock(None, 1000))  # started 1000 s after power-up
    sync_at = 1796068200 + 3600
    assert host.sync.db.start_date(unknown, "x", (sync_at, 1000 + 3600)) == ("2026-11-30T19:50:00Z", 1)
    # the board was restarted since (its uptime is smaller now): only the sync time is known
    assert host.sync.db.start_date(unknown, "2026-12-01T10:00:00Z", (sync_at, 20)) == ("2026-12-01T10:00:00Z", 1)
    assert host.sync.db.start_date(start, "2026-12-01T10:00:00Z", None) == ("2026-12-01T10:00:00Z", 1), "no stamp at all"


@pytest.mark.slow
def test_bg_stats_play_date_is_the_start_in_utc_whatever_the_hosts_zone(tmp_path):
    import json

    path = str(tmp_path / "p.sqlite3")
    b = StoreBoard(uid="u1")
    b.clock.wall = 1796068200 - int(__import__("time").time())  # the board's clock says 2026-11-30T19:50:00Z
    b.load(lines("orchids-2p.jsonl"))
    db = host.sync.db.Database(path)
    sync(b, db)
    db.close()
    for zone in ("America/New_York", "Asia/Tokyo", "UTC"):  # the same play, the same day and time, in every zone
        env = dict(os.environ, TZ=zone)
        r = subprocess.run([sys.executable, "-m", "host.cli", "export", "--db", path, "--format", "bgstats"], cwd=REPO,
                           capture_output=True, text=True, timeout=60, env=env)
        assert r.returncode == 0, r.stderr
        assert json.loads(r.stdout)[0]["playDate"] in ("2026-11-30 19:50:00", "2026-11-30 19:50:01"), zone
    r = subprocess.run([sys.executable, "-m", "host.cli", "export", "--db", path, "--format", "json"], cwd=REPO,
                       capture_output=True, text=True, timeout=60, env=env)
    p = json.loads(r.stdout)[0]
    assert p["date"] in ("2026-11-30T19:50:00Z", "2026-11-30T19:50:01Z") and p["date_estimated"] is False


def schema_of(path):
    """(user_version, every schema object's type, name, table and SQL) of a file."""
    con = sqlite3.connect(path)
    try:
        return (con.execute("PRAGMA user_version").fetchone()[0],
                sorted(con.execute("SELECT type, name, tbl_name, sql FROM sqlite_master").fetchall(), key=repr))
    finally:
        con.close()


def test_a_fresh_database_is_made_at_the_current_version_with_the_schema_a_migration_ends_with(tmp_path, monkeypatch):
    """A new file is built at the current version directly (no migration
    runs), and has exactly the schema of a version-0 file migrated up: the
    release's own version-0 file, and an empty version-0 schema."""
    old = str(tmp_path / "v0.sqlite3")
    shutil.copy(FIXTURE_V0, old)
    empty_v0 = str(tmp_path / "empty-v0.sqlite3")
    con = sqlite3.connect(empty_v0)
    con.executescript(host.sync.db.SCHEMA_V0)
    con.close()
    for path in (old, empty_v0):
        host.sync.db.Database(path).close()

    def no_migration(con):
        raise AssertionError("a fresh database was migrated")

    monkeypatch.setattr(host.sync.db, "MIGRATIONS", (no_migration,) * host.sync.db.VERSION)
    fresh = str(tmp_path / "fresh.sqlite3")
    db = host.sync.db.Database(fresh)
    assert db.version() == host.sync.db.VERSION
    db.close()
    want = schema_of(fresh)
    assert want[0] == host.sync.db.VERSION and {r[1] for r in want[1]} >= set(host.sync.db.TABLES)
    assert schema_of(old) == want
    assert schema_of(empty_v0) == want


def test_sync_game_continues_a_play_for_the_board_sync_names(tmp_path):
    """sync_game takes who the board is as sync() found it (its "who"), and
    adds only the records after the stored ones."""
    db = host.sync.db.Database(str(tmp_path / "p.sqlite3"))
    b = StoreBoard(uid="u1")
    b.load(lines("orchids-2p.jsonl", 4))
    link = host_for(b)[2]
    res = host.sync.db.sync(link, db)
    assert res["who"]["board"] == res["board"] == "u1" and db.count("u1", "0001") == 4
    b.load(lines("orchids-2p.jsonl")[4:6])
    play, added = host.sync.db.sync_game(link, db, res["who"], "0001")
    assert added == 2 and play == res["plays"]["0001"]
    assert db.records("u1", "0001") == [bytes(r) for r in b.records("0001")]

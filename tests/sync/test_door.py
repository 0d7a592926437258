"""Records are judged at the door: `sync` folds every record a board sends
through engine_lite before storing it. A refused record is quarantined (kept
raw with board, game, index and the engine's reason), never mixed into a
play; the sync says so in one line and exits 2; every reading command keeps
showing the good plays and lists the bad one as such; `repair` re-judges.

The boards are tests/kit/hostile_board.HostileBoard (the real Store and device
Link on a real pty); the database is a real SQLite file; the commands run in
their own process.
"""

import json
import os
import sqlite3
import subprocess
import sys

import pytest

import host.sync.db
from tests.kit import damaged_db
from tests.kit.hostile_board import HostileBoard, served
from tests.kit.linkkit import host_for
from tests.kit.mpy_harness import REPO

pytestmark = pytest.mark.slow  # each check runs bloomkeeper commands as processes

RECORDS = os.path.join(REPO, "tests", "records")


def lines(name, n=None):
    with open(os.path.join(RECORDS, name)) as f:
        out = [t for t in f.read().splitlines() if t.strip()]
    return out[:n] if n else out


def bk(*args):
    return subprocess.run([sys.executable, "-m", "host.cli", *args], cwd=REPO, capture_output=True, text=True, timeout=60)


def one_line(r):
    return r.returncode == 2 and r.stderr.count("\n") == 1 and "Traceback" not in r.stderr


def good_board(uid="u1"):
    b = HostileBoard(uid=uid)
    b.load(lines("stalk-2p.jsonl"), finish=True)
    return b


def poisoned_board(uid="bad"):
    """A board whose game in progress carries, after 6 good records, one the
    engine refuses (a byte no event starts with) and one after it."""
    b = HostileBoard(uid=uid)
    b.load(lines("orchids-2p.jsonl", 6))
    b.extra[b.current()] = [b"\xff\x01\x02", b"\x05"]
    return b


def test_a_refused_record_is_quarantined_and_the_sync_says_so_in_one_line(db_path):
    db = db_path
    with served(good_board()) as port:
        assert bk("sync", "--port", port, "--db", db).returncode == 0
    bad = poisoned_board()
    with served(bad) as port:
        r = bk("sync", "--port", port, "--db", db)
    assert one_line(r), r.stderr
    assert "board bad, game 0001: record 6 refused" in r.stderr and "quarantined" in r.stderr, r.stderr
    con = sqlite3.connect(db)
    q = con.execute("SELECT board, game_id, idx, record, reason FROM quarantine ORDER BY idx").fetchall()
    assert [(b, g, i, bytes(rec)) for b, g, i, rec, _ in q] == [("bad", "0001", 6, b"\xff\x01\x02"), ("bad", "0001", 7, b"\x05")]
    assert q[0][4].startswith("record 6") and q[1][4] == "after refused record 6"
    play = con.execute("SELECT id FROM games WHERE board='bad'").fetchone()[0]
    assert con.execute("SELECT COUNT(*) FROM events WHERE game=?", (play,)).fetchone()[0] == 6, "the good prefix is the play"


def test_every_reading_command_shows_the_good_plays_and_lists_the_quarantined_one(db_path):
    db = db_path
    with served(good_board()) as port:
        bk("sync", "--port", port, "--db", db)
    with served(poisoned_board()) as port:
        bk("sync", "--port", port, "--db", db)
    r = bk("plays", "--db", db)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    assert "Stalk Exchange" in r.stdout or "stalk-exchange" in r.stdout
    assert "quarantined from record 6" in r.stdout and "board bad, game 0001: 2 record(s) quarantined" in r.stdout
    for fmt in ("json", "csv", "bgstats"):
        r = bk("export", "--db", db, "--format", fmt)
        assert r.returncode == 0 and "Traceback" not in r.stderr and "not exported: board bad" in r.stderr, (fmt, r.stderr)
    plays = json.loads(bk("export", "--db", db).stdout)
    assert sorted(p["board"] for p in plays) == ["bad", "u1"] and all(p["events"] for p in plays)


def test_a_refused_start_makes_no_play_and_is_kept_whole(db_path):
    b = HostileBoard(uid="x")
    b.load(lines("stalk-2p.jsonl", 3))
    gid = b.current()
    b.store.records = lambda g, real=b.store.records: [b"\x00\x09"] + list(real(g))[1:] if g == gid else real(g)
    path = db_path
    db = host.sync.db.Database(path)
    res = host.sync.db.sync(host_for(b)[2], db)
    assert res["refused"][0]["index"] == 0 and res["plays"][gid] is None
    assert db.con.execute("SELECT COUNT(*) FROM games").fetchone()[0] == 0
    assert db.con.execute("SELECT COUNT(*) FROM quarantine WHERE game IS NULL").fetchone()[0] == 3
    plays, problems = db.read()
    assert plays == [] and problems[0]["kind"] == "quarantined" and problems[0]["index"] == 0


def test_a_game_with_quarantined_records_is_not_marked_synced_on_the_board(db_path):
    b = HostileBoard(uid="m")
    b.load(lines("stalk-2p.jsonl"), finish=True)
    gid = b.archived()[0][0]
    b.extra[gid] = [b"\xfe"]
    db = host.sync.db.Database(db_path)
    res = host.sync.db.sync(host_for(b)[2], db)
    assert res["marked"] == [] and b.archived() == [(gid, False)]


def test_a_database_poisoned_by_an_older_release_is_cured_by_its_migration(tmp_path):
    """Version 1 stored whatever a board sent: the migration to version 2
    judges every stored play and moves what the engine refuses to the
    quarantine, so plays and export read again."""
    path = str(tmp_path / "old.sqlite3")
    db = host.sync.db.Database(path)
    host.sync.db.sync(host_for(good_board())[2], db)
    db.close()
    con = sqlite3.connect(path)
    play = con.execute("SELECT id FROM games").fetchone()[0]
    n = con.execute("SELECT COUNT(*) FROM events WHERE game=?", (play,)).fetchone()[0]
    damaged_db.strip_version_3(con)
    con.execute("INSERT INTO events (game, idx, record) VALUES (?,?,?)", (play, n, b"\xff"))
    con.execute("DROP TABLE quarantine")
    con.execute("PRAGMA user_version = 1")
    con.commit()
    con.close()
    r = bk("plays", "--db", path)
    assert r.returncode == 0 and "Traceback" not in r.stderr and "quarantined from record %d" % n in r.stdout, r.stdout + r.stderr
    con = sqlite3.connect(path)
    assert con.execute("PRAGMA user_version").fetchone()[0] == host.sync.db.VERSION
    assert con.execute("SELECT idx, record FROM quarantine").fetchall() == [(n, b"\xff")]


def test_repair_takes_back_what_a_newer_engine_accepts(db_path):
    """Records an older engine refused (here: good records put in the
    quarantine as that engine would have) join their play on `repair`."""
    b = good_board()
    path = db_path
    db = host.sync.db.Database(path)
    host.sync.db.sync(host_for(b)[2], db)
    play = db.con.execute("SELECT id FROM games").fetchone()[0]
    recs = db.play_records(play)
    with db.tx() as con:
        con.execute("DELETE FROM events WHERE game=? AND idx>=5", (play,))
        con.executemany("INSERT INTO quarantine (board, board_type, game_id, ident, game, idx, record, reason, seen) "
                        "VALUES ('u1', 'test-board', '0001', (SELECT ident FROM games), ?, ?, ?, 'refused by an older engine', 'x')",
                        [(play, i, recs[i]) for i in range(5, len(recs))])
    db.close()
    r = bk("repair", "--db", path)
    assert r.returncode == 0 and "%d accepted" % (len(recs) - 5) in r.stdout, r.stdout + r.stderr
    db = host.sync.db.Database(path)
    assert db.play_records(play) == recs
    assert db.read()[1] == []


def test_stored_damage_is_listed_and_the_other_plays_still_read(db_path):
    """An empty record, a TEXT record and a bad `started` in the file (not a
    board's doing: damage) are listed; the rest is read."""
    path = db_path
    db = host.sync.db.Database(path)
    host.sync.db.sync(host_for(good_board("a"))[2], db)
    host.sync.db.sync(host_for(good_board("b"))[2], db)
    host.sync.db.sync(host_for(good_board("c"))[2], db)
    ids = [r[0] for r in db.con.execute("SELECT id FROM games ORDER BY board")]
    db.con.execute("UPDATE events SET record=x'' WHERE game=? AND idx=3", (ids[0],))
    db.con.execute("UPDATE events SET record='text' WHERE game=? AND idx=4", (ids[1],))
    db.con.execute("UPDATE games SET started='yesterday' WHERE id=?", (ids[2],))
    db.close()
    r = bk("plays", "--db", path)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    assert "record 3 is empty" in r.stdout and "record 4 is TEXT" in r.stdout
    assert len([x for x in r.stdout.splitlines() if "Stalk" in x or "stalk" in x]) == 3, r.stdout


def test_follow_shows_the_game_up_to_a_refused_record_and_says_where_it_stops(db_path):
    db = db_path
    with served(poisoned_board()) as port:
        r = subprocess.run([sys.executable, "-m", "host.cli", "follow", "--port", port, "--plain", "--seconds", "0.5",
                            "--db", db], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    assert "Oh My. Orchids!" in r.stdout and "! board" in r.stdout and "record 6" in r.stdout, r.stdout
    con = sqlite3.connect(db)
    assert con.execute("SELECT COUNT(*) FROM quarantine").fetchone()[0] == 2, "recorded as sync records it"

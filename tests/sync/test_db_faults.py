"""A damaged plays database is one line naming the file and what to do,
and what can be read is read. Each case is a fixture file made by
tests/kit/damaged_db.py, run through every command that opens the
database: plays, export, sync (with a board attached) and serve's history.

"read" cases: the good plays are shown, the damage listed, exit 0 (sync:
the new board's game is stored or the fault is one line). "refuse" cases:
one line, exit 2, and the file is exactly as it was (an empty file is not
turned into a database by a reading command; `sync` takes it as new).
"""

import hashlib
import os
import shutil
import sqlite3
import subprocess
import sys

import pytest

import host.sync.db
from host.dashboard import store
from host.errors import UserError
from tests.kit import damaged_db
from tests.kit.hostile_board import HostileBoard, served
from tests.kit.linkkit import host_for
from tests.kit.mpy_harness import REPO

pytestmark = pytest.mark.slow  # every damaged database through every command, each a process


def bk(*args, pre=()):
    return subprocess.run([*pre, sys.executable, "-m", "host.cli", *args], cwd=REPO, capture_output=True, text=True, timeout=60)


def one_line(r):
    return r.returncode == 2 and r.stderr.count("\n") == 1 and "Traceback" not in r.stderr


def digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def board():
    b = HostileBoard(uid="fresh")
    with open(os.path.join(REPO, "tests", "records", "stalk-2p.jsonl")) as f:
        b.load([t for t in f.read().splitlines() if t.strip()], finish=True)
    return b


@pytest.fixture(scope="module")
def fixtures(tmp_path_factory):
    d = tmp_path_factory.mktemp("damaged")
    damaged_db.main(str(d))
    return d


def copy(fixtures, tmp_path, name):
    dst = str(tmp_path / (name + ".sqlite3"))
    shutil.copy(str(fixtures / (name + ".sqlite3")), dst)
    return dst


@pytest.mark.parametrize("name", sorted(damaged_db.CASES))
def test_reading_commands_read_what_can_be_read_or_say_one_line(name, fixtures, tmp_path):
    path = copy(fixtures, tmp_path, name)
    kind = damaged_db.CASES[name][1]
    before = digest(path)
    for cmd in (["plays"], ["export", "--format", "csv"], ["export", "--format", "bgstats"], ["plays", "--json"]):
        r = bk(*cmd, "--db", path)
        assert "Traceback" not in r.stderr, (cmd, r.stderr)
        if kind == "refuse":
            assert one_line(r) and path in r.stderr, (cmd, r.stderr)
            assert digest(path) == before and not os.path.exists(path + "-wal"), "refused: the file is left as it was"
        else:
            assert r.returncode == 0, (cmd, r.stderr)
    if kind == "read":
        r = bk("plays", "--db", path)
        assert r.stdout.count("events") >= 2 and "\x1b" not in r.stdout, r.stdout


@pytest.mark.parametrize("name", sorted(damaged_db.CASES))
def test_the_dashboards_history_reads_it_or_gives_one_line(name, fixtures, tmp_path):
    path = copy(fixtures, tmp_path, name)
    try:
        plays, problems = store.read_all(path)
    except UserError as err:
        assert damaged_db.CASES[name][1] == "refuse" and "\n" not in str(err) and path in str(err)
        return
    if name == "empty-file":  # the dashboard makes a missing database, and an empty file is one not yet made
        assert plays == [] and problems == []
        return
    assert damaged_db.CASES[name][1] == "read" and len(plays) >= 2
    from host.dashboard import history

    assert "<h1>Plays</h1>" in history.history_body(plays, problems)


@pytest.mark.parametrize("name", sorted(damaged_db.CASES))
def test_sync_into_a_damaged_database_stores_or_says_one_line(name, fixtures, tmp_path):
    path = copy(fixtures, tmp_path, name)
    before = digest(path)
    with served(board()) as port:
        r = bk("sync", "--port", port, "--db", path)
    assert "Traceback" not in r.stderr, r.stderr
    if name == "empty-file":  # what a sync cut by an older release left: taken as new, never a lock-out
        assert r.returncode == 0 and len(host.sync.db.Database(path).plays()) == 1, r.stderr
    elif damaged_db.CASES[name][1] == "refuse":
        assert one_line(r) and path in r.stderr and digest(path) == before, r.stderr
    else:
        assert r.returncode == 0 or one_line(r), r.stderr


def test_disk_full_mid_sync_is_one_line_and_leaves_the_database_as_it_was(tmp_path):
    """A full disk (SQLite's own limit on the file's pages, as a full disk
    answers: SQLITE_FULL) during a sync's write: the write is one
    transaction, undone; the line says to free space."""
    path = str(tmp_path / "p.sqlite3")
    db = host.sync.db.Database(path)
    host.sync.db.sync(host_for(board())[2], db)
    before = db.con.execute("SELECT COUNT(*) FROM events").fetchone()[0]
    pages = db.con.execute("PRAGMA page_count").fetchone()[0]
    db.con.execute("PRAGMA max_page_count = %d" % pages)
    big = HostileBoard(uid="big")
    for name in sorted(os.listdir(os.path.join(REPO, "tests", "records"))) * 3:  # more than the free pages hold
        with open(os.path.join(REPO, "tests", "records", name)) as f:
            big.load([t for t in f.read().splitlines() if t.strip()], finish=True)
    with pytest.raises(UserError) as e:
        with db.guard():
            host.sync.db.sync(host_for(big)[2], db)
    assert "is full" in str(e.value) and "free some space" in str(e.value) and path in str(e.value)
    assert db.con.execute("SELECT COUNT(*) FROM events").fetchone()[0] == before
    assert not db.con.in_transaction
    db.close()
    assert bk("plays", "--db", path).returncode == 0


drop_root_write = damaged_db.drop_root_write


def test_a_read_only_database_is_read_by_reading_commands(tmp_path):
    path = str(tmp_path / "ro.sqlite3")
    damaged_db.good(path)
    con = sqlite3.connect(path)  # as sync leaves it: WAL mode
    con.execute("PRAGMA journal_mode = WAL")
    con.close()
    os.chmod(path, 0o444)
    pre = drop_root_write() if os.geteuid() == 0 else ()
    before = digest(path)
    for cmd in (["plays"], ["export"]):
        r = bk(*cmd, "--db", path, pre=pre)
        assert r.returncode == 0 and "readonly" not in r.stderr, (cmd, r.stderr)
    r = bk("plays", "--db", path, pre=pre)
    assert r.stdout.count("events") == 5
    with served(board()) as port:
        r = bk("sync", "--port", port, "--db", path, pre=pre)
    assert one_line(r) and "read-only" in r.stderr, r.stderr
    assert digest(path) == before


def test_a_port_without_permission_is_permission_denied_not_busy(tmp_path):
    with served(board()) as port:
        os.chmod(port, 0o600)
        pre = drop_root_write() if os.geteuid() == 0 else ()
        os.chown(port, 12345, -1) if os.geteuid() == 0 else None
        r = bk("sync", "--port", port, "--db", str(tmp_path / "p.sqlite3"), pre=pre)
    assert one_line(r) and "permission denied" in r.stderr and "busy" not in r.stderr, r.stderr

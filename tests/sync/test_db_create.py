"""A plays database is made whole or not at all, and syncs into a new one
wait their turn (host/sync/db.py Database._create, tx): a `sync` killed at
any step of a first sync leaves no file or a whole one, and the next sync
stores the board's game once; first syncs started together all store.

The campaign is bench/bench_first_sync.py's (its figures: `make bench`),
here over the steps that make the file and a sample of the later ones.
"""

import os
import sqlite3

import pytest

import host.sync.db
from bench import bench_first_sync as campaign

pytestmark = pytest.mark.slow  # each step a killed `bloomkeeper sync` process


def test_a_first_sync_cut_at_any_step_leaves_no_file_or_a_whole_one_and_the_next_sync_stores(tmp_path):
    t = campaign.Tally()
    total = campaign.cut_campaign(t, cuts=list(range(1, 16)) + list(range(16, 200, 15)), tmp=str(tmp_path))
    assert t.cuts >= 20 and total > 20
    assert (t.lost, t.duplicated, t.locked_out, t.half_made) == (0, 0, 0, 0), t.notes


def test_first_syncs_started_together_all_store(tmp_path):
    t = campaign.Tally()
    campaign.concurrent_campaign(t, rounds=2, k=3, tmp=str(tmp_path))
    assert t.concurrent == 6 and (t.lost, t.duplicated, t.locked_out) == (0, 0, 0), t.notes


def test_an_empty_file_left_by_an_older_release_is_taken_as_new_by_sync(tmp_path):
    path = str(tmp_path / "p.sqlite3")
    open(path, "wb").close()
    db = host.sync.db.Database(path)
    assert db.version() == host.sync.db.VERSION and db.plays() == []
    db.close()


def test_reading_commands_still_refuse_an_empty_file_in_one_line(tmp_path):
    from host.errors import UserError

    path = str(tmp_path / "p.sqlite3")
    open(path, "wb").close()
    with pytest.raises(UserError) as err:
        host.sync.db.Database(path, create=False)
    assert "\n" not in str(err.value) and "empty file" in str(err.value) and os.path.getsize(path) == 0


def test_a_temporary_file_of_a_creation_cut_short_is_removed(tmp_path):
    path = str(tmp_path / "p.sqlite3")
    dead = host.sync.db._new_name(path, 2 ** 22 + 12345)  # above any pid_max: no such process
    for p in (dead, dead + "-wal"):
        open(p, "wb").close()
    db = host.sync.db.Database(path)
    db.close()
    assert sorted(os.listdir(tmp_path)) == ["p.sqlite3"]
    con = sqlite3.connect(path)
    assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    con.close()

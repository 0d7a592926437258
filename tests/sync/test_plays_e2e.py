"""What must be shown: "An end-to-end test with two simulated
boards whose game numbers collide, plus an erased-and-reused board, synced
in every order into one database: every play kept, none duplicated, dates
right."

The boards are the real simulator (host/board_sim/board.SimBoard: the firmware's App
+ Store on a real flash directory, its link on a real pseudo-terminal),
each served in its own thread; the host is host/sync/link.connect + host/sync/db.sync
over the pty, and once the `bloomkeeper` command itself.

* A and B: two boards, each with its game 0001 (a finished Stalk Exchange
  game on A, a finished Oh My. Orchids! game on B), clocks known.
* C1, C2: ONE board (same flash directory id) before and after its flash was
  erased: game 0001 on C1 (Stalk Exchange, 4 players), then a new game 0001
  on C2 (Orchids, in progress) started while the board did not know the time
  (a Pico after a power-up: dated by its uptime, an estimate).
"""

import itertools
import json
import os
import shutil
import subprocess
import sys
import threading
import time

import pytest

import engine_lite
from engine_lite import stamp
import host.sync.db
from host.board_sim import flashdir
from host.sync.link import connect
from host.board_sim.serve_record import load_into, record_events, serve
from host.board_sim.board import SimBoard
from tests.kit.mpy_harness import REPO

pytestmark = pytest.mark.slow  # colliding plays through real syncs

RECORDS = os.path.join(REPO, "tests", "records")
AT_A = "2026-11-28T18:00:00Z"
AT_B = "2026-11-29T20:15:00Z"
AT_C1 = "2026-11-27T17:00:00Z"
C2_UP_START = 100  # board uptime (s) when C2's game started...
C2_UP_SYNC = 700  # ...and at every sync: the game started 600 s before the sync


class Served:
    """A SimBoard on `state_dir`, served by a thread until stop()."""

    def __init__(self, state_dir, record, at=None, lines=None, clock_ms=None):
        self.ms = [0 if clock_ms is None else clock_ms]
        self.sb = SimBoard(state_dir=str(state_dir), clock=lambda: self.ms[0]).start()
        hw = self.sb.hw
        hw.wall = None if at is None else stamp.seconds(at) - int(time.time())  # clock known (shifted) or not
        events = record_events(record)
        load_into(self.sb.app, events[:lines] if lines else events)
        self.sb.tick()
        self.records = [bytes(r) for r in self.sb.store.records(self.sb.store.game_id)]
        self.done = False
        self.thread = threading.Thread(target=serve, args=(self.sb, lambda: self.done, 0.002), daemon=True)
        self.thread.start()

    def stop(self):
        self.done = True
        self.thread.join(5)
        self.sb.close()


@pytest.fixture(scope="module")
def boards(tmp_path_factory):
    root = tmp_path_factory.mktemp("boards")
    a = Served(root / "a", os.path.join(RECORDS, "stalk-2p.jsonl"), at=AT_A)
    b = Served(root / "b", os.path.join(RECORDS, "orchids-2p.jsonl"), at=AT_B)
    c1 = Served(root / "c1", os.path.join(RECORDS, "stalk-4p.jsonl"), at=AT_C1)
    os.makedirs(root / "c2")
    shutil.copy(root / "c1" / flashdir.ID_FILE, root / "c2" / flashdir.ID_FILE)  # the same board, flash erased
    c2 = Served(root / "c2", os.path.join(RECORDS, "orchids-5p.jsonl"), lines=30, clock_ms=C2_UP_START * 1000)
    c2.ms[0] = C2_UP_SYNC * 1000
    boards = {"A": a, "B": b, "C1": c1, "C2": c2}
    yield boards
    for s in boards.values():
        s.stop()


def sync_board(served, db):
    link = connect(served.sb.link_path, cap=30)
    try:
        return host.sync.db.sync(link, db)
    finally:
        link.close()


def test_the_boards_really_collide(boards):
    """The setup is the collision to prove: one game number everywhere,
    C1 and C2 on one board id, A and B on two others."""
    assert {s.sb.store.game_id for s in boards.values()} == {"0001"}
    ids = {k: s.sb.hw.uid for k, s in boards.items()}
    assert ids["C1"] == ids["C2"] and len({ids["A"], ids["B"], ids["C1"]}) == 3


@pytest.mark.parametrize("order", list(itertools.permutations(["A", "B", "C1", "C2"])), ids="-".join)
def test_synced_in_every_order_every_play_is_kept_once_with_its_date(boards, tmp_path, order):
    db = host.sync.db.Database(str(tmp_path / "plays.sqlite3"))
    t_c2 = None
    for name in order:
        if name == "C2":
            t_c2 = time.time()
        sync_board(boards[name], db)
    for name in order:  # a second round adds nothing
        assert sync_board(boards[name], db)["added"] == 0
    plays = db.plays()
    assert len(plays) == 4, "every play kept, none duplicated"
    by_events = {}
    for p in plays:
        by_events[json.dumps(p["events"])] = p
    for name, served in boards.items():
        g = engine_lite.Game()
        for r in served.records:
            g.apply_record(r)
        p = by_events.pop(json.dumps(g.events()))  # stored exactly as on the board
        assert p["board"] == served.sb.hw.uid and p["game_id"] == "0001"
        if name == "C2":
            assert p["date_estimated"] is True
            assert abs(stamp.seconds(p["date"]) - (t_c2 - (C2_UP_SYNC - C2_UP_START))) <= 5, (p["date"], t_c2)
        else:
            want = {"A": AT_A, "B": AT_B, "C1": AT_C1}[name]
            assert abs(stamp.seconds(p["date"]) - stamp.seconds(want)) <= 2 and p["date_estimated"] is False
    assert not by_events
    db.close()


def test_the_command_line_keeps_both_colliding_plays(boards, tmp_path):
    """The same collisions, with the `bloomkeeper` command: sync A, then C1,
    then C2 (the same board after an erase) and B into one file; `plays`
    lists all four, oldest start first, the estimated date marked."""
    db = str(tmp_path / "plays.sqlite3")
    for name in ("A", "C1", "C2", "B"):
        r = subprocess.run([sys.executable, "-m", "host.cli", "sync", "--port", boards[name].sb.link_path, "--db", db],
                           cwd=REPO, capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr
    r = subprocess.run([sys.executable, "-m", "host.cli", "plays", "--db", db], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    rows = r.stdout.splitlines()
    assert len(rows) == 5 and rows[-1].startswith("~ estimated"), r.stdout
    assert [("stalk" in x, "orchids" in x) for x in rows[:3]] == [(True, False), (True, False), (False, True)]
    assert "~" in rows[3] and "in progress" in rows[3]
    r = subprocess.run([sys.executable, "-m", "host.cli", "export", "--db", db, "--format", "csv"], cwd=REPO,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stdout.count("\n") == 1 + 2 + 2 + 4 + 5, r.stdout

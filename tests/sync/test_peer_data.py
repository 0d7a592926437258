"""Peers are data, not commands: every string from a board (its id, the
player names, the screen, the fault text) is printed with control
characters escaped (host.io_util.show, the one helper), and every field of
a reply is checked before use: a missing or odd one is one line, exit 2.

The board is tests/kit/hostile_board.HostileBoard on a real pty; the commands
run in their own process.
"""

import os
import subprocess
import sys

import pytest

from tests.kit.hostile_board import HostileBoard, served
from tests.kit.mpy_harness import REPO

pytestmark = pytest.mark.slow  # odd boards on a pty against bloomkeeper processes

ESC = "\x1b]0;owned\x07\x1b[2J"


def lines(name):
    with open(os.path.join(REPO, "tests", "records", name)) as f:
        return [t for t in f.read().splitlines() if t.strip()]


def bk(*args):
    return subprocess.run([sys.executable, "-m", "host.cli", *args], cwd=REPO, capture_output=True, text=True, timeout=60)


def one_line(r):
    return r.returncode == 2 and r.stderr.count("\n") == 1 and "Traceback" not in r.stderr


def board(**kw):
    b = HostileBoard(**kw)
    b.load(lines("stalk-2p.jsonl"), finish=True)
    return b


def test_an_escape_laden_board_id_is_printed_escaped_by_sync_and_plays(db_path):
    db = db_path
    with served(board(uid="evil" + ESC)) as port:
        r = bk("sync", "--port", port, "--db", db)
    assert r.returncode == 0, r.stderr
    assert "\x1b" not in r.stdout and "\\u001b" in r.stdout
    r = bk("plays", "--db", db)
    assert r.returncode == 0 and "\x1b" not in r.stdout and "\x07" not in r.stdout, r.stdout


def test_doctor_prints_the_fault_text_and_the_screen_escaped(tmp_path):
    b = board()
    b.faults = lambda: "boom " + ESC + "\n"
    b.status = lambda: {"screen": "play" + ESC}
    with served(b) as port:
        r = bk("doctor", "--port", port)
    assert r.returncode == 0 and "\x1b" not in r.stdout and "boom" in r.stdout, r.stdout + r.stderr


@pytest.mark.parametrize("op,reply", [
    ("faults", {}),                                  # a fault log answer lacking its field
    ("faults", {"faults": 7}),
    ("games", {"current": None}),                   # no archived list
    ("games", {"current": None, "archived": [["0001"]]}),
    ("status", {"screen": ["x"], "game": 5, "events": "many"}),
])
def test_doctor_survives_odd_answers_in_one_line_or_with_question_marks(op, reply):
    b = board()
    b.replies[op] = reply
    with served(b) as port:
        r = bk("doctor", "--port", port)
    assert "Traceback" not in r.stderr and (r.returncode == 0 or one_line(r)), r.stderr


@pytest.mark.parametrize("hello", [{"board": None}, {"board": 5}, {"id": ["x"]}, {"board": "b" * 500}])
def test_a_hello_lacking_or_with_odd_fields_is_one_line(hello, db_path):
    b = board()
    b.hello = hello
    with served(b) as port:
        for cmd in (["sync", "--db", db_path], ["doctor"]):
            r = bk(*cmd, "--port", port)
            assert one_line(r) and "odd answer to hello" in r.stderr, (cmd, r.stderr)


@pytest.mark.parametrize("reply", [{"current": "0001", "archived": "all"}, {"current": "\x1b[2J", "archived": []},
                                   {"current": None, "archived": [[1, True]]}])
def test_an_odd_games_answer_stops_sync_in_one_line(reply, db_path):
    b = board()
    b.replies["games"] = reply
    with served(b) as port:
        r = bk("sync", "--port", port, "--db", db_path)
    assert one_line(r) and "odd answer to games" in r.stderr, r.stderr


def test_a_game_reported_without_any_record_is_not_a_crash(db_path):
    """A board whose `games` names a game it then serves no record of."""
    b = board()
    b.replies["games"] = {"current": "0099", "archived": []}
    b.records = lambda gid, real=b.records: [] if gid == "0099" else real(gid)
    with served(b) as port:
        r = bk("sync", "--port", port, "--db", db_path)
    assert "Traceback" not in r.stderr and (r.returncode == 0 or one_line(r)), r.stderr

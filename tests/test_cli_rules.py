"""`bloomkeeper replay` and `bloomkeeper score` as a user runs them."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
RECORD = REPO / "tests" / "records" / "stalk-4p.jsonl"


def bk(*args, stdin=None):
    return subprocess.run([sys.executable, "-m", "host.cli", *args], input=stdin, capture_output=True, text=True, cwd=REPO)


def test_replay_prints_the_state_as_json():
    r = bk("replay", str(RECORD))
    assert r.returncode == 0 and r.stderr == ""
    s = json.loads(r.stdout)
    assert s["game"] == "stalk-exchange" and s["game_over"] and s["final"]["players"][0]["rank"] == 1


def test_replay_reads_stdin():
    r = bk("replay", "-", stdin=RECORD.read_text())
    assert r.returncode == 0 and json.loads(r.stdout)["game_over"]


def test_score_stalk_exchange_table():
    table = {"game": "stalk-exchange", "values": {"tulip": 7, "dahlia": 5}, "portfolios": {"Ann": {"tulip": 2}, "Bo": {"dahlia": 1}}}
    r = bk("score", "-", stdin=json.dumps(table))
    assert r.returncode == 0
    assert json.loads(r.stdout) == {
        "game": "stalk-exchange",
        "values": {"dahlia": 5, "daffodil": 0, "globemaster": 0, "snowdrop": 0, "tulip": 3},
        "busted": ["tulip"],
        "players": [
            {"name": "Ann", "score": 6, "rank": 1, "winner": True},
            {"name": "Bo", "score": 5, "rank": 2, "winner": False},
        ],
    }


BAD = [
    ("replay", "not json\n", "line 1: not valid JSON"),
    ("replay", '{"ev":"start","game":"go","players":["A","B"]}\n', "line 1: start: unknown game"),
    ("replay", '{"ev":"start","game":"stalk-exchange","players":["A"]}\n', "line 1: start: players must be 2 to 5"),
    ("replay", '{"ev":"start","game":"stalk-exchange","players":["A","B"]}\n{"ev":"harvest","flower":"rose","count":1}\n', "line 2: harvest: unknown flower"),
    ("replay", '{"ev":"start","game":"stalk-exchange","players":["A","B"]}\n{"ev":"end_turn"}\n', "line 2: a turn ends after"),
    ("score", "{", "-: not valid JSON"),
    ("score", '{"game":"stalk-exchange","values":{"tulip":-1},"portfolios":{"A":{},"B":{}}}', "values: tulip must be a whole number"),
    ("score", '{"game":"stalk-exchange","values":{"tulip":20},"portfolios":{"A":{"tulip":6},"B":{}}}', "tulip: 26 tokens counted"),
    ("score", '{"game":"stalk-exchange","values":{},"portfolios":{"A":{}}}', "portfolios: players must be 2 to 5"),
    ("score", '{"game":"stalk-exchange","values":{},"portfolios":{"A":{"tulip":"3"},"B":{}}}', "portfolios.A: tulip must be"),
    ("score", '{"game":"oh-my-orchids","players":{"A":{"flowers":[{"name":"X","kind":"orchid","points":1}]},"B":{"flowers":[{"name":"X","kind":"orchid","points":1}]}}}', "the orchid X appears twice"),
    ("score", '{"game":"monopoly"}', "game must be"),
]


@pytest.mark.parametrize("cmd,stdin,msg", BAD, ids=[b[2][:30] for b in BAD])
def test_bad_input_is_one_line_exit_2_no_traceback(cmd, stdin, msg):
    r = bk(cmd, "-", stdin=stdin)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr
    assert msg in r.stderr, r.stderr


def test_missing_file_is_one_line():
    r = bk("replay", "/no/such/file.jsonl")
    assert r.returncode == 2 and r.stderr == "bloomkeeper: cannot read /no/such/file.jsonl: No such file or directory\n"

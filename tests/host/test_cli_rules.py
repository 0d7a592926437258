"""`bloomkeeper replay` and `bloomkeeper score` as a user runs them."""

import json
import subprocess
import sys

import pytest

from tests.kit.mpy_harness import REPO

pytestmark = pytest.mark.slow  # each case runs bloomkeeper as a process

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
        "before_bust": {"dahlia": 5, "daffodil": 0, "globemaster": 0, "snowdrop": 0, "tulip": 7},
        "players": [
            {"name": "Ann", "score": 6, "rank": 1, "winner": True, "breakdown": [
                ["dahlia 0 x 5", 0], ["daffodil 0 x 0", 0], ["globemaster 0 x 0", 0], ["snowdrop 0 x 0", 0], ["tulip 2 x 3 (busted 7 -> 3)", 6]]},
            {"name": "Bo", "score": 5, "rank": 2, "winner": False, "breakdown": [
                ["dahlia 1 x 5", 5], ["daffodil 0 x 0", 0], ["globemaster 0 x 0", 0], ["snowdrop 0 x 0", 0], ["tulip 0 x 3 (busted 7 -> 3)", 0]]},
        ],
    }


BAD = [
    ("replay", "not json\n", "line 1: not valid JSON"),
    ("replay", '{"ev":"start","game":"go","players":["A","B"]}\n', "line 1: start: unknown game"),
    ("replay", '{"ev":"start","game":"stalk-exchange","players":["A"]}\n', "line 1: start: players must be 2 to 5"),
    ("replay", '{"ev":"start","game":"stalk-exchange","players":["A","B"]}\n{"ev":"harvest","flower":"rose","count":1}\n', "line 2: harvest: unknown flower"),
    ("replay", '{"ev":"start","game":"stalk-exchange","players":["A","B"]}\n{"ev":"end_turn"}\n', "line 2: a turn ends after"),
    # ruling R14: the Orchid display holds 3 cards, refilled after the turn
    ("replay", "\n".join(['{"ev":"start","game":"oh-my-orchids","players":["A","B"]}', '{"ev":"take","seeds":5}', '{"ev":"end_turn"}',
                          '{"ev":"take","seeds":1}', '{"ev":"end_turn"}']
                         + ['{"ev":"plant","name":"O%d","kind":"orchid","points":1,"seeds":1}' % i for i in range(4)]) + "\n",
     "line 9: plant: the Orchid display holds 3 cards: refill comes after the turn"),
    ("score", "{", "-: not valid JSON"),
    ("score", '{"game":"stalk-exchange","values":{"tulip":-1},"portfolios":{"A":{},"B":{}}}', "values.tulip must be a whole number"),
    ("score", '{"game":"stalk-exchange","values":{"tulip":20},"portfolios":{"A":{"tulip":6},"B":{}}}', "tulip: 26 tokens counted"),
    ("score", '{"game":"stalk-exchange","values":{},"portfolios":{"A":{}}}', "portfolios: players must be 2 to 5"),
    ("score", '{"game":"stalk-exchange","values":{},"portfolios":{"A":{"tulip":"3"},"B":{}}}', "portfolios.A.tulip must be"),
    ("score", '{"game":"oh-my-orchids","players":{"A":{"flowers":[{"name":"X","kind":"orchid","points":1}]},"B":{"flowers":[{"name":"X","kind":"orchid","points":1}]}}}', "players.B.flowers[0]: X is taken by the orchid X"),
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


# -- Input that json.loads lets through, refused with its line or JSON path


START = '{"ev":"start","game":"oh-my-orchids","players":["Ann","Bo"]}\n'
PLANT = '{"ev":"plant","name":%s,"kind":"flora","points":2,"seeds":1}\n'
ORCHIDS_TABLE = '{"game":"oh-my-orchids","players":{"Ann":{"flowers":[%s]},"Bo":{}}}'
FLOWER = '{"name":"Ixora","kind":"flora","points":2}'

STRICT = [
    # a key given twice: the last one would silently win
    ("replay", START + '{"ev":"take","seeds":1,"seeds":5}\n', "line 2: seeds is given twice"),
    ("score", '{"game":"stalk-exchange","values":{},"portfolios":{"Ann":{"tulip":1},"Bo":{},"Ann":{"tulip":9}}}',
     "-: portfolios.Ann is given twice"),
    ("score", ORCHIDS_TABLE % '{"name":"A","kind":"flora","points":1,"points":9}', "-: players.Ann.flowers[0].points is given twice"),
    # very deep nesting: no RecursionError traceback
    ("replay", START + "[" * 100000 + "\n", "line 2: not valid JSON: nested too deeply"),
    ("replay", START + '{"ev":"take","seeds":' + "[" * 40 + "]" * 40 + "}\n", "line 2: seeds" + "[0]" * 32 + ": nested deeper than 32 levels"),
    ("score", "[" * 100000, "-: not valid JSON: nested too deeply"),
    # strings that are not valid Unicode (lone surrogates)
    ("replay", START + PLANT % '"Ixora \\ud800"', "line 2: name: not valid Unicode"),
    ("replay", START + '{"ev":"take","\\udc00":1}\n', 'line 2: "\\udc00": not valid Unicode'),
    ("score", ORCHIDS_TABLE % '{"name":"\\ud800","kind":"flora","points":1}', "-: players.Ann.flowers[0].name: not valid Unicode"),
    # unknown fields anywhere in a score table
    ("score", ORCHIDS_TABLE % '{"name":"A","kind":"flora","points":1,"seeds":3}', "players.Ann.flowers[0].seeds: unknown field"),
    ("score", '{"game":"oh-my-orchids","players":{"Ann":{"hand":2},"Bo":{}}}', "players.Ann.hand: unknown field"),
    ("score", '{"game":"stalk-exchange","values":{"rose":1},"portfolios":{"Ann":{},"Bo":{}}}', "values.rose: unknown field"),
    ("score", '{"game":"stalk-exchange","values":{},"portfolios":{"Ann":{"tulip":1,"Tulip":2},"Bo":{}}}', "portfolios.Ann.Tulip: unknown field"),
    ("score", '{"game":"oh-my-orchids","players":{"Ann":{},"Bo":{}},"winner":"Bo"}', "bloomkeeper: winner: unknown field"),
    # bad field values name their path
    ("score", ORCHIDS_TABLE % '{"name":"A","kind":"tree","points":1}', "players.Ann.flowers[0].kind must be orchid or flora"),
    ("score", ORCHIDS_TABLE % '{"name":"A","kind":"flora","points":100}', "players.Ann.flowers[0].points must be a whole number from 0 to 99"),
    ("score", ORCHIDS_TABLE % '{"name":"","kind":"flora","points":1}', "players.Ann.flowers[0].name must be 1 to 48 characters"),
    ("score", '{"game":"oh-my-orchids","players":{"Ann":{"composted":-1},"Bo":{}}}', "players.Ann.composted must be a whole number"),
    # an integer too long to convert is refused, not a traceback
    ("score", "1" * 5000, "-: not valid JSON"),
]


@pytest.mark.parametrize("cmd,stdin,msg", STRICT, ids=[s[2][:40] for s in STRICT])
def test_input_json_loads_lets_through_is_refused_with_its_line_or_path(cmd, stdin, msg):
    r = bk(cmd, "-", stdin=stdin)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr
    assert msg in r.stderr, r.stderr


def bk_bytes(*args, stdin):
    return subprocess.run([sys.executable, "-m", "host.cli", *args], input=stdin, capture_output=True, cwd=REPO)


def test_bytes_that_are_not_utf8_name_the_line(tmp_path):
    rec = tmp_path / "g.jsonl"
    rec.write_bytes(START.encode() + b'{"ev":"take","seeds":1}\n{"ev":"end_turn"}\n' + PLANT.encode() % b'"Ix\xffora"')
    r = bk_bytes("replay", str(rec), stdin=b"")
    assert r.returncode == 2 and r.stdout == b""
    assert r.stderr.decode() == "bloomkeeper: %s: line 4 is not UTF-8 text (byte 25)\n" % rec
    r = bk_bytes("score", "-", stdin=b'{"game":"oh-my-orchids",\n"players":\xc3}')
    assert r.returncode == 2 and r.stderr == b"bloomkeeper: -: line 2 is not UTF-8 text (byte 11)\n"


def test_a_valid_json_lines_record_with_u2028_in_a_name_is_accepted(tmp_path):
    # JSON Lines splits on "\n" only: U+2028 and U+2029 are legal inside a JSON string
    name = "Ixora\u2028Pink\u2029Fern\x85"
    rec = tmp_path / "g.jsonl"
    text = START + '{"ev":"take","seeds":2}\n{"ev":"end_turn"}\n' + PLANT % json.dumps(name, ensure_ascii=False)
    rec.write_text(text, encoding="utf-8")
    r = bk_bytes("replay", str(rec), stdin=b"")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["players"]["Bo"]["flowers"] == [{"name": name, "kind": "flora", "points": 2}]


def test_nothing_is_applied_from_a_refused_record():
    # the strict check refuses line 3 before the engine folds it: no output, no state
    r = bk("replay", "-", stdin=START + '{"ev":"take","seeds":1}\n{"ev":"end_turn","ev":"undo"}\n')
    assert r.returncode == 2 and r.stdout == "" and r.stderr == "bloomkeeper: line 3: ev is given twice\n"


def test_score_accepts_any_portfolio_size_a_record_does_not():
    # R6: a bare table has no game behind it and is scored whatever its size
    table = {"game": "stalk-exchange", "values": {"tulip": 2}, "portfolios": {"Ann": {"tulip": 3}, "Bo": {"tulip": 20}}}
    r = bk("score", "-", stdin=json.dumps(table))
    assert r.returncode == 0 and json.loads(r.stdout)["players"][0]["name"] == "Bo"

"""The same rules core gives the same answers inside a real MicroPython.

The rules core's MicroPython gates: (2) the shared game records replayed in MicroPython equal
the CPython results; (3) a whole 5-player game of each title replays with
32 KB of heap left after the imports (on the 64-bit Unix port, whose objects
are up to ~1.35x their size on the Pico).
"""

import json

import pytest

import engine_lite
from tests.kit.mpy_harness import REPO, run_mpy

pytestmark = pytest.mark.mpy

RECORDS = sorted((REPO / "tests" / "records").glob("*.jsonl"))
SETUP = "import json, sys, engine_lite"


def guest_path(p):
    """Where the guest finds a shared record (tests/kit/mpy_harness.py copies tests/records)."""
    return "tests/records/" + p.name


def cpython_replay(p):
    with open(p) as fh:
        return engine_lite.replay(fh)


@pytest.mark.parametrize("record", RECORDS, ids=[p.name for p in RECORDS])
def test_micropython_replay_equals_cpython(record):
    r = run_mpy("json.dump(engine_lite.replay(open(%r)), sys.stdout)" % guest_path(record), setup=SETUP)
    assert json.loads(r.stdout) == cpython_replay(record)


def test_micropython_reports_the_same_error_code_and_line():
    lines = [
        '{"ev":"start","game":"stalk-exchange","players":["Ann","Bo"]}',
        '{"ev":"plant"}',
        '{"ev":"end_turn"}',
    ]
    with pytest.raises(engine_lite.EngineError) as err:
        engine_lite.replay(lines)
    code = (
        "try:\n"
        "    engine_lite.replay(%r)\n"
        "except engine_lite.EngineError as err:\n"
        "    print(json.dumps([err.line, err.code]))\n"
    ) % (lines,)
    r = run_mpy(code, setup=SETUP)
    assert json.loads(r.stdout) == [err.value.line, err.value.code] == [3, "turn_incomplete"]


@pytest.mark.parametrize("name", ["stalk-5p-bag.jsonl", "stalk-5p-crash.jsonl", "orchids-5p.jsonl"])
def test_whole_5_player_game_replays_in_a_32_kb_heap(name):
    record = REPO / "tests" / "records" / name
    events = len(record.read_text().splitlines())
    assert events > 80  # a whole game, not a fragment
    # "after the imports": replay() ends in Game.state(), whose host-side
    # module (engine_lite/readout.py) is imported first too. Imported late
    # into a fragmented 32 KB it failed on the interpreter's name table
    # growing (a contiguous block), not on the game.
    setup = SETUP + "\nimport engine_lite.readout"
    r = run_mpy("json.dump(engine_lite.replay(open(%r)), sys.stdout)" % guest_path(record), setup=setup, heap_kb=32)
    assert json.loads(r.stdout) == cpython_replay(record)


def test_snapshot_restore_inside_micropython():
    record = REPO / "tests" / "records" / "stalk-5p-bag.jsonl"
    code = (
        "g = engine_lite.Game()\n"
        "lines = open(%r).read().split('\\n')\n"
        "for t in lines[:40]:\n"
        "    g.apply(json.loads(t))\n"
        "snap = g.snapshot()\n"
        "for t in lines[40:]:\n"
        "    if t: g.apply(json.loads(t))\n"
        "h = engine_lite.Game(g.log, snap)\n"
        "print(json.dumps([h.state() == g.state(), g.state()['bag']]))\n"
    ) % guest_path(record)
    r = run_mpy(code, setup=SETUP)
    ok, bag = json.loads(r.stdout)
    assert ok and bag == cpython_replay(record)["bag"]

"""Invariants of the rules core over random legal event sequences (hypothesis).

- values equal harvested counts per flower (Stalk Exchange);
- bag, exchange, tokens and hands are never negative;
- replaying the log equals the incremental state;
- undo is an exact inverse;
- a snapshot restores the same state.
"""

import json

import pytest
from hypothesis import given, settings, strategies as st

import engine_lite
from engine_lite import EngineError, Game
from engine_lite.tables import FLOWERS

pytestmark = pytest.mark.slow  # hypothesis over whole games

STALK_EVENTS = st.one_of(
    st.sampled_from([{"ev": "plant"}, {"ev": "swap"}, {"ev": "flush"}, {"ev": "end_turn"}, {"ev": "crash"}, {"ev": "undo"}]),
    st.builds(lambda f, c: {"ev": "harvest", "flower": f, "count": c}, st.sampled_from(FLOWERS), st.integers(1, 4)),
)
ORCHID_EVENTS = st.one_of(
    st.builds(lambda n: {"ev": "take", "seeds": n}, st.integers(1, 5)),
    st.builds(
        lambda k, n, p, s: {"ev": "plant", "name": "%s %d" % (k, n), "kind": k, "points": p, "seeds": s},
        st.sampled_from(["orchid", "flora"]),
        st.integers(0, 6),
        st.integers(0, 10),
        st.integers(1, 4),
    ),
    st.sampled_from([{"ev": "end_turn"}, {"ev": "undo"}]),
)


def run(start, events):
    """Apply what is legal; check invariants after every step."""
    g = Game()
    g.apply(start)
    applied = [start]
    for ev in events:
        before = g.state()
        try:
            g.apply(ev)
        except EngineError:
            assert g.state() == before
            continue
        if ev["ev"] == "undo":
            applied.pop()
        else:
            applied.append(ev)
            if ev["ev"] != "end_turn" or not g.state()["game_over"]:
                # undo is an exact inverse
                g.apply({"ev": "undo"})
                assert g.state() == before
                g.apply(ev)
        check(g.state())
    # replaying the effective log equals the incremental state
    assert g.events() == applied
    assert engine_lite.replay(json.dumps(e) for e in applied) == g.state()
    # a snapshot restores the same state
    assert Game(g.log, g.snapshot()).state() == g.state()
    return g


def check(s):
    if s["game"] == "stalk-exchange":
        assert s["bag"] >= 0 and 0 <= s["exchange"] <= 6
        assert all(t >= 0 for t in s["tokens"].values())
        assert s["harvested"] == sum(s["values"].values())
        if s["end_triggered"]:
            assert s["tokens_until_crash"] is None  # no countdown once the end is triggered
        else:
            assert s["tokens_until_crash"] >= 0
    else:
        for p in s["players"].values():
            assert 0 <= p["hand"] <= 7 and p["composted"] >= 0
            assert p["points"] == sum(f["points"] for f in p["flowers"])


@settings(max_examples=150, deadline=None)
@given(st.integers(2, 5), st.integers(5, 40), st.lists(STALK_EVENTS, max_size=120))
def test_stalk_invariants(n, track, events):
    start = {"ev": "start", "game": "stalk-exchange", "players": ["P%d" % i for i in range(n)], "track_start": track}
    g = run(start, events)
    # values equal harvested counts per flower, from the log itself
    harvested = {f: 0 for f in FLOWERS}
    for ev in g.events():
        if ev["ev"] == "harvest":
            harvested[ev["flower"]] += ev["count"]
    assert g.state()["values"] == harvested


@settings(max_examples=150, deadline=None)
@given(st.integers(2, 5), st.lists(ORCHID_EVENTS, max_size=150))
def test_orchids_invariants(n, events):
    start = {"ev": "start", "game": "oh-my-orchids", "players": ["P%d" % i for i in range(n)]}
    run(start, events)

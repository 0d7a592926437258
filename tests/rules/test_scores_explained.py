"""Scores players can check against their paper score sheet: every player of
`final` has a `breakdown` ([label, points] adding up to the score) and, where
a tie-break decided the place, a `tiebreak` sentence naming the tier
(rulings R2 for Stalk Exchange, R12 for Oh My. Orchids!)."""

import pytest

import engine_lite
from tests.kit.mpy_harness import REPO

RECORDS = sorted((REPO / "tests" / "records").glob("*.jsonl"))

# "the tied players compare the number of the most valuable flower(s) in their
# portfolio": tulip busts 8 -> 4, so dahlia (5) is the most valuable flower.
TIE_23 = {
    "game": "stalk-exchange",
    "values": {"dahlia": 5, "tulip": 8, "daffodil": 3, "snowdrop": 1},
    "portfolios": {"Ann": {"dahlia": 3, "tulip": 2}, "Bo": {"dahlia": 1, "tulip": 2, "daffodil": 3, "snowdrop": 1}},
}


@pytest.mark.parametrize("record", RECORDS, ids=[p.name for p in RECORDS])
def test_every_breakdown_adds_up_to_the_score(record):
    with open(record) as fh:
        final = engine_lite.replay(fh)["final"]
    for p in final["players"]:
        assert sum(points for _, points in p["breakdown"]) == p["score"], p


def test_stalk_breakdown_is_count_times_final_value_with_the_bust_marked():
    ann = engine_lite.score(TIE_23)["players"][0]
    assert ann["name"] == "Ann" and ann["score"] == 23
    assert ann["breakdown"] == [["dahlia 3 x 5", 15], ["daffodil 0 x 3", 0], ["globemaster 0 x 0", 0],
                                ["snowdrop 0 x 1", 0], ["tulip 2 x 4 (busted 8 -> 4)", 8]]


def test_stalk_tie_23_23_is_decided_by_more_dahlias():
    ann, bo = engine_lite.score(TIE_23)["players"]
    assert (ann["name"], ann["rank"], bo["name"], bo["rank"]) == ("Ann", 1, "Bo", 2)
    assert ann["tiebreak"] == "ahead of Bo on 23 points: more dahlias (3 to 1)"
    assert bo["tiebreak"] == "behind Ann on 23 points: fewer dahlias (1 to 3)"


def test_stalk_tier_of_equal_values_is_named_as_one():
    """Flower types with equal final values form one tier (ruling R2): dahlia
    busts 9 -> 4 (nobody holds one), tulips and daffodils share the value 3."""
    t = {"game": "stalk-exchange", "values": {"dahlia": 9, "tulip": 3, "daffodil": 3, "snowdrop": 1},
         "portfolios": {"Ann": {"tulip": 1, "daffodil": 1}, "Bo": {"tulip": 1, "snowdrop": 3}}}
    ann, bo = engine_lite.score(t)["players"]
    assert ann["score"] == bo["score"] == 6 and ann["name"] == "Ann"
    assert ann["tiebreak"] == "ahead of Bo on 6 points: more daffodils and tulips together, worth 3 each (2 to 1)"


def test_a_shared_rank_says_every_tier_was_equal():
    t = {"game": "stalk-exchange", "values": {"tulip": 4, "dahlia": 2},
         "portfolios": {"Ann": {"dahlia": 2}, "Bo": {"dahlia": 2}}}
    ann, bo = engine_lite.score(t)["players"]
    assert ann["rank"] == bo["rank"] == 1
    assert ann["tiebreak"] == "shares rank 1 with Bo: 4 points each and the same count at every tier"


def test_places_without_a_tie_have_no_tiebreak():
    t = {"game": "stalk-exchange", "values": {"tulip": 4, "dahlia": 2}, "portfolios": {"Ann": {"dahlia": 2}, "Bo": {"dahlia": 1}}}
    assert all("tiebreak" not in p for p in engine_lite.score(t)["players"])


def _orchids(players):
    return {"game": "oh-my-orchids", "players": players}


def test_orchids_breakdown_is_flower_points_variety_and_compost():
    # Rulebook example: "Her total score is 37 + 10 - 2 = 45"
    flowers = [{"name": "F%d" % i, "kind": "flora", "points": p} for i, p in enumerate((7, 6, 6, 6, 6, 6))]
    f = engine_lite.score(_orchids({"Lily": {"composted": 2, "flowers": flowers}, "Calla": {}}))
    lily = f["players"][0]
    assert lily["score"] == 45
    assert lily["breakdown"] == [["flower points", 37], ["variety bonus", 10], ["composted", -2]]


def test_orchids_tie_on_the_total_is_decided_by_orchid_cards():
    # ruling R12: the highest Total; "ties -> more orchid cards" (R9)
    f = engine_lite.score(_orchids({
        "Lily": {"flowers": [{"name": "Ixora", "kind": "flora", "points": 8}, {"name": "Vanda", "kind": "orchid", "points": 2}]},
        "Calla": {"flowers": [{"name": "Cattleya", "kind": "orchid", "points": 5}, {"name": "Miltonia", "kind": "orchid", "points": 5}]},
    }))
    calla, lily = f["players"]
    assert (calla["name"], calla["rank"], lily["rank"]) == ("Calla", 1, 2)
    assert calla["tiebreak"] == "ahead of Lily on 10 points: more orchid cards (2 to 1)"
    assert lily["tiebreak"] == "behind Calla on 10 points: fewer orchid cards (1 to 2)"


# -- where players see it ---------------------------------------------------


def test_dashboard_score_sheet_is_portfolio_times_final_value_with_the_bust_struck():
    import re
    from host.dashboard import views

    with open(RECORDS[[p.name for p in RECORDS].index("stalk-4p.jsonl")]) as fh:
        final = engine_lite.replay(fh)["final"]
    html = views.final_table(final, "stalk-exchange")
    assert re.search(r'data-sheet="P1/daffodil">4 &times; 3 = <b>12</b>', html)
    assert "<s>7</s> 3 <span class=\"bust\">busted</span>" in html  # daffodil busted 7 -> 3
    assert re.search(r'<tr class="total"><td>total</td><td></td><td><b>30</b></td><td><b>30</b></td><td><b>27</b></td><td><b>27</b></td>', html)
    assert 'data-tiebreak="P2"><small>tie-break: ahead of P1 on 27 points: more tulips (2 to 1)' in html


def test_dashboard_score_sheet_for_orchids_lists_the_breakdown():
    from host.dashboard import views

    with open(RECORDS[[p.name for p in RECORDS].index("orchids-2p.jsonl")]) as fh:
        final = engine_lite.replay(fh)["final"]
    html = views.score_sheet(final, "oh-my-orchids")
    assert "<tr><td>flower points</td><td>37</td><td>33</td></tr>" in html
    assert "<tr><td>composted</td><td>-1</td><td>0</td></tr>" in html


def test_follow_prints_each_sum_and_the_tie_break():
    from host.sync.follow import scoreboard

    g = engine_lite.Game()
    with open(RECORDS[[p.name for p in RECORDS].index("stalk-4p.jsonl")]) as fh:
        engine_lite.replay(fh, g)
    text = scoreboard(g)
    assert "  P1 27: daffodil 4 x 3 (busted 7 -> 3) = 12, globemaster 2 x 3 = 6, snowdrop 1 x 3 = 3, tulip 1 x 6 = 6" in text
    assert "    tie-break: behind P2 on 27 points: fewer tulips (1 to 2)" in text


def test_csv_export_has_the_breakdown_and_the_tiebreak():
    import csv
    import io
    from host.sync import export

    with open(RECORDS[[p.name for p in RECORDS].index("stalk-4p.jsonl")]) as fh:
        lines = fh.readlines()
    g = engine_lite.Game()
    st = engine_lite.replay(lines, g)
    play = {"board": "b", "game_id": "0001", "date": "2026-12-01T18:00:00Z", "game": "stalk-exchange",
            "players": list(g.names), "events": g.events(), "over": True, "final": st["final"]}
    rows = {r["player"]: r for r in csv.DictReader(io.StringIO(export.to_csv([play])))}
    assert rows["P1"]["breakdown"].startswith("dahlia 2 x 0 = 0; daffodil 4 x 3 (busted 7 -> 3) = 12; ")
    assert rows["P1"]["tiebreak"] == "behind P2 on 27 points: fewer tulips (1 to 2)"
    assert rows["P3"]["tiebreak"].startswith("shares rank 1 with P4")

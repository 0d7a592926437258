"""Stalk Exchange table rules, one test per rule, quoting the rulebook.

Rulings (docs/rulings.md) are referenced as R1, R2, ...
"""

import pytest

import engine_lite
from engine_lite import EngineError, Game
from engine_lite.tables import FLOWERS, GARDEN_SEED, PORTFOLIO_SIZE, bag_start

NAMES = ["Ann", "Bo", "Cy", "Di", "Ed"]


def game(n=2, **start):
    g = Game()
    g.apply(dict({"ev": "start", "game": "stalk-exchange", "players": NAMES[:n]}, **start))
    return g


def play(g, *evs):
    for ev in evs:
        g.apply({"ev": ev} if isinstance(ev, str) else ev)
    return g.state()


def refused(g, ev, code):
    before = g.state()
    events = g.events()
    with pytest.raises(EngineError) as err:
        g.apply({"ev": ev} if isinstance(ev, str) else ev)
    assert err.value.code == code
    assert g.state() == before and g.events() == events  # "changes nothing"
    return err.value


def harvest(flower, count):
    return {"ev": "harvest", "flower": flower, "count": count}


def grow(g, tokens):
    """Plant bulbs over whole turns until at least `tokens` can be harvested
    (ruling R10: the garden holds the seeded tokens plus earlier turns' bulbs)."""
    seeded = GARDEN_SEED[len(g.names)]
    for _ in range(max(0, tokens - seeded + 1) // 2):
        play(g, "plant", "plant", "end_turn")
    return g


# -- Setup ---------------------------------------------------------------


@pytest.mark.parametrize("n,bag", [(2, 86), (3, 77), (4, 73), (5, 73)])
def test_setup_bag_is_125_minus_portfolios_garden_and_exchange(n, bag):
    # "2-3 Players = 12 ... 4 Players = 10 ... 5 Players = 8"; garden 9 (2p) or 6; exchange 6
    assert bag_start(n) == bag
    s = game(n).state()
    assert s["bag"] == bag and s["exchange"] == 6 and s["harvested"] == 0


@pytest.mark.parametrize(
    "n,tokens",
    [(2, [3, 3]), (3, [3, 3, 3]), (4, [3, 3, 3, 4]), (5, [3, 3, 3, 4, 5])],
)
def test_setup_seedy_business_tokens_by_seat(n, tokens):
    # "4 Players: 3 3 3 4 (Last)"; "5 Players: 3 3 3 4 5 (Last)"
    s = game(n).state()
    assert [s["tokens"][p] for p in NAMES[:n]] == tokens
    assert not any(s["flush_used"].values())


def test_setup_first_player_is_first_name_and_values_start_at_zero():
    # "Stack all 5 Stalk Value tokens on the Market Track at space 0."
    s = game(3).state()
    assert s["current_player"] == "Ann"
    assert s["values"] == {f: 0 for f in FLOWERS}


@pytest.mark.parametrize(
    "players,msg",
    [
        (["Ann"], "2 to 5"),
        (NAMES + ["Fay"], "2 to 5"),
        (["Ann", "Ann"], "twice"),
        (["Ann", ""], "printable"),
        (["Ann", "x" * 13], "printable"),
        (["Ann", "Bö"], "printable"),
        (["Ann", 7], "printable"),
    ],
)
def test_setup_player_names_are_2_to_5_unique_printable(players, msg):
    with pytest.raises(EngineError) as err:
        Game().apply({"ev": "start", "game": "stalk-exchange", "players": players})
    assert err.value.code == "bad_field" and msg in err.value.message


def test_two_player_length_long_is_default_and_short_uses_the_2_3_space():
    # "For a long game, start placing Flower tokens on the 2-player space ...
    # For a shorter game ... on the 2-3 player space instead." (R1: placeholders)
    long_ = game(2).state()
    short = game(2, length="short").state()
    three = game(3).state()
    assert short["track_start"] == three["track_start"] < long_["track_start"]
    assert long_["track_start_placeholder"]
    with pytest.raises(EngineError):
        game(3, length="short")


def test_track_start_from_the_record_overrides_the_placeholder():
    s = game(2, track_start=20).state()
    assert s["track_start"] == 20 and not s["track_start_placeholder"]


# -- Action phase ----------------------------------------------------------


def test_two_basic_actions_then_extra_actions_cost_a_token():
    # "A player MUST do 2 Basic Actions"; "spend a Seedy Business token to do an extra Plant/Swap"
    g = game(2)
    s = play(g, "plant", "swap")
    assert s["tokens"]["Ann"] == 3 and s["actions"] == 2
    s = play(g, "swap")
    assert s["tokens"]["Ann"] == 2 and s["actions"] == 3
    s = play(g, "plant", "plant")
    assert s["tokens"]["Ann"] == 0
    refused(g, "plant", "no_tokens")  # "you can't get more during the game"


def test_plant_takes_a_token_off_the_exchange_swap_changes_no_count():
    # Plant: "places it in any unoccupied space in the Garden"; Swap replaces it from the portfolio
    g = game(2)
    s = play(g, "swap")
    assert s["exchange"] == 6 and s["bag"] == 86
    s = play(g, "plant")
    assert s["exchange"] == 5 and s["bag"] == 86


def test_turn_cannot_end_before_two_basic_actions():
    g = game(2)
    play(g, "plant")
    refused(g, "end_turn", "turn_incomplete")


def bag_at_one():
    """A 2-player game whose bag holds 1 token at the start of a turn."""
    g = game(2, track_start=255)
    play(g, "swap", "swap", "end_turn")  # draws 1: 85
    for _ in range(28):
        play(g, "plant", "plant", "end_turn")  # draws 3 each: 85 - 84 = 1
    assert g.state()["bag"] == 1
    return g


def test_turn_may_end_early_when_the_exchange_is_empty():
    # FAQ: "What if I flushed all the Flower tokens off the Stalk Exchange and the Greenhouse bag
    # is empty? If it is no longer possible to take any actions, move onto the Upkeep phase." (R3)
    g = bag_at_one()
    s = play(g, "flush", "plant")
    assert s["exchange"] == 0 and s["actions"] == 1 and s["end_triggered"] == "bag"
    refused(g, "plant", "exchange_empty")
    refused(g, "swap", "exchange_empty")
    s = play(g, harvest("tulip", 1), "end_turn")
    assert s["game_over"] and s["exchange"] == 0


def test_flush_costs_a_token_composts_and_refills_the_exchange():
    # "spend a Seedy Business token to move all Flowers on the Stalk Exchange to the Compost bag ...
    # refill the entire Stalk Exchange"
    g = game(2)
    s = play(g, "plant", "flush")
    assert s["exchange"] == 6 and s["bag"] == 80 and s["tokens"]["Ann"] == 2
    assert s["flush_used"] == {"Ann": True, "Bo": False}
    assert s["actions"] == 1  # a flush is not a basic action


def test_flush_only_once_per_player_per_game():
    # "A player may only do the Flush the Exchange action once per game."
    g = game(2)
    play(g, "flush", "plant", "plant", "end_turn", "plant", "plant", "end_turn")
    refused(g, "flush", "flush_used")
    play(g, "plant", "plant", "end_turn")
    s = play(g, "flush")
    assert s["flush_used"]["Bo"]


def test_flush_needs_a_token():
    g = game(2)
    play(g, "plant", "plant", "plant", "plant", "plant")
    refused(g, "flush", "no_tokens")


# -- Upkeep ----------------------------------------------------------------


def test_end_turn_composts_the_rightmost_and_refills_from_the_bag():
    # Step 4: "Move the rightmost flower ... into the Compost bag ... refill the Stalk Exchange"
    g = game(2)
    s = play(g, "plant", "plant", "end_turn")
    assert s["exchange"] == 6 and s["bag"] == 86 - 3
    assert s["current_player"] == "Bo" and s["actions"] == 0 and s["turn"] == 2


def test_turn_order_wraps_clockwise():
    g = game(3)
    for _ in range(3):
        play(g, "plant", "swap", "end_turn")
    assert g.state()["current_player"] == "Ann"


def test_harvest_advances_stalk_value_and_fills_the_market_track():
    # Step 3: "For every Flower token added to the Market Track, advance the matching Stalk Value token"
    g = game(2)
    s = play(g, "plant", "swap", harvest("tulip", 2), harvest("dahlia", 1))
    assert s["values"]["tulip"] == 2 and s["values"]["dahlia"] == 1 and s["harvested"] == 3
    assert s["phase"] == "upkeep"


def test_harvest_comes_after_the_two_basic_actions():
    g = game(2)
    play(g, "plant")
    refused(g, harvest("tulip", 1), "turn_incomplete")


def test_first_harvest_closes_the_action_phase():
    # "All decisions are made during the Action phase. The Upkeep phase resolves those choices."
    g = game(2)
    play(g, "plant", "swap", harvest("tulip", 1))
    refused(g, "plant", "upkeep")
    refused(g, "swap", "upkeep")
    refused(g, "flush", "upkeep")
    s = play(g, "end_turn")
    assert s["phase"] == "action"


def test_no_more_than_25_tokens_of_a_flower_are_harvested():
    g = grow(game(2, track_start=255), 26)
    play(g, "plant", "swap", harvest("tulip", 25))
    err = refused(g, harvest("tulip", 1), "too_many")
    assert "only 25 tulip" in err.message


# -- Game end --------------------------------------------------------------


def test_market_crash_when_harvested_tokens_meet_the_highest_stalk_value():
    # "The Harvested Flower tokens meet or pass the highest Stalk Value token" (R1: H + max >= S + 1)
    g = game(2, track_start=10)
    s = play(g, "plant", "swap", harvest("tulip", 5))
    assert s["end_triggered"] is None and s["tokens_until_crash"] == 1  # 5 + 5 = 10 < 11
    s = play(g, harvest("daffodil", 1))
    assert s["end_triggered"] == "crash"  # 6 + 5 = 11


def test_tokens_until_crash_counts_two_steps_per_leading_token():
    # R1: max(0, ceil((S + 1 - H - max) / 2))
    g = game(2, track_start=20)
    assert g.state()["tokens_until_crash"] == 11  # ceil(21 / 2)
    s = play(g, "plant", "swap", harvest("tulip", 4))
    assert s["tokens_until_crash"] == 7  # ceil((21 - 8) / 2)


def test_no_crash_countdown_once_the_end_is_triggered():
    """After a crash (counted or declared) or an empty bag the game ends with
    the turn: a count of tokens until a crash would mean nothing, so the
    state says null (and every screen showing it says nothing)."""
    g = game(2, track_start=20)
    s = play(g, "plant", "swap", "crash")
    assert s["end_triggered"] == "crash" and s["tokens_until_crash"] is None
    s = play(g, "flush")
    assert s["tokens_until_crash"] is None and s["game_over"] is False
    s = play(g, "end_turn")
    assert s["game_over"] is True and s["tokens_until_crash"] is None


def test_game_ends_after_the_turn_in_which_a_trigger_occurs():
    # "the game ends after the active player's turn; followed by Bust and Final Scoring"
    g = game(2, track_start=4)
    s = play(g, "plant", "swap", harvest("tulip", 3))
    assert s["end_triggered"] == "crash" and not s["game_over"]
    s = play(g, harvest("dahlia", 1))  # the rest of the upkeep still happens
    s = play(g, "end_turn")
    assert s["game_over"] and s["current_player"] is None
    refused(g, "plant", "game_over")


def test_manual_crash_event_triggers_the_end():
    g = game(2)
    s = play(g, "plant", "crash")
    assert s["end_triggered"] == "crash"
    refused(g, "crash", "triggered")
    s = play(g, "plant", "end_turn")
    assert s["game_over"]


def test_emptying_the_greenhouse_bag_ends_the_game():
    # "2. The Greenhouse bag is emptied."
    g = game(2, track_start=255)
    turns = 0
    while not g.state()["game_over"]:
        play(g, "plant", "plant", "end_turn")
        turns += 1
    s = g.state()
    assert s["bag"] == 0 and s["end_triggered"] == "bag"
    assert turns == 29  # 86 tokens, 3 drawn per turn: the 29th turn empties it


def test_flush_that_empties_the_bag_refills_what_it_can():
    # FAQ: "Replace as many Flower tokens as possible and finish the turn. The game will end at the end of that turn."
    g = game(2, track_start=255)
    while g.state()["bag"] > 4:
        play(g, "plant", "plant", "end_turn")
    assert g.state()["bag"] == 2
    s = play(g, "flush")
    assert s["exchange"] == 2 and s["bag"] == 0 and s["end_triggered"] == "bag"
    play(g, "plant", "plant")
    s = play(g, "end_turn")  # exchange empty: the turn may end; nothing left to draw
    assert s["game_over"] and s["exchange"] == 0


# -- Bust and final scoring ------------------------------------------------


def finish(g, portfolios):
    for name, counts in portfolios.items():
        g.apply({"ev": "portfolio", "player": name, "counts": counts})
    return g.state()


def ended(n=2, harvests=(), track_start=255):
    g = grow(game(n, track_start=track_start), sum(c for _, c in harvests))
    play(g, "plant", "swap", *[harvest(f, c) for f, c in harvests], "crash", "end_turn")
    return g


def test_bust_highest_value_loses_half_rounded_up():
    # "The highest valued flower loses half of its value rounded-up." 7 -> 3, 8 -> 4
    s = finish(ended(harvests=[("tulip", 7), ("dahlia", 5)]), {"Ann": {"tulip": 1, "snowdrop": 11}, "Bo": {"dahlia": 1, "snowdrop": 11}})
    assert s["final"]["values"]["tulip"] == 3 and s["final"]["values"]["dahlia"] == 5
    assert s["final"]["busted"] == ["tulip"]
    s = finish(ended(harvests=[("snowdrop", 8)]), {"Ann": {"dahlia": 12}, "Bo": {"tulip": 12}})
    assert s["final"]["values"]["snowdrop"] == 4


def test_bust_all_tied_highest_flowers():
    # "In the event of a tie, ALL the tied Flower Stalks bust."
    s = finish(ended(harvests=[("tulip", 6), ("dahlia", 6), ("daffodil", 2)]), {"Ann": {"globemaster": 12}, "Bo": {"snowdrop": 12}})
    assert s["final"]["busted"] == ["dahlia", "tulip"]
    assert s["final"]["values"] == {"dahlia": 3, "daffodil": 2, "globemaster": 0, "snowdrop": 0, "tulip": 3}


def test_score_is_count_times_final_value():
    # "multiplying each Flower token in their Stalk Portfolio by its Stalk Value and totaling"
    g = ended(harvests=[("tulip", 8), ("dahlia", 5), ("daffodil", 2)])
    s = finish(g, {"Ann": {"tulip": 2, "dahlia": 3, "daffodil": 7}, "Bo": {"dahlia": 12}})
    scores = {p["name"]: p["score"] for p in s["final"]["players"]}
    assert scores == {"Ann": 2 * 4 + 3 * 5 + 7 * 2, "Bo": 60}
    bo = s["final"]["players"][0]
    assert {k: bo[k] for k in ("name", "score", "rank", "winner")} == {"name": "Bo", "score": 60, "rank": 1, "winner": True}


def test_tie_break_by_count_of_most_valuable_flowers():
    # "the tied players compare the number of the most valuable flower(s) in their portfolio" (R2)
    g = ended(harvests=[("tulip", 2), ("dahlia", 4), ("daffodil", 8)])  # final: daffodil 4, dahlia 4, tulip 2
    s = finish(g, {"Ann": {"daffodil": 1, "tulip": 4, "globemaster": 7}, "Bo": {"dahlia": 3, "snowdrop": 9}})  # 12 vs 12
    # the tier at value 4 holds daffodil AND dahlia: Ann 1, Bo 3 -> Bo wins
    assert [(p["name"], p["score"], p["rank"]) for p in s["final"]["players"]] == [("Bo", 12, 1), ("Ann", 12, 2)]
    assert s["final"]["players"][0]["tiebreak"] == "ahead of Ann on 12 points: more dahlias and daffodils together, worth 4 each (3 to 1)"


def test_tie_break_goes_down_the_tiers_then_shares_the_victory():
    # "If there is still a tie, compare the next most valuable flower types ... the tied players share the victory."
    g = ended(n=3, harvests=[("tulip", 8), ("dahlia", 3), ("daffodil", 1)])  # final tulip 4, dahlia 3, daffodil 1
    s = finish(
        g,
        {
            "Ann": {"tulip": 1, "dahlia": 1, "daffodil": 3, "globemaster": 7},  # 4+3+3 = 10, tiers [1,1,3,7]
            "Bo": {"tulip": 1, "daffodil": 6, "snowdrop": 5},  # 4+6 = 10, tiers [1,0,6,5]
            "Cy": {"tulip": 1, "dahlia": 1, "daffodil": 3, "snowdrop": 7},  # the same tiers as Ann
        },
    )
    rows = [(p["name"], p["rank"], p["winner"]) for p in s["final"]["players"]]
    assert rows == [("Ann", 1, True), ("Cy", 1, True), ("Bo", 3, False)]


def test_portfolios_only_after_the_game_and_each_once():
    g = game(2)
    refused(g, {"ev": "portfolio", "player": "Ann", "counts": {}}, "not_over")
    g = ended()
    play(g, {"ev": "portfolio", "player": "Ann", "counts": {"tulip": 12}})
    refused(g, {"ev": "portfolio", "player": "Ann", "counts": {"tulip": 12}}, "already_entered")
    assert "final" not in g.state()


def test_portfolio_counts_plus_harvest_never_exceed_25_of_a_flower():
    g = ended(harvests=[("tulip", 10)])
    play(g, {"ev": "portfolio", "player": "Ann", "counts": {"tulip": 12}})
    err = refused(g, {"ev": "portfolio", "player": "Bo", "counts": {"tulip": 4, "dahlia": 8}}, "too_many")
    assert "26 tulip" in err.message


@pytest.mark.parametrize(
    "counts,msg",
    [({"rose": 1}, "unknown flower"), ({"tulip": -1}, "0 to 25"), ({"tulip": 1.5}, "0 to 25"), ({"tulip": True}, "0 to 25"), ([], "object")],
)
def test_portfolio_counts_are_whole_numbers_of_known_flowers(counts, msg):
    g = ended()
    err = refused(g, {"ev": "portfolio", "player": "Ann", "counts": counts}, "bad_field")
    assert msg in err.message


# -- Undo ------------------------------------------------------------------


def test_undo_removes_the_latest_event_any_number_of_times():
    g = game(2)
    s0 = g.state()
    play(g, "plant", "swap")
    s1 = g.state()
    play(g, "flush", "end_turn")
    s = play(g, "undo", "undo")
    assert s == s1
    s = play(g, "undo", "undo")
    assert s == s0
    refused(g, "undo", "nothing_to_undo")


def test_undo_of_a_game_ending_turn_reopens_the_game():
    g = ended()
    assert g.state()["game_over"]
    s = play(g, "undo")
    assert not s["game_over"] and s["end_triggered"] == "crash"


def test_turn_ends_early_only_when_players_declare_no_action_is_possible():
    # FAQ: "If it is no longer possible to take any actions, move onto the Upkeep phase." (R3)
    g = game(2)
    play(g, "plant")
    refused(g, "end_turn", "turn_incomplete")
    s = play(g, {"ev": "end_turn", "early": True})
    assert s["current_player"] == "Bo" and g.events()[-1] == {"ev": "end_turn", "early": True}
    refused(g, {"ev": "end_turn", "early": False}, "bad_field")


# -- Round 2: what the garden can hold, the stuck turn, portfolio size


@pytest.mark.parametrize("n,seeded", [(2, 9), (3, 6), (4, 6), (5, 6)])
def test_harvest_cannot_exceed_the_tokens_in_the_garden(n, seeded):
    # Setup 6: "2 Players: Place 9 Flower tokens on the Bee Spaces. 3-5 Players: Place 6"
    # + "Players can never harvest Flowers the same turn they are planted" (R10)
    g = game(n, track_start=255)
    play(g, "plant", "plant")  # two bulbs: not harvestable this turn
    err = refused(g, harvest("globemaster", seeded + 1), "too_many")
    assert "at most %d tokens in the garden" % seeded in err.message
    play(g, harvest("globemaster", seeded - 1))
    err = refused(g, harvest("tulip", 2), "too_many")  # one harvest per upkeep step, all together
    assert "at most 1 tokens" in err.message
    play(g, harvest("tulip", 1), "end_turn")
    # next turn: last turn's 2 bulbs are in the garden now, this turn's are not
    play(g, "plant", "swap")
    refused(g, harvest("dahlia", 3), "too_many")
    s = play(g, harvest("dahlia", 2))
    assert s["harvested"] == seeded + 2


def test_three_player_turn_one_cannot_harvest_fourteen():
    # the audit's case: 14 globemaster on turn 1 of a 3-player game, only 6 seeded
    g = game(3)
    play(g, "plant", "swap")
    err = refused(g, harvest("globemaster", 14), "too_many")
    assert "at most 6" in err.message and "R10" in err.message
    assert g.state()["end_triggered"] is None


def test_undo_restores_the_garden_bound_exactly():
    g = game(2, track_start=255)
    play(g, "plant", "swap", harvest("tulip", 4))
    before = bytes(g.snapshot())
    play(g, harvest("dahlia", 5))  # the garden is empty now
    refused(g, harvest("snowdrop", 1), "too_many")
    play(g, "undo")
    assert bytes(g.snapshot()) == before
    play(g, harvest("snowdrop", 5))
    play(g, "end_turn", "undo", "undo")  # undo the end of the turn: the bulb is this turn's again
    assert bytes(g.snapshot()) == before


def test_snapshot_keeps_the_garden_and_this_turns_bulbs():
    # the board restores from a snapshot at boot: the bound must survive it
    g = game(2, track_start=255)
    play(g, "plant", "plant", harvest("tulip", 3))
    h = Game(g.log, g.snapshot())
    assert bytes(h.snapshot()) == bytes(g.snapshot())
    refused(h, harvest("dahlia", 7), "too_many")
    play(h, "end_turn", "plant", "plant")
    play(h, harvest("dahlia", 8))  # 6 left + 2 bulbs of the last turn


def test_stuck_turn_goes_to_the_upkeep_and_its_harvest_is_entered():
    # "If a Flower token or a Flower group is surrounded ... they MUST be harvested during Step 1
    # of the Upkeep Phase"; FAQ: "If it is no longer possible to take any actions, move onto
    # the Upkeep phase." (R3: the players declare it with `stuck`)
    g = game(2)
    play(g, "plant")
    refused(g, harvest("tulip", 2), "turn_incomplete")
    s = play(g, "stuck")
    assert s["phase"] == "upkeep" and s["actions"] == 1 and s["current_player"] == "Ann"
    refused(g, "plant", "upkeep")
    refused(g, "swap", "upkeep")
    refused(g, "flush", "upkeep")
    refused(g, "stuck", "upkeep")
    s = play(g, harvest("tulip", 2))
    assert s["values"]["tulip"] == 2 and s["current_player"] == "Ann"  # this turn's upkeep
    s = play(g, "end_turn")
    assert s["current_player"] == "Bo" and s["phase"] == "action"
    assert g.events()[2] == {"ev": "stuck"}


def test_stuck_turn_may_have_no_harvest_and_is_not_an_orchids_event():
    g = game(2)
    s = play(g, "stuck", "end_turn")
    assert s["current_player"] == "Bo" and s["bag"] == bag_start(2) - 1
    o = Game()
    o.apply({"ev": "start", "game": "oh-my-orchids", "players": ["Ann", "Bo"]})
    refused(o, "stuck", "bad_event")


@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_portfolio_size_is_fixed_by_the_player_count(n):
    # Setup 5: "2-3 Players = 12 Flower tokens each / 4 Players = 10 / 5 Players = 8";
    # "replaces it with a different type of Flower token from their Portfolio": a swap is one for one (R6)
    size = PORTFOLIO_SIZE[n]
    assert size == {2: 12, 3: 12, 4: 10, 5: 8}[n]
    g = ended(n)
    for counts in ({"tulip": size - 1}, {"tulip": size, "dahlia": 1}, {}):
        err = refused(g, {"ev": "portfolio", "player": "Ann", "counts": counts}, "portfolio_size")
        assert "not %d" % size in err.message
    play(g, {"ev": "portfolio", "player": "Ann", "counts": {"tulip": size - 3, "dahlia": 3}})

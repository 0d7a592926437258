"""Oh My. Orchids! table rules, one test per rule, quoting the rulebook."""

import pytest

from engine_lite import EngineError, Game

NAMES = ["Lily", "Calla", "Iris", "Rose", "Fern"]


def game(n=3):
    g = Game()
    g.apply({"ev": "start", "game": "oh-my-orchids", "players": NAMES[:n]})
    return g


def ev(e):
    return {"ev": e} if isinstance(e, str) else e


def play(g, *evs):
    for e in evs:
        g.apply(ev(e))
    return g.state()


def refused(g, e, code):
    before, events = g.state(), g.events()
    with pytest.raises(EngineError) as err:
        g.apply(ev(e))
    assert err.value.code == code
    assert g.state() == before and g.events() == events
    return err.value


def take(n):
    return {"ev": "take", "seeds": n}


def orchid(name, points=5, seeds=1):
    return {"ev": "plant", "name": name, "kind": "orchid", "points": points, "seeds": seeds}


def flora(name, points=2, seeds=1):
    return {"ev": "plant", "name": name, "kind": "flora", "points": points, "seeds": seeds}


def test_setup_starting_seed_cards_by_seat():
    # "The 2nd, 3rd, 4th, and 5th players draw 1, 2, 3, and 4 Seed cards respectively"
    s = game(5).state()
    assert [s["players"][n]["hand"] for n in NAMES] == [0, 1, 2, 3, 4]
    assert s["current_player"] == "Lily" and not s["last_round"]


def test_take_seeds_grows_the_hand():
    s = play(game(), take(3))
    assert s["players"]["Lily"]["hand"] == 3


@pytest.mark.parametrize("n", [0, 6, -1])
def test_take_is_1_to_5_seeds(n):
    # a take is "all cards of the same Seed type ... or colour" from a 5-card display
    err = refused(game(), take(n), "bad_field")
    assert "1 to 5" in err.message


def test_hand_above_7_composts_the_excess_for_minus_one_each():
    # "If a player has more than 7 Seed cards, they must immediately compost the excess."
    g = game(2)
    play(g, take(5), "end_turn", take(1), "end_turn")
    s = play(g, take(4), "end_turn")  # 9 -> 7, 2 composted
    assert s["players"]["Lily"]["hand"] == 7 and s["players"]["Lily"]["composted"] == 2


def test_plant_pays_seeds_from_hand():
    # "The player discards Seed cards that match the cost of the Flower card"
    g = game(2)
    play(g, take(5), "end_turn", take(1), "end_turn")
    s = play(g, orchid("Vanda Miss Joaquim", 10, 4))
    lily = s["players"]["Lily"]
    assert lily["hand"] == 1 and lily["points"] == 10
    assert lily["flowers"] == [{"name": "Vanda Miss Joaquim", "kind": "orchid", "points": 10}]
    refused(g, flora("Ixora", 2, 2), "hand_short")


def test_several_plants_in_one_turn():
    # "They may plant more than one flower if they can discard the Seed card cost for each"
    g = game(2)
    play(g, take(5), "end_turn", take(1), "end_turn")
    s = play(g, flora("Ixora", 2, 2), flora("Ixora", 2, 2), "end_turn")
    assert len(s["players"]["Lily"]["flowers"]) == 2 and s["current_player"] == "Calla"


def test_take_and_plant_never_mix_and_take_is_once():
    # "On their turn, a player chooses one of two possible actions"
    g = game(2)
    play(g, take(5), "end_turn", take(1))
    refused(g, flora("Ixora", 1, 1), "mixed_turn")
    refused(g, take(1), "mixed_turn")
    play(g, "end_turn", flora("Ixora", 1, 1))
    refused(g, take(1), "mixed_turn")


def test_turn_cannot_end_without_an_action():
    refused(game(), "end_turn", "turn_incomplete")


def test_each_orchid_can_be_planted_once_per_game():
    # "Orchid cards are all unique (i.e. there is only one copy of each orchid in the game)"
    g = game(2)
    play(g, take(5), "end_turn", take(5), "end_turn", orchid("Bamboo Orchid"), "end_turn")
    refused(g, orchid("Bamboo Orchid"), "orchid_taken")
    s = play(g, flora("Ixora"), flora("Ixora"))  # flora cards have copies
    assert len(s["players"]["Calla"]["flowers"]) == 2


def seven_flowers(g):
    """Lily plants her 7th flower; Calla only takes seeds meanwhile."""
    for _ in range(4):
        play(g, take(5), "end_turn", take(1), "end_turn")
    # Lily holds 7 (5 + 5 composted to 7 ...): plant one flower per turn
    for i in range(7):
        s = g.state()
        if s["players"]["Lily"]["hand"] == 0:
            play(g, take(5), "end_turn", take(1), "end_turn")
        play(g, flora("Flora %d" % (i % 3)), "end_turn")
        if i < 6:
            play(g, take(1), "end_turn")
    return g.state()


def test_seven_flowers_start_the_last_round():
    # "The game will enter its last round when one player has at least 7 flowers planted"
    g = game(2)
    s = seven_flowers(g)
    assert s["last_round"] and not s["game_over"] and s["current_player"] == "Calla"


def test_last_round_is_plant_only_and_others_may_pass():
    # "All other players now have one last turn, but they can only take the 'Plant Flowers' action."
    g = game(2)
    seven_flowers(g)
    refused(g, take(2), "last_round")
    s = play(g, "end_turn")  # a pass
    assert s["game_over"] and s["current_player"] is None
    refused(g, flora("Ixora"), "game_over")


def test_last_round_gives_every_other_player_exactly_one_turn():
    g = game(3)
    play(g, take(5), "end_turn", take(5), "end_turn", take(5), "end_turn")
    for i in range(6):
        play(g, flora("F", 1, 1), "end_turn", take(1), "end_turn", take(1), "end_turn")
        if g.state()["players"]["Lily"]["hand"] == 0:
            play(g, take(5), "end_turn", take(1), "end_turn", take(1), "end_turn")
    s = play(g, flora("F", 1, 1), "end_turn")
    assert s["last_round"] and s["current_player"] == "Calla"
    s = play(g, "end_turn")
    assert not s["game_over"] and s["current_player"] == "Iris"
    s = play(g, flora("F", 1, 1), "end_turn")
    assert s["game_over"]


def test_score_flower_points_plus_variety_minus_composted():
    # Rulebook example: 37 flower points, 6 different types -> +10, 2 composted -> 45
    from engine_lite import score

    flowers = [{"name": n, "kind": "flora", "points": p} for n, p in zip("ABCDEF", (4, 3, 3, 2, 7, 8))]
    flowers.append({"name": "A", "kind": "flora", "points": 10})
    final = score({"game": "oh-my-orchids", "players": {"Shihui": {"composted": 2, "flowers": flowers}, "Bo": {}}})
    p = final["players"][0]
    assert (p["name"], p["flower_points"], p["variety_bonus"], p["composted"], p["score"]) == ("Shihui", 37, 10, 2, 45)


@pytest.mark.parametrize("distinct,bonus", [(3, 0), (4, 3), (5, 6), (6, 10), (7, 15), (9, 15)])
def test_variety_bonus_table(distinct, bonus):
    # "≠4 : +3 • ≠5 : +6 • ≠6 : +10 • ≠7 : +15"
    from engine_lite.tables import variety_bonus

    assert variety_bonus(distinct) == bonus


def test_ties_go_to_more_orchid_cards_then_share():
    # "In the case of a tie, the player with the most Orchid cards wins."
    from engine_lite import score

    players = {
        "A": {"flowers": [{"name": "O1", "kind": "orchid", "points": 5}]},
        "B": {"flowers": [{"name": "F", "kind": "flora", "points": 5}]},
        "C": {"flowers": [{"name": "O2", "kind": "orchid", "points": 5}]},
    }
    final = score({"game": "oh-my-orchids", "players": players})
    assert [(p["name"], p["rank"], p["winner"], p["orchids"]) for p in final["players"]] == [
        ("A", 1, True, 1),
        ("C", 1, True, 1),
        ("B", 3, False, 0),
    ]


def test_final_scores_appear_when_the_game_is_over():
    g = game(2)
    seven_flowers(g)
    assert "final" not in g.state()
    s = play(g, "end_turn")
    assert [p["name"] for p in s["final"]["players"]][0] == "Lily"


def test_undo_in_orchids_restores_composted_cards():
    g = game(2)
    play(g, take(5), "end_turn", take(1), "end_turn")
    before = g.state()
    play(g, take(5))
    s = play(g, "undo")
    assert s == before


@pytest.mark.parametrize(
    "bad,msg",
    [
        ({"ev": "plant", "name": "", "kind": "orchid", "points": 1, "seeds": 1}, "name"),
        ({"ev": "plant", "name": "X", "kind": "tree", "points": 1, "seeds": 1}, "kind"),
        ({"ev": "plant", "name": "X", "kind": "flora", "points": -1, "seeds": 1}, "points"),
        ({"ev": "plant", "name": "X", "kind": "flora", "points": 1}, "seeds"),
        ({"ev": "harvest", "flower": "tulip", "count": 1}, "unknown event"),
        ({"ev": "take", "seeds": 2, "colour": "red"}, "unknown field colour"),
    ],
)
def test_orchid_event_fields_are_checked(bad, msg):
    g = game(2)
    play(g, take(5), "end_turn", take(5), "end_turn")
    err = refused(g, bad, "bad_field" if "event" not in msg else "bad_event")
    assert msg in err.message


def test_turn_ends_early_only_when_declared_stuck():
    # R9: an empty Seed display and deck with nothing affordable -> declared early end
    g = game(2)
    refused(g, "end_turn", "turn_incomplete")
    s = play(g, {"ev": "end_turn", "early": True})
    assert s["current_player"] == "Calla"

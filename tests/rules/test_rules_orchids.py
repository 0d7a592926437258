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
    # the hand counts Seed cards, not the seeds printed on them (ruling R9)
    assert refused(g, flora("Ixora", 2, 2), "hand_short").message == "plant: Seed cards short: Ixora costs 2, Lily holds 1"


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
    # each refusal says what happened, in a player's words
    assert "no planting after a take" in refused(g, flora("Ixora", 1, 1), "mixed_turn").message
    assert refused(g, take(1), "mixed_turn").message == "took seeds already"
    play(g, "end_turn", flora("Ixora", 1, 1))
    assert refused(g, take(1), "mixed_turn").message == "planted: no take now"


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


# -- Flower identity (ruling R11) and the two scoring rulings (R12, R13) ------


@pytest.mark.parametrize("spelling", ["Tiger Orchid", "tiger orchid", "Tiger Orchid ", " TIGER   orchid", "Tiger\tOrchid"])
def test_a_unique_orchid_is_refused_under_any_spelling(spelling):
    # "Orchid cards are all unique (i.e. there is only one copy of each orchid in the game)" (R11)
    g = game(2)
    play(g, take(5), "end_turn", take(5), "end_turn", orchid("Tiger Orchid"), "end_turn")
    err = refused(g, orchid(spelling), "orchid_taken")
    assert "the orchid Tiger Orchid" in err.message


def test_a_name_is_an_orchid_or_a_flora_never_both():
    # "Orchid cards are all unique ..., whereas there are multiple copies of each Flora card":
    # a flora carrying an orchid's name would merge two variety kinds into one (R11)
    g = game(2)
    play(g, take(5), "end_turn", take(5), "end_turn", orchid("Tiger Orchid"), "end_turn")
    refused(g, flora("tiger orchid"), "orchid_taken")
    play(g, flora("Ixora"), "end_turn")
    err = refused(g, orchid("IXORA"), "orchid_taken")
    assert "the flora Ixora" in err.message
    s = play(g, flora(" ixora "))  # flora copies repeat under any spelling
    assert [f["name"] for f in s["players"]["Lily"]["flowers"]] == ["Tiger Orchid", " ixora "]


def test_variety_counts_one_kind_per_identity():
    # "add a Variety bonus score for having planted different unique flower types" (R11)
    from engine_lite import score

    names = ["Ixora", "ixora", "IXORA ", "Bougainvillea", "Simpoh Air", "Pink Mempat"]
    flowers = [{"name": n, "kind": "flora", "points": 1} for n in names]
    p = score({"game": "oh-my-orchids", "players": {"A": {"flowers": flowers}, "B": {}}})["players"][0]
    assert p["variety_bonus"] == 3  # 4 kinds, not 6


def test_score_table_refuses_an_orchid_twice_and_a_name_of_both_kinds():
    from engine_lite import score

    def table(a, b):
        return {"game": "oh-my-orchids", "players": {"A": {"flowers": [a]}, "B": {"flowers": [b]}}}

    o = {"name": "Tiger Orchid", "kind": "orchid", "points": 5}
    with pytest.raises(EngineError) as err:
        score(table(o, dict(o, name="TIGER  ORCHID")))
    assert err.value.code == "orchid_taken" and "players.B.flowers[0]" in err.value.message
    with pytest.raises(EngineError) as err:
        score(table(o, dict(o, kind="flora")))
    assert err.value.code == "orchid_taken"


@pytest.mark.mpy
def test_flower_identity_is_the_same_under_micropython():
    # the board's interpreter folds ASCII letters only; R11 is defined so both agree
    from engine_lite.orchids import flower_key
    from tests.kit.mpy_harness import run_mpy

    names = ["Tiger Orchid", " tiger\t ORCHID ", "Zoë", "ZOË", "a\u00a0b"]
    r = run_mpy("print([flower_key(n) for n in %r])" % names, setup="from engine_lite.orchids import flower_key")
    assert r.stdout.strip() == repr([flower_key(n) for n in names])
    assert flower_key(names[0]) == flower_key(names[1]) and flower_key("Zoë") != flower_key("ZOË")


def test_winner_is_the_highest_total_not_the_highest_flower_points():
    # "The final score is: Flower points + Variety bonus points - Composted Seed cards = Total points."
    # The last line's "most Flower points" is read as the Total (R12).
    from engine_lite import score

    a = [{"name": n, "kind": "flora", "points": 2} for n in "ABCDEFG"]  # 14 points, 7 kinds -> +15 = 29
    b = [{"name": "Z", "kind": "flora", "points": 20}]  # 20 points, 1 kind = 20
    final = score({"game": "oh-my-orchids", "players": {"Ann": {"flowers": a}, "Bo": {"flowers": b}}})
    assert [(p["name"], p["flower_points"], p["score"], p["winner"]) for p in final["players"]] == [
        ("Ann", 14, 29, True),
        ("Bo", 20, 20, False),
    ]


def test_eight_or_more_kinds_score_fifteen():
    # "≠7 : +15" is the top of the table: 8 and more kinds keep +15 (R13)
    from engine_lite import score

    flowers = [{"name": "F%d" % i, "kind": "flora", "points": 0} for i in range(9)]
    p = score({"game": "oh-my-orchids", "players": {"A": {"flowers": flowers[:8]}, "B": {"flowers": flowers}}})["players"]
    assert [q["variety_bonus"] for q in p] == [15, 15]


def test_a_hash_collision_is_neither_a_clash_nor_one_kind():
    # R11 compares identities; the state keeps only their hash (a small int,
    # no heap per flower), so two different names whose hashes collide must
    # still be two flowers: no "orchid_taken", two kinds in the variety bonus
    from engine_lite.orchids import clash, final_scores, flower_key
    from engine_lite.tables import variety_bonus

    lady = hash(flower_key("Lady Orchid"))
    rows = [[("Moth Orchid", "orchid", 3, lady)], []]  # Moth's entry carries Lady's hash
    assert clash(rows, "Lady Orchid", "orchid", "plant") == lady
    rows[0].append(("Lady Orchid", "orchid", 2, lady))
    assert final_scores(["A", "B"], rows, [0, 0])["players"][0]["variety_bonus"] == variety_bonus(2)


# -- ruling R14: a turn plants from the displays as they stood -------------
# "A player planting flowers may choose any of the 7 Flower cards in the Orchid
# or Flora displays ... After a player takes the Plant Flowers action, the
# Orchid and Flora display is replenished to 3 and 4 face-up cards
# respectively." So one turn plants at most 3 orchids and 4 flora.


def seven_cards(g):
    """Lily holds 7 Seed cards (the hand limit), her turn, nothing planted."""
    return play(g, take(5), "end_turn", take(1), "end_turn", take(2), "end_turn", take(1), "end_turn")


def test_display_bound_three_orchids_and_four_flora_in_one_turn_are_legal():
    g = game(2)
    seven_cards(g)
    s = play(g, orchid("Vanda"), orchid("Cattleya"), orchid("Dendrobium"),
             flora("Ixora"), flora("Ixora"), flora("Lantana"), flora("Canna"), "end_turn")
    assert len(s["players"]["Lily"]["flowers"]) == 7 and s["players"]["Lily"]["hand"] == 0


def test_display_bound_a_fourth_orchid_in_one_turn_is_refused():
    g = game(2)
    seven_cards(g)
    play(g, orchid("Vanda"), flora("Ixora"), orchid("Cattleya"), orchid("Dendrobium"))
    err = refused(g, orchid("Miltonia"), "display_empty")
    assert err.message == "plant: the Orchid display holds 3 cards: refill comes after the turn"
    play(g, flora("Lantana"))  # the Flora display still has cards
    play(g, "end_turn", take(1), "end_turn")  # refilled for the next turn
    play(g, orchid("Miltonia"))


def test_display_bound_a_fifth_flora_in_one_turn_is_refused():
    g = game(2)
    seven_cards(g)
    play(g, flora("Ixora"), flora("Ixora"), flora("Lantana"), orchid("Vanda"), flora("Canna"))
    err = refused(g, flora("Ixora"), "display_empty")
    assert err.message == "plant: the Flora display holds 4 cards: refill comes after the turn"
    play(g, orchid("Cattleya"))


def test_display_bound_undo_gives_the_card_back_to_the_display():
    g = game(2)
    seven_cards(g)
    play(g, orchid("Vanda"), orchid("Cattleya"), orchid("Dendrobium"))
    refused(g, orchid("Miltonia"), "display_empty")
    play(g, "undo")
    s = play(g, orchid("Miltonia"))  # two orchids this turn again: a third is legal
    assert [f["name"] for f in s["players"]["Lily"]["flowers"]] == ["Vanda", "Cattleya", "Miltonia"]
    refused(g, orchid("Dendrobium"), "display_empty")


def test_display_bound_survives_a_snapshot():
    """The board boots from a snapshot mid-turn: the count of this turn's plants
    is in it (the turn's `done` byte), so the bound still holds."""
    g = game(2)
    seven_cards(g)
    play(g, orchid("Vanda"), orchid("Cattleya"), orchid("Dendrobium"))
    h = Game(g.log, g.snapshot())
    refused(h, orchid("Miltonia"), "display_empty")
    h.apply(flora("Ixora"))

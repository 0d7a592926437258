"""The full Oh My. Orchids! engine (host/fullrules/orchids_full.py) and its cross-check of engine_lite.

Decks come from data/orchids_sample_deck.json, a SAMPLE (the real card list
is not known to us). Rulings: docs/rulings.md, "Full engine (host)".
"""

import json

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import engine_lite
from engine_lite import tables
from host.fullrules.orchids_full import (
    SAMPLE_DECK,
    Deck,
    DeckError,
    Flower,
    GreedyPolicy,
    OrchidsGame,
    Seed,
    play_game,
    sample_deck,
)

NAMES = ["Lily", "Calla", "Iris", "Rose", "Fern"]


def seeds(*spec):
    """seeds("red1", "blue3") -> [Seed(red,1), Seed(blue,3)]"""
    return [Seed(x[:-1], int(x[-1]), i) for i, x in enumerate(spec)]


def replay_matches(game):
    state = engine_lite.replay(game.record_lines())
    live = game.g.state()
    assert state == live
    assert state.get("final") == game.final
    return state


# -- the three cost kinds ------------------------------------------------------


def test_same_colour_cost():
    # "Same Seed colours" - e.g. "3 blue cards of 2 seeds to plant the Bamboo Orchid"
    f = Flower("Bamboo Orchid", "orchid", 6, "same_colour", 3, 0)
    assert f.pays(seeds("blue2", "blue2", "blue2"))
    assert f.pays(seeds("yellow1", "yellow4", "yellow3"))
    assert not f.pays(seeds("blue2", "blue2", "red2"))
    assert not f.pays(seeds("blue2", "blue2"))
    assert not f.pays(seeds("blue2", "blue2", "blue2", "blue2"))


def test_different_types_cost():
    # "Different Seed types"
    f = Flower("Pigeon Orchid", "orchid", 4, "different_types", 3, 0)
    assert f.pays(seeds("red1", "red2", "blue4"))
    assert not f.pays(seeds("red1", "blue1", "green4"))
    assert not f.pays(seeds("red1", "red2"))


def test_exact_number_of_seeds_cost():
    # "Exact number of Seeds": any cards whose seeds add up exactly
    f = Flower("Dove Orchid", "orchid", 5, "exact_seeds", 8, 0)
    assert f.pays(seeds("red4", "blue4"))
    assert f.pays(seeds("red1", "red3", "green2", "green2"))
    assert not f.pays(seeds("red4", "blue3"))
    assert not f.pays(seeds("red4", "blue4", "green1"))
    assert not f.pays([])


def test_payments_lists_every_way_and_only_valid_ones():
    hand = seeds("red1", "red2", "blue3", "red3", "green1")
    f = Flower("Ixora", "flora", 1, "exact_seeds", 4, 0)
    ways = f.payments(hand)
    assert sorted(ways) == [(0, 1, 4), (0, 2), (0, 3), (2, 4), (3, 4)]  # 1+3, 1+3, 3+1, 3+1, 1+2+1
    assert all(f.pays([hand[i] for i in w]) for w in ways)
    assert Flower("X", "flora", 1, "same_colour", 4, 0).payments(hand) == []


# -- setup, takes, hand limit, displays ----------------------------------------


@pytest.mark.parametrize("players", [2, 3, 4, 5])
def test_setup_displays_and_starting_seeds(players):
    game = OrchidsGame(NAMES[:players], seed=1)
    assert (len(game.orchid_display), len(game.flora_display), len(game.seed_display)) == (3, 4, 5)
    # "The 2nd, 3rd, 4th, and 5th players draw 1, 2, 3, and 4 Seed cards"
    assert [len(h) for h in game.hands] == list(tables.STARTING_SEEDS[:players])
    game.cross_check(game.g.state())


def test_take_all_of_one_colour_then_refill_to_five():
    game = OrchidsGame(NAMES[:2], seed=1)
    game.seed_display = seeds("red1", "green2", "red3", "green2", "yellow4")
    game.do_take("colour", "green", GreedyPolicy(None))
    assert [(c.colour, c.seeds) for c in game.hands[0]] == [("green", 2), ("green", 2)]
    assert len(game.seed_display) == 5
    assert game.g.events()[-1] == {"ev": "take", "seeds": 2}


def test_take_all_of_one_type():
    game = OrchidsGame(NAMES[:2], seed=1)
    game.seed_display = seeds("red1", "green2", "red3", "blue2", "yellow2")
    game.do_take("type", 2, GreedyPolicy(None))
    assert sorted(c.colour for c in game.hands[0]) == ["blue", "green", "yellow"]
    assert game.take_options() != []


def test_hand_limit_composts_the_excess_the_player_chooses():
    # "If a player has more than 7 Seed cards, they must immediately compost the excess."
    game = OrchidsGame(NAMES[:2], seed=1)
    game.hands[0] = seeds("red1", "red2", "red3", "red4", "blue1", "blue2")
    game.g = engine_lite.Game()  # the engine's hand must match: replay a table with 6 cards in hand
    game.g.apply({"ev": "start", "game": "oh-my-orchids", "players": NAMES[:2]})
    for k in (5, 1):  # seat 1 starts with 1 card; give seat 0 six over two turns
        game.g.apply({"ev": "take", "seeds": k})
        game.g.apply({"ev": "end_turn"})
        game.g.apply({"ev": "take", "seeds": 1})
        game.g.apply({"ev": "end_turn"})
    assert game.g.state()["players"]["Lily"]["hand"] == 6
    game.seed_display = seeds("green1", "green2", "green3", "yellow1", "yellow2")

    class KeepRed:
        def compost(self, g, k):
            hand = g.hands[g.seat]
            return [i for i, c in enumerate(hand) if c.colour == "green"][:k]

    game.do_take("colour", "green", KeepRed())
    assert len(game.hands[0]) == 7
    assert [c.seeds for c in game.composted[0]] == [2, 1]  # popped from the end of the chosen ones
    assert game.g.state()["players"]["Lily"]["composted"] == 2


def test_planting_twice_in_one_turn_refills_the_displays_only_after():
    game = OrchidsGame(NAMES[:2], seed=3, check=False)  # hands set by hand below
    cheap = [Flower("Ixora", "flora", 1, "exact_seeds", 1, 2000 + i) for i in range(2)]
    game.flora_display = cheap + game.flora_display[2:]
    game.hands[0] = seeds("red1", "blue1")
    game.g = engine_lite.Game()
    game.g.apply({"ev": "start", "game": "oh-my-orchids", "players": NAMES[:2]})
    game.g.apply({"ev": "take", "seeds": 2})
    game.g.apply({"ev": "end_turn"})
    game.g.apply({"ev": "take", "seeds": 1})
    game.g.apply({"ev": "end_turn"})
    moves = [("plant", "flora", 0, (0,)), ("plant", "flora", 0, (0,))]

    class Two:
        def choose(self, g):
            if moves:
                assert len(g.flora_display) == 4 - (2 - len(moves))  # no refill between plants
                return moves.pop(0)
            return None

    game.policies[0] = Two()
    st_ = game.play_turn(game.g.state())
    assert [f.name for f in game.flowers[0]] == ["Ixora", "Ixora"]
    assert len(game.flora_display) == 4  # "replenished to 3 and 4 face-up cards"
    assert st_["players"]["Lily"]["flowers"] == [{"name": "Ixora", "kind": "flora", "points": 1}] * 2
    assert len(game.discard) == 2


def test_discard_is_reshuffled_when_the_seed_deck_runs_out():
    # "If there are insufficient cards in the Seed deck, shuffle the discard pile to form a new deck."
    game = OrchidsGame(NAMES[:2], seed=3)
    game.discard = game.seed_deck[:]
    game.seed_deck = []
    game.seed_display = []
    game._refill_seeds()
    assert len(game.seed_display) == 5 and game.reshuffles == 1 and game.discard == []


# -- complete games, cross-checked ----------------------------------------------


@pytest.mark.parametrize("players", [2, 3, 4, 5])
@pytest.mark.parametrize("policies", [("random",), ("greedy",), ("greedy", "random")])
def test_simulated_games_replay_to_the_same_scores(players, policies):
    finished = 0
    for seed in range(3):
        game = play_game(NAMES[:players], "o%d" % seed, policies, check=True)
        if game.end_reason == "stalled":
            continue  # ruling H10: counted, not scored
        assert game.end_reason == "seven_flowers"
        replay_matches(game)
        table = {
            "game": "oh-my-orchids",
            "players": {
                n: {"composted": len(game.composted[i]), "flowers": [{"name": f.name, "kind": f.kind, "points": f.points} for f in game.flowers[i]]}
                for i, n in enumerate(game.names)
            },
        }
        assert engine_lite.score(table) == game.final
        finished += 1
    assert finished >= 2


def test_last_round_gives_every_other_player_one_plant_only_turn():
    # "The game will enter its last round when one player has at least 7
    # flowers planted ... All other players now have one last turn, but they
    # can only take the 'Plant Flowers' action."
    for seed in range(5):
        game = play_game(NAMES[:4], seed, ("random",), check=True)
        events = game.g.events()
        g = engine_lite.Game()
        after = None
        for ev in events:
            g.apply(ev)
            if after is not None:
                after.append(ev)
            elif g.state()["last_round"]:
                after = []
        assert after is not None
        assert sum(1 for ev in after if ev["ev"] == "end_turn") == 3
        assert not any(ev["ev"] == "take" for ev in after)
        assert max(len(p["flowers"]) for p in g.state()["players"].values()) >= 7


def test_orchids_are_planted_once_and_displays_never_overfill():
    for seed in range(5):
        game = play_game(NAMES[:5], seed, ("greedy",), check=True)
        orchids = [f.name for row in game.flowers for f in row if f.kind == "orchid"]
        assert len(orchids) == len(set(orchids))
        assert len(game.orchid_display) <= 3 and len(game.flora_display) <= 4 and len(game.seed_display) <= 5


def test_greedy_beats_random():
    wins = sum(play_game(NAMES[:2], s, ("greedy", "random"), check=False).result()["ranks"][0] == 1 for s in range(20))
    assert wins >= 15


# -- the deck file ----------------------------------------------------------------


def test_the_shipped_deck_is_labelled_as_a_sample():
    with open(SAMPLE_DECK) as f:
        data = json.load(f)
    assert data["sample"] is True and "SAMPLE" in data["note"] and "NOT THE REAL CARD LIST" in data["note"]
    deck = sample_deck()
    assert deck.sample and len(deck.seeds) == 64 and len(deck.orchids) == 18 and len(deck.flora) == 30


@pytest.mark.parametrize(
    "data",
    [
        {"seed_cards": [], "orchids": [], "flora": []},
        {"seed_cards": [{"colour": "red", "seeds": 1}], "orchids": [{"name": "A", "points": 1, "cost": {"kind": "magic", "count": 1}}], "flora": []},
        {
            "seed_cards": [{"colour": "red", "seeds": 1}],
            "orchids": [{"name": "A", "points": 1, "cost": {"kind": "same_colour", "count": 1}}] * 2,
            "flora": [],
        },
        {"orchids": []},
    ],
)
def test_bad_decks_are_refused_with_one_line(tmp_path, data):
    p = tmp_path / "deck.json"
    p.write_text(json.dumps(data))
    with pytest.raises(DeckError) as err:
        Deck.load(str(p))
    assert "\n" not in str(err.value)


# -- properties ---------------------------------------------------------------------


@pytest.mark.slow
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32), players=st.integers(2, 5), policies=st.lists(st.sampled_from(["random", "greedy"]), min_size=1, max_size=5))
def test_any_seeded_game_keeps_the_invariants(seed, players, policies):
    game = play_game(NAMES[:players], seed, tuple(policies), check=True)  # cross_check every turn
    state = replay_matches(game)
    for i, name in enumerate(game.names):
        p = state["players"][name]
        assert 0 <= p["hand"] <= tables.HAND_LIMIT
    if game.end_reason == "seven_flowers":
        assert state["game_over"]
        score = {r["name"]: r for r in game.final["players"]}
        for i, name in enumerate(game.names):
            kinds = {f.name for f in game.flowers[i]}
            r = score[name]
            assert r["score"] == r["flower_points"] + tables.variety_bonus(len(kinds)) - len(game.composted[i])
    else:
        assert game.end_reason == "stalled" and not state["game_over"]


@pytest.mark.mpy
def test_a_sample_of_simulated_games_replays_identically_in_micropython():
    from tests.kit.mpy_harness import run_mpy

    games = [play_game(NAMES[:n], "mpy%d" % n, ("greedy", "random"), check=True) for n in (2, 5)]
    code = "for lines in RECORDS:\n    print(json.dumps(engine_lite.replay(lines)))\n"
    setup = "import json, engine_lite\nRECORDS = %r" % ([g.record_lines() for g in games],)
    out = run_mpy(code, setup=setup).stdout.strip().splitlines()
    assert len(out) == len(games)
    for game, text in zip(games, out):
        state = json.loads(text)
        assert state == game.g.state()
        assert state["final"] == game.final


def test_the_hand_limit_excess_is_the_engines_cost_of_the_take():
    # "If a player has more than 7 Seed cards, they must immediately compost
    # the excess": how many is engine_lite's cost(take, k), asked before the
    # take; a take after a plant is refused by the engine (ruling R9).
    game = OrchidsGame(NAMES[:2], seed=1)
    hand = len(game.hands[0])
    for k in range(6):
        assert game.take_excess(k) == max(0, hand + k - tables.HAND_LIMIT)
    assert game.may_take()
    game.g.apply({"ev": "take", "seeds": 1})
    game.g.apply({"ev": "end_turn"})  # Calla, who starts with one card, plants with it
    game.g.apply({"ev": "plant", "name": "Fern", "kind": "flora", "points": 1, "seeds": 1})
    assert game.seed_display and not game.may_take()

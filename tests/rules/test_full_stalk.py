"""The full Stalk Exchange engine (host/fullrules/stalk_full.py) and its cross-check of engine_lite.

The full engine plays the physical game and tells engine_lite what a player
would; it reads values, triggers and scores back. These tests check the
physical rules it owns (exchange slots, bag, swaps, flush) and that every
simulated game's record, replayed through engine_lite, gives the same values,
triggers and scores as the game the full engine saw.
Rulings: docs/rulings.md, "Full engine (host)".
"""

import json
import random

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import engine_lite
from engine_lite import tables
from host.fullrules.garden import FLOWERS, Layout
from host.fullrules.stalk_full import (
    FLUSH,
    PER_FLOWER,
    GreedyPolicy,
    RandomPolicy,
    StalkGame,
    default_track_start,
    play_game,
)

NAMES = ["Ann", "Bo", "Cy", "Di", "Eve"]


def replay_matches(game):
    """engine_lite.replay of the written record == what the live game saw."""
    lines = game.record_lines()
    state = engine_lite.replay(lines)
    live = game.g.state()
    for key in ("values", "harvested", "bag", "exchange", "end_triggered", "game_over", "tokens", "flush_used", "track_start"):
        assert state[key] == live[key], key
    assert state.get("final") == game.final
    return state, lines


# -- the cross-check over many seeded games -----------------------------------


@pytest.mark.parametrize("players", [2, 3, 4, 5])
@pytest.mark.parametrize("policies", [("random",), ("greedy",), ("greedy", "random")])
def test_simulated_games_replay_to_the_same_values_triggers_and_scores(players, policies):
    reasons = set()
    for seed in range(6):
        game = play_game(NAMES[:players], "x%d" % seed, policies, check=True)  # check: physical counts == engine every turn
        assert game.end_reason in ("crash", "bag")
        state, lines = replay_matches(game)
        reasons.add(game.end_reason)
        # the record is complete: portfolios at the end; the start space came from the
        # placeholder table, so the record does not claim it (ruling R1)
        start = json.loads(lines[0])
        assert "track_start" not in start and state["track_start_placeholder"] is True
        assert state["track_start"] == default_track_start(players)
        assert [json.loads(x)["ev"] for x in lines[-players:]] == ["portfolio"] * players
        # scores follow from portfolios x busted values, as engine_lite.score says
        table = {
            "game": "stalk-exchange",
            "values": state["values"],
            "portfolios": {n: dict(zip(FLOWERS, game.counts(i))) for i, n in enumerate(game.names)},
        }
        assert engine_lite.score(table) == game.final
    assert reasons  # at least one game ended


def test_both_end_triggers_occur_and_match_their_definitions():
    seen = {}
    for seed in range(40):
        game = play_game(NAMES[:4], seed, ("random",), check=True)
        st_ = game.g.state()
        if game.end_reason == "bag":
            # "The Greenhouse bag is emptied."
            assert st_["bag"] == 0 and len(game.bag) == 0
        else:
            # crash: H + max(values) >= S + 1 (ruling R1), checked on the raw values
            assert game.end_reason == "crash"
            assert st_["harvested"] + max(st_["values"].values()) >= st_["track_start"] + 1
            # (the bag may empty too at that turn's refill: the first trigger names the end)
        seen[game.end_reason] = seen.get(game.end_reason, 0) + 1
    assert set(seen) == {"bag", "crash"}, seen


def test_same_seed_same_game_different_seed_different_game():
    a = play_game(NAMES[:3], 7, ("random",)).record_lines()
    b = play_game(NAMES[:3], 7, ("random",)).record_lines()
    c = play_game(NAMES[:3], 8, ("random",)).record_lines()
    assert a == b and a != c


def test_two_player_short_game_uses_its_own_start_space():
    game = play_game(NAMES[:2], 1, ("greedy",), length="short")
    start = json.loads(game.record_lines()[0])
    assert start["length"] == "short"
    assert default_track_start(2, "short") != default_track_start(2, "long")
    state, _ = replay_matches(game)
    assert state["track_start"] == default_track_start(2, "short") and state["track_start_placeholder"]
    given = play_game(NAMES[:2], 1, ("greedy",), track_start=40)
    start = json.loads(given.record_lines()[0])
    assert start["track_start"] == 40 and replay_matches(given)[0]["track_start_placeholder"] is False


# -- setup and the physical components ----------------------------------------


@pytest.mark.parametrize("players", [2, 3, 4, 5])
def test_setup_counts_match_the_rulebook(players):
    game = StalkGame(NAMES[:players], seed=3)
    # Setup 5: 12/12/10/8 tokens per portfolio; setup 6: 9 on Bee spaces (2p), 6 on Butterfly spaces
    assert all(sum(game.counts(s)) == tables.PORTFOLIO_SIZE[players] for s in range(players))
    assert game.garden.counts() == (tables.GARDEN_SEED[players], 0, 37 - tables.GARDEN_SEED[players])
    spaces = game.garden.layout.bee if players == 2 else game.garden.layout.butterfly
    assert all(game.garden.cells[i] for i in spaces)
    assert game.exchange_count() == 6
    assert len(game.bag) == 125 - players * tables.PORTFOLIO_SIZE[players] - tables.GARDEN_SEED[players] - 6
    game.cross_check(game.g.state())


def test_move_exchange_composts_rightmost_shifts_right_and_refills():
    game = StalkGame(NAMES[:3], seed=1)
    a, b, c = 10, 30, 60
    game.exchange = [a, None, b, None, c, None]  # slot 5 (rightmost) emptied by a plant
    game.bag = [100, 101, 102, 103]
    game.compost = []
    game.move_exchange()
    # rightmost token present (c) composted; a, b shifted right in order; refill from the right
    assert game.compost == [c]
    assert game.exchange[4:] == [a, b]
    assert sorted(game.exchange[:4]) == [100, 101, 102, 103]
    assert game.bag == []


def test_move_exchange_with_a_short_bag_leaves_gaps_on_the_left():
    game = StalkGame(NAMES[:3], seed=1)
    game.exchange = [1, 2, 3, 4, 5, 6]
    game.bag = []
    game.compost = []
    game.move_exchange()
    assert game.compost == [6]
    assert game.exchange == [None, 1, 2, 3, 4, 5]


class Script:
    """A policy that plays a fixed list of moves, then ends its action phase."""

    def __init__(self, moves):
        self.moves = list(moves)

    def choose(self, game):
        return self.moves.pop(0) if self.moves else None


def test_swap_only_for_a_different_type():
    # "replaces it with a different type of Flower token from their Portfolio"
    game = StalkGame(NAMES[:3], seed=5)
    slot = 0
    own = game.exchange[slot] // PER_FLOWER
    events = len(game.g.events())
    game.begin_turn(game.g.state())
    if game.counts(0)[own] == 0:
        game.portfolios[0][own].append(game.portfolios[0][(own + 1) % 5].pop())
    with pytest.raises(ValueError):
        game.do_swap(slot, own)
    assert len(game.g.events()) == events  # nothing was told to the engine
    other = next(f for f in range(5) if f != own and game.counts(0)[f])
    taken = game.exchange[slot]
    game.do_swap(slot, other)
    assert taken in game.portfolios[0][own]
    assert game.exchange[slot] // PER_FLOWER == other
    assert sum(game.counts(0)) == tables.PORTFOLIO_SIZE[3]
    assert game.g.events()[-1] == {"ev": "swap"}


def test_flush_composts_the_whole_exchange_and_refills_it():
    game = StalkGame(NAMES[:3], seed=2, check=True)
    game.begin_turn(game.g.state())
    old = list(game.exchange)
    bag = len(game.bag)
    game.do_flush()
    assert game.compost == old
    assert game.exchange_count() == 6 and len(game.bag) == bag - 6
    assert game.flush_used and game.tokens_left == 2  # read back from engine_lite
    game.cross_check(game.g.state())


def test_flush_with_a_short_bag_fills_what_it_can_and_ends_the_game():
    # FAQ: "Replace as many Flower tokens as possible and finish the turn. The
    # game will end at the end of that turn."
    game = StalkGame(NAMES[:3], seed=2, check=False)
    # Drain the bag the engine's way: the engine counts, so feed it turns.
    game.policies = [Script([]) for _ in range(3)]
    while len(game.bag) > 3:
        st_ = game.g.state()
        game.begin_turn(st_)
        slots = game.occupied_slots()
        empty = game.garden.empty_spaces()
        game.do_plant(slots[0], empty[0])
        game.do_swap(*game.legal_swaps()[0])
        game.g.apply({"ev": "end_turn"})
        game.move_exchange()
        game.seat = (game.seat + 1) % 3
        # no harvest told: keep the garden out of it by clearing it
        game.garden.__init__(game.garden.layout)
        assert not game.g.state()["game_over"]
    st_ = game.g.state()
    game.begin_turn(st_)
    assert game.may_flush()
    game.do_flush()
    assert len(game.bag) == 0 and game.exchange_count() == len([t for t in game.exchange if t is not None]) <= 3
    st_ = game.g.state()
    assert st_["end_triggered"] == "bag" and st_["exchange"] == game.exchange_count()


def test_a_stuck_turn_is_recorded_as_stalled_not_as_an_illegal_event(tmp_path):
    # A garden with no free space and an exchange of the one type a player
    # holds: no plant, no swap; the flush is used up. Ruling H7.
    p = tmp_path / "six.json"
    ring = [[1, 0], [1, -1], [0, -1], [-1, 0], [-1, 1], [0, 1]]
    p.write_text(json.dumps({"name": "six", "spaces": ring, "butterfly": ring, "bee": []}))
    game = StalkGame(NAMES[:3], seed=4, layout=Layout.load(str(p)), check=False)
    tulips = [t for t in range(4 * PER_FLOWER, 5 * PER_FLOWER)]
    game.portfolios[0] = [[], [], [], [], tulips[:12]]
    game.exchange = tulips[12:18]
    game.bag = tulips[18:]
    flushes = []

    class FlushThenStop:
        def choose(self, g):
            if g.may_flush():
                flushes.append(1)
                return (FLUSH,)
            return None

    game.policies[0] = FlushThenStop()
    result = game.play()
    assert flushes == [1]
    assert result["end_reason"] == "stalled" and result["final"] is None
    assert game.g.events()[-1] == {"ev": "flush"}  # nothing illegal was sent


def test_greedy_flushes_when_it_has_no_other_move(tmp_path):
    p = tmp_path / "six.json"
    ring = [[1, 0], [1, -1], [0, -1], [-1, 0], [-1, 1], [0, 1]]
    p.write_text(json.dumps({"name": "six", "spaces": ring, "butterfly": ring, "bee": []}))
    game = StalkGame(NAMES[:3], seed=4, layout=Layout.load(str(p)), check=False)
    tulips = [t for t in range(4 * PER_FLOWER, 5 * PER_FLOWER)]
    game.portfolios[0] = [[], [], [], [], tulips[:12]]
    game.exchange = tulips[12:18]
    game.begin_turn(game.g.state())
    assert GreedyPolicy(random.Random(1)).choose(game) == (FLUSH,)


def test_a_policy_that_stops_early_is_a_bug_not_a_stall():
    game = StalkGame(NAMES[:2], seed=1, policies=[Script([]), Script([])])
    with pytest.raises(ValueError, match="two basic actions"):
        game.play()


def test_layout_without_enough_seeding_spaces_is_refused(tmp_path):
    p = tmp_path / "small.json"
    p.write_text(json.dumps({"spaces": [[0, 0], [1, 0]], "butterfly": [[0, 0]]}))
    with pytest.raises(ValueError, match="Butterfly"):
        StalkGame(NAMES[:3], layout=Layout.load(str(p)))


@pytest.mark.slow
def test_greedy_beats_random():
    # Not a rule: a sanity check that the greedy policy plays with purpose.
    wins = 0
    for seed in range(30):
        game = play_game(NAMES[:2], seed, ("greedy", "random"), check=False)
        wins += game.result()["ranks"][0] == 1
    assert wins >= 20


# -- properties ---------------------------------------------------------------


@pytest.mark.slow
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 2**32),
    players=st.integers(2, 5),
    policies=st.lists(st.sampled_from(["random", "greedy"]), min_size=1, max_size=5),
    track=st.one_of(st.none(), st.integers(5, 60)),
)
def test_any_seeded_game_keeps_the_invariants(seed, players, policies, track):
    game = play_game(NAMES[:players], seed, tuple(policies), track_start=track, check=True)
    res = game.result()
    assert res["end_reason"] in ("crash", "bag")
    st_, lines = replay_matches(game)
    # values equal the market track per flower; every token in one place (cross_check)
    game.cross_check(st_)
    assert sum(st_["values"].values()) == len(game.market)
    assert all(v >= 0 for v in st_["tokens"].values())
    # one winner at least, ranks consistent with scores
    rows = res["final"]["players"]
    assert rows[0]["winner"] and rows[0]["rank"] == 1
    assert [r["score"] for r in rows] == sorted((r["score"] for r in rows), reverse=True)
    # undoing the portfolios gives back a game that is over but unscored
    g2 = engine_lite.Game()
    for line in lines[:-1]:
        g2.apply(json.loads(line))
    assert g2.state()["game_over"] and "final" not in g2.state()


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
        live = game.g.state()
        for key in ("values", "harvested", "bag", "end_triggered", "game_over"):
            assert state[key] == live[key], key
        assert state["final"] == game.final


def test_extra_actions_cost_a_token_as_the_engine_says():
    # "A player MUST do 2 Basic Actions during this phase of their turn" and
    # "Extra Actions (1 token per action)": the full engine asks engine_lite's
    # table (cost / refused / turn_done), so its answers follow the engine's.
    game = StalkGame(NAMES[:3], seed=2, check=True)
    game.begin_turn(game.g.state())
    tokens = game.tokens_left
    assert tokens > 0
    for _ in range(tables.BASIC_ACTIONS):
        assert game.action_cost() == 0 and game.may_act() and not game.may_end()
        game.do_swap(*game.legal_swaps()[0])
    assert game.action_cost() == 1 and game.may_end() and game.stats["extra"] == 0
    while game.tokens_left:
        assert game.may_act()
        game.do_swap(*game.legal_swaps()[0])
    assert game.stats["extra"] == tokens and game.g.state()["tokens"]["Ann"] == 0
    assert not game.may_act() and not game.may_flush()  # no token: no extra action, no flush
    assert game.g.table.refused(engine_lite.record.OP_SWAP) == engine_lite.errors.NO_TOKENS

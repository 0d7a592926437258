"""engine_lite answers "what is legal now, and what does it cost" (Game.legal,
and the table's refused() and cost()): the board's refusals and the ring's hints ask it
instead of re-deriving a rule. Each rule is the one apply() enforces, so the
answer before an event and the refusal of the event always agree."""

from hypothesis import given, settings, strategies as st

from engine_lite import EngineError, Game
from engine_lite import errors
from engine_lite import record

NAMES = ["Ann", "Bo", "Cy"]


def stalk(n=3):
    g = Game()
    g.apply({"ev": "start", "game": "stalk-exchange", "players": NAMES[:n]})
    return g


def orchids(n=3):
    g = Game()
    g.apply({"ev": "start", "game": "oh-my-orchids", "players": NAMES[:n]})
    return g


def play(g, *evs):
    for ev in evs:
        g.apply({"ev": ev} if isinstance(ev, str) else ev)


def test_extra_actions_cost_one_token_each():
    """"Extra Actions (1 token per action)": after the 2 Basic Actions a plant
    or a swap costs a Seedy Business token; before them it is free."""
    g = stalk()
    assert g.table.cost(record.OP_PLANT) == 0 and g.table.cost(record.OP_SWAP) == 0
    play(g, "plant", "swap")
    assert g.table.cost(record.OP_PLANT) == 1 and g.table.cost(record.OP_SWAP) == 1
    tokens = g.table.tokens[0]
    play(g, "plant")
    assert g.table.tokens[0] == tokens - g.table.cost(record.OP_PLANT)


def test_flush_costs_a_token_and_is_once_per_game():
    """"A player may spend a Seedy Business token to move all Flowers ... A
    player may only do the Flush the Exchange action once per game."""
    g = stalk()
    assert g.table.cost(record.OP_FLUSH) == 1 and g.legal(record.OP_FLUSH)
    play(g, "flush")
    assert g.table.refused(record.OP_FLUSH) == errors.FLUSH_USED and not g.legal(record.OP_FLUSH)


def test_no_token_left_no_extra_action():
    """"you can't get more during the game": with no token left an extra
    action is refused (no_tokens), a basic action is still legal."""
    g = stalk(2)
    play(g, "plant", "swap", "swap", "swap", "swap")  # 3 tokens spent (2 players: 3 each)
    assert g.table.tokens[0] == 0
    assert g.table.refused(record.OP_SWAP) == errors.NO_TOKENS and g.table.refused(record.OP_PLANT) == errors.NO_TOKENS


def test_turn_done_after_two_basic_actions_then_harvest_and_end_are_legal():
    """"A player MUST do 2 Basic Actions": harvesting and ending the turn
    become legal only then (an early end is the players' ruling R3)."""
    g = stalk()
    assert g.table.refused(record.OP_HARVEST) == errors.TURN_INCOMPLETE and g.table.refused(record.OP_END_TURN) == errors.TURN_INCOMPLETE
    assert g.legal(record.OP_END_TURN, early=True) and g.legal(record.OP_STUCK)
    play(g, "plant", "plant")
    assert g.legal(record.OP_HARVEST) and g.legal(record.OP_END_TURN)
    play(g, {"ev": "harvest", "flower": "tulip", "count": 1})
    assert g.table.refused(record.OP_PLANT) == errors.UPKEEP  # the action phase closed with the first harvest


def test_orchids_take_over_the_hand_limit_costs_the_excess():
    """"If a player has more than 7 Seed cards, they must immediately compost
    the excess": cost(take k) is what a take of k would compost."""
    g = orchids()
    assert g.table.cost(record.OP_TAKE, 5) == 0
    play(g, {"ev": "take", "seeds": 5}, "end_turn", {"ev": "take", "seeds": 5}, "end_turn")
    play(g, {"ev": "take", "seeds": 5}, "end_turn")  # seat 3 (2 cards) now holds 7
    assert g.table.hand[0] == 5
    assert g.table.cost(record.OP_TAKE, 4) == 2 and g.table.cost(record.OP_SOW, 3) == 3
    composted = g.table.composted[0]
    play(g, {"ev": "take", "seeds": 4})
    assert g.table.hand[0] == 7 and g.table.composted[0] == composted + 2


def test_orchids_one_take_or_plants_per_turn():
    """R9: a turn takes once, or plants (docs/rulings.md); a turn that did
    neither cannot end."""
    g = orchids()
    assert g.table.refused(record.OP_END_TURN) == errors.TURN_INCOMPLETE
    play(g, {"ev": "take", "seeds": 1})
    assert g.table.refused(record.OP_TAKE) == errors.MIXED_TURN and g.table.refused(record.OP_SOW) == errors.MIXED_TURN
    assert g.legal(record.OP_END_TURN)


STALK_OPS = (record.OP_PLANT, record.OP_SWAP, record.OP_FLUSH, record.OP_STUCK, record.OP_CRASH, record.OP_END_TURN)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from(STALK_OPS + (record.OP_HARVEST,)), max_size=60))
def test_legal_agrees_with_what_apply_refuses(ops):
    """One rule, one place: refused(op) is exactly the code apply raises for
    that op (a harvest of one token that exists in the garden)."""
    g = stalk()
    for op in ops:
        rec = bytes((record.OP_HARVEST, 4, 1)) if op == record.OP_HARVEST else bytes((op,))
        want = g.table.refused(op)
        try:
            g.apply_record(rec)
            got = None
        except EngineError as err:
            got = err.code
        if op == record.OP_HARVEST and want is None and got == errors.TOO_MANY:
            continue  # what the record carries: the garden is judged by apply
        assert got == want, (op, got, want)

"""The Stalk Exchange garden rules (host/fullrules/garden.py) on small hand-drawn boards.

Drawing key: `.` empty space, D F G S T bloomed dahlia / daffodil /
globemaster / snowdrop / tulip, lower case = the same as a bulb; blanks are
not spaces (the border). Rows sit on a hex grid: a cell touches its left and
right neighbours and the two above and two below it.
"""

import json

import pytest
from hypothesis import given, settings, strategies as st

from host.fullrules.garden import BULB, EMPTY, FLOWERS, Garden, Layout, LayoutError, default_layout

TULIP = FLOWERS.index("tulip")
SNOWDROP = FLOWERS.index("snowdrop")


def harvested(board):
    g = Garden.from_drawing(board)
    got = g.harvest()
    return g, {FLOWERS[f]: len(got[f]) for f in range(5) if got[f]}


def test_single_flower_surrounded_by_different_types_is_harvested():
    # "If a Flower token or a Flower group is surrounded on all sides by
    # different Flower types, Bulbs, and/or the borders of the Garden, they
    # MUST be harvested"
    g, got = harvested(
        """
 . D D .
. F S G .
 . T T .
"""
    )
    assert got == {"snowdrop": 1}
    assert g.drawing() == " . D D .\n. F . G .\n . T T ."


def test_group_with_one_empty_neighbour_is_not_harvested():
    # "The whole group must be surrounded ... before the group is harvested"
    g, got = harvested(
        """
 D D D
D T T D
 D T .
"""
    )
    assert got == {}  # the tulip group touches the empty space


def test_whole_group_is_harvested_and_surrounding_types_need_not_match():
    # "The surrounding tokens do not need to match each other."
    g, got = harvested(
        """
 D F G
S T T D
 G T F
  S D
"""
    )
    assert got["tulip"] == 3


def test_border_counts_as_surrounding():
    g, got = harvested(
        """
T D
 D .
"""
    )
    assert got == {"tulip": 1}


def test_bulbs_are_obstacles_even_of_the_same_type():
    # "While a Flower token is flipped to its Bulb side, it's an obstruction
    # to all Flower tokens regardless of what kind of Flower it will be"
    g, got = harvested(
        """
 t t .
t T t .
 t t .
"""
    )
    assert got == {"tulip": 1}
    assert g.bulbs.bit_count() == 6  # "Bulbs are never harvested"


def test_harvest_is_simultaneous():
    # Two groups that hold each other in: taken one after the other, the
    # first removal would free the second. "ALL the surrounded Flowers are
    # removed from the Garden at the same time."
    g, got = harvested(
        """
T S
 S T
"""
    )
    assert got == {"tulip": 2, "snowdrop": 2}
    assert g.counts() == (0, 0, 4)


def test_planted_bulb_is_never_harvested_the_same_turn_and_blooms_after():
    # "If Bulbs are planted into a situation that triggers the harvest of
    # another group of the same Flower type, the newly planted Bulbs can only
    # bloom AFTER the harvest is complete"
    g = Garden.from_drawing(
        """
 d d d
d T . d
 d d d
"""
    )
    space = g.empty_spaces()[0]
    g.plant(space, TULIP)
    got = g.harvest()
    assert [len(x) for x in got] == [0, 0, 0, 0, 1]  # the old tulip only
    assert g.cells[space] == (TULIP + 1) | BULB
    assert g.bloom() == 6  # the new tulip and the five dahlia bulbs around the emptied space
    assert g.drawing() == " D D d\nD . T d\n D D d"


def test_bloom_needs_an_empty_neighbour():
    # "Flip over all Bulbs with at least one empty hexagon space around them."
    g = Garden.from_drawing(
        """
 D D D .
D t D s
 D D D .
"""
    )
    assert g.bloom() == 1
    assert g.drawing() == " D D D .\nD t D S\n D D D ."


def test_bloom_after_harvest_uses_the_spaces_the_harvest_emptied():
    g = Garden.from_drawing(
        """
 d d
d S t
 d d
"""
    )
    got = g.harvest()
    assert len(got[SNOWDROP]) == 1
    assert g.bloom() == 6
    assert g.drawing() == " D D\nD . T\n D D"


def test_a_freshly_bloomed_flower_joins_its_group():
    g = Garden.from_drawing(
        """
 T t .
"""
    )
    g.bloom()
    (group,) = [x for x in g.groups() if x[0] == TULIP]
    assert len(group[1]) == 2 and len(group[2]) == 1


def test_plant_refuses_an_occupied_space():
    g = Garden.from_drawing("T .")
    with pytest.raises(ValueError):
        g.plant(0, TULIP)
    g.plant(1, TULIP)
    assert g.drawing() == "T t"


def test_drawing_round_trips():
    art = " . D t\nF . S G\n T g ."
    assert Garden.from_drawing(art).drawing() == art


def test_drawing_rejects_off_grid_and_unknown_cells():
    with pytest.raises(LayoutError):
        Garden.from_drawing("T  T")  # column 3 is off the grid of row 0
    with pytest.raises(LayoutError):
        Garden.from_drawing("T X")


def test_default_layout_is_the_documented_approximation():
    L = default_layout()
    assert len(L) == 37
    assert len(L.bee) == 9 and len(L.butterfly) == 6  # setup step 6
    assert not set(L.bee) & set(L.butterfly)
    # a regular hexagon: 6 corners with 3 neighbours, the centre with 6
    degrees = sorted(len(n) for n in L.neighbours)
    assert degrees.count(3) == 6 and degrees.count(6) == 19


def test_a_layout_file_can_be_swapped_in(tmp_path):
    p = tmp_path / "tiny.json"
    p.write_text(json.dumps({"name": "tiny", "spaces": [[0, 0], [1, 0], [0, 1]], "bee": [[0, 0]], "butterfly": [[1, 0]]}))
    L = Layout.load(str(p))
    assert (L.name, len(L), L.bee, L.butterfly) == ("tiny", 3, (0,), (1,))
    assert all(len(n) == 2 for n in L.neighbours)


@pytest.mark.parametrize(
    "data, message",
    [
        ({"spaces": [[0, 0], [0, 0]]}, "twice"),
        ({"spaces": [[0, 0], [5, 5]]}, "connected"),
        ({"spaces": [[0, 0]], "bee": [[1, 1]]}, "not on the board"),
        ({"nothing": 1}, "needs"),
    ],
)
def test_bad_layouts_are_refused_with_one_line(tmp_path, data, message):
    p = tmp_path / "bad.json"
    p.write_text(json.dumps(data))
    with pytest.raises(LayoutError) as err:
        Layout.load(str(p))
    assert message in str(err.value) and "\n" not in str(err.value)


# -- the bitboard rules agree with a plain reading of the rulebook ------------


def naive_harvest(layout, cells):
    """Upkeep step 1 written the slow, obvious way: breadth-first groups over
    neighbour lists, a group is harvested when no member touches an empty space."""
    gone = set()
    seen = set()
    for i, c in enumerate(cells):
        if c == EMPTY or c & BULB or i in seen:
            continue
        group = {i}
        todo = [i]
        while todo:
            for j in layout.neighbours[todo.pop()]:
                if cells[j] == c and j not in group:
                    group.add(j)
                    todo.append(j)
        seen |= group
        if not any(cells[j] == EMPTY for k in group for j in layout.neighbours[k]):
            gone |= group
    return gone


CODES = [EMPTY] * 4 + [f + 1 for f in range(5)] + [(f + 1) | BULB for f in range(5)]


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(CODES), min_size=37, max_size=37))
def test_bitboard_harvest_and_bloom_match_the_naive_rules(codes):
    g = Garden()
    g.cells = list(codes)
    g._sync()
    expect_gone = naive_harvest(g.layout, codes)
    got = g.harvest()
    removed = sorted(i for f in got for i in f)
    assert removed == sorted(expect_gone)
    after = list(codes)
    for i in expect_gone:
        after[i] = EMPTY
    expect_bloom = [i for i, c in enumerate(after) if c & BULB and any(after[j] == EMPTY for j in g.layout.neighbours[i])]
    assert g.bloom() == len(expect_bloom)
    for i in expect_bloom:
        after[i] &= 7
    assert g.cells == after
    b, u, e = g.counts()
    assert e == after.count(EMPTY) and b + u + e == 37


def naive_groups(layout, cells):
    out = set()
    seen = set()
    for i, c in enumerate(cells):
        if c == EMPTY or c & BULB or i in seen:
            continue
        group = {i}
        todo = [i]
        while todo:
            for j in layout.neighbours[todo.pop()]:
                if cells[j] == c and j not in group:
                    group.add(j)
                    todo.append(j)
        seen |= group
        frontier = {j for k in group for j in layout.neighbours[k] if cells[j] == EMPTY}
        out.add((c - 1, frozenset(group), frozenset(frontier)))
    return out


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from(CODES), min_size=37, max_size=37), st.lists(st.integers(0, 36), max_size=6))
def test_groups_and_their_frontiers_stay_right_while_bulbs_are_planted(codes, plants):
    # group_masks() caches the flood fills until a flower blooms or leaves;
    # plants in between must still show up in the frontiers.
    g = Garden()
    g.cells = list(codes)
    g._sync()
    for space in plants:
        got = {(f, frozenset(m), frozenset(fr)) for f, m, fr in g.groups()}
        assert got == naive_groups(g.layout, g.cells)
        if g.cells[space] == EMPTY:
            g.plant(space, TULIP)
    g.harvest()
    g.bloom()
    assert {(f, frozenset(m), frozenset(fr)) for f, m, fr in g.groups()} == naive_groups(g.layout, g.cells)

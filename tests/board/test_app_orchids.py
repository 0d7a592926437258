"""A whole game of Oh My. Orchids! played by button presses on the simulated
board, with composting ("If a player has more than 7 Seed cards, they must
immediately compost the excess"), several plants in one turn, undos, refused
events and the last round ("All other players now have one last turn, but
they can only take the 'Plant Flowers' action").

Gestures (docs/controls.md): flower k = take k seed cards; OK = plant, then
the kind (dahlia = a flora of a type this player has not planted yet,
daffodil = a flora type the player already has, OK = orchid), the points
and the seed cards paid (flower k adds k, held subtracts k, OK next); hold
OK = end turn or pass. The board names plants itself: every orchid distinct
("Orchid 3"), each new flora type of a player a name of its own ("Flora 2"),
a repeated type a name the player already has, so the variety bonus counts
right (ruling R7).
"""

import pytest

from engine_lite.tables import FLOWERS
from firmware import ring
from tests.kit.app_helpers import Board, lit, reddish, replay

NAMES = ["Lily", "Calla", "Iris"]


def number(n):
    """Presses that enter n from 0 (tulips add 5, then the rest)."""
    out = ["tulip"] * (n // 5)
    if n % 5:
        out.append(FLOWERS[n % 5 - 1])
    return "\n".join(out)


class Table:
    """Presses and the events a scorekeeper would write, side by side."""

    def __init__(self, board):
        self.b = board
        self.events = [{"ev": "start", "game": "oh-my-orchids", "players": NAMES}]
        self.orchids = 0
        self.flora = {}  # player -> {flora type in the test: name the board gave it}

    def take(self, k):
        self.b.do(FLOWERS[k - 1] + "\nlong ok")
        self.events += [{"ev": "take", "seeds": k}, {"ev": "end_turn"}]

    def plant(self, points, seeds, flora=None):
        mine = self.flora.setdefault(self.b.state["current_player"], {})
        kind = "ok" if flora is None else ("daffodil" if flora in mine else "dahlia")  # dahlia: a new type
        self.b.do("ok\n%s\n%s\nok\n%s\nok" % (kind, number(points), number(seeds)))
        if flora is None:
            self.orchids += 1
            name, k = "Orchid %d" % self.orchids, "orchid"
        else:
            if flora not in mine:
                mine[flora] = "Flora %d" % (len(mine) + 1)
                name = mine[flora]
            else:  # the board names a repeat after the player's first flora
                name = next(iter(mine.values()))
            k = "flora"
        self.events.append({"ev": "plant", "name": name, "kind": k, "points": points, "seeds": seeds})

    def end(self):
        self.b.do("long ok")
        self.events.append({"ev": "end_turn"})

    def check(self):
        assert self.b.state == replay(self.events)


def test_full_orchids_game_by_buttons():
    b = Board(settings={"names": NAMES, "brightness": 255})
    b.do("daffodil\nok\nglobemaster\nok")  # Oh My. Orchids!, 3 players
    t = Table(b)
    assert b.screen == "orchids"
    t.check()
    assert [p["hand"] for p in b.state["players"].values()] == [0, 1, 2]
    # round 1: everyone takes seeds
    t.take(5)
    t.take(5)
    t.take(5)
    t.check()
    # round 2: Lily takes 4 with 5 in hand: 9 > 7, two are composted
    t.take(4)
    assert b.state["players"]["Lily"]["hand"] == 7 and b.state["players"]["Lily"]["composted"] == 2
    # Calla plants an orchid and a flora in one turn; a take after planting is refused
    t.plant(5, 3)
    t.plant(2, 2, flora="tulip")
    before = b.state
    b.do("dahlia")
    assert b.state == before and all(reddish(b.px(i)) for i in range(24))
    t.end()
    # Iris: a plant she cannot pay is refused on the seed screen; she fixes the cost
    b.do("ok\nok\n%s\nok\n%s\nok" % (number(9), number(8)))
    assert b.screen == "plant_seeds" and b.state == replay(t.events)
    b.do("long snowdrop\nundo x3")  # -4, then take every press back: 0 seeds
    assert b.app.plant.number.values[0] == 0
    b.do("%s\nok" % number(6))
    t.orchids += 1
    t.events.append({"ev": "plant", "name": "Orchid 2", "kind": "orchid", "points": 9, "seeds": 6})
    t.end()
    t.check()
    # Lily plants seven flowers at 1 seed each, with an undo in the middle
    t.plant(4, 1)
    t.plant(6, 1)
    t.plant(2, 1, flora="tulip")
    b.do("undo")  # undo the last plant ...
    t.events.append({"ev": "undo"})
    del t.flora["Lily"]["tulip"]
    t.plant(2, 1, flora="tulip")  # ... and plant it again
    t.plant(2, 1, flora="tulip")  # a second copy of the same flora
    t.plant(1, 1, flora="daffodil")
    t.plant(3, 1, flora="snowdrop")
    t.plant(7, 1)
    t.check()
    # Lily's sector: 7 flowers = 3.5 px, gold
    fr = b.frame(0)
    assert [fr[i][2] < fr[i][1] and lit(fr[i]) for i in range(4)] == [True] * 4
    assert fr[3][0] < fr[2][0]  # the half pixel is dimmer
    t.end()
    s = b.state
    assert s["last_round"] is True and not s["game_over"]
    # the last round: red gap pixels and the comet
    assert reddish(b.frame(0)[4]) and reddish(b.frame(0)[9])
    # Calla may only plant: a take is refused; she passes
    before = b.state
    b.do("tulip")
    assert b.state == before
    t.end()
    # Iris plants a flora and ends: the game is over, scores straight away
    t.plant(1, 1, flora="dahlia")
    t.end()
    s = b.state
    assert s["game_over"] and b.screen == "results"
    t.check()
    lily = [p for p in s["final"]["players"] if p["name"] == "Lily"][0]
    # 25 flower points; Orchid 3/4/5 + Flora 1/2/3 (tulip, daffodil, snowdrop) = 6 types: +10; -2 composted
    assert lily["flower_points"] == 25 and lily["variety_bonus"] == 10 and lily["composted"] == 2
    assert lily["score"] == 33 and lily["winner"]
    assert b.app.view.mode == ring.M_ORCHIDS_END
    p = b.frame(200)[0]
    assert p[0] > p[2] and p[1] > p[2]  # the winner's sector glows gold
    # undo from the results reopens the game; OK then starts the next one
    b.do("undo")
    t.events.append({"ev": "undo"})
    assert b.screen == "orchids" and not b.state["game_over"]
    t.end()
    b.do("ok")
    assert b.screen == "setup_game" and b.app.last_game.state() == replay(t.events)


def test_plant_entry_backs_out_step_by_step():
    b = Board()
    b.do("daffodil\nok\nok")  # Oh My. Orchids!, 3 players (the default count)
    assert b.screen == "orchids" and len(b.state["players"]) == 3
    b.do("ok\ndaffodil")  # a flora type already planted: this player has none
    assert b.screen == "plant_kind" and b.app.view.error_code == ring.E_RULE
    b.do("tulip")  # not an option
    assert b.screen == "plant_kind" and b.app.view.error_code == ring.E_NOTHING
    b.do("dahlia")
    assert b.screen == "plant_points"
    b.do("tulip\nundo\nundo")  # take back the 5, then back to the kind
    assert b.screen == "plant_kind"
    b.do("undo")
    assert b.screen == "orchids"
    b.do("ok\nok\nglobemaster\nok\nundo")
    assert b.screen == "plant_points" and b.app.plant.number.values[0] == 3
    b.do("long menu")  # MENU cancels the whole entry
    assert b.screen == "orchids" and b.state["players"]["Seat 1"]["flowers"] == []


@pytest.mark.parametrize("names, players", [
    (["Ann", "Bo", "Cy", "Di"], ["Ann", "Bo", "Cy"]),  # the first n of the host's names
    (["Ann", "Bo"], ["Ann", "Bo", "Seat 3"]),  # too few: they fill the first seats
    (["Seat 3"], ["Seat 1", "Seat 2", "Seat 3"]),  # a name a default seat would repeat: seats by number
    (["Ann", "Ann", "Cy"], ["Seat 1", "Seat 2", "Seat 3"]),  # repeated: the engine refuses them
    (["Ann", " Bo", "Cy"], ["Seat 1", "Seat 2", "Seat 3"]),  # not a valid name
    ("Ann", ["Seat 1", "Seat 2", "Seat 3"]),  # not a list (a damaged settings file)
])
def test_a_game_starts_with_the_hosts_names_or_seats_by_number(names, players):
    """The start takes the settings' names for the first seats ("Seat k" for
    the others) when the engine accepts them
    (checked once, by encode_start); names that do not fit the table never
    keep a game from starting."""
    b = Board(settings={"names": names})
    b.do("daffodil\nok\nok")  # Oh My. Orchids!, 3 players (the default)
    assert b.screen == "orchids" and list(b.state["players"]) == players


def test_display_bound_the_board_refuses_a_fourth_orchid_in_one_turn():
    """Ruling R14: "the Orchid and Flora display is replenished to 3 and 4
    face-up cards" only after the Plant Flowers action, so a turn plants at
    most 3 orchids: the fourth blinks "not enough" (3) and changes nothing;
    UNDO of the third makes room again."""
    b = Board()
    t = Table(b)
    b.do("daffodil\nok\nok")  # Oh My. Orchids!, 3 players
    t.events[0]["players"] = ["Seat 1", "Seat 2", "Seat 3"]
    for k in (5, 1, 1, 2, 1, 1):
        t.take(k)  # Seat 1 holds 7 Seed cards, and it is Seat 1's turn
    for _ in range(3):
        t.plant(1, 1)
    t.check()
    before = b.state
    b.do("ok\nok\n%s\nok\n%s\nok" % (number(1), number(1)))  # a fourth orchid
    assert b.app.view.error_code == ring.E_SHORT and b.state == before
    b.do("long menu")  # back to play; the display bound refused nothing else
    t.plant(2, 1, flora="tulip")  # the Flora display still has its 4 cards
    t.check()
    b.do("undo\nundo")  # the flora, then the third orchid
    t.events = t.events[:-2]
    t.orchids -= 1
    t.flora = {}
    t.plant(1, 1)  # a third orchid again
    t.check()

"""At the real table, by button scripts on the simulated board:
inputs that match the printed components (the start space from the Market
board, Seed cards, flora types beyond five) and a ring that can be read at a
glance (a flower's exact value, refusal blink codes).

Gestures under test (docs/controls.md): hold OK on the start-space screen =
confirm the number shown; hold a flower in Stalk Exchange play or on its
results = that flower's value for 2 s; Orchids plant kind: dahlia = a flora
type new to this player, daffodil = a type the player already has."""

from engine_lite.tables import TRACK_START_PLACEHOLDER, variety_bonus
from firmware import ring
from tests.kit.app_helpers import Board, lit, replay

STALK_3P = "ok\nglobemaster\nok"  # Stalk Exchange, 3 players -> the start-space screen


def _dashed(b):
    """The start space shows dashed (every other pixel dark) half of each second."""
    whole = b.frame(0)
    dashed = b.frame(500)
    return whole != dashed and not any(lit(dashed[i]) for i in range(1, 24, 2))


# -- the market-track start space ------------------------------------------------


def test_start_space_is_unconfirmed_until_the_players_confirm_it(board):
    """R1: the start space S is printed on the Market board and unknown to us;
    a placeholder must never pass for the printed number."""
    b = board
    b.do(STALK_3P)
    assert b.screen == "setup_track" and b.app.setup.track.values[0] == TRACK_START_PLACEHOLDER["3"]
    assert b.app.view.unconfirmed == 1 and _dashed(b)
    b.do("ok")  # a tap starts anyway: the record says placeholder, nothing remembered
    assert b.state["track_start_placeholder"] is True
    assert "track_start" not in b.app.game.events()[0]
    assert "3" not in b.store.settings()["track_start"]
    b.do("long menu\nsnowdrop\nok")  # abandon: back to setup
    b.do(STALK_3P)
    assert b.app.view.unconfirmed == 1  # still the placeholder
    b.do("long ok")  # hold OK: "this is the number printed on our Market board"
    assert b.state["track_start_placeholder"] is False
    assert b.app.game.events()[0]["track_start"] == TRACK_START_PLACEHOLDER["3"]
    assert b.store.settings()["track_start"]["3"] == TRACK_START_PLACEHOLDER["3"]
    b.do("long menu\nsnowdrop\nok")
    b.do(STALK_3P)
    assert b.app.view.unconfirmed == 0 and not _dashed(b)  # remembered as confirmed


def test_entering_the_printed_number_confirms_it(board):
    b = board
    b.do(STALK_3P + "\ntulip\ndaffodil")  # +5 +2
    assert b.app.view.unconfirmed == 0 and not _dashed(b)
    b.do("ok")
    want = TRACK_START_PLACEHOLDER["3"] + 7
    assert b.state["track_start"] == want and b.state["track_start_placeholder"] is False
    assert b.state == replay([{"ev": "start", "game": "stalk-exchange", "players": ["Seat 1", "Seat 2", "Seat 3"],
                               "track_start": want}])


def test_a_start_space_from_the_host_counts_as_confirmed():
    b = Board(settings={"track_start": {"4": 19}})
    b.do("ok\nsnowdrop\nok")
    assert b.app.setup.track.values[0] == 19 and b.app.view.unconfirmed == 0
    b.do("ok")
    assert b.state["track_start"] == 19 and b.state["track_start_placeholder"] is False


# -- a flower's exact value ---------------------------------------------------------


def test_holding_a_flower_shows_its_market_value(board):
    b = board
    b.do(STALK_3P + "\nlong ok")
    b.do("ok\nok\nglobemaster x3\nok\nlong ok")  # seat 1 harvests 3 globemasters
    assert b.state["values"]["globemaster"] == 3
    b.do("long globemaster")
    assert b.app.view.peek == 2
    fr = b.frame()
    assert [lit(p) for p in fr] == [True] * 3 + [False] * 21  # the value, 3, as a number
    assert b.state["values"]["globemaster"] == 3 and b.app.harvest.flower == -1  # nothing else happened
    b.do("long daffodil")
    assert b.app.view.peek == 1 and not any(lit(p) for p in b.frame()[1:])  # 0: one dim pixel
    b.do("ok")  # any press ends it (and plants)
    assert b.app.view.peek == -1 and b.state["actions"] == 1


def test_results_show_final_values_after_the_bust(board):
    """"The highest valued flower loses half of its value rounded-up"."""
    b = board
    b.do(STALK_3P + "\nlong ok")
    b.do("ok\nok\ntulip x4\nok\nlong menu\ndaffodil\nlong ok")  # tulip 4, then a declared crash
    for _ in range(3):
        b.do("tulip\ndahlia x4\ndaffodil x4\nglobemaster x3\nok")  # 12 tokens each (3 players, rulings R6)
    assert b.screen == "results"
    fin = b.state["final"]
    assert fin["busted"] == ["tulip"] and fin["values"]["tulip"] == 2
    assert b.app.view.values[4] == 2 and b.app.view.busted[4] == 1
    b.do("long tulip")
    assert [lit(p) for p in b.frame()] == [True] * 2 + [False] * 22


# -- refusal blink codes ------------------------------------------------------------


def test_each_refusal_blinks_its_reason(board):
    b = board
    b.do(STALK_3P + "\nlong ok")
    b.do("tulip")  # harvest before the two basic actions
    assert b.app.view.error_code == ring.E_RULE
    b.do("long menu\ndahlia\nlong menu\ndahlia")  # flush (a basic action), then a second flush
    assert b.state["flush_used"]["Seat 1"] and b.app.view.error_code == ring.E_ONCE
    b.do("ok\nok\nok\nok")  # the second basic action + 3 extra plants: the 3 tokens are gone
    assert b.state["tokens"]["Seat 1"] == 0
    b.do("ok")
    assert b.app.view.error_code == ring.E_SHORT  # no Seedy Business token
    b.do("long dahlia\nlong tulip")  # peeks are not refusals
    assert b.app.view.error_code == ring.E_SHORT


def test_orchids_second_take_and_a_held_flower(board):
    b = board
    b.do("daffodil\nok\nok")  # Oh My. Orchids!, 3 players
    b.do("tulip\ntulip")  # a second take in one turn
    assert b.app.view.error_code == ring.E_RULE and b.state["players"]["Seat 1"]["hand"] == 5
    b.do("long tulip")  # a held flower means nothing in Orchids
    assert b.app.view.error_code == ring.E_NOTHING


# -- flora types: never undercounted ---------------------------------------------


def test_flora_types_beyond_five_buttons_count_for_variety(board):
    """"Variety bonus score for having planted different unique flower types":
    seven different flora types = 15, which five type buttons could not tell."""
    b = board
    b.do("daffodil\nok\ndaffodil\nok")  # Orchids, 2 players
    b.do("tulip\nlong ok\ndahlia\nlong ok")  # Seat 1: 5 cards; Seat 2: 1
    b.do("snowdrop\nlong ok\ndahlia\nlong ok")  # Seat 1: 7 cards (2 composted)
    for k in range(7):  # seven flora of seven different types, 1 point, 1 Seed card each
        if k == 4:  # the Flora display holds 4 cards (ruling R14): the next three in the next turn
            b.do("long ok\ndahlia\nlong ok")  # Seat 2 takes 1
        b.do("ok\ndahlia\ndahlia\nok\ndahlia\nok")
    b.do("ok\ndaffodil\ndahlia\nok\ndahlia\nok")  # an 8th costs 1 Seed card: none left
    assert b.screen == "plant_seeds" and b.app.view.error_code == ring.E_SHORT
    b.do("long menu")
    b.do("long ok\nlong ok")  # last round: Seat 2 passes, the game is over
    me = [p for p in b.state["final"]["players"] if p["name"] == "Seat 1"][0]
    assert me["variety_bonus"] == variety_bonus(7) == 15
    names = [f["name"] for f in b.state["players"]["Seat 1"]["flowers"]]
    assert len(set(names)) == 7


def test_a_repeated_flora_type_adds_no_variety(board):
    b = board
    b.do("daffodil\nok\ndaffodil\nok\ntulip\nlong ok\ndahlia\nlong ok")
    b.do("ok\ndahlia\ndahlia\nok\ndahlia\nok")  # a new type
    b.do("ok\ndaffodil\ndahlia\nok\ndahlia\nok")  # the same type again
    flowers = b.state["players"]["Seat 1"]["flowers"]
    assert [f["kind"] for f in flowers] == ["flora", "flora"] and flowers[0]["name"] == flowers[1]["name"]


def test_default_brightness_is_a_menu_level(board):
    b = board
    assert b.app.view.brightness == 48
    b.do("long menu\nglobemaster")
    assert b.screen == "brightness" and b.app.view.sel == 2  # level 3 of 5 = 48
    b.do("ok")
    assert b.app.view.brightness == 48

"""The simulator's words (boardkit/app_words.py) say what a player sees and
does: help lines that follow the phase, no firmware screen names, no stale
numbers, no crash countdown after the crash, basic and extra actions told
apart, and refusals that say what happened."""

import pytest

from boardkit import app_words
from engine_lite.tables import PORTFOLIO_SIZE
from host.board_sim.board import LONG, SHORT, SimBoard
from tests.kit.app_helpers import Board

SCREEN_NAMES = ("setup_game", "setup_players", "setup_length", "setup_track", "plant_kind", "plant_points",
                "plant_seeds", "confirm_new")


def words(b):
    return "\n".join(app_words.describe(b.app) + [app_words.hint(b.app), app_words.label(b.app)])


def test_no_firmware_screen_names_anywhere(board):
    b = board
    seen = []
    for script in ("", "ok", "daffodil", "ok", "", "long menu", "snowdrop", "undo", "ok", "long menu"):
        b.do(script) if script else None
        seen.append(words(b))
    b = Board()
    b.do("daffodil\nok\nok\nok")  # Orchids, plant: kind
    seen.append(words(b))
    b.do("dahlia")
    seen.append(words(b))
    b.do("ok")
    seen.append(words(b))
    text = "\n".join(seen)
    for name in SCREEN_NAMES:
        assert name not in text, name


def test_stalk_help_follows_the_phase(board):
    b = board
    b.do("ok\nglobemaster\nok\nok")
    assert "OK plant · MENU swap" in app_words.hint(b.app) and "harvest" not in app_words.hint(b.app)
    b.do("ok\nok")
    assert "extra plant/swap" in app_words.hint(b.app) and "flower = harvest +1" in app_words.hint(b.app)
    b.do("ok")  # an extra plant: 2 basic + 1 extra, never "3 basic actions"
    assert "2 basic actions done + 1 extra" in words(b) and "3 basic" not in words(b)
    b.do("tulip")
    assert app_words.hint(b.app).startswith("tulip again = +1")
    b.do("ok")
    assert app_words.hint(b.app).startswith("UPKEEP") and "UPKEEP (harvesting)" in words(b)


def test_no_crash_countdown_after_the_crash(board):
    b = board
    b.do("ok\nglobemaster\nok\nok")
    assert "crash: at least 14 more harvested tokens" in words(b)  # says what it counts
    b.do("long menu\ndaffodil")  # the crash the board could not see
    assert "crash: at least" not in words(b) and "LAST TURN (market crash)" in words(b)


def test_unconfirmed_start_space_is_said_in_words(board):
    b = board
    b.do("ok\nglobemaster\nok")
    assert "UNCONFIRMED" in words(b) and "Market board" in words(b)
    b.do("ok")
    assert "placeholder" not in words(b) and "26" not in words(b)  # said once, at setup: not for the whole game
    b = Board(settings={"track_start": {"3": 30}})
    b.do("ok\nglobemaster\nok")
    assert "UNCONFIRMED" not in words(b)
    b.do("ok")
    assert "placeholder" not in words(b)


def test_orchids_words_count_seed_cards_and_show_no_stale_entry(board):
    b = board
    b.do("ok\nglobemaster\nok\ntulip\nok")  # the start-space entry showed 31 ...
    b.do("long menu\nsnowdrop\nok")  # ... that game abandoned (menu: new game, confirm)
    assert b.app.setup.track.values[0] == 31
    b.do("daffodil\nok\nok")  # Orchids, 3 players
    assert "Seed CARDS" in app_words.hint(b.app)
    b.do("ok")
    assert "31" not in words(b) and "start space" not in words(b)  # the kind screen: no number
    b.do("dahlia\ntulip\nok\ndaffodil")
    assert "Seed cards discarded: 2" in words(b) and "Seed CARDS, not seeds" in app_words.hint(b.app)


def test_orchids_last_round_help(board):
    b = board
    b.do("daffodil\nok\ndaffodil\nok")  # 2 players
    b.do("tulip\nlong ok\ndahlia\nlong ok\ndaffodil\nlong ok\ndahlia\nlong ok")  # Seat 1: 7 cards
    for k in range(7):
        if k in (3, 6):  # the Orchid display holds 3 cards (ruling R14): Seat 2 takes 1 meanwhile
            b.do("long ok\ndahlia\nlong ok")
        b.do("ok\nok\ndahlia\nok\ndahlia\nok")
    b.do("long ok")
    assert "LAST ROUND" in app_words.hint(b.app) and "plant only" in app_words.hint(b.app)


def test_results_words_show_final_values_and_the_bust(board):
    b = board
    b.do("ok\nglobemaster\nok\nok\nok\nok\ntulip x4\nok\nlong menu\ndaffodil\nlong ok")
    b.do("tulip\ndahlia x4\ndaffodil x4\nglobemaster x3\nok\n" * 3)  # 3 players: 12 tokens each (rulings R6)
    text = words(b)
    assert "final values (after the bust): dahlia 0, daffodil 0, globemaster 0, snowdrop 0, tulip 2" in text
    assert "busted: tulip (4 -> 2)" in text
    # each score with its sum (count x final value, in flower order) and the tie-break (ruling R2)
    assert "#1 Seat 2 2  WINNER = 4x0 + 4x0 + 3x0 + 0x0 + 1x2" in text
    assert "tie-break: shares rank 1 with Seat 1 and Seat 3: 2 points each and the same count at every tier" in text


def test_app_refusals_say_what_happened(board):
    b = board
    b.do("ok\nglobemaster\nok\nok\ntulip")  # a flower before the two basic actions
    assert app_words.refusal(b.app, b.app.view.error_code) == (
        "harvest comes in the upkeep, after the turn's two basic actions (2 red blinks)")
    b.do("long menu\nsnowdrop\nok\ndaffodil\nok\nok\nok\ndaffodil")  # Orchids: plant, "a type they have"
    assert "planted no flora yet" in app_words.refusal(b.app, b.app.view.error_code)


def test_the_player_to_play_shows_the_seat_only_when_the_name_does_not(board):
    b = board
    b.do("daffodil\nok\nok")  # Orchids, 3 players, no names pushed: "Seat 1".."Seat 3"
    assert "Oh My. Orchids!, turn 1: Seat 1" in words(b) and "(seat" not in words(b)
    b = Board(settings={"names": ["Ann", "Bo"]})
    b.do("daffodil\nok\nok")  # the host's names fill the first two seats
    assert "Oh My. Orchids!, turn 1: Ann (seat 1)" in words(b)
    b.do("tulip\nlong ok\ntulip\nlong ok")
    assert "turn 3: Seat 3\n" in words(b) + "\n" and "Seat 3 (seat 3)" not in words(b)


def test_counts_are_singular_for_one(board):
    b = board
    b.do("daffodil\nok\ndaffodil\nok")  # Orchids, 2 players: Seat 2 starts with 1 Seed card
    assert "Seat 2: 0 flowers, 0 types, 1 Seed card, 0 composted" in words(b)
    b.do("dahlia\nlong ok\ndahlia\nlong ok\nok\ndahlia\ndahlia\nok\ndahlia\nok")  # Seat 1 plants a flora
    assert "Seat 1: 1 flower, 1 type, 0 Seed cards, 0 composted" in words(b)


def test_the_menu_says_each_item_and_which_one_is_chosen(board):
    b = board
    b.do("ok\nglobemaster\nok\nok\nlong menu")  # Stalk Exchange play: the menu has all five items
    text = app_words.describe(b.app)
    assert text[0].startswith("Menu:") and "> 5 close the menu" in text
    assert "  1 flush the Exchange: 1 token, once a game" in text
    assert "  2 crash: harvest met the top Stalk Value" in text
    b.do("menu")  # MENU moves the choice: flush
    text = app_words.describe(b.app)
    assert "> 1 flush the Exchange: 1 token, once a game" in text and "  5 close the menu" in text
    assert sum(line.startswith(">") for line in text) == 1


def test_a_held_flower_says_its_value_while_the_ring_shows_it(board):
    b = board
    b.do("ok\nglobemaster\nok\nok\nok\nok\ntulip x4\nok")  # tulip's Stalk Value is 4
    b.do("long tulip")
    assert "held: tulip, Stalk Value 4" in words(b)
    b.wait(2100)  # the ring shows it PEEK_MS: so do the words
    assert "held:" not in words(b)


def test_the_portfolio_screen_says_how_many_tokens_each_player_holds(board):
    b = board
    b.do("ok\nglobemaster\nok\nok\nok\nok\nlong menu\ndaffodil\nlong ok")  # 3 players: game over
    assert b.screen == "portfolio"
    assert "0 of 12 tokens (3 players: 12 each)" in words(b)
    b.do("tulip x3")
    assert "3 of 12 tokens" in words(b) and PORTFOLIO_SIZE[3] == 12


def _sim():
    """The simulator's own board (host/board_sim/board.py), its clock moved by the test."""
    now = [0]
    sb = SimBoard(link=False, clock=lambda: now[0]).start()

    def keys(*presses):
        for button, kind in presses:
            sb.press(button, kind)
            while sb.busy():
                now[0] += 5
                sb.tick()
            for _ in range(20):
                now[0] += 5
                sb.tick()
    return sb, keys


OK, MENU = 6, 7


@pytest.mark.parametrize(
    "setup, refused, said, code",
    [
        # Stalk Exchange, 3 players, game over at once; 1 dahlia token entered, OK
        ([(0, SHORT), (OK, SHORT), (2, SHORT), (OK, SHORT), (OK, SHORT), (OK, SHORT), (OK, SHORT),
          (MENU, LONG), (1, SHORT), (OK, LONG), (0, SHORT)], [(OK, SHORT)],
         "Seat 1 entered 1 token, but with 3 players every portfolio holds exactly 12 (2 red blinks)", "portfolio_size"),
        # Stalk Exchange: end the turn early (hold OK = stuck, then end again before...)
        ([(0, SHORT), (OK, SHORT), (2, SHORT), (OK, SHORT), (OK, SHORT), (OK, SHORT)], [(MENU, LONG), (0, SHORT)] * 2,
         "Seat 1 has already flushed the Exchange (once a game)", "flush_used"),
        # Oh My. Orchids!, 2 players: Seat 1 plants an orchid of 1 point costing 1 Seed card with none in hand
        ([(1, SHORT), (OK, SHORT), (1, SHORT), (OK, SHORT)], [(OK, SHORT), (OK, SHORT), (0, SHORT), (OK, SHORT), (0, SHORT), (OK, SHORT)],
         "Seat 1 has 0 Seed cards: that flower costs 1", "hand_short"),
    ],
)
def test_refusals_read_as_a_player_says_them_without_the_code(setup, refused, said, code):
    sb, keys = _sim()
    try:
        keys(*setup)
        keys(*refused)
        err = sb.error_text()
        assert said in err, err
        assert "(%s)" % code not in err and "refused by the rules" not in err and "Flora 1" not in err
        assert sb.refusal_code == code  # kept for logs and tests, not on the player's line
    finally:
        sb.close()


def test_the_words_fit_the_simulator_panel_without_wrapping(board):
    """The panel beside the ring is 45 characters wide at 80x24: the menu,
    the crash line and the portfolio target each stay one line."""
    b = board
    b.do("ok\nglobemaster\nok\nok")
    lines = app_words.describe(b.app)
    b.do("long menu")
    lines += app_words.describe(b.app)
    b.do("undo\nok\nok\nlong menu\ndaffodil\nlong ok")
    lines += app_words.describe(b.app)
    for line in lines:
        if line.startswith(("crash:", ">", "  ", "Menu", "0 of")):
            assert len(line) <= 45, line

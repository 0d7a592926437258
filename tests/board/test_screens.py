"""The board UI as screen objects (firmware/screens.py) and the one number
entry with its own undo: each screen handles its gestures and
draws its view; App only routes gestures, keeps the screen stack and owns
game, flash and link; no module writes another's attributes, and screens
change each other only through the App's stack."""

import ast
import inspect

from engine_lite.vocab import B_OK, B_UNDO, B_MENU
from firmware import ring, screens
from firmware.buttons import SHORT, LONG
from firmware.screens import NumberEntry
from tests.kit.app_helpers import Board
from tests.kit.mpy_harness import REPO
from tests.kit.tablebot import orchids_game, stalk_game


# -- number entry ----------------------------------------------------------


def test_number_entry_stays_in_range_and_undoes_press_by_press():
    e = NumberEntry()
    e.start(10)
    assert e.add(0, 5, 12) is False and e.values[0] == 10  # 15 > 12: refused, unchanged
    assert e.add(0, 2, 12) and e.add(0, -4, 12) and e.values[0] == 8
    assert e.add(0, -9, 12) is False and e.values[0] == 8  # below 0: refused
    assert e.undo() and e.values[0] == 12  # -4 taken back
    assert e.undo() and e.values[0] == 10  # +2 taken back
    assert e.undo() is False and e.values[0] == 10  # nothing left: the start value stays


def test_number_entry_with_five_slots_is_a_portfolio():
    e = NumberEntry(5)
    e.start(0)
    for f in (0, 4, 4, 2):
        assert e.add(f, 1, 25)
    assert e.add(4, -1, 25) and tuple(e.values) == (1, 0, 1, 0, 1)
    assert e.undo() and tuple(e.values) == (1, 0, 1, 0, 2)
    assert e.undo() and e.undo() and tuple(e.values) == (1, 0, 0, 0, 1)
    e.start(0)
    assert tuple(e.values) == (0, 0, 0, 0, 0) and e.undo() is False  # a new entry forgets the old presses


def test_number_entry_history_is_bounded():
    """48 presses are remembered (preallocated, no allocation per press);
    a 49th is refused rather than losing the way back."""
    e = NumberEntry()
    e.start(0)
    assert all(e.add(0, 1, 255) for _ in range(48))
    assert e.add(0, 1, 255) is False and e.values[0] == 48
    while e.undo():
        pass
    assert e.values[0] == 0


# -- screens -----------------------------------------------------------------


def stalk_board():
    b = Board()
    b.do("ok\nglobemaster\nok\nok")  # Stalk Exchange, 3 players, placeholder start space
    return b


def test_app_routes_to_the_current_screen_and_names_it():
    b = Board()
    assert b.app.current is b.app.setup and b.screen == "setup_game"
    b.app.press(B_OK, SHORT)
    assert b.app.current is b.app.setup and b.screen == "setup_players"
    b.app.press(2, SHORT)  # globemaster: 3 players
    b.app.press(B_OK, SHORT)
    assert b.screen == "setup_track"
    b.app.press(B_OK, SHORT)
    assert b.app.current is b.app.stalk and b.screen == "stalk"


def test_harvest_count_is_a_step_of_play_and_returns_to_play():
    b = stalk_board()
    b.app.press(4, SHORT)  # tulip before two basic actions: refused, still play
    assert b.app.current is b.app.stalk
    b.do("ok\nok\ntulip\ntulip")
    h = b.app.harvest
    assert b.app.current is h and b.screen == "harvest" and (h.flower, h.n) == (4, 2)
    assert b.app.view.pending == 4 and b.app.view.pending_count == 2
    b.app.press(B_UNDO, SHORT)  # one back
    assert h.n == 1
    b.app.press(B_OK, SHORT)  # confirms: one tulip harvested, back to play
    assert b.app.current is b.app.stalk and b.state["values"]["tulip"] == 1 and h.flower == -1


def test_menu_opens_over_a_screen_and_gives_it_back_unchanged():
    b = stalk_board()
    b.do("ok\nok\ntulip")
    b.app.press(B_MENU, LONG)  # the harvest is confirmed first, then the menu
    assert b.app.current is b.app.menu and b.app.menu.back is b.app.stalk
    assert b.state["values"]["tulip"] == 1
    b.app.press(B_UNDO, SHORT)  # closes
    assert b.app.current is b.app.stalk


def test_plant_entry_steps_and_the_way_back():
    b = Board()
    b.do("daffodil\nok\nok")  # Oh My. Orchids!, 3 players
    b.app.press(B_OK, SHORT)
    p = b.app.plant
    assert b.app.current is p and b.screen == "plant_kind"
    b.app.press(B_OK, SHORT)  # an orchid
    assert b.screen == "plant_points"
    b.do("tulip\nsnowdrop")
    assert p.number.values[0] == 9
    b.app.press(B_OK, SHORT)
    assert b.screen == "plant_seeds" and p.points == 9 and p.number.values[0] == 0
    b.app.press(B_UNDO, SHORT)  # no press on this step yet: back to the points, as entered
    assert b.screen == "plant_points" and p.number.values[0] == 9
    b.app.press(B_MENU, SHORT)  # cancels the plant
    assert b.app.current is b.app.orchids and len(b.app.game.log) == 1


def test_screens_write_only_their_own_fields_and_the_view():
    """No module writes another's attributes: a screen assigns to `self.*`
    or to the ring's View (`v.*` / `view.*`), the App to `self.*` and its
    view; everything else goes through method calls."""
    bad = []
    for rel in ("firmware/screens.py", "firmware/app.py"):
        tree = ast.parse((REPO / rel).read_text())
        for node in ast.walk(tree):
            targets = []
            if isinstance(node, ast.Assign):
                targets = node.targets
            elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
                targets = [node.target]
            for t in targets:
                while isinstance(t, ast.Subscript):
                    t = t.value
                if isinstance(t, ast.Attribute):
                    base = t.value
                    ok = (isinstance(base, ast.Name) and base.id in ("self", "v", "view")) or (
                        isinstance(base, ast.Attribute) and base.attr == "view"
                    )
                    if not ok:
                        bad.append("%s:%d %s" % (rel, node.lineno, ast.unparse(t)))
    assert not bad, bad



def test_setup_keeps_its_choices_for_the_next_game():
    b = stalk_board()
    b.do("long menu\nsnowdrop\nok")  # abandon the game: setup, as it was chosen
    assert b.screen == "setup_game" and (b.app.setup.game, b.app.setup.players) == (0, 3)
    assert b.app.setup.track.values[0] == 26  # the start space last shown (3 players, placeholder)


# -- the screen stack ----------------------------------------------------------

SCREENS = ("setup", "menu", "stalk", "harvest", "portfolio", "orchids", "plant", "results")


def test_screens_call_no_other_screen():
    """A screen reaches another only through the App's stack methods
    (`app.push(app.menu)` names it; `app.plant.begin()` would call it):
    no call on an attribute of `app.<screen>` in firmware/screens.py."""
    bad = []
    tree = ast.parse((REPO / "firmware/screens.py").read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            owner = node.func.value
            if isinstance(owner, ast.Attribute) and owner.attr in SCREENS:
                bad.append("%d %s" % (node.lineno, ast.unparse(node)))
    assert not bad, bad


def test_every_screen_calls_screen_init():
    """Every screen class that defines __init__ calls Screen.__init__ (app,
    step, name set the same way for all), and the App's screens have them."""
    classes = [c for c in vars(screens).values() if inspect.isclass(c) and issubclass(c, screens.Screen) and c is not screens.Screen]
    assert len(classes) >= 7
    for c in classes:
        if "__init__" in vars(c):
            assert "Screen.__init__(self, app)" in inspect.getsource(c.__init__), c.__name__
    app = Board().app
    for name in SCREENS:
        sc = getattr(app, name)
        assert sc.app is app and isinstance(sc.step, int) and sc.name, name


def test_the_stack_is_preallocated_and_overlays_come_back():
    """Opening and closing the menu many times (and plant entry) uses the
    same two slots: nothing grows; each close gives the screen under it back."""
    b = stalk_board()
    stack = b.app._stack
    for _ in range(30):
        b.app.press(B_MENU, LONG)
        assert b.app.current is b.app.menu
        b.app.press(B_UNDO, SHORT)
        assert b.app.current is b.app.stalk
    assert b.app._stack is stack and len(stack) == 2
    o = Board()
    o.do("daffodil\nok\nok")  # Oh My. Orchids!, 3 players
    for _ in range(30):
        o.app.press(B_OK, SHORT)
        assert o.screen == "plant_kind"
        o.app.press(B_MENU, SHORT)
        assert o.app.current is o.app.orchids
    assert len(o.app._stack) == 2


def _loaded(records):
    b = Board()
    b.app.new_game(records[0])
    for rec in records[1:]:
        assert b.app.apply(rec)
    return b


def test_an_event_under_the_menu_keeps_it_and_its_close_shows_the_game_as_it_is():
    """The menu (overlay level 2) keeps the ring over an event, even over a
    game that is over; closing it shows the screen the game is in then."""
    recs = [bytes(r) for r in stalk_game(3, 3).log.records()]
    b = _loaded(recs)
    assert b.screen == "results"
    b.app.press(B_MENU, LONG)
    assert b.screen == "menu"
    assert b.app.undo()  # the last portfolio taken back (as the host's loader could)
    assert b.screen == "menu" and b.app.game.table.over
    b.app.press(B_UNDO, SHORT)  # closes: the game is in portfolio entry now
    assert b.screen == "portfolio"


def test_plant_entry_closes_when_the_game_ends_under_it():
    """Plant entry (overlay level 1) belongs to play: an event that ends the
    game takes the ring to the results; a new game closes any overlay."""
    recs = [bytes(r) for r in orchids_game(2, 3).log.records()]
    b = _loaded(recs[:-1])
    assert b.screen == "orchids"
    b.app.press(B_OK, SHORT)
    assert b.screen == "plant_kind"
    assert b.app.apply(recs[-1])  # the last turn's end, applied from outside
    assert b.app.game.table.over and b.screen == "results"
    b.app.press(B_MENU, LONG)
    assert b.screen == "menu"
    b.app.new_game(recs[0])
    assert b.screen == "orchids" and b.app.current is b.app.orchids
    b.app.press(B_UNDO, SHORT)  # the screen on top is play, not the menu: undo has nothing to take back
    assert b.screen == "orchids"

"""Whole Stalk Exchange games played by button presses on the simulated board
(SimHW + Store on MemFS + App; presses go through the real pins, debounce and
long-press timing). Each test writes down, beside the presses, the table
events a scorekeeper would have written, and checks that the board's game
equals engine_lite.replay of those events (final scores included).

Gesture map under test (docs/controls.md): OK plant, MENU swap, flower =
harvest +1 (OK confirms), hold OK end turn, hold MENU menu (dahlia flush,
daffodil crash), UNDO undo; portfolio: flower +1, hold flower -1, OK next.
"""

import json

import pytest

from engine_lite.tables import PORTFOLIO_SIZE, FLOWERS
from firmware import ring
from host.board_sim.headless import run_buttons
from tests.kit.app_helpers import Board, lit, reddish, replay

NAMES = ["Ann", "Bo", "Cy", "Di", "Eve"]
SETUP_5P_TRACK_12 = """
ok                # game: Stalk Exchange (selected first)
tulip             # 5 players (the 5th flower button)
ok
long tulip        # start space: 20 (5p placeholder) - 5
long globemaster  # - 3 = 12
ok                # the game starts
"""


def ev(name, **kw):
    d = {"ev": name}
    d.update(kw)
    return d


def start_5p():
    b = Board(settings={"names": NAMES, "brightness": 255})
    b.do(SETUP_5P_TRACK_12)
    events = [ev("start", game="stalk-exchange", players=NAMES, track_start=12)]
    return b, events


def market_lit(b, f):
    return sum(1 for i in range(3 * f, 3 * f + 3) if lit(b.px(i)) and not reddish(b.px(i)))


def test_setup_flow_starts_the_table_that_was_chosen():
    b, events = start_5p()
    assert b.screen == "stalk"
    assert b.state == replay(events)
    assert b.state["track_start_placeholder"] is False
    # the start space is remembered for 5 players, not for 4
    assert b.store.settings()["track_start"]["5"] == 12
    assert "4" not in b.store.settings()["track_start"]


def test_five_player_crash_game_by_buttons():
    """Extra actions, a flush, undos, a refused event, the crash warning, the
    crash (end trigger a), the last-turn signal, portfolios and results."""
    b, events = start_5p()
    n = 5
    # Ann: two basic actions and an extra plant (costs a Seedy Business token)
    b.do("ok\nok\nok\nlong ok")
    events += [ev("plant"), ev("plant"), ev("plant"), ev("end_turn")]
    assert b.state["tokens"]["Ann"] == 2
    # Bo: plant, swap, extra swap, flush from the menu
    b.do("ok\nmenu\nmenu\nlong menu\ndahlia\nlong ok")
    events += [ev("plant"), ev("swap"), ev("swap"), ev("flush"), ev("end_turn")]
    assert b.state["flush_used"]["Bo"] is True and b.state["tokens"]["Bo"] == 1
    # Cy: a plant undone; a harvest before the two basic actions is refused:
    # the ring blinks red and nothing changes.
    b.do("ok\nundo")
    events += [ev("plant"), ev("undo")]
    before = b.state
    b.do("tulip")
    assert b.state == before and b.app.harvest.flower == -1
    assert all(reddish(b.px(i)) for i in range(24))  # the error blink
    b.wait(500)
    assert not all(reddish(b.px(i)) for i in range(24))
    b.do("ok\nok\ntulip x2\nok\nlong ok")
    events += [ev("plant"), ev("plant"), ev("harvest", flower="tulip", count=2), ev("end_turn")]
    # Di: a harvest of 1
    b.do("ok\nok\ndaffodil\nok\nlong ok")
    events += [ev("plant"), ev("plant"), ev("harvest", flower="daffodil", count=1), ev("end_turn")]
    # Eve: counts tulip three times, takes one back with UNDO; hold OK confirms and ends the turn
    b.do("ok\nmenu\ntulip x3\nundo")
    assert b.app.harvest.flower == FLOWERS.index("tulip") and b.app.harvest.n == 2
    b.do("long ok")
    events += [ev("plant"), ev("swap"), ev("harvest", flower="tulip", count=2), ev("end_turn")]
    s = b.state
    assert s == replay(events)
    assert s["current_player"] == "Ann" and s["values"]["tulip"] == 4
    # crash warning: 2 more harvested tokens could crash the market: unlit pixels glow red
    assert s["tokens_until_crash"] == 2
    frames = [b.frame(t) for t in range(0, 500, 50)]
    assert all(reddish(f[1]) and lit(f[1]) for f in frames)  # daffodil's empty bar pixel glows
    strongest = max(f[1][0] for f in frames)
    b.app.view.until_crash = 6  # the same screen further from the end: a weaker glow
    weaker = max(b.frame(t)[1][0] for t in range(0, 2000, 50))
    b.app.home()
    assert weaker < strongest
    # the tulip bar is the leader (3 px), daffodil 1 of 3
    assert market_lit(b, 4) == 3 and market_lit(b, 1) >= 1
    # Ann harvests 2 tulips: 7 harvested + value 6 >= 12 + 1: the market crashes
    b.do("ok\nok\ntulip x2\nok")
    events += [ev("plant"), ev("plant"), ev("harvest", flower="tulip", count=2)]
    assert b.state["end_triggered"] == "crash" and not b.state["game_over"]
    # last turn: a white comet runs round the ring
    heads = set()
    for t in range(0, 1200, 100):
        fr = b.frame(t)
        heads.update(i for i in range(24) if fr[i][0] > 0 and fr[i][0] == fr[i][1] == fr[i][2] and fr[i][0] > 150)
    assert len(heads) >= 10
    # further actions are refused in the upkeep; the turn ends -> game over
    b.do("menu")
    assert b.state == replay(events)
    b.do("long ok")
    events += [ev("end_turn")]
    assert b.state["game_over"] and b.screen == "portfolio"
    # portfolios: 8 tokens each in a 5-player game; mistakes fixed with UNDO / hold
    size = PORTFOLIO_SIZE[n]
    portfolios = [
        ("dahlia x2\ndaffodil x2\nglobemaster x2\nsnowdrop\ntulip x2\nundo", (2, 2, 2, 1, 1)),
        ("tulip x4\nlong tulip\ndahlia x5", (5, 0, 0, 0, 3)),
        ("snowdrop x8", (0, 0, 0, 8, 0)),
        ("globemaster x4\ndaffodil x4", (0, 4, 4, 0, 0)),
        ("dahlia\ndaffodil\nglobemaster\nsnowdrop\ntulip\nsnowdrop x3", (1, 1, 1, 4, 1)),
    ]
    for seat, (script, counts) in enumerate(portfolios):
        assert sum(counts) == size
        assert b.app.view.player == seat
        b.do(script)
        assert tuple(b.app.portfolio.counts.values) == counts
        # the portfolio screen shows the tokens as runs of the flower colours
        assert sum(1 for i in range(19) if b.px(i) != (0, 0, 0)) == size + 4
        b.do("ok")
        events.append(ev("portfolio", player=NAMES[seat], counts=dict(zip(FLOWERS, counts))))
    s = b.state
    assert b.screen == "results" and "final" in s
    assert s == replay(events)
    final = s["final"]
    assert final["busted"] == ["tulip"] and final["values"]["tulip"] == 3
    winners = [NAMES.index(p["name"]) for p in final["players"] if p["winner"]]
    # results: winner seats gold (px 15+seat), the busted flower's first pixel blinks red
    for seat in range(n):
        p = b.frame(200)[15 + seat]
        assert (p[0] > p[2] and p[1] > p[2] and p[1] > 40) == (seat in winners)
    assert reddish(b.frame(300)[12]) and not reddish(b.frame(0)[12])
    # OK: next game (the finished game is archived, setup starts again)
    b.do("ok")
    assert b.screen == "setup_game" and b.app.game is None
    assert b.store.archived() == [("0001", False)]
    assert b.app.last_game.state() == s


def test_bag_empties_ends_the_game_after_that_turn():
    """End trigger (b): the greenhouse bag is emptied. 3 players: bag 77."""
    b = Board(settings={"brightness": 255})
    b.do("ok\nglobemaster\nok\nok")  # Stalk Exchange, 3 players, placeholder track
    names = ["Seat 1", "Seat 2", "Seat 3"]
    events = [ev("start", game="stalk-exchange", players=names)]
    assert b.state == replay(events)
    flushed = set()
    warned = False
    while not b.state["end_triggered"]:
        seat = b.state["players"].index(b.state["current_player"])
        script = "ok\nok\n"
        events += [ev("plant"), ev("plant")]
        if seat not in flushed and b.state["bag"] < 50:
            flushed.add(seat)
            script += "long menu\ndahlia\n"
            events.append(ev("flush"))
        b.do(script)
        if b.state["end_triggered"]:
            break
        if b.state["bag"] <= 14:  # the bag warning: unlit pixels glow orange-red
            warned = warned or any(f[16][0] > 0 and f[16][1] > 0 for f in (b.frame(t) for t in range(0, 900, 50)))
        b.do("long ok")
        events.append(ev("end_turn"))
    assert warned
    assert b.state["end_triggered"] == "bag" and b.state["bag"] == 0
    if not b.state["game_over"]:  # emptied during the turn (a plant or a flush): it ends after it
        b.do("long ok")
        events.append(ev("end_turn"))
    assert b.state["game_over"] and b.screen == "portfolio"
    for seat in range(3):
        b.do("dahlia x3\ndaffodil x3\nglobemaster x%d\nsnowdrop x%d" % (3 + seat, 3 - seat))
        b.do("ok")
        c = {"dahlia": 3, "daffodil": 3, "globemaster": 3 + seat, "snowdrop": 3 - seat, "tulip": 0}
        events.append(ev("portfolio", player=names[seat], counts=c))
    assert b.screen == "results"
    assert b.state == replay(events)
    # no harvest, every value 0: one tier holding all 12 tokens each, so the victory is shared (R2)
    assert [p["name"] for p in b.state["final"]["players"] if p["winner"]] == names


def test_manual_crash_from_the_menu_and_undo_back_into_play():
    b = Board()
    b.do("ok\nok\nok\nok")  # Stalk Exchange, 3 players, placeholder track
    b.do("ok\nmenu\nlong menu\ndaffodil")  # plant, swap, menu -> crash
    assert b.state["end_triggered"] == "crash"
    b.do("long ok")
    assert b.screen == "portfolio"
    b.do("undo")  # no count entered yet: UNDO undoes the last event (the end of turn)
    assert b.screen == "stalk" and not b.state["game_over"] and b.state["end_triggered"] == "crash"
    b.do("undo")
    assert b.state["end_triggered"] is None
    # the flush is once per game: a second one is refused
    b.do("long menu\ndahlia")
    assert b.state["flush_used"]["Seat 1"] is True
    before = b.state
    b.do("long menu\ndahlia")
    assert b.state == before and all(reddish(b.px(i)) for i in range(24))
    # the menu closes with UNDO and nothing happens
    b.do("long menu\nundo")
    assert b.screen == "stalk" and b.state == before


def test_power_cut_resumes_every_screen():
    b, events = start_5p()
    b.do("ok\nok\nlong ok\nok")
    events += [ev("plant"), ev("plant"), ev("end_turn"), ev("plant")]
    b2 = b.reboot()
    assert b2.screen == "stalk" and b2.state == replay(events)
    # the game over and half the portfolios in: boot comes back to the next portfolio
    b2.do("long menu\ndaffodil\nok\nlong ok")
    events += [ev("crash"), ev("plant"), ev("end_turn")]
    b2.do("dahlia x8\nok")
    events.append(ev("portfolio", player="Ann", counts={"dahlia": 8, "daffodil": 0, "globemaster": 0, "snowdrop": 0, "tulip": 0}))
    b3 = b2.reboot()
    assert b3.screen == "portfolio" and b3.app.view.player == 1
    assert b3.state == replay(events)


def test_two_player_short_game_and_remembered_start_space():
    b = Board()
    b.do("ok\ndaffodil\nok\ndaffodil\nok")  # Stalk Exchange, 2 players, short
    assert b.screen == "setup_track" and b.app.setup.track.values[0] == 26  # 2-short placeholder
    b.do("tulip\nok")  # 31
    assert b.state["track_start"] == 31 and b.state["players"] == ["Seat 1", "Seat 2"]
    assert b.app.game.events()[0]["length"] == "short"
    b.do("long menu\nsnowdrop\nok")  # menu -> new game -> confirm: abandon
    assert b.screen == "setup_game"
    b.do("ok\ndaffodil\nok\ndaffodil\nok")
    assert b.app.setup.track.values[0] == 31  # remembered for 2 players, short


def test_button_script_runs_headless(tmp_path, capsys):
    script = tmp_path / "game.txt"
    script.write_text("# 2 players, long\nok\ndaffodil\nok\nok\nok\nok x2\nlong ok\nok\nmenu\nwait 300\n")
    assert run_buttons(str(script)) == 0
    out = json.loads(capsys.readouterr().out)
    events = [
        ev("start", game="stalk-exchange", players=["Seat 1", "Seat 2"], length="long"),
        ev("plant"), ev("plant"), ev("end_turn"), ev("plant"), ev("swap"),
    ]
    assert out == replay(events)
    bad = tmp_path / "bad.txt"
    bad.write_text("ok\n\n# fine so far\nlong tulp\n")
    assert run_buttons(str(bad)) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "line 4" in err and "tulp" in err


STUCK_SCRIPT = """
ok                # game: Stalk Exchange
daffodil          # 2 players
ok
ok                # long game
ok                # start space as shown
ok                # Seat 1 plants, then no action is possible:
long ok           # hold OK before two basic actions = stuck, straight to the upkeep (R3)
ok                # refused: the action phase is over
tulip x2
ok                # the surrounded tulips MUST be harvested, in this turn's upkeep
long ok           # end the turn
"""


def test_stuck_turn_and_its_harvest_by_buttons(tmp_path, capsys):
    # FAQ: "If it is no longer possible to take any actions, move onto the Upkeep phase";
    # "they MUST be harvested during Step 1 of the Upkeep Phase" (ruling R3)
    script = tmp_path / "stuck.txt"
    script.write_text(STUCK_SCRIPT)
    assert run_buttons(str(script)) == 0
    out = json.loads(capsys.readouterr().out)
    events = [
        ev("start", game="stalk-exchange", players=["Seat 1", "Seat 2"], length="long"),
        ev("plant"), ev("stuck"), ev("harvest", flower="tulip", count=2), ev("end_turn"),
    ]
    assert out == replay(events)
    assert out["values"]["tulip"] == 2 and out["current_player"] == "Seat 2"
    b = Board()
    b.do("\n".join(STUCK_SCRIPT.split("\n")[:8]))
    assert b.state["phase"] == "upkeep" and b.state["actions"] == 1
    b.do("undo")  # UNDO takes the declaration back
    assert b.state["phase"] == "action" and b.app.game.events()[-1] == ev("plant")


def test_market_segments_sit_in_button_order():
    """Colour-blind safe: each flower has its own place (3 px in button
    order), so a value is read by position, not by hue."""
    b = Board()
    b.do("ok\ntulip\nok\nok")  # 5 players, placeholder start space 20: no warning yet
    b.do("ok\nok\nglobemaster x3\nsnowdrop\nok\nlong ok")
    v = b.app.view
    assert v.mode == ring.M_STALK and list(v.values) == [0, 0, 3, 1, 0]
    fr = b.frame(0)
    bars = [sum(1 for i in range(3 * f, 3 * f + 3) if lit(fr[i])) for f in range(5)]
    assert bars[2] == 3 and bars[3] == 1


CRASH_SCRIPT = SETUP_5P_TRACK_12 + """
ok x3
long ok           # Ann: 2 basic actions + an extra plant
ok
menu x2
long menu
dahlia            # Bo: plant, swap, extra swap, flush
long ok
ok
undo
tulip             # refused: harvest before the two basic actions
ok x2
tulip x2
ok
long ok
ok x2
daffodil
long ok
ok
menu
tulip x3
undo
long ok
ok x2
tulip x2          # the market crashes
wait 300
long ok
dahlia x8
ok
daffodil x8
ok
globemaster x8
ok
snowdrop x8
ok
tulip x4
snowdrop x4
ok
"""


@pytest.mark.mpy
def test_the_same_button_script_in_real_micropython():
    """The firmware is unchanged on the board: the same presses give the same
    game inside a real MicroPython interpreter as under CPython."""
    from tests.kit.mpy_harness import run_mpy

    b = Board(settings={"names": NAMES})
    b.do(CRASH_SCRIPT)
    expected = b.state
    assert expected["game_over"] and "final" in expected
    code = """
hw = SimHW(None, 24)
app = App(hw, Store(fs=MemFS()))
app.push_settings({"names": %r})
script.play(app, hw, script.parse(%r))
print(json.dumps(app.game.state()))
""" % (NAMES, CRASH_SCRIPT)
    setup = """
import json
from boardkit.hw_sim import SimHW
from boardkit.memfs import MemFS
from firmware.storage import Store
from firmware.app import App
from boardkit import script
"""
    r = run_mpy(code, setup=setup, timeout=300)
    assert json.loads(r.stdout.strip().splitlines()[-1]) == expected


BOUND_SCRIPT = STUCK_SCRIPT + """
ok
menu              # Seat 2: plant, swap
dahlia x12
ok                # refused: 9 seeded - 2 harvested + 1 bulb of an earlier turn = 8 (R10)
dahlia x8
ok
long ok
"""


@pytest.mark.mpy
def test_stuck_turn_and_garden_bound_in_real_micropython():
    """R3's gesture and R10's refusal are the engine's, unchanged on the board:
    the same presses give the same game inside a real MicroPython."""
    from tests.kit.mpy_harness import run_mpy

    b = Board()
    b.do(BOUND_SCRIPT)
    expected = b.state
    assert expected["values"] == {"dahlia": 8, "daffodil": 0, "globemaster": 0, "snowdrop": 0, "tulip": 2}
    assert expected["current_player"] == "Seat 1" and expected["turn"] == 3
    code = """
hw = SimHW(None, 24)
app = App(hw, Store(fs=MemFS()))
script.play(app, hw, script.parse(%r))
print(json.dumps(app.game.state()))
""" % BOUND_SCRIPT
    setup = """
import json
from boardkit.hw_sim import SimHW
from boardkit.memfs import MemFS
from firmware.storage import Store
from firmware.app import App
from boardkit import script
"""
    r = run_mpy(code, setup=setup, timeout=300)
    assert json.loads(r.stdout.strip().splitlines()[-1]) == expected

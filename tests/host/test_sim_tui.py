"""The terminal simulator (`make run` / `bloomkeeper sim`), tested as a user
sees it: keys pressed through textual's pilot, then the rendered screen read
back (its text, and the colour of every ring cell), against the real
firmware App on the simulated backend with a directory-backed Store.

The requirement: "The firmware, unchanged, on the simulated backend
in a plain terminal: the ring drawn in colour, the keyboard as the buttons
with a legend on screen, the game state in words beside it. The serial link
is exposed on a pseudo-terminal."

The last test runs `bloomkeeper sim` for real inside tmux (send-keys +
capture-pane); it is skipped where tmux is not installed
(`apt-get install -y tmux`).
"""

import asyncio
import json
import os
import re
import shutil
import subprocess
import sys
import time

import pytest

from host.board_sim import board, face
from host.board_sim.board import LONG, SHORT
from host.board_sim.face import display_rgb, ring_layout
from host.board_sim.textual_app import RingView, SimApp
from tests.kit.mpy_harness import REPO
from tests.kit.terminal import Terminal

pytestmark = pytest.mark.slow  # the terminal simulator driven key by key (textual's pilot, a pty link)

SIZE = (120, 40)


# -- helpers -----------------------------------------------------------------


def screen_text(app):
    """The whole rendered screen as text, one line per terminal row."""
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


def ring_cells(app):
    """The colour of every ring pixel as drawn on screen: (r, g, b), or None
    for a pixel drawn unlit. A pixel is two cells wide; both must agree."""
    region = app.query_one(RingView).content_region
    rows, cols, pos = ring_layout(len(app.sim.pixels()))
    lines = screen_text(app).split("\n")
    comp = app.screen._compositor
    out = []
    for r, c in pos:
        cells = []
        for dx in (0, 1):
            x, y = region.x + c + dx, region.y + r
            style = comp.get_style_at(x, y)
            lit = lines[y][x] == "\u2588"
            cells.append(tuple(style.color.triplet) if lit and style.color is not None else None)
        assert cells[0] == cells[1]
        out.append(cells[0])
    return out


def drawn_matches_pixels(app):
    """Every ring cell on screen shows exactly the App's pixel (lit or not)."""
    b = app.sim.brightness()
    want = [display_rgb(p, b) if any(p) else None for p in app.sim.pixels()]
    return ring_cells(app) == want


async def until(pilot, cond, timeout=20.0, what="condition"):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        await pilot.pause(0.05)
        if cond():
            return
    raise AssertionError("timed out waiting for " + what + "\n" + screen_text(pilot.app))


async def keys(pilot, *names):
    """Press keys the way a person does, then wait until the simulated
    fingers have let go of every button (the firmware saw each press)."""
    for k in names:
        await pilot.press(k)
    await until(pilot, lambda: not pilot.app.sim.busy(), what="the presses to finish")
    await pilot.pause(0.1)  # a frame or two for the App to handle the last one


async def start_stalk_3p(pilot):
    """Setup as a player does it: dahlia = Stalk Exchange, OK, globemaster = 3
    players, OK, OK on the remembered market-track start space."""
    await keys(pilot, "1", "space", "3", "enter")
    await until(pilot, lambda: pilot.app.sim.screen_name() == "setup_track", what="setup_track")
    await keys(pilot, "space")
    await until(pilot, lambda: pilot.app.sim.screen_name() == "stalk", what="the game to start")


def run(coro):
    return asyncio.run(coro)


# -- pure pieces ---------------------------------------------------------------


@pytest.mark.parametrize("count", [8, 12, 16, 24, 32, 60])
def test_ring_layout_is_a_circle_without_overlaps(count):
    rows, cols, pos = ring_layout(count)
    assert len(set(pos)) == count
    assert all(0 <= r < rows and 0 <= c < cols - 1 and c % 2 == 0 for r, c in pos)
    # pixel 0 at the top centre, then clockwise (firmware/ring.py): a quarter
    # of the way round is the right-hand side, half way the bottom.
    assert pos[0] == (0, cols // 2 - 1) or pos[0][0] == 0 and abs(pos[0][1] - (cols - 2) // 2) <= 1
    right = pos[count // 4]
    bottom = pos[count // 2]
    assert right[1] == max(c for _, c in pos)
    assert bottom[0] == rows - 1


def test_every_button_has_a_short_and_a_long_key():
    got = set(face.KEYMAP.values())
    for b in range(8):
        assert (b, SHORT) in got, board.BUTTONS[b]
        assert (b, LONG) in got, board.BUTTONS[b]


def test_display_keeps_hue_and_order_and_off_stays_off():
    assert display_rgb((0, 0, 0)) == (0, 0, 0)
    dim, bright = display_rgb((10, 0, 0)), display_rgb((40, 0, 0))
    assert 0 < dim[0] < bright[0] and dim[1:] == bright[1:] == (0, 0)
    r, g, b = display_rgb((40, 20, 0))
    assert b == 0 and abs(r - 2 * g) <= 1
    assert display_rgb((255, 255, 255)) == (255, 255, 255)
    # the brightness setting is divided out: a full colour at 48/255 shows full
    assert display_rgb((48, 0, 0), brightness=48) == (255, 0, 0)
    assert display_rgb((24, 0, 0), brightness=48)[0] < 255


# -- the simulator as a user drives it ------------------------------------------


def test_start_a_game_plant_and_see_the_ring_change(tmp_path):
    async def go():
        app = SimApp(state_dir=str(tmp_path / "flash"))
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: "Setup: which game?" in screen_text(app), what="the setup screen")
            text = screen_text(app)
            assert "setup_game" not in text  # words, not the firmware's screen names
            # the legend: every button and its key
            for label in ("1 dahlia", "2 daffodil", "3 globemaster", "4 snowdrop", "5 tulip", "u undo", "space/enter ok", "m menu"):
                assert label in text
            assert "long press" in text and "q quit" in text
            assert "link: /dev/" in text  # the serial link's pseudo-terminal
            assert drawn_matches_pixels(app)

            await start_stalk_3p(pilot)
            await until(pilot, lambda: "Stalk Exchange, turn 1" in screen_text(app), what="the game in words")
            before_state = app.sim.app.game.table.actions
            await until(pilot, lambda: drawn_matches_pixels(app), what="the drawn ring to equal the App's pixels")

            await keys(pilot, "space")  # OK = plant
            await until(pilot, lambda: "1 basic action done" in screen_text(app), what="the plant in words")
            assert app.sim.app.game.table.actions == before_state + 1
            await keys(pilot, "m")  # MENU = swap: the turn's two basic actions are done
            await until(pilot, lambda: "2 basic actions done" in screen_text(app), what="the swap in words")
            await pilot.pause(0.4)
            before = app.sim.pixels()
            await until(pilot, lambda: drawn_matches_pixels(app), what="the drawn ring to equal the App's pixels")

            await keys(pilot, "1", "1", "space")  # harvest two dahlias, OK confirms
            await until(pilot, lambda: "market: dahlia 2," in screen_text(app), what="the harvest in words")
            await pilot.pause(0.4)
            after = app.sim.pixels()
            assert after != before, "a harvest moves the market: the ring must change"
            assert after[:3] != before[:3], "px 0-2 are the dahlia bar (firmware/ring.py)"
            await until(pilot, lambda: drawn_matches_pixels(app), what="the drawn ring to equal the App's pixels")
            assert "last error: none" in screen_text(app)

    run(go())


def test_orchids_take_seeds_and_end_the_turn(tmp_path):
    async def go():
        app = SimApp(state_dir=str(tmp_path / "flash"), link=False)
        async with app.run_test(size=SIZE) as pilot:
            # daffodil = Oh My. Orchids!, OK, daffodil = 2 players, OK: the game starts
            await keys(pilot, "2", "space", "2", "space")
            await until(pilot, lambda: "Oh My. Orchids!, turn 1: Seat 1" in screen_text(app), what="the Orchids game")
            hand = app.sim.app.game.table.hand[0]
            await pilot.pause(0.4)
            before = app.sim.pixels()
            await keys(pilot, "3", "O")  # take 3 seeds, hold OK = end the turn
            await until(pilot, lambda: "turn 2: Seat 2" in screen_text(app),
                        what="the next player's turn")
            assert app.sim.app.game.table.hand[0] == hand + 3
            assert "Seat 1: 0 flowers, 0 types, %d Seed cards" % (hand + 3) in screen_text(app)
            await pilot.pause(0.4)
            assert app.sim.pixels() != before, "the ring shows whose turn it is"
            await until(pilot, lambda: drawn_matches_pixels(app), what="the drawn ring to equal the App's pixels")

    run(go())


def test_a_refused_event_blinks_and_says_why(tmp_path):
    async def go():
        app = SimApp(state_dir=str(tmp_path / "flash"), link=False)
        async with app.run_test(size=SIZE) as pilot:
            await start_stalk_3p(pilot)
            await keys(pilot, "space", "m")  # plant, swap
            await until(pilot, lambda: "2 basic actions done" in screen_text(app), what="the two actions")
            blinks = app.sim.blinks
            # 7 dahlias, OK: 3 players seed 6, this turn's bulb does not count (ruling R10)
            await keys(pilot, *["1"] * 7, "space")
            await until(pilot, lambda: app.sim.blinks > blinks, what="the error blink")
            said = "last error: ok short: the Garden has only 6 Flower tokens to harvest"
            await until(pilot, lambda: said in screen_text(app), what="the refusal in words")
            text = screen_text(app)
            assert "(this turn's Bulbs wait for the next turn)" in app.sim.last_error
            assert "too_many" not in text and app.sim.refusal_code == "too_many"
            assert app.sim.app.game.table.harvested == 0  # nothing changed
            assert "(3 red blinks)" in text  # R10's refusal: "not enough" (docs/controls.md)
            assert "link: none" in text

    run(go())


def test_a_click_on_a_legend_button_presses_it(tmp_path):
    async def go():
        app = SimApp(state_dir=str(tmp_path / "flash"), link=False)
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: app.sim.screen_name() == "setup_game", what="the setup screen")
            legend = app.query_one("#buttons")
            row = [line for line in screen_text(app).split("\n") if "2 daffodil" in line and "u undo" in line][0]
            x = row.index("daffodil") + 2 - legend.region.x
            y = screen_text(app).split("\n").index(row) - legend.region.y
            await pilot.click("#buttons", offset=(x, y))
            await until(pilot, lambda: app.sim.history == ["daffodil short"], what="the click to press daffodil")
            await until(pilot, lambda: "chosen: Oh My. Orchids!" in screen_text(app), what="daffodil chose Orchids")

    run(go())


def test_a_firmware_exception_is_shown_not_fatal(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))  # where the traceback file goes
    flash = tmp_path / "flash"

    async def go():
        app = SimApp(state_dir=str(flash), link=False)
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: app.sim.screen_name() == "setup_game", what="the setup screen")
            real_step = app.sim.app.step
            calls = []

            def boom():
                calls.append(1)
                if len(calls) == 1:
                    raise RuntimeError("boom")
                return real_step()

            app.sim.app.step = boom
            await until(pilot, lambda: "firmware error: RuntimeError: boom" in screen_text(app), what="the error line")
            await keys(pilot, "1", "space")  # still running: the next screen comes
            await until(pilot, lambda: app.sim.screen_name() == "setup_players", what="setup_players")
        return app.sim.errors

    assert run(go()) == 1
    logs = list((tmp_path / "state").rglob("sim-errors.txt"))
    assert logs and "RuntimeError: boom" in logs[0].read_text()
    assert all(not n.startswith("sim-") for n in os.listdir(flash)), "nothing but the Store's files on the flash"


def test_long_press_by_shift_and_by_prefix_key(tmp_path):
    """In the market-track entry a flower adds its number and a held flower
    subtracts it (docs/controls.md): so the entry shows what the firmware's
    own long-press detection made of each key."""

    async def go():
        app = SimApp(state_dir=str(tmp_path / "flash"), link=False)
        async with app.run_test(size=SIZE) as pilot:
            await keys(pilot, "1", "space", "3", "space")
            await until(pilot, lambda: app.sim.screen_name() == "setup_track", what="setup_track")
            n0 = app.sim.app.setup.track.values[0]
            await keys(pilot, "4", "5")  # short: +4 +5
            await until(pilot, lambda: "start space: %d " % (n0 + 9) in screen_text(app), what="+9")
            await keys(pilot, "exclamation_mark")  # Shift+1: long dahlia, -1
            await until(pilot, lambda: "start space: %d " % (n0 + 8) in screen_text(app), what="-1 (shift)")
            await keys(pilot, "l")
            assert "LONG armed" in screen_text(app)
            await keys(pilot, "2")  # prefix l, then daffodil: long, -2
            await until(pilot, lambda: "start space: %d " % (n0 + 6) in screen_text(app), what="-2 (prefix)")
            assert "LONG armed" not in screen_text(app)
            assert app.sim.history[-2:] == ["dahlia long", "daffodil long"]

    run(go())


def test_the_flash_survives_a_restart_of_the_simulator(tmp_path):
    flash = str(tmp_path / "flash")

    async def first():
        app = SimApp(state_dir=flash, link=False)
        async with app.run_test(size=SIZE) as pilot:
            await start_stalk_3p(pilot)
            await keys(pilot, "space", "m")  # plant, swap
            await until(pilot, lambda: "2 basic actions done" in screen_text(app), what="two actions")
            await pilot.press("q")
        return app.return_code

    async def second():
        app = SimApp(state_dir=flash, link=False)
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: "2 basic actions done" in screen_text(app), what="the resumed game")
            assert app.sim.screen_name() == "stalk"
            await keys(pilot, "u")  # undo the swap, durably
            await until(pilot, lambda: "1 basic action done" in screen_text(app), what="the undo")
            await pilot.press("ctrl+c")
        return app.return_code

    assert run(first()) in (0, None)
    assert run(second()) in (0, None)


def test_serial_link_on_the_pty_answers_and_streams_live_events(tmp_path):
    serial = pytest.importorskip("serial")
    from firmware import codec

    def request(seq, obj):
        return codec.encode(bytes((0x51, seq & 0xFF, seq >> 8)) + json.dumps(obj).encode())

    async def go():
        app = SimApp(state_dir=str(tmp_path / "flash"))
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: app.sim.link_path is not None, what="the link")
            assert "link: %s" % app.sim.link_path in screen_text(app)
            port = serial.Serial(app.sim.link_path, 115200, timeout=0)
            rx = codec.Deframer()
            got = []

            async def read_frames(n, what):
                end = time.monotonic() + 10
                while len(got) < n and time.monotonic() < end:
                    await pilot.pause(0.03)
                    for b in port.read(4096):
                        p = rx.feed_byte(b)
                        if p is not None:
                            got.append(bytes(p))
                assert len(got) >= n, what

            try:
                port.write(request(1, {"op": "hello"}))
                await read_frames(1, "hello answer")
                assert got[0][0] == 0x52  # 'R'
                hello = json.loads(got[0][3:])
                assert hello["board"] == "sim-pico" and hello["proto"] >= 1

                await start_stalk_3p(pilot)
                port.write(request(2, {"op": "subscribe"}))
                await read_frames(2, "subscribe answer")
                assert got[1][0] == 0x52
                await keys(pilot, "space")  # plant, on the keyboard
                await read_frames(3, "the live event")
                assert got[2][0] == 0x50  # 'P': the plant, pushed live
            finally:
                port.close()

    run(go())


def test_ctrl_c_and_q_quit(tmp_path):
    async def go(key):
        app = SimApp(state_dir=str(tmp_path / key.replace("+", "_")), link=False)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause(0.1)
            await pilot.press(key)
            await pilot.pause(0.1)
            return app.is_running

    assert run(go("q")) is False
    assert run(go("ctrl+c")) is False


# -- the command ------------------------------------------------------------------


def bloomkeeper(*args, **kw):
    return subprocess.run([sys.executable, "-m", "host.cli"] + list(args), cwd=REPO, capture_output=True, text=True, timeout=60, **kw)


def test_sim_command_errors_are_one_line(tmp_path):
    r = bloomkeeper("sim", "--headless")
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "exactly one of --buttons" in r.stderr
    r = bloomkeeper("sim", "--board", "nope", "--state-dir", str(tmp_path))
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "unknown board" in r.stderr
    r = bloomkeeper("sim", "--buttons", "x.txt")
    assert r.returncode == 2 and "--headless" in r.stderr
    # no terminal (a script, CI): one line pointing at --headless, not a hung or garbled screen
    r = bloomkeeper("sim", "--state-dir", str(tmp_path), stdin=subprocess.DEVNULL)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "needs a terminal" in r.stderr


def test_missing_simulator_piece_is_one_line(monkeypatch, capsys):
    from host import cli

    monkeypatch.setitem(sys.modules, "host.board_sim.headless", None)  # as if the file were absent
    with pytest.raises(SystemExit) as exc:
        cli.main(["sim", "--headless", "--buttons", "whatever.txt"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "host.board_sim.headless" in err and "Traceback" not in err


def test_headless_modes_dispatch(monkeypatch, tmp_path):
    import types

    from host import cli

    calls = []
    monkeypatch.setitem(sys.modules, "host.board_sim.headless", types.SimpleNamespace(run_buttons=lambda p: calls.append(("buttons", p)) or 0))
    monkeypatch.setitem(sys.modules, "host.board_sim.serve_record", types.SimpleNamespace(run_record=lambda p: calls.append(("record", p)) or 0))
    assert cli.main(["sim", "--headless", "--buttons", "a.txt"]) == 0
    assert cli.main(["sim", "--headless", "--record", "b.jsonl"]) == 0
    assert calls == [("buttons", "a.txt"), ("record", "b.jsonl")]


# -- the real thing, in a real terminal ----------------------------------------------


@pytest.mark.tmux
@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux not installed (apt-get install -y tmux)")
def test_bloomkeeper_sim_in_tmux(tmp_path):
    """`bloomkeeper sim` in a real terminal: type keys, read the screen, quit
    with q, and the shell gets a clean terminal back."""
    flash = str(tmp_path / "flash")
    cmd = "cd %s && TERM=xterm-256color %s -m host.cli sim --state-dir %s; echo SIM-EXIT=$?" % (REPO, sys.executable, flash)
    t = Terminal(tmp_path, "bksim", 120, 40)
    try:
        t.keys(cmd, "Enter")
        t.wait("Setup: which game?")
        t.wait("link: /dev/")
        t.type_slowly(("1", "Space", "3", "Space"))
        t.wait("Setup: market-track start space")
        t.keys("Space")
        t.wait("Stalk Exchange, turn 1")
        t.keys("Space")
        t.wait("1 basic action done")
        t.keys("q")
        t.wait("SIM-EXIT=0")
        screen = t.pane()
        assert "LED ring" not in screen  # the alternate screen is gone: a clean terminal
        # again on the same flash: the game resumes; Ctrl-C quits as cleanly
        t.keys("clear; " + cmd, "Enter")
        t.wait("1 basic action done")
        t.keys("C-c")
        t.wait("SIM-EXIT=0")
        assert "LED ring" not in t.pane()
    finally:
        t.close()


# -- words that say what happened, and an 80x24 window --------------------------


def _fits(text, cols=80, rows=24):
    """The whole window is there: one header line, the ring box under it,
    and the legend's last line (with q quit) inside the window."""
    lines = text.split("\n")
    assert len(lines) <= rows and all(len(line) <= cols for line in lines)
    assert "link:" in lines[0] and lines[1].lstrip().startswith("\u256d"), "the header wraps:\n" + text
    assert "q quit" in text and "long press" in text, "the legend is cut off:\n" + text


def test_refusals_say_what_happened_and_clear_with_the_next_event(tmp_path):
    async def go():
        app = SimApp(state_dir=str(tmp_path / "flash"), link=False)
        async with app.run_test(size=(80, 24)) as pilot:
            await start_stalk_3p(pilot)
            blinks = app.sim.blinks
            await keys(pilot, "1")  # a flower before the two basic actions
            await until(pilot, lambda: app.sim.blinks > blinks, what="the error blink")
            assert "last error: dahlia short: harvest comes" in screen_text(app)
            assert "after the turn's two basic actions (2 red blinks)" in app.sim.error_text()
            await keys(pilot, "space")  # an accepted plant: the old refusal is gone
            await until(pilot, lambda: "last error: none" in screen_text(app), what="the error line to clear")

    run(go())


def test_window_fits_80x24_in_a_harvest_and_the_last_turn(tmp_path):
    async def go():
        app = SimApp(state_dir=str(tmp_path / "flash"), link=True)
        async with app.run_test(size=(80, 24)) as pilot:
            await until(pilot, lambda: app.sim.screen_name() == "setup_game", what="the setup screen")
            _fits(screen_text(app))
            await start_stalk_3p(pilot)
            await keys(pilot, "space", "m", "3", "3")  # two actions, then a harvest being counted
            await until(pilot, lambda: "harvest being counted" in screen_text(app), what="the harvest count")
            _fits(screen_text(app))
            assert "globemaster again = +1" in screen_text(app)  # the help follows the phase
            await keys(pilot, "space", "M", "2")  # confirm, then the crash from the menu: the last turn
            await until(pilot, lambda: "LAST TURN" in screen_text(app), what="the last turn")
            _fits(screen_text(app))
            assert "crash in" not in screen_text(app)

    run(go())


def test_window_fits_80x24_in_the_orchids_last_round(tmp_path):
    async def go():
        app = SimApp(state_dir=str(tmp_path / "flash"), link=False)
        async with app.run_test(size=(80, 24)) as pilot:
            app.sim.app.push_settings({"names": ["Annabelle", "Bartholomew", "Cyrus", "Dorothea", "Evangeline"]})
            await keys(pilot, "2", "space", "5", "space")  # Orchids, 5 players
            for k in ("5", "1", "1", "1", "1", "2"):  # Annabelle ends with 7 Seed cards
                await keys(pilot, k, "O")
            for _ in range(4):
                await keys(pilot, "1", "O")
            for k in range(7):  # seven orchids, 1 point and 1 Seed card each
                if k in (3, 6):  # the Orchid display holds 3 cards (ruling R14): the others take 1 meanwhile
                    for seat in range(1, 6):
                        await keys(pilot, *(("O",) if seat == 1 else ("1", "O")))
                        await until(pilot, lambda: app.sim.app.game.table.player == seat % 5, what="seat %d's turn" % (seat % 5 + 1))
                planted = app.sim.app.game.table.planted(0)
                await keys(pilot, "space", "space", "1", "space", "1", "space")
                await until(pilot, lambda: app.sim.app.game.table.planted(0) == planted + 1, what="orchid %d" % (k + 1))
            await keys(pilot, "O")
            await until(pilot, lambda: "LAST ROUND" in screen_text(app), what="the last round")
            _fits(screen_text(app))
            await keys(pilot, "space")  # a plant entry in the last round
            await until(pilot, lambda: app.sim.screen_name() == "plant_kind", what="the plant entry")
            _fits(screen_text(app))

    run(go())


@pytest.mark.tmux
@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux not installed (apt-get install -y tmux)")
def test_bloomkeeper_sim_fits_an_80x24_terminal(tmp_path):
    """A real 80x24 terminal: the header is one line and the legend's last
    line, with q quit, is on screen during a harvest."""
    cmd = "cd %s && TERM=xterm-256color %s -m host.cli sim --state-dir %s; echo SIM-EXIT=$?" % (
        REPO, sys.executable, tmp_path / "flash")
    t = Terminal(tmp_path, "bksim80", 80, 24)
    try:
        t.keys(cmd, "Enter")
        t.wait("Setup: which game?")
        t.type_slowly(("1", "Space", "3", "Space", "Space", "Space", "m", "1"))
        t.wait("harvest being counted")
        pane = t.pane().rstrip("\n")
        _fits(pane)
        top = pane.split("\n")[0]
        assert re.search(r"board id sim[0-9a-f]{12} ", top) and "flash: ..." in top, top  # the id whole, the path shortened
        t.keys("q")
        t.wait("SIM-EXIT=0")
    finally:
        t.close()


@pytest.mark.tmux
@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux not installed (apt-get install -y tmux)")
def test_bloomkeeper_sim_shows_a_refusal_whole_at_80x24(tmp_path):
    """A real 80x24 terminal: a refusal is said whole, with the blink count that
    matches the board (here a 4th orchid in one turn: "the Orchid display
    holds 3 cards", ruling R14, three red blinks), and the window still fits."""
    cmd = "cd %s && TERM=xterm-256color %s -m host.cli sim --state-dir %s; echo SIM-EXIT=$?" % (
        REPO, sys.executable, tmp_path / "flash")
    t = Terminal(tmp_path, "bksimrefuse", 80, 24)
    orchid = ("Space", "Space", "1", "Space", "1", "Space")  # plant: orchid, 1 point, 1 Seed card
    try:
        t.keys(cmd, "Enter")
        t.wait("Setup: which game?")
        t.type_slowly(("2", "Space", "2", "Space", "5", "O", "1", "O") + orchid * 4)  # Orchids, 2 players; takes 5 and 1
        t.wait("blinks)")
        pane = t.pane().rstrip("\n")
        _fits(pane)
        side = " ".join(line[31:].strip() for line in pane.split("\n")[1:15])  # the column beside the ring
        said = ("last error: ok short: the Orchid display holds 3 cards: refill comes after the turn (3 red blinks)")
        assert said in " ".join(side.split()), pane
        t.keys("q")
        t.wait("SIM-EXIT=0")
    finally:
        t.close()


def test_the_header_keeps_the_board_id_and_shortens_the_flash_path():
    from host.board_sim.face import header

    long = "~/.local/state/bloomkeeper/sim/pico"
    line = header("link: /dev/pts/12", "sim0123456789ab", 48, long, "Raspberry Pi Pico (simulated)", 78)
    assert line.startswith("link: /dev/pts/12  board id sim0123456789ab  brightness 48  flash: ...")
    assert line.split("  ")[3].endswith("/pico")
    head = line[: line.index("Raspberry")].rstrip()
    assert len(head) <= 78  # what must be seen fits; only the board's name may be cut
    short = header("link: /dev/pts/1", "sim0123456789ab", 48, "/tmp/f", "Pico", 78)
    assert "flash: /tmp/f" in short


@pytest.mark.tmux
@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux not installed (apt-get install -y tmux)")
def test_every_screen_says_what_it_means_at_80x24(tmp_path):
    """A real 80x24 terminal, Stalk Exchange from setup to a refused
    portfolio: the board id in the header, the menu's chosen item, a held
    flower's value, the portfolio's target count and a refusal in a
    player's words, each whole on screen, the window still fitting."""
    cmd = "cd %s && TERM=xterm-256color %s -m host.cli sim --state-dir %s; echo SIM-EXIT=$?" % (
        REPO, sys.executable, tmp_path / "flash")
    t = Terminal(tmp_path, "bkscreens", 80, 24)

    def seen(text):
        t.wait(text)
        pane = t.pane().rstrip("\n")
        _fits(pane)
        return pane

    try:
        t.keys(cmd, "Enter")
        t.wait("Setup: which game?")
        t.type_slowly(("1", "Space", "3", "Space", "Space"))
        pane = seen("crash: at least 14 more harvested tokens")
        assert re.search(r"board id sim[0-9a-f]{12} ", pane.split("\n")[0]) and "placeholder" not in pane
        t.type_slowly(("M",))
        seen("> 5 close the menu")
        t.type_slowly(("m",))
        seen("> 1 flush the Exchange: 1 token, once a game")
        t.type_slowly(("u", "!"))
        seen("held: dahlia, Stalk Value 0")
        t.type_slowly(("Space", "m", "M", "2", "O"))
        seen("0 of 12 tokens (3 players: 12 each)")
        t.type_slowly(("1", "Space"))
        pane = seen("Seat 1 entered 1 token")
        assert "every portfolio holds" in pane and "exactly 12 (2 red blinks)" in pane
        assert "portfolio_size" not in pane
        t.keys("q")
        t.wait("SIM-EXIT=0")
    finally:
        t.close()

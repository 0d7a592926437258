"""`bloomkeeper serve` in a real headless Chromium (docs/dashboard.md):
a simulated board (the real firmware on a pty,
tests/kit/dashboard_board.py) plays while the page is open; the test waits for
the page to show the new market value, the unplugged board, the board back,
and the final scores; then the plays history and a game's chart. Every step
leaves a screenshot under build/dashboard/ (artifacts; docs/dashboard/ holds
copies of some).

Chromium and its driver are Debian's `chromium` and `chromium-driver`
(.ci/run installs them); the test is skipped, saying so, only where they
are not installed.
"""

import os
import shutil

import pytest

from tests.kit import chromium, dashboard_kit
from tests.kit.dashboard_kit import state_of

SHOTS = os.path.join(dashboard_kit.REPO, "build", "dashboard")

pytestmark = [
    pytest.mark.browser,
    chromium.needed,
]


@pytest.fixture
def browser(tmp_path):
    d = chromium.start(tmp_path, (1280, 900))
    yield d
    d.quit()


def shot(d, name, width=1280, height=None):
    """Screenshot of the whole page at this width (artifact under build/)."""
    os.makedirs(SHOTS, exist_ok=True)
    d.set_window_size(width, 900)
    h = height or d.execute_script("return Math.max(document.body.scrollHeight, document.documentElement.scrollHeight)") + 160
    d.set_window_size(width, max(400, h))
    path = os.path.join(SHOTS, name)
    assert d.save_screenshot(path)
    return path


def test_the_page_follows_a_game_on_the_board_to_its_final_scores(browser, tmp_path):
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    d = browser
    # the live panel is replaced whole on every update: read it by script, and retry a stale element
    wait = WebDriverWait(d, 30, poll_frequency=0.05, ignored_exceptions=[StaleElementReferenceException])
    db = str(tmp_path / "plays.sqlite3")
    dashboard_kit.fill_db(db)
    board = dashboard_kit.Board(str(tmp_path)).start(fresh=True)
    serve = dashboard_kit.Serve(board.port, db)
    try:
        harvest, end, folios = dashboard_kit.live_presses()
        d.get(serve.url)

        def js(expr, *args):
            return d.execute_script("return " + expr, *args)

        def value(f):
            v = js("document.querySelector('[data-flower=' + arguments[0] + ']')?.textContent", f)
            return None if v is None else int(v)

        def link():
            return js("document.getElementById('link').dataset.link")

        wait.until(lambda _: link() == "live" and value("snowdrop") is not None)
        before = value("snowdrop")
        ring = d.find_elements(By.CSS_SELECTOR, "#ring circle[id^=p]")
        assert len(ring) == 24
        wait.until(lambda _: any(c.get_attribute("fill") != "#262626" for c in ring))  # the firmware's pixels arrived

        board.press(harvest)
        wait.until(lambda _: value("snowdrop") == before + 1)  # pushed by the server: the page was not reloaded
        leader = max(("dahlia", "daffodil", "globemaster", "snowdrop", "tulip"), key=value)
        assert js("document.querySelector('[data-flower=' + arguments[0] + '] + .mark .bust')?.textContent", leader) == "will bust"
        assert "LAST TURN" in js("document.getElementById('panel').textContent")
        # at 1280x900 the players and whose turn it is are above the fold
        for sel in (".whose", "table.players"):
            assert js("document.querySelector(arguments[0]).getBoundingClientRect().bottom <= window.innerHeight", sel), sel
        shot(d, "live.png")

        board.kill()
        wait.until(lambda _: link() == "disconnected")
        assert value("snowdrop") == before + 1  # the last state stays on screen
        shot(d, "live-disconnected.png")
        board.start()
        wait.until(lambda _: link() == "live")

        board.press(end + folios)
        wait.until(lambda _: js("document.getElementById('final') !== null"))
        final = state_of("stalk-2p.jsonl").state()["final"]
        shown = {k: int(v) for k, v in js("Array.from(document.querySelectorAll('#final [data-score]'), e => [e.dataset.score, e.textContent])")}
        assert shown == {r["name"]: r["score"] for r in final["players"]}
        # the score sheet: portfolio x final value per flower, adding up to each score
        sheet = js("Array.from(document.querySelectorAll('#sheet tr.total td b'), e => +e.textContent)")
        assert sheet == [r["score"] for r in final["players"]]
        assert js("document.querySelectorAll('#sheet [data-sheet]').length") == 5 * len(final["players"])
        shot(d, "live-final.png")

        d.set_window_size(412, 915)  # a phone: one column, nothing wider than the screen
        assert d.execute_script("return document.documentElement.scrollWidth <= window.innerWidth")
        shot(d, "live-phone.png", width=412)

        d.get(serve.url + "history")
        rows = d.find_elements(By.CSS_SELECTOR, "#plays tr.play")
        assert len(rows) == len(dashboard_kit.HISTORY) + 1
        played = [r for r in rows if "P1 39" in r.text]  # the game just played
        assert len(played) == 1 and not played[0].text.startswith("~")  # dated by the board's own clock
        shot(d, "history.png")
        d.set_window_size(412, 915)  # on a phone the wide tables scroll inside the page, the page does not
        assert d.execute_script("return document.documentElement.scrollWidth <= window.innerWidth")
        d.set_window_size(1280, 900)
        played[0].find_element(By.LINK_TEXT, "chart").click()
        wait.until(lambda _: d.find_elements(By.CSS_SELECTOR, "#chart svg"))
        shot(d, "game.png")
    finally:
        board.kill()
        err = serve.close()
    assert err == ""
    assert shutil.os.path.getsize(os.path.join(SHOTS, "live-final.png")) > 0


def test_an_orchids_game_shows_hands_flowers_and_the_final_scores(browser, tmp_path):
    """Oh My. Orchids! in its last round: the players' table, then the last
    turn ended on the board's buttons (hold OK) and the final scores."""
    from selenium.webdriver.support.ui import WebDriverWait

    d = browser
    wait = WebDriverWait(d, 30, poll_frequency=0.05)
    record = os.path.join(dashboard_kit.RECORDS, "orchids-2p.jsonl")
    board = dashboard_kit.Board(str(tmp_path), record=record, cut=1).start(fresh=True)
    serve = dashboard_kit.Serve(board.port, str(tmp_path / "plays.sqlite3"))
    try:
        d.get(serve.url)
        wait.until(lambda _: d.execute_script("return document.getElementById('link').dataset.link") == "live"
                   and d.execute_script("return document.querySelector('[data-flowers]') !== null"))
        st = state_of("orchids-2p.jsonl", cut=1).state()
        flowers = dict(d.execute_script(
            "return Array.from(document.querySelectorAll('[data-flowers]'), e => [e.dataset.flowers, +e.textContent])"))
        assert flowers == {n: len(st["players"][n]["flowers"]) for n in st["seats"]}
        assert "LAST ROUND" in d.execute_script("return document.getElementById('panel').textContent")
        shot(d, "orchids.png")
        d.set_window_size(412, 915)  # the widest table still fits a phone
        assert d.execute_script("return document.documentElement.scrollWidth <= window.innerWidth")
        d.set_window_size(1280, 900)
        board.press([(dashboard_kit.OK, "long")])  # end the last turn: the game is over
        wait.until(lambda _: d.execute_script("return document.getElementById('final') !== null"))
        final = state_of("orchids-2p.jsonl").state()["final"]
        shown = dict(d.execute_script(
            "return Array.from(document.querySelectorAll('#final [data-score]'), e => [e.dataset.score, +e.textContent])"))
        assert shown == {r["name"]: r["score"] for r in final["players"]}
        shot(d, "orchids-final.png")
    finally:
        board.kill()
        err = serve.close()
    assert err == ""

"""`bloomkeeper serve` in a real headless Chromium (docs/dashboard.md):
the live view is the Pico W's table page (host/dashboard/table.html); a simulated board (the real firmware on a pty,
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

from engine_lite import readout
from host.dashboard import views
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
    # the table is redrawn whole on every update: read it by script, and retry a stale element
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
            return js("document.getElementById('link')?.dataset.link")

        wait.until(lambda _: link() == "live" and value("snowdrop") is not None)
        before = value("snowdrop")
        ring = d.find_elements(By.CSS_SELECTOR, "#ring circle[id^=p]")
        assert len(ring) == 24
        wait.until(lambda _: any(c.get_attribute("fill") != "#262626" for c in ring))  # the firmware's pixels arrived

        board.press(harvest)
        wait.until(lambda _: value("snowdrop") == before + 1)  # pushed by the server: the page was not reloaded
        leader = max(("dahlia", "daffodil", "globemaster", "snowdrop", "tulip"), key=value)
        assert js("document.querySelector('[data-flower=' + arguments[0] + '] + td .mark')?.textContent", leader).endswith("will bust")
        assert "LAST TURN" in js("document.getElementById('table').textContent")
        # the round so far ends with the harvest just pressed
        assert js("Array.from(document.querySelectorAll('[data-round]')).pop().textContent").endswith(": harvest 1 snowdrop")
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
        # the score sheet: each player's portfolio x final value per flower, as the engine breaks the score down
        sheet = dict(js("Array.from(document.querySelectorAll('#final [data-final]'), e => [e.dataset.final, e.querySelector('.bd').textContent])"))
        assert sheet == {r["name"]: "; ".join("%s = %d" % (label, points) for label, points in r["breakdown"]) for r in final["players"]}
        shot(d, "live-final.png")

        d.set_window_size(412, 915)  # a phone: one column, nothing wider than the screen
        assert d.execute_script("return document.documentElement.scrollWidth <= window.innerWidth")
        shot(d, "live-phone.png", width=412)

        d.find_element(By.LINK_TEXT, "plays history").click()  # the live page's link
        wait.until(lambda _: d.find_elements(By.CSS_SELECTOR, "#plays tr.play"))
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
        wait.until(lambda _: d.execute_script("return document.getElementById('link')?.dataset.link") == "live"
                   and d.execute_script("return document.querySelector('[data-flowers]') !== null"))
        st = state_of("orchids-2p.jsonl", cut=1).state()
        flowers = dict(d.execute_script(
            "return Array.from(document.querySelectorAll('[data-flowers]'), e => [e.dataset.flowers, +e.textContent])"))
        assert flowers == {n: len(st["players"][n]["flowers"]) for n in st["seats"]}
        assert "LAST ROUND" in d.execute_script("return document.getElementById('table').textContent")
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


def test_the_live_page_draws_each_state_as_the_engine_gives_it(browser, tmp_path):
    """The table page at `/`, fed states straight from the engine through the
    real server (in this process, as tests/host/test_dashboard_door.py runs
    it): the connection in words, whose turn before the players before the
    market, every number where it belongs, "Crash in" only while there is a
    countdown, the marks of who would bust, the Orchids players' table, the
    round so far, and the final scores with their breakdowns."""
    import threading

    from host.dashboard import server
    from host.dashboard.live import Live

    d = browser
    db = str(tmp_path / "plays.sqlite3")
    dashboard_kit.fill_db(db, names=("stalk-2p.jsonl",))
    live = Live(views.live_state("none", "", None, "", False, []))
    srv = server.make_server("127.0.0.1:0", live, db)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    v = [0]

    def show(link, g, note=""):
        """Publish the game's state (a fresh version each time) and wait for the page to draw it."""
        v[0] += 1
        st = None if g is None else g.state()
        rnd = [] if g is None else readout.last_round([bytes(r) for r in g.log.records()][-readout.ROUND_MAX:], g.table)
        live.publish_state(dict(views.live_state(link, note, st, "game %d" % v[0], True, rnd)))
        WebDriverWait(d, 10, poll_frequency=0.02).until(
            lambda _: d.execute_script("return document.getElementById('link')?.dataset.link") == link if g is None
            else ("game %d" % v[0]) in d.execute_script("return document.getElementById('table').textContent"))
        return st, rnd

    def js(expr, *args):
        return d.execute_script("return " + expr, *args)

    try:
        from selenium.webdriver.support.ui import WebDriverWait

        d.get("http://127.0.0.1:%d/" % srv.server_address[1])
        WebDriverWait(d, 10).until(lambda _: js("document.getElementById('link')?.dataset.link") == "none")
        assert js("document.getElementById('link').textContent") == "no board attached: showing the plays history only"
        show("disconnected", None, "the board went away")
        assert js("document.getElementById('link').textContent").startswith("disconnected: waiting for the board")
        for record in ("stalk-5p-crash.jsonl", "stalk-5p-bag.jsonl"):
            total = len(state_of(record).events())
            for cut in (total - 1, total - 8, total - 20, total // 2, 3):
                g = state_of(record, cut=cut)
                st, rnd = show("live", g)
                values = dict(js("Array.from(document.querySelectorAll('[data-flower]'), e => [e.dataset.flower, +e.textContent])"))
                want = st["final"]["values"] if "final" in st else st["values"]
                assert values == want, (record, cut)
                marked = js("Array.from(document.querySelectorAll('[data-flower]')).filter(e => e.nextSibling.textContent.includes('bust')).map(e => e.dataset.flower)")
                assert marked == (st["final"]["busted"] if "final" in st else views.will_bust(st) if not st["game_over"] else [])
                text = js("document.getElementById('table').textContent")
                assert ("Crash in %d harvested" % st["tokens_until_crash"] in text) if st["tokens_until_crash"] is not None else "Crash in" not in text
                assert ("LAST TURN" in text) == bool(st["end_triggered"] and not st["game_over"])
                if not st["game_over"]:
                    order = js("[document.querySelector('.whose'), document.querySelector('table.players'), document.querySelector('.market')].map(e => e.getBoundingClientRect().top)")
                    assert order == sorted(order)
                    tokens = dict(js("Array.from(document.querySelectorAll('[data-tokens]'), e => [e.dataset.tokens, +e.textContent])"))
                    assert tokens == st["tokens"]
                    facts = dict(js("Array.from(document.querySelectorAll('[data-fact]'), e => [e.dataset.fact, +e.textContent])"))
                    assert facts == {k: st[k] for k in ("bag", "exchange", "harvested")}
                assert js("document.querySelectorAll('[data-round]').length") == len(rnd)
                assert rnd or len(g.log) == 1  # only a game of its start record alone has no round yet
        for cut in (30, 3, 0):
            g = state_of("orchids-5p.jsonl", cut=cut)
            st, rnd = show("live", g)
            if "final" in st:
                scores = dict(js("Array.from(document.querySelectorAll('#final [data-score]'), e => [e.dataset.score, +e.textContent])"))
                assert scores == {r["name"]: r["score"] for r in st["final"]["players"]}
            rows = js("Array.from(document.querySelectorAll('table.players tr')).slice(1).map(r => Array.from(r.querySelectorAll('td.num'), c => +c.textContent))")
            assert rows == [[st["players"][n]["hand"], len(st["players"][n]["flowers"]), st["players"][n]["points"], st["players"][n]["composted"]] for n in st["seats"]]
            assert ("LAST ROUND" in js("document.getElementById('table').textContent")) == (st["last_round"] and not st["game_over"])
            said = js("Array.from(document.querySelectorAll('[data-round]'), e => e.textContent)")
            assert said[-1].startswith(rnd[-1]["who"] + ": ") and len(said) == len(rnd)
    finally:
        srv.shutdown()
        srv.server_close()
        t.join(10)

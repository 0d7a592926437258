"""`bloomkeeper serve` without a browser (docs/dashboard.md): the live panel, the
market chart and the statistics as functions; the server's routes and
one-line errors; and the live view end to end over a real pty against the
real firmware (tests/kit/dashboard_board.py), through an unplug and replug.
The same flow in a real Chromium: tests/host/test_dashboard_browser.py.
"""

import re
import socket
import subprocess
import sys
import urllib.error
import urllib.request

import xml.etree.ElementTree as ET

import pytest

import engine_lite
from engine_lite.tables import FLOWERS
from host.dashboard import charts, history, store, views
from tests.kit import dashboard_kit
from tests.kit.dashboard_kit import state_of

pytestmark = pytest.mark.slow  # a dashboard server per test, a simulated board in its own process


# -- the live panel -----------------------------------------------------------

def test_will_bust_marks_every_leading_flower():
    """Rulebook: "The highest valued flower loses half of its value
    rounded-up ... In the event of a tie, ALL the tied Flower Stalks bust";
    with every value at 0 nothing busts (ruling R5). The page's state asks
    the rule (engine_lite.stalk.bust) and names exactly those flowers (the
    page marks them: tests/host/test_dashboard_browser.py)."""
    st = state_of("stalk-2p.jsonl", cut=10).state()
    for values, leaders in (((4, 3, 2, 6, 8), ["tulip"]), ((5, 1, 5, 0, 2), ["dahlia", "globemaster"]), ((0,) * 5, [])):
        st["values"] = dict(zip(FLOWERS, values))
        assert views.will_bust(st) == leaders
        assert views.table_doc(st)["will_bust"] == leaders


@pytest.mark.parametrize("name", ["stalk-4p.jsonl", "orchids-2p.jsonl"])
def test_the_page_ring_is_the_boards_ring(name):
    """The mirror (host/dashboard/board.RingMirror) fed the board's records,
    after each event and after an undo, lights exactly the pixels of a
    simulated board that was played the same events through its App."""
    from host.dashboard.board import RingMirror
    from host.board_sim.serve_record import load_into
    from host.board_sim.board import SimBoard
    from host.board_sim.face import display_rgb

    now = [1000]
    clock = lambda: now[0]  # noqa: E731 - one fixed time for both boards
    events = state_of(name).events()
    mirror = RingMirror(clock=clock)
    for k in (1, 2, len(events) // 2, len(events) // 2 - 1, len(events)):  # k-1 after k: an undo
        board = SimBoard(link=False, clock=clock).start()
        load_into(board.app, events[:k])
        g = engine_lite.Game()
        for ev in events[:k]:
            g.apply(ev)
        mirror.update(g)
        for t in (1000, 1377, 2600):
            now[0] = t
            board.tick()
            want = ["#%02x%02x%02x" % display_rgb(p, board.brightness()) for p in board.pixels()]
            assert mirror.frame() == want, (k, t)
    assert any(c != "#000000" for c in want)


def test_link_states_are_said_in_words():
    assert views.link_words("none") == "no board attached: showing the plays history only"
    assert views.live_state("disconnected", "lost", None, "", False, [])["said"].startswith("disconnected")


# -- the market chart ------------------------------------------------------------

@pytest.mark.parametrize("name", ["stalk-2p.jsonl", "stalk-5p-crash.jsonl", "stalk-5p-bag.jsonl"])
def test_market_series_is_the_engines_values_turn_by_turn(name):
    g = state_of(name)
    st = g.state()
    s = charts.market_series(g.events())
    assert {f: v[-1] for f, v in s["values"].items()} == st["values"]
    assert s["turns"] == list(range(len(s["turns"])))
    assert len(s["turns"]) == 1 + sum(1 for e in g.events() if e["ev"] == "end_turn")
    assert s["end"][1] == st["end_triggered"] and 0 < s["end"][0] <= s["turns"][-1]
    assert s["busted"] == st["final"]["busted"]
    for f in FLOWERS:  # harvests only ever add to a Stalk Value
        assert s["values"][f] == sorted(s["values"][f])


def test_market_chart_is_an_svg_with_the_end_marked():
    for name, words in (("stalk-5p-crash.jsonl", "market crash"), ("stalk-5p-bag.jsonl", "bag empty")):
        svg = charts.market_svg(state_of(name).events(), "title")
        assert svg.startswith("<svg") and svg.endswith("</svg>") and ">%s</text>" % words in svg
        ET.fromstring(svg)  # well-formed: it is written inline in the page


def test_market_chart_is_dark_and_draws_the_bust():
    """The page is dark: so is the chart (no white figure); the busted flower's
    fall to half its value is drawn at the end, with its numbers."""
    st = state_of("stalk-4p.jsonl")
    svg = charts.market_svg(st.events(), "title")
    assert "#ffffff" not in svg.lower() and 'fill="#111111"' in svg
    fin = st.state()["final"]
    (f,) = fin["busted"]
    assert ">%s busts %d -&gt; %d</text>" % (f, fin["before_bust"][f], fin["values"][f]) in svg
    assert ">%s %d (busted)</text>" % (f, fin["values"][f]) in svg, "the key gives its final value"


def test_market_chart_tells_the_flowers_apart_without_their_colours():
    """Colour-blind safe: each flower has its own marker shape, drawn at
    every rise of its line and beside its name and last value, and every
    line, marker and name is there for each flower."""
    g = state_of("stalk-5p-crash.jsonl")
    svg = ET.fromstring(charts.market_svg(g.events(), "title"))
    s = charts.market_series(g.events())
    ns = "{http://www.w3.org/2000/svg}"
    paths = svg.findall(ns + "path")
    texts = [t.text for t in svg.findall(ns + "text")]
    assert len(set(charts.MARKERS)) == len(FLOWERS)
    for i, f in enumerate(FLOWERS):
        colour = charts.flower_colour(i)
        marks = [p for p in paths if p.get("d") == charts.MARKERS[i]]
        rises = sum(1 for a, b in zip(s["values"][f], s["values"][f][1:]) if b != a)
        assert len(marks) == rises + 1 and all(p.get("fill") == colour for p in marks), f
        assert [p for p in paths if p.get("stroke") == colour and p.get("fill") == "none"], "its line"
        last = s["values"][f][-1] // (2 if f in s["busted"] else 1)
        assert "%s %d%s" % (f, last, " (busted)" if f in s["busted"] else "") in texts


def test_market_chart_of_a_game_in_progress_has_no_end_and_no_bust():
    g = engine_lite.Game()
    for r in dashboard_kit.records_of("stalk-5p-crash.jsonl")[:30]:
        g.apply_record(r)
    svg = charts.market_svg(g.events(), "title")
    ET.fromstring(svg)
    assert "busts" not in svg and "market crash" not in svg and "(busted)" not in svg
    ET.fromstring(charts.market_svg([], ""))  # no events yet: an empty plot, not a failure


def test_market_chart_words_are_text_not_markup():
    svg = charts.market_svg(state_of("stalk-2p.jsonl").events(), "Tue 1 Dec: <b>Ke$ha</b> & A_$AP")
    assert ">Tue 1 Dec: &lt;b&gt;Ke$ha&lt;/b&gt; &amp; A_$AP</text>" in svg and "<b>" not in svg
    ET.fromstring(svg)


# -- statistics ----------------------------------------------------------------

def _play(game, scores, date="2026-11-01 20:00:00"):
    rows = sorted(scores.items(), key=lambda kv: -kv[1])
    top = rows[0][1]
    final = {"players": [{"name": n, "score": s, "rank": 1 + sum(1 for _, t in rows if t > s), "winner": s == top} for n, s in rows]}
    return {"board": "b", "game_id": date, "date": date, "game": game, "players": list(scores), "events": [], "over": True, "final": final}


def test_dates_are_local_time_and_the_zone_when_asked(monkeypatch):
    import time

    monkeypatch.setenv("TZ", "Europe/Paris")
    time.tzset()
    try:
        p = {"date": "2026-12-01T18:20:13Z"}
        assert history.date_words(p) == '<span class="date" title="2026-12-01T18:20:13Z UTC">2026-12-01 19:20</span>'
        assert history.date_words(dict(p, date_estimated=True), zone=True).endswith(">~2026-12-01 19:20 CET</span>")
    finally:
        monkeypatch.undo()
        time.tzset()


def test_stats_count_plays_wins_rates_averages_and_best_by_game_and_table_size():
    plays = [
        _play("stalk-exchange", {"Ann": 40, "Bo": 30}),
        _play("stalk-exchange", {"Ann": 20, "Bo": 35}),
        _play("stalk-exchange", {"Ann": 50, "Bo": 10, "Cy": 50}),  # a shared win
        _play("oh-my-orchids", {"Ann": 60, "Bo": 70}),
        {"board": "b", "game_id": "x", "date": "d", "game": "stalk-exchange", "players": ["Ann", "Bo"], "events": [], "over": False},
    ]
    rows = {(r["player"], r["game"], r["players"]): r for r in history.stats(plays)}
    ann2 = rows[("Ann", "stalk-exchange", 2)]
    assert (ann2["plays"], ann2["wins"], ann2["win_rate"], ann2["avg"], ann2["best"]) == (2, 1, 0.5, 30, 40)
    ann = rows[("Ann", "stalk-exchange", "all")]
    assert (ann["plays"], ann["wins"], ann["best"]) == (3, 2, 50) and ann["avg"] == pytest.approx(110 / 3)
    cy = rows[("Cy", "stalk-exchange", 3)]
    assert (cy["plays"], cy["wins"], cy["win_rate"]) == (1, 1, 1.0)
    bo = rows[("Bo", "oh-my-orchids", 2)]
    assert (bo["plays"], bo["wins"], bo["best"]) == (1, 1, 70)
    # stalk: Ann, Bo x (2p, 3p, all), Cy x 3p; orchids: Ann, Bo x 2p (one table size: no "all" row repeating it)
    assert len(rows) == 2 * 3 + 1 + 2 * 1
    assert ("Cy", "stalk-exchange", "all") not in rows and ("Bo", "oh-my-orchids", "all") not in rows


# -- the server ------------------------------------------------------------------

@pytest.fixture(scope="module")
def history_server(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("serve")
    db = str(tmp / "plays.sqlite3")
    dashboard_kit.fill_db(db)
    s = dashboard_kit.Serve("none", db)
    yield s, db
    s.close()


def test_history_lists_every_game_with_date_players_scores_and_winner(history_server):
    s, db = history_server
    code, ctype, body = s.get("/history")
    assert code == 200 and ctype.startswith("text/html")
    plays = store.read_plays(db)
    assert len(plays) == len(dashboard_kit.HISTORY) and body.count('<tr class="play">') == len(plays)
    for p in plays:
        row = [r for r in re.findall(r'<tr class="play">(.*?)</tr>', body) if 'href="/game?play=%s"' % p["play"] in r]
        assert len(row) == 1
        assert 'title="%s UTC"' % p["date"] in row[0]  # shown in local time, the stored UTC on hover
        assert '<span class="date" title=' in row[0]
        for r in p["final"]["players"]:
            assert "%s <b>%d</b>" % (r["name"], r["score"]) in row[0]
        winners = [r["name"] for r in p["final"]["players"] if r["winner"]]
        assert re.search(r'class="winner-cell">%s<' % ", ".join(winners), row[0])
    assert 'id="stats"' in body


def test_game_page_has_the_market_chart_for_stalk_exchange(history_server):
    s, db = history_server
    for p in store.read_plays(db):
        code, _, body = s.get(history.game_link(p))
        assert code == 200
        assert ('id="chart"><svg' in body) == (p["game"] == "stalk-exchange")
        assert dashboard_kit.shown_scores(body) == {r["name"]: r["score"] for r in p["final"]["players"]}


def test_without_a_board_the_live_page_says_so(history_server):
    s, _ = history_server
    code, _, body = s.get("/")
    assert code == 200 and '<div id="table">' in body and '<a href="/history">' in body  # the table page, the history a click away
    st = s.state()
    assert st["link"] == "none" and st["said"] == "no board attached: showing the plays history only" and st["table"] is None


@pytest.mark.parametrize(
    "method, path, code, words",
    [
        ("GET", "/nope", 404, "no page /nope"),
        ("GET", "/game", 400, "needs the parameter(s) play"),
        ("GET", "/game?play=9999", 404, "no play 9999"),
        ("GET", "/history?x=1", 400, "unknown parameter 'x'"),
        ("GET", "/game?play=1&play=2", 400, "given 2 times"),
        ("GET", "/game?play=%ff", 400, "malformed query"),
        ("POST", "/", 405, "only answers GET"),
        ("BREW", "/", 405, "only answers GET"),
    ],
)
def test_bad_requests_get_a_4xx_with_one_line(history_server, method, path, code, words):
    s, _ = history_server
    req = urllib.request.Request(s.url + path.lstrip("/"), method=method, data=b"x" if method == "POST" else None)
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen(req, timeout=10)
    body = e.value.read().decode()
    assert e.value.code == code and e.value.headers["Content-Type"].startswith("text/plain")
    assert body.count("\n") == 1 and body.startswith(str(code)) and words in body and "Traceback" not in body


def test_a_garbled_request_line_gets_a_one_line_400(history_server):
    s, _ = history_server
    host, port = re.match(r"http://([^:]+):(\d+)/", s.url).groups()
    with socket.create_connection((host, int(port)), timeout=10) as c:
        c.sendall(b"GET\r\n\r\n")
        reply = c.recv(4096).decode()
    body = reply.partition("\r\n\r\n")[2] if reply.startswith("HTTP/") else reply  # no version: HTTP/0.9 style
    assert body.startswith("400 Bad request syntax") and body.count("\n") == 1, reply


def bk(*args):
    return subprocess.run([sys.executable, "-m", "host.cli", *args], cwd=dashboard_kit.REPO, capture_output=True, text=True, timeout=60)


def test_refuses_a_port_in_use_and_bad_arguments_with_one_line(history_server, tmp_path):
    s, db = history_server
    http = re.match(r"http://(\S+)/", s.url).group(1)
    for args, words in (
        (["--http", http], "the port is in use"),
        (["--http", "8765"], "give HOST:PORT"),
        (["--http", "127.0.0.1:99999"], "give HOST:PORT"),
        (["--db", str(tmp_path)], "cannot open the database"),
    ):
        r = bk("serve", "--port", "none", "--db", db, *args)
        assert r.returncode == 2 and r.stderr.count("\n") == 1 and words in r.stderr, (args, r.stderr)
        assert r.stdout == ""


# -- live, end to end (no browser) -------------------------------------------------

def test_live_view_follows_the_board_records_every_event_and_survives_an_unplug(tmp_path):
    """The board plays while the dashboard watches; it is unplugged (its
    process killed: a power cut) mid-game and plugged back in: the view says
    disconnected, resumes, and the database ends with the whole game."""
    db = str(tmp_path / "plays.sqlite3")
    board = dashboard_kit.Board(str(tmp_path)).start(fresh=True)
    serve = dashboard_kit.Serve(board.port, db)
    try:
        harvest, end, folios = dashboard_kit.live_presses()
        before = serve.wait_state(lambda s: s["link"] == "live" and s["table"] is not None)["table"]["values"]
        board.press(harvest)
        st = serve.wait_state(lambda s: s["table"]["values"]["snowdrop"] == before["snowdrop"] + 1)
        # the round so far ends with the harvest, the player to play's
        assert st["round"][-1] == {"ev": "harvest", "flower": "snowdrop", "count": 1, "who": st["table"]["current_player"]}
        assert st["ring"] is not None and len(st["ring"]) == 24
        board.kill()
        serve.wait_state(lambda s: s["link"] == "disconnected")
        board.start()
        st = serve.wait_state(lambda s: s["link"] == "live")
        assert st["table"]["values"]["snowdrop"] == before["snowdrop"] + 1
        board.press(end + folios)
        st = serve.wait_state(lambda s: "final" in (s["table"] or {}))
        final = state_of("stalk-2p.jsonl").state()["final"]
        assert st["table"]["final"] == final
        plays = store.read_plays(db)
        assert len(plays) == 1
        stored, played = plays[0]["events"], state_of("stalk-2p.jsonl").events()
        # the board stamps its start record with the game's identity and start
        assert set(stored[0]) - set(played[0]) == {"nonce", "at"} and isinstance(stored[0]["nonce"], int)
        assert {k: v for k, v in stored[0].items() if k not in ("nonce", "at")} == played[0]
        assert stored[1:] == played[1:] and plays[0]["date"] == stored[0]["at"] and not plays[0]["date_estimated"]
    finally:
        board.kill()
        err = serve.close()
    assert err == ""


# -- the next game's names, from the live page ----------------------------------


def post_names(serve, fields, token=None, origin=None):
    """POST the live page's names form; (status, body)."""
    from urllib.parse import urlencode

    _, _, page = serve.get("/")
    tok = re.search(r'name="token" value="([^"]+)"', page).group(1) if token is None else token
    req = urllib.request.Request(serve.url + "names", data=urlencode(dict(fields, token=tok)).encode(), method="POST",
                                 headers={"Content-Type": "application/x-www-form-urlencoded"})
    if origin is not None:
        req.add_header("Origin", origin)
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def test_the_names_form_sets_the_next_games_names_through_the_boards_link(tmp_path):
    """The live page has a form for the next game's names; it is sent over the
    link `serve` holds (the same settings call as `names`), so `names` itself
    works too while serve holds the port. Bad input: one line, nothing changed."""
    db = str(tmp_path / "plays.sqlite3")
    board = dashboard_kit.Board(str(tmp_path)).start(fresh=True)
    serve = dashboard_kit.Serve(board.port, db)
    try:
        serve.wait_state(lambda s: s["link"] == "live")
        _, _, page = serve.get("/")
        assert '<form class="names" id="names" method="post" action="/names">' in page
        code, body = post_names(serve, {"seat1": "Lily", "seat2": "Calla"})
        assert code == 200 and "names on the board: Lily, Calla; seats 3, 4, 5 keep the default" in body
        for fields, token, origin, want, words in (
            ({"seat1": "x" * 13}, None, None, 400, "must be 1-12 printable ASCII characters"),
            ({"seat1": "Ann", "seat3": "Cy"}, None, None, 400, "seat 2 is empty"),
            ({"seat1": ""}, None, None, 400, "give at least the first seat's name"),
            ({"seat1": "Ann"}, "forged", None, 403, "token"),
            ({"seat1": "Ann"}, None, "http://evil.example", 403, "own page only"),
            ({"seat1": "Ann", "seat9": "Zed"}, None, None, 400, "unknown or repeated form field"),
        ):
            code, body = post_names(serve, fields, token, origin)
            assert code == want and body.count("\n") == 1 and words in body, (fields, body)
        # each page load has its own token, good once; a fourth change in a row waits (two were sent above)
        t1, t2 = (re.search(r'name="token" value="([^"]+)"', serve.get("/")[2]).group(1) for _ in range(2))
        assert t1 != t2
        assert post_names(serve, {"seat1": "Ann"}, t1)[0] == 200
        code, body = post_names(serve, {"seat1": "Bo"}, t1)
        assert code == 403 and "used already" in body, body
        code, body = post_names(serve, {"seat1": "Bo"}, t2)
        assert code == 429 and "wait" in body and body.count("\n") == 1, body
        # `names` while serve holds the port: through serve's relay
        r = bk("names", "--port", board.port, "Iris", "Rose", "Fern")
        assert r.returncode == 0 and r.stdout.startswith("names on the board: Iris, Rose, Fern; seats 4, 5 keep"), r.stderr
        r = bk("names", "--port", board.port, "")
        assert r.returncode == 2 and r.stderr.count("\n") == 1 and "must be 1-12" in r.stderr
    finally:
        err = serve.close()
        board.kill()
    # each refused post is one line on the server's terminal (no traceback), nothing else
    lines = err.splitlines()
    assert len(lines) == 8 and all(line.startswith("bloomkeeper: serve: client 127.0.0.1: 4") for line in lines), err
    # what the board holds: the last good list (the refusals changed nothing)
    board.start()
    from host.sync.link import connect

    link = connect(board.port, cap=60)
    try:
        assert link.settings()["names"] == ["Iris", "Rose", "Fern"]
    finally:
        link.close()
        board.kill()

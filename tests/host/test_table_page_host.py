"""The host dashboard's live view is the Pico W's table page, the one copy
(host/dashboard/table.html): at `/` with the history link (and, for this
machine with a board, the names form) in its one slot, at /table byte for
byte; its event stream's state events carry the table as the board's
server sends it, and the round so far as the board's server counts it."""

import pytest

import engine_lite
from engine_lite import readout
from firmware import table_page, table_server
from host.dashboard import pages, views
from tests.kit import dashboard_kit
from tests.kit.dashboard_kit import state_of


@pytest.fixture(scope="module")
def serve(tmp_path_factory):
    db = str(tmp_path_factory.mktemp("table") / "plays.sqlite3")
    dashboard_kit.fill_db(db)
    s = dashboard_kit.Serve("none", db)
    yield s
    s.close()


def test_the_dashboard_serves_the_boards_page_byte_for_byte(serve):
    code, ctype, body = serve.get("/table")
    assert code == 200 and ctype.startswith("text/html")
    assert body.encode("utf-8") == table_page.PAGE
    assert serve.state().get("table") is None  # no board: the page says "waiting"


def test_the_live_view_is_the_same_page_with_the_dashboards_links_in_its_slot(serve):
    code, ctype, body = serve.get("/")
    page = table_page.PAGE.decode("utf-8")
    assert page.count(pages.HOST_SLOT) == 1
    before, _, after = page.partition(pages.HOST_SLOT)
    assert code == 200 and body.startswith(before) and body.endswith(after)
    assert body[len(before): len(body) - len(after)] == '<nav><a href="/history">plays history</a></nav>'  # no board: no names form


@pytest.mark.parametrize("name", ["stalk-2p.jsonl", "stalk-5p-crash.jsonl", "orchids-2p.jsonl", "orchids-5p.jsonl"])
def test_the_round_so_far_names_whose_turn_each_event_was(name):
    """After every event of a whole game: the round is the events of the
    turn in play and the n-1 before it (n end-of-turns back stops it), at
    most ROUND_MAX, and each event's player is the one the engine had to
    play when it was applied (a portfolio: its own player)."""
    g = engine_lite.Game()
    actors = []
    for text in open(dashboard_kit.RECORDS + "/" + name):
        if not text.strip():
            continue
        actors.append(None if g.table is None else g.table.names[g.table.player])
        g.apply(readout.parse_line(text))
        recs = [bytes(r) for r in g.log.records()]
        shown = readout.last_round(recs[-readout.ROUND_MAX:], g.table)
        k = len(shown)
        events = g.events()[len(recs) - k:]
        assert [dict(e, who=e.get("player", a)) for e, a in zip(events, actors[len(recs) - k:])] == shown
        if k < readout.ROUND_MAX and len(recs) - k > 1:  # neither capped nor reaching the start: n turns back it stopped
            assert recs[len(recs) - k - 1][0] == engine_lite.record.OP_END_TURN
            assert sum(e["ev"] == "end_turn" for e in shown) == g.table.n - 1


def test_the_board_keeps_as_many_records_as_the_round_names():
    assert table_server.ROUND_MAX == readout.ROUND_MAX


def test_the_table_doc_is_the_state_with_who_would_bust():
    g = state_of("stalk-5p-crash.jsonl", cut=12)
    st = g.state()
    doc = views.table_doc(st)
    assert doc["will_bust"] == views.will_bust(st) and {k: v for k, v in doc.items() if k != "will_bust"} == st
    over = state_of("stalk-5p-crash.jsonl").state()
    assert views.table_doc(over) == over and views.table_doc(None) is None

"""The host dashboard serves the Pico W's table page, the one copy
(host/dashboard/table.html), at /table on its own event stream, whose state
events carry the table as the board's server sends it."""

import pytest

from firmware import table_page
from host.dashboard import views
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


def test_the_table_doc_is_the_state_with_who_would_bust():
    g = state_of("stalk-5p-crash.jsonl", cut=12)
    st = g.state()
    doc = views.table_doc(st)
    assert doc["will_bust"] == views.will_bust(st) and {k: v for k, v in doc.items() if k != "will_bust"} == st
    over = state_of("stalk-5p-crash.jsonl").state()
    assert views.table_doc(over) == over and views.table_doc(None) is None

"""The dashboard as a good loopback citizen: what the server refuses and
how (docs/dashboard.md, "What the server refuses").

The server here is the real DashboardServer on a real loopback socket, in a
thread of the test's process (so its deadlines can be shortened for the
test and its log read); clients are raw sockets and urllib.
"""

import json
import socket
import struct
import threading
import time

import pytest

from host.dashboard import charts, server, store
from host.dashboard.live import Live
from host.errors import UserError
from tests.kit import dashboard_kit


@pytest.fixture
def serve(tmp_path, monkeypatch):
    running = []

    def start(http="127.0.0.1:0", **limits):
        for k, v in limits.items():
            monkeypatch.setattr(server, k, v)
        db = str(tmp_path / "plays.sqlite3")
        dashboard_kit.fill_db(db, names=("stalk-2p.jsonl",))
        srv = server.make_server(http, Live({"link": "none", "said": "none"}), db)
        t = threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        t.start()
        running.append((srv, t))
        return srv

    yield start
    for srv, t in running:
        srv.shutdown()
        srv.server_close()
        t.join(10)


def exchange(srv, data, timeout=30):
    """Send raw bytes, read until the server closes: the whole answer."""
    host, port = srv.server_address[:2]
    with socket.create_connection((host, port), timeout=timeout) as c:
        c.sendall(data)
        out = b""
        while True:
            got = c.recv(65536)
            if not got:
                return out.decode("utf-8", "replace")
            out += got


def get(srv, path, host=None, method="GET"):
    port = srv.server_address[1]
    return exchange(srv, ("%s %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n"
                          % (method, path, host if host is not None else "127.0.0.1:%d" % port)).encode())


def status(reply):
    return int(reply.split(" ", 2)[1])


def test_a_foreign_host_header_is_refused_with_421(serve):
    """DNS rebinding: a page of evil.example whose name now points at
    127.0.0.1 sends Host: evil.example; the plays are not its to read."""
    srv = serve()
    port = srv.server_address[1]
    for host in ("evil.example", "evil.example:%d" % port, "127.0.0.1.evil.example", ""):
        r = get(srv, "/history", host=host)
        assert status(r) == 421 and "Host" in r and "Ann" not in r, (host, r[:200])
    for host in ("127.0.0.1:%d" % port, "localhost:%d" % port, "LOCALHOST", "[::1]:%d" % port):
        assert status(get(srv, "/history", host=host)) == 200, host


def test_a_server_bound_by_name_answers_for_the_name_and_its_address(serve):
    srv = serve("localhost:0")
    port = srv.server_address[1]
    for host in ("localhost:%d" % port, "%s:%d" % (srv.server_address[0], port)):
        assert status(get(srv, "/state.json", host=host)) == 200, host
    assert status(get(srv, "/state.json", host="evil.example")) == 421


def test_405_names_the_allowed_methods_and_head_is_answered(serve):
    srv = serve()
    for method in ("POST", "PUT", "DELETE", "PATCH", "OPTIONS", "BREW"):
        r = get(srv, "/history", method=method)
        assert status(r) == 405 and "\r\nAllow: GET, HEAD\r\n" in r and "method %s not allowed on /history" % method in r, r
    r = get(srv, "/history", method="HEAD")
    assert status(r) == 200 and r.endswith("\r\n\r\n"), "HEAD: the headers, no body"
    assert status(get(srv, "/nope", method="POST")) == 404


def test_a_post_route_can_be_added_to_the_route_table(serve, monkeypatch):
    """The method handling is one table: a page that takes POST is one
    entry (the names form does this), and its Allow header says so."""
    monkeypatch.setitem(server.ROUTES, "/history", {"GET": "page_history", "POST": "page_state"})
    srv = serve()
    r = get(srv, "/history", method="PUT")
    assert status(r) == 405 and "\r\nAllow: GET, HEAD, POST\r\n" in r
    assert status(get(srv, "/history", method="POST")) == 200


@pytest.mark.slow
def test_a_half_sent_request_is_closed_after_the_request_deadline(serve, capsys):
    """Slowloris: a request line and no end of headers. The connection is
    shut when the deadline passes, and its thread ends."""
    srv = serve(REQUEST_S=0.5)
    r = exchange(srv, b"GET /history HTTP/1.1\r\nHost: 127.0.0.1\r\nX-a: 1\r\n", timeout=30)
    assert "Ann" not in r
    before = threading.active_count()
    socks = [socket.create_connection(srv.server_address[:2], timeout=30) for _ in range(20)]
    for s in socks:
        s.sendall(b"GET / HTTP/1.1\r\n")
    for s in socks:
        assert s.recv(100) == b"", "shut by the server, nothing answered"
        s.close()
    assert status(get(srv, "/history")) == 200
    assert threading.active_count() <= before + 2, "the stalled connections' threads ended"
    assert "Traceback" not in capsys.readouterr().err


def test_connections_beyond_the_cap_get_a_503_and_the_server_keeps_serving(serve):
    srv = serve(MAX_CONNECTIONS=3, KEEPALIVE_S=0.1)  # a stream sees its client gone at its next keep-alive
    idle = [socket.create_connection(srv.server_address[:2], timeout=30) for _ in range(3)]
    for s in idle:
        s.sendall(b"GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")  # an event stream: holds its slot
        assert s.recv(100).startswith(b"HTTP/1.0 200")
    r = get(srv, "/history")
    assert status(r) == 503 and "too many connections" in r
    for s in idle:
        s.close()
    for _ in range(300):
        r = get(srv, "/history")
        if status(r) == 200:
            break
        time.sleep(0.05)
    assert status(r) == 200, "the slots come back when the streams close"


def test_a_client_reset_is_one_log_line_not_a_traceback(serve, capsys):
    srv = serve()
    for _ in range(5):
        s = socket.create_connection(srv.server_address[:2], timeout=30)
        s.sendall(b"GET /history HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # close = RST
        s.close()
    assert status(get(srv, "/history")) == 200
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert all(line.startswith("bloomkeeper: serve: ") for line in err.splitlines()), err


def test_an_ipv6_loopback_address_is_served(serve):
    try:  # does this machine have ::1 at all? (a container may not)
        probe = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
        probe.bind(("::1", 0))
        probe.close()
    except OSError as err:
        pytest.skip("no ::1 on this machine: %s" % err)
    srv = serve("[::1]:0")
    port = srv.server_address[1]
    with socket.create_connection(("::1", port), timeout=30) as c:
        c.sendall(("GET /state.json HTTP/1.1\r\nHost: [::1]:%d\r\nConnection: close\r\n\r\n" % port).encode())
        r = c.recv(65536).decode()
    assert status(r) == 200


def test_http_addresses_are_parsed_with_ipv6_brackets():
    assert server.parse_http("[::1]:8765") == ("::1", 8765)
    assert server.parse_http("127.0.0.1:0") == ("127.0.0.1", 0)
    for bad in ("::1:8765", "[]:80", "[::1]", "host:"):
        with pytest.raises(UserError):
            server.parse_http(bad)


def test_names_with_dollars_never_reach_the_math_parser(tmp_path):
    """`Ke$ha` and `A_$AP` are legal names (1-12 printable ASCII); a
    plotting library's title would read "$ha, A_$" as TeX and fail: the
    chart writes them as they are."""
    events = dashboard_kit.records_of("stalk-2p.jsonl")
    import engine_lite

    g = engine_lite.Game()
    for r in events:
        g.apply_record(r)
    svg = charts.market_svg(g.events(), "2026-11-29T19:30:00Z: Ke$ha, A_$AP")
    assert ">2026-11-29T19:30:00Z: Ke$ha, A_$AP</text>" in svg


def test_the_history_page_lists_a_quarantined_play_and_shows_the_rest(serve):
    srv = serve()
    import host.sync.db

    db = host.sync.db.Database(srv.db_path)
    with db.tx() as con:
        con.execute("INSERT INTO quarantine (board, board_type, game_id, ident, game, idx, record, reason, seen) "
                    "VALUES ('evil<b>', 'x', '0009', 'start:00', NULL, 0, x'ff', 'record 0: <script>', 'now')")
    db.close()
    r = get(srv, "/history")
    assert status(r) == 200 and 'id="problems"' in r and "evil&lt;b&gt;" in r and "<script>" not in r
    assert r.count('<tr class="play">') == 1
    assert json.loads(get(srv, "/state.json").partition("\r\n\r\n")[2])["link"] == "none"


def test_many_live_pages_are_held_while_every_page_still_loads(serve):
    """Live pages are coroutines, not threads: 300 open streams, and the
    history, the live page and the state still answer beside them."""
    srv = serve()
    socks = []
    try:
        for _ in range(300):
            s = socket.create_connection(srv.server_address[:2], timeout=30)
            s.sendall(b"GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            socks.append(s)
        for s in socks:
            assert s.recv(4096).startswith(b"HTTP/1.0 200")
        for path in ("/history", "/", "/state.json", "/game?play=1"):
            assert status(get(srv, path)) == 200, path
        assert srv.streams == 300
    finally:
        for s in socks:
            s.close()


def test_a_client_reopening_live_pages_in_a_loop_is_refused_and_pages_still_load(serve, capsys):
    """The per-client limit: live pages opened faster than STREAM_RATE a
    second (after a burst) get a 503 line; page loads from the same address
    are still served, and the refusals are one log line a burst."""
    srv = serve(STREAM_BURST=5, STREAM_RATE=0.01)
    codes = []
    for _ in range(12):
        r = get(srv, "/events", method="HEAD")
        codes.append(status(r))
    assert codes[:5] == [200] * 5 and set(codes[5:]) == {503}, codes
    assert "too fast" in get(srv, "/events")
    for path in ("/history", "/", "/state.json"):
        assert status(get(srv, path)) == 200
    err = capsys.readouterr().err
    assert err.count("live pages opened a second") == 1, err


def test_live_pages_from_one_address_are_capped_and_the_others_still_load(serve):
    srv = serve(STREAMS_PER_CLIENT=4)
    socks = []
    try:
        for _ in range(4):
            s = socket.create_connection(srv.server_address[:2], timeout=30)
            s.sendall(b"GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            assert s.recv(4096).startswith(b"HTTP/1.0 200")
            socks.append(s)
        r = get(srv, "/events")
        assert status(r) == 503 and "too many live pages" in r
        assert status(get(srv, "/history")) == 200
    finally:
        for s in socks:
            s.close()


def test_the_live_page_streams_what_the_board_publishes(serve):
    """The board thread publishes (Live, another thread); an open stream
    gets the new state at once, woken by the loop (no polling)."""
    srv = serve()
    with socket.create_connection(srv.server_address[:2], timeout=30) as s:
        s.sendall(b"GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        got = b""
        while b"event: ring" not in got:
            got += s.recv(4096)
        srv.live.publish_state({"link": "live", "said": "fresh"})
        while b"fresh" not in got:
            got += s.recv(4096)
        assert b"event: state\ndata: " in got


def test_a_names_token_belongs_to_one_server_start_and_is_good_once():
    from host.dashboard import names_form

    mine, restarted = names_form.Tokens(), names_form.Tokens()
    t = mine.issue()
    assert t != mine.issue(), "a new token for every page load"
    assert mine.good(t) and not restarted.good(t), "a token of an earlier server start is refused"
    assert not mine.good(t.split(".")[0] + "." + "0" * 32) and not mine.good("forged")
    assert mine.spend(t) and not mine.good(t) and not mine.spend(t), "good once"

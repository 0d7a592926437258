"""The web server: the standard library's ThreadingHTTPServer, GET only.

Routes: `/` the live table, `/events` its Server-Sent Events stream,
`/state.json` the live panel for scripts, `/history` the plays and the
statistics, `/game?play=N` one game (with its market chart); one POST,
`/names`, the live page's form for the next game's names
(host/dashboard/names_form.py: this machine only, with the page's token).
Anything else is a 4xx with a one-line plain-text reason; an unexpected
failure is a one-line 500 (never a traceback page).
"""

import errno
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

from host.dashboard import charts, history, pages, store
from host.errors import UserError

KEEPALIVE_S = 15  # an idle event stream sends a comment this often (proxies, phones)
PARAMS = {"/": (), "/events": (), "/state.json": (), "/history": (), "/game": ("play",)}


class BadRequest(Exception):
    def __init__(self, code, reason):
        Exception.__init__(self, reason)
        self.code = code


class Handler(BaseHTTPRequestHandler):
    server_version = "bloomkeeper"

    # -- errors: one line of plain text --------------------------------------
    def send_error(self, code, message=None, explain=None):
        if code == 501:  # an HTTP method this server does not know
            code, message = 405, "method %s not allowed: this page only answers GET" % (self.command or "?")
        reason = " ".join(str(message or self.responses.get(code, ("error",))[0]).split())
        body = ("%d %s\n" % (code, reason)).encode("utf-8", "replace")
        self.close_connection = True
        try:
            self.send_response(code)
            self.send_header("Content-Type", "text/plain; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Connection", "close")
            if code == 405:
                self.send_header("Allow", "GET")
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def log_message(self, fmt, *args):
        pass  # a dashboard on a table needs no access log

    def do_HEAD(self):
        self.send_error(405, "method HEAD not allowed: this page only answers GET")

    do_PUT = do_DELETE = do_PATCH = do_OPTIONS = do_HEAD

    def do_POST(self):
        from host.dashboard import names_form

        try:
            if urlsplit(self.path).path != "/names":
                raise BadRequest(405, "method POST not allowed: this page only answers GET (the names form posts to /names)")
            held = names_form.handle(self)
            self._send(pages.page("Bloomkeeper: names", names_form.done_body(held)))
        except BadRequest as err:
            self.send_error(err.code, str(err))
        except (BrokenPipeError, ConnectionResetError):
            pass
        except Exception as err:
            sys.stderr.write("bloomkeeper: serve: POST %s failed: %s: %s\n" % (self.path[:200], type(err).__name__, err))
            self.send_error(500, "internal error (%s); the server keeps running" % type(err).__name__)

    # -- GET -------------------------------------------------------------------
    def do_GET(self):
        try:
            path, params = self._parse()
            getattr(self, "page_" + {"/": "live", "/events": "events", "/state.json": "state",
                                      "/history": "history", "/game": "game"}[path])(params)
        except BadRequest as err:
            self.send_error(err.code, str(err))
        except (BrokenPipeError, ConnectionResetError):
            pass  # the page went away
        except Exception as err:  # a bug: one line for the browser and for the terminal
            sys.stderr.write("bloomkeeper: serve: %s failed: %s: %s\n" % (self.path[:200], type(err).__name__, err))
            self.send_error(500, "internal error (%s); the server keeps running" % type(err).__name__)

    def _parse(self):
        url = urlsplit(self.path)
        if url.path not in PARAMS:
            raise BadRequest(404, "no page %s (pages: /, /history)" % url.path[:100])
        try:
            q = parse_qs(url.query, strict_parsing=bool(url.query), errors="strict")
        except (ValueError, UnicodeDecodeError):
            raise BadRequest(400, "malformed query string")
        for k, v in q.items():
            if k not in PARAMS[url.path]:
                raise BadRequest(400, "unknown parameter %r for %s" % (k[:40], url.path))
            if len(v) != 1:
                raise BadRequest(400, "parameter %r given %d times" % (k[:40], len(v)))
        missing = [k for k in PARAMS[url.path] if k not in q]
        if missing:
            raise BadRequest(400, "%s needs the parameter(s) %s" % (url.path, ", ".join(missing)))
        return url.path, {k: v[0] for k, v in q.items()}

    def _send(self, body, ctype="text/html; charset=utf-8"):
        data = body.encode("utf-8")
        self.send_response(200)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(data)

    def page_live(self, _):
        from host.dashboard import names_form

        _, state, _, ring = self.server.live.current()
        form = names_form.form_html(self.server.token) if names_form.may_post(self) else ""
        self._send(pages.live_page(state, ring, form))

    def page_state(self, _):
        sv, state, _, ring = self.server.live.current()
        self._send(json.dumps(dict(state, version=sv, ring=ring)), "application/json")

    def page_events(self, _):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        live = self.server.live
        sv, rv = 0, -1  # older than anything: the first wait answers at once
        while True:
            nsv, state, nrv, ring = live.wait(sv, rv, KEEPALIVE_S)
            out = []
            if nsv != sv:
                out.append("event: state\ndata: %s\n\n" % json.dumps(state))
            if nrv != rv:
                out.append("event: ring\ndata: %s\n\n" % json.dumps(ring))
            sv, rv = nsv, nrv
            self.wfile.write(("".join(out) or ": still here\n\n").encode("utf-8"))
            self.wfile.flush()

    def _plays(self):
        try:
            return store.read_plays(self.server.db_path)
        except UserError as err:
            raise BadRequest(503, str(err))

    def page_history(self, _):
        self._send(pages.page("Bloomkeeper: plays", history.history_body(self._plays())))

    def page_game(self, q):
        p = history.find(self._plays(), q["play"])
        if p is None:
            raise BadRequest(404, "no play %s in the plays database" % q["play"][:40])
        svg = self.server.chart(p) if p["game"] == "stalk-exchange" else ""
        self._send(pages.page("Bloomkeeper: game %s" % p["game_id"], history.game_body(p, svg)))


class DashboardServer(ThreadingHTTPServer):
    daemon_threads = True  # open event streams never hold up a Ctrl-C

    def __init__(self, addr, live, db_path):
        import secrets

        self.live = live
        self.db_path = db_path
        self.names = None  # the board thread's Requests.submit, once there is one (serve.py)
        self.token = secrets.token_urlsafe(18)  # the names form's same-origin token
        self._charts = {}
        self._charts_lock = threading.Lock()
        ThreadingHTTPServer.__init__(self, addr, Handler)

    def chart(self, p):
        """The game's market chart, inline SVG (drawn once per stored length)."""
        key = (p["play"], len(p["events"]))
        with self._charts_lock:
            svg = self._charts.get(key)
        if svg is None:
            svg = charts.market_svg(p["events"], "%s: %s" % (history.local_date(p, zone=True), ", ".join(p["players"])))
            svg = svg[svg.index("<svg"):]  # inline: no XML prolog
            with self._charts_lock:
                self._charts[key] = svg
        return svg


def parse_http(text):
    """'HOST:PORT' -> (host, port), or UserError."""
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit() or int(port) > 65535:
        raise UserError("--http %r: give HOST:PORT, e.g. 127.0.0.1:8765" % text)
    return host, int(port)


def make_server(http, live, db_path):
    host, port = parse_http(http)
    try:
        return DashboardServer((host, port), live, db_path)
    except OSError as err:
        if err.errno == errno.EADDRINUSE:
            raise UserError("cannot serve on %s: the port is in use (another `serve`? pick --http HOST:OTHERPORT)" % http)
        raise UserError("cannot serve on %s: %s" % (http, err.strerror or err))

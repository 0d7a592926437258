"""The web server: the standard library's ThreadingHTTPServer.

Routes (ROUTES: path -> {method: handler}; HEAD is answered wherever GET
is): `/` the live table, `/events` its Server-Sent Events stream,
`/state.json` the live panel for scripts, `/history` the plays and the
statistics, `/game?play=N` one game (with its market chart); one POST,
`/names`, the live page's form for the next game's names
(host/dashboard/names_form.py: this machine only, with the page's token).
Anything else is a 4xx with a one-line plain-text reason (a method a page
does not take: 405 with Allow); an unexpected failure is a one-line 500
(never a traceback page).

A good loopback citizen (docs/dashboard.md, "What the server refuses"):
- the Host header must name the bound address or localhost (else 421), so
  a web page that rebinds its own name to 127.0.0.1 cannot read the plays;
- a request must arrive whole within REQUEST_S of the connection's first
  byte awaited, and no read or write may stall IDLE_S (slowloris, clients
  that stop reading): the connection is then closed;
- at most MAX_CONNECTIONS at once (one thread each); more get a 503;
- a client error (reset, timeout) is one log line, never a traceback.
"""

import errno
import ipaddress
import json
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

from host.dashboard import charts, history, pages, store
from host.errors import UserError

KEEPALIVE_S = 15  # an idle event stream sends a comment this often (proxies, phones)
REQUEST_S = 10  # a request line and its headers must arrive whole within this
IDLE_S = 30  # no single read or write may wait longer (> KEEPALIVE_S: an event stream writes every 15 s)
MAX_CONNECTIONS = 128  # threads serving at once (100 open event streams fit)
PARAMS = {"/": (), "/events": (), "/state.json": (), "/history": ("page",), "/game": ("play",), "/names": ()}
OPTIONAL = {"/history": ("page",)}  # PARAMS a page also answers without
ROUTES = {"/": {"GET": "page_live"}, "/events": {"GET": "page_events"}, "/state.json": {"GET": "page_state"},
          "/history": {"GET": "page_history"}, "/game": {"GET": "page_game"}, "/names": {"POST": "post_names"}}


def allowed_methods(path):
    """The methods a route answers, as an Allow header says them."""
    methods = set(ROUTES.get(path, {}))
    if "GET" in methods:
        methods.add("HEAD")
    return ", ".join(sorted(methods))


def log_line(text):
    sys.stderr.write("bloomkeeper: serve: %s\n" % " ".join(str(text).split())[:300])


class BadRequest(Exception):
    def __init__(self, code, reason):
        Exception.__init__(self, reason)
        self.code = code


class Handler(BaseHTTPRequestHandler):
    server_version = "bloomkeeper"
    timeout = IDLE_S  # every socket read and write (StreamRequestHandler.setup)

    # -- one request at a time, whole within REQUEST_S ---------------------------
    def handle_one_request(self):
        timer = threading.Timer(REQUEST_S, self._too_slow)
        timer.daemon = True
        self._timer = timer
        timer.start()
        try:
            BaseHTTPRequestHandler.handle_one_request(self)
        except (ConnectionError, socket.timeout, OSError) as err:  # the client went away or stalled
            self.close_connection = True
            log_line("client %s: %s" % (self.client_address[0], _why(err)))
        finally:
            timer.cancel()

    def _too_slow(self):
        """The request did not arrive whole in time: the connection is shut
        (the thread blocked reading it wakes up and ends)."""
        self.slow = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def parse_request(self):
        ok = BaseHTTPRequestHandler.parse_request(self)
        self._timer.cancel()  # the head is in: a page (an event stream) may take longer
        if getattr(self, "slow", False):
            return False
        if ok and not self._host_ok():
            self.send_error(421, "this server answers for %s only (Host %s refused: a page of another site?)"
                            % (self.server.host_words, (self.headers.get("Host") or "none")[:80]))
            return False
        return ok

    def _host_ok(self):
        allowed = self.server.hosts
        if allowed is None:
            return True  # listening on every address: an explicit choice (serve says so)
        host = (self.headers.get("Host") or "").strip().lower()
        if host.startswith("["):
            name = host[1:].partition("]")[0]
        else:
            name = host.rpartition(":")[0] if host.count(":") == 1 else host
        return name in allowed

    # -- errors: one line of plain text --------------------------------------
    def send_error(self, code, message=None, explain=None):
        path = urlsplit(self.path).path if getattr(self, "path", None) else ""
        if code == 501:  # an HTTP method this server does not know
            code = 405
        if code == 405:
            allow = allowed_methods(path) or "GET, HEAD"
            message = "method %s not allowed on %s: this page only answers %s" % (
                (self.command or "?")[:20], path[:100] or "/", allow)
        reason = " ".join(str(message or self.responses.get(code, ("error",))[0]).split())
        body = ("%d %s\n" % (code, reason)).encode("utf-8", "replace")
        self.close_connection = True
        if code >= 400 and code not in (404, 405):
            log_line("client %s: %d %s" % (self.client_address[0], code, reason[:200]))
        try:
            self.send_response(code)
            self.send_header("Content-Type", "text/plain; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Connection", "close")
            if code == 405:
                self.send_header("Allow", allowed_methods(path) or "GET, HEAD")
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)
        except OSError:
            pass  # the client went away

    def log_message(self, fmt, *args):
        pass  # a dashboard on a table needs no access log

    # -- dispatch: ROUTES --------------------------------------------------------
    def _dispatch(self):
        try:
            path = urlsplit(self.path).path
            name = ROUTES.get(path, {}).get("GET" if self.command == "HEAD" else self.command)
            if path in ROUTES and name is None:
                raise BadRequest(405, "")
            path, params = self._parse()
            getattr(self, name)(params)
        except BadRequest as err:
            self.send_error(err.code, str(err))
        except OSError:
            pass  # the page went away (reset, broken pipe, a stalled reader)
        except Exception as err:  # a bug: one line for the browser and for the terminal
            log_line("%s failed: %s: %s" % (self.path[:200], type(err).__name__, err))
            self.send_error(500, "internal error (%s); the server keeps running" % type(err).__name__)

    do_GET = do_HEAD = do_POST = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = _dispatch

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
        missing = [k for k in PARAMS[url.path] if k not in q and k not in OPTIONAL.get(url.path, ())]
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
        if self.command != "HEAD":
            self.wfile.write(data)

    def page_live(self, _):
        from host.dashboard import names_form

        _, state, _, ring = self.server.live.current()
        form = names_form.form_html(self.server.token) if names_form.may_post(self) else ""
        self._send(pages.live_page(state, ring, form))

    def post_names(self, _):
        """The live page's names form (host/dashboard/names_form.py)."""
        from host.dashboard import names_form

        held = names_form.handle(self)
        self._send(pages.page("Bloomkeeper: names", names_form.done_body(held)))

    def page_state(self, _):
        sv, state, _, ring = self.server.live.current()
        self._send(json.dumps(dict(state, version=sv, ring=ring)), "application/json")

    def page_events(self, _):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        if self.command == "HEAD":
            return
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

    def _db(self, read):
        """What `read` reads from the database; one that cannot be read is a 503 line."""
        try:
            return read()
        except UserError as err:
            raise BadRequest(503, str(err))

    def page_history(self, q):
        """A page of the plays, newest first, and the statistics: SQL over
        the summaries, cached until the database is written."""
        text = q.get("page", "1")
        if not text.isdigit() or not 0 < int(text) < 10 ** 9:
            raise BadRequest(400, "page %r is not a page number (1, 2, ...)" % text[:40])
        page = int(text)
        path = self.server.db_path

        def make():
            plays, total, rows, problems = store.history_page(path, page)
            if page > 1 and not plays:
                return None
            return pages.page("Bloomkeeper: plays", history.history_page_body(plays, rows, problems, page, total))
        body = self._db(lambda: self.server.cache.get(("history", page), make))
        if body is None:
            raise BadRequest(404, "no page %d of the plays history" % page)
        self._send(body)

    def page_game(self, q):
        p = self._db(lambda: self.server.cache.get(("game", q["play"]), lambda: store.one_play(self.server.db_path, q["play"])))
        if p is None:
            raise BadRequest(404, "no play %s in the plays database" % q["play"][:40])
        svg = self.server.chart(p) if p["game"] == "stalk-exchange" else ""
        self._send(pages.page("Bloomkeeper: game %s" % p["game_id"], history.game_body(p, svg)))


class DashboardServer(ThreadingHTTPServer):
    daemon_threads = True  # open event streams never hold up a Ctrl-C
    request_queue_size = 64

    def __init__(self, addr, live, db_path):
        import secrets

        self.live = live
        self.db_path = db_path
        self.names = None  # the board thread's Requests.submit, once there is one (serve.py)
        self.token = secrets.token_urlsafe(18)  # the names form's same-origin token
        self._charts = {}
        self._charts_lock = threading.Lock()
        self.cache = store.Cache(db_path)  # pages that change only when the database is written
        self.slots = threading.BoundedSemaphore(MAX_CONNECTIONS)
        ThreadingHTTPServer.__init__(self, addr, Handler)
        self.hosts = host_allowlist(addr[0])  # the name given (localhost, a host name) and the address it bound
        if self.hosts is not None:
            self.hosts |= host_allowlist(self.server_address[0]) or set()
        self.host_words = ", ".join(sorted(self.hosts or ())) or "any host"

    def process_request(self, request, client_address):
        """A thread per connection, up to MAX_CONNECTIONS; beyond, one 503
        line and the connection closed (nothing waits for a slot)."""
        if not self.slots.acquire(blocking=False):
            try:
                request.settimeout(1)
                request.sendall(b"HTTP/1.0 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\n"
                                b"Connection: close\r\nContent-Length: 49\r\n\r\n503 too many connections at once: try again soon\n")
            except OSError:
                pass
            self.shutdown_request(request)
            now = time.monotonic()
            if now - getattr(self, "_full_logged", 0) > 5:  # one line per burst, not one per refused client
                self._full_logged = now
                log_line("%d connections open: refusing more for now" % MAX_CONNECTIONS)
            return
        try:
            ThreadingHTTPServer.process_request(self, request, client_address)
        except BaseException:
            self.slots.release()
            raise

    def process_request_thread(self, request, client_address):
        try:
            ThreadingHTTPServer.process_request_thread(self, request, client_address)
        finally:
            self.slots.release()

    def handle_error(self, request, client_address):
        """One line, never a traceback (socketserver's default prints one)."""
        err = sys.exc_info()[1]
        log_line("client %s: %s" % (client_address[0] if client_address else "?", _why(err)))

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


def _why(err):
    return "%s: %s" % (type(err).__name__, " ".join(str(getattr(err, "strerror", None) or err).split())[:200])


def host_allowlist(host):
    """The Host names a request may carry: the bound address and localhost
    (127.0.0.1 and ::1 where bound to loopback), or None when the server
    listens on every address (0.0.0.0, ::): then any name reaching it is
    one the user chose to serve under."""
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return {host.lower(), "localhost"}
    if ip.is_unspecified:
        return None
    out = {str(ip), "localhost"}
    if ip.is_loopback:
        out.update(("127.0.0.1", "::1"))
    return out


def parse_http(text):
    """'HOST:PORT' or '[IPv6]:PORT' -> (host, port), or UserError."""
    host, sep, port = text.rpartition(":")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
        if ":" not in host:
            host = ""
    elif ":" in host:
        host = ""  # an IPv6 address needs its brackets: [::1]:8765
    if not sep or not host or not port.isdigit() or int(port) > 65535:
        raise UserError("--http %r: give HOST:PORT, e.g. 127.0.0.1:8765 or [::1]:8765" % text)
    return host, int(port)


class DashboardServer6(DashboardServer):
    address_family = socket.AF_INET6


def make_server(http, live, db_path):
    host, port = parse_http(http)
    cls = DashboardServer6 if ":" in host else DashboardServer
    try:
        return cls((host, port), live, db_path)
    except OSError as err:
        if err.errno == errno.EADDRINUSE:
            raise UserError("cannot serve on %s: the port is in use (another `serve`? pick --http HOST:OTHERPORT)" % http)
        raise UserError("cannot serve on %s: %s" % (http, err.strerror or err))
    except (socket.gaierror, UnicodeError) as err:
        raise UserError("cannot serve on %s: %s" % (http, err))

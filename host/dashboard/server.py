"""The web server: one asyncio event loop (the standard library's), HTTP/1.0.

Routes (ROUTES: path -> {method: handler}; HEAD is answered wherever GET
is): `/` the live table, `/events` its Server-Sent Events stream,
`/state.json` the live panel for scripts, `/history` the plays and the
statistics (`?page=N`), `/game?play=N` one game (with its market chart);
one POST, `/names`, the live page's form for the next game's names
(host/dashboard/names_form.py: this machine only, with a token of the page).
Anything else is a 4xx with a one-line plain-text reason (a method a page
does not take: 405 with Allow); an unexpected failure is a one-line 500
(never a traceback page).

Why an event loop (docs/dashboard.md, "One event loop"): an open live page
is a coroutine waiting for the next state, a few kilobytes, not a thread;
1,000 of them cost what one thread did, and a page load is never queued
behind them. Work that blocks (the plays database, the chart, the board's
answer to the names) runs in a small thread pool (PAGE_WORKERS), so the
loop only moves bytes.

A good loopback citizen (docs/dashboard.md, "What the server refuses"):
- the Host header must name the bound address or localhost (else 421), so
  a web page that rebinds its own name to 127.0.0.1 cannot read the plays;
- a request must arrive whole within REQUEST_S of the connection's first
  byte awaited, and no write may stall IDLE_S (slowloris, clients that stop
  reading): the connection is then closed;
- at most MAX_CONNECTIONS at once and CONNECTIONS_PER_CLIENT from one
  address; at most MAX_STREAMS live pages (the rest of MAX_CONNECTIONS is
  always there for page loads), STREAMS_PER_CLIENT from one address, and one
  address opens at most STREAM_BURST live pages at once and STREAM_RATE a
  second after that: a client that reconnects in a loop gets 503 lines for
  its live pages while every page load is still served;
- a client error (reset, timeout) is one log line, never a traceback.
"""

import asyncio
import concurrent.futures
import errno
import http
import http.client
import io
import ipaddress
import json
import socket
import sys
import threading
import time
from urllib.parse import parse_qs, urlsplit

from host.dashboard import charts, history, names_form, pages, store
from host.errors import UserError

KEEPALIVE_S = 15  # an idle event stream sends a comment this often (proxies, phones)
REQUEST_S = 10  # a request line and its headers must arrive whole within this
IDLE_S = 30  # no single write may wait longer (> KEEPALIVE_S: an event stream writes every 15 s)
HEAD_MAX = 16384  # bytes of a request line and its headers
MAX_CONNECTIONS = 4000  # connections open at once (file descriptors: the soft limit is raised to fit)
CONNECTIONS_PER_CLIENT = 3000  # from one address (loopback is one address for every local browser)
MAX_STREAMS = 3000  # live pages open at once: MAX_CONNECTIONS - MAX_STREAMS are always there for page loads
STREAMS_PER_CLIENT = 1500  # live pages from one address: half of MAX_STREAMS
STREAM_BURST = 1500  # live pages one address may open at once ...
STREAM_RATE = 50  # ... and a second after that (a browser's EventSource retries every 3 s: a page reconnects far slower)
PAGE_WORKERS = 2  # threads for the database, the chart and the names (this is a 2-core class of machine)
METHODS = ("GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS")
PARAMS = {"/": (), "/table": (), "/events": (), "/state.json": (), "/history": ("page",), "/game": ("play",), "/names": ()}
OPTIONAL = {"/history": ("page",)}  # PARAMS a page also answers without
ROUTES = {"/": {"GET": "page_live"}, "/table": {"GET": "page_table"}, "/events": {"GET": "page_events"}, "/state.json": {"GET": "page_state"},
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


class Reply:
    """A whole answer: status, headers, body (HEAD: the same, without the body)."""

    def __init__(self, body, ctype="text/html; charset=utf-8", code=200, headers=()):
        self.code = code
        self.body = body.encode("utf-8") if isinstance(body, str) else body
        self.headers = [("Content-Type", ctype), ("Content-Length", str(len(self.body)))] + list(headers)


class Request:
    """One request as the handlers see it (names_form reads the same
    attributes the standard library's handler had: headers, rfile,
    client_address, server, command, path)."""

    def __init__(self, server, client_address, command, path, headers, body=b""):
        self.server = server
        self.client_address = client_address
        self.command = command
        self.path = path
        self.headers = headers
        self.rfile = io.BytesIO(body)


def error_reply(code, message, command="GET", path=""):
    """One line of plain text; a 405 names what the page answers (Allow)."""
    if code == 405:
        allow = allowed_methods(path) or "GET, HEAD"
        message = "method %s not allowed on %s: this page only answers %s" % ((command or "?")[:20], path[:100] or "/", allow)
    reason = " ".join(str(message or http.HTTPStatus(code).phrase).split())
    extra = [("Connection", "close")]
    if code == 405:
        extra.append(("Allow", allowed_methods(path) or "GET, HEAD"))
    return Reply("%d %s\n" % (code, reason), "text/plain; charset=utf-8", code, extra), reason


def _status_line(code):
    try:
        phrase = http.HTTPStatus(code).phrase
    except ValueError:
        phrase = ""
    return "HTTP/1.0 %d %s\r\n" % (code, phrase)


class Bucket:
    """A token bucket per client address: `burst` at once, `rate` a second after."""

    def __init__(self):
        self.tokens = {}

    def allow(self, key, burst, rate):
        now = time.monotonic()
        have, then = self.tokens.get(key, (burst, now))
        have = min(burst, have + (now - then) * rate)
        if len(self.tokens) > 4096:  # flat memory: forget the addresses that are full again
            self.tokens = {k: v for k, v in self.tokens.items() if v[0] + (now - v[1]) * rate < burst}
        if have < 1:
            self.tokens[key] = (have, now)
            return False
        self.tokens[key] = (have - 1, now)
        return True


class Hub:
    """Wakes every open live page when the board thread publishes: one
    future shared by all of them, replaced at each publish (Live.listeners:
    called from the board thread, handed to the loop)."""

    def __init__(self, live, loop):
        self.live = live
        self.loop = loop
        self.waiter = loop.create_future()
        live.listeners.append(self._published)

    def _published(self):
        try:
            self.loop.call_soon_threadsafe(self._wake)
        except RuntimeError:
            pass  # the loop has ended (the server is stopping)

    def _wake(self):
        w, self.waiter = self.waiter, self.loop.create_future()
        w.set_result(None)

    def close(self):
        try:
            self.live.listeners.remove(self._published)
        except ValueError:
            pass


class DashboardServer:
    """The server object serve.py and the tests hold: serve_forever() runs
    the loop in the calling thread, shutdown() (another thread) stops it,
    server_close() lets the socket go."""

    address_family = socket.AF_INET

    def __init__(self, addr, live, db_path):
        self.live = live
        self.db_path = db_path
        self.names = None  # the board thread's Requests.submit, once there is one (serve.py)
        self.tokens = names_form.Tokens()  # the names form's same-origin tokens: one per page load
        self.names_limit = names_form.RateLimit()
        self.cache = store.Cache(db_path)  # pages that change only when the database is written
        self.sock = socket.socket(self.address_family, socket.SOCK_STREAM)
        try:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            self.sock.bind(addr)
            self.sock.listen(1024)
        except BaseException:
            self.sock.close()
            raise
        self.sock.setblocking(False)
        self.server_address = self.sock.getsockname()
        self.hosts = host_allowlist(addr[0])  # the name given (localhost, a host name) and the address it bound
        if self.hosts is not None:
            self.hosts |= host_allowlist(self.server_address[0]) or set()
        self.host_words = ", ".join(sorted(self.hosts or ())) or "any host"
        self.pool = concurrent.futures.ThreadPoolExecutor(PAGE_WORKERS, thread_name_prefix="bloomkeeper-page")
        self.open = 0
        self.streams = 0
        self.streams_of = {}
        self.open_of = {}
        self.stream_opens = Bucket()
        self._logged = {}
        self._loop = None
        self._stop = None
        self._done = threading.Event()
        _raise_fd_limit()

    # -- running ---------------------------------------------------------------
    def serve_forever(self, poll_interval=None):
        """Serve until shutdown() (poll_interval: as socketserver's, unused: the loop wakes when asked)."""
        self._done.clear()
        try:
            asyncio.run(self._main())
        finally:
            self._done.set()

    async def _main(self):
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        self.hub = Hub(self.live, self._loop)
        srv = await asyncio.start_server(self._client, sock=self.sock, limit=HEAD_MAX, backlog=1024)
        try:
            await self._stop.wait()
        finally:
            self.hub.close()
            srv.close()
            for task in [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]:
                task.cancel()

    def shutdown(self):
        loop, stop = self._loop, self._stop
        if loop is None:
            return
        try:
            loop.call_soon_threadsafe(stop.set)
        except RuntimeError:
            return  # already ended
        self._done.wait(30)

    def server_close(self):
        self.sock.close()
        self.pool.shutdown(wait=False)

    def _log_burst(self, what, text):
        """One log line per burst of the same refusal, not one per client."""
        now = time.monotonic()
        if now - self._logged.get(what, 0) > 5:
            self._logged[what] = now
            log_line(text)

    # -- one connection --------------------------------------------------------
    async def _client(self, reader, writer):
        peer = writer.get_extra_info("peername") or ("?",)
        who = peer[0]
        if self.open >= MAX_CONNECTIONS:
            self._log_burst("full", "%d connections open: refusing more for now" % MAX_CONNECTIONS)
            return await self._refuse(writer, "503 too many connections at once: try again soon\n")
        if self.open_of.get(who, 0) >= CONNECTIONS_PER_CLIENT:
            self._log_burst("full " + who, "client %s: %d connections open from it: refusing more for now" % (who, CONNECTIONS_PER_CLIENT))
            return await self._refuse(writer, "503 too many connections from your address at once: try again soon\n")
        self.open += 1
        self.open_of[who] = self.open_of.get(who, 0) + 1
        try:
            await self._one_request(reader, writer, peer)
        except (ConnectionError, OSError, asyncio.TimeoutError) as err:  # the client went away or stalled
            log_line("client %s: %s" % (who, _why(err)))
        except asyncio.CancelledError:
            pass  # the server is stopping
        except Exception as err:  # a bug: one line, the server keeps running
            log_line("client %s: %s failed: %s" % (who, type(err).__name__, err))
        finally:
            self.open -= 1
            self.open_of[who] -= 1
            if not self.open_of[who]:
                del self.open_of[who]
            writer.transport.abort() if writer.transport.get_write_buffer_size() else writer.close()

    async def _refuse(self, writer, line):
        body = line.encode()
        try:
            writer.write(b"HTTP/1.0 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\n"
                         b"Connection: close\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
            await asyncio.wait_for(writer.drain(), 1)
        except (OSError, asyncio.TimeoutError):
            pass
        writer.transport.abort()

    async def _one_request(self, reader, writer, peer):
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), REQUEST_S)
        except asyncio.TimeoutError:
            log_line("client %s: the request did not arrive whole within %s s: closed" % (peer[0], REQUEST_S))
            return
        except asyncio.IncompleteReadError:
            return  # the client closed before a whole request: nothing to answer
        except asyncio.LimitOverrunError:
            return await self._send(writer, "GET", self._error(431, "request line and headers larger than %d bytes" % HEAD_MAX,
                                                                  peer, "GET", ""))
        line, _, rest = head.partition(b"\r\n")
        try:
            command, target, version = line.decode("latin-1").split(" ")
            if not version.startswith("HTTP/") or not target:
                raise ValueError
        except ValueError:
            return await self._send(writer, "GET", self._error(400, "Bad request syntax (%r)" % line[:80].decode("latin-1"), peer, "GET", ""))
        try:
            headers = http.client.parse_headers(io.BytesIO(rest))
        except http.client.HTTPException as err:
            return await self._send(writer, command, self._error(431, "bad headers: %s" % err, peer, command, ""))
        path = urlsplit(target).path
        if not self._host_ok(headers):
            return await self._send(writer, command, self._error(
                421, "this server answers for %s only (Host %s refused: a page of another site?)"
                % (self.host_words, (headers.get("Host") or "none")[:80]), peer, command, path))
        name = ROUTES.get(path, {}).get("GET" if command == "HEAD" else command)
        if command not in METHODS or (path in ROUTES and name is None):
            return await self._send(writer, command, self._error(405, "", peer, command, path))
        body = b""
        if command == "POST":
            n = headers.get("Content-Length", "")
            if n.isdigit() and int(n) <= names_form.BODY_MAX:
                try:
                    body = await asyncio.wait_for(reader.readexactly(int(n)), REQUEST_S)
                except asyncio.TimeoutError:
                    log_line("client %s: the form did not arrive whole within %s s: closed" % (peer[0], REQUEST_S))
                    return
        req = Request(self, peer, command, target, headers, body)
        try:
            params = self._parse(target)
            if name == "page_events":
                return await self.page_events(req, reader, writer)
            handler = getattr(self, name)
            if asyncio.iscoroutinefunction(handler):
                reply = await handler(req, params)
            else:
                reply = await self._loop.run_in_executor(self.pool, handler, req, params)
        except BadRequest as err:
            reply = self._error(err.code, str(err), peer, command, path)
        except Exception as err:  # a bug: one line for the browser and for the terminal
            log_line("%s failed: %s: %s" % (target[:200], type(err).__name__, err))
            reply = self._error(500, "internal error (%s); the server keeps running" % type(err).__name__, peer, command, path)
        await self._send(writer, command, reply)

    def _error(self, code, message, peer, command, path):
        reply, reason = error_reply(code, message, command, path)
        if code not in (404, 405):
            log_line("client %s: %d %s" % (peer[0], code, reason[:200]))
        return reply

    async def _send(self, writer, command, reply):
        out = [_status_line(reply.code), "Server: bloomkeeper\r\n"]
        out += ["%s: %s\r\n" % kv for kv in reply.headers]
        data = ("".join(out) + "\r\n").encode("latin-1") + (b"" if command == "HEAD" else reply.body)
        writer.write(data)
        await asyncio.wait_for(writer.drain(), IDLE_S)

    def _host_ok(self, headers):
        allowed = self.hosts
        if allowed is None:
            return True  # listening on every address: an explicit choice (serve says so)
        host = (headers.get("Host") or "").strip().lower()
        if host.startswith("["):
            name = host[1:].partition("]")[0]
        else:
            name = host.rpartition(":")[0] if host.count(":") == 1 else host
        return name in allowed

    def _parse(self, target):
        url = urlsplit(target)
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
        return {k: v[0] for k, v in q.items()}

    # -- the pages ---------------------------------------------------------------
    @staticmethod
    def _page(body, ctype="text/html; charset=utf-8"):
        return Reply(body, ctype, headers=[("Cache-Control", "no-store")])

    async def page_live(self, req, _):
        """The table page (the Pico W's, host/dashboard/table.html) with the
        history link and, for this machine, the names form: it draws the
        state events of /events as the phones draw the board's."""
        form = names_form.form_html(self.tokens.issue()) if names_form.may_post(req) else ""
        return self._page(pages.live_page(form))

    async def page_table(self, req, _):
        """The table page byte for byte as the Pico W serves it (no slot
        filled), on this same event stream."""
        return self._page(pages.table_page())

    def post_names(self, req, _):
        """The live page's names form (host/dashboard/names_form.py)."""
        held = names_form.handle(req)
        return self._page(pages.page("Bloomkeeper: names", names_form.done_body(held)))

    async def page_state(self, req, _):
        sv, state, _, ring = self.live.current()
        return self._page(json.dumps(dict(state, version=sv, ring=ring)), "application/json")

    async def page_events(self, req, reader, writer):
        """A live page's stream: the state and the ring whenever the board
        thread publishes, a comment every KEEPALIVE_S; ends when the client
        goes (its end of the connection read as EOF)."""
        who = req.client_address[0]
        if self.streams >= MAX_STREAMS or self.streams_of.get(who, 0) >= STREAMS_PER_CLIENT:
            self._log_burst("streams " + who, "client %s: %d live pages open (%d from it): refusing more for now"
                            % (who, self.streams, self.streams_of.get(who, 0)))
            reply, _ = error_reply(503, "too many live pages open at once: try again soon")
            return await self._send(writer, req.command, reply)
        if not self.stream_opens.allow(who, STREAM_BURST, STREAM_RATE):
            self._log_burst("rate " + who, "client %s: more than %g live pages opened a second: refusing them for now" % (who, STREAM_RATE))
            reply, _ = error_reply(503, "live pages opened too fast from your address: try again in a second")
            return await self._send(writer, req.command, reply)
        head = "HTTP/1.0 200 OK\r\nServer: bloomkeeper\r\nContent-Type: text/event-stream\r\nCache-Control: no-store\r\n\r\n"
        writer.write(head.encode("latin-1"))
        await asyncio.wait_for(writer.drain(), IDLE_S)
        if req.command == "HEAD":
            return
        self.streams += 1
        self.streams_of[who] = self.streams_of.get(who, 0) + 1
        gone = asyncio.ensure_future(reader.read(1))  # the client closing (a page never sends more)
        try:
            sv, rv = 0, -1  # older than anything: the first turn sends at once
            quiet_until = self._loop.time() + KEEPALIVE_S
            while True:
                waiter = self.hub.waiter
                nsv, state, nrv, ring = self.live.current()
                out = []
                if nsv != sv:
                    out.append("event: state\ndata: %s\n\n" % json.dumps(state))
                if nrv != rv:
                    out.append("event: ring\ndata: %s\n\n" % json.dumps(ring))
                sv, rv = nsv, nrv
                if not out:
                    done, _ = await asyncio.wait((waiter, gone), timeout=max(0, quiet_until - self._loop.time()),
                                                 return_when=asyncio.FIRST_COMPLETED)
                    if gone in done:
                        return
                    if done:
                        continue
                    out.append(": still here\n\n")
                writer.write("".join(out).encode("utf-8"))
                await asyncio.wait_for(writer.drain(), IDLE_S)
                quiet_until = self._loop.time() + KEEPALIVE_S
        finally:
            gone.cancel()
            self.streams -= 1
            self.streams_of[who] -= 1
            if not self.streams_of[who]:
                del self.streams_of[who]

    def _db(self, read):
        """What `read` reads from the database; one that cannot be read is a 503 line."""
        try:
            return read()
        except UserError as err:
            raise BadRequest(503, str(err))

    def page_history(self, req, q):
        """A page of the plays, newest first, and the statistics: SQL over
        the summaries, cached until the database is written."""
        text = q.get("page", "1")
        if not text.isdigit() or not 0 < int(text) < 10 ** 9:
            raise BadRequest(400, "page %r is not a page number (1, 2, ...)" % text[:40])
        page = int(text)

        def make():
            plays, total, rows, problems = store.history_page(self.db_path, page)
            if page > 1 and not plays:
                return None
            return pages.page("Bloomkeeper: plays", history.history_page_body(plays, rows, problems, page, total))
        body = self._db(lambda: self.cache.get(("history", page), make))
        if body is None:
            raise BadRequest(404, "no page %d of the plays history" % page)
        return self._page(body)

    def page_game(self, req, q):
        p = self._db(lambda: self.cache.get(("game", q["play"]), lambda: store.one_play(self.db_path, q["play"])))
        if p is None:
            raise BadRequest(404, "no play %s in the plays database" % q["play"][:40])
        svg = self.chart(p) if p["game"] == "stalk-exchange" else ""
        return self._page(pages.page("Bloomkeeper: game %s" % p["game_id"], history.game_body(p, svg)))

    def chart(self, p):
        """The game's market chart, inline SVG: written from the play's
        values each time (a millisecond; the play is what the cache keeps)."""
        return charts.market_svg(p["events"], "%s: %s" % (history.local_date(p, zone=True), ", ".join(p["players"])))


def _raise_fd_limit():
    """Every open connection is a file descriptor: the soft limit is raised
    to the hard one (or to what MAX_CONNECTIONS needs), as far as allowed."""
    try:
        import resource

        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        want = MAX_CONNECTIONS + 256
        if soft != resource.RLIM_INFINITY and soft < want:
            resource.setrlimit(resource.RLIMIT_NOFILE, (want if hard == resource.RLIM_INFINITY else min(want, hard), hard))
    except (ImportError, ValueError, OSError):
        pass  # the connections beyond the limit are refused by accept: one log line each burst


def _why(err):
    if isinstance(err, asyncio.TimeoutError):
        return "stalled: nothing read or written for %s s" % IDLE_S
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
        if isinstance(err, socket.gaierror):
            raise UserError("cannot serve on %s: %s" % (http, err))
        raise UserError("cannot serve on %s: %s" % (http, err.strerror or err))
    except UnicodeError as err:
        raise UserError("cannot serve on %s: %s" % (http, err))

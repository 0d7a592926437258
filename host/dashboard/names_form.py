"""The live page's form for the next game's names.

Why these checks: the form changes the board, so it is taken only from this
machine (the client's address is loopback, whatever --http listens on), only
with a token the server put in its own page (a page of another site that
posts here has no way to read it; a new one each page load, each good once,
from a secret drawn at server start: Tokens), at most NAMES_BURST changes at
once and one every NAMES_EVERY_S after (RateLimit: a local process cannot
rewrite the board's settings in a loop) and, when the browser says where the post
comes from (Origin), only from this server's own origin. The names are sent
the way `names` sends them (host/sync/relay.py: checked once, then the board
thread's link). A refusal is one line and changes nothing.
"""

import hmac
import secrets
import threading
import time
from html import escape
from urllib.parse import parse_qs, urlsplit

from engine_lite.tables import MAX_PLAYERS, NAME_MAX
from host.errors import UserError

BODY_MAX = 2048  # bytes of a form post (5 names of 12 characters and a token fit many times)
TOKEN_S = 6 * 3600  # a page's token is good this long (an evening at the table), once
TOKENS_MAX = 1024  # tokens issued and not yet used that are remembered (the oldest are forgotten first)
NAMES_BURST = 3  # name changes at once (a typo fixed, then fixed again) ...
NAMES_EVERY_S = 10  # ... then one every this many seconds


class Tokens:
    """The form's same-origin tokens: a new one for every page load, made
    from a secret drawn at server start (so a token of an earlier server is
    refused), each taken once (a reload gives the next). A page of another
    site cannot read one: only this server's own page carries it."""

    def __init__(self):
        self._secret = secrets.token_bytes(32)
        self._open = {}  # token -> issued (monotonic)
        self._lock = threading.Lock()

    def issue(self):
        nonce = secrets.token_urlsafe(12)
        token = nonce + "." + hmac.new(self._secret, nonce.encode(), "sha256").hexdigest()[:32]
        with self._lock:
            self._open[token] = time.monotonic()
            while len(self._open) > TOKENS_MAX:
                self._open.pop(next(iter(self._open)))
        return token

    def good(self, token):
        """Is `token` one this server issued, not yet used nor too old?"""
        nonce, _, mac = token.partition(".")
        if not hmac.compare_digest(mac, hmac.new(self._secret, nonce.encode(), "sha256").hexdigest()[:32]):
            return False
        with self._lock:
            issued = self._open.get(token)
        return issued is not None and time.monotonic() - issued <= TOKEN_S

    def spend(self, token):
        """The token is used: a form sent once (a refused one may be corrected and sent again)."""
        with self._lock:
            return self._open.pop(token, None) is not None


class RateLimit:
    """Name changes: NAMES_BURST at once, then one every NAMES_EVERY_S, for
    every client together (the board has one set of names)."""

    def __init__(self):
        self._lock = threading.Lock()
        self._have = float(NAMES_BURST)
        self._then = time.monotonic()

    def wait_s(self):
        """0 and one change counted, or the seconds until the next is allowed."""
        with self._lock:
            now = time.monotonic()
            self._have = min(NAMES_BURST, self._have + (now - self._then) / NAMES_EVERY_S)
            self._then = now
            if self._have >= 1:
                self._have -= 1
                return 0
            return (1 - self._have) * NAMES_EVERY_S
LOOPBACK = ("127.0.0.1", "::1", "::ffff:127.0.0.1")


def may_post(handler):
    """Is the request from this machine, and is there a board thread to send names?"""
    return handler.server.names is not None and handler.client_address[0] in LOOPBACK


def form_html(token):
    seats = "".join(
        '<label>seat %d <input type="text" name="seat%d" maxlength="%d" size="8" autocomplete="off"></label> ' % (k, k, NAME_MAX)
        for k in range(1, MAX_PLAYERS + 1))
    return ('<form class="names" id="names" method="post" action="/names"><b>Next game\'s names</b> '
            '<small>(fill the first seats; the others keep "Seat k")</small><br>%s'
            '<input type="hidden" name="token" value="%s"><button type="submit">send to the board</button></form>'
            % (seats, escape(token)))


def handle(handler):
    """Check the post and send its names; the names the board now holds.
    BadRequest (one line) when anything is wrong: nothing is sent then."""
    from host.dashboard.server import BadRequest

    if not may_post(handler):
        raise BadRequest(403, "names can be set from this machine only, with a board attached")
    origin = handler.headers.get("Origin")
    if origin is not None and urlsplit(origin).netloc != handler.headers.get("Host", ""):
        raise BadRequest(403, "the names form posts from this dashboard's own page only")
    try:
        n = int(handler.headers.get("Content-Length", ""))
    except ValueError:
        raise BadRequest(411, "a form post needs its Content-Length")
    if not 0 <= n <= BODY_MAX:
        raise BadRequest(413, "form too large (%d bytes; at most %d)" % (n, BODY_MAX))
    try:
        form = parse_qs(handler.rfile.read(n).decode("utf-8"), keep_blank_values=True, strict_parsing=n > 0, errors="strict")
    except (ValueError, UnicodeDecodeError):
        raise BadRequest(400, "malformed form")
    fields = ["token"] + ["seat%d" % k for k in range(1, MAX_PLAYERS + 1)]
    for k, v in form.items():
        if k not in fields or len(v) != 1:
            raise BadRequest(400, "unknown or repeated form field %r" % k[:40])
    token = form.get("token", [""])[0]
    if not handler.server.tokens.good(token):
        raise BadRequest(403, "the form's token is not one this server gave, or was used already (reload the page)")
    seats = [form.get("seat%d" % k, [""])[0] for k in range(1, MAX_PLAYERS + 1)]
    while seats and seats[-1] == "":
        seats.pop()
    if not seats:
        raise BadRequest(400, "give at least the first seat's name")
    for k, name in enumerate(seats, 1):
        if name == "":
            raise BadRequest(400, "seat %d is empty: names fill the first seats in order" % k)
    wait = handler.server.names_limit.wait_s()
    if wait:
        raise BadRequest(429, "the names were changed %d times in a row: wait %d s and send them again" % (NAMES_BURST, wait + 0.999))
    if not handler.server.tokens.spend(token):  # two posts of one page at once: the first one goes
        raise BadRequest(403, "the form's token was used already (reload the page)")
    try:
        held = handler.server.names(seats)
    except UserError as err:
        raise BadRequest(400, str(err))
    if type(held) is not list or not all(type(n) is str for n in held):  # a board's reply is data: checked
        raise BadRequest(502, "the board answered the names with something other than a list of names")
    return held


def done_body(held):
    from host.sync.relay import names_words

    return '<p id="names-done">%s</p><p><a href="/">back to the live table</a></p>' % escape(names_words(held))

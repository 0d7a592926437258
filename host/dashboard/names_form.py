"""The live page's form for the next game's names.

Why these checks: the form changes the board, so it is taken only from this
machine (the client's address is loopback, whatever --http listens on), only
with the token the server put in its own page (a page of another site that
posts here has no way to read it) and, when the browser says where the post
comes from (Origin), only from this server's own origin. The names are sent
the way `names` sends them (host/sync/relay.py: checked once, then the board
thread's link). A refusal is one line and changes nothing.
"""

import hmac
from html import escape
from urllib.parse import parse_qs, urlsplit

from engine_lite.tables import MAX_PLAYERS, NAME_MAX
from host.errors import UserError

BODY_MAX = 2048  # bytes of a form post (5 names of 12 characters and a token fit many times)
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
    if not hmac.compare_digest(form.get("token", [""])[0], handler.server.token):
        raise BadRequest(403, "the form's token is not this server's (reload the page)")
    seats = [form.get("seat%d" % k, [""])[0] for k in range(1, MAX_PLAYERS + 1)]
    while seats and seats[-1] == "":
        seats.pop()
    if not seats:
        raise BadRequest(400, "give at least the first seat's name")
    for k, name in enumerate(seats, 1):
        if name == "":
            raise BadRequest(400, "seat %d is empty: names fill the first seats in order" % k)
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

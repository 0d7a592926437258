"""The board's table server (firmware/table_server.py) inside the real
MicroPython Unix port, on loopback sockets: the server and its phones run in
one guest, the phones as non-blocking client sockets, the board's loop as
`turn()` (App.step, then the server's poll, as the Pico W's loop does).

What is held: six event streams each get the new state in the turn after a
press; the page is served gzipped where accepted, plain where not; an idle
turn with six phones connected allocates nothing (heap_lock and
mem_total); a request never changes the game (POST, garbage, huge headers:
one log line each, the game's log unchanged); deadlines drop a silent or
stalled phone; more connections than the bound are refused, not queued.
"""

import pytest

from firmware import table_page
from tests.kit.table_kit import START_STALK_5P, lines, run

pytestmark = pytest.mark.mpy


def test_six_streams_get_the_state_in_the_turn_after_the_press_and_the_page_is_gzipped():
    r = run(
        """
cs = [client(b"GET /events HTTP/1.1\\r\\nHost: b\\r\\n\\r\\n") for i in range(6)]
turns(5)
first = [drain(c) for c in cs]
""" + START_STALK_5P + """
after = [drain(c) for c in cs]
print("first", [x.count(b"event: state") for x in first])
print("after", [x.count(b"event: state") for x in after])
print("stalk", [b'"game": "stalk-exchange"' in x for x in after])
g = client(b"GET / HTTP/1.1\\r\\nAccept-Encoding: gzip, br\\r\\n\\r\\n")
p = client(b"GET / HTTP/1.1\\r\\n\\r\\n")
turns(5)
import binascii
for name, c in (("gz", g), ("plain", p)):
    body = drain(c)
    head, _, data = body.partition(b"\\r\\n\\r\\n")
    print(name, len(data), binascii.crc32(data), b"Content-Encoding: gzip" in head)
"""
    )
    out = lines(r.stdout)
    assert out["first"] == "[1, 1, 1, 1, 1, 1]", r.stdout  # the state on connecting (no game yet)
    assert out["after"] == "[1, 1, 1, 1, 1, 1]", r.stdout  # the game, one event each: the newest state
    assert out["stalk"] == "[True, True, True, True, True, True]", r.stdout
    import binascii

    n, crc, gz = out["gz"].split()
    assert (int(n), int(crc), gz) == (len(table_page.PAGE_GZ), binascii.crc32(table_page.PAGE_GZ), "True")
    n, crc, gz = out["plain"].split()
    assert (int(n), int(crc), gz) == (len(table_page.PAGE), binascii.crc32(table_page.PAGE), "False")


def test_an_idle_turn_with_six_phones_connected_allocates_nothing():
    r = run(
        """
cs = [client(b"GET /events HTTP/1.1\\r\\n\\r\\n") for i in range(6)]
""" + START_STALK_5P + """
turns(20, 5)
for c in cs:
    drain(c)
gc.collect()
def idle():
    for i in range(100):
        srv.poll()
def idle_timed():
    for i in range(100):
        clk[0] += 7  # the deadline check runs every CHECK_MS
        srv.poll()
print("locked", locked(idle), locked(idle_timed))
print("counted", untouched(idle), untouched(idle_timed))
print("open", sum(1 for c in srv.conns if c.sock is not None))
"""
    )
    out = lines(r.stdout)
    assert out["locked"] == "ok ok", r.stdout
    assert out["counted"] == "ok ok", r.stdout
    assert out["open"] == "6", r.stdout


def test_a_request_never_changes_the_game_and_a_bad_one_is_one_log_line():
    r = run(
        START_STALK_5P
        + """
press(1)  # a plant: the game has events
n = len(app.game.log)
bad = [
    b"POST /events HTTP/1.1\\r\\nContent-Length: 5\\r\\n\\r\\nhello",
    b"DELETE / HTTP/1.1\\r\\n\\r\\n",
    b"GARBAGE\\r\\n\\r\\n",
    b"GET /settings HTTP/1.1\\r\\n\\r\\n",
    b"GET / HTTP/1.1\\r\\nX: " + b"a" * 2000 + b"\\r\\n\\r\\n",
]
codes = []
for req in bad:
    c = client(req)
    turns(3)
    codes.append(drain(c)[9:12].decode())
print("codes", " ".join(codes))
print("logged", len(logged), srv.refused)
print("oneline", all("\\n" not in x for x in logged))
print("same", len(app.game.log) == n)
ok = client(b"GET /state.json HTTP/1.1\\r\\n\\r\\n")
turns(3)
print("still", drain(ok)[9:12].decode())
"""
    )
    out = lines(r.stdout)
    assert out["codes"] == "405 405 400 404 431", r.stdout
    assert out["logged"] == "5 5", r.stdout
    assert out["oneline"] == "True" and out["same"] == "True", r.stdout
    assert out["still"] == "200", r.stdout


def test_deadlines_drop_silent_phones_and_the_bound_refuses_the_ninth():
    r = run(
        START_STALK_5P
        + """
silent = client(b"GET / HT")  # half a request line, then nothing
turns(2, 10)
print("held", sum(1 for c in srv.conns if c.sock is not None))
turns(40, 100)  # 4 s: past REQ_MS
print("dropped", sum(1 for c in srv.conns if c.sock is not None), logged[-1])
many = [client(b"GET /events HTTP/1.1\\r\\n\\r\\n") for i in range(ts.MAX_CONN)]
extra = client(b"GET / HTTP/1.1\\r\\n\\r\\n")
turns(3)
print("ninth", drain(extra)[9:12].decode(), sum(1 for c in srv.conns if c.sock is not None))
for c in many:
    c.close()
turns(5)
print("freed", sum(1 for c in srv.conns if c.sock is not None))
"""
    )
    out = lines(r.stdout)
    assert out["held"] == "1", r.stdout
    assert out["dropped"].startswith("0 table page: request not whole within"), r.stdout
    assert out["ninth"].split() == ["503", "8"], r.stdout
    assert out["freed"] == "0", r.stdout


def test_the_round_so_far_names_each_event_and_whose_turn_it_was_and_follows_an_undo():
    """The page's last round: the events of the turn in play and the n-1
    before it, each with its player, from the records the App acknowledged
    (the hook keeps references in a ring made at start: a press's turn
    allocates nothing for it)."""
    r = run(
        START_STALK_5P
        + """
import json
from engine_lite import record
press(6)  # Seat 1: plant
press(7)  # swap
press(6, 2)  # end the turn
press(6)  # Seat 2: plant
def shown():
    c = client(b"GET /state.json HTTP/1.1\\r\\n\\r\\n")
    turns(3)
    doc = json.loads(drain(c).partition(b"\\r\\n\\r\\n")[2])
    return " ".join("%s:%s" % (e["who"].replace(" ", ""), e["ev"]) for e in doc["round"])
print("round", shown())
press(5)  # UNDO: the plant is gone from the round too
print("undone", shown())
gid, n = app.store.game_id, len(app.game.log)
def hear():
    srv._heard(gid, n, record.PLANT)
    srv._heard(gid, n, record.UNDO)
print("heard", locked(hear), untouched(hear))
"""
    )
    out = lines(r.stdout)
    assert out["round"] == "Seat1:plant Seat1:swap Seat1:end_turn Seat2:plant", r.stdout
    assert out["undone"] == "Seat1:plant Seat1:swap Seat1:end_turn", r.stdout
    assert out["heard"] == "ok ok", r.stdout


def test_a_server_started_mid_round_reads_the_round_from_the_games_log():
    """A board that restarts mid-round: its new server reads its newest
    records from the log once, at start, and names the same round."""
    r = run(
        START_STALK_5P
        + """
for b, k in ((6, 1), (7, 1), (6, 2), (6, 1), (7, 1)):
    press(b, k)
before = srv._round(app.game)
srv.close()
again = ts.TableServer(app, "127.0.0.1", PORT, clock=lambda: clk[0])
print("same", again._round(app.game) == before, len(before))
"""
    )
    out = lines(r.stdout)
    assert out["same"] == "True 5", r.stdout

"""The board's side of the serial link (firmware/link.py, docs/protocol.md).

What the link must do: "versioned hello carrying the board's id, firmware version, protocol
version and current game id; request/response with sequence numbers ...
Dangerous requests (new game, erase) need an explicit confirm. Every malformed
or unknown request gets an error reply and changes nothing. Reflashing with
mpremote must still work while the application runs."
"""

import json

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from firmware import codec
from host.sync import codec_host
from firmware import link
from tests.kit.linkkit import StoreBoard, answer, request

REC = "tests/records/"


def board_with_games():
    b = StoreBoard()
    b.load(open(REC + "stalk-4p.jsonl"), finish=True)
    b.load(open(REC + "orchids-2p.jsonl").readlines()[:20])
    return b


@pytest.fixture
def dev():
    return link.Link(board_with_games())


def test_hello_is_versioned(dev):
    kind, ans = answer(dev, "hello", seq=513)
    assert kind == "R"
    assert ans == {"proto": codec.PROTO, "fw": "test", "build": "files", "board": "test-board", "id": None, "up": 0, "game": "0002", "max": codec.MAX_PAYLOAD}


def test_the_host_sets_the_board_clock_and_new_games_carry_their_start_time(dev):
    """Whenever the host talks to a board it sets the board's clock;
    the start record gains `at` when the board knows the time, `uptime` when not."""
    b = dev.board
    b.clock.wall = None  # a Pico after power-up: no idea of the date
    assert answer(dev, "time")[1] == {"utc": None, "up": 0}
    b.load(['{"ev":"start","game":"oh-my-orchids","players":["Ann","Bo"]}'])
    ev0 = b.game.events()[0]
    assert ev0["uptime"] == 0 and "at" not in ev0 and 0 <= ev0["nonce"] < 2 ** 32
    kind, ans = answer(dev, "time", set=1796068200)  # 2026-11-30T19:50:00Z
    assert kind == "R" and abs(ans["utc"] - 1796068200) <= 1
    b.load(['{"ev":"start","game":"oh-my-orchids","players":["Ann","Bo"]}'])
    ev1 = b.game.events()[0]
    assert ev1["at"] in ("2026-11-30T19:50:00Z", "2026-11-30T19:50:01Z") and "uptime" not in ev1
    assert ev1["nonce"] != ev0["nonce"]
    for bad in (-1, 2 ** 32, "2026-11-30", 1.5, True):
        kind, ans = answer(dev, "time", set=bad)
        assert kind == "X" and ans["code"] == "bad_arg"


def test_status_and_games(dev):
    assert answer(dev, "status")[1]["events"] == 20
    assert answer(dev, "games")[1] == {"current": "0002", "archived": [["0001", False]]}


def test_events_from_index_in_chunks(dev):
    recs = dev.board.records("0001")
    got, have = [], 0
    while True:
        kind, (start, total, pcrc, chunk) = answer(dev, "events", game="0001", **{"from": have})
        assert kind == "E" and start == have and total == len(recs)
        assert pcrc == codec.prefix_crc(recs, start)
        got += chunk
        have += len(chunk)
        if have == total:
            break
        assert chunk, "a chunk always makes progress"
    assert got == recs


def test_events_past_the_end_says_where_the_log_ends(dev):
    kind, (start, total, _, chunk) = answer(dev, "events", game="0002", **{"from": 500})
    assert (kind, start, total, chunk) == ("E", 20, 20, [])


def test_mark_synced_only_archived_games(dev):
    assert answer(dev, "mark_synced", game="0002")[1]["code"] == "unknown_game"
    assert answer(dev, "mark_synced", game="0001") == ("R", {"game": "0001", "synced": True})
    assert dev.board.archived() == [("0001", True)]


def test_push_settings_validated(dev):
    kind, ans = answer(dev, "settings", set={"names": ["Ann", "Bo"], "brightness": 30})
    assert kind == "R" and ans["settings"]["names"] == ["Ann", "Bo"] and ans["settings"]["brightness"] == 30
    before = dev.board.snapshot()
    for bad in ({"names": ["Ann", "Ann"]}, {"names": ["x" * 13]}, {"brightness": 300}, {"brightness": True},
                {"colour": 1}, {}, [], {"track_start": {"9": 20}}, {"track_start": {"3": 0}}):
        kind, ans = answer(dev, "settings", set=bad)
        assert kind == "X" and ans["code"] == "bad_arg", bad
    assert dev.board.snapshot() == before
    assert answer(dev, "settings", set={"track_start": {"3": 24}})[1]["settings"]["track_start"]["3"] == 24


def test_live_subscription_pushes_each_new_event(dev):
    b = dev.board
    assert answer(dev, "subscribe", on=True)[1] == {"on": True, "game": "0002", "events": 20}
    b.play({"ev": "start", "game": "stalk-exchange", "players": ["Ann", "Bo"]})
    b.play({"ev": "plant"})
    pushes = [codec_host.parse_push(p) for p in codec.Deframer().feed(dev.feed(b""))]
    assert pushes == [("0003", 0, b.records("0003")[0]), ("0003", 1, b"\x02")]
    b.play({"ev": "undo"})
    assert [codec_host.parse_push(p) for p in codec.Deframer().feed(dev.feed(b""))] == [("0003", 1, b"\x0b")]
    answer(dev, "subscribe", on=False)
    b.play({"ev": "plant"})
    assert dev.feed(b"") == b""


def test_dangerous_requests_need_the_confirm_token(dev):
    start = {"ev": "start", "game": "stalk-exchange", "players": ["Ann", "Bo"]}
    before = dev.board.snapshot()
    kind, ans = answer(dev, "new_game", start=start)
    assert kind == "X" and ans["code"] == "confirm" and dev.board.snapshot() == before
    token = ans["token"]
    assert answer(dev, "new_game", start=start, confirm=token + 1)[1]["code"] == "confirm"
    assert dev.board.snapshot() == before, "a wrong token changes nothing"
    kind, ans = answer(dev, "new_game", start=start)
    token = ans["token"]
    answer(dev, "status")  # any other request in between voids the token
    assert answer(dev, "new_game", start=start, confirm=token)[1]["code"] == "confirm"
    token = answer(dev, "new_game", start=start)[1]["token"]
    kind, ans = answer(dev, "new_game", start=start, confirm=token)
    assert kind == "R" and ans["game"] == "0003"
    ev0 = dev.board.game.events()[0]
    assert len(dev.board.records("0003")) == 1 and "nonce" in ev0 and "at" in ev0, "stamped by the board"
    assert {k: v for k, v in ev0.items() if k not in ("nonce", "at")} == start
    assert dev.board.archived()[-1][0] == "0002", "the unfinished game was archived, not lost"


def test_a_used_or_void_token_never_confirms(dev):
    """Found by the bench's fuzzing: an old token (or 0) must not pass again."""
    start = {"ev": "start", "game": "oh-my-orchids", "players": ["Ann", "Bo"]}
    token = answer(dev, "new_game", start=start)[1]["token"]
    assert answer(dev, "new_game", start=start, confirm=token)[0] == "R"
    before = dev.board.snapshot()
    for guess in (token, 0, None, True):
        assert answer(dev, "new_game", start=start, confirm=guess)[1]["code"] == "confirm"
    t2 = answer(dev, "new_game", start=start)[1]["token"]
    answer(dev, "new_game", start={"ev": "plant"})  # a refused request in between voids it too
    assert answer(dev, "new_game", start=start, confirm=t2)[1]["code"] == "confirm"
    t3 = answer(dev, "new_game", start=start)[1]["token"]
    other = dict(start, players=["Cy", "Di"])
    assert answer(dev, "new_game", start=other, confirm=t3)[1]["code"] == "confirm", "a token is for one request"
    assert dev.board.snapshot() == before


def test_new_game_with_a_bad_start_is_refused_before_any_confirm(dev):
    for bad in (None, {"ev": "plant"}, {"ev": "start", "game": "chess", "players": ["A", "B"]}):
        assert answer(dev, "new_game", start=bad)[1]["code"] == "bad_arg"


def test_erase_needs_confirm_then_deletes_the_archived_game(dev):
    kind, ans = answer(dev, "erase", game="0001")
    assert ans["code"] == "confirm"
    assert "0001" in [g for g, _ in dev.board.archived()]  # nothing changed yet
    assert answer(dev, "erase", game="0001", confirm=ans["token"])[1] == {"erased": "0001"}
    assert "0001" not in [g for g, _ in dev.board.archived()]
    assert answer(dev, "erase", game="0001")[1]["code"] == "unknown_game"
    assert answer(dev, "erase", game="9999")[1]["code"] == "unknown_game"
    assert answer(dev, "erase", game="0002")[1]["code"] == "unknown_game"  # the game in progress


def test_press_is_refused_unless_the_board_allows_remote_buttons(dev):
    assert answer(dev, "press", button=0)[1]["code"] == "unknown_op"


MALFORMED = [
    b"",
    b"Q",
    b"Q\x01\x00",
    b"Q\x01\x00not json",
    b"Q\x01\x00\xff\xfe",
    b"Q\x01\x00[1,2]",
    b"Q\x01\x00{}",
    b'Q\x01\x00{"op":5}',
    b'Q\x01\x00{"op":"format_flash"}',
    b'Q\x01\x00{"op":"__init__"}',
    b'Q\x01\x00{"op":"events"}',
    b'Q\x01\x00{"op":"events","game":"0001","from":-1}',
    b'Q\x01\x00{"op":"events","game":"0001","from":1.5}',
    b'Q\x01\x00{"op":"events","game":"nope","from":0}',
    b'Q\x01\x00{"op":"events","game":7,"from":0}',
    b'Q\x01\x00{"op":"subscribe","on":"yes"}',
    b'Q\x01\x00{"op":"mark_synced","game":"0002"}',
    b'Q\x01\x00{"op":"settings","set":{"names":"Ann"}}',
    b'R\x01\x00{"op":"hello"}',
    b'X\x01\x00{"op":"hello"}',
]


@pytest.mark.parametrize("payload", MALFORMED)
def test_malformed_request_gets_an_error_reply_and_changes_nothing(dev, payload):
    before = dev.board.snapshot()
    out = codec.Deframer().feed(dev.feed(codec.encode(payload) if payload else b"\x00\x00"))
    if payload:
        assert len(out) == 1 and out[0][0] == codec.K_ERR
        assert json.loads(out[0][3:])["code"] in ("bad_request", "unknown_op", "bad_arg", "unknown_game")
    else:
        assert out == []
    assert dev.board.snapshot() == before


# -- fuzzing: never crash, never change anything (bench/ does 100k+ frames) -------

@pytest.mark.slow
@settings(max_examples=300, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(st.lists(st.binary(max_size=80), max_size=6))
def test_fuzz_garbage_bytes(dev, chunks):
    before = dev.board.snapshot()
    for c in chunks:
        out = dev.feed(c)
        for p in codec.Deframer().feed(out):
            assert p[0] == codec.K_ERR
    assert dev.board.snapshot() == before


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-70000, 70000) | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
OPS = tuple(name[3:] for name in dir(link.Link) if name.startswith("op_"))  # the requests the board answers
ops = st.sampled_from(OPS + ("", "boot", "op_hello", "events ", "HELLO"))
arg_names = st.sampled_from(("game", "from", "on", "set", "start", "confirm", "button", "kind", "x"))


@pytest.mark.slow
@settings(max_examples=400, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(ops, st.dictionaries(arg_names, json_values | st.sampled_from(["0001", "0002", 0, 1])), st.integers(0, 0xFFFF))
def test_fuzz_structured_requests(dev, op, args, seq):
    """Random requests of every op with random arguments: exactly one reply with
    the same seq; an error reply means nothing changed; only mark_synced and
    settings may change the board when they succeed (a confirm token cannot be guessed)."""
    before = dev.board.snapshot()
    args = dict(args, op=op)
    wire = codec.encode(bytes((codec.K_REQ, seq & 0xFF, seq >> 8)) + json.dumps(args).encode())
    out = codec.Deframer(4096).feed(dev.feed(wire))
    if len(wire) > codec.MAX_PAYLOAD + 8:  # too long for the board's buffer: dropped unanswered
        assert out == [] or len(json.dumps(args).encode()) + 3 <= codec.MAX_PAYLOAD
    if not out:
        assert dev.board.snapshot() == before
        return
    assert len(out) == 1 and (out[0][1] | out[0][2] << 8) == seq
    if out[0][0] == codec.K_ERR or op not in ("mark_synced", "settings"):
        assert dev.board.snapshot() == before, (op, args)


@pytest.mark.slow
@settings(max_examples=300, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(st.binary(min_size=1, max_size=200))
def test_fuzz_random_frames_with_good_checksums(dev, payload):
    before = dev.board.snapshot()
    out = codec.Deframer(4096).feed(dev.feed(codec.encode(payload)))
    assert len(out) == 1
    if out[0][0] == codec.K_ERR:
        assert dev.board.snapshot() == before


# -- mpremote must still get in -------------------------------------------------

class KbdIntrPort:
    """A stand-in for MicroPython's USB CDC with kbd_intr(3) armed: a Ctrl-C
    byte raises KeyboardInterrupt in the running program instead of being read."""

    def __init__(self, *arrivals):
        self.arrivals = [bytearray(a) for a in arrivals]  # what has arrived by each poll
        self.out = bytearray()

    def read(self, n):
        if not self.arrivals:
            return None
        data = self.arrivals[0]
        if 0x03 in data[:n]:
            raise KeyboardInterrupt
        chunk = data[:n]
        del data[:n]
        if not data:
            self.arrivals.pop(0)
        return chunk

    def write(self, data):
        self.out.extend(data)


def test_mpremote_ctrl_c_stops_the_app_while_the_link_runs(dev):
    """mpremote enters the raw REPL with `\\r\\x03\\x03` then `\\r\\x01`: Ctrl-C must
    interrupt the application even in the middle of link traffic, and the link
    must not swallow the KeyboardInterrupt."""
    req = codec.encode(b'Q\x03\x00{"op":"hello"}')  # seq 3: the byte 0x03 travels escaped
    port = KbdIntrPort(req, req[:9], b"\r\x03\x03\r\x01")
    dev.port = port
    with pytest.raises(KeyboardInterrupt):
        for _ in range(100):
            dev.poll()
    assert len(codec.Deframer().feed(bytes(port.out))) == 1, "the whole frame was answered before Ctrl-C"


def test_link_traffic_alone_never_interrupts(dev):
    reqs = b"".join(codec.encode(bytes((codec.K_REQ, s & 0xFF, s >> 8)) + b'{"op":"status"}') for s in range(0, 2000, 7))
    port = KbdIntrPort(reqs)
    dev.port = port
    for _ in range(1000):
        dev.poll()
    assert len(codec.Deframer(4096).feed(bytes(port.out))) == len(range(0, 2000, 7))


# -- the same handler inside a real MicroPython -------------------------------

MPY_BOARD = '''
import engine_lite
from firmware import codec
from firmware import link

class MiniBoard:
    board_id = "mini"
    uid = "m1"
    fw = "t"
    build = "files"
    def uptime(self):
        return 5
    remote_buttons = False
    def __init__(self, path):
        self.g = engine_lite.Game()
        engine_lite.replay(open(path), self.g)
        self.hooks = []
    def current(self):
        return "0001"
    def records(self, gid):
        if gid != "0001":
            raise KeyError(gid)
        return [bytes(r) for r in self.g.log.records()]
    def window(self, gid, start, room):
        return None
    def archived(self):
        return []
    def status(self):
        return {"screen": "x"}
    def settings(self):
        return {}
    def watch(self, fn):
        self.hooks.append(fn)

def run(root):
    dev = link.Link(MiniBoard(root + "/tests/records/stalk-5p-bag.jsonl"))
    out = bytearray()
    seq = 1
    for body in (b'{"op":"hello"}', b'{"op":"events","game":"0001","from":0}', b'{"op":"events","game":"0001","from":60}',
                 b'{"op":"nope"}', b'junk', b'{"op":"subscribe"}'):
        out.extend(dev.feed(b"\\x07garbage" + codec.encode(bytes((codec.K_REQ, seq, 0)) + body)))
        seq += 1
    return out
'''


@pytest.mark.mpy
def test_device_link_answers_the_same_in_real_micropython():
    from tests.kit.mpy_harness import run_mpy, REPO
    import binascii

    r = run_mpy("import binascii\nprint(binascii.hexlify(run('.')).decode())", setup=MPY_BOARD)
    ns = {}
    exec(MPY_BOARD, ns)
    want = ns["run"](str(REPO))

    def meaning(wire):  # JSON key order may differ (MicroPython dicts are unordered)
        out = []
        for p in codec.Deframer(4096).feed(wire):
            out.append((p[:3], bytes(p[3:]) if p[0] == codec.K_EVENTS else json.loads(p[3:])))
        return out

    assert r.stdout.strip(), r.stderr[-800:]
    got = meaning(binascii.unhexlify(r.stdout.strip()))
    assert got == meaning(want)
    assert [p[0][0] for p in got] == [codec.K_OK, codec.K_EVENTS, codec.K_EVENTS, codec.K_ERR, codec.K_ERR, codec.K_OK]


def fuzz_wires(n, seed):
    """n seeded fuzz inputs for the device link: garbage bytes, valid
    requests with one bit flipped, random payloads with a good checksum,
    and well-formed requests of every op with random arguments."""
    import random

    rnd = random.Random(seed)
    values = (None, True, 0, 1, -1, 70000, "", "0001", "0002", "x" * 40, [], {}, [1, "a"], {"a": 1})
    names = ("game", "from", "on", "set", "start", "confirm", "button", "kind", "x")
    out = []
    for i in range(n):
        kind = i % 4
        seq = rnd.randrange(0x10000)
        req = {"op": rnd.choice(OPS + ("", "boot", "HELLO"))}
        for _ in range(rnd.randrange(3)):
            req[rnd.choice(names)] = rnd.choice(values)
        wire = codec.encode(bytes((codec.K_REQ, seq & 0xFF, seq >> 8)) + json.dumps(req).encode())
        if kind == 0:
            wire = bytes(rnd.randrange(256) for _ in range(rnd.randrange(1, 80)))
        elif kind == 1:
            b = bytearray(wire)
            b[rnd.randrange(len(b))] ^= 1 << rnd.randrange(8)
            wire = bytes(b)
        elif kind == 2:
            wire = codec.encode(bytes(rnd.randrange(256) for _ in range(rnd.randrange(1, 120))))
        out.append(wire)
    return out


MPY_FUZZ = """
dev = link.Link(MiniBoard('tests/records/stalk-5p-bag.jsonl'))
before = dev.board.records('0001')
kinds = bytearray()
for w in WIRES:
    for p in codec.Deframer(4096).feed(dev.feed(w)):
        kinds.append(p[0])
print(bytes(kinds).decode(), dev.board.records('0001') == before)
"""


@pytest.mark.mpy
def test_link_fuzz_in_real_micropython():
    """2,000 fuzz inputs into the device link inside a real MicroPython: it
    never raises, answers exactly as the same code does under CPython (reply
    kind by reply kind), and the game's records stay as they were."""
    from tests.kit.mpy_harness import run_mpy

    wires = fuzz_wires(2000, seed=13)
    setup = MPY_BOARD + "WIRES = %r\n" % (wires,)
    r = run_mpy(MPY_FUZZ, setup=setup)
    got, same = r.stdout.split()
    ns = {}
    exec(MPY_BOARD, ns)
    dev = link.Link(ns["MiniBoard"](REC + "stalk-5p-bag.jsonl"))
    want = bytearray()
    for w in wires:
        want.extend(p[0] for p in codec.Deframer(4096).feed(dev.feed(w)))
    assert same == "True"
    assert got == want.decode() and got.count(chr(codec.K_ERR)) > 500

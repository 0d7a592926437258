"""The serial link's wire format, firmware/codec.py and its host half,
host/sync/codec_host.py (docs/protocol.md).

Framing, as required: "Framing that re-synchronises after garbage, partial or
oversized frames, with a checksum". Plus our own demand: a frame never carries
the REPL control characters, so mpremote's Ctrl-C / Ctrl-A always reach
MicroPython.

Payloads, as required: "one module that both encodes and decodes every link
frame and holds prefix_crc, imported by both sides": every kind (request,
answer, error, events, live event) round-trips through the codec, its bytes
are the ones docs/protocol.md draws, and a damaged payload is refused with a
one-line FrameError.
"""

import os

import pytest
from hypothesis import given, settings, strategies as st

from firmware import codec
from host.sync import codec_host

payloads = st.binary(min_size=1, max_size=codec.MAX_PAYLOAD)


@given(payloads)
def test_round_trip(p):
    d = codec.Deframer()
    assert d.feed(codec.encode(p)) == [p]


@given(payloads)
def test_frames_never_carry_repl_control_bytes(p):
    """Ctrl-A (raw REPL), Ctrl-B, Ctrl-C (interrupt), Ctrl-D (soft reset), Ctrl-E
    (paste mode) never appear on the wire, and 0x00 only as the delimiter."""
    wire = codec.encode(p)
    assert wire[0] == 0 and wire[-1] == 0
    assert not any(b in wire[1:-1] for b in (0, 1, 2, 3, 4, 5))


@given(st.binary(max_size=300), payloads, st.binary(max_size=50))
def test_resync_after_garbage(garbage, p, tail):
    """Whatever comes before (garbage, a torn frame), the next frame is read."""
    d = codec.Deframer()
    got = d.feed(garbage + codec.encode(p) + tail)
    assert p in got


@given(payloads, st.integers(min_value=1, max_value=40))
def test_torn_frame_then_good_frame(p, cut):
    wire = codec.encode(p)
    torn = wire[: min(cut, len(wire) - 2)]  # at least the last checksum byte is lost
    d = codec.Deframer()
    assert d.feed(torn + codec.encode(b"next")) == [b"next"]


def test_oversized_frame_is_dropped_and_reader_recovers():
    d = codec.Deframer(max_payload=64)
    big = codec.encode(bytes(range(6, 200)))
    assert d.feed(big) == []
    assert d.dropped == 1
    assert d.feed(codec.encode(b"ok")) == [b"ok"]
    assert len(d.buf) == 68  # the reader never grew its buffer


@pytest.mark.slow
@given(payloads, st.data())
def test_any_single_bit_flip_is_caught(p, data):
    wire = bytearray(codec.encode(p))
    i = data.draw(st.integers(min_value=1, max_value=len(wire) - 2))
    bit = data.draw(st.integers(min_value=0, max_value=7))
    wire[i] ^= 1 << bit
    d = codec.Deframer()
    assert p not in d.feed(bytes(wire))


@settings(max_examples=50)
@given(st.lists(payloads, max_size=8))
def test_stream_of_frames_fed_byte_by_byte(ps):
    wire = b"".join(codec.encode(p) for p in ps)
    d = codec.Deframer()
    got = []
    for b in wire:
        r = d.feed_byte(b)
        if r is not None:
            got.append(r)
    assert got == ps


def test_random_noise_yields_nothing_valid_by_accident():
    d = codec.Deframer()
    rnd = os.urandom(200_000)
    assert d.feed(rnd) == []  # crc32: a false frame has odds 2**-32


# -- payloads ---------------------------------------------------------------

GIDS = st.text(alphabet="0123456789abcdef", min_size=1, max_size=32)
RECORDS = st.lists(st.binary(min_size=1, max_size=40), max_size=30)
SEQS = st.integers(0, 0xFFFF)
JSON = st.dictionaries(st.text(max_size=8), st.one_of(st.none(), st.booleans(), st.integers(-(2**31), 2**31), st.text(max_size=20)), max_size=6)


def payload_of(wire):
    (p,) = codec.Deframer(4096).feed(wire)
    return p


@pytest.mark.slow
@settings(max_examples=60)
@given(SEQS, JSON, st.sampled_from(["hello", "status", "games", "events", "faults", "settings"]))
def test_a_request_round_trips(seq, args, op):
    req = dict(args, op=op)
    p = payload_of(codec_host.request(seq, req))
    assert p[0] == codec.K_REQ and p[1] | p[2] << 8 == seq  # kind, seq little-endian
    assert codec.parse_request(p) == (seq, req)


ANSWERS = [  # the shapes of the board's answers (docs/protocol.md "Requests")
    {"proto": 1, "fw": "0.1", "board": "pico", "id": "e6613852832a4f21", "up": 12, "game": "0002", "max": 600},
    {"game": "0002", "events": 17, "sub": False, "screen": "stalk", "over": False, "faults": 0},
    {"current": None, "archived": [["0001", True], ["0002", False]]},
    {"settings": {"names": ["Ann", "Bo"], "brightness": 48, "track_start": {"3": 4}}},
    {"faults": "#1 stalk RuntimeError: stuck @ firmware/app.py, line 3, in step\n"},
    {"utc": 1796068200, "up": 5},
]


@pytest.mark.parametrize("ans", ANSWERS, ids=["hello", "status", "games", "names", "faults", "time"])
def test_an_answer_round_trips(ans):
    p = payload_of(codec.reply(codec.K_OK, 513, ans))
    assert p[:3] == b"R\x01\x02"
    assert codec_host.parse_reply(p) == (codec.K_OK, 513, ans)


def test_an_error_round_trips():
    err = {"code": "confirm", "msg": "erase 0001: send again with this confirm token", "token": 70000}
    p = payload_of(codec.reply(codec.K_ERR, 9, err))
    assert p[:3] == b"X\x09\x00"
    assert codec_host.parse_reply(p) == (codec.K_ERR, 9, err)


@pytest.mark.slow
@settings(max_examples=60)
@given(SEQS, GIDS, RECORDS, st.integers(0, 40), st.integers(16, 4000))
def test_an_events_answer_round_trips(seq, gid, recs, start, cap):
    start = min(start, len(recs))
    body = codec.events_body(gid, recs, start, codec.MAX_PAYLOAD, cap)
    kind, got_seq, got_body = codec_host.parse_reply(payload_of(codec.events(seq, body)))
    assert (kind, got_seq, got_body) == (codec.K_EVENTS, seq, body)
    got_gid, got_start, total, pcrc, chunk = codec_host.parse_events(body)
    assert (got_gid, got_start, total, pcrc) == (gid, start, len(recs), codec.prefix_crc(recs, start))
    assert chunk == recs[start : start + len(chunk)]
    assert chunk or start == len(recs), "always at least one record while there are more"
    assert len(body) + 3 <= codec.MAX_PAYLOAD


def test_the_events_body_is_the_documented_bytes():
    """gid_len, gid, start u16, total u16, prefix_crc u32, count u8, count x (len u8, record)."""
    recs = [b"\x01\x02", b"\x03", b"\x04\x05\x06"]
    c = codec.prefix_crc(recs, 1).to_bytes(4, "little")
    want = b"\x04" + b"0007" + b"\x01\x00" + b"\x03\x00" + c + b"\x02" + b"\x01\x03" + b"\x03\x04\x05\x06"
    assert codec.events_body("0007", recs, 1, codec.MAX_PAYLOAD, 0xFFFF) == want


def test_prefix_crc_chains_length_and_bytes_of_each_record():
    import binascii

    recs = [b"ab", b"c"]
    want = binascii.crc32(b"c", binascii.crc32(b"\x01", binascii.crc32(b"ab", binascii.crc32(b"\x02"))))
    assert codec.prefix_crc(recs, 2) == want
    assert codec.prefix_crc(recs, 0) == 0 and codec.prefix_crc(recs, 9) == want


@pytest.mark.slow
@settings(max_examples=60)
@given(SEQS, GIDS, st.integers(0, 0xFFFF), st.binary(min_size=1, max_size=40))
def test_a_live_event_round_trips(seq, gid, index, rec):
    p = payload_of(codec.push(seq, gid, index, rec))
    assert p[0] == codec.K_PUSH
    assert codec_host.parse_reply(p) == (codec.K_PUSH, seq, (gid, index, rec))
    assert codec_host.parse_push(p) == (gid, index, rec)


def one_line_refusal(fn, *args):
    with pytest.raises(codec.FrameError) as e:
        fn(*args)
    assert str(e.value) and "\n" not in str(e.value)
    return e.value


def test_a_corrupted_frame_is_dropped_not_decoded():
    wire = bytearray(codec.reply(codec.K_OK, 1, {"game": "0001"}))
    wire[5] ^= 0x20
    d = codec.Deframer()
    assert d.feed(bytes(wire)) == [] and d.dropped == 1


@pytest.mark.parametrize(
    "payload, words",
    [
        (b"R\x01\x00{}", "not a request frame"),
        (b"Q\x01", "not a request frame"),
        (b"Q\x05\x00{nope", "not a JSON object"),
        (b"Q\x05\x00\xff\xfe", "not a JSON object"),
        (b'Q\x05\x00["op"]', "not a JSON object"),
        (b'Q\x05\x00{"op": 3}', "an object with an op"),
    ],
)
def test_a_damaged_request_is_refused_in_one_line(payload, words):
    err = one_line_refusal(codec.parse_request, payload)
    assert words in str(err)
    assert err.seq == (5 if payload[1:3] == b"\x05\x00" else 0), "the seq, once readable, goes back in the error"


@pytest.mark.parametrize(
    "payload, words",
    [
        (b"R\x01", "not a reply frame"),
        (b"Z\x01\x00{}", "not a reply frame"),
        (b"R\x01\x00{broken", "not a JSON object"),
        (b"X\x01\x00[1, 2]", "not a JSON object"),
        (b"P\x01\x00\x04ab", "length does not match"),
        (b"P\x01\x00\x040001\x00\x00\x05ab", "length does not match"),
    ],
)
def test_a_damaged_reply_is_refused_in_one_line(payload, words):
    assert words in str(one_line_refusal(codec_host.parse_reply, payload))


@pytest.mark.parametrize("cut", [1, 5, 12, 14, 16])
def test_a_cut_or_padded_events_body_is_refused_in_one_line(cut):
    body = codec.events_body("0001", [b"\x01\x02", b"\x03\x04\x05"], 0, codec.MAX_PAYLOAD, 0xFFFF)
    one_line_refusal(codec_host.parse_events, body[:cut])
    one_line_refusal(codec_host.parse_events, body + b"\x00")

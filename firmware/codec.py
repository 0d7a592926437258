"""The serial link's wire format, both directions, one module (docs/protocol.md):
the board (firmware/link.py) and the host (host/sync/link.py, host/sync/db.py,
through host/sync/codec_host.py) encode and decode every frame only through it.

Two layers:

* the frame: the bytes on the wire around one payload (`encode`, `Deframer`);
* the payload: kind (1 byte), seq (2 bytes little-endian), body:

    host -> board  'Q'  request   a JSON object {"op": ..., args}    request / parse_request
    board -> host  'R'  answer    a JSON object                      reply / parse_reply
                   'X'  error     a JSON object {"code", "msg", ...}  reply / parse_reply
                   'E'  events    binary records (events_body)       events / parse_events
                   'P'  live      one new event (seq = push counter)  push / parse_push

  This module is the board's half (and what both halves share): the board
  never sends a request nor reads a reply, so `request`, `parse_reply`,
  `parse_events` and `parse_push` are host/sync/codec_host.py's, built on
  this module's framing and heads, and never on a board.

  and `prefix_crc`, the checksum both sides compute over a game's first
  records to prove they hold the same prefix.

A frame on the wire is

    0x00  stuffed(payload + crc32(payload) as 4 bytes little-endian)  0x00

Byte stuffing: every byte of the set 0x00-0x05 and 0x10 is sent as the two
bytes 0x10, byte ^ 0x40. So inside a frame

* 0x00 never appears: a reader always re-synchronises at the next 0x00,
  whatever garbage, torn frame or REPL chatter came before;
* the REPL control characters Ctrl-A..Ctrl-E (0x01-0x05) never appear, so
  the board can keep MicroPython's Ctrl-C keyboard interrupt armed while
  the application runs and `mpremote` (Ctrl-C, Ctrl-A) still breaks into the
  raw REPL (docs/protocol.md, "Reflashing").

A frame is dropped (counted in `Deframer.dropped`) when its checksum fails,
it is shorter than the checksum, it holds an unescaped control byte or a
bad escape, or it is longer than `max_payload` (the reader then skips to the
next 0x00 without buffering the rest). A payload that is not what its kind
says is refused by the parse_* functions with a `FrameError` (one line).
MicroPython-compatible (the board runs it too: kept small); `binascii` has
crc32 on both sides.
"""

import binascii
import json

from engine_lite import const


_END = const(0x00)
_ESC = const(0x10)
_FLIP = const(0x40)
MAX_PAYLOAD = const(600)  # bytes of payload a reader accepts (board RAM: one buffer)
PROTO = const(1)  # the link protocol's version (hello answer)
K_REQ = const(0x51)  # 'Q'
K_OK = const(0x52)  # 'R'
K_ERR = const(0x58)  # 'X'
K_EVENTS = const(0x45)  # 'E'
K_PUSH = const(0x50)  # 'P'


def crc(data):
    return binascii.crc32(data) & 0xFFFFFFFF


def _put(out, b):
    if b <= 5 or b == _ESC:
        out.append(_ESC)
        out.append(b ^ _FLIP)
    else:
        out.append(b)


def encode(payload):
    """The wire bytes of one frame carrying `payload` (bytes-like)."""
    out = bytearray()
    out.append(_END)
    for b in payload:
        _put(out, b)
    for b in crc(payload).to_bytes(4, "little"):
        _put(out, b)
    out.append(_END)
    return bytes(out)


class Deframer:
    """Incremental frame reader: feed bytes, get payloads back.

    One preallocated buffer; `feed_byte` allocates only when a frame is
    complete (the payload it returns)."""

    def __init__(self, max_payload=MAX_PAYLOAD):
        self.buf = bytearray(max_payload + 4)
        self.reset()
        self.dropped = 0  # frames thrown away (checksum, size, bad bytes)
        self.frames = 0  # good frames returned

    def reset(self):
        """Start a frame: nothing in it yet."""
        self.n = 0  # bytes of it in buf
        self.esc = False
        self.bad = False  # this frame is lost: skip to the next 0x00 (_END)

    def feed_byte(self, b):
        """Take one byte; the payload (bytes) when it completes a good frame, else None."""
        if b == _END:
            n = self.n
            bad = self.bad or self.esc
            self.reset()
            if n == 0 and not bad:
                return None  # idle delimiter
            if bad or n < 5:
                self.dropped += 1
                return None
            payload = bytes(self.buf[: n - 4])
            if crc(payload) != int.from_bytes(self.buf[n - 4 : n], "little"):
                self.dropped += 1
                return None
            self.frames += 1
            return payload
        if self.bad:
            return None
        if self.esc:
            self.esc = False
            b ^= _FLIP
            if not (b <= 5 or b == _ESC):
                self.bad = True
                return None
        elif b == _ESC:
            self.esc = True
            return None
        elif b <= 5:
            self.bad = True  # a raw control byte is never part of a frame
            return None
        if self.n >= len(self.buf):
            self.bad = True  # oversized: drop the rest of it
            return None
        self.buf[self.n] = b
        self.n += 1
        return None

    def feed(self, data):
        """Take many bytes; the list of good payloads they completed."""
        out = []
        for b in data:
            p = self.feed_byte(b)
            if p is not None:
                out.append(p)
        return out


# -- payloads ------------------------------------------------------------------


class FrameError(ValueError):
    """A payload is not what its kind says (one line); `seq` is its sequence
    number when that much was readable, else 0."""

    def __init__(self, msg, seq=0):
        super().__init__(msg)
        self.seq = seq


def prefix_crc(records, upto):
    """crc32 chained over the first `upto` records, each as (length byte, bytes):
    the host sends its own to prove it holds the same prefix."""
    c = 0
    i = 0
    for rec in records:
        if i >= upto:
            break
        c = binascii.crc32(bytes((len(rec),)), c)
        c = binascii.crc32(rec, c)
        i += 1
    return c & 0xFFFFFFFF


def head(kind, seq):
    """A frame's first three payload bytes: its kind and its sequence number
    (u16 LE); the host's half (host/sync/codec_host.py) builds requests with it."""
    return bytes((kind, seq & 0xFF, seq >> 8 & 0xFF))


def reply(kind, seq, obj):
    """Board -> host: an answer (K_OK) or an error (K_ERR) frame carrying dict `obj`."""
    return encode(head(kind, seq) + json.dumps(obj).encode())


def events(seq, body):
    """Board -> host: the 'E' frame of an events_body."""
    return encode(head(K_EVENTS, seq) + body)


def push(seq, gid, index, rec):
    """Board -> host: the live event `rec` (bytes), record `index` of game `gid`."""
    g = gid.encode()
    return encode(head(K_PUSH, seq) + bytes((len(g),)) + g + bytes((index & 0xFF, index >> 8 & 0xFF, len(rec))) + bytes(rec))


def events_body(gid, recs, start, room, cap, total=None, c=None):
    """'E' body: gid length, gid, start u16, total u16, prefix_crc of
    recs[:start] u32, count, then count x (length, record), the records from
    `start` on while the payload stays within `room` bytes (the reader's
    buffer) and, after the first record, within `cap` (what the host asked).
    With `total` and `c` given (an archived game's, read through its index:
    storage.Store.window), `recs` are the records from `start` on."""
    g = gid.encode()
    i = 0
    if total is None:
        total = len(recs)
        c = prefix_crc(recs, start)
        i = start
    out = bytearray((len(g),))
    out.extend(g)
    out.extend(bytes((start & 0xFF, start >> 8 & 0xFF, total & 0xFF, total >> 8 & 0xFF, c & 0xFF, c >> 8 & 0xFF, c >> 16 & 0xFF, c >> 24, 0)))
    room -= 3 + len(out)
    cap -= 3 + len(out)
    n = 0
    while i < len(recs) and n < 255:
        rec = recs[i]
        if len(rec) + 1 > room or (n and len(rec) + 1 > cap):
            break
        cap -= len(rec) + 1
        room -= len(rec) + 1
        out.append(len(rec))
        out.extend(rec)
        n += 1
        i += 1
    out[len(g) + 9] = n
    return bytes(out)


def json_body(p, seq):
    """The JSON object after a payload's head, or FrameError: read the same way
    on the board (requests) and on the host (replies)."""
    try:
        obj = json.loads(str(p[3:], "utf-8"))
    except ValueError:  # a UnicodeError too (its subclass, in every Python)
        obj = None
    if type(obj) is not dict:
        raise FrameError("body is not a JSON object", seq)
    return obj


def parse_request(p):
    """Board side: (seq, request dict with a string "op") of a 'Q' payload."""
    if len(p) < 4 or p[0] != K_REQ:
        raise FrameError("not a request frame")
    seq = p[1] | p[2] << 8
    req = json_body(p, seq)
    if type(req.get("op")) is not str:
        raise FrameError("body must be an object with an op", seq)
    return seq, req

"""The host's half of the link codec (docs/protocol.md): the frames only the
host builds or reads.

Why apart from firmware/codec.py: the board never sends a request nor reads
a reply, so these definitions would be ~600 B of .mpy on the board for
nothing; firmware/ holds exactly what goes on a board. They are built on
firmware/codec.py's framing, frame heads and kinds, so the wire format stays
in one place: a frame is laid out by `firmware.codec` and only taken apart
here. Host-only (CPython); the bundle never sees this module.
"""

import json

from firmware.codec import K_ERR, K_EVENTS, K_OK, K_PUSH, K_REQ, FrameError, encode
from firmware.codec import head, json_body  # the board's own head and JSON body readers: one layout

_LENGTH = "frame length does not match its fields"


def request(seq, req):
    """Host -> board: the frame of request `req` (a dict with "op")."""
    return encode(head(K_REQ, seq) + json.dumps(req, separators=(",", ":")).encode())


def parse_reply(p):
    """Host side: (kind, seq, value) of a payload from the board: a dict for
    an answer or an error, the body bytes for events (parse_events reads
    them), (gid, index, record) for a live event."""
    kind = p[0] if len(p) > 2 else 0
    if kind == K_EVENTS:
        v = bytes(p[3:])
    elif kind == K_PUSH:
        v = parse_push(p)
    elif kind == K_OK or kind == K_ERR:
        v = json_body(p, 0)
    else:
        raise FrameError("not a reply frame")
    return kind, p[1] | p[2] << 8, v


def _fields(p, i, n):
    """([n length-prefixed byte strings from p[i:]], the index after them)."""
    out = []
    for _ in range(n):
        j = i + 1 + (p[i] if i < len(p) else 255)
        if j > len(p):
            raise FrameError(_LENGTH)
        out.append(bytes(p[i + 1 : j]))
        i = j
    return out, i


def parse_push(p):
    """(gid, index, record) of a 'P' payload: gid_len, gid, index u16, len, record."""
    g, i = _fields(p, 3, 1)
    rec, _ = _fields(p, i + 2, 1)
    return g[0].decode(), p[i] | p[i + 1] << 8, rec[0]


def parse_events(body):
    """(gid, start, total, prefix crc of records[:start], [records]) of an
    events_body; FrameError if it is cut short or longer than its records."""
    g, i = _fields(body, 0, 1)
    h = bytes(body[i : i + 9])  # start, total, prefix crc, count
    recs, j = _fields(body, i + 9, h[8] if len(h) == 9 else 1)
    if j != len(body):
        raise FrameError(_LENGTH)
    return g[0].decode(), h[0] | h[1] << 8, h[2] | h[3] << 8, int.from_bytes(h[4:8], "little"), recs

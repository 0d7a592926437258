"""Framing of the serial link, shared by the board and the host.

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
next 0x00 without buffering the rest). MicroPython-compatible; `binascii`
has crc32 on both sides.
"""

import binascii

try:
    from micropython import const
except ImportError:  # CPython

    def const(x):
        return x


END = const(0x00)
ESC = const(0x10)
FLIP = const(0x40)
MAX_PAYLOAD = const(600)  # bytes of payload a reader accepts (board RAM: one buffer)


def crc(data):
    return binascii.crc32(data) & 0xFFFFFFFF


def _put(out, b):
    if b <= 5 or b == ESC:
        out.append(ESC)
        out.append(b ^ FLIP)
    else:
        out.append(b)


def encode(payload):
    """The wire bytes of one frame carrying `payload` (bytes-like)."""
    c = crc(payload)
    out = bytearray()
    out.append(END)
    for b in payload:
        _put(out, b)
    for _ in range(4):
        _put(out, c & 0xFF)
        c >>= 8
    out.append(END)
    return bytes(out)


class Deframer:
    """Incremental frame reader: feed bytes, get payloads back.

    One preallocated buffer; `feed_byte` allocates only when a frame is
    complete (the payload it returns)."""

    def __init__(self, max_payload=MAX_PAYLOAD):
        self.buf = bytearray(max_payload + 4)
        self.n = 0
        self.esc = False
        self.bad = False  # this frame is lost: skip to the next END
        self.dropped = 0  # frames thrown away (checksum, size, bad bytes)
        self.frames = 0  # good frames returned

    def reset(self):
        self.n = 0
        self.esc = False
        self.bad = False

    def feed_byte(self, b):
        """Take one byte; the payload (bytes) when it completes a good frame, else None."""
        if b == END:
            n = self.n
            bad = self.bad or self.esc
            self.reset()
            if n == 0 and not bad:
                return None  # idle delimiter
            if bad or n < 5:
                self.dropped += 1
                return None
            buf = self.buf
            want = buf[n - 4] | buf[n - 3] << 8 | buf[n - 2] << 16 | buf[n - 1] << 24
            payload = bytes(buf[: n - 4])
            if crc(payload) != want:
                self.dropped += 1
                return None
            self.frames += 1
            return payload
        if self.bad:
            return None
        if self.esc:
            self.esc = False
            b ^= FLIP
            if not (b <= 5 or b == ESC):
                self.bad = True
                return None
        elif b == ESC:
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

"""The optional start fields that make a game one game: `nonce`, `at`, `uptime`.

A board draws a random 32-bit nonce when a game starts and writes it into
the start record, with the start time (`at`, ISO 8601 UTC) when its clock
was set by a host, else its uptime in seconds (`uptime`), so the host can
tell two games apart even when a board's game counter restarts
(docs/storage.md, "Game identity"). The board writes these as bytes
(`firmware.hw.stamp`); this module is the JSON side: `bloomkeeper replay`, the
sync and the exports. Host-only (left out of the board bundles), yet plain
MicroPython-compatible arithmetic like the rest of engine_lite.

Compact layout after the player names: nonce u32 LE (flag F_NONCE), then
one u32 LE (flag F_AT: unix seconds UTC; flag F_UPTIME: uptime seconds).
"""

from engine_lite.errors import EngineError, BAD_FIELD

F_NONCE = 8  # start flags (record.py keeps 1, 2, 4; these three are read here,
F_AT = 16  # and written by the board in firmware/hw.py stamp())
F_UPTIME = 32
U32 = 0xFFFFFFFF
AT_EXAMPLE = "2026-11-29T19:30:00Z"


def days_from_civil(y, m, d):
    """Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm)."""
    y -= m <= 2
    era = y // 400
    yoe = y - era * 400
    doy = (153 * (m - 3 if m > 2 else m + 9) + 2) // 5 + d - 1
    return era * 146097 + yoe * 365 + yoe // 4 - yoe // 100 + doy - 719468


def civil_from_days(z):
    z += 719468
    era = z // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    m = mp + 3 if mp < 10 else mp - 9
    return yoe + era * 400 + (m <= 2), m, d


def iso(t):
    """Unix seconds -> "YYYY-MM-DDTHH:MM:SSZ"."""
    y, m, d = civil_from_days(t // 86400)
    s = t % 86400
    return "%04d-%02d-%02dT%02d:%02d:%02dZ" % (y, m, d, s // 3600, s // 60 % 60, s % 60)


def seconds(text):
    """"YYYY-MM-DDTHH:MM:SSZ" -> unix seconds, or None if it is not exactly
    a valid UTC time of that form between 1970 and 2106 (a u32)."""
    if type(text) is not str or len(text) != 20 or text[19] != "Z":
        return None
    for i, c in ((4, "-"), (7, "-"), (10, "T"), (13, ":"), (16, ":")):
        if text[i] != c:
            return None
    parts = (text[0:4], text[5:7], text[8:10], text[11:13], text[14:16], text[17:19])
    for p in parts:
        for c in p:
            if not "0" <= c <= "9":
                return None
    y, mo, d, h, mi, s = [int(p) for p in parts]
    t = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + s
    if not 0 <= t <= U32 or iso(t) != text:  # the round trip refuses Feb 30, 24:00, 60 s...
        return None
    return t


def _end_of_names(rec):
    i = 5
    for _ in range(rec[2]):
        i += 1 + rec[i]
    return i


def _u32(rec, i):
    return rec[i] | rec[i + 1] << 8 | rec[i + 2] << 16 | rec[i + 3] << 24


def fields(rec):
    """(nonce or None, at seconds or None, uptime or None) of a start record."""
    f = rec[3]
    i = _end_of_names(rec)
    nonce = at = up = None
    if f & F_NONCE:
        nonce = _u32(rec, i)
        i += 4
    if f & (F_AT | F_UPTIME):
        t = _u32(rec, i)
        if f & F_AT:
            at = t
        else:
            up = t
    return nonce, at, up


def decode_fields(rec, ev):
    nonce, at, up = fields(rec)
    if nonce is not None:
        ev["nonce"] = nonce
    if at is not None:
        ev["at"] = iso(at)
    if up is not None:
        ev["uptime"] = up


def _bad(what):
    raise EngineError(BAD_FIELD, "start: " + what)


def _u32_field(ev, key):
    v = ev[key]
    if type(v) is not int or not 0 <= v <= U32:
        _bad("%s must be a whole number from 0 to %d" % (key, U32))
    return v


def encode_fields(ev, out):
    """The compact start record `out` (names written) with the JSON fields
    nonce / at / uptime added (record.encode_start calls this)."""
    if "at" in ev and "uptime" in ev:
        _bad("give at or uptime, not both (uptime is for a board that did not know the time)")
    if "nonce" in ev:
        out[3] |= F_NONCE
        out.extend(_bytes(_u32_field(ev, "nonce")))
    if "at" in ev:
        t = seconds(ev["at"])
        if t is None:
            _bad("at %r is not a UTC time like %s (ISO 8601, Z)" % (ev["at"], AT_EXAMPLE))
        out[3] |= F_AT
        out.extend(_bytes(t))
    elif "uptime" in ev:
        out[3] |= F_UPTIME
        out.extend(_bytes(_u32_field(ev, "uptime")))
    return bytes(out)


def _bytes(v):
    return bytes((v & 255, v >> 8 & 255, v >> 16 & 255, v >> 24 & 255))

"""Reading the user's files for the command line, with one-line errors.

`json.loads` lets through what a user's file must not carry silently: a key
given twice (the last one would win, which can change a winner), strings
that are not valid Unicode (lone surrogates, which crash later when
encoded), and nesting deep enough to exhaust the interpreter's recursion.
`loads_strict` refuses all of them and names the JSON path; `lines_of`
splits on "\\n" only (JSON Lines: U+2028 is legal inside a string) and names
the line that is not UTF-8.
"""

import argparse
import json
import math
import os
import stat
import sys

from host.errors import UserError

MAX_DEPTH = 32  # game records and score tables need 5 levels at most
MAX_INPUT = 1 << 20  # bytes read from a user's file at most: the longest game record is ~10 KiB


def duration(text):
    """An argparse type: seconds, a finite number >= 0. NaN compares false
    with everything, so a cap of NaN would never be reached, and an
    infinite or negative one is no cap: refused when the line is parsed."""
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError("%r is not a number of seconds" % text[:40])
    if not math.isfinite(v) or v < 0:
        raise argparse.ArgumentTypeError("%r: give a finite number of seconds, 0 or more" % text[:40])
    return v


def positive_duration(text):
    """duration(), and more than 0 (a cap of 0 s would give up at once)."""
    v = duration(text)
    if v <= 0:
        raise argparse.ArgumentTypeError("%r: give a number of seconds above 0" % text[:40])
    return v


class JsonInputError(ValueError):
    """Input JSON we refuse; the message names the JSON path."""


class _Pairs(list):
    """An object's (key, value) pairs, kept in order so duplicates show."""


def open_regular(path):
    """FILE opened for reading (binary), if it is a regular file. Anything
    else is one line, found at open: a FIFO (whose open and read would wait
    for a writer forever), a device (/dev/zero never ends, a terminal
    waits for keys), a directory. The open itself never waits (O_NONBLOCK,
    cleared once the file is known to be regular)."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_BINARY", 0)
    fd = os.open(path, flags)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = ("a FIFO" if stat.S_ISFIFO(mode) else "a directory" if stat.S_ISDIR(mode) else
                    "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "a socket" if stat.S_ISSOCK(mode) else "not a file")
            raise UserError("%s is %s, not a regular file: give a file" % (path, kind))
        if flags & getattr(os, "O_NONBLOCK", 0):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_bytes(path, cap=MAX_INPUT):
    """The bytes of FILE, or of stdin for '-', at most `cap` of them: a
    larger input (a wrong file) stops there with one line instead of
    filling the memory; a FIFO or a device is refused at open
    (open_regular)."""
    try:
        if path == "-":
            data = sys.stdin.buffer.read(cap + 1)
        else:
            with open_regular(path) as fh:
                data = fh.read(cap + 1)
    except OSError as err:
        raise UserError("cannot read %s: %s" % (path, err.strerror or err))
    if len(data) > cap:
        raise UserError("%s is larger than %d KiB: not a file this command reads (they are a few KiB)" % (path, cap >> 10))
    return data


def lines_of(path):
    """FILE as text lines, split on "\\n" only; a line that is not UTF-8 is
    refused by its number."""
    lines = []
    for n, raw in enumerate(read_bytes(path).split(b"\n"), 1):
        try:
            lines.append(raw.decode("utf-8"))
        except UnicodeDecodeError as err:
            raise UserError("%s: line %d is not UTF-8 text (byte %d)" % (path, n, err.start + 1))
    return lines


def read_text(path):
    """The text of FILE, or of stdin for '-' (UTF-8, checked line by line)."""
    return "\n".join(lines_of(path))


def read_json(path):
    """One JSON document from FILE, strictly (see loads_strict)."""
    try:
        return loads_strict(read_text(path))
    except JsonInputError as err:
        raise UserError("%s: %s" % (path, err))


def loads_strict(text):
    """json.loads, refusing duplicate keys, invalid Unicode and deep nesting;
    JsonInputError names the JSON path (`players.Ann.flowers[0].kind`)."""
    try:
        raw = json.loads(text, object_pairs_hook=_Pairs)
    except RecursionError:
        raise JsonInputError("not valid JSON: nested too deeply (more than %d levels)" % MAX_DEPTH)
    except json.JSONDecodeError as err:
        raise JsonInputError("not valid JSON (line %d column %d)" % (err.lineno, err.colno))
    except ValueError as err:  # e.g. an integer of more than 4300 digits
        raise JsonInputError("not valid JSON (%s)" % " ".join(str(err).split()))
    return _build(raw, "", 0)


def checked_lines(lines):
    """Yield the record's lines to engine_lite.replay, each checked by the
    strict reader just before the engine folds it (so the first bad line,
    of either kind, is the one reported). Here, not in a command: `replay`
    and the simulator's `--record` (host/board_sim/serve_record.py) read a
    game record alike."""
    for n, line in enumerate(lines, 1):
        if line.strip():
            try:
                loads_strict(line)
            except JsonInputError as err:
                raise UserError("line %d: %s" % (n, err))
        yield line


def _where(path):
    return path or "the top level"


def show(text):
    """A string as it can be printed on one line: itself if plain, else
    JSON-quoted with escapes (line breaks, control characters, surrogates)."""
    if text.isprintable():
        return text
    return json.dumps(text)


def _build(value, path, depth):
    if depth > MAX_DEPTH:
        raise JsonInputError("%s: nested deeper than %d levels" % (_where(path), MAX_DEPTH))
    if isinstance(value, _Pairs):
        out = {}
        for key, item in value:
            sub = "%s.%s" % (path, show(key)) if path else show(key)
            _unicode(key, sub)
            if key in out:
                raise JsonInputError("%s is given twice" % sub)
            out[key] = _build(item, sub, depth + 1)
        return out
    if isinstance(value, list):
        return [_build(item, "%s[%d]" % (path, i), depth + 1) for i, item in enumerate(value)]
    if isinstance(value, str):
        _unicode(value, _where(path))
    return value


def _unicode(text, where):
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as err:
        raise JsonInputError("%s: not valid Unicode (a lone surrogate at character %d)" % (where, err.start + 1))


def print_json(obj):
    sys.stdout.write(json.dumps(obj, indent=2) + "\n")

"""Reading the user's files for the command line, with one-line errors."""

import json
import sys

from host.errors import UserError


def read_text(path):
    """The text of FILE, or of stdin for '-'."""
    try:
        if path == "-":
            return sys.stdin.read()
        with open(path, encoding="utf-8") as fh:
            return fh.read()
    except OSError as err:
        raise UserError("cannot read %s: %s" % (path, err.strerror or err))
    except UnicodeDecodeError:
        raise UserError("%s is not UTF-8 text" % path)


def read_json(path):
    text = read_text(path)
    try:
        return json.loads(text)
    except ValueError as err:
        raise UserError("%s: not valid JSON (line %d column %d)" % (path, err.lineno, err.colno))


def print_json(obj):
    sys.stdout.write(json.dumps(obj, indent=2) + "\n")

"""`bloomkeeper replay` and `bloomkeeper score`: the rules core on a file.

Both run engine_lite unchanged (the same code as on the board). The host
reads the file strictly first (host/io_util.py: "\\n"-separated lines of
UTF-8, no duplicate keys, valid Unicode, bounded nesting), so bad input is
one line naming the line or the JSON path, and nothing is applied."""

import engine_lite

from host.errors import UserError
from host.io_util import checked_lines, lines_of, print_json, read_json


def replay_cmd(args):
    lines = lines_of(args.file)
    try:
        state = engine_lite.replay(checked_lines(lines))
    except engine_lite.EngineError as err:
        raise UserError(str(err))
    print_json(state)
    return 0


def score_cmd(args):
    table = read_json(args.file)
    try:
        final = engine_lite.score(table)
    except engine_lite.EngineError as err:
        raise UserError(str(err))
    print_json(final)
    return 0


def register(sub):
    p = sub.add_parser("replay", help="fold a game record (JSON Lines) and print the state as JSON")
    p.add_argument("file", metavar="FILE|-", help="game record, or - for stdin")
    p.set_defaults(func=replay_cmd)
    p = sub.add_parser("score", help="score a finished table (values + portfolios, or Orchids players); any portfolio size")
    p.add_argument("file", metavar="FILE|-", help="JSON table, or - for stdin")
    p.set_defaults(func=score_cmd)

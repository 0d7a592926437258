"""`bloomkeeper replay` and `bloomkeeper score`: the rules core on a file.

Both run engine_lite unchanged (the same code as on the board)."""

import engine_lite

from host.errors import UserError
from host.io_util import print_json, read_json, read_text


def replay_cmd(args):
    text = read_text(args.file)
    try:
        state = engine_lite.replay(text.splitlines())
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
    p = sub.add_parser("score", help="score a finished table (values + portfolios, or Orchids players)")
    p.add_argument("file", metavar="FILE|-", help="JSON table, or - for stdin")
    p.set_defaults(func=score_cmd)

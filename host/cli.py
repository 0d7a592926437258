"""`bloomkeeper`: the host command.

Each subcommand lives in its own module with `register(subparsers)`, which
adds its parser and sets `func(args) -> exit status`. Every failure a user
can cause ends as ONE line on stderr and exit status 2 (`fail`), never a
traceback.
"""

import argparse
import importlib
import sys

from host.errors import UserError

COMMAND_MODULES = (
    "host.commands.rules",
    "host.commands.simulate",
    "host.commands.sim",
    "host.commands.sync",
    "host.commands.flash",
    "host.commands.serve",
    "host.commands.doctor",
)


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        words = self.prog.split(" ", 1)  # "bloomkeeper score" -> "score: ..."
        fail(message if len(words) == 1 else "%s: %s" % (words[1], message))


def fail(message):
    sys.stderr.write("bloomkeeper: %s\n" % " ".join(str(message).split()))
    raise SystemExit(2)


def build_parser():
    parser = _Parser(prog="bloomkeeper", description="Bloomkeeper host tool: the table companion's computer side.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)
    try:
        status = args.func(args)
    except UserError as err:
        fail(err)
    except KeyboardInterrupt:
        fail("interrupted")
    except BrokenPipeError:
        status = 0
    return status or 0


if __name__ == "__main__":
    sys.exit(main())

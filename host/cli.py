"""`bloomkeeper`: the host command.

Each subcommand lives in its own module with `register(subparsers)`, which
adds its parser and sets `func(args) -> exit status`. Every failure a user
can cause ends as ONE line on stderr and exit status 2 (`fail`), never a
traceback.

Every subcommand's --help opens with what it is for and ends with one
example (GUIDE below: kept here, in one table, so that the words of all the
commands read alike and a test can hold each one to it).
"""

import argparse
import difflib
import importlib
import sys

from host import __version__, config, pages
from host.errors import UserError

COMMAND_MODULES = (
    "host.commands.rules",
    "host.commands.simulate",
    "host.commands.sim",
    "host.commands.sync",
    "host.commands.flash",
    "host.commands.serve",
    "host.commands.doctor",
    "host.commands.firmware",
    "host.commands.wifi",
    "host.commands.completion",
    "host.commands.docs",
)

# subcommand -> (description: what it is for, when the one-line help is not
# enough; example: one command line a user can copy).
GUIDE = {
    "replay": ("Fold a game record (one JSON event per line, as `export --format json` or the board's log gives it) "
               "through the rules core, the same code the board runs, and print the game's state as JSON.",
               "bloomkeeper replay game.jsonl"),
    "score": ("Score a finished table given as JSON (Stalk Exchange: flower values and portfolios; Oh My. Orchids!: "
              "each player's flowers) with the rules core, and print the final scores, ranks and winners.",
              "bloomkeeper score table.json"),
    "simulate": ("Play whole games with the full rules (cards, bag and hands on the host; every table rule asked of "
                 "the rules core) between scripted policies, and print statistics. A progress bar shows on a terminal.",
                 "bloomkeeper simulate --game stalk-exchange --players 4 --games 1000 --seed 1"),
    "sim": ("Run the board's firmware, unchanged, on simulated buttons and LED ring in the terminal, with the serial "
            "link on a pseudo-terminal (sync, follow and doctor can talk to it).",
            "bloomkeeper sim --board pico"),
    "sync": ("Pull every new event from the board over USB serial into the plays database (SQLite); "
             "safe to repeat: nothing is imported twice.",
             "bloomkeeper sync --port auto"),
    "follow": ("Show a live scoreboard of the game on the board as it is played; with --db it records the game "
               "into the plays database as it goes.",
               "bloomkeeper follow --port /dev/ttyACM0"),
    "plays": ("List the plays in the database, each dated by its own start (~: the board did not know the time).",
              "bloomkeeper plays --json"),
    "export": ("Write the plays database as JSON, CSV or BG Stats plays (%s) to stdout." % pages.ref("protocol"),
               "bloomkeeper export --format bgstats > plays.json"),
    "repair": ("Judge the records a sync quarantined (the rules engine refused them) again, and store in their plays "
               "the ones the installed engine now accepts; the rest stay quarantined.",
               "bloomkeeper repair --db plays.sqlite3"),
    "names": ("Send the table's player names to the board, which offers them when a game is set up.",
              "bloomkeeper names Ann Bo Cy"),
    "flash": None,  # its own description (host/commands/flash.py)
    "serve": ("Serve the live table and the plays history as web pages on this computer.",
              "bloomkeeper serve --http 127.0.0.1:8000"),
    "doctor": ("Ask the board who it is, which firmware it runs (against this host's version), what it holds and "
               "which faults its loop survived. Changes nothing on the board.",
               "bloomkeeper doctor --port auto"),
    "firmware": ("Build the board bundles, as `make firmware` does in a clone: the MicroPython bundle (.mpy, for "
                 "flash) and the CircuitPython one (source, for the CIRCUITPY drive), stamped with this version.",
                 "bloomkeeper firmware --out ./build"),
    "docs": ("Show a documentation page: they ship with bloomkeeper, so messages name a page as "
             "`bloomkeeper docs TOPIC`, the same in a clone and after pip or pipx install. Without a topic: the list.",
             "bloomkeeper docs controls"),
    "completion": ("Print the shell completion script for bloomkeeper, made from its own parser.",
                   "bloomkeeper completion bash > ~/.local/share/bash-completion/completions/bloomkeeper"),
}
EXAMPLES = {"flash": "bloomkeeper flash --dry-run", "wifi": "bloomkeeper wifi join --ssid 'Table net' --password 'its-password'"}


class _Parser(argparse.ArgumentParser):
    def parse_known_args(self, args=None, namespace=None):
        self.argv = list(sys.argv[1:] if args is None else args)
        return super().parse_known_args(args, namespace)

    def error(self, message):
        words = self.prog.split(" ", 1)  # "bloomkeeper score" -> "score: ..."
        message = self.misspelt(message)
        fail(message if len(words) == 1 else "%s: %s" % (words[1], message))

    def misspelt(self, message):
        """An option nobody knows is named, with the one it may have meant:
        `--verison` would otherwise be reported as a missing COMMAND
        (argparse judges the missing argument first), and a subcommand's
        stray option as "unrecognized arguments" of the whole line."""
        if message.startswith("unrecognized arguments: "):
            tokens = message.split(": ", 1)[1].split()
        elif "required" in message:
            tokens = getattr(self, "argv", ())
        else:
            return message
        parser, where = self, ""
        for action in self._actions:  # the subcommand whose options these were
            for name, sub in (getattr(action, "choices", None) or {}).items() if isinstance(action, argparse._SubParsersAction) else ():
                if name in getattr(self, "argv", ()):
                    parser, where = sub, name + ": "
                    break
        known = [o for o in list(parser._option_string_actions) + list(self._option_string_actions) if o.startswith("--")]
        unknown = [t.split("=", 1)[0] for t in tokens if t.startswith("--") and t.split("=", 1)[0] not in known]
        if not unknown:
            return message
        near = difflib.get_close_matches(unknown[0], known, n=1)
        return "%sunknown option %s%s" % (where, unknown[0], " (did you mean %s?)" % near[0] if near else "")


class _Formatter(argparse.HelpFormatter):
    """Wraps descriptions as usual, but never an example: it must stay one
    line that can be copied into a shell."""

    def _fill_text(self, text, width, indent):
        if text.startswith("example: "):
            return indent + text
        return super()._fill_text(text, width, indent)


def fail(message):
    sys.stderr.write("bloomkeeper: %s\n" % " ".join(str(message).split()))
    raise SystemExit(2)


def build_parser():
    parser = _Parser(prog="bloomkeeper", description="Bloomkeeper host tool: the table companion's computer side.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    parser.add_argument("--version", action="version", version="bloomkeeper %s" % __version__,
                        help="print the version (the firmware it builds carries the same) and exit")
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    try:
        config.apply(sub, config.load())
    except config.ConfigError as err:
        parser.set_defaults(config_error=str(err))  # said when a command runs (--help and --version still work)
    for name, p in sub.choices.items():
        words, example = GUIDE.get(name) or (None, EXAMPLES.get(name))
        if words and not p.description:
            p.description = words
        if example and not p.epilog:
            p.epilog = "example: " + example
            p.formatter_class = _Formatter
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)
    if getattr(args, "config_error", None):
        fail(args.config_error)
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

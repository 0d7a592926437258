"""The options several commands share, each defined once: the board's port
(`--port`), the cap on an exchange with it (`--timeout`) and the plays
database (`--db`).

Why one place: the same option must read alike and default alike in every
command's --help, and host/config.py sets the config file's `port` as the
default of every `--port` whose default is `auto`, so a command that spelt
its own could drift from the others unseen."""

from host.io_util import positive_duration

PORT_METAVAR = "auto|PATH|URL"


def port(p, auto="find it by USB id", none=None):
    """--port auto|PATH|URL, default auto. `auto`: what auto finds, in the
    help's words. `none`: the command also runs without a board (`serve`),
    and these words say what it does then."""
    p.add_argument("--port", default="auto", metavar="auto|PATH|none" if none else PORT_METAVAR,
                   help="serial port of the board (default%s%s)" % (
                       " " + auto if auto.startswith("auto") else ": " + auto, "; none = %s" % none if none else ""))


def timeout(p, default):
    """--timeout S: a cap on the whole exchange with the board."""
    p.add_argument("--timeout", type=positive_duration, default=default, metavar="S",
                   help="cap on the whole exchange, seconds (default %g)" % default)


def db(p, words="plays database (default: in your user data directory)"):
    """--db FILE: the plays database (host/sync/db.py default_path when not given)."""
    p.add_argument("--db", default=None, metavar="FILE", help=words)

"""Run a `bloomkeeper` command and kill it (SIGKILL: no cleanup, as a
closed terminal or a crash) as its Nth SQL statement starts.

    python -m tests.kit.cut_sync N ARGS...   (N = 0: never; exit 0 or the command's)

The statements are counted by SQLite's own trace hook on every connection
the command opens (the real sqlite3 module, only watched): the cut lands
at every step of what the command does to the database. On exit without
a cut, the number of statements is printed on stderr as `statements: K`,
so a campaign knows how many cuts there are to make.
"""

import os
import signal
import sqlite3
import sys

_count = [0]


def main(argv):
    cut = int(argv[0])
    real = sqlite3.connect

    def traced(statement):
        _count[0] += 1
        if _count[0] == cut:
            os.kill(os.getpid(), signal.SIGKILL)

    def connect(*a, **kw):
        con = real(*a, **kw)
        con.set_trace_callback(traced)
        return con

    sqlite3.connect = connect
    from host import cli

    try:
        rc = cli.main(argv[1:])
    finally:
        sys.stderr.write("statements: %d\n" % _count[0])
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""Bloomkeeper's rules core: the table rules of Stalk Exchange and
Oh My. Orchids!, MicroPython-compatible, run unchanged on the board and on
the host. See docs/game-record.md for the events and the state it returns,
docs/rulings.md for every interpretation of the rulebooks.

`const` is MicroPython's compile-time constant (`_X = const(3)`: the
compiler folds `_X` into the code that reads it and keeps no global), the
identity in CPython. Every board module takes it from here (`from
engine_lite import const`): the compiler knows the name, not where it came
from, and one CPython fallback instead of one in each module saved 225
bytes of the board's bundle. Defined before the imports below, whose
modules read it while this one is still being imported.
"""

try:
    from micropython import const
except ImportError:  # CPython

    def const(x):  # type: ignore[misc]  # the stub's signature is generic
        return x


from engine_lite.errors import EngineError
from engine_lite.game import Game


def score(table):
    """The `final` dict of a finished table (see engine_lite/table_score.py).

    Imported on first use: the board never scores a table without a game,
    so table_score stays out of the board's bundle and RAM."""
    from engine_lite.table_score import score as score_table

    return score_table(table)


def replay(lines, game=None):
    """Fold a game record (JSON lines) into a state dict (see
    engine_lite/readout.py). Imported on first use, for the same reason:
    the board never reads a game record, it writes its own."""
    from engine_lite.readout import replay as replay_lines

    return replay_lines(lines, game)


RECORD_VERSION = 1  # docs/game-record.md

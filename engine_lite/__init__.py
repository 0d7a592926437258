"""Bloomkeeper's rules core: the table rules of Stalk Exchange and
Oh My. Orchids!, MicroPython-compatible, run unchanged on the board and on
the host. See docs/game-record.md for the events and the state it returns,
docs/rulings.md for every interpretation of the rulebooks.
"""

from engine_lite.errors import EngineError
from engine_lite.game import Game, replay, parse_line


def score(table):
    """The `final` dict of a finished table (see engine_lite/table_score.py).

    Imported on first use: the board never scores a table without a game,
    so table_score stays out of the board's bundle and RAM."""
    from engine_lite.table_score import score as score_table

    return score_table(table)


RECORD_VERSION = 1  # docs/game-record.md

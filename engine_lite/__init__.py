"""Bloomkeeper's rules core: the table rules of Stalk Exchange and
Oh My. Orchids!, MicroPython-compatible, run unchanged on the board and on
the host. See docs/game-record.md for the events and the state it returns,
docs/rulings.md for every interpretation of the rulebooks.
"""

from engine_lite.errors import EngineError
from engine_lite.game import Game, replay, parse_line
from engine_lite.score import score

VERSION = "1.0.0"
RECORD_VERSION = 1  # docs/game-record.md

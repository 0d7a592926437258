"""Numbers printed in the rulebooks, in one place.

Every setup count the engine uses comes from here, so a rule that changes
changes in one line. Indexes are seat numbers (0 = first player) or player
counts; flowers are always in FLOWERS order.
"""

# Stalk Exchange ---------------------------------------------------------

# The five flower types, in the order every per-flower array uses (named in vocab).
from engine_lite.vocab import FLOWERS

TOKENS_PER_FLOWER = 25  # "125 double-sided Flower tokens (25 each ...)"
EXCHANGE_SLOTS = 6  # "Populate the Stalk Exchange with 6 random Flower tokens"
BASIC_ACTIONS = 2  # "A player MUST do 2 Basic Actions"

# Indexed by player count (0 and 1 unused).
PORTFOLIO_SIZE = (0, 0, 12, 12, 10, 8)  # Setup 5
GARDEN_SEED = (0, 0, 9, 6, 6, 6)  # Setup 6: Bee spaces (2p) / Butterfly spaces

# Setup 9: Seedy Business tokens by seat, per player count.
SEEDY_TOKENS = (
    None,
    None,
    (3, 3),
    (3, 3, 3),
    (3, 3, 3, 4),
    (3, 3, 3, 4, 5),
)


def bag_start(players):
    """Greenhouse bag after setup: 125 - portfolios - garden seeding - exchange."""
    return (
        TOKENS_PER_FLOWER * len(FLOWERS)
        - players * PORTFOLIO_SIZE[players]
        - GARDEN_SEED[players]
        - EXCHANGE_SLOTS
    )


# Market track start space S (the player-count space where the first
# harvested token goes). PLACEHOLDERS: the numbers printed on the real market
# board are not known to us. A game record's `track_start` (and the board's
# setup screen) overrides them; see docs/rulings.md, "Market crash".
# Keys: player count, with 2 players split into long and short games
# (the short 2-player game uses the 2-3 player space).
TRACK_START_PLACEHOLDER = {"2-long": 30, "2-short": 26, "3": 26, "4": 23, "5": 20}
TRACK_START_MAX = 255  # one byte in the compact record


def track_key(players, short):
    """Settings-table key of the start space for this table."""
    if players == 2:
        return "2-short" if short else "2-long"
    return str(players)


# Oh My. Orchids! -------------------------------------------------------

# "The 2nd, 3rd, 4th, and 5th players draw 1, 2, 3, and 4 Seed cards".
STARTING_SEEDS = (0, 1, 2, 3, 4)
HAND_LIMIT = 7  # "If a player has more than 7 Seed cards, they must ... compost"
SEED_DISPLAY = 5  # a take can never exceed the 5-card Seed display
# "the Orchid and Flora display is replenished to 3 and 4 face-up cards", after
# the Plant Flowers action: a turn's plants of each kind (record.KINDS order)
DISPLAYS = (3, 4)
LAST_ROUND_FLOWERS = 7  # "at least 7 flowers planted"


def variety_bonus(distinct):
    """Variety bonus for `distinct` different flower types (4->3 ... 7+->15)."""
    if distinct >= 7:
        return 15
    return (0, 0, 0, 0, 3, 6, 10)[distinct]


# Both games -------------------------------------------------------------

MIN_PLAYERS = 2
MAX_PLAYERS = 5
NAME_MAX = 12  # player names: 1-12 printable ASCII characters

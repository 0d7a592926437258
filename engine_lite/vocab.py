"""What is printed on the board and its defaults, named once.

Why here: the flower and game names are rules vocabulary (engine_lite's
tables and records use them) and engine_lite imports nothing of the
project, so the board's buttons, the setup choices, the settings defaults
and the button timings live beside them. firmware/ imports them from here;
nothing else spells them out, but for the screens' folded copies of the
button indexes (tests/house/test_folded_consts.py holds them equal).
"""

# The five flowers, in the order of every per-flower array and of the
# flower buttons 1-5 (the first five BUTTONS).
FLOWERS = ("dahlia", "daffodil", "globemaster", "snowdrop", "tulip")
# The two titles, by the game byte of a start record (record.STALK, ORCHIDS).
GAMES = ("stalk-exchange", "oh-my-orchids")
GAME_TITLES = ("Stalk Exchange", "Oh My. Orchids!")

# The eight buttons, by index: five flowers, then the controls.
BUTTONS = FLOWERS + ("undo", "ok", "menu")
B_UNDO = 5
B_OK = 6
B_MENU = 7

# Button timings (ms): a press counts after DEBOUNCE_MS, is LONG once held
# LONG_PRESS_MS; a scripted hold lasts HOLD_MS (more than a long press).
DEBOUNCE_MS = 20
LONG_PRESS_MS = 600
HOLD_MS = 700

# Ring brightness: the menu's five levels (flower buttons 1-5) and the
# default, the third level.
BRIGHT_LEVELS = b"\x10\x20\x30\x80\xff"  # 16, 32, 48, 128, 255
DEFAULT_BRIGHTNESS = 48

# Settings keys (the host pushes them, the menu changes brightness).
SETTINGS_KEYS = ("names", "brightness", "track_start", "wifi")


def brightness(b):
    """A brightness setting as 0..255 (anything else: the default)."""
    if type(b) is not int or b < 0:
        return DEFAULT_BRIGHTNESS
    return b if b < 256 else 255

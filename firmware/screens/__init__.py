"""The board's screens: one small object per screen, each turning its
gestures into table events (through the App) and drawing itself into the
ring's View.

Why objects: a screen's state (the choices of setup, the harvest being
counted, the portfolio being entered, the plant being described) lives in
the screen that uses it, and a screen changes others only by calling them
(`app.go(screen)`, `app.menu.open(self)`), never by writing their fields.
The App routes each gesture to its current screen and owns the game, the
flash and the link (firmware/app.py).

A screen has `name` (the simulator's words key on it, app_words.py),
`press(button, kind)` and `show()` (draw into app.view). To add one: a class
here, an instance in App.__init__, its words in app_words.TITLES/HINTS.
"""

from firmware.ring import M_CHOICE, M_NUMBER, E_SHORT
from firmware.buttons import SHORT
from engine_lite.vocab import B_UNDO


class Screen:
    name = ""

    def __init__(self, app):
        self.app = app

    def show(self):
        """Draw this screen into the view (on entering, after a change)."""

    def press(self, b, kind):
        self.app.blink_error()


def show_choice(view, kind, options, sel):
    """A choice screen: `options` = bit per available sector, `sel` chosen."""
    view.mode = M_CHOICE
    view.choice = kind
    view.options = options
    view.sel = sel


def show_number(view, kind, value, unconfirmed=0):
    view.mode = M_NUMBER
    view.num_kind = kind
    view.number = value
    view.unconfirmed = unconfirmed


def number_press(app, entry, b, kind, hi):
    """Flower k (1-5 in button order) adds k to `entry`, held subtracts k;
    UNDO takes the last press back. True if the number changed; else the
    ring blinks (out of 0..hi: "short")."""
    if b < 5:
        if entry.add(0, b + 1 if kind == SHORT else -1 - b, hi):
            return True
        app.blink_error(E_SHORT)
    elif b == B_UNDO and entry.undo():
        return True
    else:
        app.blink_error()
    return False

"""The menu (hold MENU): flush, crash, brightness, new game, close; its
brightness and "abandon this game?" steps. Opened over any screen, it
returns to that screen when it closes.

Items are the five sectors / flower buttons; flush and crash only where
the menu was opened from Stalk Exchange play, new game only with a game.
"""

try:
    from micropython import const
except ImportError:  # CPython

    def const(x):
        return x


from engine_lite import record
from engine_lite.vocab import BRIGHT_LEVELS, B_OK, B_MENU
from firmware import ring
from firmware.buttons import SHORT
from firmware.screens import Screen, show_choice

STEPS = ("menu", "brightness", "confirm_new")
_MENU = const(0)
_BRIGHT = const(1)
_CONFIRM = const(2)

MI_FLUSH = const(0)
MI_CRASH = const(1)
MI_BRIGHT = const(2)
MI_NEW = const(3)
MI_CLOSE = const(4)


class Menu(Screen):
    def __init__(self, app):
        self.app = app
        self.back = None  # the screen the menu was opened over
        self.step = _MENU
        self.name = STEPS[0]
        self.items = 0  # bit per item available
        self.sel = MI_CLOSE
        self.old_brightness = 0  # kept if the brightness step is cancelled

    def open(self, back):
        self.back = back
        if back is self.app.stalk:
            self.items = 31
        elif self.app.game is not None:
            self.items = (1 << MI_BRIGHT) | (1 << MI_NEW) | (1 << MI_CLOSE)
        else:
            self.items = (1 << MI_BRIGHT) | (1 << MI_CLOSE)
        self.sel = MI_CLOSE
        self._go(_MENU)

    def _go(self, step):
        self.step = step
        self.name = STEPS[step]
        self.app.go(self)

    def close(self):
        """Back where the menu was opened (a game's home screen may have
        moved on meanwhile: the game decides it)."""
        if self.back is self.app.setup:
            self.app.go(self.back)
        else:
            self.app.home()

    def show(self):
        v = self.app.view
        if self.step == _MENU:
            show_choice(v, ring.CH_MENU, self.items, self.sel)
        elif self.step == _BRIGHT:
            sel = 0
            for i in range(5):
                if BRIGHT_LEVELS[i] <= v.brightness:
                    sel = i
            show_choice(v, ring.CH_BRIGHT, 31, sel)
        else:
            show_choice(v, ring.CH_CONFIRM, 31, 0)

    def press(self, b, kind):
        s = self.step
        if s == _MENU:
            self._menu(b, kind)
        elif s == _BRIGHT:
            self._bright(b, kind)
        elif b == B_OK:  # abandon the game
            self.app.finish()
        else:
            self.close()

    def _menu(self, b, kind):
        if b < 5 and kind == SHORT:
            if not self.items & (1 << b):
                self.app.blink_error()
                return
            self._activate(b)
        elif b == B_OK:
            self._activate(self.sel)
        elif b == B_MENU and kind == SHORT:
            sel = self.sel
            for _ in range(5):
                sel = (sel + 1) % 5
                if self.items & (1 << sel):
                    break
            self.sel = sel
            self.app.view.sel = sel
        else:  # UNDO or a held MENU: close
            self.close()

    def _activate(self, item):
        if item == MI_FLUSH or item == MI_CRASH:
            self.close()
            self.app.apply(record.FLUSH if item == MI_FLUSH else record.CRASH)
        elif item == MI_BRIGHT:
            self.old_brightness = self.app.view.brightness
            self._go(_BRIGHT)
        elif item == MI_NEW:
            self._go(_CONFIRM)
        else:
            self.close()

    def _bright(self, b, kind):
        app = self.app
        v = app.view
        if b < 5 and kind == SHORT:
            v.sel = b
        elif b == B_MENU and kind == SHORT:
            v.sel = (v.sel + 1) % 5
        elif b == B_OK:
            app.push_settings({"brightness": v.brightness})
            self.close()
            return
        else:  # UNDO: keep the old level
            v.brightness = self.old_brightness
            self.close()
            return
        v.brightness = BRIGHT_LEVELS[v.sel]

"""A simulated Bloomkeeper board for the app tests: SimHW + Store on MemFS +
App, driven by button scripts (firmware/script.py) through the real pins,
debounce and long-press timing."""

import json

import engine_lite
import firmware.ring
import firmware.script
from firmware.app import App
from firmware.hw import make_hw
from firmware.memfs import MemFS
from firmware.storage import Store


class Board:
    def __init__(self, fs=None, settings=None):
        self.fs = MemFS() if fs is None else fs
        self.hw = make_hw("pico", backend="sim")
        self.store = Store(fs=self.fs)
        self.app = App(self.hw, self.store)
        if settings:
            self.app.push_settings(settings)

    def do(self, script):
        """Play a button script (several gestures, one per line)."""
        firmware.script.play(self.app, self.hw, firmware.script.parse(script))

    def wait(self, ms):
        firmware.script.run_for(self.app, self.hw, ms)

    def reboot(self):
        """Power cut and boot again on the same flash."""
        return Board(fs=self.fs)

    @property
    def state(self):
        return self.app.game.state()

    @property
    def screen(self):
        return self.app.screen

    def px(self, i):
        return tuple(self.hw.pixels[i])

    def frame(self, now=None):
        """Pixels of the current view at a given time (pure render)."""
        ring = firmware.ring.Ring(24)
        buf = ring.render(self.app.view, self.hw.now if now is None else now)
        return [tuple(buf[3 * i : 3 * i + 3]) for i in range(24)]


def lit(p):
    return sum(p) > 0


def reddish(p):
    return p[0] > 0 and p[0] >= 3 * max(p[1], p[2])


def replay(events):
    """engine_lite.replay of event dicts (the game record of the same table)."""
    return engine_lite.replay(json.dumps(e) for e in events)

"""The one way to drive a board in CPython: SimHW + Store on MemFS + App
(+ the device Link, if asked), wired as firmware/main.py wires them, driven
by button scripts (boardkit/script.py) through the real pins, debounce and
long-press timing.

The app tests use Board directly; tests/kit/board_machine.py (the
hypothesis state machine) and bench/bench_link.py (the link fuzz) build
their board with it too, so a change to how the board is put together is
made once. Inside MicroPython the one way is tests/kit/game_driver.py."""

import json

import engine_lite
import firmware.link
import firmware.ring
import boardkit.script
from firmware.app import App
from firmware.hw import make_hw
from boardkit.hw_sim import SimHW
from boardkit.memfs import MemFS
from firmware.storage import Store


class Board:
    """`fs`: the flash to boot from (default: a fresh MemFS); `settings`:
    pushed as the host would; `snapshot_every`: the Store's snapshot period
    (default: the board's own); `link`: wire the device Link to the App as
    firmware/main.py does (Board.link; the host's requests go to link.feed)."""

    def __init__(self, fs=None, settings=None, snapshot_every=None, link=False):
        self.fs = MemFS() if fs is None else fs
        self.hw = make_hw("pico", backend=SimHW)
        self._options = {"snapshot_every": snapshot_every, "link": link}
        self.store = Store(fs=self.fs) if snapshot_every is None else Store(fs=self.fs, snapshot_every=snapshot_every)
        self.app = App(self.hw, self.store)
        self.link = None
        if link:
            self.link = firmware.link.Link(firmware.link.AppBoard(self.app, self.store))
            self.app.link = self.link
        if settings:
            self.app.push_settings(settings)

    def do(self, script):
        """Play a button script (several gestures, one per line)."""
        boardkit.script.play(self.app, self.hw, boardkit.script.parse(script))

    def wait(self, ms):
        boardkit.script.run_for(self.app, self.hw, ms)

    def reboot(self):
        """Power cut and boot again on the same flash."""
        return Board(fs=self.fs, **self._options)

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

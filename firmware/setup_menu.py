"""Setup and the menu: the screens that are not a game turn.

Why a module of its own, loaded only while one is open: they are rare (once
per game, or when a player holds MENU), and a game turn must not carry
their code in RAM (the board's heap budget; App.rare() loads this module,
App.drop_rare() lets it go once play resumes). Setup takes its choices from
the last game played (the same table usually plays again).
"""

try:
    from micropython import const
except ImportError:  # CPython

    def const(x):  # type: ignore[misc]  # the stub's signature is generic
        return x


from engine_lite import EngineError
from engine_lite import record
from engine_lite import tables
from engine_lite.vocab import GAMES, BRIGHT_LEVELS, B_UNDO, B_OK, B_MENU
from firmware import ring
from firmware.buttons import SHORT, LONG
from firmware.screens import Screen, NumberEntry, show_choice, show_number, number_press


# -- setup -----------------------------------------------------------------
# Setup: game -> player count -> (2 players: long/short) -> (Stalk
# Exchange: market-track start space) -> the game starts.
#
# Why remembered choices: setup comes back after every game, and the same
# table usually plays again. The start space is printed on the players'
# Market board and remembered per player count in the settings; until the
# players change it or confirm it (hold OK), the placeholder shows as
# unconfirmed and the start record leaves `track_start` out (the engine then
# reports `track_start_placeholder`). Names come from the settings (pushed by
# the host) if they are valid and unique, else "Seat 1".."Seat n".

_GAME = const(0)
_PLAYERS = const(1)
_LENGTH = const(2)
_TRACK = const(3)


class Setup(Screen):
    steps = ("setup_game", "setup_players", "setup_length", "setup_track")

    def __init__(self, app):
        Screen.__init__(self, app)
        last = app.last_game.table if app.last_game is not None else None
        self.game = 0 if last is None else last.game  # index in vocab.GAMES (record.STALK, ORCHIDS)
        self.players = 3 if last is None else last.n
        self.short = 1 if getattr(last, "short", False) else 0  # 2 players: 0 long, 1 short
        self.track = NumberEntry()  # the start space being entered
        self.unconfirmed = 0  # the start space shown is the placeholder

    def begin(self):
        """Setup from its first step (the choices are kept)."""
        self.to_step(_GAME)

    def show(self):
        v = self.app.view
        s = self.step
        if s == _GAME:
            show_choice(v, ring.CH_GAME, 3, self.game)
        elif s == _PLAYERS:
            show_choice(v, ring.CH_PLAYERS, 30, self.players - 1)
        elif s == _LENGTH:
            show_choice(v, ring.CH_LENGTH, 3, self.short)
        else:
            show_number(v, ring.N_TRACK, self.track.values[0], self.unconfirmed)

    def press(self, b, kind):
        app = self.app
        s = self.step
        if b == B_MENU and kind == LONG:
            app.open_menu(self)
            return
        if s == _TRACK:
            if b == B_OK:
                if kind == LONG:  # "this is the number on our Market board"
                    self.unconfirmed = 0
                self._start()
            elif b == B_UNDO and not self.track.n:
                self.to_step(_LENGTH if self.players == 2 else _PLAYERS)
            elif number_press(app, self.track, b, kind, tables.TRACK_START_MAX):
                self.unconfirmed = 0  # the players are entering their own number
                self.show()
            return
        if b == B_UNDO and s > _GAME:
            self.to_step(_PLAYERS if s == _LENGTH else _GAME)
            return
        if b == B_OK:
            if s == _GAME:
                self.to_step(_PLAYERS)
            elif s == _PLAYERS and self.game == record.ORCHIDS:
                self._start()
            elif s == _PLAYERS and self.players == 2:
                self.to_step(_LENGTH)
            else:
                if s == _PLAYERS:
                    self.short = 0
                self._to_track()
            return
        if s == _PLAYERS:
            if 0 < b < 5 and kind == SHORT:
                self.players = b + 1
            elif b == B_MENU:
                self.players = 2 if self.players >= 5 else self.players + 1
            else:
                app.blink_error()
        elif b < 2 and kind == SHORT:
            if s == _GAME:
                self.game = b
            else:
                self.short = b
        elif b == B_MENU:
            if s == _GAME:
                self.game = 1 - self.game
            else:
                self.short = 1 - self.short
        else:
            app.blink_error()
        self.show()

    def _to_track(self):
        """The start space last confirmed for this player count, else the
        placeholder, unconfirmed."""
        key = tables.track_key(self.players, self.short)
        d = self.app.settings.get("track_start")
        t = d.get(key) if type(d) is dict else None
        if type(t) is not int or not 1 <= t <= tables.TRACK_START_MAX:
            t = None
        self.track.start(tables.TRACK_START_PLACEHOLDER[key] if t is None else t)
        self.unconfirmed = 1 if t is None else 0
        self.to_step(_TRACK)

    def player_names(self):
        """The first n names from the settings if they are valid and
        unique, else "Seat 1".."Seat n"."""
        n = self.players
        names = self.app.settings.get("names")
        if type(names) is list and len(names) >= n:
            names = names[:n]
            ok = True
            for i in range(n):
                if not record.check_name(names[i]) or names.index(names[i]) < i:
                    ok = False
            if ok:
                return names
        return ["Seat %d" % (i + 1) for i in range(n)]

    def _start(self):
        app = self.app
        ev = {"ev": "start", "game": GAMES[self.game], "players": self.player_names()}
        if self.game == record.STALK:
            if self.players == 2:
                ev["length"] = "short" if self.short else "long"
            if not self.unconfirmed:  # changed or confirmed: the real number
                track = self.track.values[0]
                ev["track_start"] = track
                key = tables.track_key(self.players, self.short)
                d = app.settings.get("track_start")
                if type(d) is not dict or d.get(key) != track:  # remember it for this player count
                    app.push_settings({"track_start": {key: track}})
        try:
            rec = record.encode_start(ev)
        except EngineError:
            app.blink_error()
            return
        app.new_game(rec)



# -- menu ------------------------------------------------------------------
# The menu (hold MENU): flush, crash, brightness, new game, close; its
# brightness and "abandon this game?" steps. Opened over any screen, it
# returns to that screen when it closes.
#
# Items are the five sectors / flower buttons; flush and crash only where
# the menu was opened from Stalk Exchange play, new game only with a game.

_MENU = const(0)
_BRIGHT = const(1)
_CONFIRM = const(2)

_MI_FLUSH = const(0)
_MI_CRASH = const(1)
_MI_BRIGHT = const(2)
_MI_NEW = const(3)
_MI_CLOSE = const(4)


class Menu(Screen):
    steps = ("menu", "brightness", "confirm_new")

    def __init__(self, app):
        Screen.__init__(self, app)
        self.back = None  # the screen the menu was opened over
        self.items = 0  # bit per item available
        self.sel = _MI_CLOSE
        self.old_brightness = 0  # kept if the brightness step is cancelled

    def open(self, back):
        self.back = back
        if back is self.app.stalk:
            self.items = 31
        elif self.app.game is not None:
            self.items = (1 << _MI_BRIGHT) | (1 << _MI_NEW) | (1 << _MI_CLOSE)
        else:
            self.items = (1 << _MI_BRIGHT) | (1 << _MI_CLOSE)
        self.sel = _MI_CLOSE
        self.to_step(_MENU)

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
        app = self.app
        v = app.view
        s = self.step
        if s == _MENU:
            if b < 5 and kind == SHORT:
                if self.items & (1 << b):
                    self._activate(b)
                else:
                    app.blink_error()
            elif b == B_OK:
                self._activate(self.sel)
            elif b == B_MENU and kind == SHORT:
                sel = self.sel
                for _ in range(5):
                    sel = (sel + 1) % 5
                    if self.items & (1 << sel):
                        break
                self.sel = sel
                v.sel = sel
            else:  # UNDO or a held MENU: close
                self.close()
        elif s == _CONFIRM:
            if b == B_OK:  # abandon the game
                app.finish()
            else:
                self.close()
        elif b < 5 and kind == SHORT:  # brightness: flower = that level
            v.sel = b
            v.brightness = BRIGHT_LEVELS[b]
        elif b == B_MENU and kind == SHORT:
            v.sel = (v.sel + 1) % 5
            v.brightness = BRIGHT_LEVELS[v.sel]
        elif b == B_OK:
            app.push_settings({"brightness": v.brightness})
            self.close()
        else:  # UNDO: keep the old level
            v.brightness = self.old_brightness
            self.close()

    def _activate(self, item):
        if item == _MI_FLUSH or item == _MI_CRASH:
            self.close()
            self.app.apply(record.FLUSH if item == _MI_FLUSH else record.CRASH)
        elif item == _MI_BRIGHT:
            self.old_brightness = self.app.view.brightness
            self.to_step(_BRIGHT)
        elif item == _MI_NEW:
            self.to_step(_CONFIRM)
        else:
            self.close()

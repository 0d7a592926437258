"""Setup: game -> player count -> (2 players: long/short) -> (Stalk
Exchange: market-track start space) -> the game starts.

Why remembered choices: setup comes back after every game, and the same
table usually plays again. The start space is printed on the players'
Market board and remembered per player count in the settings; until the
players change it or confirm it (hold OK), the placeholder shows as
unconfirmed and the start record leaves `track_start` out (the engine then
reports `track_start_placeholder`). Names come from the settings (pushed by
the host) if they are valid and unique, else "Seat 1".."Seat n".
"""

try:
    from micropython import const
except ImportError:  # CPython

    def const(x):
        return x


from engine_lite import EngineError
from engine_lite import record
from engine_lite import tables
from engine_lite.vocab import GAMES, B_UNDO, B_OK, B_MENU
from firmware import ring
from firmware.buttons import SHORT, LONG
from firmware.number_entry import NumberEntry
from firmware.screens import Screen, show_choice, show_number, number_press

STEPS = ("setup_game", "setup_players", "setup_length", "setup_track")
_GAME = const(0)
_PLAYERS = const(1)
_LENGTH = const(2)
_TRACK = const(3)


class Setup(Screen):
    def __init__(self, app):
        self.app = app
        self.game = 0  # index in vocab.GAMES (record.STALK, record.ORCHIDS)
        self.players = 3
        self.short = 0  # 2 players: 0 long, 1 short
        self.step = _GAME
        self.name = STEPS[0]
        self.track = NumberEntry()  # the start space being entered
        self.unconfirmed = 0  # the start space shown is the placeholder

    def begin(self):
        """Setup from its first step (the choices are kept)."""
        self._go(_GAME)

    def _go(self, step):
        self.step = step
        self.name = STEPS[step]
        self.app.go(self)

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
            show_number(v, ring.N_TRACK, self.track.value(), self.unconfirmed)

    def track_key(self):
        return tables.track_key(self.players, self.short)

    def remembered_track(self):
        """The start space last confirmed for this player count, else None."""
        d = self.app.settings.get("track_start")
        if type(d) is dict:
            t = d.get(self.track_key())
            if type(t) is int and 1 <= t <= tables.TRACK_START_MAX:
                return t
        return None

    def press(self, b, kind):
        app = self.app
        s = self.step
        if b == B_MENU and kind == LONG:
            app.menu.open(self)
            return
        if s == _TRACK:
            if b == B_OK:
                if kind == LONG:  # "this is the number on our Market board"
                    self.unconfirmed = 0
                self._start()
            elif b == B_UNDO and not self.track.n:
                self._go(_LENGTH if self.players == 2 else _PLAYERS)
            elif number_press(app, self.track, b, kind, tables.TRACK_START_MAX):
                self.unconfirmed = 0  # the players are entering their own number
                self.show()
            return
        if b == B_UNDO and s > _GAME:
            self._go(_PLAYERS if s == _LENGTH else _GAME)
            return
        if b == B_OK:
            if s == _GAME:
                self._go(_PLAYERS)
            elif s == _PLAYERS and self.game == record.ORCHIDS:
                self._start()
            elif s == _PLAYERS and self.players == 2:
                self._go(_LENGTH)
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
        t = self.remembered_track()
        self.track.start(tables.TRACK_START_PLACEHOLDER[self.track_key()] if t is None else t)
        self.unconfirmed = 1 if t is None else 0
        self._go(_TRACK)

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
                track = self.track.value()
                ev["track_start"] = track
                key = self.track_key()
                d = app.settings.get("track_start")
                if type(d) is not dict or d.get(key) != track:  # remember it for this player count
                    app.push_settings({"track_start": {key: track}})
        try:
            rec = record.encode_start(ev)
        except EngineError:
            app.blink_error()
            return
        app.new_game(rec)

"""The board's screens: one small object per screen, each turning its
gestures into table events (through the App) and drawing itself into the
ring's View.

Why objects: a screen's state (the choices of setup, the harvest being
counted, the portfolio being entered, the plant being described) lives in
the screen that uses it, and a screen changes others only through the
App's screen stack (`app.go(screen)`, `app.push(app.menu)`, `app.pop()`,
`app.home()`), never by calling their methods or writing their fields
(tests/board/test_screens.py). The App routes each gesture to the screen on top
and owns the game, the flash and the link (firmware/app.py). Whether an
action is legal and what it costs is the engine's answer (Game.legal, the
title's cost: StalkState.cost / OrchidsState.cost), never re-derived here. The play gestures of Stalk Exchange (plant, swap, counting a harvest,
end turn) allocate nothing: their records are the engine's constants
(tests/board/test_app_alloc.py proves it under heap_lock); a counted harvest, a
take and a plant build their few-byte record with record.encode_*.

Why one module for the play screens: each .mpy file carries its own table
of names, so six screen modules cost ~2 KB more flash than one (the bundle
budget is 48 KB).

A screen has `name` (the simulator's words key on it, app_words.py),
`press(button, kind)` and `show()` (draw into app.view), and `overlay`:
an overlay (the menu, plant entry) is pushed over the game's screen and
keeps the ring over events until it closes (App._changed), plant entry
only while the game is in play (_OVER_PLAY), the menu over any screen
(_OVER_ALL). Steps of one screen (setup's four, the menu's three, plant
entry's three) have one name each. To add a screen: a class here (its
__init__ calls Screen.__init__), an instance in App.__init__, its words in
app_words.TITLES / HINTS.
"""

from engine_lite import const, EngineError, record, tables
from engine_lite.vocab import FLOWERS, GAMES, BRIGHT_LEVELS

# firmware/ring.py's screens (M_*), choice palettes (CH_*), number colours
# (N_*) and refusals (E_*) that the screens use, as private copies
# (tests/house/test_folded_consts.py holds them equal to ring's): the compiler folds a
# const only within its module, so each `ring.X` cost its name in
# screens.mpy and a lookup on every use, and every bundle byte is heap on the
# Pico (docs/design.md "Memory and the bundle"). With these the screens need
# nothing else of ring and no longer import it: 326 B off the bundle.
_M_STALK = const(1)
_M_ORCHIDS = const(2)
_M_CHOICE = const(3)
_M_NUMBER = const(4)
_M_PORTFOLIO = const(5)
_M_STALK_END = const(6)
_M_ORCHIDS_END = const(7)
_CH_GAME = const(0)
_CH_PLAYERS = const(1)
_CH_LENGTH = const(2)
_CH_MENU = const(3)
_CH_BRIGHT = const(4)
_CH_KIND = const(5)
_CH_CONFIRM = const(6)
_N_TRACK = const(0)
_N_POINTS = const(1)
_N_SEEDS = const(2)
_E_RULE = const(2)
_E_SHORT = const(3)
# and engine_lite/record.py's titles, the opcodes they ask the engine about
# and a plant's most points, the same way (the same test holds them and the
# next five equal to their modules')
_STALK = const(0)
_ORCHIDS = const(1)
_OP_PLANT = const(2)
_OP_HARVEST = const(5)
_OP_END_TURN = const(7)
_POINTS_MAX = const(99)
# and the buttons (engine_lite/vocab.py B_*) and the gestures
# (firmware/buttons.py SHORT, LONG) that every press compares with
_B_UNDO = const(5)
_B_OK = const(6)
_B_MENU = const(7)
_SHORT = const(1)
_LONG = const(2)


# -- number entry --------------------------------------------------------
# Numbers entered with the flower buttons, every press undoable.
#
# Why one object: the start space, a plant's points and its Seed cards are
# one number (flower k adds k, held subtracts k); a portfolio is five (one
# per flower, a press adds or takes one). Both are "a press changes a slot
# by d within 0..hi, UNDO takes the last press back", so both are this.
# No allocation: the values and the presses live in two bytearrays.

_HIST_MAX = const(48)  # presses remembered for UNDO


class NumberEntry:
    def __init__(self, slots=1):
        self.values = bytearray(slots)
        self.hist = bytearray(_HIST_MAX)  # per press: slot << 4 | d, +128 if d < 0
        self.n = 0

    def start(self, value=0):
        """A new entry: slot 0 = value, the others 0, nothing to undo."""
        v = self.values
        for i in range(len(v)):
            v[i] = 0
        v[0] = value
        self.n = 0

    def add(self, slot, d, hi):
        """Change a slot by d (may be negative); False (and no change) if
        the result leaves 0..hi or the press history is full."""
        x = self.values[slot] + d
        if x < 0 or x > hi or self.n >= _HIST_MAX:
            return False
        self.values[slot] = x
        self.hist[self.n] = slot << 4 | (128 - d if d < 0 else d)
        self.n += 1
        return True

    def undo(self):
        """Take the last press back; False if there is none."""
        if not self.n:
            return False
        self.n -= 1
        h = self.hist[self.n]
        d = h & 15
        self.values[h >> 4 & 7] += d if h & 128 else -d
        return True


# -- screens ------------------------------------------------------------

# Screen.overlay: an overlay keeps the ring over an event while its level
# is above the game's `over` (App._changed: `overlay <= over` -> home)
_OVER_PLAY = const(1)
_OVER_ALL = const(2)


class Screen:
    """show(): draw into app.view (on entering, after a change);
    press(button, kind): one gesture. A screen of several steps names them
    in `steps` and moves with to_step."""

    name = ""  # type: str
    steps = ()  # type: tuple[str, ...]
    # 0: a game's screen (or setup); else pushed over one (App.push calls
    # its enter(under)) and keeping the ring over events until it closes:
    # _OVER_PLAY while the game is in play, _OVER_ALL also once it is over
    overlay = 0

    def __init__(self, app):
        self.app = app
        self.step = 0
        if self.steps:
            self.name = self.steps[0]

    def to_step(self, step):
        self.step = step
        self.name = self.steps[step]
        self.app.go(self)


def show_choice(view, kind, options, sel):
    """A choice screen: `options` = bit per available sector, `sel` chosen."""
    view.mode = _M_CHOICE
    view.choice = kind
    view.options = options
    view.sel = sel


def show_number(view, kind, value, unconfirmed=0):
    view.mode = _M_NUMBER
    view.num_kind = kind
    view.number = value
    view.unconfirmed = unconfirmed


def number_press(app, entry, b, kind, hi):
    """Flower k (1-5 in button order) adds k to `entry`, held subtracts k;
    UNDO takes the last press back. True if the number changed; else the
    ring blinks (out of 0..hi: "short")."""
    if b < 5:
        if entry.add(0, b + 1 if kind == _SHORT else -1 - b, hi):
            return True
        app.blink_error(_E_SHORT)
    elif b == _B_UNDO and entry.undo():
        return True
    else:
        app.blink_error()
    return False



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
# the host) for the first seats, "Seat k" for the others.

_GAME = const(0)
_PLAYERS = const(1)
_LENGTH = const(2)
_TRACK = const(3)


class Setup(Screen):
    steps = ("setup_game", "setup_players", "setup_length", "setup_track")

    def __init__(self, app):
        Screen.__init__(self, app)
        self.game = 0  # index in vocab.GAMES (record.STALK, record.ORCHIDS); kept for the next game
        self.players = 3
        self.short = 0  # 2 players: 0 long, 1 short
        self.track = NumberEntry()  # the start space being entered
        self.unconfirmed = 0  # the start space shown is the placeholder

    def begin(self):
        """Setup from its first step (the choices are kept)."""
        self.to_step(_GAME)

    def show(self):
        v = self.app.view
        s = self.step
        if s == _GAME:
            show_choice(v, _CH_GAME, 3, self.game)
        elif s == _PLAYERS:
            show_choice(v, _CH_PLAYERS, 30, self.players - 1)
        elif s == _LENGTH:
            show_choice(v, _CH_LENGTH, 3, self.short)
        else:
            show_number(v, _N_TRACK, self.track.values[0], self.unconfirmed)

    def press(self, b, kind):
        app = self.app
        s = self.step
        if b == _B_MENU and kind == _LONG:
            app.push(app.menu)
            return
        if s == _TRACK:
            if b == _B_OK:
                if kind == _LONG:  # "this is the number on our Market board"
                    self.unconfirmed = 0
                self._start()
            elif b == _B_UNDO and not self.track.n:
                self.to_step(_LENGTH if self.players == 2 else _PLAYERS)
            elif number_press(app, self.track, b, kind, tables.TRACK_START_MAX):
                self.unconfirmed = 0  # the players are entering their own number
                self.show()
            return
        if b == _B_UNDO and s > _GAME:
            self.to_step(_PLAYERS if s == _LENGTH else _GAME)
            return
        if b == _B_OK:
            if s == _GAME:
                self.to_step(_PLAYERS)
            elif s == _PLAYERS and self.game == _ORCHIDS:
                self._start()
            elif s == _PLAYERS and self.players == 2:
                self.to_step(_LENGTH)
            else:
                if s == _PLAYERS:
                    self.short = 0
                self._to_track()
            return
        if s == _PLAYERS:
            if 0 < b < 5 and kind == _SHORT:
                self.players = b + 1
            elif b == _B_MENU:
                self.players = 2 if self.players >= 5 else self.players + 1
            else:
                app.blink_error()
        elif b < 2 and kind == _SHORT:
            if s == _GAME:
                self.game = b
            else:
                self.short = b
        elif b == _B_MENU:
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

    def _start(self):
        """Start the game chosen. Players: the names from the settings
        (pushed by the host) in the first seats, "Seat k" in the seats they
        do not fill, when encode_start accepts them (it checks every name
        once), else "Seat 1".."Seat n"."""
        app = self.app
        n = self.players
        names = app.settings.get("names")
        ev = {"ev": "start", "game": GAMES[self.game]}
        if self.game == _STALK:
            if n == 2:
                ev["length"] = "short" if self.short else "long"
            if not self.unconfirmed:  # changed or confirmed: the real number
                track = self.track.values[0]
                ev["track_start"] = track
                key = tables.track_key(n, self.short)
                d = app.settings.get("track_start")
                if type(d) is not dict or d.get(key) != track:  # remember it for this player count
                    app.push_settings({"track_start": {key: track}})
        for mine in (names if type(names) is list else (), ()):
            # the settings' names fill the first seats, "Seat k" the others
            ev["players"] = [mine[i] if i < len(mine) else "Seat %d" % (i + 1) for i in range(n)]
            try:
                rec = record.encode_start(ev)
            except EngineError:
                continue  # they do not fit this table (a name taken by a "Seat k"): seats by number
            app.new_game(rec)
            return
        app.blink_error()



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
    overlay = _OVER_ALL

    def __init__(self, app):
        Screen.__init__(self, app)
        self.back = None  # the screen the menu was opened over
        self.items = 0  # bit per item available
        self.sel = _MI_CLOSE
        self.old_brightness = 0  # kept if the brightness step is cancelled

    def enter(self, back):
        """Opened over screen `back` (App.push), which sets its items."""
        self.back = back
        app = self.app
        if back is app.stalk:
            self.items = 31
        elif app.game is not None:
            self.items = (1 << _MI_BRIGHT) | (1 << _MI_NEW) | (1 << _MI_CLOSE)
        else:
            self.items = (1 << _MI_BRIGHT) | (1 << _MI_CLOSE)
        self.sel = _MI_CLOSE
        self.to_step(_MENU)

    def show(self):
        v = self.app.view
        if self.step == _MENU:
            show_choice(v, _CH_MENU, self.items, self.sel)
        elif self.step == _BRIGHT:
            sel = 0
            for i in range(5):
                if BRIGHT_LEVELS[i] <= v.brightness:
                    sel = i
            show_choice(v, _CH_BRIGHT, 31, sel)
        else:
            show_choice(v, _CH_CONFIRM, 31, 0)

    def press(self, b, kind):
        app = self.app
        v = app.view
        s = self.step
        if s == _MENU:
            if b < 5 and kind == _SHORT:
                if self.items & (1 << b):
                    self._activate(b)
                else:
                    app.blink_error()
            elif b == _B_OK:
                self._activate(self.sel)
            elif b == _B_MENU and kind == _SHORT:
                sel = self.sel
                for _ in range(5):
                    sel = (sel + 1) % 5
                    if self.items & (1 << sel):
                        break
                self.sel = sel
                v.sel = sel
            else:  # UNDO or a held MENU: close
                app.pop()
        elif s == _CONFIRM:
            if b == _B_OK:  # abandon the game
                app.finish()
            else:
                app.pop()
        elif (b < 5 or b == _B_MENU) and kind == _SHORT:  # brightness: flower = that level, MENU the next
            v.sel = b if b < 5 else (v.sel + 1) % 5
            v.brightness = BRIGHT_LEVELS[v.sel]
        elif b == _B_OK:
            app.push_settings({"brightness": v.brightness})
            app.pop()
        else:  # UNDO: keep the old level
            v.brightness = self.old_brightness
            app.pop()

    def _activate(self, item):
        app = self.app
        if item == _MI_FLUSH or item == _MI_CRASH:
            app.pop()
            app.apply(record.FLUSH if item == _MI_FLUSH else record.CRASH)
        elif item == _MI_BRIGHT:
            self.old_brightness = app.view.brightness
            self.to_step(_BRIGHT)
        elif item == _MI_NEW:
            self.to_step(_CONFIRM)
        else:
            app.pop()


# -- stalk -----------------------------------------------------------------
# Stalk Exchange: play, the harvest being counted, portfolio entry.
#
# Play: OK plant, MENU swap, a flower = harvest +1 of it (counted on
# play's harvest screen, OK confirms), hold a flower = its market value
# for 2 s, hold OK end turn (before two basic actions: "stuck", straight
# to the upkeep, ruling R3), hold MENU menu, UNDO undo. Whether an action is legal
# and what it costs is the engine's answer (Game.legal / StalkState.cost),
# never re-derived here. Plant, swap, counting and end turn allocate nothing
# (the engine's constant records; heap_lock test in tests/board/test_app_alloc.py).

class StalkPlay(Screen):
    """Play, and the harvest of one flower being counted (screen "harvest"):
    the same flower +1, held or UNDO -1, another flower confirms and counts
    that one, OK confirms (held: and ends the turn). Anything else confirms
    first and is then a play gesture.

    Why one screen: the count is play with a number pending (the ring
    shows play with that flower's segment blinking), and its gestures fall
    through to play's, so the two need no calls between screens. App.harvest
    names this same object."""

    name = "stalk"

    def __init__(self, app):
        Screen.__init__(self, app)
        self.flower = -1  # being counted, or -1
        self.n = 0

    def show(self):
        t = self.app.game.table
        v = self.app.view
        v.mode = _M_STALK
        v.n = t.n
        v.player = t.player
        v.values[:] = t.values  # in C, no allocation: both are 5 bytes
        for s in range(t.n):  # per seat: a state that lost a seat fails here, not later
            v.tokens[s] = t.tokens[s]
            v.flushed[s] = t.flushed[s]
        v.extra_cost = t.cost(_OP_PLANT)
        v.upkeep = 1 if t.upkeep else 0
        v.until_crash = t.crash_distance()
        v.bag = t.bag
        v.trigger = t.trigger
        v.pending = self.flower
        v.pending_count = self.n

    def count(self, f):
        """One more harvested token of flower f. The engine says whether
        harvesting may start (after the turn's two basic actions)."""
        app = self.app
        if not app.game.legal(_OP_HARVEST):
            app.blink_error(_E_RULE)
            return
        if self.flower != f:
            if not self.commit():
                return
            self.flower = f
            self.n = 0
        self.n += 1
        self.name = "harvest"
        app.go(self)

    def clear(self):
        self.flower = -1
        self.n = 0
        self.name = "stalk"

    def commit(self):
        """Apply the counted harvest (if any); False if it was refused."""
        if self.flower < 0:
            return True
        rec = record.encode_harvest(self.flower, self.n)
        self.clear()
        return self.app.apply(rec) or self.app.home()

    def press(self, b, kind):
        app = self.app
        f = self.flower
        if f >= 0:  # a harvest being counted
            if b == f or b == _B_UNDO:
                if kind == _LONG or b == _B_UNDO:
                    self.n -= 1
                    if self.n <= 0:
                        self.clear()
                        app.home()
                    else:
                        self.show()
                    return
            elif b == _B_OK:
                if self.commit() and kind == _LONG:
                    app.apply(record.END_TURN)
                return
            elif b > 4 and not self.commit() and kind == _SHORT:
                return  # MENU: confirmed first, then swap (refused in the upkeep) or the menu
        if b < 5:
            if kind == _LONG:
                app.peek(b)
            else:
                self.count(b)
        elif b == _B_OK:
            if kind == _SHORT:
                app.apply(record.PLANT)
            elif app.game.legal(_OP_END_TURN):
                app.apply(record.END_TURN)
            else:  # stuck before two basic actions: straight to the upkeep (ruling R3)
                app.apply(record.STUCK)
        elif b == _B_MENU:
            if kind == _LONG:
                app.push(app.menu)
            else:
                app.apply(record.SWAP)
        else:
            app.undo()


class PortfolioEntry(Screen):
    """Game over: each player's portfolio, flower = +1 token, held -1, UNDO
    the last tap, OK = this player done. The seat is the first whose
    portfolio is missing; a new seat starts from zero."""

    name = "portfolio"

    def __init__(self, app):
        Screen.__init__(self, app)
        self.seat = -1
        self.counts = NumberEntry(5)

    def clear(self):
        self.seat = -1

    def show(self):
        t = self.app.game.table
        v = self.app.view
        v.entered[0 : t.n] = t.entered  # in C: both are n bytes
        seat = t.entered.find(b"\0")  # the first seat whose portfolio is missing
        if seat != self.seat:
            self.counts.start(0)
            self.seat = seat
        v.n = t.n
        v.player = seat
        v.mode = _M_PORTFOLIO
        v.counts[:] = self.counts.values

    def press(self, b, kind):
        app = self.app
        c = self.counts
        if b < 5:
            if c.add(b, 1 if kind == _SHORT else -1, tables.TOKENS_PER_FLOWER):
                self.show()
            else:
                app.blink_error(_E_SHORT)
        elif b == _B_OK:
            v = c.values
            app.apply(record.encode_portfolio(self.seat, v))
        elif b == _B_UNDO:
            if c.undo():
                self.show()
            else:
                app.undo()
        else:
            app.push(app.menu)



# -- orchids ---------------------------------------------------------------
# Oh My. Orchids!: play and plant entry.
#
# Play: flower k = take k Seed cards, OK plant, hold OK end turn / pass,
# UNDO undo, hold MENU menu. Plant entry: kind (dahlia = a flora of a type
# this player has not planted, daffodil = a type already planted, OK =
# orchid) -> points -> Seed cards; the engine names the plant so that the
# variety count stays right (ruling R7, OrchidsState.new_name).

_KIND = const(0)
_POINTS = const(1)
_SEEDS = const(2)


class OrchidsPlay(Screen):
    name = "orchids"

    def show(self):
        t = self.app.game.table
        v = self.app.view
        v.mode = _M_ORCHIDS
        v.n = t.n
        v.player = t.player
        ending = 0
        for s in range(t.n):
            v.flowers[s] = t.planted(s)
            if t.ends_game(s):
                ending |= 1 << s
        v.ending = ending
        v.last_round = 1 if t.last_round else 0

    def press(self, b, kind):
        app = self.app
        if b < 5:
            if kind == _SHORT:
                app.apply(record.encode_take(b + 1))
            else:
                app.blink_error()
        elif b == _B_OK:
            if kind == _SHORT:
                app.push(app.plant)
            else:
                app.apply(record.END_TURN)
        elif b == _B_UNDO:
            app.undo()
        else:
            app.push(app.menu)


class PlantEntry(Screen):
    steps = ("plant_kind", "plant_points", "plant_seeds")
    overlay = _OVER_PLAY  # a plant belongs to play: the game's end closes it

    def __init__(self, app):
        Screen.__init__(self, app)
        self.kind = 0  # 0 orchid, 1 flora of a new type, 2 a flora type already planted
        self.points = 0
        self.number = NumberEntry()  # the points, then the Seed cards

    def enter(self, under):
        """Opened over Orchids play (App.push): the kind, nothing entered."""
        self._go(_KIND, 0)

    def _go(self, step, value):
        self.number.start(value)
        self.to_step(step)

    def show(self):
        v = self.app.view
        if self.step == _KIND:
            show_choice(v, _CH_KIND, 3, -1)
        else:
            show_number(v, _N_POINTS if self.step == _POINTS else _N_SEEDS, self.number.values[0])

    def press(self, b, kind):
        app = self.app
        s = self.step
        if s == _KIND:
            if b < 2 and kind == _SHORT:
                if b and app.game.table.new_name(2) is None:  # no flora planted yet
                    app.blink_error(_E_RULE)
                    return
                self.kind = b + 1
            elif b == _B_OK:
                self.kind = 0
            elif b == _B_UNDO or b == _B_MENU:
                app.pop()
                return
            else:
                app.blink_error()
                return
            self._go(_POINTS, 0)
        elif b == _B_OK:
            if s == _POINTS:
                self.points = self.number.values[0]
                self._go(_SEEDS, 0)
            else:
                self._sow(self.number.values[0])
        elif b == _B_MENU:
            app.pop()
        elif b == _B_UNDO and not self.number.n:
            if s == _POINTS:
                self._go(_KIND, 0)
            else:
                self._go(_POINTS, self.points)
        elif number_press(app, self.number, b, kind, _POINTS_MAX):
            self.show()

    def _sow(self, seeds):
        app = self.app
        game = app.game
        ev = {
            "ev": "plant",
            "name": game.table.new_name(self.kind),
            "kind": "flora" if self.kind else "orchid",
            "points": self.points,
            "seeds": seeds,
        }
        try:
            rec = game.encode(ev)
        except EngineError:
            app.blink_error()
            return
        if app.apply(rec):
            app.pop()



# -- results ---------------------------------------------------------------
# Results (both games): winners and scores on the ring; OK starts the
# next game, UNDO reopens the last entry, hold a flower (Stalk Exchange) =
# its final value.

class Results(Screen):
    name = "results"

    def show(self):
        g = self.app.game
        t = g.table
        final = t.final()
        v = self.app.view
        v.n = t.n
        if g.game == _STALK:
            v.mode = _M_STALK_END
            for f in range(5):
                v.values[f] = final["values"][FLOWERS[f]]
                v.busted[f] = 1 if FLOWERS[f] in final["busted"] else 0
        else:
            v.mode = _M_ORCHIDS_END
        for s in range(5):
            v.winner[s] = 0
            v.scores[s] = 0
        for row in final["players"]:
            s = t.names.index(row["name"])
            v.winner[s] = 1 if row["winner"] else 0
            v.scores[s] = row["score"]

    def press(self, b, kind):
        app = self.app
        if b == _B_OK:
            app.finish()
        elif b == _B_UNDO:
            app.undo()
        elif b == _B_MENU:
            app.push(app.menu)
        elif kind == _LONG and app.game.game == _STALK:
            app.peek(b)  # a held flower: its final value
        else:
            app.blink_error()

"""Setup, menus and number entry: the screens that are not a game turn.

Why separate from app.py: these screens are rare (once per game or when a
player opens the menu), may allocate freely, and are the part a player
reads on the reference card as "choose with a flower button, OK moves on,
UNDO goes back". Every function takes the App.

Setup: game -> player count -> (2 players: long/short) -> (Stalk Exchange:
market-track start space, remembered per player count in the settings) ->
the game starts with the names from the settings (from the host) or seats.
The start space is printed on the players' Market board: until they change
it or confirm it (hold OK), the placeholder shows as unconfirmed and the
start record leaves `track_start` out (the engine then reports
`track_start_placeholder`).
"""

from engine_lite import EngineError
from engine_lite import record as R
from engine_lite import tables as T
from firmware import ring as RG
from firmware.buttons import SHORT, LONG

# Control buttons (indexes in firmware.buttons.BUTTONS); flowers are 0-4.
B_UNDO = 5
B_OK = 6
B_MENU = 7
GAME_NAMES = ("stalk-exchange", "oh-my-orchids")
BRIGHT_LEVELS = bytes((16, 32, 48, 128, 255))  # 48: the default (level 3)

# Menu items = sectors / flower buttons 1-5
MI_FLUSH = 0
MI_CRASH = 1
MI_BRIGHT = 2
MI_NEW = 3
MI_CLOSE = 4


class Setup:
    """The choices of the setup screens (kept for the next game)."""

    def __init__(self):
        self.game = 0  # index in GAME_NAMES
        self.players = 3
        self.short = 0  # 2 players: 0 long, 1 short


def begin(app):
    app.screen = "setup_game"
    refresh(app)


def refresh(app):
    """Draw the current setup screen into the view."""
    st = app.setup
    v = app.view
    s = app.screen
    if s == "setup_game":
        _choice(v, RG.CH_GAME, 3, st.game)
    elif s == "setup_players":
        _choice(v, RG.CH_PLAYERS, 30, st.players - 1)
    elif s == "setup_length":
        _choice(v, RG.CH_LENGTH, 3, st.short)
    elif s == "setup_track":
        v.mode = RG.M_NUMBER
        v.num_kind = RG.N_TRACK
        v.number = app.number


def _choice(v, kind, options, sel):
    v.mode = RG.M_CHOICE
    v.choice = kind
    v.options = options
    v.sel = sel


def track_key(app):
    return T.track_key(app.setup.players, app.setup.short)


def remembered_track(app):
    """The start space last confirmed for this player count, else None."""
    d = app.settings.get("track_start")
    if type(d) is dict:
        t = d.get(track_key(app))
        if type(t) is int and 1 <= t <= T.TRACK_START_MAX:
            return t
    return None


def player_names(app, n):
    """The first n names from the settings if they are valid and unique,
    else "Seat 1".."Seat n"."""
    names = app.settings.get("names")
    if type(names) is list and len(names) >= n:
        names = names[:n]
        ok = True
        for i in range(n):
            if not R.check_name(names[i]) or names.index(names[i]) < i:
                ok = False
        if ok:
            return names
    return ["Seat %d" % (i + 1) for i in range(n)]


def press(app, b, kind):
    s = app.screen
    if s == "menu":
        return _menu(app, b, kind)
    if s == "brightness":
        return _bright(app, b, kind)
    if s == "confirm_new":
        if b == B_OK:
            app.finish()
        else:
            close_menu(app)
        return
    if b == B_MENU and kind == LONG:
        return open_menu(app)
    st = app.setup
    if s == "setup_game":
        if b < 2 and kind == SHORT:
            st.game = b
        elif b == B_MENU:
            st.game = 1 - st.game
        elif b == B_OK:
            app.screen = "setup_players"
        else:
            app.blink_error()
    elif s == "setup_players":
        if 0 < b < 5 and kind == SHORT:
            st.players = b + 1
        elif b == B_MENU:
            st.players = 2 if st.players >= 5 else st.players + 1
        elif b == B_OK:
            if st.game == 1:
                return _start(app)
            if st.players == 2:
                app.screen = "setup_length"
            else:
                st.short = 0
                _to_track(app)
                return
        elif b == B_UNDO:
            app.screen = "setup_game"
        else:
            app.blink_error()
    elif s == "setup_length":
        if b < 2 and kind == SHORT:
            st.short = b
        elif b == B_MENU:
            st.short = 1 - st.short
        elif b == B_OK:
            _to_track(app)
            return
        elif b == B_UNDO:
            app.screen = "setup_players"
        else:
            app.blink_error()
    elif s == "setup_track":
        if b == B_OK:
            if kind == LONG:  # "this is the number on our Market board"
                app.view.unconfirmed = 0
            return _start(app)
        if b == B_UNDO and not app.hist_n:
            app.screen = "setup_length" if st.players == 2 else "setup_players"
        else:
            number_press(app, b, kind, T.TRACK_START_MAX)
            return
    refresh(app)


def _to_track(app):
    app.screen = "setup_track"
    t = remembered_track(app)
    start_number(app, T.TRACK_START_PLACEHOLDER[track_key(app)] if t is None else t, RG.N_TRACK)
    app.view.unconfirmed = 1 if t is None else 0


def _start(app):
    st = app.setup
    n = st.players
    ev = {"ev": "start", "game": GAME_NAMES[st.game], "players": player_names(app, n)}
    if st.game == 0:
        if n == 2:
            ev["length"] = "short" if st.short else "long"
        key = track_key(app)
        track = app.number
        if not app.view.unconfirmed:  # changed or confirmed: the real number
            ev["track_start"] = track
            d = app.settings.get("track_start")
            if type(d) is not dict:
                d = {}
                app.settings["track_start"] = d
            if d.get(key) != track:  # remember it for this player count
                d[key] = track
                app.store.save_settings(app.settings)
    try:
        rec = R.encode_start(ev)
    except EngineError:
        app.blink_error()
        return
    app.new_game(rec)


# -- number entry -----------------------------------------------------------


def start_number(app, value, num_kind):
    app.number = value
    app.hist_n = 0
    v = app.view
    v.unconfirmed = 0
    v.mode = RG.M_NUMBER
    v.num_kind = num_kind
    v.number = value


def number_press(app, b, kind, maxv):
    """Flower k (1-5 in button order) adds k, held subtracts k; UNDO takes
    back the last press. Out of 0..maxv -> error blink."""
    if b < 5:
        d = b + 1
        value = app.number + d if kind == SHORT else app.number - d
        if value < 0 or value > maxv or app.hist_n >= len(app.hist):
            app.blink_error(RG.E_SHORT)
            return
        app.number = value
        app.hist[app.hist_n] = d if kind == SHORT else d | 16
        app.hist_n += 1
    elif b == B_UNDO and app.hist_n:
        app.hist_n -= 1
        h = app.hist[app.hist_n]
        app.number += (h & 15) if h & 16 else -h
    else:
        app.blink_error()
        return
    app.view.number = app.number
    app.view.unconfirmed = 0  # the players are entering their own number


def show_kind(app):
    _choice(app.view, RG.CH_KIND, 3, -1)


# -- the menu -----------------------------------------------------------------


def menu_items(app):
    """Bit per item available where the menu was opened."""
    back = app.menu_from
    if back == "stalk":
        return 31
    if app.game is not None:
        return (1 << MI_BRIGHT) | (1 << MI_NEW) | (1 << MI_CLOSE)
    return (1 << MI_BRIGHT) | (1 << MI_CLOSE)


def open_menu(app):
    app.menu_from = app.screen
    app.screen = "menu"
    items = menu_items(app)
    app.menu_sel = MI_CLOSE
    _choice(app.view, RG.CH_MENU, items, MI_CLOSE)


def close_menu(app):
    app.screen = app.menu_from
    if app.screen.startswith("setup"):
        refresh(app)
    else:
        app._sync()


def _menu(app, b, kind):
    items = app.view.options
    if b < 5 and kind == SHORT:
        if not items & (1 << b):
            app.blink_error()
            return
        _activate(app, b)
    elif b == B_OK:
        _activate(app, app.menu_sel)
    elif b == B_MENU and kind == SHORT:
        sel = app.menu_sel
        for _ in range(5):
            sel = (sel + 1) % 5
            if items & (1 << sel):
                break
        app.menu_sel = sel
        app.view.sel = sel
    else:  # UNDO or a held MENU: close
        close_menu(app)


def _activate(app, item):
    if item == MI_FLUSH or item == MI_CRASH:
        close_menu(app)
        app.apply(R.FLUSH if item == MI_FLUSH else R.CRASH)
    elif item == MI_BRIGHT:
        app.screen = "brightness"
        app.old_brightness = app.view.brightness
        sel = 0
        for i in range(5):
            if BRIGHT_LEVELS[i] <= app.view.brightness:
                sel = i
        _choice(app.view, RG.CH_BRIGHT, 31, sel)
    elif item == MI_NEW:
        app.screen = "confirm_new"
        _choice(app.view, RG.CH_CONFIRM, 31, 0)
    else:
        close_menu(app)


def _bright(app, b, kind):
    v = app.view
    if b < 5 and kind == SHORT:
        v.sel = b
    elif b == B_MENU and kind == SHORT:
        v.sel = (v.sel + 1) % 5
    elif b == B_OK:
        app.push_settings({"brightness": v.brightness})
        close_menu(app)
        return
    else:  # UNDO: keep the old level
        v.brightness = app.old_brightness
        close_menu(app)
        return
    v.brightness = BRIGHT_LEVELS[v.sel]

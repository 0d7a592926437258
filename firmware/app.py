"""The application: gestures -> table events -> flash -> ring.

Why one object with string screen names and if-chains: it runs on a Pico
with ~200 KB of RAM, every press must be handled without allocating (a
heap_lock test proves it for a plant), and the simulator, the serial link
and the tests must drive exactly the code the board runs. So:

* a gesture (button, SHORT/LONG) goes to the handler of the current
  screen; table events are the engine's constant records (R.PLANT ...)
  where they have no fields;
* `Store.apply` judges the record (EngineError -> error blink, nothing
  changes) and makes it durable BEFORE the ring shows it (acknowledged);
* after every change `_sync()` copies the few numbers the ring needs into
  the preallocated View; `step()` renders it and writes only changed pixels.

Gesture map (docs/controls.md is the player's card):
  Stalk Exchange play: OK plant, MENU swap, flower = harvest +1 of it
  (counted, OK confirms), hold a flower = its market value for 2 s, hold
  OK end turn (before two basic actions: "stuck", straight to the upkeep,
  ruling R3), hold MENU menu (flush, crash, brightness, new game), UNDO
  undo. Oh My. Orchids! play: flower k = take k seed cards, OK plant (kind:
  orchid / new flora type / a flora type already planted, points, seed
  cards), hold OK end turn / pass.
A refusal blinks the ring red with a reason code (firmware/ring.py E_*;
the simulator's words for it: firmware/app_words.py).
Setup, menus and number entry live in firmware/setup_flow.py.

API (the simulator, the serial link and the tests use only this):
  App(hw, store, clock=None, link=None); step(); press(button, kind);
  game (engine Game or None), last_game (the one just finished), screen
  (setup_game/_players/_length/_track, stalk, orchids, plant_kind/_points/
  _seeds, portfolio, results, menu, brightness, confirm_new), describe(),
  on_event (fn(game_id, index, record); undo: index = new length, R.UNDO),
  push_settings(dict), new_game(start_record), apply(record) -> bool,
  undo() -> bool, finish(), view (firmware/ring.View), ring, faults (firmware
  faults step() survived since power-up: logged on flash, game reloaded).
"""

try:
    from micropython import const
except ImportError:  # CPython

    def const(x):
        return x


from engine_lite import EngineError
from engine_lite import record as R
from engine_lite import orchids as O
from firmware import ring as RG
from firmware.buttons import Buttons, ButtonEvent, SHORT, LONG, ticks_diff
from firmware.hw import stamp
from firmware import setup_flow as SF
from firmware.setup_flow import B_UNDO, B_OK, B_MENU
from engine_lite.tables import FLOWERS, TOKENS_PER_FLOWER

FRAME_MS = const(20)  # the ring is redrawn every 20 ms (buttons: every step)
HIST_MAX = const(48)  # presses remembered for undo inside an entry screen


class App:
    def __init__(self, hw, store, clock=None, link=None):
        self.hw = hw
        self.store = store
        self.clock = clock if clock is not None else hw.ticks_ms
        self.link = link
        self.on_event = []  # fn(game_id, index, record) after each durable change
        self.buttons = Buttons(hw.pins, self.clock)
        self.ev = ButtonEvent()
        self.view = RG.View()
        self.shown = bytearray(3 * hw.count)
        self._first = True
        self._frame_at = self.clock()
        self._dirty = True  # draw at the next step
        self._direct_setup(hw.strip)
        self.settings = store.settings()
        self.view.brightness = _brightness(self.settings.get("brightness"))
        self.ring = RG.Ring(hw.count, order=self._order, bright=self.view.brightness)
        # entry screens: a number, a kind, the presses that built them
        self.number = 0
        self.hist = bytearray(HIST_MAX)
        self.hist_n = 0
        self.pending = -1  # Stalk harvest being counted: flower or -1
        self.pending_count = 0
        self.counts = bytearray(5)  # portfolio being entered
        self.pf_seat = -1  # whose portfolio `counts` holds
        self.plant_kind = 0  # 0 orchid, 1 flora of a new type, 2 a flora type already planted
        self.plant_points = 0
        self.menu_from = "setup_game"  # where the menu returns to
        self.old_brightness = 48
        self.menu_sel = 0
        self.setup = SF.Setup()
        self.screen = "setup_game"
        self.last_game = None  # the game finished last (its results)
        self.faults = 0  # firmware faults survived since power-up
        self._fault_seen = None  # the last one logged, without its number
        try:
            self._load()
        except Exception as e:
            self.recover(e)

    def _load(self):
        """The game in progress from flash, on its home screen (or setup)."""
        self.pending = -1
        self.pf_seat = -1
        self.hist_n = 0
        self.screen = "stalk"  # any home screen: _sync picks the right one
        self.game = self.store.boot()
        if self.game is None or self.game.rules is None:
            self.game = None
            SF.begin(self)
        else:
            self._sync()

    # -- the loop --------------------------------------------------------

    def step(self):
        """One loop step. It cannot die: an unexpected exception (a bug, a
        failing flash) is caught here and the board recovers (recover)."""
        try:
            self._step()
        except Exception as e:  # not KeyboardInterrupt: Ctrl-C stops the app
            self.recover(e)

    def recover(self, e):
        """Note the fault in the fault log on flash (the host reads it:
        `bloomkeeper doctor`), show the fault pattern, and reload the game
        from flash, which holds every acknowledged event: whatever the
        fault left half-done in RAM is dropped."""
        self.faults += 1
        self.view.fault_at = self.clock()
        self._dirty = True
        try:
            line = _fault_line(self, e)
            seen = line[line.find(" ") :]  # without its number: a fault that repeats
            if seen != self._fault_seen:  # every step is written once, not 200 times a second
                self._fault_seen = seen
                self.store.log_fault(line)
        except Exception:
            pass  # the flash may be what failed: recovering matters more
        try:
            self._load()
        except Exception:  # flash unreadable now: setup (the game stays on flash)
            self.game = None
            SF.begin(self)

    def _step(self):
        b = self.buttons
        ev = self.ev
        b.poll()
        while b.get_into(ev):
            self.press(ev.button, ev.kind)
        # before drawing: a ring that keeps failing must not cut the host off
        # from the fault log
        if self.link is not None:
            self.link.poll()
        # a press or an event shows at once; animations need no more than 50 frames/s
        if self._dirty or ticks_diff(self.clock(), self._frame_at) >= FRAME_MS:
            self.show()

    def press(self, button, kind):
        """Handle one gesture (also the simulator's and the link's entry)."""
        self._dirty = True
        self.view.peek = -1
        s = self.screen
        if s == "stalk":
            self._stalk(button, kind)
        elif s == "orchids":
            self._orchids(button, kind)
        elif s == "portfolio":
            self._portfolio(button, kind)
        elif s == "results":
            self._results(button, kind)
        elif s == "plant_kind" or s == "plant_points" or s == "plant_seeds":
            self._plant(button, kind)
        else:
            SF.press(self, button, kind)

    # -- output ----------------------------------------------------------

    def _direct_setup(self, strip):
        """MicroPython's neopixel keeps a bytearray `buf` in its colour
        ORDER: the ring renders in that order and a frame is one slice copy
        into it (no tuple per pixel, no allocation). Other strips get
        strip[i] = (r, g, b) for changed pixels only."""
        self._sbuf = None
        self._order = None
        buf = getattr(strip, "buf", None)
        order = getattr(strip, "ORDER", None)
        if isinstance(buf, bytearray) and order is not None and len(buf) == 3 * self.hw.count:
            self._sbuf = buf
            self._order = order

    def show(self):
        """Render the view now and push changed pixels to the strip."""
        now = self.clock()
        self._frame_at = now
        self._dirty = False
        buf = self.ring.render(self.view, now)
        shown = self.shown
        strip = self.hw.strip
        first = self._first
        if not first and buf == shown:  # compared in C: most frames end here
            return buf
        self._first = False
        if self._sbuf is not None:
            self._sbuf[:] = buf  # already in the strip's byte order
            shown[:] = buf
        else:
            for i in range(len(buf) // 3):
                j = 3 * i
                r = buf[j]
                g = buf[j + 1]
                b = buf[j + 2]
                if r == shown[j] and g == shown[j + 1] and b == shown[j + 2] and not first:
                    continue
                shown[j] = r
                shown[j + 1] = g
                shown[j + 2] = b
                strip[i] = (r, g, b)
        strip.write()
        return buf

    def blink_error(self, code=RG.E_NOTHING):
        """A refused gesture or event: the ring blinks red (`code` = the
        reason, firmware/ring.py E_*), nothing changes."""
        self.view.error_at = self.clock()
        self.view.error_code = code

    def peek(self, f):
        """A held flower button: the ring shows that flower's value."""
        self.view.peek = f
        self.view.peek_at = self.clock()

    # -- events through the store ------------------------------------------

    def apply(self, rec):
        """Judge + store one record; True if accepted. Refused -> error blink."""
        try:
            self.store.apply(self.game, rec)
        except EngineError as err:
            self.blink_error(RG.refusal(err.code))
            return False
        self._changed(len(self.game.log) - 1, rec)
        return True

    def undo(self):
        """Undo the last event (durably); error blink if there is none."""
        if self.game is None:
            self.blink_error()
            return False
        try:
            self.store.undo(self.game)
        except EngineError as err:
            self.blink_error(RG.refusal(err.code))
            return False
        self._changed(len(self.game.log), R.UNDO)
        return True

    def _changed(self, index, rec):
        self._dirty = True
        for fn in self.on_event:
            fn(self.store.game_id, index, rec)
        self.view.ack_at = self.clock()
        self._sync()

    def new_game(self, start_record):
        """Start a game from a start record (setup flow or the host),
        stamped with the game's identity and start time (hw.stamp)."""
        rec = stamp(start_record, self.hw)
        self.game = self.store.new_game(rec)
        self.pending = -1
        self.pf_seat = -1
        self.screen = "stalk"  # any home screen: _sync picks the right one
        self._changed(0, rec)

    def finish(self):
        """Archive the game (over, or abandoned) and go to setup."""
        if self.game is not None:
            self.store.finish(self.game)
            self.last_game = self.game
        self.game = None
        self.pending = -1
        SF.begin(self)

    # -- settings ----------------------------------------------------------

    def push_settings(self, d):
        """Names / brightness / track starts (from the host or the menu)."""
        s = self.settings
        for k in ("names", "brightness", "track_start"):
            if k in d:
                if k == "track_start" and type(d[k]) is dict and type(s.get(k)) is dict:
                    s[k].update(d[k])
                else:
                    s[k] = d[k]
        self.store.save_settings(s)
        self.view.brightness = _brightness(s.get("brightness"))
        if self.screen.startswith("setup"):
            SF.refresh(self)

    # -- state -> screen and view -------------------------------------------

    def _sync(self):
        """Pick the screen the game is in ("home") and copy it into the
        view, unless an overlay (menu, brightness, confirm, plant entry)
        is open: it keeps the ring until it closes and calls _sync again."""
        g = self.game
        if g is None or g.rules is None:
            return
        st = g.rules
        self.view.n = st.n
        if st.game == R.STALK:
            if not st.over:
                home = "stalk"
            elif st.all_entered():
                home = "results"
            else:
                home = "portfolio"
        else:
            home = "results" if st.over else "orchids"
        s = self.screen
        if s == "menu" or s == "brightness" or s == "confirm_new":
            return
        if home == "orchids" and (s == "plant_kind" or s == "plant_points" or s == "plant_seeds"):
            return
        self.screen = home
        if home == "stalk":
            self._view_stalk()
        elif home == "orchids":
            self._view_orchids()
        elif home == "portfolio":
            self._view_portfolio_seat(st)
        elif st.game == R.STALK:
            self._stalk_end(st)
        else:
            self._orchids_end(g)

    def _view_portfolio_seat(self, st):
        """The first seat whose portfolio is missing; a new seat starts
        from zero counts."""
        v = self.view
        seat = 0
        for s in range(st.n):
            v.entered[s] = st.entered[s]
        for s in range(st.n):
            if not st.entered[s]:
                seat = s
                break
        if seat != self.pf_seat:
            self._clear_counts()
            self.pf_seat = seat
        v.player = seat
        self._view_portfolio()

    def _view_stalk(self):
        st = self.game.rules
        v = self.view
        v.mode = RG.M_STALK
        v.player = st.player
        v.values[:] = st.values  # in C, no allocation: both are 5 bytes
        for s in range(st.n):  # per seat: a state that lost a seat fails here, not later
            v.tokens[s] = st.tokens[s]
            v.flushed[s] = st.flushed[s]
        v.actions = st.actions
        v.upkeep = 1 if st.upkeep else 0
        v.until_crash = st.crash_distance()
        v.bag = st.bag
        v.trigger = st.trigger
        v.pending = self.pending
        v.pending_count = self.pending_count

    def _view_orchids(self):
        st = self.game.rules
        v = self.view
        v.mode = RG.M_ORCHIDS
        v.player = st.player
        for s in range(st.n):
            v.flowers[s] = len(st.flowers[s])
        v.last_round = 1 if st.last_round else 0

    def _view_portfolio(self):
        v = self.view
        v.mode = RG.M_PORTFOLIO
        for f in range(5):
            v.counts[f] = self.counts[f]

    def _final_seats(self, final, names):
        """winner flags and scores per seat from a `final` dict."""
        v = self.view
        for s in range(5):
            v.winner[s] = 0
            v.scores[s] = 0
        for row in final["players"]:
            s = names.index(row["name"])
            v.winner[s] = 1 if row["winner"] else 0
            v.scores[s] = row["score"]

    def _stalk_end(self, st):
        final = st.final()
        v = self.view
        v.mode = RG.M_STALK_END
        for f in range(5):
            v.values[f] = final["values"][FLOWERS[f]]
            v.busted[f] = 1 if FLOWERS[f] in final["busted"] else 0
        self._final_seats(final, st.names)

    def _orchids_end(self, g):
        self.view.mode = RG.M_ORCHIDS_END
        self._final_seats(g.rules.final(), g.rules.names)

    # -- Stalk Exchange play ---------------------------------------------

    def _stalk(self, b, kind):
        if b < 5:
            if kind == LONG:  # take one back from the harvest being counted
                if self.pending == b:
                    self._pending_less()
                else:
                    self.peek(b)
                return
            self._harvest_more(b)
        elif b == B_OK:
            if self.pending >= 0:  # OK confirms the count; held OK also ends the turn
                if self._commit_harvest() and kind == LONG:
                    self.apply(R.END_TURN)
                return
            if kind == SHORT:
                self.apply(R.PLANT)
            elif self.game.rules.turn_done():
                self.apply(R.END_TURN)
            else:  # stuck before two basic actions: straight to the upkeep (ruling R3)
                self.apply(R.STUCK)
        elif b == B_MENU:
            if kind == LONG:
                self._commit_harvest()
                SF.open_menu(self)
            elif self._commit_harvest():
                self.apply(R.SWAP)
        elif b == B_UNDO:
            if self.pending >= 0:
                self._pending_less()
            else:
                self.undo()

    def _harvest_more(self, f):
        """Count one more harvested token of flower f (OK confirms). The
        engine's own turn_done() says whether harvesting may start."""
        st = self.game.rules
        if st.over or not st.turn_done():
            self.blink_error(RG.E_RULE)
            return
        if self.pending != f:
            if not self._commit_harvest():
                return
            self.pending = f
            self.pending_count = 0
        self.pending_count += 1
        self._sync()

    def _pending_less(self):
        self.pending_count -= 1
        if self.pending_count <= 0:
            self.pending = -1
            self.pending_count = 0
        self._sync()

    def _commit_harvest(self):
        """Apply the counted harvest (if any); False if it was refused."""
        if self.pending < 0:
            return True
        rec = bytes((R.OP_HARVEST, self.pending, self.pending_count))
        self.pending = -1
        self.pending_count = 0
        ok = self.apply(rec)
        if not ok:
            self._sync()
        return ok

    # -- portfolio entry (Stalk Exchange, game over) ------------------------

    def _clear_counts(self):
        for f in range(5):
            self.counts[f] = 0
        self.hist_n = 0

    def _portfolio(self, b, kind):
        if b < 5:
            if kind == SHORT:
                if self.counts[b] >= TOKENS_PER_FLOWER or self.hist_n >= HIST_MAX:
                    self.blink_error(RG.E_SHORT)
                    return
                self.counts[b] += 1
                self._push_hist(b)
            else:
                if self.counts[b] == 0 or self.hist_n >= HIST_MAX:
                    self.blink_error(RG.E_SHORT)
                    return
                self.counts[b] -= 1
                self._push_hist(b | 16)
            self._view_portfolio()
        elif b == B_OK:
            seat = self.view.player
            c = self.counts
            rec = bytes((R.OP_PORTFOLIO, seat, 31, c[0], c[1], c[2], c[3], c[4]))
            self.apply(rec)
        elif b == B_UNDO:
            if self.hist_n:
                self.hist_n -= 1
                h = self.hist[self.hist_n]
                if h & 16:
                    self.counts[h & 15] += 1
                else:
                    self.counts[h] -= 1
                self._view_portfolio()
            else:
                self.undo()
        elif b == B_MENU:
            SF.open_menu(self)

    def _push_hist(self, h):
        self.hist[self.hist_n] = h
        self.hist_n += 1

    # -- results -------------------------------------------------------------

    def _results(self, b, kind):
        if b == B_OK:
            self.finish()
        elif b == B_UNDO:
            self.undo()
        elif b == B_MENU:
            SF.open_menu(self)
        elif kind == LONG and self.game.game == R.STALK:
            self.peek(b)  # a held flower: its final value
        else:
            self.blink_error()

    # -- Oh My. Orchids! play ---------------------------------------------

    def _orchids(self, b, kind):
        if b < 5:
            if kind == SHORT:
                self.apply(bytes((R.OP_TAKE, b + 1)))
            else:
                self.blink_error()
        elif b == B_OK:
            if kind == SHORT:
                self.screen = "plant_kind"
                SF.show_kind(self)
            else:
                self.apply(R.END_TURN)
        elif b == B_UNDO:
            self.undo()
        elif b == B_MENU:
            SF.open_menu(self)

    def _plant(self, b, kind):
        """Plant entry: kind (dahlia = a flora of a type this player has not
        planted, daffodil = a type already planted, OK = orchid) -> points
        -> seed cards."""
        s = self.screen
        if s == "plant_kind":
            if b < 2 and kind == SHORT:
                if b and self._flora() is None:
                    self.blink_error(RG.E_RULE)
                    return
                self.plant_kind = b + 1
            elif b == B_OK:
                self.plant_kind = 0
            elif b == B_UNDO or b == B_MENU:
                self.screen = "orchids"
                self._sync()
                return
            else:
                self.blink_error()
                return
            self.screen = "plant_points"
            SF.start_number(self, 0, RG.N_POINTS)
            return
        if b == B_OK:
            if s == "plant_points":
                self.plant_points = self.number
                self.screen = "plant_seeds"
                SF.start_number(self, 0, RG.N_SEEDS)
            else:
                self._sow(self.number)
            return
        if b == B_MENU:
            self.screen = "orchids"
            self._sync()
            return
        if b == B_UNDO and not self.hist_n:
            if s == "plant_points":
                self.screen = "plant_kind"
                SF.show_kind(self)
            else:
                self.screen = "plant_points"
                SF.start_number(self, self.plant_points, RG.N_POINTS)
            return
        SF.number_press(self, b, kind, 99)

    def _flora(self):
        """The first flora name the active player has planted, or None."""
        st = self.game.rules
        for f in st.flowers[st.player]:
            if f[1] == "flora":
                return f[0]
        return None

    def plant_name(self):
        """Generated name that keeps the variety count right (ruling R7):
        every orchid distinct ("Orchid 3"); a flora of a new type gets a
        name this player has not used ("Flora 2"), a flora of a type already
        planted the name of one the player has (variety counts names)."""
        st = self.game.rules
        if self.plant_kind == 2:
            return self._flora()
        if self.plant_kind:
            mine = st.flowers[st.player]
            k = 1
            name = "Flora 1"
            while name in [f[0] for f in mine]:
                k += 1
                name = "Flora %d" % k
            return name
        k = 1
        for row in st.flowers:
            for f in row:
                if f[1] == "orchid":
                    k += 1
        name = "Orchid %d" % k
        while _taken(st.flowers, name):
            k += 1
            name = "Orchid %d" % k
        return name

    def _sow(self, seeds):
        ev = {
            "ev": "plant",
            "name": self.plant_name(),
            "kind": "flora" if self.plant_kind else "orchid",
            "points": self.plant_points,
            "seeds": seeds,
        }
        try:
            rec = self.game.encode(ev)
        except EngineError:
            self.blink_error()
            return
        if self.apply(rec):
            self.screen = "orchids"
            self._sync()

    # -- words (simulator) ---------------------------------------------------

    def describe(self):
        """The state in words, one line each (the simulator shows them).
        The words module is simulator-only: a board bundle may leave it
        out (3.5 KB of .mpy), and then only the screen name is given."""
        try:
            from firmware import app_words
        except ImportError:
            return ["screen: " + self.screen]
        return app_words.describe(self)


def _taken(rows, name):
    try:
        O.clash(rows, name, "orchid", "plant")
    except EngineError:
        return True
    return False


def _fault_line(app, e):
    """One line for the fault log: count, screen, the error and where it
    was raised (file, line and function of the innermost frame)."""
    tb = getattr(e, "__traceback__", None)  # CPython (the simulator)
    if tb is None:  # MicroPython: only as the printed traceback
        import io
        import sys

        out = io.StringIO()
        sys.print_exception(e, out)
        where = out.getvalue().split("File ")[-1].split("\n")[0]
    else:
        while tb.tb_next is not None:
            tb = tb.tb_next
        code = tb.tb_frame.f_code
        where = "%s, line %d, in %s" % (code.co_filename, tb.tb_lineno, code.co_name)
    return "#%d %s %s: %s @ %s" % (app.faults, app.screen, type(e).__name__, str(e)[:60], where[-60:])


def _brightness(b):
    if type(b) is not int or b < 0:
        return 48
    return b if b < 256 else 255

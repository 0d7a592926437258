"""The application: gestures -> the current screen -> table events ->
flash -> ring.

Why this shape: it runs on a Pico with ~200 KB of RAM, every press must be
handled without allocating (a heap_lock test proves it for a plant), and
the simulator, the serial link and the tests must drive exactly the code
the board runs. So:

* a gesture (button, SHORT/LONG) goes to the current screen
  (firmware/screens.py: one object per screen, its gestures and its view);
  table events are the engine's constant records (record.PLANT ...) where
  they have no fields;
* `apply` hands the record to `Store.apply`, which judges it (EngineError
  -> error blink, nothing changes); in a loop step the ring shows the
  event first and the same step then writes it to flash (settle), because
  a flash erase stalls the whole chip for tens of milliseconds and the
  player should not wait on it; only then is it acknowledged (the on_event
  hooks: the link tells the host). Called from outside a step (the
  simulator, the link, tests), an event is durable and acknowledged
  before the call returns; a finish, the same way (settle writes it after
  the redraw; docs/storage.md);
* the screens are a stack (`go`, `push`, `pop`, `home`; docs/architecture.md):
  the game's own screen at the bottom (setup without a game), at most one
  overlay over it (the menu, plant entry: `Screen.overlay`), which keeps
  the ring over events until it closes; then the game's screen shows as
  the game then is;
* after every change the current screen copies the few numbers the ring
  needs into the preallocated View; `step()` renders it and writes only
  changed pixels.

The App owns the game, the flash (store), the link's event hooks and the
screens; screens change the game only through apply/undo/new_game/finish,
and each other only through the stack.
The player's card of gestures is docs/controls.md. A refusal blinks the
ring red with a reason code (firmware/ring.py E_*; the simulator's words
for it: boardkit/app_words.py, which reads this App from outside).

API (the simulator, the serial link and the tests use only this):
  App(hw, store, clock=None, link=None); step(); press(button, kind);
  game (engine Game or None), last_game (the one just finished, until setup
  picks the next title), screen
  (the current screen's name: setup_game/_players/_length/_track, stalk,
  harvest, orchids, plant_kind/_points/_seeds, portfolio, results, menu,
  brightness, confirm_new), current (the screen object), the screens
  (setup, stalk, harvest (the same object as stalk: the harvest being
  counted is a step of play), portfolio, orchids, plant, results, menu),
  on_event (fn(game_id, index, record); undo: index = new
  length, record.UNDO), push_settings(dict), new_game(start_record),
  apply(record) -> bool, undo() -> bool, finish(), view (firmware/ring.View),
  ring, faults (firmware faults step() survived since power-up: logged on
  flash, game reloaded).
"""

from engine_lite import const, EngineError, record
from engine_lite.game import forget_other_rules, rules
from engine_lite.vocab import SETTINGS_KEYS, brightness
from firmware import ring
from firmware.buttons import Buttons, ButtonEvent, ticks_diff
from firmware.hw import stamp
from firmware.screens import Setup, Menu, StalkPlay, PortfolioEntry, OrchidsPlay, PlantEntry, Results

_FRAME_MS = const(20)  # the ring is redrawn every 20 ms (buttons: every step)
_STALK = const(0)  # record.STALK, folded (tests/house/test_folded_consts.py holds it equal)
_E_NOTHING = const(1)  # ring.E_NOTHING, folded too


class App:
    def __init__(self, hw, store, clock=None, link=None):
        self.hw = hw
        self.store = store
        self.clock = clock if clock is not None else hw.ticks_ms
        self.link = link
        self.on_event = []  # fn(game_id, index, record) after each durable change
        self._defer = False  # in a step's gestures: events are written after the ring shows them
        self._ack = None  # the event shown, not yet durable (settle): its record (_ack_gid, _ack_at: game id, index)
        self._fin = False  # a finish queued in a step: settle writes it
        self._rules = -1  # the title whose rules settle loaded last
        self.buttons = getattr(hw, "buttons", Buttons)(hw.pins, self.clock)  # a backend may feed Buttons its own way (firmware/keys_cp.py)
        self.ev = ButtonEvent()
        self.view = ring.View()
        self._first = True
        self._frame_at = self.clock()
        self._dirty = True  # draw at the next step
        self._direct_setup(hw.strip)
        self.settings = store.settings()
        self.view.brightness = brightness(self.settings.get("brightness"))
        self.ring = ring.Ring(hw.count, order=self._order, bright=self.view.brightness)
        self.setup = Setup(self)
        self.menu = Menu(self)
        self.stalk = StalkPlay(self)
        self.harvest = self.stalk  # the harvest being counted is play's (screen "harvest")
        self.portfolio = PortfolioEntry(self)
        self.orchids = OrchidsPlay(self)
        self.plant = PlantEntry(self)
        self.results = Results(self)
        # the stack, preallocated (no list grows in a gesture): the game's
        # screen (or setup) at 0, an overlay over it at 1; _top = the current
        self._stack = [self.setup, None]
        self._top = 0
        self.go(self.setup)
        self.game = None
        self.last_game = None  # the game finished last (its results)
        self.faults = 0  # firmware faults survived since power-up
        self._fault_seen = None  # the last one logged, without its number
        try:
            self._load()
        except Exception as e:
            self.recover(e)

    def _load(self):
        """The game in progress from flash, on its home screen (or setup)."""
        self.harvest.clear()  # a game (re)loaded, started or ended: nothing half-entered
        self.portfolio.clear()
        self.game = self.store.boot()
        if self.game is not None and self.game.table is None:
            self.game = None
        self.home()

    # -- the loop --------------------------------------------------------

    def step(self):
        """One loop step that cannot die: an unexpected exception (a bug, a
        failing flash) is caught here and the board recovers (recover). For
        whoever steps the App from outside (the simulator, the tests); the
        board's own loop guards its turns once (firmware/main.py run)."""
        try:
            self.turn()
        except Exception as e:  # not KeyboardInterrupt: Ctrl-C stops the app
            self.recover(e)

    def recover(self, e):
        """Note the fault in the fault log on flash (the host reads it:
        `bloomkeeper doctor`), show the fault pattern, and reload the game
        from flash, which holds every acknowledged event: whatever the
        fault left half-done in RAM is dropped."""
        self.faults += 1
        self._defer = False
        self._ack = None  # an event not yet on flash is dropped with the rest: never acknowledged
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
            self.home()

    def turn(self):
        """One loop step, unguarded: what it raises reaches the caller."""
        b = self.buttons
        ev = self.ev
        b.poll()
        self._defer = True
        while b.get_into(ev):
            self.press(ev.button, ev.kind)
        self._defer = False
        # before drawing: a ring that keeps failing must not cut the host off
        # from the fault log
        if self.link is not None:
            self.link.poll()
        # a press or an event shows at once; animations need no more than 50 frames/s
        if self._dirty or ticks_diff(self.clock(), self._frame_at) >= _FRAME_MS:
            self.show()
        self.settle()  # then the flash: the player does not wait on it

    def settle(self):
        """Write the events the ring shows to flash, then acknowledge them
        (the on_event hooks), so that the host only ever hears of what a
        power cut cannot take back. An event whose write fails is never
        acknowledged (the loop recovers from flash). One event at most is in
        flight: the Store writes the one before when it judges the next."""
        rec = self._ack
        if rec is not None or self._fin:
            self._ack = None
            self._fin = False
            self.store.flush()  # the event, then a finish (after the ring showed setup)
            if rec is not None:
                for fn in self.on_event:
                    fn(self._ack_gid, self._ack_at, rec)
        elif self.game is None and self.setup.step and self._rules != self.setup.game:
            # setup is past the title's choice: that title's rules load now,
            # after the light, not in the press that starts the game (no
            # local here: with one more, this call's frame would come from
            # the heap, every loop turn)
            self._take_rules()

    def _take_rules(self):
        """Load the rules of the title setup chose and let the other
        title's go (engine_lite/game.py forget_other_rules), with the game
        finished last, whose state holds its title's rules: the board holds
        one title's rules at a time, whatever it played since power-on
        (a Stalk Exchange game, then an Oh My. Orchids! one: 140 KB of
        64-bit heap, as the second alone, not 148)."""
        self._rules = self.setup.game
        self.last_game = None  # its results are done with
        rules(self._rules)
        forget_other_rules(self._rules)

    def press(self, button, kind):
        """Handle one gesture (also the simulator's and the link's entry)."""
        self._dirty = True
        self.view.peek = -1
        self.current.press(button, kind)

    # -- the screen stack ---------------------------------------------------

    def go(self, screen):
        """Make `screen` the current one in the current one's place on the
        stack (a screen's next step, play to a harvest count) and draw it.
        `screen` is its name (the simulator's words and the link's status
        key on it): an attribute, not a property, because one property on
        App makes MicroPython look every attribute store on App up in the
        class first (~2k instructions each on the Unix port, several per
        event)."""
        self._stack[self._top] = screen
        self.current = screen
        self.screen = screen.name
        screen.show()

    def push(self, screen):
        """Open `screen` (an overlay) over the current one: its
        enter(under) starts it from its first step and draws it (go); pop
        gives the one under it back. One slot over the game's screen:
        nothing opens over an overlay (an IndexError, and the loop
        recovers, if a screen ever tried)."""
        under = self.current
        self._top += 1
        screen.enter(under)

    def pop(self):
        """Close the current screen (an overlay): the one under it is
        current again, drawn as it now is: setup as it was left, or the
        game's screen as the game now is (home: events may have moved it
        on while the overlay kept the ring)."""
        self._top -= 1
        if self.game is None:
            self.go(self._stack[0])
        else:
            self.home()

    def home(self):
        """Close every overlay: the screen the game is in alone on the
        stack, drawn: Stalk Exchange play (or the harvest being counted),
        portfolio entry, Orchids play, results; setup from its first step
        when there is no game."""
        self._top = 0
        if self.game is None:
            self.setup.begin()
            return
        t = self.game.table
        if t.game == _STALK:
            if not t.over:
                screen = self.stalk  # or its harvest being counted
            elif t.all_entered():
                screen = self.results
            else:
                screen = self.portfolio
        else:
            screen = self.results if t.over else self.orchids
        self.go(screen)

    # -- output ----------------------------------------------------------

    def _direct_setup(self, strip):
        """MicroPython's neopixel keeps a bytearray `buf` in its colour
        ORDER: the ring renders in that order and a frame is one slice copy
        into it (no tuple per pixel, no allocation). Other strips get
        strip[i] = (r, g, b) for changed pixels only. The strip's own
        buffer then is `shown`, the last frame: one copy a frame, not two;
        other strips get a `shown` of their own."""
        buf = getattr(strip, "buf", None)
        order = getattr(strip, "ORDER", None)
        if isinstance(buf, bytearray) and order is not None and len(buf) == 3 * self.hw.count:
            self.shown = buf
            self._order = order
        else:
            self.shown = bytearray(3 * self.hw.count)
            self._order = None

    def show(self):
        """Render the view now and push changed pixels to the strip."""
        now = self.clock()
        self._frame_at = now
        buf = self.ring.draw(self.view, now, self._dirty)  # changed: its still part drawn again (Ring.prepare)
        self._dirty = False
        shown = self.shown
        first = self._first
        if not first and buf == shown:  # compared in C: most frames end here
            return buf
        if self._order is not None:
            shown[:] = buf  # the strip's own buffer, in its byte order
        else:
            self._pixels(buf, shown, first)
        self._first = False
        self.hw.strip.write()
        return buf

    def _pixels(self, buf, shown, first):
        """strip[i] = (r, g, b) for the changed pixels (strips without a
        byte buffer). Apart from show() because MicroPython puts a call's
        frame on the heap when it has more than 11 slots of locals and
        stack: show() itself must stay under that."""
        strip = self.hw.strip
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

    def blink_error(self, code=_E_NOTHING):
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
            self.store.apply(self.game, rec, self._defer)
        except EngineError as err:
            self.blink_error(ring.refusal(err.code))
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
            self.blink_error(ring.refusal(err.code))
            return False
        self._changed(len(self.game.log), record.UNDO)
        return True

    def _changed(self, index, rec):
        self._dirty = True
        self.settle()  # the event before, if any: on flash since this one was judged
        self._ack = rec
        self._ack_gid = self.store.game_id
        self._ack_at = index
        self.view.ack_at = self.clock()
        # an overlay keeps the ring until it closes (pop: the game's screen
        # as the game then is), plant entry only while the game is in play
        # (Screen.overlay: 0, 1 in play only, 2 always, against over 0/1); a
        # new game takes the ring (new_game)
        if self._stack[self._top].overlay <= self.game.table.over:
            self.home()
        if not self._defer:
            self.settle()

    def new_game(self, start_record):
        """Start a game from a start record (setup or the host), stamped
        with the game's identity and start time (hw.stamp)."""
        rec = stamp(start_record, self.hw)
        self.game = self.store.new_game(rec, self._defer)
        self.harvest.clear()  # a game (re)loaded, started or ended: nothing half-entered
        self.portfolio.clear()
        self._top = 0  # a new game closes any overlay: its own screen follows (_changed)
        self._changed(0, rec)

    def finish(self):
        """Archive the game (over, or abandoned) and go to setup."""
        if self.game is not None:
            self.store.finish(self._defer)  # in a step: written by settle, after the redraw
            self._fin = self._defer
            self.last_game = self.game
        self.game = None
        self.harvest.clear()  # a game (re)loaded, started or ended: nothing half-entered
        self.portfolio.clear()
        self.home()

    # -- settings ----------------------------------------------------------

    def push_settings(self, d):
        """Names / brightness / track starts (from the host, the menu or
        setup): saved on flash; track starts merge per player count."""
        s = self.settings
        for k in SETTINGS_KEYS:
            if k in d:
                if k == "track_start" and type(d[k]) is dict and type(s.get(k)) is dict:
                    s[k].update(d[k])
                else:
                    s[k] = d[k]
        self.store.save_settings(s)
        self.view.brightness = brightness(s.get("brightness"))
        self._dirty = True  # (from the host: no press redraws the view)
        if self.current is self.setup:
            self.setup.show()


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

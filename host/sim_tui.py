"""The terminal simulator behind `make run` / `bloomkeeper sim`.

The board's firmware runs UNCHANGED (firmware/app.py on firmware/hw.py's
simulated backend, with a real directory-backed firmware/storage.Store) and
this module is only its case:

* the LED ring: the App's real pixels (what it last wrote to the strip),
  drawn as a circle of coloured cells;
* the eight buttons: keys press the simulated pins, so the firmware's own
  debounce and long-press logic decides what a press was;
* the game in words (`App.describe()`), the buttons that mean something
  now (firmware/app_words.py `hint`, it follows the phase) and the last
  refusal in words (cleared by the next accepted event);
* the serial link on a pseudo-terminal whose path is shown (when
  firmware/link.py is there), so `bloomkeeper sync --port PATH` works
  against the simulator as against a real board.

Keys (shown on screen):  1-5 the five flower buttons (dahlia, daffodil,
globemaster, snowdrop, tulip); u undo; space or enter ok; m menu. A terminal
cannot tell how long a key is held, so a LONG press is the shifted key
(! @ # $ % for 1-5, U, O, M) or the prefix key l followed by the button key.
A mouse click on a button in the legend is a short press of it.
q or Ctrl-C quits (the flash directory keeps the game for next time).

Time: `App.step()` runs on a ~10 ms timer and the simulated board's clock is
fed from real (monotonic) time; a key holds its pin down for a short press
(80 ms) or past the firmware's long-press threshold.

SimBoard (below) is the UI-free part and is what the tests poke directly
when they need to; SimApp (host/sim_textual.py) is the textual application.
host/sim_link.py builds its headless board from SimBoard too.
"""

import math
import os
import time
import traceback

# Button order everywhere (firmware/buttons.py BUTTONS).
BUTTONS = ("dahlia", "daffodil", "globemaster", "snowdrop", "tulip", "undo", "ok", "menu")
SHORT = 1
LONG = 2

# key character -> (button index, kind)
KEYMAP = {}
for _i, _c in enumerate("12345"):
    KEYMAP[_c] = (_i, SHORT)
for _i, _c in enumerate("!@#$%"):
    KEYMAP[_c] = (_i, LONG)
KEYMAP.update({
    "u": (5, SHORT), "U": (5, LONG),
    " ": (6, SHORT), "o": (6, SHORT), "O": (6, LONG),
    "m": (7, SHORT), "M": (7, LONG),
})
LONG_PREFIX = "l"
ENTER_KEYS = ("enter", "ctrl+m", "ctrl+j")  # ok (short)

LEGEND = (
    ("1", "dahlia"), ("2", "daffodil"), ("3", "globemaster"), ("4", "snowdrop"), ("5", "tulip"),
    ("u", "undo"), ("space/enter", "ok"), ("m", "menu"),
)

# Legend colours for the flower buttons when firmware/ring.py names none.
_FALLBACK_COLOURS = ((220, 40, 60), (250, 210, 40), (150, 70, 210), (235, 235, 235), (255, 120, 170))

SHORT_HOLD_MS = 80    # > the firmware's debounce (20 ms) by a wide margin on a 10 ms timer
GAP_MS = 60           # released time between two queued presses
LONG_EXTRA_MS = 150   # hold this much past the firmware's long-press threshold
DEFAULT_LONG_MS = 600
MAX_QUEUE = 8         # presses waiting for the simulated finger


class SimUnavailable(Exception):
    """A firmware piece the simulator needs is not there (message = one line)."""


def _import(name):
    import importlib

    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as err:
        if err.name and (err.name == name or name.startswith(err.name + ".")):
            raise SimUnavailable("the simulator needs %s, which is not in this tree yet" % name.replace(".", "/") + ".py")
        raise


def real_clock():
    """Milliseconds of real (monotonic) time since this call, as an int."""
    t0 = time.monotonic()
    return lambda: int((time.monotonic() - t0) * 1000)


def set_hw_clock(hw, ms):
    """Feed the simulated board's clock (firmware/hw_sim.py SimHW: `.now`, ms)."""
    if not hasattr(hw, "now") or not hasattr(hw, "press"):
        raise SimUnavailable("firmware/hw.py did not give the simulated backend (no settable clock)")
    hw.now = ms


def display_rgb(rgb, brightness=255):
    """An LED's (r, g, b) as a terminal colour, drawn as the eye sees the LED.

    The ring is brightness-limited (default 48/255): an LED at that level
    still glows brightly, but a screen would draw it nearly black. So the
    brightness setting is divided out first (a full-level colour shows at
    full), then each pixel is lifted by the eye's gamma (1/2.2) on its
    brightest channel, all channels scaled alike: hue kept, dim stays dimmer
    than bright, a faint marker stays visible. (0, 0, 0) stays off."""
    m = max(rgb)
    if m <= 0:
        return (0, 0, 0)
    k = 255.0 / max(1, min(255, brightness))
    top = min(255.0, m * k)
    target = max(48.0, 255 * (top / 255.0) ** (1 / 2.2))
    k = target / m
    return tuple(min(255, int(round(v * k))) for v in rgb)


def _round_half_away(x):
    return int(math.floor(x + 0.5)) if x >= 0 else -int(math.floor(-x + 0.5))


def ring_layout(count):
    """Cell positions (row, col) for `count` pixels on a circle: pixel 0 at the
    top, then clockwise. A pixel is two terminal columns wide (about square),
    so the circle is laid out on a grid of 2-column cells; the radius grows
    until no two pixels share a cell. Returns (rows, cols, positions)."""
    radius = max(3, _round_half_away(count / 4.0))
    while True:
        pos = []
        for i in range(count):
            a = 2 * math.pi * i / count
            pos.append((_round_half_away(radius * (1 - math.cos(a))), 2 * (radius + _round_half_away(radius * math.sin(a)))))
        if len(set(pos)) == count:
            return 2 * radius + 1, 2 * (2 * radius + 1), pos
        radius += 1


class SimBoard:
    """The simulated board without a UI: firmware App + SimHW + Store + link.

    `tick()` is one timer tick: set the board clock from `clock()`, move the
    simulated pins for queued key presses, run `App.step()`. Exceptions from
    the firmware are caught and kept in `last_error` (and `errors`) so a
    firmware bug shows on screen instead of killing the terminal.
    """

    def __init__(self, board="pico", state_dir=None, clock=None, link=True):
        self.board = board
        self.state_dir = state_dir
        self.clock = clock or real_clock()
        self.want_link = link
        self.hw = self.store = self.app = self.link = None
        self.link_path = None
        self.link_note = None
        self.last_error = None
        self.errors = 0        # firmware exceptions caught
        self.blinks = 0        # error blinks seen on the ring
        self.refusal = None
        self.error_is_refusal = False  # last_error came from a refused press
        self.label = board
        self.queue = []        # pending (button, kind)
        self.held = None       # (button, kind, pressed_at_ms, hold_ms) while a pin is down
        self.released_at = None
        self.last_step = None  # board time of the last App.step()
        self.history = []      # last presses, for the screen
        self._pty = None

    # -- start / stop ------------------------------------------------------
    def start(self):
        """Build the board as firmware/main.py does, on the simulated backend."""
        hw_mod = _import("firmware.hw")
        storage = _import("firmware.storage")
        app_mod = _import("firmware.app")
        self.hw = hw_mod.make_hw(self.board, backend="sim")
        self.label = _board_label(self.board)
        set_hw_clock(self.hw, self.clock())
        store_cls = _observed_store(storage.Store, self)
        from host import flashdir

        if self.state_dir:
            self.hw.uid = flashdir.take(self.state_dir)  # one simulator per flash (UserError if in use)
            self.store = store_cls(root=self.state_dir)
        else:
            memfs = _import("firmware.memfs")
            self.hw.uid = flashdir.new_id()  # a fresh flash in RAM: a new board every time
            self.store = store_cls(fs=memfs.MemFS())
        link_mod = self._open_link() if self.want_link else None
        self.app = app_mod.App(self.hw, self.store, link=self.link)
        self.app.on_event.append(self._accepted)
        if self.link is not None:
            try:
                board = link_mod.AppBoard(self.app, self.store, board_id="sim-" + self.board, fw=_fw_version(), uid=self.hw.uid)
                board.remote_buttons = True  # simulator only: the host may press buttons over the link
                self.link.attach(board)
            except Exception as err:  # a broken link must not stop the board
                self.link.port = None  # Link.poll() does nothing without a port
                self.link_note = "link failed: %s" % _one_line(err)
                self.link_path = None
                self._close_pty()
        return self

    def _open_link(self):
        """The board's serial link (firmware/link.py, device side) on a pty."""
        try:
            link_mod = _import("firmware.link")
        except SimUnavailable as err:
            self.link_note = str(err)
            return None
        try:
            self._pty = PtyPort()
            self.link = link_mod.Link(None, self._pty, clock=self.clock)
            self.link_path = self._pty.path
        except Exception as err:
            self._close_pty()
            self.link = None
            self.link_note = "link failed: %s" % _one_line(err)
            return None
        return link_mod

    def _close_pty(self):
        if self._pty is not None:
            self._pty.close()
            self._pty = None

    def close(self):
        """Stop serving: the pty goes, and the flash directory is free again."""
        self._close_pty()
        if self.state_dir:
            from host import flashdir

            flashdir.release(self.state_dir)

    # -- running -----------------------------------------------------------
    def now(self):
        return self.clock()

    def _buttons_ms(self, name, default):
        for holder in (getattr(self.app, "buttons", None), self.app):
            v = getattr(holder, name, None)
            if isinstance(v, int) and v > 0:
                return v
        return default

    def hold_ms(self, kind):
        """How long a key holds its pin down: well past the firmware's
        debounce for a short press, past its long-press threshold for a long one."""
        debounce = self._buttons_ms("debounce_ms", 20)
        if kind == LONG:
            return self._buttons_ms("long_ms", DEFAULT_LONG_MS) + LONG_EXTRA_MS
        return max(SHORT_HOLD_MS, 2 * debounce + 40)

    def gap_ms(self):
        return max(GAP_MS, 2 * self._buttons_ms("debounce_ms", 20) + 20)

    def press(self, button, kind=SHORT):
        """Queue a press of button 0..7 (SHORT or LONG). A held-down key's
        auto-repeat cannot pile up more than MAX_QUEUE presses."""
        if len(self.queue) < MAX_QUEUE:
            self.queue.append((button, kind))

    def busy(self):
        return bool(self.queue) or self.held is not None

    def tick(self):
        now = self.clock()
        set_hw_clock(self.hw, now)
        self._drive_pins(now)
        if self._pty is not None:
            self._pty.flush()
        view = getattr(self.app, "view", None)
        blink = getattr(view, "error_at", None)
        screen = self.screen_name()
        self.refusal = None
        faults = getattr(self.app, "faults", 0)
        try:
            self.app.step()  # polls the link too (App was given it); recovers from faults itself
        except Exception as err:  # firmware without App.recover
            self.errors += 1
            self.error_is_refusal = False
            self.last_error = "firmware error: %s  [%s]" % (_one_line(err), time.strftime("%H:%M:%S"))
            self._log_traceback()
        else:
            if getattr(self.app, "faults", 0) != faults:
                self._note_fault()
            elif view is not None and getattr(view, "error_at", None) != blink:
                self._note_blink(screen)
        self.last_step = now
        return now

    def _accepted(self, game_id, index, rec):
        """An event was accepted: an earlier refusal is no longer news."""
        if self.error_is_refusal:
            self.last_error = None
            self.error_is_refusal = False

    def note_refused(self, err):
        """Called by the observed Store: the engine refused a record."""
        code = getattr(err, "code", None)
        self.refusal = "%s (%s)" % (err, code) if code else str(err)

    def _note_fault(self):
        """The firmware survived a fault (App.recover): say what its fault log says."""
        self.errors += 1
        try:
            line = self.store.faults().rstrip("\n").split("\n")[-1]
        except Exception as err:
            line = "(fault log unreadable: %s)" % _one_line(err)
        self.last_error = "firmware fault, board reloaded its game from flash: %s  [%s]" % (line, time.strftime("%H:%M:%S"))

    def _note_blink(self, where):
        """The ring just blinked its error: say why, in words (the engine's
        message, or the app's own reason from its blink code)."""
        what = self.history[-1] if self.history else "a press"
        code = getattr(self.app.view, "error_code", 0)
        words = _words()
        if self.refusal:
            blinks = "" if words is None else " (%s)" % words.blinks(code)
            why = "refused by the rules: %s%s" % (self.refusal, blinks)
        elif words is not None:
            why = words.refusal(self.app, code)
        else:
            why = "that button does nothing here"
        self.blinks += 1
        self.error_is_refusal = True
        self.last_error = "%s: %s  [%s]" % (what, why, time.strftime("%H:%M:%S"))

    def _drive_pins(self, now):
        """Move the simulated pins for the queued presses. Timing is judged
        by what the firmware has SEEN (the time of the last step), so a
        stalled terminal can stretch a press but never lose one."""
        seen = self.last_step
        if self.held is not None:
            b, kind, t0, need = self.held
            if seen is not None and seen - t0 >= need:
                self.hw.release(b)
                self.held = None
                self.released_at = now
        if self.held is None and self.queue:
            if self.released_at is None or (seen is not None and seen - self.released_at >= self.gap_ms()):
                b, kind = self.queue.pop(0)
                self.hw.press(b)
                self.held = (b, kind, now, self.hold_ms(kind))
                self.history.append("%s %s" % (BUTTONS[b], "long" if kind == LONG else "short"))
                del self.history[:-8]

    def _log_traceback(self):
        """The full traceback of a firmware exception goes to a file OUTSIDE
        the flash directory (the Store owns every name in there)."""
        try:
            import platformdirs

            d = platformdirs.user_log_dir("bloomkeeper", appauthor=False)
            os.makedirs(d, exist_ok=True)
            path = os.path.join(d, "sim-errors.txt")
            with open(path, "a") as f:
                f.write(time.strftime("%Y-%m-%d %H:%M:%S ") + traceback.format_exc() + "\n")
            self.last_error += " (traceback in %s)" % path
        except Exception:
            pass

    # -- what the screen shows --------------------------------------------
    def brightness(self):
        """The ring's brightness setting (0-255) the App renders with."""
        b = getattr(getattr(self.app, "view", None), "brightness", 255)
        return b if isinstance(b, int) and b > 0 else 255

    def pixels(self):
        """The App's real pixels: what it last wrote to the simulated strip."""
        return [tuple(p) for p in self.hw.pixels]

    def describe(self):
        try:
            return [str(line) for line in self.app.describe()]
        except Exception as err:
            return ["(describe() failed: %s)" % _one_line(err)]

    def hint(self):
        """The buttons that mean something now, in words ("" if unknown)."""
        words = _words()
        try:
            return "" if words is None else str(words.hint(self.app))
        except Exception as err:
            return "(hint() failed: %s)" % _one_line(err)

    def ring_label(self):
        """A few words for the middle of the drawn ring."""
        words = _words()
        try:
            return "" if words is None else str(words.label(self.app))
        except Exception:
            return ""

    def screen_name(self):
        return str(getattr(self.app, "screen", "") or "")

    def error_text(self):
        """The last error: a refused gesture or event, or a firmware exception."""
        return self.last_error

    def pressed(self):
        return None if self.held is None else self.held[0]


def _words():
    """firmware/app_words.py (simulator-only words), or None without it."""
    try:
        from firmware import app_words

        return app_words
    except ImportError:
        return None


def _observed_store(base, sim):
    """The real Store, watched: an engine refusal is noted for the screen's
    "last error" line (the App turns it into an error blink and says no
    more), then raised on unchanged. Nothing else differs from the board."""

    class ObservedStore(base):
        def apply(self, game, rec):
            try:
                return base.apply(self, game, rec)
            except Exception as err:
                sim.note_refused(err)
                raise

        def undo(self, game):
            try:
                return base.undo(self, game)
            except Exception as err:
                sim.note_refused(err)
                raise

    return ObservedStore


class PtyPort:
    """The simulated board's USB serial: the master side of a pseudo-terminal.
    `path` (the slave) is what a host opens (`bloomkeeper sync --port PATH`).
    Non-blocking `read(n)` -> bytes or None, `write(data)`, as firmware/link.py
    wants. The slave stays open here too, so a host that disconnects and comes
    back finds the same port (and reads on the master never see EIO)."""

    def __init__(self):
        import tty

        self.master, self.slave = os.openpty()
        tty.setraw(self.slave)  # bytes pass unchanged: no echo, no CR/LF mapping
        os.set_blocking(self.master, False)
        self.path = os.ttyname(self.slave)
        self.pending = bytearray()  # what the host has not read yet (kept bounded)

    def read(self, n):
        try:
            data = os.read(self.master, n)
        except (BlockingIOError, InterruptedError):
            return None
        except OSError:
            return None
        return data or None

    def write(self, data):
        self.pending.extend(data)
        self.flush()

    def flush(self):
        while self.pending:
            try:
                k = os.write(self.master, self.pending)
            except (BlockingIOError, InterruptedError):
                break
            except OSError:
                del self.pending[:]
                break
            del self.pending[:k]
        if len(self.pending) > 1 << 20:  # nobody reads: drop, as a full USB buffer would
            del self.pending[:]

    def close(self):
        for fd in (self.master, self.slave):
            try:
                os.close(fd)
            except OSError:
                pass


def _fw_version():
    try:
        import firmware

        return str(getattr(firmware, "VERSION", None) or getattr(firmware, "__version__", None) or "sim")
    except Exception:
        return "sim"


def _short_path(path):
    home = os.path.expanduser("~")
    if home not in ("", "/") and (path == home or path.startswith(home + os.sep)):
        return "~" + path[len(home):]
    return path


def _one_line(err):
    text = " ".join(str(err).split())
    return "%s: %s" % (type(err).__name__, text) if text else type(err).__name__


def _board_label(board):
    from host.cmd_sim import _PINMAP
    import json

    try:
        with open(_PINMAP) as f:
            return json.load(f)["boards"][board].get("label", board)
    except (OSError, ValueError, KeyError, AttributeError):
        return board


def button_colours():
    """Legend colours of the five flower buttons: the ring's own (firmware/ring.py FLOWER_RGB)."""
    try:
        import firmware.ring as ring

        c = bytes(ring.FLOWER_RGB)
        if len(c) >= 15:
            return tuple(tuple(c[3 * k:3 * k + 3]) for k in range(5))
    except Exception:
        pass
    return _FALLBACK_COLOURS


# The textual application lives in host/sim_textual.py (imported on first use,
# so the headless modes never load textual).
_UI_NAMES = ("SimApp", "RingView", "ButtonsView")


def __getattr__(name):
    if name in _UI_NAMES:
        from host import sim_textual

        return getattr(sim_textual, name)
    raise AttributeError("module %r has no attribute %r" % (__name__, name))


def run(board="pico", state_dir=None, runtime="cpython"):
    """Run the interactive simulator until q / Ctrl-C. Returns the exit status.
    A firmware piece that is missing or fails to boot is one line (UserError)
    before the screen is taken over. runtime "micropython": the firmware
    bundle in the MicroPython Unix port (host/sim_mpy.py)."""
    import sys

    from host.errors import UserError

    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise UserError("sim needs a terminal (for scripts: sim --headless --buttons FILE or --record FILE)")
    if runtime == "micropython":
        from host.sim_mpy import MpySimBoard, micropython_command

        micropython_command()  # not installed: one line, before anything starts
        sim = MpySimBoard(board=board, state_dir=state_dir)
    else:
        sim = SimBoard(board=board, state_dir=state_dir)
    try:
        sim.start()
    except UserError:
        sim.close()
        raise
    except SimUnavailable as err:
        sim.close()
        raise UserError(str(err))
    except Exception as err:
        sim.close()
        raise UserError("the firmware failed to start: %s" % _one_line(err))
    from host.sim_textual import SimApp

    app = SimApp(sim=sim)
    try:
        app.run()
    finally:
        sim.close()
    if app.startup_error:
        raise UserError(app.startup_error)
    return 0

"""The simulated board without a UI (SimBoard): the firmware's App on
firmware/hw.py's simulated backend, a real firmware/storage.Store (on a flash
directory, host/board_sim/flashdir.py, or in RAM) and the device side of the
serial link on a pseudo-terminal (PtyPort), so `bloomkeeper sync --port PATH`
works against it as against a real board.

Time: `tick()` runs `App.step()` with the board's clock fed from `clock()`
(real monotonic time unless a test gives its own); a queued key press holds
its simulated pin down for a short press (80 ms: at least a button script's
short press, boardkit/script.py SHORT_HOLD_MS, and twice the debounce plus
40 ms) or past the firmware's long-press threshold, so the firmware's own
debounce and long-press logic decides what a press was.

The front-ends build on it: the terminal simulator (tui.py, textual_app.py),
the headless record server (serve_record.py), the dashboard's simulated board
and the tests; micropython_board.py puts the firmware's .mpy bundle behind the
same class.
"""

import os
import time
import traceback

from engine_lite.vocab import BUTTONS, LONG_PRESS_MS
from firmware.buttons import LONG, SHORT
# A press's timings, defined once for every simulated finger: a key here holds
# its pin at least as long as a button script's short press, and waits as long
# between two presses (hold_ms and gap_ms stretch both past the debounce).
from boardkit.script import GAP_MS, SHORT_HOLD_MS

LONG_EXTRA_MS = 150   # hold this much past the firmware's long-press threshold
DEFAULT_LONG_MS = LONG_PRESS_MS
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
    """Feed the simulated board's clock (boardkit/hw_sim.py SimHW: `.now`, ms)."""
    if not hasattr(hw, "now") or not hasattr(hw, "press"):
        raise SimUnavailable("firmware/hw.py did not give the simulated backend (no settable clock)")
    hw.now = ms



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
        self.uid = None        # the board id its hello gives (published for `--port auto` with link_path)
        self.link_note = None
        self.last_error = None
        self.errors = 0        # firmware exceptions caught
        self.blinks = 0        # error blinks seen on the ring
        self.refusal = None
        self.refusal_code = None  # the engine's stable code of the last refusal (not shown)
        self.error_is_refusal = False  # last_error came from a refused press
        self.label = board
        self.queue = []        # pending (button, kind)
        self.held = None       # (button, kind, pressed_at_ms, hold_ms) while a pin is down
        self.released_at = None
        self.last_step = None  # board time of the last App.step()
        self.history = []      # last presses, for the screen
        self._pty = None
        self.page_url = None   # the table page (a board with WiFi: host/board_sim/page.py)
        self.page_note = None  # its last refused request, in words
        self.page_echo = False  # also write those to stderr (headless)
        self._page = None

    # -- start / stop ------------------------------------------------------
    def start(self):
        """Build the board as firmware/main.py does, on the simulated backend."""
        hw_mod = _import("firmware.hw")
        storage = _import("firmware.storage")
        app_mod = _import("firmware.app")
        self.hw = hw_mod.make_hw(self.board, backend=_import("boardkit.hw_sim").SimHW)
        self.label = board_label(self.board)
        set_hw_clock(self.hw, self.clock())
        store_cls = _observed_store(storage.Store, self)
        from host.board_sim import flashdir

        if self.state_dir:
            self.hw.uid = flashdir.take(self.state_dir)  # one simulator per flash (UserError if in use)
            self.store = store_cls(root=flashdir.flash_root(self.state_dir))
        else:
            memfs = _import("boardkit.memfs")
            self.hw.uid = flashdir.new_id()  # a fresh flash in RAM: a new board every time
            self.store = store_cls(fs=memfs.MemFS())
        self.uid = self.hw.uid
        link_mod = self._open_link() if self.want_link else None
        self.app = app_mod.App(self.hw, self.store, link=self.link)
        self.app.on_event.append(self._accepted)
        if self.link is not None:
            try:
                board = link_mod.AppBoard(self.app, self.store, board_id="sim-" + self.board, fw=fw_version(), uid=self.hw.uid)
                board.remote_buttons = True  # simulator only: the host may press buttons over the link
                self.link.attach(board)
            except Exception as err:  # a broken link must not stop the board
                self.link.port = None  # Link.poll() does nothing without a port
                self.link_note = "link failed: %s" % one_line(err)
                self.link_path = None
                self._close_pty()
        self._open_page()
        return self

    def _open_page(self):
        """The board's table server beside it, if the board has WiFi."""
        from host.board_sim import page

        if not page.has_wifi(self.board):
            return
        from firmware.table_server import TableServer

        port = page.free_port()
        self._page = TableServer(self.app, "127.0.0.1", port, log=self.note_page, board=self.label)
        self.page_url = page.url(port)

    def note_page(self, line):
        self.page_note = line
        if self.page_echo:
            from host.board_sim import page

            page.echo(line)

    def _open_link(self):
        """The board's serial link (firmware/link.py, device side) on a pty."""
        try:
            link_mod = _import("firmware.link")
        except SimUnavailable as err:
            self.link_note = str(err)
            return None
        try:
            self._pty = PtyPort()
            self.link = link_mod.Link(None, self._pty)
            self.link_path = self._pty.path
        except Exception as err:
            self._close_pty()
            self.link = None
            self.link_note = "link failed: %s" % one_line(err)
            return None
        return link_mod

    def _close_pty(self):
        if self._pty is not None:
            self._pty.close()
            self._pty = None

    def close(self):
        """Stop serving: the pty and the page go, and the flash directory is free again."""
        self._close_pty()
        if self._page is not None:
            self._page.close()
            self._page = None
        if self.state_dir:
            from host.board_sim import flashdir

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
            if self._page is not None:
                self._page.poll()  # after the step, as on the board
        except Exception as err:  # firmware without App.recover
            self.errors += 1
            self.error_is_refusal = False
            self.last_error = "firmware error: %s  [%s]" % (one_line(err), time.strftime("%H:%M:%S"))
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
        """Called by the observed Store: the engine refused a record. The
        player's line says why in the table's words (app_words); the stable
        code is kept in `refusal_code` (for logs and tests), not shown."""
        words = _words()
        self.refusal_code = getattr(err, "code", None)
        try:
            self.refusal = str(words.player_refusal(self.app, err)) if words is not None else str(err)
        except Exception:  # the words could not be made (an event from the link, not the buttons): the engine's own
            self.refusal = str(err)

    def _note_fault(self):
        """The firmware survived a fault (App.recover): say what its fault log says."""
        self.errors += 1
        try:
            line = self.store.faults().rstrip("\n").split("\n")[-1]
        except Exception as err:
            line = "(fault log unreadable: %s)" % one_line(err)
        self.last_error = "firmware fault, board reloaded its game from flash: %s  [%s]" % (line, time.strftime("%H:%M:%S"))

    def _note_blink(self, where):
        """The ring just blinked its error: say why, in words (the engine's
        message, or the app's own reason from its blink code)."""
        what = self.history[-1] if self.history else "a press"
        code = getattr(self.app.view, "error_code", 0)
        words = _words()
        if self.refusal:
            blinks = "" if words is None else " (%s)" % words.blinks(code)
            why = "%s%s" % (self.refusal, blinks)
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
        """The state in words (boardkit/app_words.py, which reads the App
        from outside: the firmware holds no words of its own)."""
        words = _words()
        try:
            if words is None:
                return ["screen: " + self.screen_name()]
            return [str(line) for line in words.describe(self.app)]
        except Exception as err:
            return ["(describe() failed: %s)" % one_line(err)]

    def hint(self):
        """The buttons that mean something now, in words ("" if unknown)."""
        words = _words()
        try:
            return "" if words is None else str(words.hint(self.app))
        except Exception as err:
            return "(hint() failed: %s)" % one_line(err)

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
    """boardkit/app_words.py (simulator-only words), or None without it."""
    try:
        from boardkit import app_words

        return app_words
    except ImportError:
        return None


def _observed_store(base, sim):
    """The real Store, watched: an engine refusal is noted for the screen's
    "last error" line (the App turns it into an error blink and says no
    more), then raised on unchanged. Nothing else differs from the board."""

    class ObservedStore(base):
        def apply(self, game, rec, later=False):
            try:
                return base.apply(self, game, rec, later)
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


def fw_version():
    """The simulated board runs this host's own firmware sources: its hello
    names this host's version (a real board's bundle is stamped with the same).
    Shared with micropython_board.py, whose guest says the same hello."""
    from host import __version__

    return __version__


def one_line(err):
    """An exception as one line ("Type: message"): the simulator's screen and
    its link note have one line for it, and a firmware message may span several."""
    text = " ".join(str(err).split())
    return "%s: %s" % (type(err).__name__, text) if text else type(err).__name__


# The boards the simulator can be (their pins and labels), beside the firmware
# that reads the same file (firmware/hw.py pinmap_path).
PINMAP = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "firmware", "pinmap.json")


def board_names():
    """Boards named in firmware/pinmap.json (None when the file is not there yet)."""
    import json

    try:
        with open(PINMAP) as f:
            return sorted(json.load(f)["boards"])
    except (OSError, ValueError, KeyError):
        return None


def board_label(board):
    """The board's name for people (pinmap.json "label"), else its key."""
    import json

    try:
        with open(PINMAP) as f:
            return json.load(f)["boards"][board].get("label", board)
    except (OSError, ValueError, KeyError, AttributeError):
        return board

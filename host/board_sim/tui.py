"""The terminal simulator behind `make run` / `bloomkeeper sim`.

The board's firmware runs UNCHANGED (firmware/app.py on firmware/hw.py's
simulated backend, with a real directory-backed firmware/storage.Store) and
this module is only its case:

* the LED ring: the App's real pixels (what it last wrote to the strip),
  drawn as a circle of coloured cells;
* the eight buttons: keys press the simulated pins, so the firmware's own
  debounce and long-press logic decides what a press was;
* the game in words (boardkit/app_words.py `describe`), the buttons that mean something
  now (boardkit/app_words.py `hint`, it follows the phase) and the last
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

SimBoard (host/board_sim/board.py) is the UI-free board this module draws;
SimApp (host/board_sim/textual_app.py) is the textual application.
"""

import math
import os

from host.board_sim.board import LONG, SHORT, SimBoard, SimUnavailable, _one_line

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


def display_rgb(rgb, brightness=255):
    """An LED's (r, g, b) as a terminal colour, drawn as the eye sees the LED.

    The ring is brightness-limited (default engine_lite.vocab.DEFAULT_BRIGHTNESS, 48/255): an LED at that level
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


def _short_path(path):
    home = os.path.expanduser("~")
    if home not in ("", "/") and (path == home or path.startswith(home + os.sep)):
        return "~" + path[len(home):]
    return path


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


# The textual application lives in host/board_sim/textual_app.py (imported on first use,
# so the headless modes never load textual).
_UI_NAMES = ("SimApp", "RingView", "ButtonsView")


def __getattr__(name):
    if name in _UI_NAMES:
        from host.board_sim import textual_app

        return getattr(textual_app, name)
    raise AttributeError("module %r has no attribute %r" % (__name__, name))


def run(board="pico", state_dir=None, runtime="cpython"):
    """Run the interactive simulator until q / Ctrl-C. Returns the exit status.
    A firmware piece that is missing or fails to boot is one line (UserError)
    before the screen is taken over. runtime "micropython": the firmware
    bundle in the MicroPython Unix port (host/board_sim/micropython_board.py)."""
    import sys

    from host.errors import UserError

    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise UserError("sim needs a terminal (for scripts: sim --headless --buttons FILE or --record FILE)")
    if runtime == "micropython":
        from host.board_sim.micropython_board import MpySimBoard, micropython_command

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
    from host.board_sim.textual_app import SimApp

    from host import runtime as rundir

    app = SimApp(sim=sim)
    published = rundir.publish_sim(sim.link_path) if sim.link_path else None  # `--port auto` finds it
    try:
        app.run()
    finally:
        if published:
            rundir.unpublish(published)
        sim.close()
    if app.startup_error:
        raise UserError(app.startup_error)
    return 0

"""The terminal simulator's face, without textual: which key presses which
button, the legend, the legend's colours, how a pixel is drawn and where
each pixel of the ring sits on the screen.

Why a module of its own: the textual application (textual_app.py) draws with
it, tui.py starts that application, and the dashboard lifts the ring's colours
with the same display_rgb; so nothing here imports either of them, and a
headless mode or the dashboard never loads textual.

Keys: 1-5 the five flower buttons, in engine_lite.vocab's order (the
legend names them from there); u undo; space or enter ok; m menu. A terminal
cannot tell how long a key is held, so a LONG press is the shifted key
(! @ # $ % for 1-5, U, O, M) or the prefix key l followed by the button key.
"""

import math
import os

from engine_lite.vocab import B_MENU, B_OK, B_UNDO, BUTTONS, FLOWERS

from host.board_sim.board import LONG, SHORT

FLOWER_KEYS = "12345"  # the flower buttons, in FLOWERS order
FLOWER_LONG_KEYS = "!@#$%"  # the same keys shifted (a US layout; the prefix key l works on any)

# key character -> (button index, kind)
KEYMAP = {FLOWER_KEYS[i]: (i, SHORT) for i in range(len(FLOWERS))}
KEYMAP.update({FLOWER_LONG_KEYS[i]: (i, LONG) for i in range(len(FLOWERS))})
KEYMAP.update({
    "u": (B_UNDO, SHORT), "U": (B_UNDO, LONG),
    " ": (B_OK, SHORT), "o": (B_OK, SHORT), "O": (B_OK, LONG),
    "m": (B_MENU, SHORT), "M": (B_MENU, LONG),
})
LONG_PREFIX = "l"
ENTER_KEYS = ("enter", "ctrl+m", "ctrl+j")  # ok (short)

# (key, button name) of the eight buttons, in button order
LEGEND = tuple((FLOWER_KEYS[i], f) for i, f in enumerate(FLOWERS)) + (
    ("u", BUTTONS[B_UNDO]), ("space/enter", BUTTONS[B_OK]), ("m", BUTTONS[B_MENU]),
)

# Legend colours for the flower buttons when firmware/ring.py names none.
FALLBACK_COLOURS = ((220, 40, 60), (250, 210, 40), (150, 70, 210), (235, 235, 235), (255, 120, 170))


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


def short_path(path):
    """A path under the home directory as ~/...: the header line is short."""
    home = os.path.expanduser("~")
    if home not in ("", "/") and (path == home or path.startswith(home + os.sep)):
        return "~" + path[len(home):]
    return path


def fit_path(path, room):
    """`path` in at most `room` characters: its last components kept whole
    behind "..." (the flash directory's own name says most), the very tail
    when even one component is too long."""
    if len(path) <= room:
        return path
    tail = path.rstrip(os.sep)
    while os.sep in tail and len("..." + tail) > room:
        tail = tail.split(os.sep, 1)[1]
    shown = "..." + (os.sep if not tail.startswith(os.sep) else "") + tail
    return shown if len(shown) <= room else "..." + path[-max(room - 3, 1):]


def header(link, board_id, brightness, flash, label, width):
    """The simulator's one-line header in `width` characters. The board id
    (what `sync` and the plays database name the board by) and the link are
    never cut: the flash directory is shortened to the room left, and the
    board's name, last, is what an ellipsis takes."""
    head = "%s  board id %s  brightness %d" % (link, board_id, brightness)
    room = width - len(head) - len("  flash: ")
    if flash is not None and room >= 8:
        head += "  flash: " + fit_path(flash, room)
    return head + "  " + label


def button_colours():
    """Legend colours of the five flower buttons: the ring's own (firmware/ring.py FLOWER_RGB)."""
    try:
        import firmware.ring as ring

        c = bytes(ring.FLOWER_RGB)
        if len(c) >= 15:
            return tuple(tuple(c[3 * k:3 * k + 3]) for k in range(5))
    except Exception:
        pass
    return FALLBACK_COLOURS

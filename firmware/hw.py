"""The hardware layer: one interface, three backends.

`make_hw()` returns an object with `.pins` (8 objects, `.value()` -> 1
released / 0 pressed, pull-ups, in firmware.buttons.BUTTONS order),
`.strip` (`strip[i] = (r, g, b)`, `strip.write()`), `.count` and
`ticks_ms()`. The application above it is identical on every board; only
this file knows which backend exists. Backends import machine/board/time
inside their constructors, never at module import, so any of them can be
imported (and type-checked) anywhere. Pin names come from pinmap.json.
"""

import sys

BACKENDS = ("micropython", "circuitpython", "sim")
DEFAULT_BOARD = {"micropython": "pico", "circuitpython": "feather_rp2040", "sim": "pico"}


def pinmap_path():
    f = globals().get("__file__") or "firmware/hw.py"
    i = f.rfind("/")
    return (f[:i] if i >= 0 else ".") + "/pinmap.json"


def board_spec(board_name):
    """The pinmap.json entry of one board (KeyError names an unknown board)."""
    import json

    with open(pinmap_path()) as f:
        boards = json.load(f)["boards"]
    return boards[board_name]


def button_pins(spec):
    """The spec's button pin names in BUTTONS order."""
    from firmware.buttons import BUTTONS

    return [spec["buttons"][b] for b in BUTTONS]


def pick_backend(board_name=None, backend="auto"):
    """Which backend `make_hw` will use: the running interpreter decides;
    CPython runs a Blinka board on the circuitpython backend, anything else
    on the simulator."""
    if backend != "auto":
        if backend not in BACKENDS:
            raise ValueError("unknown backend %r" % (backend,))
        return backend
    impl = sys.implementation.name
    if impl in ("micropython", "circuitpython"):
        return impl
    if board_name is not None and board_spec(board_name)["runtime"] == "blinka":
        return "circuitpython"
    return "sim"


def make_hw(board_name=None, backend="auto", spec=None):
    """The hardware of `board_name` (a pinmap.json key) on `backend`.
    `spec` replaces the pinmap.json entry (tests, custom wiring)."""
    backend = pick_backend(board_name, backend)
    if spec is None:
        if board_name is None:
            board_name = DEFAULT_BOARD[backend]
            if backend == "circuitpython" and sys.implementation.name != "circuitpython":
                board_name = "rpi_blinka"
        spec = board_spec(board_name)
    if backend == "micropython":
        from firmware.hw_mp import MicroPythonHW

        return MicroPythonHW(spec)
    if backend == "circuitpython":
        from firmware.hw_cp import CircuitPythonHW

        return CircuitPythonHW(spec)
    from firmware.hw_sim import SimHW

    return SimHW(spec)

"""The hardware layer: one interface, the board's two backends.

`make_hw()` returns an object with `.pins` (8 objects, `.value()` -> 1
released / 0 pressed, pull-ups, in firmware.buttons.BUTTONS order),
`.strip` (`strip[i] = (r, g, b)`, `strip.write()`), `.count` and
`ticks_ms()`; and the board's identity and wall clock: `.uid` (a string
unique to this board), `utc()` (unix seconds UTC, or None until a host set
the clock), `set_utc(t)`, `uptime()` (seconds since boot). The application above it is identical on every board; only
this file knows which backend exists. Backends import machine/board/time
inside their constructors, never at module import, so any of them can be
imported (and type-checked) anywhere. Pin names come from pinmap.json.
A simulator passes its own backend class to `make_hw` (the simulated pins,
pixels and clock: boardkit/hw_sim.py), so no simulator ships on a board.
"""

import os  # module level: an import inside random32 cost ~8 us per game start (Unix port)
import sys

from engine_lite import const


# engine_lite/stamp.py's F_NONCE, F_AT, F_UPTIME (tests/board/test_start_stamp.py
# holds them equal): stamp.py is host-only, not on the board, and private
# consts are folded into the code (importing them from engine_lite.record
# instead cost 94 bytes of the bundle; these, 43).
_F_NONCE = const(8)
_F_AT = const(16)
_F_UPTIME = const(32)

# The backends (by sys.implementation.name), each with the board make_hw
# builds when it is given none (CircuitPython's names itself: hw_cp.board_name).
BACKENDS = {"micropython": "pico", "circuitpython": None}


def pinmap_path():
    """pinmap.json beside this module: where the bundle, mip and the sources
    keep it. Only for code that is files: see board_spec."""
    f = globals().get("__file__") or "firmware/hw.py"
    i = f.rfind("/")
    return (f[:i] if i >= 0 else ".") + "/pinmap.json"


def image():
    """The firmware image's own facts (the frozen module bk_image: BOARD,
    VERSION, PINMAP, written by host/build/uf2.py), or None where the code
    is files on the file system. Why a module and not a file: MicroPython
    names a frozen module by its package path ("firmware/hw.py"), exactly
    as it names one imported from the file system's current directory, so
    a frozen module cannot tell where it is from __file__, and an image
    holds only modules."""
    try:
        import bk_image  # type: ignore[import-not-found]  # only inside a firmware image (host/build/uf2.py)

        return bk_image
    except ImportError:
        return None


def board_spec(board_name):
    """The pin map entry of one board (KeyError names an unknown board): the
    image's own pin map in a frozen firmware, else pinmap.json."""
    import json

    img = image()
    if img is not None:
        return json.loads(img.PINMAP)["boards"][board_name]
    with open(pinmap_path()) as f:
        boards = json.load(f)["boards"]
    return boards[board_name]


def button_pins(spec):
    """The spec's button pin names in BUTTONS order."""
    from firmware.buttons import BUTTONS

    return [spec["buttons"][b] for b in BUTTONS]


def pick_backend(board_name=None, backend="auto"):
    """Which backend `make_hw` will use: the running interpreter decides;
    CPython runs a Blinka board on the circuitpython backend. Any other
    board under CPython has no hardware here (ValueError): the simulator
    passes its backend to `make_hw` itself."""
    if backend != "auto":
        if backend not in BACKENDS:
            raise ValueError("unknown backend %r" % (backend,))
        return backend
    impl = sys.implementation.name
    if impl in BACKENDS:
        return impl
    if board_name is not None and board_spec(board_name)["runtime"] == "blinka":
        return "circuitpython"
    raise ValueError("no backend for %s" % impl)


def make_hw(board_name=None, backend="auto", spec=None):
    """The hardware of `board_name` (a pinmap.json key) on `backend`: a
    BACKENDS name, "auto", or a class called with the board's spec (the
    simulator's SimHW; default board "pico"). `spec` replaces the
    pinmap.json entry (tests, custom wiring)."""
    if type(backend) is str:
        backend = pick_backend(board_name, backend)
    if spec is None:
        if board_name is None:
            img = None if backend == "circuitpython" else image()  # a MicroPython image's (CircuitPython: a failed import, ms of its boot)
            board_name = img.BOARD if img is not None else BACKENDS.get(backend, "pico")
            if img is None and backend == "circuitpython":  # the board names itself: board.board_id (Blinka: the Pi's)
                from firmware import hw_cp

                board_name, spec = hw_cp.which_board()  # its entry too: pinmap.json read once (11 ms of CircuitPython's boot)
        if spec is None:
            spec = board_spec(board_name)
    if backend == "micropython":
        from firmware.hw_mp import MicroPythonHW

        hw = MicroPythonHW(spec)
    elif backend == "circuitpython":
        from firmware.hw_cp import CircuitPythonHW

        hw = CircuitPythonHW(spec)  # type: ignore[assignment]  # one of the backends, each with the same interface
    else:
        hw = backend(spec)
    hw.board = board_name  # type: ignore[attr-defined]  # its pin map name, the hello's board type (None for a spec given as it is)
    return hw


class WallClock:
    """The board's time of day in unix seconds UTC. Unknown (None) until a
    host sets it (link op `time`, docs/protocol.md): a Pico's RTC restarts at
    2021 on every power-up. `rtc(tm)` sets the hardware clock from a
    gmtime-style tuple (None: only this object keeps the offset, as on a
    Raspberry Pi whose system clock is the OS's). `uptime()` survives a
    clock change (the boot time moves with it)."""

    def __init__(self, rtc=None):
        import time

        self.t = time
        self.rtc = rtc
        self.boot = int(time.time())
        self.skew = None

    def utc(self):
        return None if self.skew is None else int(self.t.time()) + self.skew

    def uptime(self):
        return int(self.t.time()) - self.boot

    def set_utc(self, t):
        tm = self.t
        old = int(tm.time())
        if self.rtc is not None:
            g = getattr(tm, "gmtime", tm.localtime)  # CircuitPython: localtime is UTC
            self.rtc(g(t - (946684800 if g(0)[0] == 2000 else 0)))
        now = int(tm.time())
        self.boot += now - old
        self.skew = t - now


def random32():
    """A random u32: a new game's nonce, the link's confirm tokens. The
    clock's milliseconds where a port has no random device."""
    try:
        return int.from_bytes(os.urandom(4), "little")
    except Exception:
        import time

        return int(time.time() * 1000) & 0xFFFFFFFF


def stamp(rec, hw):
    """A new game's start record with its identity and start time (layout:
    engine_lite/stamp.py): F_NONCE + a random u32 nonce, then F_AT + unix
    seconds UTC if the clock is known, else F_UPTIME + the uptime. One with
    any of them (loaded from a host) is kept: a second stamp buries its date.
    (The flags from F_NONCE up are these three: `>=` is shorter than `&`.)"""
    if rec[3] >= _F_NONCE:
        return rec
    t = hw.utc()
    b = bytearray(rec)
    b[3] |= _F_NONCE | _F_AT if t is not None else _F_NONCE | _F_UPTIME
    if t is None:
        t = hw.uptime()
    for v in (random32(), t):
        b.extend((v & 0xFFFFFFFF).to_bytes(4, "little"))
    return bytes(b)

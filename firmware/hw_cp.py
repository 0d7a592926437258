"""CircuitPython / Raspberry Pi (Adafruit Blinka) backend.

`board` pins by name; on CircuitPython the buttons are watched by a PIO
state machine or scanned by `keypad.Keys` (firmware/keys_cp.py), under
Blinka `digitalio` inputs with Pull.UP sampled by the loop; and the `neopixel`
library with auto_write=False (the ring changes only on write(), like the
MicroPython driver). DigitalInOut has a `.value` property, not a method,
so each pin gets a one-method adapter. The board's id is
microcontroller.cpu.uid (a Raspberry Pi's: /etc/machine-id) and its wall
clock rtc.RTC (a Raspberry Pi keeps the OS clock: only an offset is kept).

Which board: CircuitPython names itself (`board.board_id`, the name of the
board's directory in CircuitPython's source: "raspberry_pi_pico",
"adafruit_feather_rp2040"), and the pinmap.json entry whose "circuitpython"
field holds that id is the wiring (`board_name`). The bundle's boot.py picks
the MENU button from a table the build made the same way (`board_entry`). A board with no entry gets one
line on the console and a blink code on its LED (`unknown_board`), never a
traceback.
"""

BLINK_UNKNOWN = 3  # board.LED's flashes a cycle: a board pinmap.json has no entry for (hardware/README.md)


def _boards():
    import json

    from firmware.hw import pinmap_path

    with open(pinmap_path()) as f:
        return json.load(f)["boards"]


def board_entry(board_id, boards):
    """(name, spec) of the board of `boards` (pinmap.json's) whose
    CircuitPython board id is `board_id`, or None: `which_board` asks it,
    and the build asks it for boot.py's table of MENU pins
    (host/build/bundle.py boot_source: boot.py reads no file and imports
    no module of the app, 23 ms of the boot to the first light)."""
    for name in boards:
        if boards[name].get("circuitpython") == board_id:
            return name, boards[name]
    return None


def board_name(board_id=None, led=None, cycles=-1):
    """The pinmap.json key of this board: by CircuitPython's board id
    (default: board.board_id); under Blinka (CPython on a Raspberry Pi) the
    Pi's entry. A board with no entry: `unknown_board` (on a board, it never
    returns; `cycles` blink cycles, then None)."""
    return which_board(board_id, led, cycles)[0]


def which_board(board_id=None, led=None, cycles=-1):
    """(board_name's answer, that board's pinmap.json entry), from one read
    of the file; (None, None) for a board with no entry."""
    import sys

    boards = _boards()
    if board_id is None:
        if sys.implementation.name != "circuitpython":
            return "rpi_blinka", boards["rpi_blinka"]
        import board

        board_id = board.board_id
    e = board_entry(board_id, boards)
    if e is not None:
        return e
    unknown_board(board_id, boards, led, cycles)
    return None, None


def unknown_board(board_id, boards, led=None, cycles=-1):
    """One line on the console, then BLINK_UNKNOWN flashes of the board's
    LED (board.LED, or the pin named `led`), a pause, again: `cycles` times
    (-1: until reset; a board without an LED only waits). Why not raise: a
    traceback on the console tells a player nothing, and code.py would end
    into CircuitPython's own error blink, which says only "an error"."""
    import time

    known = sorted(s["circuitpython"] for s in boards.values() if "circuitpython" in s)
    print("bloomkeeper: no pin map for CircuitPython board %r in firmware/pinmap.json (it knows %s)" % (board_id, ", ".join(known)))
    dio = None
    try:
        import board
        import digitalio

        pin = getattr(board, led or "LED", None)
        if pin is not None:
            dio = digitalio.DigitalInOut(pin)
            dio.switch_to_output(value=False)
    except Exception:  # no digitalio, a pin in use: the line alone
        dio = None
    while cycles:
        cycles -= 1
        for _ in range(BLINK_UNKNOWN):
            if dio is not None:
                dio.value = True
            time.sleep(0.15)
            if dio is not None:
                dio.value = False
            time.sleep(0.15)
        time.sleep(1.0)
    if dio is not None:
        dio.deinit()


class CdcDataPort:
    """CircuitPython: the second USB serial channel (usb_cdc.data, enabled in
    boot.py with usb_cdc.enable(console=True, data=True)); the REPL keeps
    the console channel to itself."""

    def __init__(self):
        import usb_cdc

        self.s = usb_cdc.data
        self.s.timeout = 0

    def read(self, n):
        w = self.s.in_waiting
        return self.s.read(min(n, w)) if w else None

    def write(self, data):
        self.s.write(data)


class _Pin:
    def __init__(self, dio):
        self.dio = dio

    def value(self):
        return 1 if self.dio.value else 0


class _Strip:
    """neopixel.NeoPixel with the `write()` name the app uses (`show()`)."""

    def __init__(self, px):
        self.px = px

    def __setitem__(self, i, rgb):
        self.px[i] = rgb

    def write(self):
        self.px.show()


def _set_rtc(tm):
    import rtc

    rtc.RTC().datetime = tm


def _identity():
    """(unique id, RTC setter or None) of this board."""
    import sys

    if sys.implementation.name == "circuitpython":
        import microcontroller

        return "".join("%02x" % b for b in microcontroller.cpu.uid), _set_rtc
    return _machine_id(), None  # Blinka on a Raspberry Pi: the OS keeps the clock


def _machine_id():
    try:
        with open("/etc/machine-id") as f:
            return f.read().strip()
    except OSError:  # not systemd: the network card's address
        import uuid

        return "%012x" % uuid.getnode()


def _pio_watch(names, clock):
    """A PIO state machine on the buttons (firmware/keys_cp.py), where the
    board has rp2pio and its eight buttons on consecutive GPIOs (the Pico's
    GP2-GP9); else None, and keypad scans them (the Feather RP2040's are
    spread over its header)."""
    try:
        import board
        import microcontroller

        from firmware.keys_cp import PioWatch, consecutive, pin_numbers

        if not consecutive(pin_numbers(names, board, microcontroller.pin)):
            return None
        return PioWatch(getattr(board, names[0]), clock)
    except ImportError:  # no rp2pio (not an RP2040)
        return None
    except (ValueError, RuntimeError) as e:  # no state machine, DMA channel or pin free: keypad still works
        print("buttons: keypad, no PIO watch:", e)
        return None


class CircuitPythonHW:
    def __init__(self, spec):
        import board
        import digitalio
        import neopixel
        import sys

        from firmware.hw import button_pins, WallClock

        self._last = 0
        self._hi = 0
        try:
            import supervisor

            self._ticks = supervisor.ticks_ms
        except ImportError:  # Blinka (CPython)
            import time

            self._ticks = lambda: time.monotonic_ns() // 1000000 & 0x1FFFFFFF  # same period
        self.pins = []
        names = button_pins(spec)
        if sys.implementation.name == "circuitpython":  # a PIO state machine or keypad watches the buttons (firmware/keys_cp.py)
            import microcontroller

            from firmware.keys_cp import KeyPin

            self.pins = [KeyPin() for _ in names]
            self.watch = _pio_watch(names, self.ticks_ms)
            if self.watch is None:
                import keypad

                from firmware.keys_cp import SCAN_MS

                self.keys = keypad.Keys([getattr(board, n) for n in names], value_when_pressed=False, pull=True, interval=SCAN_MS / 1000)
            if microcontroller.nvm is not None and len(microcontroller.nvm) >= 1024:
                self.journal = self._journal  # main.py puts the Store's files behind it
            self.buttons = self._fed_buttons  # App makes its Buttons with it
        else:  # Blinka (its keypad is a Python thread without timestamps): the loop samples the pins
            for name in names:
                dio = digitalio.DigitalInOut(getattr(board, name))
                dio.switch_to_input(pull=digitalio.Pull.UP)
                self.pins.append(_Pin(dio))
        self.count = spec["pixel_count"]
        px = neopixel.NeoPixel(getattr(board, spec["pixel_pin"]), self.count, auto_write=False, pixel_order=spec.get("pixel_order", "GRB"))
        self.neopixel = px
        self.strip = _Strip(px)
        self.uid, rtc = _identity()
        c = WallClock(rtc)
        self.utc = c.utc
        self.set_utc = c.set_utc
        self.uptime = c.uptime

    def _fed_buttons(self, pins, clock):
        """firmware.buttons.Buttons fed by the PIO's words or by keypad (App
        calls hw.buttons(pins, clock) where it exists)."""
        if self.watch is not None:
            from firmware.keys_cp import PioButtons

            return PioButtons(self.watch, pins, clock)
        import keypad

        from firmware.keys_cp import KeypadButtons

        return KeypadButtons(self.keys, pins, clock, keypad.Event())

    def _journal(self, fs):
        """The Store's filesystem `fs` (the CIRCUITPY FAT drive) behind a
        journal in microcontroller.nvm: an event's write programs nvm, FAT
        gets it in a quiet spell (firmware/journal_cp.py)."""
        import microcontroller

        from firmware.journal_cp import JournalFS

        return JournalFS(fs, microcontroller.nvm)

    def ticks_ms(self):
        """Milliseconds wrapping at 2**30, like MicroPython's ticks_ms (what
        firmware.buttons.ticks_diff expects). supervisor.ticks_ms wraps at
        2**29, so each wrap flips bit 29 (call at least every 6 days)."""
        t = self._ticks()
        if t < self._last:
            self._hi ^= 0x20000000
        self._last = t
        return (t | self._hi) & 0x3FFFFFFF

"""CircuitPython / Raspberry Pi (Adafruit Blinka) backend.

`board` pins by name, `digitalio` inputs with Pull.UP, and the `neopixel`
library with auto_write=False (the ring changes only on write(), like the
MicroPython driver). DigitalInOut has a `.value` property, not a method,
so each pin gets a one-method adapter.
"""


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


class CircuitPythonHW:
    def __init__(self, spec):
        import board
        import digitalio
        import neopixel

        from firmware.hw import button_pins

        self.pins = []
        for name in button_pins(spec):
            dio = digitalio.DigitalInOut(getattr(board, name))
            dio.switch_to_input(pull=digitalio.Pull.UP)
            self.pins.append(_Pin(dio))
        self.count = spec["pixel_count"]
        px = neopixel.NeoPixel(getattr(board, spec["pixel_pin"]), self.count, auto_write=False, pixel_order=spec.get("pixel_order", "GRB"))
        self.neopixel = px
        self.strip = _Strip(px)
        self._last = 0
        self._hi = 0
        try:
            import supervisor

            self._ticks = supervisor.ticks_ms
        except ImportError:  # Blinka (CPython)
            import time

            self._ticks = lambda: time.monotonic_ns() // 1000000 & 0x1FFFFFFF  # same period

    def ticks_ms(self):
        """Milliseconds wrapping at 2**30, like MicroPython's ticks_ms (what
        firmware.buttons.ticks_diff expects). supervisor.ticks_ms wraps at
        2**29, so each wrap flips bit 29 (call at least every 6 days)."""
        t = self._ticks()
        if t < self._last:
            self._hi ^= 0x20000000
        self._last = t
        return (t | self._hi) & 0x3FFFFFFF

"""MicroPython backend: machine.Pin with pull-ups, the built-in neopixel.

The NeoPixel object is used as the strip directly (it already has
`__setitem__` and `write()`), and `ticks_ms` is time.ticks_ms itself, so the
hot path adds no layer of Python calls. The board's id is machine.unique_id()
and its wall clock machine.RTC (set by the host: firmware/hw.py WallClock).
"""


class MicroPythonHW:
    def __init__(self, spec):
        import machine
        import neopixel
        import time

        from firmware.hw import button_pins, WallClock

        Pin = machine.Pin
        # machine.Pin takes the GPIO number: 'GP16' -> 16
        self.pins = [Pin(int(n.lstrip("GP")), Pin.IN, Pin.PULL_UP) for n in button_pins(spec)]
        self.count = spec["pixel_count"]
        self.strip = neopixel.NeoPixel(Pin(int(spec["pixel_pin"].lstrip("GP")), Pin.OUT), self.count)
        self.ticks_ms = time.ticks_ms
        self.uid = machine.unique_id().hex()  # the RP2040's flash id
        c = WallClock(lambda g: machine.RTC().datetime((g[0], g[1], g[2], g[6], g[3], g[4], g[5], 0)))
        self.utc = c.utc
        self.set_utc = c.set_utc
        self.uptime = c.uptime

"""The simulator's `machine` (MicroPython Unix port): GPIO pins whose level
the simulator protocol sets (host/mpy_guest/simboard.py). Only Pin exists:
the firmware uses nothing else of `machine`."""


class Pin:
    IN = 0
    OUT = 1
    PULL_UP = 1
    PULL_DOWN = 2
    made = []

    def __init__(self, id, mode=-1, pull=-1):
        self.id = id
        self.level = 1 if pull == Pin.PULL_UP else 0
        Pin.made.append(self)

    def value(self, v=None):
        if v is None:
            return self.level
        self.level = v

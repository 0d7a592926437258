"""The simulator's `machine` (MicroPython Unix port): GPIO pins whose level
the simulator protocol sets (host/mpy_guest/simboard.py), the board's
unique id (the simulator's, kept in its flash directory: host/flashdir.py)
and an RTC the host sets over the link (the Unix port's own clock is the
host's already, so it only keeps what it was given)."""

UID = b"sim"  # set by simboard.py before the firmware reads it


def unique_id():
    return UID


class RTC:
    set_to = None

    def datetime(self, t=None):
        if t is None:
            return RTC.set_to
        RTC.set_to = t


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

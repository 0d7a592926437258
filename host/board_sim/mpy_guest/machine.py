"""Stand-in `machine` for board code inside the MicroPython Unix port (its
`machine` has no Pin, no unique_id): the simulator's (host/board_sim/
micropython_board.py sets pin levels through mpy_guest/simboard.py) and the
tests' (tests/kit/mpy_harness.py puts this file on the guest's path). GPIO pins
record how they were made (`Pin.made`; `level` drives an input), the board's
unique id is `UID` (the simulator sets its own, kept in its flash directory:
host/board_sim/flashdir.py) and the RTC keeps what the host set over the link
(the Unix port's own clock is the host's already)."""

UID = b"\xe6\x61\x38\x52\x83\x2a\x4f\x21"  # shaped like an RP2040 flash id


def unique_id():
    return UID


class RTC:
    set_to = None  # the last datetime tuple set

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
        self.mode = mode
        self.pull = pull
        self.level = 1 if pull == Pin.PULL_UP else 0
        Pin.made.append(self)

    def value(self, v=None):
        if v is None:
            return self.level
        self.level = v

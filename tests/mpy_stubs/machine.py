"""Stand-in `machine` for tests running board code inside the MicroPython
Unix port (its `machine` has no Pin). Records every Pin made; `Pin.level` drives inputs."""


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


def unique_id():
    return b"\xe6\x61\x38\x52\x83\x2a\x4f\x21"  # shaped like an RP2040 flash id


class RTC:
    """Keeps what was set (RTC.set holds the last datetime tuple)."""

    set = None

    def datetime(self, t=None):
        if t is not None:
            RTC.set = t

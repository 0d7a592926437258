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

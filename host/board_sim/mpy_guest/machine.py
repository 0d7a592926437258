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


_MASKED = bytearray(1)  # 1: disable_irq() is in force, edges wait as in the RP2040's INTR bits


def disable_irq():
    """As on the RP2040 in a flash erase or program (rp2_flash.c): edges
    are latched, no handler runs until enable_irq(). Allocates nothing."""
    s = _MASKED[0]
    _MASKED[0] = 1
    return s


def enable_irq(state=0):
    """The latched edges' interrupts fire now: one handler call per pin,
    with every flag latched (ports/rp2/machine_pin.c gpio_irq)."""
    _MASKED[0] = state
    if not state:
        for p in Pin.made:
            p._fire()


class _Irq:
    def __init__(self):
        self.f = 0

    def flags(self):
        return self.f


class Pin:
    IN = 0
    OUT = 1
    PULL_UP = 1
    PULL_DOWN = 2
    IRQ_FALLING = 4  # rp2's GPIO_IRQ_EDGE_FALL and _RISE
    IRQ_RISING = 8
    made = []

    def __init__(self, id, mode=-1, pull=-1):
        self.id = id
        self.mode = mode
        self.pull = pull
        self._level = 1 if pull == Pin.PULL_UP else 0
        self._irq = _Irq()
        self.handler = None
        self.trigger = 0
        self.pending = 0  # edges latched, not yet handled
        Pin.made.append(self)

    def value(self, v=None):
        if v is None:
            return self._level
        self.level = v

    def irq(self, handler=None, trigger=12, hard=False):
        """Pin.irq: with a handler, arm it on `trigger`; the irq object
        either way (its flags() are those of the interrupt last handled)."""
        if handler is not None:
            self.handler = handler
            self.trigger = trigger
            self.pending = 0
        return self._irq

    @property
    def level(self):
        return self._level

    @level.setter
    def level(self, v):
        """Drive the input: an edge latches its flag, and its handler runs
        at once unless interrupts are disabled."""
        if v != self._level:
            self._level = v
            self.pending |= (Pin.IRQ_RISING if v else Pin.IRQ_FALLING) & self.trigger
            if not _MASKED[0]:
                self._fire()

    def _fire(self):
        if self.pending and self.handler is not None:
            self._irq.f = self.pending
            self.pending = 0
            self.handler(self)

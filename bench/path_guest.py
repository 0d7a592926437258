"""The guest half of bench/bench_path.py: the board's real loop in the Unix port.

MicroPython code, run by bench_path under callgrind from a directory that
holds the firmware's `.mpy` bundle and tests/kit/lfs_flash. Everything it
adds to the board is either outside the counted instructions or a few
bytecodes (the three markers below); it allocates nothing per turn, so the
garbage collector runs as often as the board's own allocations make it.

How instructions are counted and the chip clock is kept (the why is in
bench_path's docstring):

* one loop turn runs inside ``all(TURN)``: callgrind collects only inside
  ``mp_builtin_all`` (zeroed on entry). Board code never calls all().
* the instrument's own work runs inside calls of callable instances
  (``Gate``: callgrind's second toggle is ``mp_obj_instance_call``; board
  code defines no ``__call__``), so it is not counted: the flash device
  (tests/kit/lfs_flash.Flash), the strip's write, the clock, the sleep.
* ``sync(tag, n)`` (inside a gate) makes callgrind dump the instructions
  since the last dump (``any(DUMP)``: ``--dump-before=mp_builtin_any``),
  tells the host on stdout what the segment ends with (tag, n), and reads
  back on stdin the chip clock in microseconds (the host has turned the
  dump into chip time and added the modeled flash stall, strip write or
  sleep) and the button interrupts that came meanwhile (each pin's level
  and, if the board armed its irq(), the handler run at the interrupt's
  tick: ``CPin``). ``note(tag, n)`` tells the host
  something without a dump or an answer (a read's size, a delivered
  gesture).

Dumps cost callgrind ~15 ms of the host's time each, so an idle turn has
one (S); the step/tidy split (Z) and a redraw's start (F) are dumped only
in a turn where something happened before them (a gesture, a read, flash
work), and Z in every TIDY_EVERY-th turn too.

Tags: S sleep (the turn's end; pins change here), Z the App's step is
done (tidy comes next), F a redraw starts (App.show; n = 1 if the App
redraws because something changed, 0 for an animation frame), W the strip write
starts (24 pixels), P a program (n bytes, whole pages), E a sector erase,
R a read (n bytes), G a gesture reaches App.press (n = 8 * kind +
button), B the loop starts, Q the host's order to stop (in the answer).
"""

import sys

from tests.kit.lfs_flash import Flash, mount, READ, PROG

_W = sys.stdout.buffer.write
_R = sys.stdin.buffer.readinto
_OUT = bytearray(b"X 000000000000\n")
_IN = bytearray(66)  # clock (12 digits), 4 interrupts (pin, flags, level, tick ms: 13), command, newline
SLOTS = 4
CLOCK = [0]  # the chip clock, microseconds
DONE = [0]
BUSY = [0]  # something happened in this turn (a gesture, a frame, flash work)
TURNS = [0]
TIDY_EVERY = 8  # an idle turn's step/tidy split is dumped this often


class Dump:
    """any(DUMP): callgrind dumps its counters on entry (and nothing is allocated)."""

    def __iter__(self):
        return self

    def __next__(self):
        return 1


DUMP = Dump()


class Gate0:
    """A call through a callable instance: not counted (the module docstring)."""

    def __init__(self, fn):
        self.fn = fn

    def __call__(self):
        return self.fn()


class Gate1(Gate0):
    def __call__(self, a):
        return self.fn(a)


class Gate2(Gate0):
    def __call__(self, a, b):
        return self.fn(a, b)


class Gate3(Gate0):
    def __call__(self, a, b, c):
        return self.fn(a, b, c)


def note(tag, n):
    BUSY[0] = 1
    out = _OUT
    out[0] = tag
    i = 13
    while i > 1:
        out[i] = 48 + n % 10
        n //= 10
        i -= 1
    _W(out)


def sync(tag, n):
    any(DUMP)
    note(tag, n)
    got = _R(_IN)
    if got != 66:
        raise OSError("bench: short answer from the host")
    b = _IN
    t = 0
    for i in range(12):
        t = t * 10 + b[i] - 48
    for j in range(SLOTS):
        k = 12 + 13 * j
        if b[k] != 45:  # '-': no interrupt in this slot
            pin = PINS[b[k] - 48]
            pin.value = HIGH if b[k + 2] == 49 else LOW
            if pin.handler is not None:  # the board armed it (Pin.irq): its interrupt runs, at its own tick
                pin.fl = (b[k + 1] - 48) << 2  # 1 fell, 2 rose, 3 both -> IRQ_FALLING 4 | IRQ_RISING 8
                ms = 0
                for i in range(k + 3, k + 13):
                    ms = ms * 10 + b[i] - 48
                CLOCK[0] = ms * 1000
                pin.handler(pin)
    CLOCK[0] = t
    if b[64] == 81:  # 'Q'
        DONE[0] = 1


# Pins whose value() is a C call, as machine.Pin.value() is on the board.
HIGH = "1".isdigit
LOW = "a".isdigit


class CPin:
    """machine.Pin as the board's code sees it: value() a C call, and irq().

    The RP2040's edge detector, as the host models it (bench_path's
    `interrupts`): an edge while the chip runs or sleeps interrupts at once;
    edges inside a flash erase or program (interrupts off, rp2_flash.c) are
    latched and interrupt once at the stall's end, with the flags of every
    edge latched (machine_pin.c gpio_irq: `irq->flags = intr & trigger`)
    and the pin's level by then. The host sends each interrupt with its
    tick, and sync() runs the armed handler then, as a hard interrupt
    would: before any poll after it. The handler's own instructions are not
    counted (it runs inside a gate): a few dozen bytecodes per edge.
    """

    IRQ_FALLING = 4
    IRQ_RISING = 8

    def __init__(self):
        self.value = HIGH
        self.handler = None
        self.fl = 0  # the flags of the interrupt being handled

    def irq(self, handler=None, trigger=12, hard=False):
        if handler is not None:
            self.handler = handler
        return self

    def flags(self):
        return self.fl


PINS = [CPin() for _ in range(8)]


class Strip:
    """MicroPython's neopixel.NeoPixel as the App sees it: a GRB bytearray
    the App copies a frame into, and write() (here: a gate; on the board
    the bitstream, modeled by the host)."""

    ORDER = (1, 0, 2, 3)

    def __init__(self, n):
        self.bpp = 3
        self.buf = bytearray(3 * n)
        self.write = Gate0(self._write)

    def _write(self):
        sync(87, 0)  # W

    def __setitem__(self, i, v):
        for j in range(3):
            self.buf[3 * i + self.ORDER[j]] = v[j]


def _ticks():
    return CLOCK[0] // 1000


class HW:
    """The hardware interface of firmware/hw.py, as MicroPythonHW builds it."""

    def __init__(self):
        self.pins = PINS
        self.count = 24
        self.strip = Strip(24)
        self.ticks_ms = Gate0(_ticks)
        self.uid = "bench"

    def utc(self):
        return None

    def set_utc(self, t):
        pass

    def uptime(self):
        return CLOCK[0] // 1000000


def _op(kind, n, off, nb):
    if kind == READ:
        note(82, nb)  # R
    elif kind == PROG:
        sync(80, nb)  # P
    else:
        sync(69, n)  # E


def flash_device(path="flash.img"):
    """The board's flash (tests/kit/lfs_flash.Flash on a host file) behind gates."""
    flash = Flash(path=path)
    flash.log = _op

    class Device:
        pass

    dev = Device()
    dev.readblocks = Gate3(flash.readblocks)
    dev.writeblocks = Gate3(flash.writeblocks)
    dev.ioctl = Gate2(flash.ioctl)
    return flash, dev


def _sleep(ms):
    sync(83, ms)  # S
    BUSY[0] = 0
    TURNS[0] += 1


def _mark_z():
    if BUSY[0] or TURNS[0] % TIDY_EVERY == 0:
        sync(90, 0)  # Z


SLEEP = Gate1(_sleep)
_MARK_Z = Gate0(_mark_z)
_NOTE_G = Gate2(lambda b, k: note(71, 8 * k + b))


def board(root="/flash/bk"):
    """The board as firmware/main.py builds it, on the gated flash; the App's
    step, show and press marked for the host."""
    try:
        from firmware.main import load
    except ImportError:  # a firmware from before main's load() (--calibrate)
        pass
    else:
        load()  # the modules as main() loads them: the heap's layout is the board's
    from firmware.storage import Store
    from firmware.app import App

    flash, dev = flash_device()
    mount(dev, "/flash")
    hw = HW()
    try:
        store = Store(root, clock=hw.ticks_ms)
    except TypeError:  # a firmware from before the Store took the clock (--calibrate)
        store = Store(root)
    app = App(hw, store)
    # the loop's own turn: App.turn (firmware/main.py loop_step), or App.step
    # in a firmware from before the loop's guard moved out of each turn
    turn = "turn" if hasattr(app, "turn") else "step"
    step = getattr(app, turn)
    show = app.show
    press = app.press

    def marked_step():
        step()
        _MARK_Z()

    def marked_show():
        _MARK_F()
        return show()

    def marked_press(b, k):
        _NOTE_G(b, k)
        press(b, k)

    def mark_f():
        if BUSY[0]:
            sync(70, 1 if getattr(app, "_dirty", True) else 0)  # F; 1: redrawn because something changed

    _MARK_F = Gate0(mark_f)
    setattr(app, turn, marked_step)
    app.show = marked_show
    app.press = marked_press
    return flash, app


def phones(app, n, port):
    """The Pico W's table server in the loop (firmware/pico_w.py's turn:
    main's, then the server's poll) with `n` phones on its event stream:
    client sockets on loopback in this process, read after every turn
    behind a gate (the phones are not the chip: their reading is not
    counted, nor is the kernel's side of any socket)."""
    import socket
    from firmware.table_server import TableServer

    srv = TableServer(app, "127.0.0.1", port)
    addr = socket.getaddrinfo("127.0.0.1", port)[0][-1]
    socks = []
    for _ in range(n):
        c = socket.socket()
        c.connect(addr)
        c.setblocking(False)
        c.send(b"GET /events HTTP/1.1\r\n\r\n")
        socks.append(c)
        srv.poll()  # taken now: the server's backlog holds 4 (the loop's polls take them on the board)
    got = [0]

    def drain():
        for c in socks:
            try:
                d = c.recv(8192)
            except OSError:
                d = None
            if d:
                got[0] += len(d)

    return srv, Gate0(drain), got


def run(n_phones=0, port=0):
    """Build the board, then run its loop turn until the host says stop
    (with `n_phones` phones on the table server at `port`: phones())."""
    import gc

    flash, app = board()
    try:
        from firmware.main import loop_step
    except ImportError:  # before loop_step: the loop's body as main() had it
        from firmware.main import tidy

        def loop_step(app, sleep_ms):
            app.step()
            tidy()
            sleep_ms(5)

    class Turn:
        def __iter__(self):
            return self

        def __next__(self):
            loop_step(app, SLEEP)
            return 0

    if n_phones:
        srv, drain, got = phones(app, n_phones, port)

        class Turn:  # noqa: F811 - the Pico W's turn: main's, then the server's poll
            def __iter__(self):
                return self

            def __next__(self):
                loop_step(app, SLEEP)
                srv.poll()
                drain()
                return 0

    turn = Turn()
    gc.collect()
    f = flash
    boot = (f.reads, f.progs, f.pages, f.erases)  # the boot's own operations, before the timeline
    sync(66, 0)  # B
    while not DONE[0]:
        all(turn)
    print("RESULT", app.screen, f.reads - boot[0], f.progs - boot[1], f.pages - boot[2], f.erases - boot[3], app.faults)
    if n_phones:
        print("PHONES", n_phones, srv.v, got[0], srv.refused)

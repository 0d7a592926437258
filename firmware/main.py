"""Board entry point: hardware, flash store, application, serial link, loop.

Why so little here: everything testable lives in App (firmware/app.py),
which the tests and the simulator drive on the simulated backend; this file
only wires the real pieces together. `machine`, `time` and the USB port are
imported inside main(), never at import, like every firmware module.
On the board this file runs as __main__ (copy it to the flash root as main.py).
"""

import gc

from firmware.buttons import ticks_diff


QUIET_MS = 300  # no button has moved for this long: the quiet work and a garbage collection are due


def tidy(app):
    """Between two steps of the loop: once per quiet spell, when no button
    has moved for QUIET_MS, the flash work no event should wait for
    (Store.quiet: a full segment moved, the live directory compacted ahead
    of need), then a garbage collection, so that both (milliseconds on the
    Pico; a compaction's erase stalls the chip 45 ms) fall between
    gestures, never inside one, and seldom delay a release. Why 300 ms: a
    pause players make many times a game (between turns), and short enough
    that the heap never goes long uncollected: in a heap that has not been
    collected for a while an allocation's search for a free block
    (gc_alloc) costs milliseconds on the Pico, and some land on the frame
    path. bench_path measured 1000 ms against 300 ms: the slowest frame 7.8
    against 5.3 ms, press-to-light p50 7.9 against 5.7 ms. It asks the heap
    nothing: gc.mem_free() and gc.mem_alloc() each walk the heap's whole
    allocation table (7 ms each on the Pico, every loop turn). An idle turn
    allocates nothing. Work that comes in pieces (CircuitPython's spread
    finish: Store.quiet says more remain) goes on one piece a turn while
    the buttons stay still; a button that moves puts it off until they
    have rested QUIET_MS again. A long run of gestures with no pause finds the heap
    full at last and collects then, as MicroPython always does."""
    b = app.buttons
    if b.edge >= 0 and ticks_diff(b.clock(), b.edge) >= QUIET_MS:
        if not app.store.quiet():  # else more pieces of quiet work (a spread finish): next turn, if no button moves
            b.edge = -1  # done: nothing due until a button moves again
        gc.collect()


SLEEP_MS = 1  # the pause between two turns: with an idle turn's ~0.9 ms of work on the Pico, a ~1.9 ms period (bench_path)


def loop_step(app, sleep_ms):
    """One turn of the board's loop, everything the board does between two
    turns: the app's step (which shows a change, then writes it to flash),
    the housekeeping, the pause. The buttons are polled once a turn, so the
    period is how late a release can be seen: the pause plus an idle turn's
    own work stays under 5 ms (docs/design.md). main() repeats it forever;
    the bench runs the very same turn to measure the board. What the turn
    raises reaches the caller: run() recovers from it."""
    app.turn()
    tidy(app)  # a garbage collection, when the buttons are quiet
    sleep_ms(SLEEP_MS)


def run(app, sleep_ms, step=loop_step):
    """The loop, forever; it cannot die. An unexpected exception (a bug, a
    failing flash) is caught and the board recovers (App.recover logs the
    fault and reloads the game from flash), then the turns go on. Why the
    guard is set up once around the turns and not inside each: `except
    ... as e` in a function called every turn takes that call's frame from
    the heap (the handler's cleanup makes it over 11 slots: MicroPython's
    VM_MAX_STATE_ON_STACK), 152 bytes a turn, which filled the heap with
    garbage in seconds and brought the collections tidy() keeps out of
    gestures. Here the frame is taken once."""
    while True:
        try:
            while True:
                step(app, sleep_ms)
        except Exception as e:  # not KeyboardInterrupt: Ctrl-C stops the board
            app.recover(e)


def make_link(app, store, board):
    """The serial link on USB, or None if this port has none (the ring and
    buttons keep working without a host)."""
    import sys

    try:
        from firmware import link

        if sys.implementation.name == "circuitpython":
            from firmware.hw_cp import CdcDataPort  # its USB data channel lives with its backend

            port = CdcDataPort()
        else:
            port = link.StdioPort()
        from firmware.hw import image

        # the hello's `board` is the board's type (docs/protocol.md), never the runtime's name
        build = "files" if image() is None else "frozen"
        return link.Link(link.AppBoard(app, store, board_id=board or app.hw.board, build=build), port)
    except Exception as e:  # no USB data channel (e.g. boot.py not set up)
        print("serial link off:", e)  # and None: no link


def load(cp=False):
    """Import the board's modules, a garbage collection before each of the
    big ones. Why: loading a .mpy file leaves its loader's garbage (the
    file's buffer, the tables it builds) between the objects the module
    keeps; collected before the next module loads, those holes fill with
    that module's objects instead of staying free blocks too small for
    what the game asks later, such as the title's rules, which load once
    setup is past the title's choice (firmware/app.py settle). The heap
    a whole game needs (bench_board, 64-bit port): 145 KB without
    either, 139-143 with this alone, 132-137 with both (docs/design.md
    "Memory and the bundle"). A collection before every module saved no more and cost
    51 B of bundle. main() and the heap bench both boot through here.
    `cp` (CircuitPython, from .mpy files or source): neither the
    collections nor the link's modules, which load after the first light
    (main): its heap has room to spare (165 KB free at code.py's start),
    and its boot has no time to spare (docs/design.md "CircuitPython
    boots")."""
    if cp:
        import firmware.app  # (main imports the rest as it needs them)
        return
    gc.collect()
    import firmware.storage
    gc.collect()
    import firmware.app
    gc.collect()
    import firmware.link
    gc.collect()


def main(board=None, root="/bk", turn=None):
    """Boot and run the board forever. `turn(app)`, if given, returns the
    loop's turn instead of loop_step (the Pico W's adds its table page:
    firmware/pico_w.py). On CircuitPython the ring lights (one turn)
    before the serial link's modules load: 55 ms of its boot to the first
    light, on the emulated Pico with .mpy files (docs/design.md
    "CircuitPython boots")."""
    import sys

    cp = sys.implementation.name == "circuitpython"
    load(cp)
    from firmware.hw import make_hw
    from firmware.storage import Store
    from firmware.app import App

    hw = make_hw(board)
    store = Store(root, clock=hw.ticks_ms)
    journal = getattr(hw, "journal", None)  # CircuitPython: each event's write to nvm first, FAT in quiet spells
    if journal is not None:
        store.fs = journal(store.fs)
        store.snapshot_every = store.fs.snapshot_every
    app = App(hw, store)
    store.mark = app.buttons  # told when each piece of flash work begins: a press latched in a stall is dated by it
    if cp:
        app.turn()  # the first light, then the link
    app.link = make_link(app, store, board)
    import time

    run(app, getattr(time, "sleep_ms", lambda ms: time.sleep(ms / 1000)), loop_step if turn is None else turn(app))  # CircuitPython has no sleep_ms


if __name__ == "__main__":
    main()

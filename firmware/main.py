"""Board entry point: hardware, flash store, application, serial link, loop.

Why so little here: everything testable lives in App (firmware/app.py),
which the tests and the simulator drive on the simulated backend; this file
only wires the real pieces together. `machine`, `time` and the USB port are
imported inside main(), never at import, like every firmware module.
On the board this file runs as __main__ (copy it to the flash root as main.py).
"""

import gc


def _sleeper():
    import time

    if hasattr(time, "sleep_ms"):
        return time.sleep_ms

    def sleep_ms(ms):  # CircuitPython / Blinka
        time.sleep(ms / 1000)

    return sleep_ms


def tidy():
    """Between two steps of the loop: collect the garbage once less than a
    quarter of the heap is free, so that a collection (milliseconds on the
    Pico) comes between gestures instead of inside one, when an allocation
    finds the heap full. Allocates nothing."""
    if gc.mem_free() < gc.mem_alloc() // 3:
        gc.collect()


def loop_step(app, sleep_ms):
    """One turn of the board's loop, everything the board does between two
    turns: the app's step, the housekeeping, the pause. main() repeats it
    forever; the bench runs the very same turn to measure the board."""
    app.step()  # never raises: App.recover logs a fault and reloads from flash
    tidy()  # a garbage collection, when due, between steps
    sleep_ms(5)


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
        return link.Link(link.AppBoard(app, store, board_id=board or sys.implementation.name), port)
    except Exception as e:  # no USB data channel (e.g. boot.py not set up)
        print("bloomkeeper: serial link off:", e)
        return None


def main(board=None, root="/bk"):
    from firmware.hw import make_hw
    from firmware.storage import Store
    from firmware.app import App

    hw = make_hw(board)
    store = Store(root)
    app = App(hw, store)
    app.link = make_link(app, store, board)
    sleep_ms = _sleeper()
    while True:
        loop_step(app, sleep_ms)


if __name__ == "__main__":
    main()

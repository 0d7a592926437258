"""A whole game played through the board application, inside MicroPython.

Guest code (tests/kit/mpy_harness.py compiles it into every guest tree, and into
the guest's ROMFS image): tests/packaging/test_romfs.py and bench/bench_board.py's
heap figures run it. The board as firmware/main.py sets it up: its modules
loaded by main's own load() (collections between them: the heap a game
needs depends on it), SimHW pins + debounce + App + the flash Store on a
real directory (through MicroPython's own open/os, so the flash is not in
the heap) + the serial link (its port reads nothing here). The gestures
come from a button script FILE read one line per gesture
(boardkit/script.py), so the heap never holds the script, which the board
never has either.

    start(path, live=False)   builds the board; `live`: collect before every
                              gesture and keep the live heap (LIVE line)
    step()                    plays one gesture; False when none is left
    finish()                  prints RESULT (screen, records, scores) and LIVE

step() is a call of its own so that the WebAssembly port can be driven one
gesture per call from JavaScript (bench/mp_wasm_run.mjs).
"""

import gc

from firmware.main import load

load()
from boardkit.hw_sim import SimHW
from firmware.storage import Store
from firmware.app import App
from boardkit import script

board = {}
live = []  # [boot, peak, end] live heap in bytes, if start(live=True)


def _gestures(path):
    n = 0
    with open(path) as f:
        for line in f:
            n += 1
            g = script.parse_line(line, n)
            if g is not None:
                yield g


def start(path, probe=False):
    hw = SimHW(None, 24)
    app = App(hw, Store("flash"))
    from firmware import link  # firmware/main.py sets up the link too

    app.link = link.Link(link.AppBoard(app, app.store, board_id="sim"))
    board["hw"] = hw
    board["app"] = app
    board["todo"] = _gestures(path)
    board["probe"] = probe


def _at_gesture():
    """Live-heap runs: a collection, then the bytes every reachable object
    takes: before the first gesture (imports + App), the most before any
    gesture, and at the end."""
    if not board["probe"]:
        return
    gc.collect()
    a = gc.mem_alloc()
    if not live:
        live.extend((a, a, a))
    live[1] = max(live[1], a)
    live[2] = a


def step():
    _at_gesture()
    for g in board["todo"]:
        script.play(board["app"], board["hw"], (g,))
        return True
    return False


def finish():
    app = board["app"]
    if app.faults:  # the loop survives a MemoryError (App logs it as a fault); a fit is a game without one
        t = app.store.faults()  # "" if even the fault log could not be written
        raise (MemoryError if "MemoryError" in t or not t else RuntimeError)("faults: " + t)
    # the live heap after the last gesture, before this check's own garbage:
    # the WebAssembly port frees nothing allocated during the current call
    _at_gesture()
    f = app.last_game.table.final()  # what the results screen computes (not the whole state dict)
    print("RESULT", app.screen, len(app.last_game.log), " ".join("%s:%d" % (p["name"], p["score"]) for p in f["players"]))
    print("LIVE", " ".join(str(x) for x in live))

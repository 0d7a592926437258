"""`bloomkeeper sim --headless --buttons FILE`: play a button script on the
simulated board, print the engine state as JSON.

Why through the whole firmware: the script presses simulated pins, so the
debounce, long-press timing, App screens and the flash store (a fresh
in-memory one, so runs never depend on earlier ones) all run exactly as on
the board. The output has the shape of `bloomkeeper replay`, so a script and
a game record can be compared directly. Format: docs/controls.md.
"""

import json
import sys

from boardkit import script


def run_script_text(text, board="pico"):
    """Parse and play `text`; returns the App (ScriptError on a bad line)."""
    from boardkit.hw_sim import SimHW
    from firmware.hw import make_hw
    from boardkit.memfs import MemFS
    from firmware.storage import Store
    from firmware.app import App

    gestures = script.parse(text)
    hw = make_hw(board, backend=SimHW)
    app = App(hw, Store(fs=MemFS()))
    script.play(app, hw, gestures)
    return app


def final_state(app):
    """The state of the game on the board, or of the one just finished."""
    g = app.game if app.game is not None else app.last_game
    if g is None:
        return {"game": None}
    return g.state()


def script_state(text, board="pico", runtime="cpython"):
    """The final state of a button script played on the board (ScriptError
    on a bad line): in this process (CPython), or in the MicroPython Unix
    port (host/board_sim/micropython_board.py)."""
    if runtime == "micropython":
        from host.board_sim import micropython_board

        return micropython_board.script_state(text, board)[1]
    return final_state(run_script_text(text, board))


def run_buttons(path, board="pico", runtime="cpython"):
    """Play the script at `path` ('-' = stdin); print the state; exit status."""
    from host.errors import UserError
    from host.io_util import read_text

    try:
        text = read_text(path)  # capped: /dev/zero is one line, not a growing heap
    except UserError as err:
        sys.stderr.write("bloomkeeper: sim: %s\n" % err)
        return 2
    try:
        state = script_state(text, board or "pico", runtime)
    except script.ScriptError as err:
        sys.stderr.write("bloomkeeper: sim: %s %s\n" % (path, err))
        return 2
    print(json.dumps(state))
    return 0

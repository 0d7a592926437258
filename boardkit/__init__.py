"""The board's stand-ins, for the simulator and the tests: never on a board.

Why a package of its own: firmware/ holds exactly what goes on a board, and
these modules run beside the firmware without being part of it: the
simulated pins, pixels and clock (hw_sim.py, passed to firmware.hw.make_hw
as its backend), an in-memory flash with power cuts and stalls (memfs.py),
button scripts (script.py) and the board's state in words (app_words.py,
which reads the App from outside). They are MicroPython-compatible, so the
tests and `bloomkeeper sim --runtime micropython` run them inside the Unix
port next to the bundle, and they ship in the wheel for the simulator.
They import engine_lite and firmware; firmware never imports them
(tests/house/test_import_boundaries.py).
"""

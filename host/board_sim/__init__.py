"""The board simulator (`bloomkeeper sim`): the real firmware on a simulated
board. board.py is the UI-free board (SimBoard), tui.py and textual_app.py the
terminal front-end (face.py: its keys, legend and ring layout, without
textual), headless.py and serve_record.py the scripted modes,
micropython_board.py the same board with the firmware's .mpy bundle inside the
MicroPython Unix port (mpy_guest/ is what runs in there), flashdir.py its
flash directory. Not to be confused with host/fullrules/simulate.py (whole
games played by policies)."""

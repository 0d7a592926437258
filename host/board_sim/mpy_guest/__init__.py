"""Files put next to the firmware bundle inside the MicroPython Unix port:
stand-ins for the Pico's `machine` and `neopixel` (the one copy: the
simulator, host/board_sim/micropython_board.py, and the tests'
MicroPython runs, tests/kit/mpy_harness.py, both use them) and the driver that
speaks the simulator protocol (simboard.py). They are MicroPython programs,
not host modules: nothing on the host imports them."""

"""The firmware on the board: the app played by its buttons, screens, ring, main loop, faults, backends, the link's board side and the MicroPython gates."""

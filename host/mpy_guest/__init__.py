"""Files the MicroPython simulator runtime puts next to the firmware bundle
inside the Unix port (host/sim_mpy.py): stand-ins for the Pico's `machine.Pin`
and `neopixel`, and the driver that speaks the simulator protocol. They are
MicroPython programs, not host modules: nothing on the host imports them."""

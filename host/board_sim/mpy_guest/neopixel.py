"""Stand-in for MicroPython's built-in `neopixel` (the Unix port has none),
for the simulator and the tests: the built-in class's shape (pin, n, bpp=3,
GRB bytes in `buf`); `write()` only counts (`writes`): the simulator protocol
sends `buf` to the host after a step that wrote, a test reads `buf` itself."""


class NeoPixel:
    ORDER = (1, 0, 2, 3)

    def __init__(self, pin, n, bpp=3, timing=1):
        self.pin = pin
        self.n = n
        self.bpp = bpp
        self.buf = bytearray(n * bpp)
        self.writes = 0

    def __len__(self):
        return self.n

    def __setitem__(self, i, v):
        o = i * self.bpp
        for k in range(self.bpp):
            self.buf[o + self.ORDER[k]] = v[k]

    def write(self):
        self.writes += 1

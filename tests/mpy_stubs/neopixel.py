"""Stand-in for MicroPython's built-in `neopixel` (the Unix port has none):
the same class shape (pin, n, bpp=3), one GRB bytearray, `write()` records
a copy of the buffer in `NeoPixel.sent`."""


class NeoPixel:
    ORDER = (1, 0, 2, 3)
    sent = []

    def __init__(self, pin, n, bpp=3, timing=1):
        self.pin = pin
        self.n = n
        self.bpp = bpp
        self.buf = bytearray(n * bpp)

    def __len__(self):
        return self.n

    def __setitem__(self, i, v):
        o = i * self.bpp
        for k in range(self.bpp):
            self.buf[o + self.ORDER[k]] = v[k]

    def write(self):
        NeoPixel.sent.append(bytes(self.buf))

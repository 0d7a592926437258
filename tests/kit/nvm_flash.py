"""microcontroller.nvm on an RP2040 under CircuitPython, as a power-cut model
beside boardkit/memfs.py's MemFS (the FAT drive's files).

What it follows, read in CircuitPython's source
(ports/raspberrypi/common-hal/nvm/ByteArray.c): `nvm[a:b] = data` programs
the pages in place when every target byte is still erased (0xFF), and
otherwise copies the whole 4 KB sector, erases it and programs it back with
the new bytes. Each such call is one op of the MemFS it is given (its op
counter, trace and `cut_at`), so one campaign cuts the FAT writes and the
nvm programs alike: a program cut keeps the first bytes of the data (the
rest stay erased, or `junk` like MemFS's torn writes); an erase cut leaves
the sector erased and only part of it programmed back.
"""

from boardkit.memfs import PowerCut

SIZE = 4096  # CIRCUITPY_INTERNAL_NVM_SIZE on the RP2040 boards


class NorNvm:
    def __init__(self, fs, size=SIZE, mem=None):
        self.fs = fs
        self.mem = bytearray(b"\xff" * size) if mem is None else bytearray(mem)
        self.programs = 0
        self.erases = 0

    def __len__(self):
        return len(self.mem)

    def __getitem__(self, s):
        self.fs._alive()
        return bytearray(self.mem[s])

    def __setitem__(self, s, data):
        a, b, _ = s.indices(len(self.mem))
        data = bytes(data)
        if len(data) != b - a:
            raise ValueError("nvm slice and data differ in length")
        if self.mem[a:b] == b"\xff" * (b - a):
            cut, keep = self.fs._op("nvm-program", "nvm", len(data))
            self.programs += 1
            if cut:
                k = keep(len(data))
                self.mem[a : a + k] = data[:k]
                if self.fs.junk is not None:  # the rest half-programmed: only a checksum can tell
                    self.mem[a + k : b] = bytes(self.fs.junk & 0xFF for _ in range(b - a - k))
                raise PowerCut()
            self.mem[a:b] = data
            return
        cut, keep = self.fs._op("nvm-erase", "nvm", len(self.mem))
        self.erases += 1
        new = bytearray(self.mem)
        new[a:b] = data
        if cut:
            k = keep(len(new))
            self.mem[:] = new[:k] + b"\xff" * (len(new) - k)
            raise PowerCut()
        self.mem[:] = new

    def survivor(self, fs):
        """The nvm as the next boot sees it, counted by `fs` (a MemFS survivor)."""
        return NorNvm(fs, mem=self.mem)

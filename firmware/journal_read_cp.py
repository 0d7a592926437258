"""Reading a file the nvm journal holds bytes of, without draining it
(firmware/journal_cp.py).

Why: a drain costs CircuitPython's FAT drive a few sector erases (45 ms
each, 400 ms at the datasheet's maximum, interrupts off) however few
entries it holds, and an undo reads the log's last frames back: drained
first, each undo held the board for the drain of everything since the
last one. Read through the journal, an undo writes one entry and erases
nothing. A module of its own, imported at the first such read: its
bytes cost the boot nothing (docs/design.md, "CircuitPython boots").

The file, as a drain would leave it: FAT's bytes up to where the
journal's appends begin, then those appends; or, if the journal wrote
the file whole, its last whole write and the appends after it. Reading
changes nothing on flash.
"""


class JournalReader:
    """A file of `j` (a JournalFS) opened "rb": seek, tell, readinto, read,
    close, as a file. `at` lists, for each journal entry of the file in
    order, its file offset, where its data begins in nvm, and its length
    (three small ints: no object an entry)."""

    def __init__(self, j, path):
        self.j = j
        self.path = path
        self.pos = 0
        self.f = None  # FAT's file, opened at the first read of its part
        at = []
        whole = False
        for kind, p, off, data in j._entries():
            if p != path:
                continue
            if kind == 2:  # a whole write: what came before it is gone
                at = []
                whole = True
            at += (off, j.next - 4 - len(data), len(data))
        self.at = at
        self.fat = 0 if whole else at[0] if at else j.sizes.get(path, 0)  # FAT's part: the bytes before the first append
        self.size = j.sizes.get(path, 0)

    def seek(self, pos, whence=0):
        self.pos = pos + (self.pos if whence == 1 else self.size if whence == 2 else 0)
        return self.pos

    def tell(self):
        return self.pos

    def readinto(self, buf):
        mv = memoryview(buf)
        got = 0
        while got < len(mv) and self.pos < self.size:
            pos = self.pos
            if pos < self.fat:  # FAT's part
                if self.f is None:
                    self.f = self.j.fs.open(self.path, "rb")
                self.f.seek(pos)
                n = self.f.readinto(mv[got : got + min(len(mv) - got, self.fat - pos)])
                if not n:
                    break
            else:
                at = self.at
                i = 0
                while i < len(at) and not at[i] <= pos < at[i] + at[i + 2]:
                    i += 3
                if i == len(at):  # a gap (nothing the journal or FAT holds): the end
                    break
                k = pos - at[i]
                n = min(len(mv) - got, at[i + 2] - k)
                mv[got : got + n] = self.j.nvm[at[i + 1] + k : at[i + 1] + k + n]  # (n >= 1: pos lies in this entry)
            got += n
            self.pos += n
        return got

    def read(self, n=-1):
        if n < 0:
            n = max(0, self.size - self.pos)
        b = bytearray(n)
        return bytes(b[: self.readinto(b)])

    def close(self):
        if self.f is not None:
            self.f.close()
            self.f = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

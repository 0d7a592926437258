"""The effective event log in RAM: compact records, undo = drop the last one.

Records sit back to back in one bytearray, each framed as
[length][record][length] so the log can be walked forwards (refold) and
popped from the end (undo) without a list of objects. The board keeps the
same interface on flash (firmware/storage.py); this one serves replay and
the host.
"""


class RamLog:
    def __init__(self):
        self.buf = bytearray()
        self.count = 0

    def __len__(self):
        return self.count

    def append(self, rec):
        n = len(rec)
        if not 0 < n < 256:
            raise ValueError("record length %d" % n)
        self.buf.append(n)
        self.buf.extend(rec)
        self.buf.append(n)
        self.count += 1

    def pop(self):
        n = self.buf[-1]
        self.buf[len(self.buf) - n - 2 :] = b""
        self.count -= 1

    def records(self, start=0):
        """Yield the records from index `start` on, oldest first, as
        memoryviews (no copies)."""
        mv = memoryview(self.buf)
        i = 0
        k = 0
        end = len(self.buf)
        while i < end:
            n = self.buf[i]
            if k >= start:
                yield mv[i + 1 : i + 1 + n]
            k += 1
            i += n + 2

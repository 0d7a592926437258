"""The power-cut session shared by tests/storage/test_powercut.py (which asserts)
and bench/bench_board.py (which counts): the scripted game of
tests/kit/storage_script.py on the MemFS flash model, its trace of flash
operations, and a MemFS that boots every torn version of each write.

It lives in the kit, not in the test module, so that the bench counts
exactly the cuts the test checks without importing a test file.
"""

import engine_lite

from boardkit.memfs import MemFile, MemFS
from firmware.storage import Store
from tests.kit.storage_script import Shadow, load_events, play, session  # noqa: F401 (Shadow, play: the session's API)

SNAP = 8  # a snapshot every 8 frames, so many snapshot writes are cut too
STEPS = session(load_events())


def archived_events(store):
    out = []
    for gid, _synced in store.archived():
        g = engine_lite.Game()
        for rec in store.records(gid):
            g.log.append(rec)
        out.append(g.events())
    return out


def dry_run():
    fs = MemFS(trace=True)
    play(Store(fs=fs, snapshot_every=SNAP), STEPS, Shadow())
    return fs.trace


TRACE = dry_run()


class ForkFile(MemFile):
    """Before each write, boots every torn version of it: the flash as it
    would be if power died after k of its bytes, k = 0 .. len-1."""

    def write(self, b):
        fs = self.fs
        b = bytes(b)  # a file takes any buffer (the store writes memoryviews)
        if fs.on_torn is not None:
            pos = len(self.data) if "a" in self.mode else self.pos
            for k in range(len(b)):
                s = fs.survivor()
                s.files[self.path][pos : pos + k] = b[:k]
                fs.on_torn(s, fs.ops + 1, k, None)
                s = fs.survivor()  # the rest of the write left as erased flash
                s.files[self.path][pos : pos + len(b)] = b[:k] + b"\xff" * (len(b) - k)
                fs.on_torn(s, fs.ops + 1, k, 0xFF)
        return MemFile.write(self, b)


class ForkFS(MemFS):
    File = ForkFile

    def __init__(self, on_torn):
        MemFS.__init__(self)
        self.on_torn = on_torn

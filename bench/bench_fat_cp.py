"""CircuitPython's CIRCUITPY drive, modeled: what a drain of the nvm journal costs in sector erases.

Why a model: on CircuitPython an erase is the board's one long stall
(45 ms typical, 400 ms at the W25Q16JV's datasheet maximum, interrupts
off), and how many a drain takes depends on how FAT's code reads and
writes the drive, not on the bytes written. The chip bench
(bench/bench_chip_cp.py) counts them on the emulated Pico, in minutes a
game; this counts them in a second, to compare ways of writing.

What runs: the MicroPython Unix port's own FAT (`os.VfsFat`, the oofatfs
CircuitPython's is a fork of) on a block device that behaves as
CircuitPython's raspberrypi port writes CIRCUITPY
(ports/raspberrypi/supervisor/internal_flash.c, supervisor/shared/flash.c):
512-byte blocks written into ONE 4 KB cache sector; a write to another
sector, any read, and a sync (a file's close) write the cached sector
back, which is an erase and its program. The volume is made by the same
port's `VfsFat.mkfs` (FAT12, 1 MB, 512-byte sectors, as CircuitPython's
own format: bench/chip_fat.py). Through it: the real Store behind the real
JournalFS (firmware/), nvm a bytearray; a whole 5-player game of each title
(tests/records), no quiet spell, then its finish at once.

Figures (erases; the chip bench's game also counts nvm's own erases and
CircuitPython's cache writes of its first boot):

* ``fat_append_2100b_erases_frame_by_frame`` / ``_one_write``: 300 frames
  of 7 bytes appended to a new file, one write() each, or all in one
  write() (`journal_cp._Run`);
* ``fat_erases_game_drain_<title>``: the drain of a whole game's journal
  (the log's appends and its last snapshot);
* ``fat_erases_finish_<title>``: the finish after it (the archive's copy,
  its summary, the renames and removes).
"""

import json

from tests.kit.mpy_harness import run_mpy
from tests.kit.storage_script import records

GAMES = {"stalk": "tests/records/stalk-5p-bag.jsonl", "orchids": "tests/records/orchids-5p.jsonl"}

GUEST = """
import os

class CPDrive:
    def __init__(self, blocks):
        self.mem = bytearray(b"\\xff" * (blocks * 512))
        self.lba = -1
        self.cache = bytearray(4096)
        self.erases = 0

    def flush(self):
        if self.lba >= 0:
            self.mem[self.lba : self.lba + 4096] = self.cache
            self.erases += 1
            self.lba = -1

    def readblocks(self, n, buf):
        self.flush()  # internal_flash.c: "we never read out of the cache, so we have to write it if dirty"
        buf[:] = self.mem[n * 512 : n * 512 + len(buf)]

    def writeblocks(self, n, buf):
        for k in range(len(buf) // 512):
            a = (n + k) * 512
            s = a - a % 4096
            if self.lba != s:
                self.flush()
                self.cache[:] = self.mem[s : s + 4096]
                self.lba = s
            self.cache[a - s : a - s + 512] = buf[k * 512 : (k + 1) * 512]

    def ioctl(self, op, arg):
        if op in (2, 3):  # deinit, sync: supervisor_flash_flush
            self.flush()
        if op == 4:
            return len(self.mem) // 512
        if op == 5:
            return 512
        return 0

def drive():
    d = CPDrive(2048)
    os.VfsFat.mkfs(d)
    v = os.VfsFat(d)
    try:
        os.umount("/fat")
    except OSError:
        pass
    os.mount(v, "/fat")
    d.flush()
    d.erases = 0
    return d

out = {}
d = drive()
with open("/fat/a", "ab") as f:
    for i in range(300):
        f.write(bytes([i & 255]) * 7)
d.flush()
out["frame_by_frame"] = d.erases
d = drive()
with open("/fat/a", "ab") as f:
    f.write(bytes(2100))
d.flush()
out["one_write"] = d.erases

from firmware.journal_cp import JournalFS
from firmware.storage import Store

for title, recs in GAMES:
    d = drive()
    st = Store(root="/fat/bk")  # the real flash's os calls (storage._OsFS), on the mounted drive
    st.boot()
    st.fs = JournalFS(st.fs, bytearray(b"\\xff" * 4096))
    st.snapshot_every = st.fs.snapshot_every
    g = st.new_game(bytes(recs[0]))
    for r in recs[1:]:
        st.apply(g, bytes(r))
    d.flush()
    before = d.erases
    st.fs.drain()
    d.flush()
    out["drain_" + title] = d.erases - before
    before = d.erases
    st.finish()
    d.flush()
    out["finish_" + title] = d.erases - before
    assert [bytes(r) for r in st.records(st.game_id)] == [bytes(r) for r in recs]
print(repr(out))
"""


def measure():
    games = [(t, [list(r) for r in records(p)]) for t, p in GAMES.items()]
    r = run_mpy("GAMES = %s\n" % json.dumps(games) + GUEST, heapsize_kb=4096)
    got = eval(r.stdout.strip().splitlines()[-1])
    fig = {
        "fat_append_2100b_erases_frame_by_frame": got["frame_by_frame"],
        "fat_append_2100b_erases_one_write": got["one_write"],
    }
    for t in GAMES:
        fig["fat_erases_game_drain_" + t] = got["drain_" + t]
        fig["fat_erases_finish_" + t] = got["finish_" + t]
    return fig


if __name__ == "__main__":
    print(json.dumps(measure(), indent=1))

"""The Pico's flash as a MicroPython block device, for littlefs in the Unix port.

Guest-side code: it runs INSIDE MicroPython (the Unix port, tests/kit/mpy_harness.py),
never in CPython. Why: the board keeps its games on littlefs (`vfs.VfsLfs2`,
which the Unix port has too), and what littlefs costs (its own CPU work, how
many sectors it erases, how many pages it programs) and what a power cut in
the middle of it leaves behind can only be known by running the real
littlefs on a device with the board's geometry and settings. This module is
that device, with counters, an operation log and a power switch.

What the rp2 port does, read from its source (micropython/micropython):

* ``ports/rp2/rp2_flash.c``: the block size is ``FLASH_SECTOR_SIZE``, 4096 B
  (the erase unit); ``readblocks(n, buf, off)`` is a ``memcpy`` from the
  execute-in-place window (XIP_BASE + storage base + n * 4096 + off);
  ``writeblocks(n, buf, off)`` is ``flash_range_program`` (256-byte pages),
  and without ``off`` (the old protocol) it erases the blocks first;
  ``ioctl`` answers INIT/DEINIT/SYNC with 0, BLOCK_COUNT = storage bytes /
  4096, BLOCK_SIZE = 4096, BLOCK_ERASE(n) = ``flash_range_erase`` of one
  sector; erase and program run with interrupts off and the XIP window
  disabled, so the whole chip waits for them (code runs from that flash).
* ``ports/rp2/mpconfigport.h``: ``MICROPY_HW_FLASH_STORAGE_BYTES`` is
  1408 * 1024 for RPI_PICO: 352 blocks.
* ``ports/rp2/modules/_boot.py``: ``vfs.VfsLfs2(bdev, progsize=256)``,
  ``mkfs`` with the same arguments, mounted at ``/``; every other setting
  is VfsLfs2's default (``extmod/vfs_lfs.c``): readsize 32, lookahead 32
  (bytes: a 256-block window), mtime True (a timestamp attribute written
  with every file change).
* ``extmod/vfs_lfsx.c`` (init_config) sets the rest: block_cycles 100
  (wear levelling: a metadata pair is moved after 100 erases),
  cache_size = 4 * max(readsize, progsize) = 1024 B.

``mount`` below makes exactly that file system. The rp2 board mounts it at
``/``; the Unix port's own files live there, so mount it elsewhere (e.g.
``/flash``) and give the Store ``/flash/bk``: littlefs then sees the
board's paths (``/bk/...``).

API::

    from tests.kit.lfs_flash import Flash, mount, OpLog, READ, PROG, ERASE
    f = Flash()                  # 352 blocks of 4096 B, erased (0xFF), in RAM
    f = Flash(path="flash.img")  # the same on a host file (outside the guest heap)
    fs = mount(f, "/flash")      # mkfs if it holds no file system, then mount
    f.reads, f.read_bytes, f.progs, f.prog_bytes, f.pages, f.erases
    f.ops                        # block operations so far (reads + programs + erases)
    f.log = OpLog()              # or any fn(kind, block, off, nbytes): every op, in order
    f.cut_at(k, torn=0)          # power cut AT op number k (0-based, counted in f.ops)
    f.off                        # True once the cut happened
    f.power_on()                 # the next boot: ops work again, on the surviving bytes
    unmount("/flash")

A power cut at op k: that operation and every later one do not happen
(they return -EIO to littlefs, which raises OSError 5 to the firmware:
the board has stopped). ``torn=t`` makes a cut program a torn one: its
first t bytes land, the rest stays erased. The counters and the log count
only operations that happened. After ``power_on()`` the device holds
exactly the bytes that landed; mount it again to boot on them.

RAM or file: the RAM image is a 1.4 MB bytearray in the guest's heap, so
it needs ``-X heapsize`` of about 2 MB; to run at the Pico's 240 KB heap
give ``path`` (the image lives in a host file, and only a 256-byte page of
0xFF is kept in the heap for erases). Neither allocates per operation.
"""

BLOCK_SIZE = 4096  # rp2_flash.c: FLASH_SECTOR_SIZE, the erase unit
PAGE_SIZE = 256  # the program unit (flash_range_program), and _boot.py's progsize
BLOCKS = 352  # mpconfigport.h: MICROPY_HW_FLASH_STORAGE_BYTES 1408 * 1024 (RPI_PICO)
READSIZE = 32  # vfs_lfs.c defaults, which _boot.py keeps
LOOKAHEAD = 32
MTIME = True

READ = 0
PROG = 1
ERASE = 2
KINDS = ("read", "prog", "erase")

_EIO = 5
# ioctl ops (extmod/vfs.h MP_BLOCKDEV_IOCTL_*)
_INIT = 1
_DEINIT = 2
_SYNC = 3
_BLOCK_COUNT = 4
_BLOCK_SIZE = 5
_BLOCK_ERASE = 6


class Flash:
    """The rp2 port's flash storage as an extended block device (see the
    module docstring)."""

    def __init__(self, blocks=BLOCKS, path=None):
        self.blocks = blocks
        self.size = blocks * BLOCK_SIZE
        self.path = path
        self._ff = b"\xff" * PAGE_SIZE
        if path is None:
            self.mem = bytearray(self.size)
            mv = memoryview(self.mem)
            for i in range(0, self.size, PAGE_SIZE):
                mv[i : i + PAGE_SIZE] = self._ff
            self.file = None
        else:
            self.mem = None
            self.file = open(path, "wb")  # a fresh image: every byte erased
            for i in range(0, self.size, PAGE_SIZE):
                self.file.write(self._ff)
            self.file.close()
            self.file = open(path, "r+b")
        self.reads = 0
        self.read_bytes = 0
        self.progs = 0
        self.prog_bytes = 0
        self.pages = 0
        self.erases = 0
        self.ops = 0
        self.log = None
        self._cut = -1
        self._torn = 0
        self.off = False

    # -- the power switch ------------------------------------------------

    def cut_at(self, k, torn=0):
        """Cut the power at block operation number `k` (counted in `ops`,
        from 0): it and every later operation do not happen; a cut program
        lands its first `torn` bytes. k < 0: no cut."""
        self._cut = k
        self._torn = torn

    def power_on(self):
        """The next boot: no cut armed, operations happen again."""
        self._cut = -1
        self.off = False

    def _dead(self):
        """True if this operation must not happen (the power is, or goes, off now)."""
        if self.off:
            return True
        if self.ops == self._cut:
            self.off = True
            return True
        return False

    # -- the block device protocol ---------------------------------------

    def readblocks(self, n, buf, off=0):
        if self._dead():
            return -_EIO
        a = n * BLOCK_SIZE + off
        nb = len(buf)
        if self.mem is not None:
            buf[:] = memoryview(self.mem)[a : a + nb]
        else:
            self.file.seek(a)
            self.file.readinto(buf)
        self.reads += 1
        self.read_bytes += nb
        self._logged(READ, n, off, nb)
        return 0

    def writeblocks(self, n, buf, off=None):
        if off is None:  # the old protocol: erase the blocks, then program them (as rp2_flash.c)
            for i in range(len(buf) // BLOCK_SIZE):
                r = self._erase(n + i)
                if r:
                    return r
            off = 0
        nb = len(buf)
        if self._dead():
            if self._torn > 0 and self.ops == self._cut:
                self._put(n * BLOCK_SIZE + off, memoryview(buf)[: min(self._torn, nb)])
            return -_EIO
        self._put(n * BLOCK_SIZE + off, buf)
        self.progs += 1
        self.prog_bytes += nb
        self.pages += (off % PAGE_SIZE + nb + PAGE_SIZE - 1) // PAGE_SIZE
        self._logged(PROG, n, off, nb)
        return 0

    def ioctl(self, op, arg):
        if op == _BLOCK_COUNT:
            return self.blocks
        if op == _BLOCK_SIZE:
            return BLOCK_SIZE
        if op == _BLOCK_ERASE:
            return self._erase(arg)
        if op in (_INIT, _DEINIT, _SYNC):
            return 0
        return None

    # -- inside ------------------------------------------------------------

    def _erase(self, n):
        if self._dead():
            return -_EIO
        a = n * BLOCK_SIZE
        for i in range(0, BLOCK_SIZE, PAGE_SIZE):
            self._put(a + i, self._ff)
        self.erases += 1
        self._logged(ERASE, n, 0, BLOCK_SIZE)
        return 0

    def _put(self, a, data):
        if self.mem is not None:
            self.mem[a : a + len(data)] = data
        else:
            self.file.seek(a)
            self.file.write(data)

    def _logged(self, kind, n, off, nb):
        self.ops += 1
        if self.log is not None:
            self.log(kind, n, off, nb)

    def close(self):
        if self.file is not None:
            self.file.close()
            self.file = None


class OpLog:
    """Every operation as (kind, block, off, nbytes) in order; `stall_ms`
    turns it into the time the chip waits for the flash. Allocates a tuple
    per operation: for tests and campaigns; a bench that must not touch the
    heap passes its own fn(kind, block, off, nbytes) as Flash.log."""

    def __init__(self):
        self.ops = []

    def __call__(self, kind, n, off, nb):
        self.ops.append((kind, n, off, nb))

    def count(self, kind):
        return len([1 for op in self.ops if op[0] == kind])

    def stall_ms(self, erase_ms=45.0, page_ms=0.4):
        """Erase and program stalls (the W25Q16JV's typical 45 ms per
        4 KB sector erase, 0.4 ms per 256-byte page program by default);
        reads are XIP memcpy, no stall."""
        t = 0.0
        for kind, _n, off, nb in self.ops:
            if kind == ERASE:
                t += erase_ms
            elif kind == PROG:
                t += page_ms * ((off % PAGE_SIZE + nb + PAGE_SIZE - 1) // PAGE_SIZE)
        return t


def mount(flash, where="/flash", mkfs=True):
    """Mount littlefs on `flash` at `where` with the rp2 port's settings
    (module docstring); format it first if it holds no file system and
    `mkfs`. Returns the VfsLfs2 object."""
    import vfs

    kw = {"readsize": READSIZE, "progsize": PAGE_SIZE, "lookahead": LOOKAHEAD, "mtime": MTIME}
    try:
        fs = vfs.VfsLfs2(flash, **kw)
    except OSError:
        if not mkfs:
            raise
        vfs.VfsLfs2.mkfs(flash, **kw)
        fs = vfs.VfsLfs2(flash, **kw)
    vfs.mount(fs, where)
    return fs


def unmount(where="/flash"):
    import vfs

    vfs.umount(where)

"""The Pico's file system as MicroPython's rp2 port makes it, as a file: a littlefs image.

Why a module of its own: the chip bench (bench/bench_chip.py) writes it
into the emulated flash, and its geometry is a fact of MicroPython's
source that a test can hold (tests/house/test_chip_image.py) without any
firmware image. Read from micropython/micropython at v1.28.0:

* ``ports/rp2/boards/RPI_PICO/mpconfigboard.h``: ``MICROPY_HW_FLASH_STORAGE_BYTES``
  is 1408 * 1024; ``ports/rp2/rp2_flash.c`` puts it at the end of the 2 MiB
  flash (``PICO_FLASH_SIZE_BYTES - MICROPY_HW_FLASH_STORAGE_BYTES``: offset
  0xA0000) in 4096-byte blocks (the sector, the erase unit): 352 blocks.
* ``ports/rp2/modules/_boot.py``: ``vfs.VfsLfs2(bdev, progsize=256)``; the
  rest is VfsLfs2's default (``extmod/vfs_lfs.c``): readsize 32, lookahead 32.
* ``lib/littlefs/lfs2.h``: on-disk version 2.1 (``LFS2_DISK_VERSION``), so
  the image is written at 2.1 whatever littlefs-python's own littlefs is.

Needs littlefs-python (pinned in constraints.txt).
"""

from pathlib import Path

FLASH_BYTES = 2 * 1024 * 1024  # the Pico's W25Q16JV
FS_BYTES = 1408 * 1024
FS_OFFSET = FLASH_BYTES - FS_BYTES  # 0xA0000
BLOCK = 4096
BLOCKS = FS_BYTES // BLOCK  # 352
PROG = 256
READ = 32
LOOKAHEAD = 32
DISK_VERSION = 0x00020001


def new_fs():
    """An empty littlefs with the rp2 port's settings (formatted, mounted)."""
    from littlefs import LittleFS

    return LittleFS(
        block_size=BLOCK,
        block_count=BLOCKS,
        prog_size=PROG,
        read_size=READ,
        lookahead_size=LOOKAHEAD,
        disk_version=DISK_VERSION,
    )


def build(files):
    """{path on the board: bytes} -> the file-system area's bytes (FS_BYTES),
    directories made as the paths need them."""
    fs = new_fs()
    for path in sorted(files):
        parts = path.strip("/").split("/")
        for i in range(1, len(parts)):
            d = "/".join(parts[:i])
            try:
                fs.mkdir(d)
            except FileExistsError:
                pass
        with fs.open("/".join(parts), "wb") as f:
            f.write(files[path])
    return bytes(fs.context.buffer)


def tree_files(root, prefix=""):
    """{board path: bytes} of every file under a directory (e.g. `make firmware`'s bundle)."""
    root = Path(root)
    return {prefix + "/" + p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def read(image):
    """The files of a file-system area's bytes: {board path: bytes}."""
    from littlefs import LittleFS, UserContext

    ctx = UserContext(BLOCK * BLOCKS)
    ctx.buffer[:] = image
    fs = LittleFS(ctx, block_size=BLOCK, block_count=BLOCKS, prog_size=PROG, read_size=READ, lookahead_size=LOOKAHEAD, disk_version=DISK_VERSION)
    out = {}
    for top, _dirs, names in fs.walk("/"):
        for n in names:
            p = top.rstrip("/") + "/" + n
            with fs.open(p, "rb") as f:
                out[p] = f.read()
    return out

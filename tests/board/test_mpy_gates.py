"""Gates for board code (it runs on MicroPython, not CPython):

every file under engine_lite/, firmware/ and boardkit/ must compile with mpy-cross and import
inside a real MicroPython interpreter (the official Unix port, via
tests/kit/mpy_harness.py), from the .mpy files of the `make firmware` bundle.
Files are discovered at collection time, so new modules are gated automatically.
"""

import filecmp
import os

import pytest

from host.build import bundle
from tests.kit.mpy_harness import (
    CPYTHON_ONLY,
    MPY_PACKAGES,
    REPO,
    board_py_files,
    compile_file,
    guest_tree,
    module_name,
    mpy_cross_version,
    mpy_sizes,
    run_mpy,
)


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
    missing = [p for p in MPY_PACKAGES if not (REPO / p).is_dir()]
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
    """Every board module imports inside a real MicroPython, from its .mpy file
    (the bundle's, or for modules the bundle leaves out, the same mpy-cross's)."""
    if module is None:
        return
    reason = _import_skip_reason(module)
    if reason:
        pytest.skip(reason)
    r = run_mpy("import sys, %s\nprint('imported', %r, sys.modules[%r].__file__)" % (module, module, module))
    words = r.stdout.split()
    assert words[:2] == ["imported", module] and words[2].endswith(".mpy"), r.stdout


@pytest.mark.slow
def test_the_guest_runs_the_exact_make_firmware_bundle(tmp_path):
    """The bundle files every MicroPython run starts from are byte for byte
    what `make firmware` writes (host.build.bundle.build), and the helpers added
    next to them never replace one of them."""
    made = tmp_path / "made"
    files = bundle.build("micropython", made)
    guest = guest_tree(tmp_path / "guest")
    for rel in files:
        assert filecmp.cmp(made / rel, guest / rel, shallow=False), rel
    bundle_only = guest_tree(tmp_path / "bundle_only", bundle_only=True)
    got = sorted(p.relative_to(bundle_only).as_posix() for p in bundle_only.rglob("*") if p.is_file())
    assert got == sorted(files)


@pytest.mark.slow
def test_mpy_sizes_cover_every_board_file():
    sizes = mpy_sizes()
    assert sorted(sizes) == FILES
    assert all(n > 0 for n in sizes.values())
    assert "v1.29" in mpy_cross_version()


# ------------------------------------------------------------- harness smoke tests


@pytest.mark.mpy
def test_harness_runs_micropython():
    r = run_mpy("import sys\nprint(1+1)\nprint(sys.implementation.name, sys.implementation.version[:2])")
    assert r.stdout.split() == ["2", "micropython", "(1,", "29)"]


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
def test_harness_timeout_stops_endless_loop():
    with pytest.raises(AssertionError, match="timed out after 2s"):
        run_mpy("while True:\n    pass", timeout=2)


@pytest.mark.mpy
def test_harness_runs_in_a_temporary_copy():
    """A guest writes only into its own copy: neither the repo nor the next run sees it."""
    r = run_mpy("import os\nopen('should_not_exist.txt', 'w').write('x')\nprint(os.getcwd())")
    cwd = r.stdout.strip()
    assert not os.path.exists(cwd) and not (REPO / "should_not_exist.txt").exists()
    r = run_mpy("import os\nprint('should_not_exist.txt' in os.listdir('.'))")
    assert r.stdout.strip() == "False"


@pytest.mark.mpy
def test_heapsize_is_the_interpreters_whole_heap():
    r = run_mpy("import gc\ngc.collect()\nprint(gc.mem_free() + gc.mem_alloc())", heapsize_kb=64)
    assert 60 * 1024 <= int(r.stdout) <= 64 * 1024
    with pytest.raises(AssertionError, match="MemoryError"):
        run_mpy("b = bytearray(64 * 1024)", heapsize_kb=64)


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

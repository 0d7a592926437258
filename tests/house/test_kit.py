"""The test kit's walls: bench/ and the test modules share code only through
tests/kit/, so that a test file can be renamed, split or deleted without
breaking a benchmark or another test (tests/kit/__init__.py)."""

import ast

import pytest

from tests.kit.mpy_harness import REPO

# The bundle's byte budgets have one home, the test that holds the bundle to
# them (docs/design.md); the hardware test reads them from there.
BORROWED = {("tests/packaging/test_hardware.py", "tests.packaging.test_bundle")}


def imported(path):
    """Every module `path` imports (at any depth), and every `from tests...`
    import written in its strings (guest code the harness runs)."""
    tree = ast.parse(path.read_text(), str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                yield a.name
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.module
            for a in node.names:
                yield node.module + "." + a.name
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and "import" in node.value:
            for line in node.value.splitlines():
                words = line.split()
                if words[:1] == ["from"] and len(words) > 1:
                    yield words[1]


def owning_test_module(name):
    """The test module (tests.GROUP.test_x, at any depth) that the dotted
    name `name` is or lies in; None for the kit and the other helpers."""
    parts = name.split(".")
    for i, part in enumerate(parts[1:], 1):
        if part.startswith("test_"):
            return ".".join(parts[: i + 1])
    return None


def imports_of_tests(path):
    rel = path.relative_to(REPO).as_posix()
    return sorted({(rel, m) for m in imported(path) if m == "tests" or m.startswith("tests.")})


def test_bench_imports_only_the_kit_of_the_tests():
    bad = [
        "%s: %s" % pair
        for path in sorted((REPO / "bench").glob("*.py"))
        for pair in imports_of_tests(path)
        if not (pair[1] == "tests.kit" or pair[1].startswith("tests.kit."))
    ]
    assert bad == []


@pytest.mark.slow
def test_no_test_module_imports_another():
    bad = [
        "%s: %s" % pair
        for path in sorted((REPO / "tests").rglob("*.py"))
        for pair in imports_of_tests(path)
        if owning_test_module(pair[1]) and (pair[0], owning_test_module(pair[1])) not in BORROWED
    ]
    assert bad == []


def test_the_checks_see_an_import_of_a_test_module(tmp_path):
    """The walk finds such an import in code and in guest code strings."""
    p = tmp_path / "bench_x.py"
    mod = "tests.storage." + "test_"  # split, so that this file's own strings hold no such import
    p.write_text('import os\nfrom %sstorage import x\nCODE = "from %spowercut import y\\n"\n' % (mod, mod))
    found = [m for m in imported(p) if m.startswith("tests.")]
    assert "tests.storage.test_storage" in found and "tests.storage.test_powercut" in found
    assert {owning_test_module(m) for m in found} == {"tests.storage.test_storage", "tests.storage.test_powercut"}
    assert owning_test_module("tests.kit.app_helpers") is None and owning_test_module("tests.storage") is None


def test_an_unmarked_test_cannot_start_micropython():
    """conftest's guard: this test has no `mpy` mark, so asking the harness
    for MicroPython fails, naming the test, before any process starts."""
    from tests.kit import mpy_harness

    with pytest.raises(AssertionError, match="test_an_unmarked_test_cannot_start_micropython starts MicroPython but is not marked mpy"):
        mpy_harness.run_program("guest.py", REPO)

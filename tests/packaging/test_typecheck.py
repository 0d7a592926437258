"""The board code type-checks against the Raspberry Pi Pico's MicroPython
stubs ("The board code type-checks against the MicroPython stubs
for the Pico (PyPI micropython-rp2-rpi-pico-stubs, pinned) with pyright or
mypy, as part of make test").

How mypy is pointed at the stubs (micropython-stubs docs, "mypy"):
* micropython-stdlib-stubs (a dependency of the Pico stubs) installs a
  reduced typeshed (`stdlib/` with `VERSIONS`, `stubs/`) into
  site-packages: that directory is mypy's --custom-typeshed-dir, so `sys`,
  `json`, `array`... are MicroPython's, not CPython's;
* the Pico stubs themselves (machine, micropython, neopixel, time,
  binascii, gc, rp2, ...) are loose top-level .pyi files in site-packages,
  which mypy will not take from site-packages (and refuses site-packages on
  MYPYPATH), so this test copies exactly the files the wheel's RECORD lists
  (plus the `_mpy_shed` helpers they import) into a temp dir on MYPYPATH.
Configuration: mypy-board.ini (repo root).

Checked: engine_lite/, every firmware/*.py that runs on a Pico, and
boardkit/ (the simulator's board modules, MicroPython code too).
Not checked here: firmware/hw_cp.py (CircuitPython/Blinka, a different
`neopixel`, no Pico stubs apply) and CPython-only firmware modules.
"""

import os
import shutil
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

from tests.kit.mpy_harness import CPYTHON_ONLY, REPO

pytestmark = pytest.mark.slow  # mypy over the board code

NOT_ON_PICO = {"firmware/hw_cp.py"}


def dist_files(name):
    d = metadata.distribution(name)
    return [(Path(d.locate_file(f)), f) for f in d.files or []]


def typeshed_dir():
    for path, rel in dist_files("micropython-stdlib-stubs"):
        if str(rel).replace("\\", "/") == "stdlib/VERSIONS":
            return path.parent.parent
    pytest.fail("micropython-stdlib-stubs has no stdlib/VERSIONS")


def build_stub_dir(dst):
    """The Pico stub files (per the wheel's RECORD) + _mpy_shed, in `dst`."""
    n = 0
    for path, rel in dist_files("micropython-rp2-rpi-pico-stubs"):
        if str(rel).endswith(".pyi"):
            out = dst / rel
            out.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(path, out)
            n += 1
    for path, rel in dist_files("micropython-stdlib-stubs"):
        if str(rel).startswith("_mpy_shed") and str(rel).endswith(".pyi"):
            out = dst / rel
            out.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(path, out)
    assert (dst / "machine.pyi").exists() and n > 20
    return dst


def board_files():
    out = sorted(str(p.relative_to(REPO)) for d in ("firmware", "boardkit") for p in (REPO / d).glob("*.py"))
    keep = []
    for f in out:
        leaf = Path(f).stem
        mod = Path(f).parent.name + "." + leaf
        if f in NOT_ON_PICO or mod in CPYTHON_ONLY or leaf.startswith(("sim", "hw_cpython")):
            continue
        keep.append(f)
    return keep + ["engine_lite"]


@pytest.fixture(scope="module")
def mypy_env(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("mypy")
    stubs = build_stub_dir(tmp / "typings")
    env = dict(os.environ, MYPYPATH=str(stubs))

    def run(targets, cwd=REPO):
        cmd = [
            sys.executable, "-m", "mypy",
            "--config-file", str(REPO / "mypy-board.ini"),
            "--custom-typeshed-dir", str(typeshed_dir()),
            "--cache-dir", str(tmp / "cache"),
            "--no-error-summary", "--hide-error-context",
        ] + targets
        return subprocess.run(cmd, capture_output=True, text=True, cwd=cwd, env=env, timeout=300)

    return run


def test_board_code_typechecks_against_pico_stubs(mypy_env):
    files = board_files()
    assert "firmware/hw_mp.py" in files and "firmware/storage.py" in files
    r = mypy_env(files)
    assert r.returncode == 0, "mypy (Pico stubs) found errors:\n" + r.stdout + r.stderr


def test_the_pico_stubs_are_really_in_effect(mypy_env, tmp_path):
    """Control: code that is fine on CPython but not on a Pico is refused,
    and MicroPython-only API is accepted."""
    (tmp_path / "probe.py").write_text(
        "import machine, time, micropython\n"
        "p = machine.Pin(2, machine.Pin.IN, machine.Pin.PULL_UP)\n"
        "t = time.ticks_diff(time.ticks_ms(), 0)\n"  # MicroPython only: accepted
        "micropython.heap_lock()\n"
        "x = time.monotonic_ns()\n"  # CPython only: refused
        "q = machine.Pin.PULL_SIDEWAYS\n"  # no such constant: refused
    )
    r = mypy_env([str(tmp_path / "probe.py")], cwd=tmp_path)
    errs = [line for line in r.stdout.splitlines() if ": error:" in line]
    assert [e.split(":")[1] for e in errs] == ["5", "6"], r.stdout + r.stderr

"""`make firmware`: "the bundle holds every module the firmware
imports (import-closure check) and nothing else".

Two independent checks: the closure is computed from the source with `ast`
(host/build/bundle.py), and the built MicroPython bundle is then booted far enough
in a REAL MicroPython (the official Unix port, from the bundle's .mpy files only,
with stand-in machine/neopixel) to build the hardware, the store and the app
and run a few steps: a module missing from the bundle fails there.
"""

import ast
import json
import shutil
from pathlib import Path

import pytest

from host.board_sim.micropython_board import copy_stand_ins
from host.build import bundle
from tests.kit.mpy_harness import REPO, run_mpy


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    out = tmp_path_factory.mktemp("bundles")
    return {rt: (out / bundle.OUT_DIRS[rt], bundle.build(rt, out / bundle.OUT_DIRS[rt])) for rt in bundle.RUNTIMES}


def _tree(d):
    return sorted(p.relative_to(d).as_posix() for p in Path(d).rglob("*") if p.is_file())


@pytest.mark.slow
@pytest.mark.parametrize("runtime", bundle.RUNTIMES)
def test_bundle_is_exactly_the_closure_plus_entry_and_pinmap(built, runtime):
    out, files = built[runtime]
    mods, info = bundle.closure(runtime)
    ext = ".mpy" if runtime == "micropython" else ".py"
    expect = {m[: -len(".py")] + ext for m in mods} | {bundle.PINMAP}
    expect |= {"main.py"} if runtime == "micropython" else {"code.py", "boot.py", "lib/neopixel.py"}
    assert set(_tree(out)) == expect
    assert set(files) == expect
    assert all(files[r] == (out / r).stat().st_size for r in files)


@pytest.mark.slow
def test_what_is_left_out_and_why(built):
    mp = set(_tree(built["micropython"][0]))
    cp = set(_tree(built["circuitpython"][0]))
    # host-only: engine_lite.score imports it lazily, the board never scores a table
    assert "engine_lite/table_score.mpy" not in mp and "engine_lite/table_score.py" not in cp
    assert "firmware/hw_mp.mpy" in mp and "firmware/hw_cp.mpy" not in mp and "firmware/hw_sim.mpy" not in mp
    assert "firmware/hw_cp.py" in cp and "firmware/hw_mp.py" not in cp and "firmware/hw_sim.py" not in cp
    # test and simulator helpers that nothing on the board imports
    for name in ("memfs", "script"):
        assert "firmware/%s.mpy" % name not in mp and "firmware/%s.py" % name not in cp
    for rt in bundle.RUNTIMES:
        _, info = bundle.closure(rt)
        assert set(info["excluded"]) <= set(bundle.EXCLUDE[rt])


@pytest.mark.slow
@pytest.mark.parametrize("runtime", bundle.RUNTIMES)
def test_excluded_modules_are_only_ever_imported_lazily(runtime):
    """Leaving a module out is safe only if nothing imports it at module level."""
    for rel in sorted(str(p.relative_to(REPO)) for pkg in bundle.PACKAGES for p in (REPO / pkg).rglob("*.py")):
        for mod, lazy, line in bundle.imports_of(rel):
            if mod in bundle.EXCLUDE[runtime]:
                assert lazy, "%s:%d imports %s at module level" % (rel, line, mod)


def test_micropython_bundle_is_armv6m_mpy_and_the_entry_is_source(built):
    out, files = built["micropython"]
    for rel in files:
        if rel.endswith(".mpy"):
            head = (out / rel).read_bytes()[:4]
            assert head[0:1] == b"M" and head[1] == 6, rel  # .mpy format 6
            # mpy-cross 1.29 marks the arch only when a file holds native code (@micropython.native):
            # plain bytecode stays arch-neutral; native code would be armv6m (MP_NATIVE_ARCH_ARMV6M = 2)
            assert head[2] >> 2 in (0, 2), "%s: arch %d is not the Pico's" % (rel, head[2] >> 2)
    entry = (out / "main.py").read_text()
    assert "import firmware.main" in entry
    ast.parse(entry)


@pytest.mark.slow
def test_circuitpython_bundle_is_source_with_boot_and_neopixel(built):
    out, files = built["circuitpython"]
    mods, _ = bundle.closure("circuitpython")
    version = bundle.firmware_version()
    for rel in mods:  # the sources as they are, but for the host's half of a shared module and the version stamp
        assert (out / rel).read_text() == bundle.board_source(rel, mods, version=version)
        if rel not in bundle.HOST_SIDE and rel != bundle.VERSION_STAMP[0]:
            assert (out / rel).read_text() == (REPO / rel).read_text()
    for rel in ("code.py", "boot.py", "lib/neopixel.py"):
        ast.parse((out / rel).read_text(), rel)
    boot = (out / "boot.py").read_text()
    assert "usb_cdc.enable(console=True, data=True)" in boot and 'storage.remount("/", readonly=False)' in boot
    pinmap = json.loads((out / bundle.PINMAP).read_text())
    assert pinmap["boards"]["feather_rp2040"]["buttons"]["menu"]  # boot.py reads it


def test_pinmap_ships_each_runtimes_boards_with_their_wiring_unchanged(built):
    full = json.loads((REPO / bundle.PINMAP).read_text())["boards"]
    for rt in bundle.RUNTIMES:
        shipped = json.loads((built[rt][0] / bundle.PINMAP).read_text())["boards"]
        assert sorted(shipped) == sorted(n for n, spec in full.items() if spec["runtime"] == rt)
        for name, spec in shipped.items():
            assert spec == {k: v for k, v in full[name].items() if k not in ("valid_pins", "notes")}
            assert spec["buttons"] == full[name]["buttons"] and spec["pixel_pin"] == full[name]["pixel_pin"]


@pytest.mark.slow
def test_bundle_bytes_for_the_bench(built):
    _, files = built["micropython"]
    n = bundle.bundle_bytes()
    assert isinstance(n, int) and n > 10_000
    assert n == sum(v for r, v in files.items() if r.endswith(".mpy"))


# The budgets of docs/design.md (bytes on flash are exact, not a timing): the board
# bundle <= 48 KB of .mpy, engine_lite's share <= 16 KB.
BUNDLE_BUDGET = 48 * 1024
ENGINE_BUDGET = 16 * 1024


def test_the_bundle_fits_its_flash_budget(built):
    _, files = built["micropython"]
    mpy = {r: v for r, v in files.items() if r.endswith(".mpy")}
    total = sum(mpy.values())
    engine = sum(v for r, v in mpy.items() if r.startswith("engine_lite/"))
    assert total <= BUNDLE_BUDGET, "board bundle %d B > %d B" % (total, BUNDLE_BUDGET)
    assert engine <= ENGINE_BUDGET, "engine_lite %d B > %d B" % (engine, ENGINE_BUDGET)


@pytest.mark.slow
def test_board_code_has_no_assert_for_mpy_cross_O3_to_strip():
    """The bundle is compiled with -O3 (host/build/bundle.py OPT), which drops
    `assert` statements: board code must not rely on one."""
    found = []
    for d in ("engine_lite", "firmware"):
        for path in sorted((REPO / d).glob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                if isinstance(node, ast.Assert):
                    found.append("%s:%d" % (path.relative_to(REPO), node.lineno))
    assert found == []


# ---------------------------------------------------------- the closure rules


def _tree_with(tmp_path, files):
    for rel, src in files.items():
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(src)
    return tmp_path


def test_closure_follows_lazy_and_relative_imports(tmp_path):
    root = _tree_with(tmp_path, {
        "engine_lite/__init__.py": "def score():\n    from engine_lite.table_score import s\n",
        "engine_lite/table_score.py": "import dataclasses\n",
        "firmware/__init__.py": "",
        "firmware/main.py": "import engine_lite\nfrom . import ring\ndef main():\n    from firmware.hw import make\n",
        "firmware/ring.py": "try:\n    from micropython import const\nexcept ImportError:\n    pass\n",
        "firmware/hw.py": "def make():\n    import machine\n    import board\n",
        "firmware/unused.py": "",
    })
    mods, info = bundle.closure("micropython", root=root)
    assert mods == ["engine_lite/__init__.py", "firmware/__init__.py", "firmware/hw.py", "firmware/main.py", "firmware/ring.py"]
    assert info["excluded"] == {"engine_lite.table_score": bundle.EXCLUDE["micropython"]["engine_lite.table_score"]}
    assert info["runtime"] == ["machine", "micropython"]  # `board` is CircuitPython's, in lazy code: tolerated


def test_closure_refuses_a_module_level_import_of_an_excluded_module(tmp_path):
    root = _tree_with(tmp_path, {
        "firmware/__init__.py": "",
        "firmware/main.py": "import firmware.hw_sim\n",
        "firmware/hw_sim.py": "",
    })
    with pytest.raises(bundle.BundleError, match="hw_sim at module level"):
        bundle.closure("micropython", root=root)


@pytest.mark.parametrize("src, word", [("import dataclasses\n", "dataclasses"), ("def f():\n    import pathlib\n", "pathlib"),
                                       ("import board\n", "board"), ("from firmware import nothere\nimport firmware.nothere\n", "nothere")])
def test_closure_refuses_imports_the_board_cannot_satisfy(tmp_path, src, word):
    root = _tree_with(tmp_path, {"firmware/__init__.py": "", "firmware/main.py": src})
    if word == "pathlib":  # lazy CPython-only import: tolerated (code the board never runs)
        bundle.closure("micropython", root=root)
        return
    with pytest.raises(bundle.BundleError, match=word):
        bundle.closure("micropython", root=root)


def test_the_board_gets_the_codec_without_the_hosts_half(built):
    """One codec module for both sides; the board never sends a
    request nor reads a reply, so its copy leaves those definitions out
    (~600 B of the 48 KB budget) and keeps everything the board calls."""
    out, _ = built["circuitpython"]  # the same cut, as readable source
    defined = {n.name for n in ast.parse((out / "firmware/codec.py").read_text()).body if isinstance(n, ast.FunctionDef)}
    assert not defined & set(bundle.HOST_SIDE["firmware/codec.py"])
    assert {"encode", "reply", "events", "push", "events_body", "parse_request", "prefix_crc"} <= defined


CODEC = "def encode(p):\n    return p\n\n\ndef request(q):\n    return encode(q)\n"


@pytest.mark.parametrize("user, word", [
    ("from firmware import codec\ndef f():\n    return codec.request(1)\n", "firmware/main.py uses firmware.codec.request"),
    ("from firmware.codec import request\n", "firmware/main.py uses firmware.codec.request"),
])
def test_a_board_module_using_the_hosts_half_is_refused(tmp_path, monkeypatch, user, word):
    root = _tree_with(tmp_path, {"firmware/__init__.py": "", "firmware/codec.py": CODEC, "firmware/main.py": user})
    monkeypatch.setattr(bundle, "HOST_SIDE", {"firmware/codec.py": ("request",)})
    with pytest.raises(bundle.BundleError, match=word):
        bundle.board_source("firmware/codec.py", ["firmware/codec.py", "firmware/main.py"], root=root)


def test_host_side_names_must_exist(tmp_path, monkeypatch):
    root = _tree_with(tmp_path, {"firmware/__init__.py": "", "firmware/codec.py": CODEC})
    monkeypatch.setattr(bundle, "HOST_SIDE", {"firmware/codec.py": ("request", "gone")})
    with pytest.raises(bundle.BundleError, match="gone"):
        bundle.board_source("firmware/codec.py", ["firmware/codec.py"], root=root)
    monkeypatch.setattr(bundle, "HOST_SIDE", {"firmware/codec.py": ("request",)})
    assert bundle.board_source("firmware/codec.py", ["firmware/codec.py"], root=root) == "def encode(p):\n    return p\n\n\n"


def test_missing_entry_is_a_clear_error(tmp_path):
    root = _tree_with(tmp_path, {"firmware/__init__.py": ""})
    with pytest.raises(bundle.BundleError, match="firmware/main.py"):
        bundle.closure("micropython", root=root)


# ---------------------------------------------- the bundle in real MicroPython

BOOT = """
import sys
sys.path.append('_stubs')
from firmware.main import make_link
from firmware.hw import make_hw
from firmware.storage import Store
from firmware.app import App
from memfs import MemFS
hw = make_hw('pico', 'micropython')
store = Store('/bk', fs=MemFS())
app = App(hw, store, clock=hw.ticks_ms)
for i in range(5):
    app.step()
app.describe()
import machine
print('pins', sorted(p.id for p in machine.Pin.made))
print('screen', app.screen)
print('mods', sorted(k for k in sys.modules if k.split('.')[0] in ('engine_lite', 'firmware')))
"""


@pytest.mark.mpy
def test_the_micropython_bundle_boots_the_app_in_real_micropython(built, tmp_path):
    """From the bundle's .mpy files alone (plus stand-ins for machine/neopixel
    and an in-memory flash): hardware on the pin map's pins, store, app."""
    root = tmp_path / "board"
    shutil.copytree(built["micropython"][0], root)
    stubs = root / "_stubs"
    stubs.mkdir()
    copy_stand_ins(stubs)
    shutil.copy(REPO / "firmware" / "memfs.py", stubs / "memfs.py")
    r = run_mpy(BOOT, tree=root)
    lines = dict(line.split(" ", 1) for line in r.stdout.strip().splitlines())
    spec = json.loads((REPO / bundle.PINMAP).read_text())["boards"]["pico"]
    want = sorted(int(p[2:]) for p in list(spec["buttons"].values()) + [spec["pixel_pin"]])
    assert lines["pins"] == str(want)
    assert lines["screen"].strip()
    loaded = set(ast.literal_eval(lines["mods"]))
    shipped = {m for m in (bundle.closure("micropython")[0])}
    shipped = {m[: -len(".py")].replace("/", ".").replace(".__init__", "") for m in shipped}
    assert loaded <= shipped


@pytest.mark.slow
def test_make_firmware_prints_sizes_and_what_it_left_out(tmp_path, capsys):
    assert bundle.main(["--out", str(tmp_path), "--runtime", "micropython"]) == 0
    out = capsys.readouterr().out
    assert "micropython bundle" in out and "total" in out and "firmware/app.mpy" in out
    assert "left out engine_lite.table_score" in out
    assert (tmp_path / "firmware-micropython" / "main.py").is_file()
    make = (REPO / "Makefile").read_text()
    assert "firmware:" in make and "-m host.build.bundle" in make


@pytest.mark.mpy
def test_the_bundle_is_stamped_with_the_package_version(built, tmp_path):
    """One version everywhere: the board's hello (`fw`) in the built .mpy
    bundle, run in a real MicroPython, is the package's version (the source
    itself says "0": the simulator and tests run unstamped)."""
    from host import __version__

    assert bundle.firmware_version() == __version__
    r = run_mpy("from firmware import link\nprint(link.AppBoard(None, None, uid='x').fw)", tree=built["micropython"][0])
    assert r.stdout.strip() == __version__
    cp = (built["circuitpython"][0] / bundle.VERSION_STAMP[0]).read_text()
    assert 'fw="%s"' % __version__ in cp and 'fw="0"' not in cp
    assert 'fw="0"' in (REPO / bundle.VERSION_STAMP[0]).read_text()


def test_a_missing_version_placeholder_fails_the_build(tmp_path):
    with pytest.raises(bundle.BundleError, match="exactly once"):
        bundle.stamp(bundle.VERSION_STAMP[0], "def f(fw='0'):\n    pass\n", "1.2.3")
    with pytest.raises(bundle.BundleError, match="found 2"):
        bundle.stamp(bundle.VERSION_STAMP[0], 'a(fw="0")\nb(fw="0")\n', "1.2.3")
    assert bundle.stamp("firmware/app.py", 'x(fw="0")\n', "1.2.3") == 'x(fw="0")\n'


@pytest.mark.slow
def test_without_the_circuitpython_driver_all_builds_micropython_and_says_it_skipped(tmp_path, monkeypatch, capsys):
    """An installed wheel has no Adafruit driver unless asked for: `bloomkeeper
    firmware` still builds the MicroPython bundle, and says in one line why the
    CircuitPython one is missing; asked for by name, it is a one-line error."""
    from host import cli

    monkeypatch.setattr(bundle, "CP_LIBS", {"no_such_driver_for_this_test": "adafruit-circuitpython-nothing"})
    assert cli.main(["firmware", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "circuitpython bundle: skipped, Adafruit's no_such_driver_for_this_test driver is not installed" in out
    assert (tmp_path / "firmware-micropython" / "main.py").is_file()
    assert not (tmp_path / "firmware-circuitpython").exists()
    with pytest.raises(SystemExit) as e:
        cli.main(["firmware", "--out", str(tmp_path), "--runtime", "circuitpython"])
    err = capsys.readouterr().err
    assert e.value.code == 2 and err.count("\n") == 1 and "bloomkeeper[circuitpython]" in err

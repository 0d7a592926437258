"""The board bundle as a ROMFS image (host/build/romfs.py, `make romfs`).

A firmware with a ROMFS partition runs .mpy bytecode in place from flash
instead of copying it into the heap (hardware/README.md, "Bytecode in
flash"). Checked here in the real MicroPython (the Unix port has
vfs.VfsRom): the image holds exactly the bundle's files, and a whole
5-player game of each title, imported from the mounted image with nothing
of the bundle on the normal path, ends with the same results as in CPython.
"""

import zlib

import pytest

from host.build import bundle, romfs
from tests.kit.button_scripts import FULL_GAMES, cpython_result, load_events
from tests.kit.mpy_harness import REPO, ROMFS_MOUNT, bundle_dir, romfs_tree, run_mpy

# Lists every file of the mounted image: path, size, crc32 of its bytes.
LIST_ROM = """
import binascii, os
def walk(d):
    for name, kind, *_ in os.ilistdir(d):
        p = d + '/' + name
        if kind == 0x4000:
            walk(p)
        else:
            with open(p, 'rb') as f:
                b = f.read()
            print('FILE', p[len('/rom/'):], len(b), binascii.crc32(b))
walk('/rom')
"""

# After the game: where every board module came from.
WHERE_FROM = """
for name in sorted(sys.modules):
    if name.split('.')[0] in ('engine_lite', 'firmware'):
        print('FROM', name, sys.modules[name].__file__)
"""


@pytest.mark.slow
def test_image_is_a_romfs_image_of_the_bundle_dir(tmp_path):
    out = tmp_path / "b.romfs"
    bundle_out, data = romfs.build(out, tmp_path / "build")
    assert data.startswith(romfs.MAGIC)
    assert out.read_bytes() == data
    assert data == romfs.image_of(bundle_out)  # deterministic: the same tree, the same image
    assert sorted(p.relative_to(bundle_out).as_posix() for p in bundle_out.rglob("*") if p.is_file()) == sorted(
        bundle.build("micropython", tmp_path / "again"))


@pytest.mark.mpy
def test_mounted_image_holds_exactly_the_bundle_files(tmp_path):
    src = bundle_dir() / "bundle"  # the `make firmware` bundle the harness built
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "bundle.romfs").write_bytes(romfs.image_of(src))
    r = run_mpy(LIST_ROM, setup=ROMFS_MOUNT, tree=tmp_path / "t")
    got = sorted(line.split()[1:] for line in r.stdout.splitlines() if line.startswith("FILE"))
    want = sorted([p.relative_to(src).as_posix(), str(p.stat().st_size), str(zlib.crc32(p.read_bytes()))]
                  for p in src.rglob("*") if p.is_file())
    assert got == want and any(g[0] == "engine_lite/game.mpy" for g in got)


@pytest.mark.mpy
def test_the_board_reads_its_pin_map_from_the_image(tmp_path):
    """firmware/hw.py finds pinmap.json next to itself: /rom/firmware/ on a ROMFS."""
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "bundle.romfs").write_bytes(romfs.image_of(bundle_dir() / "bundle"))
    r = run_mpy("from firmware import hw\nprint('PINMAP', hw.pinmap_path(), hw.board_spec('pico')['runtime'])",
                setup=ROMFS_MOUNT, tree=tmp_path / "t")
    assert "PINMAP /rom/firmware/pinmap.json micropython" in r.stdout


@pytest.mark.mpy
@pytest.mark.parametrize("key,record,script_of", FULL_GAMES, ids=[g[0] for g in FULL_GAMES])
def test_full_game_from_the_mounted_image_equals_cpython(tmp_path, key, record, script_of):
    text = script_of(load_events(REPO / record))
    tree = romfs_tree(tmp_path / "t")
    assert not (tree / "engine_lite").exists() and not (tree / "firmware").exists()
    (tree / "gestures.txt").write_text(text)
    code = ("from tests.kit.game_driver import start, step, finish\nstart('gestures.txt')\n"
            "while step():\n    pass\nfinish()\n" + WHERE_FROM)
    r = run_mpy(code, setup=ROMFS_MOUNT, tree=tree, timeout=600)
    lines = r.stdout.splitlines()
    assert [x for x in lines if x.startswith("RESULT")] == [cpython_result(text)]
    where = dict(x.split()[1:] for x in lines if x.startswith("FROM"))
    assert {"engine_lite", "engine_lite.game", "firmware.app", "firmware.link", "firmware.storage"} <= set(where)
    assert all(f.startswith("/rom/") for f in where.values()), where


def test_a_missing_bundle_dir_is_one_line(tmp_path):
    with pytest.raises(bundle.BundleError, match="is not a directory"):
        romfs.image_of(tmp_path / "nothing")


@pytest.mark.slow
def test_an_unwritable_image_path_is_one_line_and_exit_2(tmp_path, capsys):
    (tmp_path / "file").write_text("")
    assert romfs.main(["--out", str(tmp_path / "file" / "x.romfs"), "--build", str(tmp_path / "build")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("romfs: cannot write %s" % (tmp_path / "file"))

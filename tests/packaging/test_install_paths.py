"""MicroPython's install paths list exactly what `make firmware` ships.

host/build/manifest.py is the one list (freezing reads it as it is, and
tests/packaging/test_manifest.py holds it to the firmware's imports and to what
MicroPython's build freezes); package.json (`mpremote mip install`) is
written from it by host/build/install_paths.py and checked here against a
bundle really built: the committed file is the generated one, and mip's file
list is the bundle's file list (sources for .mpy, the entry for main.py).
"""

import json

import pytest

from host import __version__
from host.build import bundle, install_paths
from tests.kit.mpy_harness import REPO


@pytest.fixture(scope="module")
def shipped(tmp_path_factory):
    """The files of a built MicroPython bundle, as their source paths."""
    out = tmp_path_factory.mktemp("bundle") / "b"
    files = bundle.build("micropython", out)
    return {rel[: -len(".mpy")] + ".py" if rel.endswith(".mpy") else rel for rel in files}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(install_paths.TEXTS))
def test_the_committed_file_is_the_generated_one(name):
    assert (REPO / name).read_text() == install_paths.TEXTS[name](), (
        "%s is out of date: python -m host.build.install_paths --write" % name)


@pytest.mark.slow
def test_package_json_lists_exactly_the_bundle_files(shipped):
    doc = json.loads((REPO / install_paths.PACKAGE_JSON).read_text())
    assert doc["version"] == __version__ and doc["deps"] == []
    dests = [d for d, _ in doc["urls"]]
    assert len(dests) == len(set(dests))
    assert set(dests) == shipped
    for dest, src in doc["urls"]:
        assert (REPO / src).is_file(), src  # mip fetches it relative to package.json
        if dest == "main.py":
            assert (REPO / src).read_text() == bundle.ENTRY_SRC
        else:
            assert src == dest


def test_the_check_says_which_file_is_stale(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(bundle, "ROOT", tmp_path)
    monkeypatch.setattr(install_paths, "TEXTS", {"package.json": lambda: "x\n"})
    assert install_paths.main([]) == 2
    assert "package.json out of date" in capsys.readouterr().err
    assert install_paths.main(["--write"]) == 0 and (tmp_path / "package.json").read_text() == "x\n"
    assert install_paths.main([]) == 0


class _Board:
    """What mpremote's mip asks of a board's file system, kept in a dict."""

    def __init__(self):
        self.files, self.dirs = {}, {"/"}

    def fs_exists(self, path):
        return path in self.dirs or path in self.files

    def fs_mkdir(self, path):
        self.dirs.add(path)

    def fs_writefile(self, path, data, progress_callback=None):
        self.files[path] = data


@pytest.mark.slow
def test_mpremote_mip_installs_every_bundle_file_from_a_clone(shipped, capsys):
    """mpremote's own mip code reads our package.json from a clone (its
    relative URLs resolved against the file's directory) and writes each
    file: the board's file system is the only stand-in."""
    mip = pytest.importorskip("mpremote.mip")
    board = _Board()
    mip._install_json(board, str(REPO / install_paths.PACKAGE_JSON), "", "/", None, False)
    written = {p.lstrip("/") for p in board.files}
    assert written == shipped
    assert board.files["//main.py"] == (REPO / install_paths.ENTRY).read_bytes()
    assert board.files["//firmware/app.py"] == (REPO / "firmware" / "app.py").read_bytes()

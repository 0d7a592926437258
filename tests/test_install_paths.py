"""MicroPython's install paths list exactly what `make firmware` ships.

The bundle (host/build/bundle.py) is the one source of truth; package.json
(`mpremote mip install`) and manifest.py (freezing) are written from it by
host/build/install_paths.py and checked here against a bundle really built:
the committed files are the generated ones, mip's file list is the bundle's
file list (sources for .mpy, the entry for main.py), and manifest.py, run
with the manifest functions MicroPython's build gives it, freezes exactly
the bundle's modules with this version.
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


def _run_manifest(text):
    """What manifest.py asks MicroPython's build to do, recorded."""
    seen = {"metadata": [], "include": [], "package": [], "module": []}
    env = {
        "metadata": lambda **kw: seen["metadata"].append(kw),
        "include": lambda path, **kw: seen["include"].append(path),
        "package": lambda path, files=None, base_path=".", opt=None: seen["package"].append((path, files, base_path, opt)),
        "module": lambda path, base_path=".", opt=None: seen["module"].append((path, base_path, opt)),
    }
    exec(compile(text, "manifest.py", "exec"), env)
    return seen


@pytest.mark.slow
def test_manifest_freezes_exactly_the_bundle_modules(shipped):
    seen = _run_manifest((REPO / install_paths.MANIFEST).read_text())
    assert [m["version"] for m in seen["metadata"]] == [__version__]
    assert seen["include"] == ["$(PORT_DIR)/boards/manifest.py"]  # the port's neopixel driver stays frozen
    assert seen["module"] == []
    frozen = set()
    for path, files, base_path, opt in seen["package"]:
        assert base_path == "." and opt == 3  # -O3, as the bundle's mpy-cross
        frozen |= {"%s/%s" % (path, f) for f in files}
        for f in files:
            assert (REPO / path / f).is_file()
    # everything the bundle ships but the two files a firmware cannot hold
    assert frozen == shipped - {"main.py", bundle.PINMAP}


def test_a_frozen_firmware_reads_its_pin_map_from_the_top_of_the_file_system(monkeypatch):
    """Frozen, firmware/hw.py names itself .frozen/firmware/hw.py; the manifest
    tells the user to copy the pin map to /pinmap.json, and that is where it looks."""
    from firmware import hw

    monkeypatch.setattr(hw, "__file__", ".frozen/firmware/hw.py")
    assert hw.pinmap_path() == "/pinmap.json"
    assert "cp firmware/pinmap.json :pinmap.json" in (REPO / install_paths.MANIFEST).read_text()
    monkeypatch.setattr(hw, "__file__", "firmware/hw.py")  # the file system, as `flash` copies it
    assert hw.pinmap_path() == "firmware/pinmap.json"


def test_the_check_says_which_file_is_stale(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(bundle, "ROOT", tmp_path)
    monkeypatch.setattr(install_paths, "TEXTS", {"manifest.py": lambda: "x\n"})
    assert install_paths.main([]) == 2
    assert "manifest.py out of date" in capsys.readouterr().err
    assert install_paths.main(["--write"]) == 0 and (tmp_path / "manifest.py").read_text() == "x\n"
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

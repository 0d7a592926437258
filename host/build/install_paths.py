"""MicroPython's own install paths for the board code: `package.json` (for
`mpremote mip install`) and `manifest.py` (for freezing the code into a
MicroPython firmware), both at the top of the repository.

One source of truth: the files `make firmware` ships (host/build/bundle.py:
the import closure of firmware/main, the pin map and the entry file). This
module writes both files from it (`python -m host.build.install_paths
--write`), and tests/test_install_paths.py holds the committed files to the
bundle, so neither can list a module the bundle leaves out, or miss one.

What each path gets, and why it differs from `bloomkeeper flash`:

* mip copies the sources (.py, not .mpy: mip fetches files as they are in
  the repository), so the board compiles them at import, in RAM; the full pin
  map; main.py from host/build/board_entry.py. Unstamped, the hello's
  firmware version is "0" (`doctor` says the version is unknown).
* Freezing compiles the modules into the firmware image (their bytecode then
  runs from flash and costs no heap to load: the way to a small heap). A
  frozen firmware holds only modules, so main.py and the pin map still go
  onto the file system, the pin map as /pinmap.json (firmware/hw.py looks
  there when frozen; a /firmware directory would shadow the frozen package);
  the manifest says how. It includes the
  port's own manifest first, because a FROZEN_MANIFEST replaces the board's
  default one, which freezes the `neopixel` driver the firmware imports.
"""

import argparse
import json
import sys
from pathlib import Path

from host.build import bundle

PACKAGE_JSON = "package.json"
MANIFEST = "manifest.py"
ENTRY = "host/build/board_entry.py"  # where main.py comes from (bundle.ENTRY_FILE)


def shipped_sources(root=bundle.ROOT):
    """The modules the MicroPython bundle ships, as source paths ("firmware/app.py")."""
    mods, _ = bundle.closure("micropython", root)
    return mods


def package_json(root=bundle.ROOT):
    """package.json for mpremote mip: every file of the bundle, fetched from
    the repository by a URL relative to this file (mip resolves those against
    the place it read package.json from: github:OWNER/REPO or a local clone)."""
    urls = [[rel, rel] for rel in shipped_sources(root)]
    urls.append([bundle.PINMAP, bundle.PINMAP])
    urls.append(["main.py", ENTRY])
    doc = {"urls": urls, "deps": [], "version": bundle.firmware_version()}
    return json.dumps(doc, indent=2) + "\n"


def manifest_py(root=bundle.ROOT):
    """manifest.py for freezing (micropython-lib's manifest functions)."""
    by_package = {}
    for rel in shipped_sources(root):
        pkg, name = rel.split("/", 1)
        by_package.setdefault(pkg, []).append(name)
    lines = [
        "# Bloomkeeper's board code, frozen into a MicroPython firmware (micropython-lib",
        "# manifest conventions). Written by `python -m host.build.install_paths --write`",
        "# from the modules `make firmware` ships; tests/test_install_paths.py holds it to them.",
        "#",
        "# With MicroPython's source: make -C ports/rp2 BOARD=RPI_PICO FROZEN_MANIFEST=$PWD/manifest.py",
        "# A firmware holds only modules: after flashing it, put the entry and the pin map",
        "# on the file system (the pin map at the top: a /firmware directory there would",
        "# shadow the frozen package): mpremote cp host/build/board_entry.py :main.py + cp firmware/pinmap.json :pinmap.json",
        'metadata(version="%s", description="Bloomkeeper: table companion for Stalk Exchange and Oh My. Orchids!")'
        % bundle.firmware_version(),
        "",
        "# The port's own frozen modules (asyncio, neopixel, ...): a FROZEN_MANIFEST replaces them otherwise.",
        'include("$(PORT_DIR)/boards/manifest.py")',
        "",
    ]
    for pkg in sorted(by_package):
        lines.append('package("%s", files=(' % pkg)
        lines += ['    "%s",' % n for n in by_package[pkg]]
        lines.append('), base_path=".", opt=3)')
    return "\n".join(lines) + "\n"


TEXTS = {PACKAGE_JSON: package_json, MANIFEST: manifest_py}


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m host.build.install_paths",
                                 description="Write (or check) package.json and manifest.py from the bundle's files.")
    ap.add_argument("--write", action="store_true", help="write them at the top of the repository")
    args = ap.parse_args(argv)
    stale = []
    for name, make in TEXTS.items():
        path = Path(bundle.ROOT, name)
        text = make()
        if args.write:
            path.write_text(text)
            sys.stdout.write("wrote %s\n" % path)
        elif not path.is_file() or path.read_text() != text:
            stale.append(name)
    if stale:
        sys.stderr.write("install_paths: %s out of date: python -m host.build.install_paths --write\n" % ", ".join(stale))
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())

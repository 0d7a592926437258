"""MicroPython's own install paths for the board code: `package.json` at the
top of the repository (for `mpremote mip install`), and
host/build/manifest.py itself (for freezing the code into a MicroPython
firmware).

One source of truth: host/build/manifest.py, the list of what ships, which
`make firmware` builds from too (host/build/bundle.py). This module writes
package.json from it (`python -m host.build.install_paths --write`), and
tests/packaging/test_install_paths.py holds the committed file to it, so mip cannot
fetch a module the bundle leaves out, or miss one.

What each path gets, and why it differs from `bloomkeeper flash`:

* mip copies the sources (.py, not .mpy: mip fetches files as they are in
  the repository), so the board compiles them at import, in RAM; the full pin
  map; main.py from host/build/board_entry.py. Unstamped, the hello's
  firmware version is "0" (`doctor` says the version is unknown).
* Freezing compiles the modules into the firmware image (their bytecode then
  runs from flash and costs no heap to load: the way to a small heap):
  `make uf2` (host/build/uf2.py) freezes this same manifest, the entry and
  the pin map into one .uf2, so nothing goes on the file system but the
  games.
"""

import argparse
import json
import sys
from pathlib import Path

from host.build import bundle

PACKAGE_JSON = "package.json"
ENTRY = "host/build/board_entry.py"  # where main.py comes from (bundle.ENTRY_FILE)


def shipped_sources(root=bundle.ROOT):
    """The modules the MicroPython bundle ships, as source paths ("firmware/app.py"): the manifest's."""
    return bundle.shipped("micropython", root=root)


def package_json(root=bundle.ROOT):
    """package.json for mpremote mip: every file of the bundle, fetched from
    the repository by a URL relative to this file (mip resolves those against
    the place it read package.json from: github:OWNER/REPO or a local clone)."""
    urls = [[rel, rel] for rel in shipped_sources(root)]
    urls.append([bundle.PINMAP, bundle.PINMAP])
    urls.append(["main.py", ENTRY])
    doc = {"urls": urls, "deps": [], "version": bundle.firmware_version()}
    return json.dumps(doc, indent=2) + "\n"


TEXTS = {PACKAGE_JSON: package_json}


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m host.build.install_paths",
                                 description="Write (or check) package.json from host/build/manifest.py.")
    ap.add_argument("--write", action="store_true", help="write it at the top of the repository")
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

# What goes on a board: the one list of Bloomkeeper's board modules, in
# MicroPython's manifest format (micropython-lib conventions).
#
# Read by host/build/bundle.py, which copies exactly these files into both
# bundles (`make firmware`, `bloomkeeper firmware`, `bloomkeeper flash`), by
# host/build/install_paths.py, which writes package.json (mpremote mip) from it,
# and by host/build/uf2.py (`make uf2`), which freezes it into a MicroPython
# firmware image. tests/packaging/test_manifest.py holds it to the import closure
# of firmware/main.py on each runtime: a module the firmware imports that this
# list misses, or one it lists that nothing imports, fails there.
#
# It names only Bloomkeeper's own modules, so it freezes on any port: a
# FROZEN_MANIFEST replaces the port's default manifest, so whoever freezes it
# includes the port's own first (the rp2 port's freezes the `neopixel` driver
# the firmware imports). `make uf2` writes that top manifest (host/build/uf2.py);
# by hand, on the rp2 port:
#   include("$(PORT_DIR)/boards/manifest.py")
#   include("/path/to/this/repo/host/build/manifest.py")
# and on the Unix port "$(PORT_DIR)/variants/manifest.py" instead.
#
# Options: `runtime` ("micropython" unless told; bundle.py also reads the list
# for "circuitpython", whose bundle differs only in its backend), `wifi`
# (False unless told: the Pico W's image adds its table page and WiFi, and
# the Pico's bundle and its budget stay as they are) and `base`,
# the directory holding engine_lite/ and firmware/ (default ../.., the
# repository, or site-packages in an installed wheel; `make uf2` points it at
# the stamped copy it freezes). Relative paths are relative to this file.

options.defaults(runtime="micropython", base="../..", wifi=False)

metadata(description="Bloomkeeper: table companion for Stalk Exchange and Oh My. Orchids!")

# The rules core. Not here: table_score.py, stamp.py and readout.py, the host's
# (a whole table scored, start fields as JSON, state dicts), which board code
# imports only in functions the board never runs.
package("engine_lite", files=(
    "__init__.py",
    "errors.py",
    "game.py",
    "log.py",
    "orchids.py",
    "ranking.py",
    "record.py",
    "stalk.py",
    "tables.py",
    "vocab.py",
), base_path=options.base, opt=3)

# The board application, with the one hardware backend of its runtime
# (firmware/hw.py make_hw imports it lazily; CircuitPython's brings its
# button feeds, keys_cp.py (a PIO state machine or keypad),
# and its flash journal, journal_cp.py, with its reader, journal_read_cp.py).
package("firmware", files=(
    "__init__.py",
    "app.py",
    "buttons.py",
    "codec.py",
    "hw.py",
    "hw_mp.py" if options.runtime == "micropython" else "hw_cp.py",
    "link.py",
    "main.py",
    "ring.py",
    "screens.py",
    "storage.py",
) + (() if options.runtime == "micropython" else ("journal_cp.py", "journal_read_cp.py", "keys_cp.py")), base_path=options.base, opt=3)  # CircuitPython's journal and button feeds

# The Pico W's set (`wifi=True`, host/build/uf2.py for board pico_w): its
# entry (the board's loop with the table page polled in it), WiFi, the
# table server and its page, and the state dicts the page shows.
if options.wifi:
    package("firmware", files=(
        "pico_w.py",
        "table_page.py",
        "table_server.py",
        "wifi.py",
    ), base_path=options.base, opt=3)
    package("engine_lite", files=("readout.py",), base_path=options.base, opt=3)

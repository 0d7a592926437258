# What goes on a board: the one list of Bloomkeeper's board modules, in
# MicroPython's manifest format (micropython-lib conventions).
#
# Read by host/build/bundle.py, which copies exactly these files into both
# bundles (`make firmware`, `bloomkeeper firmware`, `bloomkeeper flash`), and by
# host/build/install_paths.py, which writes package.json (mpremote mip) from it.
# tests/packaging/test_manifest.py holds it to the import closure of firmware/main.py on
# each runtime: a module the firmware imports that this list misses, or one it
# lists that nothing imports, fails there.
#
# Freezing it into a MicroPython firmware, with MicroPython's source:
#   make -C ports/rp2 BOARD=RPI_PICO FROZEN_MANIFEST=/path/to/this/repo/host/build/manifest.py
# A firmware holds only modules: after flashing it, put the entry and the pin map
# on the file system (the pin map at the top: a /firmware directory there would
# shadow the frozen package):
#   mpremote cp host/build/board_entry.py :main.py + cp firmware/pinmap.json :pinmap.json
#
# Paths are relative to this file (MicroPython's build reads it from here): ../..
# is the repository, or site-packages in an installed wheel.

# The runtime: a MicroPython build leaves it at its default; bundle.py also
# reads the list for "circuitpython", whose bundle differs only in its backend.
options.defaults(runtime="micropython")

metadata(description="Bloomkeeper: table companion for Stalk Exchange and Oh My. Orchids!")

# The port's own frozen modules (asyncio, neopixel, ...): a FROZEN_MANIFEST replaces them otherwise.
include("$(PORT_DIR)/boards/manifest.py")

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
), base_path="../..", opt=3)

# The board application, with the one hardware backend of its runtime
# (firmware/hw.py make_hw imports it lazily; CircuitPython's brings its
# keypad feed, keys_cp.py, and its flash journal, journal_cp.py).
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
) + (() if options.runtime == "micropython" else ("journal_cp.py", "keys_cp.py")), base_path="../..", opt=3)  # CircuitPython's journal and keypad feed

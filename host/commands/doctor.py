"""`bloomkeeper doctor [--port auto|PATH]`: is the board well?

Asks the board (docs/protocol.md) who it is, what it holds and which
firmware faults its loop survived: App.step catches any unexpected
exception, writes one line to the fault log on flash (faults.txt, newest
last, bounded), blinks the fault cross on the ring and reloads its game
from flash (docs/ring.md). This command prints that log so a fault can be
reported and fixed rather than only survived. Read-only: it changes
nothing on the board.

It also compares versions: the board's hello names the firmware it runs
(the bundle is stamped with the package version when it is built), and a
board whose firmware is not this host's version gets one line saying so and
how to update it (`bloomkeeper flash`).
"""

from host import __version__
from host.sync.link import BoardError, connect


def version_note(fw, port="auto"):
    """One line when the board's firmware is not this host's version, else None."""
    if fw == __version__:
        return None
    flash = "bloomkeeper flash" + ("" if port in (None, "", "auto") else " --port %s" % port)
    if fw in (None, "", "0"):
        return ("firmware version unknown (built before versions, or from unstamped sources), this host is %s: "
                "update it with %s" % (__version__, flash))
    return "firmware %s differs from this host's %s: update it with %s" % (fw, __version__, flash)


def doctor_cmd(args):
    link = connect(args.port, cap=args.timeout)
    try:
        info = link.info or {}
        status = link.status()
        games = link.games()
        try:
            faults = link.call("faults")["faults"]
        except BoardError as err:
            if err.code != "unknown_op":
                raise
            faults = None  # older firmware: no fault log
    finally:
        link.close()
    print("board %s (id %s), firmware %s, link protocol %s; this host: bloomkeeper %s"
          % (info.get("board"), info.get("id", "none: firmware before ids"), info.get("fw"), info.get("proto"), __version__))
    note = version_note(info.get("fw"), args.port)
    if note:
        print(note)
    if status.get("game"):
        print("game in progress: %s, %d events, screen %s" % (status["game"], status.get("events", 0), status.get("screen")))
    else:
        print("no game in progress (screen %s)" % status.get("screen"))
    archived = games.get("archived", [])
    unsynced = sum(1 for _, synced in archived if not synced)
    print("finished games on the board: %d (%d not synced yet)" % (len(archived), unsynced))
    if faults is None:
        print("fault log: this firmware keeps none (update it with bloomkeeper flash)")
        return 0
    print("firmware faults survived since power-up: %s" % status.get("faults", "?"))
    lines = [x for x in faults.split("\n") if x]
    if not lines:
        print("fault log: empty")
    else:
        print("fault log (newest last; please report these):")
        for x in lines:
            print("  " + x)
    return 0


def register(sub):
    p = sub.add_parser("doctor", help="the board's health: what it holds and the firmware faults it survived")
    p.add_argument("--port", default="auto", metavar="auto|PATH|URL", help="serial port of the board (default: find it by USB id)")
    p.add_argument("--timeout", type=float, default=20.0, metavar="S", help="cap on the whole exchange, seconds (default 20)")
    p.set_defaults(func=doctor_cmd)

"""`bloomkeeper doctor [--port auto|PATH]`: is the board well?

Asks the board (docs/protocol.md) who it is, what it holds and which
firmware faults its loop survived: App.step catches any unexpected
exception, writes one line to the fault log on flash (faults.txt, newest
last, bounded), blinks the fault cross on the ring and reloads its game
from flash (docs/ring.md). This command prints that log so a fault can be
reported and fixed rather than only survived. Read-only: it changes
nothing on the board.
"""

from host.sync.link import BoardError, connect


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
    print("board %s (id %s), firmware %s, link protocol %s"
          % (info.get("board"), info.get("id", "none: firmware before ids"), info.get("fw"), info.get("proto")))
    over = bool(status.get("game")) and status.get("over")
    if over:  # ended, its results on screen: archived when the players press OK for the next game
        print("game over: %s, %d events, results on the board's ring (OK there starts the next game and archives this one)"
              % (status["game"], status.get("events", 0)))
    elif status.get("game"):
        print("game in progress: %s, %d events, screen %s" % (status["game"], status.get("events", 0), status.get("screen")))
    else:
        print("no game in progress (screen %s)" % status.get("screen"))
    archived = games.get("archived", [])
    unsynced = sum(1 for _, synced in archived if not synced)
    print("archived games on the board: %d (%d not synced yet)%s" % (
        len(archived), unsynced, "; the game over above is not archived yet" if over else ""))
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

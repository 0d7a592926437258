"""`bloomkeeper doctor [--port auto|PATH]`: is the board well?

Asks the board (docs/protocol.md) who it is, what it holds and which
firmware faults its loop survived: App.step catches any unexpected
exception, writes one line to the fault log on flash (faults.txt, newest
last, bounded), blinks the fault cross on the ring and reloads its game
from flash (docs/ring.md). This command prints that log so a fault can be
reported and fixed rather than only survived. Read-only: it changes
nothing on the board.

It says which kind of build the board runs (the hello's `build`: a frozen
image, updated with a new UF2, or .mpy files on its file system, updated
by `bloomkeeper flash`; unknown on firmware older than the key).
It also compares versions: the board's hello names the firmware it runs
(the bundle is stamped with the package version when it is built), and a
board whose firmware is not this host's version gets one line saying so and
how to update it (`bloomkeeper flash`).

Doctor is what one runs on a board that misbehaves, so every field of its
answers is checked before use: a missing one is said ("?"), a wrong type
is one line (peer_error), and every string is printed escaped (show).
"""

from host import __version__
from host.commands import options
from host.commands.uf2_flash import build_words, update_command
from host.io_util import show
from host.sync.db import games_of
from host.sync.link import BoardError, connect, peer_error


def _field(d, key, default="?"):
    v = d.get(key, default)
    return show(v if type(v) is str else str(v))


def version_note(fw, port="auto", info=None):
    """One line when the board's firmware is not this host's version, else
    None. `info`: the hello, whose build kind says how to update it."""
    if fw == __version__:
        return None
    flash = update_command(info or {}, port)
    if fw in (None, "", "0"):
        return ("firmware version unknown (built before versions, or from unstamped sources), this host is %s: "
                "update it with %s" % (__version__, flash))
    return "firmware %s differs from this host's %s: update it with %s" % (fw, __version__, flash)


def doctor_cmd(args):
    link = connect(args.port, cap=args.timeout)
    try:
        info = link.info or {}
        status = link.status()
        _, _, archived = games_of(link.games())
        try:
            ans = link.call("faults")
            faults = ans.get("faults") if type(ans) is dict else None
            if type(faults) is not str:
                raise peer_error("faults", "faults is not text", link.name)
        except BoardError as err:
            if err.code != "unknown_op":
                raise
            faults = None  # older firmware: no fault log
    finally:
        link.close()
    fw = info.get("fw")
    print("board %s (id %s), firmware %s, link protocol %s; this host: bloomkeeper %s"
          % (_field(info, "board"), _field(info, "id", "none: firmware before ids"), _field(info, "fw"), _field(info, "proto"),
             __version__))
    print("build: %s" % show(build_words(info)))
    note = version_note(fw if type(fw) is str else None, args.port, info)
    if note:
        print(show(note))
    game = status.get("game")
    events = status.get("events", 0)
    events = events if type(events) is int else "?"
    over = bool(game) and status.get("over") is True
    if over:  # ended, its results on screen: archived when the players press OK for the next game
        print("game over: %s, %s events, results on the board's ring (OK there starts the next game and archives this one)"
              % (_field(status, "game"), events))
    elif game:
        print("game in progress: %s, %s events, screen %s" % (_field(status, "game"), events, _field(status, "screen")))
    else:
        print("no game in progress (screen %s)" % _field(status, "screen"))
    unsynced = sum(1 for _, synced in archived if not synced)
    print("archived games on the board: %d (%d not synced yet)%s" % (
        len(archived), unsynced, "; the game over above is not archived yet" if over else ""))
    if faults is None:
        print("fault log: this firmware keeps none (update it with bloomkeeper flash)")
        return 0
    print("firmware faults survived since power-up: %s" % _field(status, "faults"))
    lines = [x for x in faults.split("\n") if x]
    if not lines:
        print("fault log: empty")
    else:
        print("fault log (newest last; please report these):")
        for x in lines:
            print("  " + show(x))
    return 0


def register(sub):
    p = sub.add_parser("doctor", help="the board's health: what it holds and the firmware faults it survived")
    options.port(p)
    options.timeout(p, 20.0)
    p.set_defaults(func=doctor_cmd)

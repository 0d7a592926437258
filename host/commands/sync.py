"""`bloomkeeper sync`, `follow`, `plays`, `export`, `names`: the board's
games into the plays database and out again (docs/protocol.md)."""

import sys
import time

import engine_lite

import host.sync.db
from host.sync import export
from host.errors import UserError
from host.sync.link import connect


def _port_arg(p):
    p.add_argument("--port", default="auto", metavar="auto|PATH|URL", help="serial port of the board (default: find it by USB id)")
    p.add_argument("--timeout", type=float, default=60.0, metavar="S", help="cap on the whole exchange, seconds (default 60)")


def _db_arg(p):
    p.add_argument("--db", default=None, metavar="FILE", help="plays database (default: in your user data directory)")


def sync_cmd(args):
    link = connect(args.port, cap=args.timeout)
    db = host.sync.db.Database(args.db)
    try:
        res = host.sync.db.sync(link, db)
    finally:
        link.close()
        db.close()
    marked = (", marked %d finished game(s) synced on the board" % len(res["marked"])) if res["marked"] else ""
    print("synced board %s: %d game(s), %d new event(s)%s -> %s" % (res["board"], res["games"], res["added"], marked, db.path))
    return 0


def plays_cmd(args):
    db = host.sync.db.Database(args.db, create=False)
    plays = db.plays()
    db.close()
    if args.json:
        sys.stdout.write(export.to_json(plays))
        return 0
    if not plays:
        print("no plays in %s" % db.path)
    for p in plays:
        res = {r["name"]: r for r in p.get("final", {}).get("players", [])}
        who = ", ".join("%s %s" % (n, res[n]["score"]) if n in res else n for n in p["players"])
        when = export.local_time(p["date"]) + ("~" if p.get("date_estimated") else " ")
        print("%s %-14s %s/%s  %3d events  %-11s %s" % (when, p["game"], p["board"][:12], p["game_id"], len(p["events"]), export.state(p), who))
    if any(p.get("date_estimated") for p in plays):
        print("~ estimated start (the board did not know the time, or an older release kept only the sync time)")
    return 0


def export_cmd(args):
    db = host.sync.db.Database(args.db, create=False)
    plays = db.plays()
    db.close()
    sys.stdout.write(export.FORMATS[args.format](plays))
    return 0


def names_cmd(args):
    """The next game's names: through the process that holds the port
    (`serve`, `follow`: host/sync/relay.py) when one does, else over the link."""
    from host.sync import relay

    names = relay.check_names(list(args.names))
    held = relay.send_names(args.port, names)
    if held is None:
        link = connect(args.port, cap=args.timeout)
        try:
            held = link.settings({"names": names}).get("names", [])
        finally:
            link.close()
    print(names_words(held))
    return 0


def names_words(names):
    """What the board will do with these names: they fill the first seats of
    the next game, the seats after them keep their default "Seat k"."""
    from engine_lite.tables import MAX_PLAYERS

    out = "names on the board: %s" % (", ".join(names) or "none")
    if len(names) < MAX_PLAYERS:
        rest = range(len(names) + 1, MAX_PLAYERS + 1)
        out += "; seat%s %s keep%s the default (%s) when the table has them" % (
            "s" if len(rest) > 1 else "", ", ".join(str(k) for k in rest), "" if len(rest) > 1 else "s",
            ", ".join("Seat %d" % k for k in rest))
    return out


# -- follow ---------------------------------------------------------------

def scoreboard(g):
    """The game in progress, in words (one string, several lines)."""
    st = g.state()
    if st.get("game") is None:
        return "no game"
    names = list(g.names)
    lines = []
    if st["game"] == "stalk-exchange":
        vals = "  ".join("%s %d" % (k, v) for k, v in st["values"].items())
        lines.append("Stalk Exchange  values: %s" % vals)
        lines.append("bag %d  exchange %d  harvested %d" % (st["bag"], st["exchange"], st["harvested"]))
        for i, n in enumerate(names):
            mark = ">" if n == st["current_player"] else " "  # the state names the player (None once over)
            tok = st["tokens"][n] if isinstance(st["tokens"], dict) else st["tokens"][i]
            fl = st["flush_used"][n] if isinstance(st["flush_used"], dict) else st["flush_used"][i]
            lines.append("%s %-12s tokens %d%s" % (mark, n, tok, "  flushed" if fl else ""))
        if st.get("tokens_until_crash") is not None and not st["game_over"]:
            lines.append("crash in %s harvested token(s) at the earliest" % st["tokens_until_crash"])
        if st.get("end_triggered"):
            lines.append("LAST TURN: end triggered (%s)" % st["end_triggered"])
    else:
        lines.append("Oh My. Orchids!%s" % ("  LAST ROUND" if st.get("last_round") else ""))
        for n in names:
            p = st["players"][n]
            mark = ">" if n == st["current_player"] else " "
            lines.append("%s %-12s hand %d  flowers %d  points %d  composted %d" % (mark, n, p["hand"], len(p["flowers"]), p["points"], p["composted"]))
    if st["game_over"]:
        lines.append("GAME OVER")
    if "final" in st:
        lines.append("final: " + ", ".join("%d. %s %s" % (r["rank"], r["name"], r["score"]) for r in st["final"]["players"]))
        lines.extend(score_lines(st["final"]))
    return "\n".join(lines)


def score_lines(final):
    """Each player's score as its sum (the breakdown's nonzero lines) and the
    tie-break that placed them, if one did: what players check on paper."""
    out = []
    for r in final["players"]:
        parts = [("%s = %d" % (label, points)) for label, points in r["breakdown"] if points]
        out.append("  %s %d: %s" % (r["name"], r["score"], ", ".join(parts) or "nothing scored"))
        if "tiebreak" in r:
            out.append("    tie-break: %s" % r["tiebreak"])
    return out


class Follower:
    """The board's game in progress, kept current by live events."""

    def __init__(self, link):
        self.link = link
        self.gid = None
        self.game = None

    def refetch(self):
        self.gid = self.link.call("subscribe", on=True)["game"]
        self.game = engine_lite.Game()
        if self.gid is None:
            return
        have = 0
        while True:
            start, total, _, recs = self.link.events(self.gid, have)
            for r in recs:
                self.game.apply_record(r)
            have += len(recs)
            if have >= total or not recs:
                return

    def take(self, push):
        """Apply one live event; False if a refetch was needed instead."""
        gid, index, rec = push
        if gid == self.gid and self.game is not None and rec and rec[0] != 11 and index == len(self.game.log):
            try:
                self.game.apply_record(rec)
                return True
            except engine_lite.EngineError:
                pass
        self.refetch()
        return False


class Recorder:
    """`follow --db`: keeps the plays database current while following, so
    watching and keeping the play need only one program on the port. Each
    live event syncs the game in progress (one events request: only the new
    records); a new game id syncs everything (the last game was archived)."""

    def __init__(self, link, db):
        self.link = link
        self.db = db
        self.gid = None
        self.who = None

    def record(self, gid):
        if self.who is None or gid != self.gid:
            host.sync.db.sync(self.link, self.db)
            self.who = host.sync.db.board_of(self.link)
        elif gid is not None:
            host.sync.db.sync_game(self.link, self.db, self.who, gid)
        self.gid = gid


def follow_cmd(args):
    from host.sync import relay

    link = connect(args.port, cap=10 ** 9)
    rec = None
    if args.db is not None:
        try:
            rec = Recorder(link, host.sync.db.Database(args.db))
        except UserError:
            link.close()
            raise
    f = Follower(link)
    f.refetch()
    if rec:
        rec.record(f.gid)
    plain = args.plain or not sys.stdout.isatty()
    end = time.monotonic() + args.seconds if args.seconds else None
    names = relay.Requests()  # `names` from another terminal, sent from this loop
    rel = relay.Relay(link.name, names)
    rel.open()

    def follow(show):
        """Show the table, then again after every live event, until the
        time (--seconds) or the number of events (--events) is up."""
        show()
        seen = 0
        while end is None or time.monotonic() < end:
            names.serve(link)
            push = link.wait_push(0.2)
            if push is None:
                continue
            f.take(push)
            if rec:
                rec.record(f.gid)
            seen += 1
            show()
            if args.events and seen >= args.events:
                return

    def print_table():
        sys.stdout.write("--- %s\n%s\n" % (f.gid, scoreboard(f.game) if f.game else "no game"))
        sys.stdout.flush()

    try:
        if plain:
            follow(print_table)
        else:
            from rich.live import Live
            from rich.panel import Panel

            def panel():
                return Panel(scoreboard(f.game) if f.game else "no game", title="game %s" % f.gid)

            with Live(panel(), refresh_per_second=20) as live:
                follow(lambda: live.update(panel()))
    except KeyboardInterrupt:
        pass  # Ctrl-C is how one leaves follow
    finally:
        rel.close()
        names.fail_all("follow has stopped")
        link.close()
        if rec:
            rec.db.close()
    return 0


def register(sub):
    p = sub.add_parser("sync", help="pull every new event from the board into the plays database")
    _port_arg(p)
    _db_arg(p)
    p.set_defaults(func=sync_cmd)

    p = sub.add_parser("follow", help="live scoreboard of the game on the board; --db FILE records it as it goes")
    _port_arg(p)
    p.add_argument("--db", default=None, metavar="FILE", help="also keep this plays database current (as sync does)")
    p.add_argument("--plain", action="store_true", help="print each update as text (default when not a terminal)")
    p.add_argument("--seconds", type=float, default=0, help="stop after S seconds (default: run until Ctrl-C)")
    p.add_argument("--events", type=int, default=0, help="stop after N live events")
    p.set_defaults(func=follow_cmd)

    p = sub.add_parser("plays", help="the plays in the database")
    _db_arg(p)
    p.add_argument("--json", action="store_true", help="as JSON (same as export --format json)")
    p.set_defaults(func=plays_cmd)

    p = sub.add_parser("export", help="export the plays database: json, csv or bgstats (BG Stats app)")
    _db_arg(p)
    p.add_argument("--format", choices=sorted(export.FORMATS), default="json")
    p.set_defaults(func=export_cmd)

    p = sub.add_parser("names", help="the next game's names for the first seats (the others keep \"Seat k\"); also while serve or follow holds the port")
    _port_arg(p)
    p.add_argument("names", nargs="+", metavar="NAME")
    p.set_defaults(func=names_cmd)

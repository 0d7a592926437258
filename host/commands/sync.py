"""`bloomkeeper sync`, `follow`, `plays`, `export`, `names`: the board's
games into the plays database and out again (docs/protocol.md)."""

import sys
import time

import host.config
import host.sync.db
import host.sync.link
from host.commands import options
from host.errors import UserError
from host.io_util import duration, show
from host.sync import export
from host.sync.follow import Follower, Recorder, scoreboard
from host.sync.link import connect


def _port_arg(p):
    options.port(p)
    options.timeout(p, 60.0)


def sync_cmd(args):
    from host.commands.doctor import version_note
    from host import progress

    db = host.sync.db.Database(args.db)  # a database that cannot be used is one line before the board is asked
    try:
        link = connect(args.port, cap=args.timeout)
    except UserError:
        db.close()
        raise
    fw = (link.info or {}).get("fw")
    note = version_note(fw if type(fw) is str else None, args.port, link.info)  # offer the update: one line on stderr
    try:
        with db.guard(), progress.bar("syncing games", quiet=args.quiet) as advance:
            done = []
            res = host.sync.db.sync(link, db, progress=lambda gid, n: (done.append(gid), advance(len(done))))
    finally:
        link.close()
        db.close()
    marked = (", marked %d finished game(s) synced on the board" % len(res["marked"])) if res["marked"] else ""
    print("synced board %s: %d game(s), %d new event(s)%s -> %s" % (show(res["board"]), res["games"], res["added"], marked, db.path))
    if res["refused"]:  # the one line a failed sync ends with (no version note before it)
        raise UserError(refused_line(res["refused"]))
    if note:
        sys.stderr.write("bloomkeeper: note: %s\n" % show(note))
    return 0


def refused_line(refused):
    """The one line a sync ends with when the engine refused records."""
    r = refused[0]
    more = " (and %d more game(s))" % (len(refused) - 1) if len(refused) > 1 else ""
    return ("board %s, game %s: record %d refused by the rules engine (%s); %d record(s) quarantined, not stored in the play%s: "
            "`bloomkeeper repair` re-judges them with a newer bloomkeeper"
            % (show(r["board"]), show(r["game_id"]), r["index"], show(r["reason"]), r["count"], more))


def problem_line(q):
    """One damaged or quarantined play, in words."""
    where = "board %s, game %s" % (show(q["board"]), show(q["game_id"]))
    if q["kind"] == "quarantined":
        return "%s: %d record(s) quarantined from record %d: %s" % (where, q["count"], q["index"], show(q["reason"]))
    if not q["count"]:
        return "%s: damaged: %s" % (where, show(q["reason"]))
    return "%s: damaged, %d record(s) from record %d unreadable: %s" % (where, q["count"], q["index"], show(q["reason"]))


PAGE = 50  # plays a `plays` page lists by default


def open_db(path):
    """The plays database opened for reading (a read-only file is read as it is)."""
    return host.sync.db.Database(path, create=False, readonly=True)


def since_arg(text):
    """--since DATE: 'YYYY-MM-DD' or 'YYYY-MM-DD HH:MM' in this machine's
    local time (as `plays` shows dates) -> ISO 8601 UTC."""
    import argparse

    from engine_lite import stamp

    for fmt in ("%Y-%m-%d", "%Y-%m-%d %H:%M"):
        try:
            t = time.mktime(time.strptime(text, fmt))
        except (ValueError, OverflowError):
            continue
        return stamp.iso(int(t))
    raise argparse.ArgumentTypeError("%r is not a date: give YYYY-MM-DD or \"YYYY-MM-DD HH:MM\" (local time)" % text[:40])


def count_arg(text):
    import argparse

    if not text.isdigit():
        raise argparse.ArgumentTypeError("%r is not a count: give 0 or more" % text[:40])
    return int(text)


def page_arg(text):
    import argparse

    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError("%r is not a page: give 1 or more" % text[:40])
    return int(text)


def plays_cmd(args):
    db = open_db(args.db)
    try:
        if args.json:
            export.write_json(db.stream(), sys.stdout)
            _note_problems(db.problems())
            return 0
        limit = args.limit or None
        plays, total = db.page(limit, (args.page - 1) * (limit or 0), args.since, log=True)
        problems = db.problems()
    finally:
        db.close()
    if not total and not problems:
        print("no plays in %s" % db.path + (" since %s" % export.local_time(args.since) if args.since else ""))
    for p in plays:
        res = {r["name"]: r for r in p.get("final", {}).get("players", [])}
        who = ", ".join(show("%s %s" % (n, res[n]["score"]) if n in res else n) for n in p["players"])
        when = export.local_time(p["date"]) + ("~" if p.get("date_estimated") else " ")
        print("%s %-14s %s/%s  %3d events  %-11s %s%s" % (when, p["game"], show(p["board"][:12]), show(p["game_id"]), p["event_count"],
                                                          export.state(p), who, "  [%s]" % show(p["problem"]) if "problem" in p else ""))
    older = total - (args.page - 1) * (limit or 0) - len(plays)
    if older > 0:
        print("... %d older play(s) not shown (of %d): --page %d shows the next, --limit 0 all of them" % (older, total, args.page + 1))
    for q in problems:
        print("! " + problem_line(q))
    if any(p.get("date_estimated") for p in plays):
        print("~ estimated start (the board did not know the time, or an older release kept only the sync time)")
    if problems:
        print("! %d play(s) damaged or quarantined: the others are shown; `bloomkeeper repair` re-judges quarantined records" % len(problems))
    return 0


def _note_problems(problems):
    """Damaged or quarantined plays, one line each on stderr: the export on
    stdout stays a clean file of the good plays."""
    for q in problems:
        sys.stderr.write("bloomkeeper: not exported: %s\n" % problem_line(q))


def export_cmd(args):
    """Streamed: one play at a time from the summaries (host/sync/db.py
    stream), whatever the size of the history."""
    db = open_db(args.db)
    try:
        seen = export.Seen(db.stream(lines=export.LINES.get(args.format)))
        export.WRITERS[args.format](seen, sys.stdout)
        _note_problems(db.problems())
    finally:
        db.close()
    said = seen.note(args.format)
    if said:
        sys.stderr.write("bloomkeeper: note: %s\n" % said)
    return 0


def repair_cmd(args):
    db = host.sync.db.Database(args.db, create=False)
    try:
        res = db.repair()
    finally:
        db.close()
    print("re-judged %d quarantined record(s) in %s: %d accepted into their plays, %d still refused"
          % (res["tried"], db.path, res["accepted"], res["tried"] - res["accepted"]))
    return 0


def names_cmd(args):
    """The next game's names: through the process that holds the port
    (`serve`, `follow`: host/sync/relay.py) when one does, else over the link."""
    from host.sync import relay

    if not args.names:
        raise UserError("names: give the names (or set names = [...] in the config file, %s)" % host.config.path())
    names = relay.check_names(list(args.names))
    held = relay.send_names(args.port, names)  # through the process that holds the port, if one does
    if held is None:
        link = connect(args.port, cap=args.timeout)
        try:
            s = link.settings({"names": names})
        finally:
            link.close()
        held = s.get("names", []) if type(s) is dict else None
    if type(held) is not list or not all(type(n) is str for n in held):
        raise host.sync.link.peer_error("settings", "names is not a list of names")
    print(relay.names_words([show(n) for n in held]))
    return 0


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

    def table():
        text = scoreboard(f.game) if f.game else "no game"
        return text + ("\n! " + f.problem if f.problem else "")

    def print_table():
        sys.stdout.write("--- %s\n%s\n" % (show(str(f.gid)), table()))
        sys.stdout.flush()

    try:
        if plain:
            follow(print_table)
        else:
            from rich.live import Live
            from rich.panel import Panel

            def panel():
                return Panel(table(), title="game %s" % show(str(f.gid)))

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
    options.db(p)
    p.add_argument("--quiet", action="store_true", help="no progress bar (it shows only on a terminal, on stderr)")
    p.set_defaults(func=sync_cmd)

    p = sub.add_parser("follow", help="live scoreboard of the game on the board; --db FILE records it as it goes")
    _port_arg(p)
    options.db(p, "also keep this plays database current (as sync does)")
    p.add_argument("--plain", action="store_true", help="print each update as text (default when not a terminal)")
    p.add_argument("--seconds", type=duration, default=0, help="stop after S seconds (default: run until Ctrl-C)")
    p.add_argument("--events", type=int, default=0, help="stop after N live events")
    p.set_defaults(func=follow_cmd)

    p = sub.add_parser("plays", help="the plays in the database, the newest %d (--limit, --page, --since)" % PAGE)
    options.db(p)
    p.add_argument("--json", action="store_true", help="every play as JSON (same as export --format json)")
    p.add_argument("--limit", type=count_arg, default=PAGE, metavar="N", help="list the newest N plays (default %d; 0: all)" % PAGE)
    p.add_argument("--page", type=page_arg, default=1, metavar="K", help="the K-th page of --limit plays, newest first (default 1)")
    p.add_argument("--since", type=since_arg, metavar="DATE", help="only plays started at or after DATE (YYYY-MM-DD, local time)")
    p.set_defaults(func=plays_cmd)

    p = sub.add_parser("export", help="export the plays database: json, jsonl, csv, bgstats or bgstats-links (BG Stats app)")
    options.db(p)
    p.add_argument("--format", choices=sorted(export.WRITERS), default="json",
                   help="json: one array; jsonl: one play per line (JSON Lines); csv; bgstats, bgstats-links: BG Stats")
    p.set_defaults(func=export_cmd)

    p = sub.add_parser("repair", help="re-judge quarantined records (refused by an older engine) and store the ones now accepted")
    options.db(p)
    p.set_defaults(func=repair_cmd)

    p = sub.add_parser("names", help="the next game's names for the first seats (the others keep \"Seat k\"); also while serve or follow holds the port")
    _port_arg(p)
    p.add_argument("names", nargs="*", metavar="NAME", help="up to 5 names (default: names in the config file)")
    p.set_defaults(func=names_cmd)

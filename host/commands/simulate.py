"""`bloomkeeper simulate`: play many complete games with the full-rules engines.

Every game is played by host/fullrules/stalk_full.py or host/fullrules/orchids_full.py, which
drive engine_lite with the table events they produce; see
docs/simulation.md. Bad arguments end as one line on stderr, exit status 2.
"""

import os
import sys

from host.fullrules import simulate
from host.errors import UserError

MAX_GAMES = 1_000_000


def _policies(text):
    names = [p.strip() for p in text.split(",")]
    for p in names:
        if p not in ("random", "greedy"):
            raise UserError("simulate: --policy: unknown policy %r (random or greedy, comma-separated per seat)" % p)
    return names


def simulate_cmd(args):
    if not 2 <= args.players <= 5:
        raise UserError("simulate: --players: must be 2 to 5, not %d" % args.players)
    if not 1 <= args.games <= MAX_GAMES:
        raise UserError("simulate: --games: must be 1 to %d, not %d" % (MAX_GAMES, args.games))
    if args.seed < 0:
        raise UserError("simulate: --seed: must be a whole number >= 0")
    policies = _policies(args.policy)
    if len(policies) > args.players:
        raise UserError("simulate: --policy: %d policies for %d players" % (len(policies), args.players))
    options = {}
    stalk = args.game == "stalk-exchange"
    if not stalk:
        for flag, value in (("--length", args.length), ("--track-start", args.track_start), ("--layout", args.layout)):
            if value is not None:
                raise UserError("simulate: %s: only for stalk-exchange" % flag)
    elif args.deck is not None:
        raise UserError("simulate: --deck: only for oh-my-orchids")
    if args.length is not None:
        if args.players != 2:
            raise UserError("simulate: --length: only 2-player games choose long or short")
        options["length"] = args.length
    if args.track_start is not None:
        if not 1 <= args.track_start <= 255:
            raise UserError("simulate: --track-start: must be 1 to 255")
        options["track_start"] = args.track_start
    if args.layout is not None:
        from host.fullrules.garden import Layout, LayoutError

        try:
            options["layout"] = Layout.load(args.layout)
        except LayoutError as e:
            raise UserError("simulate: %s" % e)
    if args.deck is not None:
        from host.fullrules.orchids_full import Deck, DeckError

        try:
            options["deck"] = Deck.load(args.deck)
        except DeckError as e:
            raise UserError("simulate: %s" % e)
    if args.records is not None:
        if os.path.exists(args.records) and not os.path.isdir(args.records):
            raise UserError("simulate: --records: %s exists and is not a directory" % args.records)
        try:
            os.makedirs(args.records, exist_ok=True)
        except OSError as e:
            raise UserError("simulate: --records: cannot create %s (%s)" % (args.records, e.strerror or e))
    if args.plot is not None:
        if not args.plot.lower().endswith(".png"):
            raise UserError("simulate: --plot: the file name must end in .png")
        parent = os.path.dirname(os.path.abspath(args.plot))
        if not os.path.isdir(parent):
            raise UserError("simulate: --plot: directory %s does not exist" % parent)
    from host import progress

    try:
        with progress.bar("simulating %s" % args.game, total=args.games, quiet=args.quiet) as advance:
            stats = simulate.run(args.game, args.players, args.games, args.seed, policies, options, records=args.records,
                                 verify=args.verify, progress=advance)
    except ValueError as e:  # e.g. a layout without enough seeding spaces
        raise UserError("simulate: %s" % e)
    except OSError as e:
        raise UserError("simulate: --records: cannot write (%s)" % (e.strerror or e))
    if args.plot is not None:
        try:
            simulate.plot(stats, args.plot)
        except OSError as e:
            raise UserError("simulate: --plot: cannot write %s (%s)" % (args.plot, e.strerror or e))
    if args.json:
        simulate.write_json(stats, sys.stdout)
    else:
        sys.stdout.write(simulate.format_text(stats) + "\n")
        if args.records is not None:
            sys.stdout.write("records: %d games in %s\n" % (args.games, args.records))
        if args.plot is not None:
            sys.stdout.write("plot: %s\n" % args.plot)
    if args.verify and stats["mismatches"]:
        sys.stderr.write("bloomkeeper: simulate: %d records disagree with engine_lite, first: game %d (%s)\n" % (len(stats["mismatches"]), stats["mismatches"][0]["game"], stats["mismatches"][0]["problem"]))
        return 1
    return 0


def register(sub):
    p = sub.add_parser(
        "simulate",
        help="play many complete games with the full rules and print statistics",
        description="Play K complete seeded games of one title with the full-rules engine "
        "(garden, exchange, bag / cards and displays) and print end reasons, turns per game, "
        "score spread and seat advantage.",
    )
    p.add_argument("--game", required=True, choices=simulate.GAMES)
    p.add_argument("--players", type=int, default=4, metavar="N", help="2 to 5 (default 4)")
    p.add_argument("--games", type=int, default=100, metavar="K", help="number of games (default 100)")
    p.add_argument("--seed", type=int, default=1, metavar="S", help="run seed; game i uses seed 'S:i' (default 1)")
    p.add_argument("--policy", default="greedy", metavar="P[,P...]", help="random or greedy, cycled over the seats (default greedy)")
    p.add_argument("--length", choices=("long", "short"), default=None, help="2-player Stalk Exchange: long (default) or short game")
    p.add_argument("--track-start", type=int, default=None, metavar="S", help="Stalk Exchange market track start space (default: engine_lite's placeholder)")
    p.add_argument("--layout", default=None, metavar="FILE", help="Stalk Exchange garden layout JSON (default: the shipped approximation)")
    p.add_argument("--deck", default=None, metavar="FILE", help="Oh My. Orchids! deck JSON (default: the shipped SAMPLE deck)")
    p.add_argument("--json", action="store_true", help="print the statistics as one JSON object")
    p.add_argument("--records", default=None, metavar="DIR", help="write every game as DIR/game-NNNNN.jsonl")
    p.add_argument("--plot", default=None, metavar="FILE.png", help="draw the distributions (matplotlib)")
    p.add_argument("--verify", action="store_true", help="replay every record through engine_lite and compare (slower)")
    p.add_argument("--quiet", action="store_true", help="no progress bar (it shows only on a terminal, on stderr)")
    p.set_defaults(func=simulate_cmd)

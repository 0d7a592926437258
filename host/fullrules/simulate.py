"""Many seeded games of either title, their statistics, records and plots.

The engine of each title (host/fullrules/stalk_full.py, host/fullrules/orchids_full.py) plays one
complete game; this module plays K of them, aggregates what players ask
about (how games end, how long they take, how far apart the scores are,
whether a seat wins more often), writes each game as a game record, and
draws the distributions. `bloomkeeper simulate` (host/commands/simulate.py) is
its command line.
"""

import json
import os
import statistics

import engine_lite
from engine_lite.vocab import GAMES  # the CLI offers simulate.GAMES

from host.fullrules import orchids_full, stalk_full

SEAT_NAMES = ("P1", "P2", "P3", "P4", "P5")


# How a game ended, in words (the JSON keeps the short keys).
END_WORDS = {
    "crash": "market crash",
    "bag": "bag empty",
    "seven_flowers": "7 flowers planted",
    "stalled": "stalled (no legal turn; ruling H7/H10)",
    "turn_limit": "turn limit reached",
}


def end_words(reason):
    return END_WORDS.get(reason, str(reason))


def game_seed(seed, i):
    """The seed of game i of a run: a string, so random.Random hashes it with
    SHA-512 (stable across runs and machines, unlike hash())."""
    return "%d:%d" % (seed, i)


def play_one(game, players, seed, i, policies, options, check=False):
    """Play game i of a run and return the finished engine object."""
    names = list(SEAT_NAMES[:players])
    s = game_seed(seed, i)
    if game == "stalk-exchange":
        return stalk_full.play_game(
            names,
            s,
            policies,
            length=options.get("length"),
            track_start=options.get("track_start"),
            layout=options.get("layout"),
            check=check,
        )
    return orchids_full.play_game(names, s, policies, deck=options.get("deck"), check=check)


def verify_record(g):
    """Replay the game's record through engine_lite.replay and compare with
    what the full engine read from its live engine_lite.Game.

    Returns None when they agree, else a one-line description."""
    state = engine_lite.replay(g.record_lines())
    if state.get("final") != g.result()["final"]:
        return "final scores differ after replay"
    live = g.g.state()
    for k in sorted(set(state) | set(live)):
        if state.get(k) != live.get(k):
            return "%s differs after replay" % k
    return None


def _summary(xs):
    if not xs:
        return None
    return {
        "mean": round(statistics.fmean(xs), 3),
        "median": statistics.median(xs),
        "min": min(xs),
        "max": max(xs),
        "stdev": round(statistics.pstdev(xs), 3),
    }


def run(game, players, games, seed, policies=("greedy",), options=None, records=None, verify=False, progress=None):
    """Play `games` games and return the statistics dict (the --json object).

    `records`: a directory to write game-NNNNN.jsonl files into.
    `verify`: replay every record through engine_lite and compare (slower)."""
    options = options or {}
    policies = tuple(policies)
    if records is not None:
        os.makedirs(records, exist_ok=True)
    reasons = {}
    turns = []
    all_scores = []
    winner_scores = []
    margins = []
    spreads = []
    seat_wins = [0.0] * players
    seat_outright = [0] * players
    seat_scores = [[] for _ in range(players)]
    seat_ranks = [[] for _ in range(players)]
    actions = {}
    finished = 0
    mismatches = []
    plot_rows = []
    width = max(5, len(str(games)))
    for i in range(games):
        g = play_one(game, players, seed, i, policies, options, check=verify)
        res = g.result()
        reasons[res["end_reason"]] = reasons.get(res["end_reason"], 0) + 1
        turns.append(res["turns"])
        for k, v in res["actions"].items():
            actions[k] = actions.get(k, 0) + v
        if records is not None:
            path = os.path.join(records, "game-%0*d.jsonl" % (width, i + 1))
            with open(path, "w") as f:
                f.write("\n".join(g.record_lines()) + "\n")
        if verify:
            problem = verify_record(g)
            if problem:
                mismatches.append({"game": i + 1, "seed": game_seed(seed, i), "problem": problem})
        if res["final"] is None:
            plot_rows.append((res["turns"], None))
            if progress:
                progress(i + 1)
            continue
        finished += 1
        scores = res["scores"]
        ranks = res["ranks"]
        plot_rows.append((res["turns"], scores))
        all_scores.extend(scores)
        ordered = sorted(scores, reverse=True)
        winner_scores.append(ordered[0])
        margins.append(ordered[0] - ordered[1])
        spreads.append(ordered[0] - ordered[-1])
        winners = [s for s in range(players) if ranks[s] == 1]
        for s in range(players):
            seat_scores[s].append(scores[s])
            seat_ranks[s].append(ranks[s])
        for s in winners:
            seat_wins[s] += 1.0 / len(winners)  # a shared win is split
            if len(winners) == 1:
                seat_outright[s] += 1
        if progress:
            progress(i + 1)

    seats = []
    for s in range(players):
        seats.append(
            {
                "seat": s + 1,
                "policy": policies[s % len(policies)],
                "wins": round(seat_wins[s], 3),
                "win_rate": round(seat_wins[s] / finished, 4) if finished else None,
                "outright_wins": seat_outright[s],
                "mean_score": round(statistics.fmean(seat_scores[s]), 3) if finished else None,
                "mean_rank": round(statistics.fmean(seat_ranks[s]), 3) if finished else None,
            }
        )
    out = {
        "game": game,
        "players": players,
        "games": games,
        "seed": seed,
        "policies": [policies[s % len(policies)] for s in range(players)],
        "finished": finished,
        "end_reasons": dict(sorted(reasons.items(), key=lambda kv: (-kv[1], str(kv[0])))),
        "turns": _summary(turns),
        "scores": {
            "all": _summary(all_scores),
            "winner": _summary(winner_scores),
            "margin_first_second": _summary(margins),
            "spread_first_last": _summary(spreads),
        },
        "seats": seats,
        "actions_per_game": {k: round(v / games, 3) for k, v in sorted(actions.items())},
    }
    if game == "stalk-exchange":
        out["track_start"] = stalk_full.default_track_start(players, options.get("length")) if options.get("track_start") is None else options["track_start"]
        if options.get("length"):
            out["length"] = options["length"]
    if verify:
        out["verified"] = games - len(mismatches)
        out["mismatches"] = mismatches
    out["_plot"] = plot_rows  # removed before printing; used by plot()
    return out


def format_text(stats):
    """The human summary printed without --json."""
    L = []
    pol = ", ".join(stats["policies"])
    head = "%s: %d games, %d players (%s), seed %d" % (stats["game"], stats["games"], stats["players"], pol, stats["seed"])
    if stats.get("track_start") is not None:
        head += ", track start %d" % stats["track_start"]
    if stats.get("length"):
        head += ", %s game" % stats["length"]
    L.append(head)
    n = stats["games"]
    L.append("end reasons: " + ", ".join("%s %d (%.1f%%)" % (end_words(k), v, 100.0 * v / n) for k, v in stats["end_reasons"].items()))
    t = stats["turns"]
    L.append("turns per game: mean %.1f, median %s, min %d, max %d (all seats' turns)" % (t["mean"], t["median"], t["min"], t["max"]))
    sc = stats["scores"]
    if stats["finished"]:
        L.append(
            "scores: mean %.1f (sd %.1f); winner mean %.1f; first-second margin mean %.1f; first-last spread mean %.1f"
            % (sc["all"]["mean"], sc["all"]["stdev"], sc["winner"]["mean"], sc["margin_first_second"]["mean"], sc["spread_first_last"]["mean"])
        )
        L.append("seat  policy   win%   wins  outright  mean score  mean rank")
        for s in stats["seats"]:
            L.append(
                "%-4d  %-7s %5.1f  %5.1f  %8d  %10.1f  %9.2f"
                % (s["seat"], s["policy"], 100 * s["win_rate"], s["wins"], s["outright_wins"], s["mean_score"], s["mean_rank"])
            )
        L.append("(a shared win counts as a fraction; expected win%% with no seat advantage: %.1f)" % (100.0 / stats["players"]))
    else:
        L.append("no game finished: no scores")
    if "verified" in stats:
        L.append("records replayed through engine_lite: %d of %d agree" % (stats["verified"], n))
    return "\n".join(L)


def public(stats):
    """The statistics without internal keys (what --json prints)."""
    return {k: v for k, v in stats.items() if not k.startswith("_")}


def plot(stats, path):
    """Draw turns, score and seat distributions to a PNG (matplotlib, Agg)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = stats["_plot"]
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.5))
    turns = [t for t, _ in rows]
    ax = axes[0]
    ax.hist(turns, bins=min(30, max(5, len(set(turns)))), color="#6a9f4b", edgecolor="white")
    ax.set_title("Turns per game")
    ax.set_xlabel("turns (all seats)")
    ax.set_ylabel("games")
    ax = axes[1]
    per_seat = [[sc[s] for _, sc in rows if sc is not None] for s in range(stats["players"])]
    if any(per_seat):
        ax.boxplot(per_seat)
        ax.set_xticks(range(1, stats["players"] + 1))
        ax.set_xticklabels(["seat %d\n%s" % (s["seat"], s["policy"]) for s in stats["seats"]])
    ax.set_title("Final score by seat")
    ax.set_ylabel("score")
    ax = axes[2]
    labels = [end_words(k) for k in stats["end_reasons"]]
    ax.bar(labels, list(stats["end_reasons"].values()), color="#c76b98")
    ax.set_title("How games end")
    ax.set_ylabel("games")
    fig.suptitle("%s, %d players, %d games, seed %d" % (stats["game"], stats["players"], stats["games"], stats["seed"]))
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def write_json(stats, fh):
    fh.write(json.dumps(public(stats), sort_keys=False) + "\n")

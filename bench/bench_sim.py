"""Speed of the full-rules simulator: complete 4-player Stalk Exchange games per second.

Budget 500 games/s, goal 2,000 (docs/simulation.md), on one core. Each game is played
by host/fullrules/stalk_full.py from setup to final scores, every table event applied
through engine_lite (as in `bloomkeeper simulate`), with the physical
cross-check switched off (that is a test aid, not part of a simulation).

Run:  .venv/bin/python -m bench.bench_sim      (prints the figures)
API:  measure() -> {"sim_games_per_second": median over runs, ...}
"""

import statistics
import sys
import time

if __package__ in (None, ""):  # run as a script: make the repo importable
    import os

    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from host.fullrules.stalk_full import play_game

NAMES = ("Ann", "Bo", "Cy", "Di")
BUDGET = 500
GOAL = 2000


def _run(policy, games, first_seed):
    """Play `games` games; return (seconds, turns) of CPU time on this process."""
    turns = 0
    t0 = time.process_time()
    for seed in range(first_seed, first_seed + games):
        turns += play_game(NAMES, seed, (policy,), check=False).turns
    return time.process_time() - t0, turns


def measure(games=150, runs=5, policies=("random", "greedy")):
    """Median games/s and turns/s over `runs` runs of `games` games each.

    CPU time of this process (time.process_time), so a busy neighbour on
    the machine slows the figure less than wall time would. The headline
    `sim_games_per_second` is the random-legal policy (the cheapest player,
    so the figure is about the engine and the garden, not a policy's
    search); the greedy figure is reported beside it."""
    out = {}
    for policy in policies:
        gps = []
        tps = []
        for r in range(runs):
            secs, turns = _run(policy, games, 10_000 * r)
            gps.append(games / secs)
            tps.append(turns / secs)
        out[policy] = {"games_per_second": statistics.median(gps), "turns_per_second": statistics.median(tps)}
    head = out[policies[0]]
    return {
        "sim_games_per_second": head["games_per_second"],
        "sim_turns_per_second": head["turns_per_second"],
        "sim_policy": policies[0],
        "sim_by_policy": out,
        "sim_budget": BUDGET,
        "sim_goal": GOAL,
    }


def main():
    m = measure()
    for policy, fig in m["sim_by_policy"].items():
        print(
            "stalk-exchange 4p, %-6s policy: %7.0f games/s  %8.0f turns/s  (budget %d, goal %d)"
            % (policy, fig["games_per_second"], fig["turns_per_second"], BUDGET, GOAL)
        )


if __name__ == "__main__":
    main()

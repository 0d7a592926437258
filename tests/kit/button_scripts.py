"""Game records turned into the button presses a scorekeeper would make
(docs/controls.md), for whole games played through the firmware: the
headless simulator on both runtimes (tests/host/test_sim_micropython.py) and the
heap and speed figures of bench/bench_board.py.
"""

import json

from engine_lite.orchids import flower_key
from engine_lite.tables import FLOWERS, TRACK_START_PLACEHOLDER


def load_events(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def number(n):
    """Presses that enter n from 0 on a number screen (tulip adds 5, then the rest)."""
    out = ["tulip"] * (n // 5)
    if n % 5:
        out.append(FLOWERS[n % 5 - 1])
    return out


def stalk_script(events):
    """A Stalk Exchange game record -> its button script; ends with OK = next
    game (the finished game is archived)."""
    start = events[0]
    n = len(start["players"])
    key = str(n)  # 5 players here; 2-player lengths are not needed
    lines = ["ok", FLOWERS[n - 1], "ok"]
    d = start.get("track_start", TRACK_START_PLACEHOLDER[key]) - TRACK_START_PLACEHOLDER[key]
    while d >= 5:
        lines.append("tulip")
        d -= 5
    while d <= -5:
        lines.append("long tulip")
        d += 5
    if d > 0:
        lines.append(FLOWERS[d - 1])
    elif d < 0:
        lines.append("long " + FLOWERS[-d - 1])
    lines.append("ok")
    for e in events[1:]:
        k = e["ev"]
        if k == "plant":
            lines.append("ok")
        elif k == "swap":
            lines.append("menu")
        elif k == "end_turn":
            lines.append("long ok")
        elif k == "flush":
            lines += ["long menu", "dahlia"]
        elif k == "harvest":
            lines += ["%s x%d" % (e["flower"], e["count"]), "ok"]
        elif k == "portfolio":
            lines += ["%s x%d" % (f, c) for f, c in e["counts"].items() if c]
            lines.append("ok")
        else:
            raise ValueError("no button script for %r" % k)
    lines.append("ok")
    return "\n".join(lines) + "\n"


def orchids_script(events):
    """An Oh My. Orchids! game record -> its button script.

    The board names plants itself (docs/controls.md): the plant-kind
    screen asks only whether a flora is a type the active player has not
    planted yet (1 dahlia) or one they already have (2 daffodil); OK is an
    orchid. So the script asks the engine, replaying the record alongside,
    which flora names the active player already holds, and presses dahlia or
    daffodil accordingly. The board then writes "Flora k" / "Orchid k" where
    the record has its own names: the game is the record's up to those names.
    Every score is the record's (each player's count of distinct types, hence
    the variety bonus, is the same), which tests/host/test_sim_micropython.py
    checks against the engine's replay of the record."""
    import engine_lite

    n = len(events[0]["players"])
    lines = ["daffodil", "ok", FLOWERS[n - 1], "ok"]
    g = engine_lite.Game()
    g.apply(events[0])
    for e in events[1:]:
        k = e["ev"]
        if k == "take":
            lines.append(FLOWERS[e["seeds"] - 1])
        elif k == "plant":
            if e["kind"] == "orchid":
                kind = "ok"
            else:
                st = g.table
                mine = [flower_key(f[0]) for f in st.flowers[st.player] if f[1] == "flora"]
                kind = "daffodil" if flower_key(e["name"]) in mine else "dahlia"
            lines += ["ok", kind] + number(e["points"]) + ["ok"] + number(e["seeds"]) + ["ok"]
        elif k == "end_turn":
            lines.append("long ok")
        elif k == "undo":
            lines.append("undo")
        else:
            raise ValueError("no button script for %r" % k)
        g.apply(e)
    lines.append("ok")
    return "\n".join(lines) + "\n"


# The whole 5-player games the firmware plays in MicroPython (tests/kit/game_driver.py):
# (key, record, the record -> its button script).
FULL_GAMES = (
    ("stalk_5p", "tests/records/stalk-5p-bag.jsonl", stalk_script),
    ("orchids_5p", "tests/records/orchids-5p.jsonl", orchids_script),
)


def cpython_result(text):
    """The RESULT line tests/kit/game_driver.py prints for button script `text`,
    from the same script played through the firmware in CPython (the
    headless simulator): screen, records of the game, scores."""
    from host.board_sim.headless import final_state, run_script_text

    app = run_script_text(text)
    players = final_state(app)["final"]["players"]
    return "RESULT %s %d %s" % (app.screen, len(app.last_game.log), " ".join("%s:%d" % (p["name"], p["score"]) for p in players))

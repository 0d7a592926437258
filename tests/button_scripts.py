"""Game records turned into the button presses a scorekeeper would make
(docs/controls.md), for whole games played through the firmware: the
headless simulator on both runtimes (tests/test_sim_micropython.py) and the
heap and speed figures of bench/bench_board.py.
"""

import json

from engine_lite.tables import FLOWERS, TRACK_START_PLACEHOLDER

FLORA_BUTTON = {}  # flora name -> the flower button that stands for its type


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
    """An Oh My. Orchids! game record -> its button script. The board names
    plants itself (orchids "Orchid k", flora by the button's type), so each
    flora name of the record is given a flower button of its own, in order of
    appearance: the game is the record's, up to those names."""
    n = len(events[0]["players"])
    lines = ["daffodil", "ok", FLOWERS[n - 1], "ok"]
    flora = {}
    for e in events[1:]:
        k = e["ev"]
        if k == "take":
            lines.append(FLOWERS[e["seeds"] - 1])
        elif k == "plant":
            if e["kind"] == "orchid":
                kind = "ok"
            else:
                kind = flora.setdefault(e["name"], FLOWERS[len(flora) % 5])
            lines += ["ok", kind] + number(e["points"]) + ["ok"] + number(e["seeds"]) + ["ok"]
        elif k == "end_turn":
            lines.append("long ok")
        elif k == "undo":
            lines.append("undo")
        else:
            raise ValueError("no button script for %r" % k)
    lines.append("ok")
    return "\n".join(lines) + "\n"

"""Seeded players that produce legal game records by asking engine_lite.

They only choose among events; engine_lite decides legality (an illegal
choice is refused and another is tried), so records they write exercise
the real rules. Used for the shared fixture records and property tests.
"""

import random

import engine_lite
from host.fullrules.fullgame import record_lines
from engine_lite.tables import FLOWERS, PORTFOLIO_SIZE, TOKENS_PER_FLOWER


def _try(g, ev):
    try:
        g.apply(ev)
        return True
    except engine_lite.EngineError:
        return False


def stalk_game(seed, players=5, track_start=None, harvest_rate=0.5, undo_rate=0.05):
    rnd = random.Random(seed)
    g = engine_lite.Game()
    start = {"ev": "start", "game": "stalk-exchange", "players": ["P%d" % i for i in range(1, players + 1)]}
    if track_start is not None:
        start["track_start"] = track_start
    g.apply(start)
    while not g.state()["game_over"]:
        for _ in range(2 + (rnd.random() < 0.3)):
            if not _try(g, {"ev": rnd.choice(("plant", "swap", "plant"))}):
                break
        if rnd.random() < 0.1:
            _try(g, {"ev": "flush"})
        if rnd.random() < undo_rate:
            _try(g, {"ev": "undo"})
            continue
        if rnd.random() < harvest_rate:
            _try(g, {"ev": "harvest", "flower": rnd.choice(FLOWERS), "count": rnd.randint(1, 3)})
        if not _try(g, {"ev": "end_turn"}):
            _try(g, {"ev": "plant"}) or _try(g, {"ev": "swap"})
            _try(g, {"ev": "end_turn"})
    s = g.state()
    pool = [TOKENS_PER_FLOWER - s["values"][f] for f in FLOWERS]
    for name in s["players"]:
        counts = {}
        for _ in range(PORTFOLIO_SIZE[players]):
            choices = [i for i in range(5) if pool[i] > 0]
            i = rnd.choice(choices)
            pool[i] -= 1
            counts[FLOWERS[i]] = counts.get(FLOWERS[i], 0) + 1
        g.apply({"ev": "portfolio", "player": name, "counts": counts})
    return g


FLORA = ("Ixora", "Bougainvillea", "Frangipani", "Hibiscus", "Heliconia")


def orchids_game(seed, players=5):
    rnd = random.Random(seed)
    g = engine_lite.Game()
    g.apply({"ev": "start", "game": "oh-my-orchids", "players": ["P%d" % i for i in range(1, players + 1)]})
    orchid = 0
    while not g.state()["game_over"]:
        s = g.state()
        me = s["players"][s["current_player"]]
        if not s["last_round"] and (me["hand"] < 3 or rnd.random() < 0.4):
            g.apply({"ev": "take", "seeds": rnd.randint(1, 5)})
            g.apply({"ev": "end_turn"})
        else:
            for _ in range(rnd.randint(1, 2)):
                if rnd.random() < 0.4:
                    orchid += 1
                    ev = {"ev": "plant", "name": "Orchid %d" % orchid, "kind": "orchid", "points": rnd.randint(3, 10), "seeds": rnd.randint(2, 4)}
                else:
                    ev = {"ev": "plant", "name": rnd.choice(FLORA), "kind": "flora", "points": rnd.randint(1, 5), "seeds": rnd.randint(1, 3)}
                _try(g, ev)
            if rnd.random() < 0.05:
                _try(g, {"ev": "undo"})
            if not _try(g, {"ev": "end_turn"}):
                g.apply({"ev": "take", "seeds": rnd.randint(1, 5)})
                g.apply({"ev": "end_turn"})
    return g


FIXTURES = {
    "stalk-5p-crash.jsonl": lambda: stalk_game(1, 5, harvest_rate=0.6),
    "stalk-5p-bag.jsonl": lambda: stalk_game(7, 5, track_start=60, harvest_rate=0.2),
    "stalk-2p.jsonl": lambda: stalk_game(3, 2),
    "stalk-4p.jsonl": lambda: stalk_game(4, 4),
    "orchids-5p.jsonl": lambda: orchids_game(5, 5),
    "orchids-2p.jsonl": lambda: orchids_game(6, 2),
}

if __name__ == "__main__":  # regenerate tests/records/ (test_records_fresh checks they match)
    import os

    here = os.path.join(os.path.dirname(os.path.dirname(__file__)), "records")
    for name, make in FIXTURES.items():
        with open(os.path.join(here, name), "w") as fh:
            fh.write("\n".join(record_lines(make())) + "\n")

"""Scoring a finished table without a game record (`bloomkeeper score`).

The input is checked here and scored by the same functions the games use
(stalk.final_scores, orchids.final_scores), so a rule lives in one place.
"""

from engine_lite import errors as E
from engine_lite import record as R
from engine_lite import stalk
from engine_lite import orchids
from engine_lite import tables as T


def _bad(msg):
    raise E.EngineError(E.BAD_FIELD, msg)


def _players(table, key):
    players = table.get(key)
    if type(players) is not dict:
        _bad("%s must be an object keyed by player name" % key)
    names = R.player_names(list(players), key)
    return names, players


def score(table):
    """The `final` dict for {"game": ..., ...} (see docs/game-record.md)."""
    if type(table) is not dict:
        _bad("input must be a JSON object")
    game = table.get("game")
    if game == "stalk-exchange":
        for k in table:
            if k not in ("game", "values", "portfolios"):
                _bad("unknown field %s" % k)
        values = R.flower_counts(table.get("values"), "values")[1:]
        names, ports = _players(table, "portfolios")
        counts = [R.flower_counts(ports[n], "portfolios.%s" % n)[1:] for n in names]
        for f in range(5):
            total = values[f]
            for c in counts:
                total += c[f]
            if total > T.TOKENS_PER_FLOWER:
                raise E.EngineError(E.TOO_MANY, "%s: %d tokens counted, only %d exist" % (T.FLOWERS[f], total, T.TOKENS_PER_FLOWER))
        return stalk.final_scores(values, names, counts)
    if game == "oh-my-orchids":
        for k in table:
            if k not in ("game", "players"):
                _bad("unknown field %s" % k)
        names, players = _players(table, "players")
        flowers = []
        composted = []
        for n in names:
            p = players[n]
            where = "players.%s" % n
            if type(p) is not dict:
                _bad("%s must be an object" % where)
            for k in p:
                if k not in ("composted", "flowers"):
                    _bad("%s: unknown field %s" % (where, k))
            c = p.get("composted", 0)
            if type(c) is not int or c < 0:
                _bad("%s.composted must be a whole number >= 0" % where)
            fl = p.get("flowers", [])
            if type(fl) is not list:
                _bad("%s.flowers must be a list" % where)
            row = []
            for i, f in enumerate(fl):
                fw = "%s.flowers[%d]" % (where, i)
                if type(f) is not dict:
                    _bad("%s must be an object" % fw)
                ev = {"ev": fw, "seeds": 1}
                ev.update(f)
                rec = R.encode_sow(ev)
                name, kind = R.sow_name(rec), R.KINDS[rec[1]]
                key = orchids.clash(flowers + [row], name, kind, fw)
                row.append((name, kind, rec[2], key))
            flowers.append(row)
            composted.append(c)
        return orchids.final_scores(names, flowers, composted)
    _bad("game must be stalk-exchange or oh-my-orchids")

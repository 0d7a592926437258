"""Scoring a finished table without a game record (`bloomkeeper score`).

The input is checked here, every refusal naming its JSON path
(`players.Ann.flowers[0].kind`), with the limits of the game record
(record.py, tables.py); it is scored by the same functions the games use
(stalk.final_scores, orchids.final_scores) and explained as a record's
`final` is (readout.stalk_final / orchids_final), so a rule lives in one place.
A bare table has no game behind it: portfolios of any size are scored
(ruling R6). Host-only: the board never imports this module.
"""

from engine_lite import errors
from engine_lite import record
from engine_lite import stalk
from engine_lite import orchids
from engine_lite import tables


def _bad(msg):
    raise errors.EngineError(errors.BAD_FIELD, msg)


def _at(path, key):
    return "%s.%s" % (path, key) if path else key


def _object(obj, path, fields):
    """obj must be a JSON object with no field outside `fields` (None: any)."""
    if type(obj) is not dict:
        _bad("%s must be an object" % (path or "input"))
    if fields is not None:
        for k in obj:
            if k not in fields:
                _bad("%s: unknown field" % _at(path, k))
    return obj


def _players(table, key):
    players = _object(table.get(key), key, None)
    names = record.player_names(list(players), key)
    return names, players


def _counts(counts, path):
    """Five flower counts (a missing flower is 0)."""
    _object(counts, path, tables.FLOWERS)
    out = bytearray(5)
    for k in counts:
        v = counts[k]
        if type(v) is not int or v < 0 or v > tables.TOKENS_PER_FLOWER:
            _bad("%s must be a whole number from 0 to %d" % (_at(path, k), tables.TOKENS_PER_FLOWER))
        out[tables.FLOWERS.index(k)] = v
    return out


def _whole(obj, key, path, hi):
    v = obj.get(key)
    if type(v) is not int or v < 0 or (hi is not None and v > hi):
        _bad("%s must be a whole number from 0%s" % (_at(path, key), " to %d" % hi if hi is not None else " up"))
    return v


def _flower(f, path):
    """(name, kind, points) of a planted flower, checked like a plant event."""
    _object(f, path, ("name", "kind", "points"))
    name = f.get("name")
    if type(name) is not str or not name.strip() or len(name) > record.FLOWER_NAME_MAX:
        _bad("%s must be 1 to %d characters" % (_at(path, "name"), record.FLOWER_NAME_MAX))
    if f.get("kind") not in record.KINDS:
        _bad("%s must be orchid or flora" % _at(path, "kind"))
    return name, f["kind"], _whole(f, "points", path, record.POINTS_MAX)


def score(table):
    """The `final` dict for {"game": ..., ...} (see docs/game-record.md),
    explained as a record's is. (readout is imported here: a module left
    out of the board's bundle is imported lazily by every module.)"""
    from engine_lite import readout

    game = _object(table, "", None).get("game")
    if game == "stalk-exchange":
        _object(table, "", ("game", "values", "portfolios"))
        values = _counts(table.get("values"), "values")
        names, ports = _players(table, "portfolios")
        counts = [_counts(ports[n], _at("portfolios", n)) for n in names]
        for f in range(5):
            total = values[f]
            for c in counts:
                total += c[f]
            if total > tables.TOKENS_PER_FLOWER:
                raise errors.EngineError(errors.TOO_MANY, "%s: %d tokens counted, only %d exist" % (tables.FLOWERS[f], total, tables.TOKENS_PER_FLOWER))
        return readout.stalk_final(values, names, counts)
    if game == "oh-my-orchids":
        _object(table, "", ("game", "players"))
        names, players = _players(table, "players")
        flowers = []
        composted = []
        for n in names:
            where = _at("players", n)
            p = _object(players[n], where, ("composted", "flowers"))
            c = _whole(p, "composted", where, None) if "composted" in p else 0
            fl = p.get("flowers", [])
            if type(fl) is not list:
                _bad("%s must be a list" % _at(where, "flowers"))
            row = []
            for i, f in enumerate(fl):
                fw = "%s.flowers[%d]" % (where, i)
                name, kind, points = _flower(f, fw)
                key = orchids.clash(flowers + [row], name, kind, fw)
                row.append((name, kind, points, key))
            flowers.append(row)
            composted.append(c)
        return readout.orchids_final(orchids.final_scores(names, flowers, composted))
    _bad("game must be stalk-exchange or oh-my-orchids")

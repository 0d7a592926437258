"""Exports of the plays database: json, csv, bgstats.

json     a JSON array of plays: board (the board's unique id), board_type,
         game_id (its game number there), date (the game's start, ISO 8601
         UTC), date_estimated (true when the board did not know the time:
         docs/protocol.md), state, game, players, events (the effective
         game-record events, in order), final when scored.
csv      one row per player per play (date and date_estimated as in json).
bgstats  a play file for the BG Stats app (its import JSON: sourceName,
         games with name and bggId, players, plays with playDate and
         playerScores: name, score, winner, startPlayer, rank); playDate is the
         game's start in the host's local time. Only scored plays go in:
         BG Stats needs the scores.
"""

import calendar
import csv
import io
import json
import time

from engine_lite.vocab import GAME_TITLES, GAMES

GAME_NAMES = dict(zip(GAMES, GAME_TITLES))

# BoardGameGeek ids. UNVERIFIED: our reference search could not confirm
# them; check on boardgamegeek.com (the number in /boardgame/NNN/...) and
# fill them in. 0 = "no BGG link" for BG Stats, which then matches the game
# by name instead of linking a wrong game.
BGG_ID_STALK_EXCHANGE_UNVERIFIED = 0
BGG_ID_OH_MY_ORCHIDS_UNVERIFIED = 0
BGG_IDS = {"stalk-exchange": BGG_ID_STALK_EXCHANGE_UNVERIFIED, "oh-my-orchids": BGG_ID_OH_MY_ORCHIDS_UNVERIFIED}


def state(p):
    """scored, over, abandoned (archived unfinished) or in progress."""
    if "final" in p:
        return "scored"
    if p["over"]:
        return "over"
    return "abandoned" if p.get("abandoned") else "in progress"


def local_time(iso_utc):
    """ISO 8601 UTC -> 'YYYY-MM-DD HH:MM:SS' in the host's local time."""
    t = calendar.timegm(time.strptime(iso_utc, "%Y-%m-%dT%H:%M:%SZ"))
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(t))


def to_json(plays):
    out = []
    for p in plays:
        item = {k: p.get(k) for k in ("board", "board_type", "game_id", "date", "date_estimated")}
        item["state"] = state(p)
        item.update({k: p[k] for k in ("game", "players", "events")})
        if "final" in p:
            item["final"] = p["final"]
        out.append(item)
    return json.dumps(out, indent=2) + "\n"


CSV_FIELDS = ("date", "date_estimated", "board", "game_id", "game", "seat", "player", "score", "rank", "winner", "finished", "state",
              "breakdown", "tiebreak")


def breakdown_words(r):
    """A final player's breakdown as one cell: "dahlia 4 x 5 = 20; ..." (the
    score sheet's lines; empty for a play that is not scored)."""
    return "; ".join("%s = %d" % (label, points) for label, points in r.get("breakdown", ()))


def _results(p):
    """{name: final player dict} of a scored play (empty if not scored)."""
    return {r["name"]: r for r in p.get("final", {}).get("players", [])}


def to_csv(plays):
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CSV_FIELDS)
    for p in plays:
        res = _results(p)
        for seat, name in enumerate(p["players"], 1):
            r = res.get(name, {})
            w.writerow(
                (
                    p["date"], "yes" if p.get("date_estimated") else "no", p["board"], p["game_id"], p["game"], seat, name,
                    r.get("score", ""), r.get("rank", ""),
                    ("yes" if r.get("winner") else "no") if r else "",
                    "yes" if "final" in p else "no", state(p),
                    breakdown_words(r), r.get("tiebreak", ""),
                )
            )
    return buf.getvalue()


def source_play_id(p):
    """Stable across exports, unique across boards and erased flashes:
    board id / game number / the game's nonce (when the board stamped one)."""
    ident = p.get("ident", "")
    if ident.startswith("nonce:"):
        return "%s/%s/%s" % (p["board"], p["game_id"], ident[6:])
    return "%s/%s" % (p["board"], p["game_id"])


def to_bgstats(plays):
    games, players, out = {}, {}, []
    for p in plays:
        res = _results(p)
        if not res:
            continue
        games[p["game"]] = {"sourceGameId": p["game"], "name": GAME_NAMES[p["game"]], "bggId": BGG_IDS[p["game"]]}
        scores = []
        for seat, name in enumerate(p["players"]):
            players[name] = {"sourcePlayerId": name, "name": name}
            r = res[name]
            scores.append(
                {
                    "sourcePlayerId": name,
                    "name": name,
                    "score": str(r["score"]),
                    "winner": bool(r["winner"]),
                    "startPlayer": seat == 0,  # seat order = list order; first player = first name
                    "rank": r["rank"],
                    "seatOrder": seat + 1,
                }
            )
        out.append(
            {
                "sourcePlayId": source_play_id(p),
                "sourceGameId": p["game"],
                "gameName": GAME_NAMES[p["game"]],
                "bggId": BGG_IDS[p["game"]],
                "playDate": local_time(p["date"]),
                "playerScores": scores,
            }
        )
    doc = {"sourceName": "Bloomkeeper", "games": list(games.values()), "players": list(players.values()), "plays": out}
    return json.dumps(doc, indent=2) + "\n"


FORMATS = {"json": to_json, "csv": to_csv, "bgstats": to_bgstats}

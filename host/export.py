"""Exports of the plays database: json, csv, bgstats.

json     a JSON array of plays: board, game_id, date, game, players,
         events (the effective game-record events, in order), final when scored.
csv      one row per player per play.
bgstats  a play file for the BG Stats app (its import JSON: sourceName,
         games with name and bggId, players, plays with playDate and
         playerScores: name, score, winner, startPlayer, rank). Only scored
         plays go in: BG Stats needs the scores.
"""

import csv
import io
import json

GAME_NAMES = {"stalk-exchange": "Stalk Exchange", "oh-my-orchids": "Oh My. Orchids!"}

# BoardGameGeek ids. UNVERIFIED: our reference search could not confirm
# them; check on boardgamegeek.com (the number in /boardgame/NNN/...) and
# fill them in. 0 = "no BGG link" for BG Stats, which then matches the game
# by name instead of linking a wrong game.
BGG_ID_STALK_EXCHANGE_UNVERIFIED = 0
BGG_ID_OH_MY_ORCHIDS_UNVERIFIED = 0
BGG_IDS = {"stalk-exchange": BGG_ID_STALK_EXCHANGE_UNVERIFIED, "oh-my-orchids": BGG_ID_OH_MY_ORCHIDS_UNVERIFIED}


def to_json(plays):
    out = []
    for p in plays:
        item = {k: p[k] for k in ("board", "game_id", "date", "game", "players", "events")}
        if "final" in p:
            item["final"] = p["final"]
        out.append(item)
    return json.dumps(out, indent=2) + "\n"


CSV_FIELDS = ("date", "board", "game_id", "game", "seat", "player", "score", "rank", "winner", "finished")


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
                    p["date"], p["board"], p["game_id"], p["game"], seat, name,
                    r.get("score", ""), r.get("rank", ""),
                    ("yes" if r.get("winner") else "no") if r else "",
                    "yes" if "final" in p else "no",
                )
            )
    return buf.getvalue()


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
                "sourcePlayId": "%s/%s" % (p["board"], p["game_id"]),
                "sourceGameId": p["game"],
                "gameName": GAME_NAMES[p["game"]],
                "bggId": BGG_IDS[p["game"]],
                "playDate": p["date"],
                "playerScores": scores,
            }
        )
    doc = {"sourceName": "Bloomkeeper", "games": list(games.values()), "players": list(players.values()), "plays": out}
    return json.dumps(doc, indent=2) + "\n"


FORMATS = {"json": to_json, "csv": to_csv, "bgstats": to_bgstats}

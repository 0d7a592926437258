"""Exports of the plays database: json, csv, bgstats, bgstats-links.

json     a JSON array of plays: board (the board's unique id), board_type,
         game_id (its game number there), date (the game's start, ISO 8601
         UTC), date_estimated (true when the board did not know the time:
         docs/protocol.md), state, game, players, events (the effective
         game-record events, in order), final when scored.
csv      one row per player per play (date and date_estimated as in json).
bgstats  a JSON array of plays, each in the shape BG Stats documents for
         plays pushed to it from other apps (docs/protocol.md, "BG Stats"):
         sourceName, sourcePlayId, playDate (the game's start in UTC),
         game {name, sourceGameId, bggId, highestWins, noPoints},
         players [{name, sourcePlayerId (a named player's name; an unnamed
         seat's id is unique to its play), score, winner, rank, startPlayer,
         role}], comments (only when the start is an estimate). Only scored
         plays go in: BG Stats needs the scores.
bgstats-links  the same plays, one BG Stats import link per line
         (createPlay.html?data=<the play, URL-encoded>): opened on a phone or
         tablet with BG Stats, each shows the app's import dialog.
"""

import calendar
import csv
import io
import json
import time
import urllib.parse

from engine_lite.vocab import GAME_TITLES, GAMES

GAME_NAMES = dict(zip(GAMES, GAME_TITLES))

# BoardGameGeek ids. UNVERIFIED: our reference search could not confirm
# them; check on boardgamegeek.com (the number in /boardgame/NNN/...) and
# fill them in. 0 = "no BGG link" for BG Stats, which then matches the game
# by name instead of linking a wrong game.
BGG_ID_STALK_EXCHANGE_UNVERIFIED = 0
BGG_ID_OH_MY_ORCHIDS_UNVERIFIED = 0
BGG_IDS = {"stalk-exchange": BGG_ID_STALK_EXCHANGE_UNVERIFIED, "oh-my-orchids": BGG_ID_OH_MY_ORCHIDS_UNVERIFIED}

SOURCE_NAME = "Bloomkeeper"  # BG Stats remembers its matches of games and players per source: keep it stable
BGSTATS_LINK = "https://app.bgstatsapp.com/createPlay.html?data="
# What a BG Stats export says beside its output (stderr), while an id is 0.
BGSTATS_NOTE = ("bggId is 0 for %s: their BoardGameGeek ids are not verified, so BG Stats matches "
                "the game by name (or asks) instead of linking a wrong one")


def state(p):
    """scored, over, abandoned (archived unfinished) or in progress."""
    if "final" in p:
        return "scored"
    if p["over"]:
        return "over"
    return "abandoned" if p.get("abandoned") else "in progress"


def local_time(iso_utc):
    """ISO 8601 UTC -> 'YYYY-MM-DD HH:MM:SS' in the host's local time (what
    `plays` prints)."""
    t = calendar.timegm(time.strptime(iso_utc, "%Y-%m-%dT%H:%M:%SZ"))
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(t))


def bgstats_date(iso_utc):
    """ISO 8601 UTC -> BG Stats' playDate, 'YYYY-MM-DD HH:MM:SS' in UTC.

    BG Stats reads playDate as UTC and shows it in the phone's own zone
    (docs/protocol.md, "BG Stats"): the host's zone must not enter, or an
    evening game east of UTC lands on the next day. Parsed, not sliced, so
    a malformed date fails here rather than reaching the app."""
    t = calendar.timegm(time.strptime(iso_utc, "%Y-%m-%dT%H:%M:%SZ"))
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(t))


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
    """One row per player per play. Text that came from a board is written
    with its control characters escaped (show): a CSV is read on terminals
    and in spreadsheets, and a board's id is data, not commands."""
    from host.io_util import show

    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CSV_FIELDS)
    for p in plays:
        res = _results(p)
        for seat, name in enumerate(p["players"], 1):
            r = res.get(name, {})
            w.writerow(
                (
                    p["date"], "yes" if p.get("date_estimated") else "no", show(p["board"]), show(p["game_id"]), p["game"], seat, show(name),
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


def unnamed(name, seat):
    """True for a seat nobody named: the board calls seat k "Seat k" then
    (firmware/screens.py), in every play of every board."""
    return name == "Seat %d" % (seat + 1)


def source_player_id(p, seat):
    """BG Stats remembers which of the user's players a (sourceName,
    sourcePlayerId) is, once matched, for every later import. A name the
    players entered is a person: the name itself, the same on every play
    and board. An unnamed seat is nobody in particular: its id is unique to
    the play (the play's id + the seat), so two strangers in "Seat 1" of two
    plays are never merged. A name is 1-12 characters and a play's id is
    longer, so the two kinds never meet."""
    name = p["players"][seat]
    return "%s/seat %d" % (source_play_id(p), seat + 1) if unnamed(name, seat) else name


ESTIMATED_NOTE = "Start time estimated by the host (the board did not know the time)"


def bgstats_play(p):
    """One scored play as BG Stats' import payload (docs/protocol.md, "BG Stats")."""
    res = _results(p)
    players = []
    for seat, name in enumerate(p["players"]):
        r = res[name]
        players.append(
            {
                "name": name,
                "sourcePlayerId": source_player_id(p, seat),
                "score": r["score"],
                "winner": bool(r["winner"]),
                "rank": r["rank"],
                "startPlayer": seat == 0,  # seat order = list order; the first name plays first
                "role": "",
            }
        )
    play = {
        "sourceName": SOURCE_NAME,
        "sourcePlayId": source_play_id(p),
        "playDate": bgstats_date(p["date"]),
        "game": {
            "name": GAME_NAMES[p["game"]],
            "sourceGameId": p["game"],
            "bggId": BGG_IDS[p["game"]],
            "highestWins": True,  # both rulebooks: the most points wins (ties: docs/rulings.md)
            "noPoints": False,
        },
        "players": players,
    }
    if p.get("date_estimated"):
        play["comments"] = ESTIMATED_NOTE
    return play


def _scored(plays):
    return [p for p in plays if _results(p)]


def to_bgstats(plays):
    return json.dumps([bgstats_play(p) for p in _scored(plays)], indent=2) + "\n"


def to_bgstats_links(plays):
    return "".join(BGSTATS_LINK + urllib.parse.quote(json.dumps(bgstats_play(p), separators=(",", ":")), safe="") + "\n"
                   for p in _scored(plays))


def note(fmt, plays):
    """A line to show beside an export (None: nothing to say): BG Stats
    exports say when a game goes out without a verified BoardGameGeek id."""
    if not fmt.startswith("bgstats"):
        return None
    games = sorted({GAME_NAMES[p["game"]] for p in _scored(plays) if not BGG_IDS[p["game"]]})
    return BGSTATS_NOTE % " and ".join(games) if games else None


FORMATS = {"json": to_json, "csv": to_csv, "bgstats": to_bgstats, "bgstats-links": to_bgstats_links}

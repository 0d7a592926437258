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
import re
import time
import urllib.parse
from json.encoder import encode_basestring_ascii as _encode_str  # what json.dumps does with text (ensure_ascii)

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


def json_head(p):
    """The export's fields of a play that the database may change after
    its records (its board's words, its date, its state)."""
    item = {k: p.get(k) for k in ("board", "board_type", "game_id", "date", "date_estimated")}
    item["state"] = state(p)
    return item


def json_item(p):
    """One play as the json export writes it: json_head, then the fields
    its records alone decide (game, players, events, final when scored)."""
    item = json_head(p)
    item.update({k: p[k] for k in ("game", "players", "events")})
    if "final" in p:
        item["final"] = p["final"]
    return item


def _indent(text):
    return "\n".join("  " + line for line in text.split("\n"))  # a JSON text's newlines are its layout only


def json_tail(p):
    """The json export's lines of the fields a play's records alone decide,
    as they stand inside the array (json.dumps(plays, indent=2)): written
    once per play at sync time (host/sync/db.py summaries), so that an export
    joins text instead of replaying and re-encoding every play."""
    item = json_item(p)
    tail = {k: item[k] for k in item if k not in json_head(p)}
    return _indent(json.dumps(tail, indent=2).split("\n", 1)[1].rsplit("\n", 1)[0])


def jsonl_tail(p):
    """The JSON Lines line's text of the same fields as json_tail, compact
    (json.dumps(..., separators=(",", ":")) of them, without the braces):
    written once per play at sync time beside its json_tail."""
    item = json_item(p)
    tail = {k: item[k] for k in item if k not in json_head(p)}
    return json.dumps(tail, separators=(",", ":"))[1:-1]


def compact_of(json_tail_text):
    """jsonl_tail's text from a stored json_tail's (the migration that keeps
    them both): its layout dropped, or parsed and encoded again."""
    made = compact_tail(json_tail_text)
    if made is None:
        made = json.dumps(json.loads("{" + json_tail_text + "}"), separators=(",", ":"))[1:-1]
    return made


def _scalar(v):
    """json.dumps of a head field (text, a truth value or None), the short way."""
    if type(v) is str:
        return _encode_str(v)
    if v is True or v is False or v is None:
        return _LITERALS[v]
    return json.dumps(v)


_LITERALS = {True: "true", False: "false", None: "null"}


def json_text(p):
    """One play as it stands inside the json export's array. A play read
    from the summaries (host/sync/db.py stream) brings its json_tail; else
    it is encoded whole. Either way the same bytes."""
    if "json_tail" in p:
        head = "".join("    %s: %s,\n" % (_scalar(k), _scalar(v)) for k, v in json_head(p).items())
        return "  {\n" + head + p["json_tail"] + "\n  }"
    return _indent(json.dumps(json_item(p), indent=2))


def full_item(p):
    """json_item of a play from the summaries (its events are in its json_tail) or a whole one."""
    if "json_tail" not in p:
        return json_item(p)
    item = json_head(p)
    item.update(json.loads("{" + p["json_tail"] + "}"))
    return item


def write_json(plays, out, item=json_text):
    """The json export, one play at a time: a JSON array whose bytes are
    json.dumps(every play, indent=2) + newline, at constant memory."""
    n = 0
    for p in plays:
        out.write(("[\n" if not n else ",\n") + item(p))
        n += 1
    out.write("\n]\n" if n else "[]\n")


def jsonl_line(p):
    """One play as a JSON Lines line: json.dumps(json_item(p), separators=(",", ":"))
    and a newline. A play read from the summaries brings its json_tail,
    written compact here by dropping its layout (compact_tail) instead of
    parsing and encoding it again; one from a database that keeps its
    jsonl_tail brings that. Either way the same bytes."""
    tail = p.get("jsonl_tail") or (compact_tail(p["json_tail"]) if "json_tail" in p else None)
    if tail is None:
        return json.dumps(full_item(p), separators=(",", ":")) + "\n"
    head = ",".join("%s:%s" % (_scalar(k), _scalar(v)) for k, v in json_head(p).items())
    return "{" + head + "," + tail + "}\n"


_LAYOUT = re.compile(r"\n *")  # a line break and the next line's indent: in JSON text outside strings only


def compact_tail(tail):
    """A json_tail (members of a json.dumps(..., indent=2) object, every
    line indented) as json.dumps(..., separators=(",", ":")) writes the
    same members, or None when that cannot be told without parsing it.

    A JSON text (ensure_ascii: no raw line break inside a string) laid out
    with indent=2 differs from the compact one by a line break and indent
    after "[", "{" and "," and before "]" and "}", and a space after each
    key's ":". The first go with _LAYOUT. Then every '": ' is a key's end,
    unless a string holds an escaped quote (a backslash: one fast scan) or
    begins with ": ". Such a string's opening quote comes after a space (its
    line's indent, or a key's ": "), so ' ": ' is in the tail; that also
    catches harmless text (a key ending in a space): those tails are parsed
    instead."""
    if "\\" in tail or not tail.startswith(" ") or ' ": ' in tail:
        return None
    return _LAYOUT.sub("", tail.lstrip(" ")).replace('": ', '":')


def write_jsonl(plays, out):
    """JSON Lines: one play per line, compact, the fields of the json export."""
    _write_chunked(out, (jsonl_line(p) for p in plays))


def _write_chunked(out, texts, size=256):
    """out.write of the texts joined `size` at a time: a write per play
    costs more than the play's text on a 100,000-play export."""
    chunk = []
    for t in texts:
        chunk.append(t)
        if len(chunk) >= size:
            out.write("".join(chunk))
            chunk.clear()
    if chunk:
        out.write("".join(chunk))


def _text_of(writer, plays):
    buf = io.StringIO()
    writer(plays, buf)
    return buf.getvalue()


def to_json(plays):
    return _text_of(write_json, plays)


CSV_FIELDS = ("date", "date_estimated", "board", "game_id", "game", "seat", "player", "score", "rank", "winner", "finished", "state",
              "breakdown", "tiebreak")


def breakdown_words(r):
    """A final player's breakdown as one cell: "dahlia 4 x 5 = 20; ..." (the
    score sheet's lines; empty for a play that is not scored)."""
    return "; ".join("%s = %d" % (label, points) for label, points in r.get("breakdown", ()))


def _results(p):
    """{name: final player dict} of a scored play (empty if not scored)."""
    return {r["name"]: r for r in p.get("final", {}).get("players", [])}


def csv_rows(p):
    """A play's CSV rows, one per player. Text that came from a board is
    written with its control characters escaped (show): a CSV is read on
    terminals and in spreadsheets, and a board's id is data, not commands."""
    from host.io_util import show

    res = _results(p)
    for seat, name in enumerate(p["players"], 1):
        r = res.get(name, {})
        yield (
            p["date"], "yes" if p.get("date_estimated") else "no", show(p["board"]), show(p["game_id"]), p["game"], seat, show(name),
            r.get("score", ""), r.get("rank", ""),
            ("yes" if r.get("winner") else "no") if r else "",
            "yes" if "final" in p else "no", state(p),
            breakdown_words(r), r.get("tiebreak", ""),
        )


def write_csv(plays, out):
    """One row per player per play, one play at a time."""
    w = csv.writer(out, lineterminator="\n")
    w.writerow(CSV_FIELDS)
    for p in plays:
        w.writerows(csv_rows(p))


def to_csv(plays):
    return _text_of(write_csv, plays)


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
    return (p for p in plays if _results(p))


def indented(v, pad=""):
    """json.dumps(v, indent=2), its lines after the first indented by `pad`
    (a value standing `pad` deep in an indented document), made in one
    recursive pass: json's own indented encoder is Python, a generator per
    level, and was most of a BG Stats export's time. Dicts with text keys,
    lists, text, whole numbers, truth values and None are written here;
    anything else by json itself."""
    t = type(v)
    if t is dict and v and all(type(k) is str for k in v):
        inner = pad + "  "
        return "{\n" + ",\n".join("%s%s: %s" % (inner, _encode_str(k), indented(x, inner)) for k, x in v.items()) + "\n" + pad + "}"
    if t is list and v:
        inner = pad + "  "
        return "[\n" + ",\n".join(inner + indented(x, inner) for x in v) + "\n" + pad + "]"
    if t is str:
        return _encode_str(v)
    if t is int:
        return int.__repr__(v)
    if v is True or v is False or v is None:
        return _LITERALS[v]
    return json.dumps(v, indent=2).replace("\n", "\n" + pad)  # a JSON text's newlines are its layout only


def write_bgstats(plays, out):
    write_json((bgstats_play(p) for p in _scored(plays)), out, item=lambda b: "  " + indented(b, "  "))


def bgstats_link(p):
    return BGSTATS_LINK + quote_ascii(json.dumps(bgstats_play(p), separators=(",", ":"))) + "\n"


# urllib.parse.quote(text, safe="") of ASCII text (json.dumps writes nothing
# else) as one str.translate: quote() takes its text a byte at a time in Python.
_QUOTED = {c: "%%%02X" % c for c in range(128) if urllib.parse.quote(chr(c), safe="") != chr(c)}


def quote_ascii(text):
    if not text.isascii():
        return urllib.parse.quote(text, safe="")
    return text.translate(_QUOTED)


def write_bgstats_links(plays, out):
    for p in _scored(plays):
        out.write(bgstats_link(p))


def to_bgstats(plays):
    return _text_of(write_bgstats, plays)


def to_bgstats_links(plays):
    return _text_of(write_bgstats_links, plays)


def note(fmt, plays):
    """A line to show beside an export (None: nothing to say): BG Stats
    exports say when a game goes out without a verified BoardGameGeek id."""
    return games_note(fmt, {p["game"] for p in _scored(plays)})


def games_note(fmt, scored_games):
    """note() from the games of the scored plays alone."""
    if not fmt.startswith("bgstats"):
        return None
    games = sorted({GAME_NAMES[g] for g in scored_games if not BGG_IDS[g]})
    return BGSTATS_NOTE % " and ".join(games) if games else None


class Seen:
    """The plays an export wrote, passed through as it streams: what note()
    needs is kept (the games of its scored plays), never the plays."""

    def __init__(self, plays):
        self.plays = plays
        self.games = set()

    def __iter__(self):
        for p in self.plays:
            if _results(p):
                self.games.add(p["game"])
            yield p

    def note(self, fmt):
        return games_note(fmt, self.games)


FORMATS = {"json": to_json, "csv": to_csv, "bgstats": to_bgstats, "bgstats-links": to_bgstats_links}
# The same, written to a stream one play at a time (constant memory), and
# JSON Lines (one compact play per line) beside the json array.
WRITERS = {"json": write_json, "jsonl": write_jsonl, "csv": write_csv, "bgstats": write_bgstats, "bgstats-links": write_bgstats_links}
LINES = {"json": "json", "jsonl": "jsonl"}  # the stored text a format writes (Database.stream's lines); the others need no events

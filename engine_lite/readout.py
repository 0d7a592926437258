"""The table as plain dicts: the state and the events a game record holds
(docs/game-record.md), and a whole game record replayed into them, for
the host, the simulator and the tests.

Why a module of its own: the board never asks for a state dict, decodes
its own records (its link sends the compact records, the host decodes
them) or reads a game record, so this code is imported lazily by
Game.state() / Game.events() / engine_lite.replay and never takes the
board's bundle or RAM.
"""

import json

from engine_lite import record
from engine_lite import stalk
from engine_lite import orchids
from engine_lite.errors import EngineError, BAD_EVENT, BAD_JSON, NOT_STARTED
from engine_lite.game import Game
from engine_lite.vocab import FLOWERS

ROUND_MAX = 40  # the most events the round so far names (the board keeps this many records for it: firmware/table_server.py)
BARE_OPS = {record.OP_PLANT: "plant", record.OP_SWAP: "swap", record.OP_FLUSH: "flush", record.OP_CRASH: "crash", record.OP_END_TURN: "end_turn", record.OP_STUCK: "stuck"}


def state_dict(st):
    """The state as a plain dict (see docs/game-record.md)."""
    if st is None:
        return {"game": None}
    if st.game == record.STALK:
        return stalk_dict(st)
    return orchids_dict(st)


def stalk_dict(st):
    d = {
        "game": "stalk-exchange",
        "players": st.names,
        "current_player": None if st.over else st.names[st.player],
        "turn": st.turn,
        "actions": st.actions,
        "phase": "over" if st.over else ("upkeep" if st.upkeep else "action"),
        "values": stalk.flower_dict(st.values),
        "harvested": st.harvested,
        "bag": st.bag,
        "exchange": st.exchange,
        "tokens": {},
        "flush_used": {},
        "end_triggered": stalk.TRIGGERS[st.trigger],
        "game_over": st.over,
        "track_start": st.track_start,
        "track_start_placeholder": not st.track_given,
        # once the end is triggered the countdown means nothing: null, not a stale number
        "tokens_until_crash": None if st.trigger else st.crash_distance(),
        "portfolios_entered": [st.names[s] for s in range(st.n) if st.entered[s]],
    }
    for s in range(st.n):
        d["tokens"][st.names[s]] = st.tokens[s]
        d["flush_used"][st.names[s]] = bool(st.flushed[s])
    if st.all_entered():
        d["final"] = stalk_final(st.values, st.names, [st.portfolios[5 * s : 5 * s + 5] for s in range(st.n)])
    return d


def orchids_dict(st):
    players = {}
    for s in range(st.n):
        players[st.names[s]] = {
            "hand": st.hand[s],
            "flowers": [{"name": f[0], "kind": f[1], "points": f[2]} for f in st.flowers[s]],
            "points": orchids.flower_points(st.flowers[s]),
            "composted": st.composted[s],
        }
    d = {
        "game": "oh-my-orchids",
        "seats": st.names,
        "current_player": None if st.over else st.names[st.player],
        "turn": st.turn,
        "last_round": st.last_round,
        "game_over": st.over,
        "players": players,
    }
    if st.over:
        d["final"] = orchids_final(st.final())
    return d


# -- the scores explained ----------------------------------------------------
# Each player of `final` gets `breakdown`, [label, points] pairs that add up
# to the score (a paper score sheet's lines), and, where a tie-break decided
# the place, `tiebreak`: a sentence naming the tier that decided it. Only the
# host asks (the board's results screen shows the totals), so the board's
# final_scores stays as it is and this reads the same rows it ranks.


def stalk_final(values, names, portfolios):
    """stalk.final_scores with each player's breakdown (count x final value
    per flower, busted ones marked) and tie-break sentence (ruling R2: the
    tier is the flower, or the flowers of equal value, whose count decided)."""
    final = stalk.final_scores(values, names, portfolios)
    fv, busted, rows = stalk.score_rows(values, portfolios)
    levels = sorted(set(fv), reverse=True)  # the key's tiers, as score_rows builds them
    key = {names[r[2]]: r[1] for r in rows}
    for p in final["players"]:
        c = portfolios[names.index(p["name"])]
        out = []
        for i in range(5):
            label = "%s %d x %d" % (FLOWERS[i], c[i], fv[i])
            if FLOWERS[i] in busted:
                label += " (busted %d -> %d)" % (values[i], fv[i])
            out.append([label, c[i] * fv[i]])
        p["breakdown"] = out
    final["before_bust"] = stalk.flower_dict(values)  # the busted flowers' values before the bust

    def decide(a, b):
        for t in range(len(levels)):
            x, y = key[a["name"]][t], key[b["name"]][t]
            if x != y:
                tier = [FLOWERS[i] + "s" for i in range(5) if fv[i] == levels[t]]
                what = tier[0] if len(tier) == 1 else "%s together, worth %d each" % (" and ".join(tier), levels[t])
                return what, x, y
        return None

    _tiebreaks(final["players"], decide, "the same count at every tier")
    return final


def orchids_final(final):
    """orchids.final_scores' dict with each player's breakdown (flower points,
    variety bonus, composted) and tie-break sentence (ruling R12: the total,
    then the orchid cards)."""
    for p in final["players"]:
        p["breakdown"] = [["flower points", p["flower_points"]], ["variety bonus", p["variety_bonus"]], ["composted", -p["composted"]]]

    def decide(a, b):
        return None if a["orchids"] == b["orchids"] else ("orchid cards", a["orchids"], b["orchids"])

    _tiebreaks(final["players"], decide, "as many orchid cards")
    return final


def _tiebreaks(players, decide, same):
    """Say, for each player whose score another player has too, how the
    tie-break placed them: the rank shared with those it left level, and
    ahead of / behind the nearest equal score it told apart (`decide(a, b)`:
    (the tier's words, a's count, b's count), or None if it leaves them
    level). Players are in rank order."""
    for i, p in enumerate(players):
        said = []
        level = [q["name"] for q in players if q is not p and q["rank"] == p["rank"]]
        if level:
            said.append("shares rank %d with %s: %d points each and %s" % (p["rank"], " and ".join(level), p["score"], same))
        for step in (-1, 1):
            j = i + step
            while 0 <= j < len(players) and players[j]["rank"] == p["rank"]:
                j += step
            if 0 <= j < len(players) and players[j]["score"] == p["score"]:
                q = players[j]
                d = decide(p, q)
                said.append("%s %s on %d points: %s %s (%d to %d)" % (
                    "behind" if step < 0 else "ahead of", q["name"], p["score"], "fewer" if step < 0 else "more", d[0], d[1], d[2]))
        if said:
            p["tiebreak"] = "; ".join(said)


def log_events(log):
    """The events of a game's log as dicts, oldest first (Game.events)."""
    out = []
    game = None
    names = None
    for rec in log.records():
        if game is None:
            game = rec[1]
            names = record.start_names(rec)
        out.append(decode(rec, game, names))
    return out


def decode(rec, game, names):
    """The event dict of a compact record (inverse of encode)."""
    op = rec[0]
    if op == record.OP_START:
        ev = {"ev": "start", "game": record.GAMES[rec[1]], "players": record.start_names(rec)}
        if rec[3] & record.F_LENGTH:
            ev["length"] = "short" if rec[3] & record.F_SHORT else "long"
        if rec[3] & record.F_TRACK:
            ev["track_start"] = rec[4]
        if rec[3] & 56:
            from engine_lite.stamp import decode_fields

            decode_fields(rec, ev)
        return ev
    if op == record.OP_UNDO:
        return {"ev": "undo"}
    if op == record.OP_END_TURN and len(rec) > 1:
        return {"ev": "end_turn", "early": True}
    if op in BARE_OPS:
        return {"ev": BARE_OPS[op]}
    if op == record.OP_HARVEST:
        return {"ev": "harvest", "flower": FLOWERS[rec[1]], "count": rec[2]}
    if op == record.OP_PORTFOLIO:
        counts = {}
        for i in range(5):
            if rec[2] & (1 << i):
                counts[FLOWERS[i]] = rec[3 + i]
        return {"ev": "portfolio", "player": names[rec[1]], "counts": counts}
    if op == record.OP_TAKE:
        return {"ev": "take", "seeds": rec[1]}
    if op == record.OP_SOW:
        return {"ev": "plant", "name": record.sow_name(rec), "kind": record.KINDS[rec[1]], "points": rec[2], "seeds": rec[3]}
    raise EngineError(BAD_EVENT, "unknown record opcode %d" % op)


def last_round(recs, table):
    """The round so far: the events of the turn in play and of the n-1
    turns before it (what the others did since this player last played),
    at most ROUND_MAX, oldest first, as decode's dicts with "who": whose
    turn it was (a portfolio: its own player). `recs`: the game's newest
    records, oldest first (any number; the start record ends the walk).
    Who played is counted back from the player to play: both rulebooks pass
    the turn seat to seat, and a game's last end of turn passes it to
    no one (the table's player stays the one who ended it)."""
    n = table.n
    seat = (table.player + (1 if table.over else 0)) % n
    out = []
    turns = 0
    for rec in reversed(recs):
        if rec[0] == record.OP_START or len(out) == ROUND_MAX:
            break
        if rec[0] == record.OP_END_TURN:
            turns += 1
            if turns == n:
                break
            seat = (seat - 1) % n
        ev = decode(rec, table.game, table.names)
        ev["who"] = ev.get("player", table.names[seat])
        out.append(ev)
    out.reverse()
    return out


# -- a game record read as a whole (the host's `bloomkeeper replay`, the tests) --


def parse_line(text):
    """One game-record line as an event dict (EngineError if it is not)."""
    try:
        ev = json.loads(text)
    except ValueError:
        raise EngineError(BAD_JSON, "not valid JSON")
    if type(ev) is not dict:
        raise EngineError(BAD_JSON, "an event must be a JSON object")
    return ev


def replay(lines, game=None):
    """Fold a game record (any iterable of JSON lines) into a state dict.

    Blank lines are skipped but counted. An illegal event raises EngineError
    with `.line` (1-based) and `.code`; nothing is returned then."""
    g = Game() if game is None else game
    n = 0
    for text in lines:
        n += 1
        if isinstance(text, bytes):
            text = str(text, "utf-8")
        if text.strip():
            try:
                g.apply(parse_line(text))
            except EngineError as err:
                err.line = n
                raise
    if g.table is None:
        raise EngineError(NOT_STARTED, "the record has no start event", n)
    return g.state()

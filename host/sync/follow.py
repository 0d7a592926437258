"""Following the board's game as it is played: the live scoreboard
(`bloomkeeper follow`, the dashboard's board thread) and the recording that
keeps the plays database current while following (`follow --db`).

Why here and not in a command: the dashboard (host/dashboard/board.py) follows
the board with the same code as `follow`, so the page shows what `follow`
prints; host/commands/sync.py is only its command line."""

import engine_lite
from engine_lite.record import OP_UNDO

from host.io_util import show
from host.sync import db as plays_db
from host.sync.link import peer_error


def scoreboard(g):
    """The game in progress, in words (one string, several lines)."""
    st = g.state()
    if st.get("game") is None:
        return "no game"
    names = list(g.names)
    lines = []
    if st["game"] == "stalk-exchange":
        vals = "  ".join("%s %d" % (k, v) for k, v in st["values"].items())
        lines.append("Stalk Exchange  values: %s" % vals)
        lines.append("bag %d  exchange %d  harvested %d" % (st["bag"], st["exchange"], st["harvested"]))
        for i, n in enumerate(names):
            mark = ">" if n == st["current_player"] else " "  # the state names the player (None once over)
            tok = st["tokens"][n] if isinstance(st["tokens"], dict) else st["tokens"][i]
            fl = st["flush_used"][n] if isinstance(st["flush_used"], dict) else st["flush_used"][i]
            lines.append("%s %-12s tokens %d%s" % (mark, show(n), tok, "  flushed" if fl else ""))
        if st.get("tokens_until_crash") is not None and not st["game_over"]:
            lines.append("crash in %s harvested token(s) at the earliest" % st["tokens_until_crash"])
        if st.get("end_triggered"):
            lines.append("LAST TURN: end triggered (%s)" % st["end_triggered"])
    else:
        lines.append("Oh My. Orchids!%s" % ("  LAST ROUND" if st.get("last_round") else ""))
        for n in names:
            p = st["players"][n]
            mark = ">" if n == st["current_player"] else " "
            lines.append("%s %-12s hand %d  flowers %d  points %d  composted %d" % (mark, show(n), p["hand"], len(p["flowers"]), p["points"], p["composted"]))
    if st["game_over"]:
        lines.append("GAME OVER")
    if "final" in st:
        lines.append("final: " + ", ".join("%d. %s %s" % (r["rank"], show(r["name"]), r["score"]) for r in st["final"]["players"]))
        lines.extend(score_lines(st["final"]))
    return "\n".join(lines)


def score_lines(final):
    """Each player's score as its sum (the breakdown's nonzero lines) and the
    tie-break that placed them, if one did: what players check on paper."""
    out = []
    for r in final["players"]:
        parts = [("%s = %d" % (label, points)) for label, points in r["breakdown"] if points]
        out.append("  %s %d: %s" % (r["name"], r["score"], ", ".join(parts) or "nothing scored"))
        if "tiebreak" in r:
            out.append("    tie-break: %s" % r["tiebreak"])
    return out


class Follower:
    """The board's game in progress, kept current by live events."""

    def __init__(self, link):
        self.link = link
        self.gid = None
        self.game = None
        self.problem = None  # why the board's game stops being followed part way (a refused record)

    def refetch(self):
        ans = self.link.call("subscribe", on=True)
        gid = ans.get("game") if type(ans) is dict else None
        if gid is not None and not plays_db.gid_ok(gid):
            raise peer_error("subscribe", "game is not a game id")
        self.gid = gid
        self.game = engine_lite.Game()
        self.problem = None
        if self.gid is None:
            return
        have = 0
        recs = []
        while True:
            start, total, _, chunk = self.link.events(self.gid, have)
            recs.extend(chunk)
            have += len(chunk)
            if have >= total or not chunk:
                break
        good, why = plays_db.judge(recs)
        for r in recs[:good]:
            self.game.apply_record(r)
        if why is not None:
            self.problem = "board %s, game %s: %s (not followed past it)" % (show(self.link.name), show(self.gid), show(why))

    def take(self, push):
        """Apply one live event; False if a refetch was needed instead."""
        gid, index, rec = push
        if (self.problem is None and gid == self.gid and self.game is not None and rec and rec[0] != OP_UNDO
                and index == len(self.game.log)):
            try:
                self.game.apply_record(rec)
                return True
            except (engine_lite.EngineError, IndexError, KeyError, TypeError, ValueError):
                pass  # refused: the refetch judges the whole game and says where it stops
        self.refetch()
        return False


class Recorder:
    """`follow --db`: keeps the plays database current while following, so
    watching and keeping the play need only one program on the port. Each
    live event syncs the game in progress (one events request: only the new
    records); a new game id syncs everything (the last game was archived)."""

    def __init__(self, link, db):
        self.link = link
        self.db = db
        self.gid = None
        self.who = None

    def record(self, gid):
        """Sync as the table plays; a quarantined record is said on the
        follower's screen (Follower.problem), the recording goes on."""
        with self.db.guard():
            if self.who is None or gid != self.gid:
                plays_db.sync(self.link, self.db)
                self.who = plays_db.board_of(self.link)
            elif gid is not None:
                plays_db.sync_game(self.link, self.db, self.who, gid)
        self.gid = gid

"""The plays database (SQLite) and the sync that fills it.

One row per effective game record, keyed (board, game, index): a record
can never be stored twice, and a chunk of records is only added in one
transaction when it continues the stored prefix exactly, so the database
always holds a prefix of each board game; an interrupted sync resumes
where it stopped (no gaps, no duplicates). Before adding, the host checks
that its prefix is still the board's (crc32 sent by the board): an undo on
the board after a sync changes the tail, and the stored copy of that game
is then dropped and fetched again.

Default file: `plays.sqlite3` in the user's data directory (platformdirs).
"""

import datetime
import os
import sqlite3

import engine_lite
from engine_lite import record as R

from firmware.link import prefix_crc
from host.errors import UserError

SCHEMA = """
CREATE TABLE IF NOT EXISTS games (
    board TEXT NOT NULL,
    game_id TEXT NOT NULL,
    first_seen TEXT NOT NULL,
    updated TEXT NOT NULL,
    PRIMARY KEY (board, game_id)
);
CREATE TABLE IF NOT EXISTS events (
    board TEXT NOT NULL,
    game_id TEXT NOT NULL,
    idx INTEGER NOT NULL,
    record BLOB NOT NULL,
    PRIMARY KEY (board, game_id, idx)
);
"""


def default_path():
    import platformdirs

    return os.path.join(platformdirs.user_data_dir("bloomkeeper", appauthor=False), "plays.sqlite3")


def _now():
    return datetime.datetime.now().replace(microsecond=0).isoformat(sep=" ")


class Database:
    def __init__(self, path=None):
        self.path = path or default_path()
        try:
            d = os.path.dirname(os.path.abspath(self.path))
            os.makedirs(d, exist_ok=True)
            self.con = sqlite3.connect(self.path, timeout=10)
            self.con.executescript(SCHEMA)
        except (OSError, sqlite3.Error) as err:
            raise UserError("cannot open the database %s: %s" % (self.path, err))

    def close(self):
        self.con.close()

    def records(self, board, gid):
        rows = self.con.execute(
            "SELECT record FROM events WHERE board=? AND game_id=? ORDER BY idx", (board, gid)
        ).fetchall()
        return [bytes(r[0]) for r in rows]

    def count(self, board, gid):
        return self.con.execute("SELECT COUNT(*) FROM events WHERE board=? AND game_id=?", (board, gid)).fetchone()[0]

    def append(self, board, gid, start, recs):
        """Add records start.. in one transaction, only if they continue the
        stored prefix exactly (False if not: nothing added)."""
        with self.con:
            if self.count(board, gid) != start:
                return False
            now = _now()
            self.con.execute(
                "INSERT INTO games(board, game_id, first_seen, updated) VALUES (?,?,?,?) "
                "ON CONFLICT(board, game_id) DO UPDATE SET updated=excluded.updated",
                (board, gid, now, now),
            )
            self.con.executemany(
                "INSERT INTO events(board, game_id, idx, record) VALUES (?,?,?,?)",
                [(board, gid, start + i, r) for i, r in enumerate(recs)],
            )
        return True

    def drop(self, board, gid):
        """Forget the stored events of a game (its board copy changed)."""
        with self.con:
            self.con.execute("DELETE FROM events WHERE board=? AND game_id=?", (board, gid))

    def games(self):
        return self.con.execute("SELECT board, game_id, first_seen FROM games ORDER BY first_seen, board, game_id").fetchall()

    def plays(self):
        """Every stored game as a dict: board, game_id, date, game, players,
        events (effective event dicts), over, final (when scored)."""
        out = []
        for board, gid, first in self.games():
            recs = self.records(board, gid)
            if not recs:
                continue
            out.append(play_of(board, gid, first, recs))
        return out


def play_of(board, gid, date, recs):
    g = engine_lite.Game()
    for r in recs:
        g.apply_record(r)
    st = g.state()
    play = {
        "board": board,
        "game_id": gid,
        "date": date,
        "game": R.GAMES[g.game],
        "players": list(g.names),
        "events": g.events(),
        "over": bool(st.get("game_over")),
    }
    if "final" in st:
        play["final"] = st["final"]
    return play


def sync_game(link, db, board, gid, chunk_cb=None):
    """Bring the stored copy of one board game up to the board's. Returns
    the number of records added."""
    added = 0
    have = db.count(board, gid)
    while True:
        start, total, pcrc, recs = link.events(gid, have)
        mine = db.records(board, gid)
        if start != have or prefix_crc(mine, start) != pcrc:
            db.drop(board, gid)  # the board's game changed under us (undo): fetch it again
            have = 0
            continue
        if recs:
            if not db.append(board, gid, start, recs):
                have = db.count(board, gid)
                continue
            added += len(recs)
            have += len(recs)
            if chunk_cb:
                chunk_cb(gid, have, total)
        if have >= total:
            return added


def sync(link, db, progress=None):
    """Pull every game on the board (the one in progress and the archive)
    into db; mark fully stored finished games synced on the board.
    Returns {"games": n, "added": records added, "marked": [...]}."""
    info = link.info or link.hello()
    board = info["board"]
    games = link.games()
    current = games.get("current")
    ids = [g for g, _ in games["archived"]]
    if current and current not in ids:
        ids.append(current)
    added = 0
    marked = []
    for gid in ids:
        n = sync_game(link, db, board, gid)
        added += n
        if progress:
            progress(gid, n)
    for gid, synced in games["archived"]:
        if synced:
            continue
        recs = db.records(board, gid)
        if gid == current and "final" not in play_of(board, gid, "", recs):
            continue  # still on the table (portfolios may follow)
        link.mark_synced(gid)
        marked.append(gid)
    return {"board": board, "games": len(ids), "added": added, "marked": marked}

"""The plays database (SQLite) and the sync that fills it.

A play is one game as one board played it. Its identity is the board's
unique id plus the game's identity from its start record: the random
nonce the board drew at game start (docs/storage.md, "Game identity"),
or, for a game from firmware that did not stamp its games, the start
record itself. The board's game NUMBER is not an identity: it restarts at
0001 on an erased flash, and two boards count alike. So a board game that
differs from a stored play with the same number is a new play, never a
replacement. The one legitimate change to a stored play is an undo of its
tail on the same board, in the same game (same nonce): the stored tail is
then replaced, in the same transaction that adds the board's new tail.

Events are rows keyed (play, index): a record can never be stored twice,
and records are only added in a transaction that first checks that they
continue the stored prefix exactly (its crc32, sent by the board). An
interrupted sync therefore leaves a prefix of the game, and the next one
resumes there. Every write is one IMMEDIATE transaction, and the file is
in WAL mode with a busy timeout, so `follow --db` and `sync` (or two
syncs) can run at once: a second writer waits, then re-checks.

The file is versioned (`PRAGMA user_version`, MIGRATIONS below, one step
per version, each in one transaction): a database from an older release
is upgraded in place on first use, one from a newer release is refused.

Default file: `plays.sqlite3` in the user's data directory (platformdirs).
"""

import binascii
import contextlib
import datetime
import os
import sqlite3
import time

import engine_lite
from engine_lite import record
from engine_lite import stamp

from firmware.codec import prefix_crc
from host.errors import UserError

BUSY_MS = 15000

# Version 0: the first release (games keyed (board type, game number)).
SCHEMA_V0 = """
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

# Version 1: plays keyed by board id + game identity; real start dates.
SCHEMA_V1 = (
    """
CREATE TABLE games (
    id INTEGER PRIMARY KEY,
    board TEXT NOT NULL,            -- the board's unique id (hello "id"), else its type
    board_type TEXT NOT NULL,       -- hello "board": pico, sim-pico, ...
    game_id TEXT NOT NULL,          -- the board's game number (not unique)
    ident TEXT NOT NULL,            -- the game's identity (identity())
    started TEXT,                   -- the game's start, ISO 8601 UTC
    date_estimated INTEGER NOT NULL DEFAULT 0,  -- started is an estimate
    first_seen TEXT NOT NULL,       -- host local time of the first sync
    updated TEXT NOT NULL,
    archived INTEGER NOT NULL DEFAULT 0,  -- no longer the board's game in progress
    legacy INTEGER NOT NULL DEFAULT 0     -- stored by version 0 (board = its type)
)""",
    "CREATE INDEX games_by_board ON games (board, game_id)",
    """
CREATE TABLE events (
    game INTEGER NOT NULL REFERENCES games (id),
    idx INTEGER NOT NULL,
    record BLOB NOT NULL,
    PRIMARY KEY (game, idx)
)""",
)


def _migrate_1(con):
    """Version 0 -> 1: one row per play with an integer id; identity, start
    date (version 0 kept only the sync time: kept as an estimate) and the
    board type filled in from what was stored. Nothing is dropped."""
    con.execute("ALTER TABLE games RENAME TO games_v0")
    con.execute("ALTER TABLE events RENAME TO events_v0")
    for stmt in SCHEMA_V1:
        con.execute(stmt)
    rows = con.execute("SELECT board, game_id, first_seen, updated FROM games_v0 ORDER BY first_seen, board, game_id").fetchall()
    for board, gid, first, updated in rows:
        recs = [bytes(r[0]) for r in con.execute(
            "SELECT record FROM events_v0 WHERE board=? AND game_id=? ORDER BY idx", (board, gid))]
        ident = identity(recs[0]) if recs else "start:"
        started, est = start_date(recs[0] if recs else None, _utc_of_local(first), None)
        cur = con.execute(
            "INSERT INTO games (board, board_type, game_id, ident, started, date_estimated, first_seen, updated, legacy) "
            "VALUES (?,?,?,?,?,?,?,?,1)", (board, board, gid, ident, started, est, first, updated))
        con.executemany("INSERT INTO events (game, idx, record) VALUES (?,?,?)",
                        [(cur.lastrowid, i, r) for i, r in enumerate(recs)])
    con.execute("DROP TABLE games_v0")
    con.execute("DROP TABLE events_v0")


MIGRATIONS = (_migrate_1,)  # MIGRATIONS[i] takes a database from version i to i + 1
VERSION = len(MIGRATIONS)


def default_path():
    import platformdirs

    return os.path.join(platformdirs.user_data_dir("bloomkeeper", appauthor=False), "plays.sqlite3")


def _now():
    return datetime.datetime.now().replace(microsecond=0).isoformat(sep=" ")


def _utc_of_local(text):
    """'YYYY-MM-DD HH:MM:SS' host local time -> ISO 8601 UTC."""
    try:
        t = time.mktime(time.strptime(text, "%Y-%m-%d %H:%M:%S"))
    except (ValueError, OverflowError, TypeError):
        return None
    return stamp.iso(int(t))


def identity(start):
    """A game's identity from its start record: the board's nonce, or for a
    game that has none (firmware that wrote no nonce, a record typed by hand)
    the start record itself."""
    nonce = stamp.fields(start)[0]
    if nonce is not None:
        return "nonce:%08x" % nonce
    return "start:" + binascii.hexlify(start).decode()


def start_date(start, sync_utc, clock):
    """(ISO 8601 UTC, estimated?) of a game's start. `at` in the start
    record is the date. Without it: the board's uptime at the start and at
    the sync (`clock` = (host unix time, board uptime) of the sync) date it
    back from the sync; else (no uptime, or the board rebooted since) the
    first sync is all that is known. Estimates say so."""
    if start is not None:
        _, at, up = stamp.fields(start)
        if at is not None:
            return stamp.iso(at), 0
        if up is not None and clock is not None and clock[1] is not None and up <= clock[1]:
            return stamp.iso(int(clock[0]) - (clock[1] - up)), 1
    return sync_utc, 1


class Database:
    def __init__(self, path=None, create=True):
        self.path = path or default_path()
        if not create and self.path != ":memory:" and not os.path.exists(self.path):
            raise UserError("no plays database at %s (`bloomkeeper sync` makes one)" % self.path)
        try:
            if self.path != ":memory:":
                os.makedirs(os.path.dirname(os.path.abspath(self.path)), exist_ok=True)
            self.con = sqlite3.connect(self.path, timeout=BUSY_MS / 1000, isolation_level=None)
            self.con.execute("PRAGMA busy_timeout = %d" % BUSY_MS)
            version = self.con.execute("PRAGMA user_version").fetchone()[0]
            if version > VERSION:
                self.con.close()
                raise UserError("the database %s is from a newer bloomkeeper (database version %d; this one knows up to %d): update bloomkeeper"
                                % (self.path, version, VERSION))
            if self.path != ":memory:":
                self.con.execute("PRAGMA journal_mode = WAL")
            if version != VERSION:
                self._upgrade()
        except (OSError, sqlite3.Error) as err:
            raise UserError("cannot open the database %s: %s" % (self.path, err))

    def _upgrade(self):
        with self.tx():
            version = self.con.execute("PRAGMA user_version").fetchone()[0]  # again: another process may have done it
            if version == 0:
                for stmt in SCHEMA_V0.split(";"):
                    if stmt.strip():
                        self.con.execute(stmt)
            for step in range(version, VERSION):
                MIGRATIONS[step](self.con)
            if version != VERSION:
                self.con.execute("PRAGMA user_version = %d" % VERSION)

    @contextlib.contextmanager
    def tx(self):
        """One write transaction, taken at once (BEGIN IMMEDIATE): a second
        writer waits for it (busy timeout), then sees what it wrote."""
        self.con.execute("BEGIN IMMEDIATE")
        try:
            yield self.con
        except BaseException:
            self.con.execute("ROLLBACK")
            raise
        self.con.execute("COMMIT")

    def version(self):
        return self.con.execute("PRAGMA user_version").fetchone()[0]

    def close(self):
        self.con.close()

    # -- one play ------------------------------------------------------------
    def latest(self, board, gid):
        """Id of the newest play of (board, game number), or None."""
        row = self.con.execute("SELECT id FROM games WHERE board=? AND game_id=? ORDER BY id DESC LIMIT 1", (board, gid)).fetchone()
        return row[0] if row else None

    def play_records(self, play):
        rows = self.con.execute("SELECT record FROM events WHERE game=? ORDER BY idx", (play,)).fetchall()
        return [bytes(r[0]) for r in rows]

    def records(self, board, gid):
        """Records of the newest play of (board, game number)."""
        play = self.latest(board, gid)
        return self.play_records(play) if play is not None else []

    def count(self, board, gid):
        return len(self.records(board, gid))

    def extend(self, play, start, pcrc, recs):
        """Add records start.. to a play in one transaction, only if the
        stored records are exactly `start` long and their crc is the
        board's `pcrc` (None if not: nothing added)."""
        with self.tx() as con:
            mine = self.play_records(play)
            if len(mine) != start or prefix_crc(mine, start) != pcrc:
                return None
            if recs:
                con.executemany("INSERT INTO events (game, idx, record) VALUES (?,?,?)",
                                [(play, start + i, r) for i, r in enumerate(recs)])
                con.execute("UPDATE games SET updated=? WHERE id=?", (_now(), play))
        return len(recs)

    def store(self, who, gid, recs):
        """The whole board game `recs` (from index 0) into the database, in
        one transaction: (play id, records added). Continues the play it
        belongs to; replaces the tail of that play when an undo on the board
        changed it (same board, same nonce); else it is a new play."""
        ident = identity(recs[0])
        stamped = ident.startswith("nonce:")
        with self.tx() as con:
            self._check_board(who, gid, ident)
            rows = con.execute(
                "SELECT id FROM games WHERE game_id=? AND ident=? AND (board=? OR (legacy=1 AND board_type=?)) "
                "ORDER BY board=? DESC, id DESC", (gid, ident, who["board"], who["type"], who["board"])).fetchall()
            for (play,) in rows:  # one for a game with a nonce; without, every version kept so far
                mine = self.play_records(play)
                k = 0
                while k < len(mine) and k < len(recs) and mine[k] == recs[k]:
                    k += 1
                if k == len(mine) or stamped:
                    con.execute("DELETE FROM events WHERE game=? AND idx>=?", (play, k))  # an undo on the board (nothing if k == len(mine))
                    con.executemany("INSERT INTO events (game, idx, record) VALUES (?,?,?)",
                                    [(play, i, recs[i]) for i in range(k, len(recs))])
                    con.execute("UPDATE games SET updated=?, board=?, legacy=0 WHERE id=?", (_now(), who["board"], play))
                    return play, len(recs) - k
            now = _now()
            started, est = start_date(recs[0], stamp.iso(int(time.time())), who.get("clock"))
            cur = con.execute(
                "INSERT INTO games (board, board_type, game_id, ident, started, date_estimated, first_seen, updated) "
                "VALUES (?,?,?,?,?,?,?,?)", (who["board"], who["type"], gid, ident, started, est, now, now))
            con.executemany("INSERT INTO events (game, idx, record) VALUES (?,?,?)",
                            [(cur.lastrowid, i, r) for i, r in enumerate(recs)])
            return cur.lastrowid, len(recs)

    def _check_board(self, who, gid, ident):
        """A game identity belongs to one board: the same nonce under
        another board id means a flash that now reports another id."""
        if not ident.startswith("nonce:"):
            return
        row = self.con.execute("SELECT board FROM games WHERE ident=? AND game_id=? AND board!=? AND legacy=0 LIMIT 1",
                               (ident, gid, who["board"])).fetchone()
        if row is not None:
            raise UserError("board %s reports game %s (%s), which was synced from board %s: the same flash under another "
                            "board id? nothing stored" % (who["board"], gid, ident, row[0]))

    def check_board(self, who, gid, start):
        self._check_board(who, gid, identity(start))

    def set_archived(self, board, keep):
        """Every play of `board` but `keep` (the play of its game in
        progress, or None) is no longer in progress on it: archived, or
        gone from its flash. One not over was abandoned."""
        with self.tx() as con:
            con.execute("UPDATE games SET archived = (id IS NOT ?) WHERE board=?", (keep, board))

    # -- compatibility (version-0 callers) --------------------------------------
    def append(self, board, gid, start, recs):
        """Add records start.. to the newest play of (board, gid), only if
        they continue the stored records exactly (False if not: nothing
        added). With no such play, records from 0 make a new one."""
        play = self.latest(board, gid)
        if play is None:
            if start != 0 or not recs:
                return False
            self.store(self.who(board), gid, recs)
            return True
        return self.extend(play, start, prefix_crc(self.play_records(play), start), recs) is not None

    def who(self, board):
        """A board known only by its id string (older callers): its type as stored."""
        row = self.con.execute("SELECT board_type FROM games WHERE board=? LIMIT 1", (board,)).fetchone()
        return {"board": board, "type": row[0] if row else board, "clock": None}

    def drop(self, board, gid):
        """Forget the newest play of (board, game number) (version-0 name;
        the sync itself never drops a play)."""
        play = self.latest(board, gid)
        if play is not None:
            with self.tx() as con:
                con.execute("DELETE FROM events WHERE game=?", (play,))
                con.execute("DELETE FROM games WHERE id=?", (play,))

    # -- reading -----------------------------------------------------------------
    def games(self):
        """[(board, game number, first seen)] of every play, oldest first."""
        return [(b, g, f) for _, b, g, f in self._rows("id, board, game_id, first_seen")]

    def _rows(self, cols):
        return self.con.execute("SELECT %s FROM games ORDER BY COALESCE(started, first_seen), id" % cols).fetchall()

    def plays(self):
        """Every stored play as a dict (play_of), in order of start date."""
        out = []
        for pid, board, btype, gid, ident, started, est, first, archived in self._rows(
                "id, board, board_type, game_id, ident, started, date_estimated, first_seen, archived"):
            recs = self.play_records(pid)
            if not recs:
                continue
            p = play_of(board, gid, started or _utc_of_local(first), recs)
            p.update({"play": pid, "ident": ident, "board_type": btype, "date_estimated": bool(est), "synced": first,
                      "abandoned": bool(archived) and not p["over"]})
            out.append(p)
        return out


def play_of(board, gid, date, recs):
    """One play as a dict: board, game_id, date (ISO 8601 UTC start), game,
    players, events (effective event dicts), over, final (when scored)."""
    g = engine_lite.Game()
    for r in recs:
        g.apply_record(r)
    st = g.state()
    play = {
        "board": board,
        "game_id": gid,
        "date": date,
        "game": record.GAMES[g.game],
        "players": list(g.names),
        "events": g.events(),
        "over": bool(st.get("game_over")),
    }
    if "final" in st:
        play["final"] = st["final"]
    return play


# -- sync ------------------------------------------------------------------------

def board_of(link):
    """Who the board is, and its clock set to the host's: {"board": unique id
    (its type on firmware without ids), "type", "clock": (host time, board
    uptime) or None}. Sets the clock whenever the host talks to a board."""
    info = link.info or link.hello()
    who = {"board": info.get("id") or info["board"], "type": info["board"], "clock": None}
    t = time.time()
    ans = link.set_clock()
    if ans:
        who["clock"] = (t, ans.get("up"))
    return who


def fetch_all(link, gid):
    """Every effective record of a board game, from index 0."""
    recs = []
    while True:
        start, total, _, chunk = link.events(gid, len(recs))
        if start != len(recs):  # the game changed while we read it: again
            recs = []
            continue
        recs.extend(chunk)
        if len(recs) >= total:
            return recs


def sync_game(link, db, who, gid, chunk_cb=None):
    """Bring the stored play of one board game up to the board's copy.
    Returns (play id, records added). `who` is board_of(link) (a board id
    string is taken as id and type, for older callers)."""
    if isinstance(who, str):
        who = db.who(who)
    added = 0
    play = db.latest(who["board"], gid)
    while play is not None:
        have = len(db.play_records(play))
        start, total, pcrc, recs = link.events(gid, have)
        if start != have:
            break  # the board's game is shorter: an undo, or another game
        n = db.extend(play, start, pcrc, recs)
        if n is None:
            break  # the stored prefix is not the board's
        added += n
        if chunk_cb:
            chunk_cb(gid, have + n, total)
        if have + n >= total:
            return play, added
    play, n = db.store(who, gid, fetch_all(link, gid))
    return play, added + n


def sync(link, db, progress=None):
    """Pull every game on the board (the one in progress and the archive)
    into db; mark fully stored finished games synced on the board.
    Returns {"board", "games": n, "added": records added, "marked": [...]}."""
    who = board_of(link)
    games = link.games()
    current = games.get("current")
    ids = [g for g, _ in games["archived"]]
    if current and current not in ids:
        ids.append(current)
    for gid in ids:  # a flash that reports another board id: refuse before storing anything
        if db.latest(who["board"], gid) is None:
            first = link.events(gid, 0, limit=16)[3]  # the start record only
            if first:
                db.check_board(who, gid, first[0])
    added = 0
    marked = []
    plays = {}
    for gid in ids:
        plays[gid], n = sync_game(link, db, who, gid)
        added += n
        if progress:
            progress(gid, n)
    db.set_archived(who["board"], plays.get(current))
    for gid, synced in games["archived"]:
        if synced:
            continue
        recs = db.play_records(plays[gid])
        if gid == current and "final" not in play_of(who["board"], gid, "", recs):
            continue  # still on the table (portfolios may follow)
        link.mark_synced(gid)
        marked.append(gid)
    return {"board": who["board"], "games": len(ids), "added": added, "marked": marked, "plays": plays}

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
and records are only added after checking that they continue the stored
prefix exactly (its crc32, sent by the board). A whole sync is one
IMMEDIATE transaction (each play's write a savepoint in it): one cut short
(a lost board, a killed host, a full disk) leaves the database as it was.
The file is in WAL mode with a busy timeout, so `follow --db` and `sync`
(or two syncs) can run at once: a second writer waits, then re-checks.

Records are judged at the door: a play holds only what engine_lite
accepts (judge()); a refused record and those after it are quarantined
with the engine's reason, and reading never lets one bad play hide the
others (read()).

The file is versioned (`PRAGMA user_version`, MIGRATIONS below, one step
per version, each in one transaction): a new file is made at the current
version (SCHEMA), a database from an older release is upgraded in place on
first use, one from a newer release is refused.

Default file: `plays.sqlite3` in the user's data directory (platformdirs).
"""

import binascii
import contextlib
import datetime
import json
import os
import sqlite3
import time
import zlib

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


# Version 2: records the rules engine refuses are kept apart (quarantine),
# raw, with where they came from and why: never part of a play.
SCHEMA_V2 = """
CREATE TABLE quarantine (
    board TEXT NOT NULL,            -- as games.board
    board_type TEXT NOT NULL,
    game_id TEXT NOT NULL,          -- the board's game number
    ident TEXT NOT NULL,            -- the game's identity (identity())
    game INTEGER,                   -- the play holding the accepted prefix (NULL: the start was refused)
    idx INTEGER NOT NULL,           -- the record's index in the board's game
    record BLOB NOT NULL,           -- as the board sent it
    reason TEXT NOT NULL,           -- the engine's reason (the first refused record), or "after record N"
    seen TEXT NOT NULL,             -- host local time it arrived
    PRIMARY KEY (board, game_id, ident, idx)
)"""


def _migrate_2(con):
    """Version 1 -> 2: the quarantine table; every stored play judged again
    by the engine, and the records it refuses (stored by a release that did
    not judge at the door) moved there with its reason. A play whose start
    is refused moves whole. Nothing is dropped."""
    con.execute(SCHEMA_V2)
    now = _now()
    for pid, board, btype, gid, ident in con.execute(
            "SELECT id, board, board_type, game_id, ident FROM games ORDER BY id").fetchall():
        recs = _raw_records(con, pid)
        good, why = judge(recs)
        if why is None:
            continue
        con.executemany("INSERT OR REPLACE INTO quarantine (board, board_type, game_id, ident, game, idx, record, reason, seen) "
                        "VALUES (?,?,?,?,?,?,?,?,?)",
                        [(board, btype, gid, ident, pid if good else None, i, _blob(recs[i]), why if i == good else
                          "after refused record %d" % good, now) for i in range(good, len(recs))])
        con.execute("DELETE FROM events WHERE game=? AND idx>=?", (pid, good))
        if not good:
            con.execute("DELETE FROM games WHERE id=?", (pid,))


# Version 3: what the history shows, kept beside the records so that a page
# reads what it shows and never replays every play (docs/protocol.md, "Per-play
# summaries"; docs/design.md, "The plays history at any size"). One summary per play, written in the transaction that wrote
# its records (Database.tx); one row per player of a scored play (the
# statistics are SQL over them); indexes on the start date, the game and the
# board. Triggers mark a play stale whenever its records or its dates change,
# whoever changes them (a release's own code, or a hand with sqlite3), so a
# summary is never trusted past a change: stale ones are summarized again
# before anything reads them (_refresh, at the end of every write transaction
# and when a file is opened).
SCHEMA_V3 = (
    """
CREATE TABLE summaries (
    play INTEGER PRIMARY KEY REFERENCES games (id),
    date TEXT NOT NULL,             -- the play's start as shown (_date): ISO 8601 UTC
    date_estimated INTEGER NOT NULL,
    records INTEGER NOT NULL,       -- records stored
    good INTEGER NOT NULL,          -- how many of them the engine accepts (0: none readable)
    problem TEXT,                   -- why the engine stops at record `good` (a damaged file), else NULL
    game TEXT,                      -- the play as play_of gives it (NULL when good = 0) ...
    players TEXT,                   -- ... names, JSON
    events INTEGER,                 -- ... effective events
    over INTEGER,
    final TEXT                      -- ... the engine's final, JSON, or NULL
)""",
    """
CREATE TABLE json_tails (           -- apart from the summaries: a page of summaries reads narrow rows
    play INTEGER PRIMARY KEY REFERENCES games (id),
    json BLOB NOT NULL              -- zlib: the json export's lines of game, players, events, final (export.json_tail)
)""",
    "CREATE INDEX summaries_by_date ON summaries (date, play) WHERE good > 0",  # the readable plays, by start
    "CREATE INDEX summaries_by_game ON summaries (game, date)",
    "CREATE INDEX summaries_damaged ON summaries (play) WHERE problem IS NOT NULL",
    """
CREATE TABLE results (
    play INTEGER NOT NULL REFERENCES games (id),
    seat INTEGER NOT NULL,
    name TEXT NOT NULL,
    game TEXT NOT NULL,
    players INTEGER NOT NULL,       -- the table's size
    score INTEGER NOT NULL,
    winner INTEGER NOT NULL,
    PRIMARY KEY (play, seat)
)""",
    "CREATE INDEX results_by_player ON results (name, game, players, score)",
    """
CREATE TABLE player_stats (         -- the sums of results per player, game and table size, kept by _refresh
    name TEXT NOT NULL,
    game TEXT NOT NULL,
    players INTEGER NOT NULL,
    plays INTEGER NOT NULL,
    wins INTEGER NOT NULL,
    total INTEGER NOT NULL,         -- the sum of the scores
    best INTEGER NOT NULL,
    PRIMARY KEY (name, game, players)
)""",
    "CREATE INDEX games_by_start ON games (COALESCE(started, first_seen), id)",
    "CREATE INDEX games_by_ident ON games (ident, game_id)",  # a sync finds the play a board's game continues
    "CREATE TABLE stale (play INTEGER PRIMARY KEY)",
    "CREATE TRIGGER events_added AFTER INSERT ON events BEGIN INSERT OR IGNORE INTO stale VALUES (NEW.game); END",
    "CREATE TRIGGER events_changed AFTER UPDATE ON events BEGIN INSERT OR IGNORE INTO stale VALUES (OLD.game); "
    "INSERT OR IGNORE INTO stale VALUES (NEW.game); END",
    "CREATE TRIGGER events_removed AFTER DELETE ON events BEGIN INSERT OR IGNORE INTO stale VALUES (OLD.game); END",
    "CREATE TRIGGER games_dated AFTER UPDATE OF started, first_seen, date_estimated ON games "
    "BEGIN INSERT OR IGNORE INTO stale VALUES (NEW.id); END",
    "CREATE TRIGGER games_removed AFTER DELETE ON games BEGIN INSERT OR IGNORE INTO stale VALUES (OLD.id); END",
)


def _migrate_3(con):
    """Version 2 -> 3: the summaries, the results and the indexes; every
    stored play marked stale, so that the upgrade's end summarizes each once
    (_refresh, with the current release's columns: its records replayed,
    10,000 plays in 14 s here, 100,000 in about 2.5 minutes, once). Nothing
    is dropped or changed in the plays themselves."""
    for stmt in SCHEMA_V3:
        con.execute(stmt)
    con.execute("INSERT INTO stale SELECT id FROM games")


# Version 4: each play's JSON Lines text kept beside its json lines, so that
# the jsonl export joins text as the json export does (docs/design.md, "The
# plays history at any size").
SCHEMA_V4 = (
    "ALTER TABLE json_tails ADD COLUMN compact BLOB",  # zlib: the same members compact (export.jsonl_tail); NULL: not kept
)


def _migrate_4(con):
    """Version 3 -> 4: the compact lines, made from each play's stored json
    lines (their layout dropped, or parsed and encoded again: the same
    text either way; 100,000 plays in about a minute, once). Nothing else
    changes."""
    from host.sync import export

    for stmt in SCHEMA_V4:
        con.execute(stmt)
    last = -1
    while True:
        rows = con.execute("SELECT play, json FROM json_tails WHERE play > ? ORDER BY play LIMIT 1000", (last,)).fetchall()
        if not rows:
            return
        con.executemany("UPDATE json_tails SET compact = ? WHERE play = ?",
                        [(zlib.compress(export.compact_of(zlib.decompress(tail).decode("utf-8")).encode("utf-8")), play)
                         for play, tail in rows])
        last = rows[-1][0]


MIGRATIONS = (_migrate_1, _migrate_2, _migrate_3, _migrate_4)  # MIGRATIONS[i] takes a database from version i to i + 1
TABLES = ("games", "events", "quarantine", "summaries", "json_tails", "results", "player_stats", "stale")  # TABLES_OF[v]: what a database of version v has
TABLES_OF = {0: (), 1: TABLES[:2], 2: TABLES[:3], 3: TABLES, 4: TABLES}
VERSION = len(MIGRATIONS)
# The current schema, as a fresh file is made: the statements the migrations
# end with, so a fresh file and a migrated one cannot differ.
SCHEMA = SCHEMA_V1 + (SCHEMA_V2,) + SCHEMA_V3 + SCHEMA_V4


def summarize(con, pid):
    """(summary row, result rows, texts) of one stored play, from its records (the
    play replayed once, as read() does), or None when there is no such play;
    texts is (export.json_tail, export.jsonl_tail) zlib-compressed, or None
    when no record is readable.
    The summary says what read() would say of the play: its readable prefix
    and, when the engine stops before the end, why (a damaged file)."""
    from host.sync import export

    row = con.execute("SELECT started, first_seen, date_estimated, board, game_id FROM games WHERE id=?", (pid,)).fetchone()
    if row is None:
        return None
    date, est = _date(*row[:3])
    try:
        recs = _raw_records(con, pid)
    except sqlite3.DatabaseError as err:  # a damaged page under this play's records
        return (pid, date, int(est), -1, 0, "its records cannot be read (%s)" % " ".join(str(err).split()),
                None, None, None, None, None), [], None
    good, why = judge(recs)
    if not good:
        return (pid, date, int(est), len(recs), 0, why, None, None, None, None, None), [], None
    p = play_of(_text(row[3]), _text(row[4]), date, [bytes(r) for r in recs[:good]])
    final = p.get("final")
    results = []
    if final is not None:
        n = len(p["players"])
        results = [(pid, seat, r["name"], p["game"], n, r["score"], int(bool(r["winner"])))
                   for seat, r in enumerate(final["players"])]
    summary = (pid, date, int(est), len(recs), good, why, p["game"], json.dumps(p["players"]), len(p["events"]), int(p["over"]),
               None if final is None else json.dumps(final))
    return summary, results, (zlib.compress(export.json_tail(p).encode("utf-8")), zlib.compress(export.jsonl_tail(p).encode("utf-8")))


def _refresh(con):
    """Summarize again every stale play (inside the caller's write
    transaction): what a sync, a repair or a hand changed."""
    lowered = set()
    for (pid,) in con.execute("SELECT play FROM stale").fetchall():
        for name, game, n, score, winner in con.execute("SELECT name, game, players, score, winner FROM results WHERE play=?",
                                                        (pid,)).fetchall():
            con.execute("UPDATE player_stats SET plays = plays - 1, wins = wins - ?, total = total - ? "
                        "WHERE name=? AND game=? AND players=?", (winner, score, name, game, n))
            lowered.add((name, game, n))
        con.execute("DELETE FROM summaries WHERE play=?", (pid,))
        con.execute("DELETE FROM results WHERE play=?", (pid,))
        con.execute("DELETE FROM json_tails WHERE play=?", (pid,))
        made = summarize(con, pid)
        if made is None:
            continue
        summary, results, texts = made
        con.execute("INSERT INTO summaries VALUES (%s)" % ",".join("?" * len(summary)), summary)
        con.executemany("INSERT INTO results VALUES (?,?,?,?,?,?,?)", results)
        con.executemany("INSERT INTO player_stats VALUES (?,?,?,1,?,?,?) ON CONFLICT (name, game, players) DO UPDATE SET "
                        "plays = plays + 1, wins = wins + excluded.wins, total = total + excluded.total, "
                        "best = max(best, excluded.best)", [(r[2], r[3], r[4], r[6], r[5], r[5]) for r in results])
        if texts is not None:
            con.execute("INSERT INTO json_tails (play, json, compact) VALUES (?,?,?)", (pid, *texts))
    con.execute("DELETE FROM player_stats WHERE plays <= 0")
    for key in lowered:  # a score taken away may have been the best: asked of the results again (an index lookup)
        con.execute("UPDATE player_stats SET best = (SELECT max(score) FROM results WHERE name=?1 AND game=?2 AND players=?3) "
                    "WHERE name=?1 AND game=?2 AND players=?3", key)
    con.execute("DELETE FROM stale")


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


def _raw_records(con, play):
    return [r[0] for r in con.execute("SELECT record FROM events WHERE game=? ORDER BY idx", (play,))]


def _blob(value):
    """A stored record as bytes (a damaged row may hold TEXT or a number)."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    return str(value).encode("utf-8", "replace")


SQL_TYPES = {str: "TEXT", int: "an INTEGER", float: "a REAL", type(None): "NULL"}


def judge(recs):
    """(how many of `recs` the rules engine accepts from the start, None or
    its reason for refusing the next one). A record of another kind than a
    blob, an empty one or one cut short is refused too: anything a board,
    a flash or a damaged file can hand the host is judged, none raises."""
    g = engine_lite.Game()
    for i, r in enumerate(recs):
        if not isinstance(r, (bytes, bytearray, memoryview)):
            return i, "record %d is %s, not a record (BLOB)" % (i, SQL_TYPES.get(type(r), type(r).__name__))
        if not r:
            return i, "record %d is empty" % i
        try:
            g.apply_record(bytes(r))
        except engine_lite.EngineError as err:
            return i, "record %d: %s" % (i, err)
        except (IndexError, KeyError, TypeError, ValueError):  # a record cut short or of an unknown shape
            return i, "record %d is not a readable %s record (%d bytes)" % (
                i, record.GAMES[g.game] if g.table is not None else "start", len(r))
    return len(recs), None


def identity(start):
    """A game's identity from its start record: the board's nonce, or for a
    game that has none (firmware that wrote no nonce, a record typed by hand)
    the start record itself."""
    try:
        nonce = stamp.fields(start)[0]
    except (IndexError, TypeError):  # not a readable start (quarantined): the bytes are its identity
        nonce = None
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


SQLITE_MAGIC = b"SQLite format 3\x00"
RECOVER = "restore the file from a backup, or `sqlite3 %s .recover | sqlite3 NEW.sqlite3` and use --db NEW.sqlite3"


def _new_name(path, pid):
    """The temporary file a new database is made in (`Database._create`),
    named by the process making it."""
    return "%s.new-%d" % (path, pid)


def _remove_db(path):
    for p in (path, path + "-wal", path + "-shm", path + "-journal"):
        try:
            os.remove(p)
        except FileNotFoundError:
            pass


def _sweep_new(path):
    """Temporary files of creations cut short (their process is gone)."""
    d = os.path.dirname(os.path.abspath(path))
    stem = os.path.basename(path) + ".new-"
    for n in os.listdir(d):
        pid = n[len(stem):].split("-")[0] if n.startswith(stem) else ""
        if pid.isdigit() and not _alive(int(pid)):
            try:
                os.remove(os.path.join(d, n))
            except OSError:
                pass


def _alive(pid):
    from host import runtime

    return runtime.alive(pid)


def fault_line(path, err):
    """One line for a database that SQLite cannot use, naming the file and
    what to do about it."""
    text = " ".join(str(err).split())
    low = text.lower()
    if "full" in low:
        return ("the disk holding the plays database %s is full (%s): free some space and run it again; "
                "the write that failed was undone, the database is as it was before it" % (path, text))
    if "readonly" in low or "read-only" in low:
        return "the plays database %s is read-only (%s): make it writable (chmod u+w) to change it" % (path, text)
    if "no such table" in low or "no such column" in low:
        return ("the plays database %s is missing its tables (%s): restore it from a backup, or give another --db "
                "(a new file is made by `bloomkeeper sync`)" % (path, text))
    if "locked" in low or "busy" in low:
        return "the plays database %s is busy (%s): another program holds it; try again" % (path, text)
    if "malformed" in low or "not a database" in low or "corrupt" in low:
        return "the plays database %s is damaged (%s): %s" % (path, text, RECOVER % path)
    return "cannot use the plays database %s: %s" % (path, text)


class Database:
    def __init__(self, path=None, create=True, readonly=False):
        """`create`: a missing file is made (sync) or refused (reading
        commands). `readonly`: a reading command; a file this user cannot
        write is then opened read-only (not upgraded) instead of refused."""
        self.path = path or default_path()
        self.refused = []  # records quarantined through this connection (sync's report)
        self.readonly = False
        mem = self.path == ":memory:"
        if not create and not mem and not os.path.exists(self.path):
            raise UserError("no plays database at %s (`bloomkeeper sync` makes one)" % self.path)
        if create and not mem and not os.path.lexists(self.path):
            self._create()
        if not mem and os.path.exists(self.path):
            self._check_file(empty_is_new=create)
        try:
            if not mem:
                os.makedirs(os.path.dirname(os.path.abspath(self.path)), exist_ok=True)
            if readonly and not mem and os.path.exists(self.path) and not os.access(self.path, os.W_OK):
                self._open_ro()
            else:
                try:
                    self._open_rw(mem)
                except sqlite3.OperationalError as err:
                    if not (readonly and "readonly" in str(err).lower()):
                        raise
                    self.con.close()  # a file we may not write after all (a read-only mount): read it as it is
                    self._open_ro()
        except sqlite3.Error as err:
            raise UserError(fault_line(self.path, err))
        except OSError as err:
            raise UserError("cannot open the database %s: %s" % (self.path, err.strerror or err))

    def _version(self):
        version = self.con.execute("PRAGMA user_version").fetchone()[0]
        if version > VERSION:
            self.con.close()
            raise UserError("the database %s is from a newer bloomkeeper (database version %d; this one knows up to %d): update bloomkeeper"
                            % (self.path, version, VERSION))
        tables = set(r[0] for r in self.con.execute("SELECT name FROM sqlite_master WHERE type='table'"))
        missing = sorted(set(TABLES_OF[version]) - tables)
        if missing:  # checked before anything is written: a file that lost its tables is left as it is
            self.con.close()
            raise UserError("the plays database %s is missing its tables (%s; database version %d): restore it from a "
                            "backup, or give another --db (a new file is made by `bloomkeeper sync`)"
                            % (self.path, ", ".join(missing), version))
        return version

    def _open_rw(self, mem):
        self.con = sqlite3.connect(self.path, timeout=BUSY_MS / 1000, isolation_level=None)
        self.con.execute("PRAGMA busy_timeout = %d" % BUSY_MS)
        version = self._version()
        if not mem:
            self.con.execute("PRAGMA journal_mode = WAL")
        self.schema = 0  # the migrations summarize what they change themselves
        if version != VERSION:
            self._upgrade()
        self.schema = VERSION
        if self.con.execute("SELECT 1 FROM stale LIMIT 1").fetchone():
            with self.guard(), self.tx():
                pass  # records changed by another hand (sqlite3): summarized again before anything reads them

    def _open_ro(self):
        """A reading command on a file this user cannot write: read as it
        is, never upgraded (a version-1 file has no quarantine yet)."""
        self.readonly = True
        self.con = self._connect_ro()
        version = self._version()
        if version < 1:
            self.con.close()
            raise UserError("the plays database %s is read-only and from an older release (database version %d): "
                            "make it writable once (chmod u+w) so that it can be upgraded" % (self.path, version))
        self.schema = version
        if version < VERSION or self.con.execute("SELECT 1 FROM stale LIMIT 1").fetchone():
            self._read_in_memory()

    def _read_in_memory(self):
        """A read-only file of an older version (no summaries yet) or with
        stale summaries: read from a copy in memory, upgraded and summarized
        there (the file is left as it is; the copy costs the file's size in
        memory, once per command)."""
        mem = sqlite3.connect(":memory:", isolation_level=None)
        self.con.backup(mem)
        self.con.close()
        self.con = mem
        version = self.version()
        self.schema = 0
        with self.tx():
            for step in range(version, VERSION):
                MIGRATIONS[step](self.con)
            self.con.execute("PRAGMA user_version = %d" % VERSION)
        self.schema = VERSION
        with self.tx():
            pass  # stale summaries

    def _create(self):
        """A new database is made whole or not at all: its schema is built
        in a temporary file beside it (the same code as an upgrade: SCHEMA,
        `_upgrade`), which is then hard-linked to the path, an atomic step
        that never replaces a file another process made first (that one is
        used instead). A sync cut while making it leaves no file at the path,
        only a temporary one that the next creation removes. Where the file
        system has no hard links, the file is made in place: an empty file
        is then taken as new (`_check_file`)."""
        d = os.path.dirname(os.path.abspath(self.path))
        try:
            os.makedirs(d, exist_ok=True)
            _sweep_new(self.path)
            tmp = _new_name(self.path, os.getpid())
            _remove_db(tmp)
            self.con = sqlite3.connect(tmp, timeout=BUSY_MS / 1000, isolation_level=None)
            try:
                self.con.execute("PRAGMA journal_mode = WAL")
                self.schema = 0  # as _open_rw: the migrations summarize what they change themselves
                self._upgrade()
            finally:
                self.con.close()  # the last connection: SQLite checkpoints and removes the -wal file
            try:
                os.link(tmp, self.path)
            except FileExistsError:
                pass  # another process made it first: theirs is used
            except OSError:
                pass  # no hard links here (a FAT stick): made in place below
            _remove_db(tmp)
        except sqlite3.Error as err:
            raise UserError(fault_line(self.path, err))
        except OSError as err:
            raise UserError("cannot make the database %s: %s" % (self.path, err.strerror or err))

    def _check_file(self, empty_is_new=False):
        """An existing file must be an SQLite database: another file is
        refused, never turned into one. An empty file is one (sync) or
        none (reading commands): SQLite makes a database of it in place,
        under its own lock (`_upgrade` in BEGIN IMMEDIATE), so a process
        that opened it too waits, then finds it made. Older releases left
        one where a sync was cut just after the file appeared."""
        if os.path.isdir(self.path):
            raise UserError("cannot open the database %s: it is a directory, not a plays database (give a file with --db)" % self.path)
        try:
            with open(self.path, "rb") as fh:
                head = fh.read(len(SQLITE_MAGIC))
        except OSError as err:
            raise UserError("cannot read the plays database %s: %s" % (self.path, err.strerror or err))
        if not head and empty_is_new:
            return
        if not head:
            raise UserError("%s is an empty file, not a plays database: give another --db, or delete the file "
                            "(`bloomkeeper sync` then makes a new one)" % self.path)
        if head != SQLITE_MAGIC:
            raise UserError("%s is not a plays database (not an SQLite file): give another --db, or restore it from a backup"
                            % self.path)

    def _connect_ro(self):
        """The file opened read-only. A WAL database needs its shared-memory
        file: where that cannot be made either (a read-only directory), the
        file is read as immutable (nothing else may write it then)."""
        from urllib.parse import quote

        uri = "file:%s?mode=ro" % quote(os.path.abspath(self.path))
        con = sqlite3.connect(uri, uri=True, timeout=BUSY_MS / 1000, isolation_level=None)
        try:
            con.execute("PRAGMA user_version").fetchone()
            return con
        except sqlite3.OperationalError:
            con.close()
            return sqlite3.connect(uri + "&immutable=1", uri=True, isolation_level=None)

    @contextlib.contextmanager
    def guard(self):
        """SQLite failures (a damaged page, a full disk, missing tables) as
        one line naming the file and what to do."""
        try:
            yield self
        except sqlite3.Error as err:
            raise UserError(fault_line(self.path, err))

    def _upgrade(self):
        """A fresh file gets the current schema at once (SCHEMA); a file of an
        older version is migrated one step at a time (MIGRATIONS). Either
        way in one transaction, and to the same schema
        (tests/sync/test_plays_db.py compares them)."""
        with self.tx():
            version = self.con.execute("PRAGMA user_version").fetchone()[0]  # again: another process may have done it
            if version == 0 and not self.con.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]:
                for stmt in SCHEMA:  # nothing in the file yet: no version-0 tables to build only to migrate them
                    self.con.execute(stmt)
            else:
                if version == 0:
                    for stmt in SCHEMA_V0.split(";"):
                        if stmt.strip():
                            self.con.execute(stmt)
                for step in range(version, VERSION):
                    MIGRATIONS[step](self.con)
            _refresh(self.con)  # what the migrations left stale, in the same transaction
            if version != VERSION:
                self.con.execute("PRAGMA user_version = %d" % VERSION)

    @contextlib.contextmanager
    def tx(self):
        """One write transaction, taken at once (BEGIN IMMEDIATE): a second
        writer waits for it (busy timeout), then sees what it wrote. Inside
        another one it is a savepoint: a sync's writes are one transaction.
        A failure (a full disk) undoes it whole, even where SQLite already
        rolled back by itself."""
        if self.con.in_transaction:
            self._depth = getattr(self, "_depth", 0) + 1
            name = "w%d" % self._depth
            self.con.execute("SAVEPOINT " + name)
            try:
                yield self.con
                self.con.execute("RELEASE " + name)
            except BaseException:
                if self.con.in_transaction:
                    try:
                        self.con.execute("ROLLBACK TO " + name)
                        self.con.execute("RELEASE " + name)
                    except sqlite3.Error:
                        pass
                raise
            finally:
                self._depth -= 1
            return
        self.con.execute("BEGIN IMMEDIATE")
        try:
            yield self.con
            if self.schema >= 3:
                _refresh(self.con)  # the summaries of what this transaction changed, committed with it
            self.con.execute("COMMIT")
        except BaseException:
            if self.con.in_transaction:  # SQLite may have rolled back itself (a full disk)
                try:
                    self.con.execute("ROLLBACK")
                except sqlite3.Error:
                    pass
            raise

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
        board's `pcrc` (None if not: nothing added). Records the engine
        refuses are quarantined (quarantine()), not added: the count added
        is of the accepted ones."""
        with self.tx() as con:
            mine = self.play_records(play)
            if len(mine) != start or prefix_crc(mine, start) != pcrc:
                return None
            good, why = judge(mine + list(recs))
            k = max(0, good - start)
            if k:
                con.executemany("INSERT INTO events (game, idx, record) VALUES (?,?,?)",
                                [(play, start + i, r) for i, r in enumerate(recs[:k])])
                con.execute("UPDATE games SET updated=? WHERE id=?", (_now(), play))
            if why is not None:
                board, btype, gid, ident = con.execute(
                    "SELECT board, board_type, game_id, ident FROM games WHERE id=?", (play,)).fetchone()
                self._quarantine({"board": board, "type": btype}, gid, ident, play, start + k, recs[k:],
                                 why if good >= start else "after refused record %d" % good)
        return k

    def _quarantine(self, who, gid, ident, play, first, recs, why):
        """Keep refused records apart, raw (inside the caller's transaction):
        record `first` with the engine's reason, the ones after it as
        following it. A board that sends the same game again replaces its
        copy from `first` on. Noted in self.refused for the sync's report."""
        if not recs:
            return
        self.con.execute("DELETE FROM quarantine WHERE board=? AND game_id=? AND ident=? AND idx>=?",
                         (who["board"], gid, ident, first))
        now = _now()
        self.con.executemany(
            "INSERT INTO quarantine (board, board_type, game_id, ident, game, idx, record, reason, seen) VALUES (?,?,?,?,?,?,?,?,?)",
            [(who["board"], who["type"], gid, ident, play, first + i, _blob(r), why if i == 0 else "after refused record %d" % first, now)
             for i, r in enumerate(recs)])
        self.refused.append({"board": who["board"], "game_id": gid, "index": first, "count": len(recs), "reason": why})

    def store(self, who, gid, recs):
        """The whole board game `recs` (from index 0) into the database, in
        one transaction: (play id, records added). Continues the play it
        belongs to; replaces the tail of that play when an undo on the board
        changed it (same board, same nonce); else it is a new play. What
        the engine refuses is quarantined: a refused start makes no play
        (play id None)."""
        if not recs:
            return None, 0  # a board that reports a game without even its start record: nothing to keep
        good, why = judge(recs)
        ident = identity(recs[0]) if good else "start:" + binascii.hexlify(_blob(recs[0])).decode()
        with self.tx():
            play, added = self._store(who, gid, ident, recs[:good]) if good else (None, 0)
            if why is not None:
                self._quarantine(who, gid, ident, play, good, recs[good:], why)
        return play, added

    def _store(self, who, gid, ident, recs):
        con = self.con
        stamped = ident.startswith("nonce:")
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

    def repair(self):
        """Judge every quarantined run again with this engine: the records
        it accepts now (an engine that learnt a rule, a ruling changed) join
        their play, a start that is accepted makes its play; the rest stay
        quarantined with the new reason. One transaction. Returns
        {"tried": records judged, "accepted": records moved into plays}."""
        tried = accepted = 0
        with self.guard(), self.tx() as con:
            groups = {}
            for board, btype, gid, ident, play, idx, rec in con.execute(
                    "SELECT board, board_type, game_id, ident, game, idx, record FROM quarantine ORDER BY board, game_id, ident, idx"):
                groups.setdefault((board, btype, gid, ident, play), []).append((idx, rec))
            for (board, btype, gid, ident, play), rows in groups.items():
                tried += len(rows)
                mine = self.play_records(play) if play is not None else []
                if [i for i, _ in rows] != list(range(len(mine), len(mine) + len(rows))):
                    continue  # the play changed since (an undo on the board): the run no longer follows it
                recs = [_blob(r) for _, r in rows]
                good, why = judge(mine + recs)
                k = good - len(mine)
                if k <= 0:
                    continue
                who = {"board": board, "type": btype, "clock": None}
                con.execute("DELETE FROM quarantine WHERE board=? AND game_id=? AND ident=?", (board, gid, ident))
                if play is None:
                    ident = identity(recs[0])
                    play, _ = self._store(who, gid, ident, recs[:k])
                else:
                    con.executemany("INSERT INTO events (game, idx, record) VALUES (?,?,?)",
                                    [(play, len(mine) + i, r) for i, r in enumerate(recs[:k])])
                accepted += k
                if why is not None:
                    self._quarantine(who, gid, ident, play, good, recs[k:], why)
        return {"tried": tried, "accepted": accepted}

    def _check_board(self, who, gid, ident):
        """A game identity belongs to one board: the same nonce under
        another board id means a flash that now reports another id."""
        if not ident.startswith("nonce:"):
            return
        row = self.con.execute("SELECT board FROM games WHERE ident=? AND game_id=? AND board!=? AND legacy=0 LIMIT 1",
                               (ident, gid, who["board"])).fetchone()
        if row is not None:
            raise UserError("board %s reports game %s (%s), which was synced from board %s: the same flash under another "
                            "board id? nothing stored (that play is kept under %s). To go on, clear that game from this flash: "
                            "for a simulator, delete its --state-dir directory (a fresh board); for a board, remove its /bk, "
                            "/bk-live, /bk-snap and /bk-sum folders (`mpremote rm -r :/bk`, ...)" % (who["board"], gid, ident, row[0], row[0]))

    def check_board(self, who, gid, start):
        self._check_board(who, gid, identity(start))

    def set_archived(self, board, keep):
        """Every play of `board` but `keep` (the play of its game in
        progress, or None) is no longer in progress on it: archived, or
        gone from its flash. One not over was abandoned."""
        with self.tx() as con:
            con.execute("UPDATE games SET archived = (id IS NOT ?) WHERE board=?", (keep, board))

    # -- reading -----------------------------------------------------------------
    def games(self):
        """[(board, game number, first seen)] of every play, oldest first."""
        return [(b, g, f) for _, b, g, f in self._rows("id, board, game_id, first_seen")]

    def _rows(self, cols):
        return self.con.execute("SELECT %s FROM games ORDER BY COALESCE(started, first_seen), id" % cols).fetchall()

    def plays(self):
        """Every readable play as a dict (play_of), in order of start date
        (read() also gives the ones that cannot be read)."""
        return self.read()[0]

    def read(self):
        """(plays, problems). plays: every stored play that can be read, as
        a dict (play_of), in order of start date; one whose stored records
        stop being readable part way is its readable prefix, with
        "problem" saying why. problems: one dict per play that is damaged
        (its stored records are not what the engine accepts: a damaged
        file) or quarantined (the engine refused records a board sent):
        board, game_id, play (None if no record of it is readable), kind,
        index, count, reason. One bad play never hides the others."""
        with self.guard():
            return self._read()

    def _read(self):
        plays, problems = [], []
        quarantined = {}
        rows = self.con.execute("SELECT board, game_id, ident, game, idx, reason FROM quarantine ORDER BY board, game_id, ident, idx"
                                ) if self.schema >= 2 else ()  # a read-only file of version 1 has no quarantine yet
        for board, gid, ident, play, idx, reason in rows:
            q = quarantined.setdefault((board, gid, ident), {"board": _text(board), "game_id": _text(gid), "play": play,
                                                              "kind": "quarantined", "index": idx, "count": 0,
                                                              "reason": _text(reason)})
            q["count"] += 1
        by_play = {q["play"]: q for q in quarantined.values() if q["play"] is not None}
        for pid, board, btype, gid, ident, started, est, first, archived in self._rows(
                "id, board, board_type, game_id, ident, started, date_estimated, first_seen, archived"):
            board, gid = _text(board), _text(gid)
            try:
                recs = _raw_records(self.con, pid)
            except sqlite3.DatabaseError as err:  # a damaged page under this play's records: the others may read
                problems.append({"board": board, "game_id": gid, "play": None, "kind": "damaged", "index": 0, "count": 0,
                                 "reason": "its records cannot be read (%s): %s" % (" ".join(str(err).split()), RECOVER % self.path)})
                continue
            if not recs:
                continue
            good, why = judge(recs)
            if why is not None:
                problems.append({"board": board, "game_id": gid, "play": pid if good else None, "kind": "damaged",
                                 "index": good, "count": len(recs) - good, "reason": why})
            if not good:
                continue
            date, est = _date(started, first, est)
            p = play_of(board, gid, date, [bytes(r) for r in recs[:good]])
            plays.append(_stored(p, pid, ident, btype, est, first, archived, why, by_play.get(pid)))
        problems.extend(quarantined.values())
        return plays, problems

    # -- reading what a page shows (the summaries: no play replayed) -----------------
    # The summaries are derived from the records. Where a damaged file makes
    # them unreadable, the records are read as read() reads them (all of them,
    # in memory): what can be read is still shown.
    def _replayed(self):
        if getattr(self, "_all", None) is None:
            self._all = self._read()
        return self._all

    def _summaries_or_records(self, method, fallback, *args):
        try:
            with self.guard():
                return getattr(self, method)(*args)
        except UserError as err:
            if not _damaged(err):
                raise
            return fallback(*self._replayed_or_fault(), *args)

    def _replayed_or_fault(self):
        """(plays, problems) replayed from the records, the way round
        summaries that cannot be read; a database that fails there too is
        one line (fault_line)."""
        try:
            return self._replayed()
        except sqlite3.Error as err:
            raise UserError(fault_line(self.path, err))

    def page(self, limit=None, offset=0, since=None, log=False):
        """(plays, total): the readable plays started at or after `since`
        (ISO 8601 UTC, or None: all), the newest first, `limit` of them
        (None: all) from the `offset`-th; total is how many there are. Each
        is a dict as read() gives it; from the summaries, without its events
        (event_count says how many). `log`: the same page oldest first (as
        `plays` lists it, the newest last)."""
        def replayed(plays, _, limit, offset, since, log):
            chosen = [dict(p, event_count=len(p["events"])) for p in plays if not since or p["date"] >= since]
            chosen.sort(key=lambda p: p["date"], reverse=True)
            if log:
                chosen.reverse()  # stable sorts: ties oldest first
                chosen.sort(key=lambda p: p["date"], reverse=True)
            out = chosen[offset:None if limit is None else offset + limit]
            return (out[::-1] if log else out), len(chosen)
        return self._summaries_or_records("_s_page", replayed, limit, offset, since, log)

    def problems(self):
        """The problems read() gives: one dict per damaged play, then one per
        quarantined run."""
        return self._summaries_or_records("_s_problems", lambda _, problems: problems)

    def stats(self):
        """Per player, game and table size: [(name, game, players, plays,
        wins, sum of scores, best)] of the scored plays (player_stats: the
        sums of results, kept as each play is summarized)."""
        def replayed(plays, _):
            groups = {}
            for p in plays:
                for r in p.get("final", {}).get("players", ()):
                    g = groups.setdefault((r["name"], p["game"], len(p["players"])), [0, 0, 0, None])
                    g[0] += 1
                    g[1] += int(bool(r["winner"]))
                    g[2] += r["score"]
                    g[3] = r["score"] if g[3] is None else max(g[3], r["score"])
            return [k + tuple(v) for k, v in groups.items()]
        return self._summaries_or_records("_s_stats", replayed)

    def play(self, pid):
        """One play as read() gives it (its events too), read and replayed
        alone; None when there is no readable play `pid`."""
        return self._summaries_or_records("_s_play", lambda plays, _, pid: next((p for p in plays if p["play"] == pid), None), pid)

    def stream(self, lines="json"):
        """Every readable play, in order of start date as read() gives them,
        one at a time (constant memory): dicts as page() gives, with the
        play's text as written at sync time: "json_tail" (export.json_tail)
        when `lines` is "json", "jsonl_tail" (export.jsonl_tail; or its
        json_tail where a hand removed it) when "jsonl"; none when None (an
        export without the events: csv, BG Stats)."""
        sent = set()
        try:
            for p in self._s_stream(lines):
                sent.add(p["play"])
                yield p
        except UserError as err:
            if not _damaged(err):
                raise
            plays, _ = self._replayed_or_fault()
            for p in plays:
                if p["play"] not in sent:
                    yield p

    SUMMARY = ("SELECT g.id, g.board, g.board_type, g.game_id, g.ident, g.first_seen, g.archived, s.date, s.date_estimated, "
               "s.records, s.good, s.problem, s.game, s.players, s.events, s.over, s.final%s FROM summaries s JOIN games g ON g.id = s.play")

    def _quarantined(self):
        """{(board, game number, ident): problem dict} of the quarantined runs
        (a small table: what boards sent that the engine refused)."""
        out = {}
        for board, gid, ident, play, idx, reason in self.con.execute(
                "SELECT board, game_id, ident, game, idx, reason FROM quarantine ORDER BY board, game_id, ident, idx"):
            q = out.setdefault((board, gid, ident), {"board": _text(board), "game_id": _text(gid), "play": play, "kind": "quarantined",
                                                     "index": idx, "count": 0, "reason": _text(reason)})
            q["count"] += 1
        return out

    def _listed(self, row, by_play):
        """A summary row as the play dict read() gives, without its events
        ("event_count" says how many); None for a play with no readable record."""
        (pid, board, btype, gid, ident, first, archived, date, est, nrec, good, problem, game, players, events, over, final) = row[:17]
        if good <= 0:
            return None
        p = {"board": _text(board), "game_id": _text(gid), "date": date, "game": game, "players": json.loads(players),
             "event_count": events, "over": bool(over)}
        if final is not None:
            p["final"] = json.loads(final)
        return _stored(p, pid, ident, btype, est, first, archived, problem, by_play.get(pid))

    def _s_page(self, limit=None, offset=0, since=None, log=False):
        """(plays, total): the readable plays started at or after `since`
        (ISO 8601 UTC, or None: all), the newest first, `limit` of them
        (None: all) from the `offset`-th; total is how many there are. Each
        is a dict as read() gives it without its events (event_count)."""
        with self.guard():
            where = " WHERE s.good > 0" + (" AND s.date >= ?" if since else "")
            args = (since,) if since else ()
            total = self.con.execute("SELECT count(*) FROM summaries s" + where, args).fetchone()[0]
            by_play = {q["play"]: q for q in self._quarantined().values() if q["play"] is not None}
            rows = self.con.execute(self.SUMMARY % "" + where + " ORDER BY s.date DESC, s.play %s LIMIT ? OFFSET ?"
                                    % ("DESC" if log else "ASC"), args + (-1 if limit is None else limit, offset)).fetchall()
            plays = [self._listed(r, by_play) for r in rows]
            return (plays[::-1] if log else plays), total

    def _s_problems(self):
        """The problems read() gives: one dict per damaged play, then one per
        quarantined run."""
        with self.guard():
            out = []
            for pid, board, gid, nrec, good, problem in self.con.execute(
                    "SELECT g.id, g.board, g.game_id, s.records, s.good, s.problem FROM summaries s CROSS JOIN games g "
                    "ON g.id = s.play WHERE s.problem IS NOT NULL ORDER BY COALESCE(g.started, g.first_seen), g.id"):
                # CROSS JOIN: the damaged few first (their partial index), not every play
                if nrec < 0:
                    out.append({"board": _text(board), "game_id": _text(gid), "play": None, "kind": "damaged", "index": 0, "count": 0,
                                "reason": "%s: %s" % (problem, RECOVER % self.path)})
                else:
                    out.append({"board": _text(board), "game_id": _text(gid), "play": pid if good else None, "kind": "damaged",
                                "index": good, "count": nrec - good, "reason": problem})
            return out + list(self._quarantined().values())

    def _s_stats(self):
        """stats() from the summaries."""
        with self.guard():
            return self.con.execute("SELECT name, game, players, plays, wins, total, best FROM player_stats").fetchall()

    def _s_play(self, pid):
        """One play as read() gives it (its events too), read and replayed
        alone; None when there is no readable play `pid`."""
        with self.guard():
            by_play = {q["play"]: q for q in self._quarantined().values() if q["play"] == pid}
            row = self.con.execute(self.SUMMARY % "" + " WHERE s.play = ?", (pid,)).fetchone()
            if row is None:
                return None
            p = self._listed(row, by_play)
            if p is None:
                return None
            recs = [bytes(r) for r in _raw_records(self.con, pid)[:row[10]]]
            p.update((k, v) for k, v in play_of(p["board"], p["game_id"], p["date"], recs).items() if k not in ("board", "game_id"))
            del p["event_count"]
            return p

    def _s_stream(self, lines="json"):
        """stream() from the summaries."""
        with self.guard():
            by_play = {q["play"]: q for q in self._quarantined().values() if q["play"] is not None}
            text = {"json": ", t.json", "jsonl": ", coalesce(t.compact, t.json), t.compact IS NOT NULL", None: ""}[lines]
            cur = self.con.execute(self.SUMMARY % text + (" JOIN json_tails t ON t.play = s.play" if lines else "") +
                                   " WHERE s.good > 0 ORDER BY COALESCE(g.started, g.first_seen), g.id")
        while True:
            with self.guard():
                rows = cur.fetchmany(256)
            if not rows:
                return
            for row in rows:
                p = self._listed(row, by_play)
                if lines:
                    p["jsonl_tail" if lines == "jsonl" and row[18] else "json_tail"] = zlib.decompress(row[17]).decode("utf-8")
                yield p


def _damaged(err):
    """Is this fault_line one of a damaged file (where the records may still read)?"""
    return " is damaged (" in str(err)


def _text(value):
    """A stored text column as text (a damaged row may hold a blob or a number)."""
    if isinstance(value, str):
        return value
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).decode("utf-8", "replace")
    return "" if value is None else str(value)


def _stored(p, pid, ident, btype, est, first, archived, problem, q):
    """Play dict `p` (replayed, or read from its summary) with what the
    database knows of it besides its records: its id, identity, board type,
    whether its date is estimated, its first sync, whether it was abandoned,
    and its problem line (a damaged tail `problem`, else the quarantine `q`):
    one wording for both readings."""
    p.update({"play": pid, "ident": _text(ident), "board_type": _text(btype), "date_estimated": bool(est),
              "synced": _text(first), "abandoned": bool(archived) and not p["over"]})
    if problem is not None:
        p["problem"] = "damaged: %s" % problem
    elif q is not None:
        p["problem"] = "quarantined from record %d: %s" % (q["index"], q["reason"])
    return p


def _date(started, first, est):
    """(ISO 8601 UTC, estimated?) of a stored play: `started` if it is one,
    else the first sync (then an estimate), else the epoch (said estimated)."""
    if isinstance(started, str) and stamp.seconds(started) is not None:
        return started, bool(est)
    date = _utc_of_local(first) if isinstance(first, str) else None
    return date or stamp.iso(0), True


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
    ans = link.set_clock()  # asked once per connection: connect() already did
    if ans:
        who["clock"] = (link.clock[0], ans.get("up"))
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
    Returns (play id, records added). `who` is board_of(link) (sync()
    returns it too). Stops at a record the engine refuses (quarantined:
    db.refused says which)."""
    added = 0
    refused = len(db.refused)
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
        if len(db.refused) > refused:
            return play, added
        if chunk_cb:
            chunk_cb(gid, have + n, total)
        if have + n >= total:
            return play, added
    play, n = db.store(who, gid, fetch_all(link, gid))
    return play, added + n


def sync(link, db, progress=None):
    """Pull every game on the board (the one in progress and the archive)
    into db; mark fully stored finished games synced on the board (never
    one with quarantined records: the board keeps its copy).
    Returns {"board", "who": board_of(link), "games": n, "added": records
    added, "marked": [...], "plays", "refused": [quarantined runs, as
    db.refused]}; "who" is what sync_game wants for this board's next
    events, without asking the board again."""
    who = board_of(link)
    games = link.games()
    current, ids, archived = games_of(games)
    for gid in ids:  # a flash that reports another board id: refuse before storing anything
        if db.latest(who["board"], gid) is None:
            first = link.events(gid, 0, limit=16)[3]  # the start record only
            if first:
                db.check_board(who, gid, first[0])
    added = 0
    marked = []
    plays = {}
    before = len(db.refused)
    with db.tx():  # one transaction: a full disk or a lost board leaves the database as it was
        for gid in ids:
            plays[gid], n = sync_game(link, db, who, gid)
            added += n
            if progress:
                progress(gid, n)
        db.set_archived(who["board"], plays.get(current))
    refused = db.refused[before:]
    bad = set(r["game_id"] for r in refused)
    for gid, synced in archived:  # only once stored for good: the board may then let its copy go
        if synced or gid in bad or plays[gid] is None:
            continue
        recs = db.play_records(plays[gid])
        if gid == current and "final" not in play_of(who["board"], gid, "", recs):
            continue  # still on the table (portfolios may follow)
        link.mark_synced(gid)
        marked.append(gid)
    return {"board": who["board"], "who": who, "games": len(ids), "added": added, "marked": marked, "plays": plays, "refused": refused}


def games_of(answer):
    """(current game id or None, every game id, [(id, synced)] archived) of a
    `games` answer, checked field by field: a board's answer is data."""
    from host.sync.link import peer_error

    if type(answer) is not dict:
        raise peer_error("games", "not an object")
    current = answer.get("current")
    if current is not None and not gid_ok(current):
        raise peer_error("games", "current is not a game id")
    archived = answer.get("archived")
    if type(archived) is not list:
        raise peer_error("games", "archived is not a list")
    out = []
    for item in archived:
        if type(item) not in (list, tuple) or len(item) != 2 or not gid_ok(item[0]) or type(item[1]) is not bool:
            raise peer_error("games", "an archived entry is not [game id, synced]")
        out.append((item[0], item[1]))
    ids = [g for g, _ in out]
    if current and current not in ids:
        ids.append(current)
    return current, ids, out


def gid_ok(gid):
    """A game id as a board's answer may give it: printable text of 1 to 16
    characters. Public because the follower checks the ids the board pushes
    (host/sync/follow.py) as a sync checks the ones it lists: an answer is data."""
    return type(gid) is str and 0 < len(gid) <= 16 and gid.isprintable()

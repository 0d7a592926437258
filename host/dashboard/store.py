"""The ONE place where the dashboard touches the plays database.

Everything goes through host/sync/db.py's public API (Database, sync,
sync_game, Database.page, stats, problems, play), so the database's schema and its sync rules
stay in one place; when that module changes, only these functions adapt.
A play's date is `play["date"]`: the game's own start in UTC, with
`play["date_estimated"]` where the board never knew the time; `play["play"]`
is its unique key (board id + game identity, host/sync/db.py).
"""

import os

import host.sync.db


def open_db(path, readonly=False):
    """A Database for this thread (sqlite3 connections stay in their thread).
    `readonly`: the history only (a file this user cannot write is read)."""
    return host.sync.db.Database(path, readonly=readonly)


def read_plays(path):
    """Every stored game as db.plays() gives it: board, game_id, date, game,
    players, events (dicts), over, final (when scored)."""
    return read_all(path)[0]


def read_all(path):
    """(plays, problems) as db.read() gives them: every readable play, and
    one entry per damaged or quarantined play (listed, never fatal)."""
    db = host.sync.db.Database(path, readonly=True)
    try:
        return db.read()
    finally:
        db.close()


def history_page(path, page):
    """(plays newest first, their total, statistics rows, problems) of one
    /history page: a page of the summaries, the statistics in SQL (the
    plays database's summaries and results: nothing replayed)."""
    from host.dashboard import history

    db = host.sync.db.Database(path, readonly=True)
    try:
        plays, total = db.page(history.PAGE, (page - 1) * history.PAGE)
        return plays, total, history.stats_rows(db.stats()), db.problems()
    finally:
        db.close()


def one_play(path, play_id):
    """One play with its events (read and replayed alone), or None when
    there is no readable play of that id (text, as a page's link gives it)."""
    if not play_id.isdigit() or len(play_id) > 18:
        return None
    db = host.sync.db.Database(path, readonly=True)
    try:
        return db.play(int(play_id))
    finally:
        db.close()


def version(path):
    """What changes whenever anything writes the database (a sync, in this
    process or another): the file's and its write-ahead log's size and
    modification time. The key of what the dashboard caches (Cache)."""
    out = []
    for f in (path, path + "-wal"):
        try:
            st = os.stat(f)
            out.append((st.st_ino, st.st_size, st.st_mtime_ns))
        except OSError:
            out.append(None)
    return tuple(out)


class Cache:
    """Pages that change only when the database is written, kept until it
    is: each entry is stored with version(path) and used while that holds.
    At most MAX entries (the oldest go first): flat memory."""

    MAX = 32

    def __init__(self, path):
        import collections
        import threading

        self.path = path
        self._lock = threading.Lock()
        self._items = collections.OrderedDict()

    def get(self, key, make):
        v = version(self.path)
        with self._lock:
            hit = self._items.get(key)
            if hit is not None and hit[0] == v:
                self._items.move_to_end(key)
                return hit[1]
        value = make()
        with self._lock:
            self._items[key] = (v, value)  # the version read before making it: a write meanwhile makes it stale
            self._items.move_to_end(key)
            while len(self._items) > self.MAX:
                self._items.popitem(last=False)
        return value


def record_board(link, db):
    """Store every game on the board (as `bloomkeeper sync` does). Returns who
    the board is (host/sync/db.py board_of: "board" is its id), which
    record_game takes."""
    return host.sync.db.sync(link, db)["who"]


def record_game(link, db, who, gid):
    """Bring one game's stored copy up to the board's (undo-safe, no duplicates)."""
    return host.sync.db.sync_game(link, db, who, gid)


def count(db, board, gid):
    return db.count(board, gid)

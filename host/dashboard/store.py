"""The ONE place where the dashboard touches the plays database.

Everything goes through host/sync/db.py's public API (Database, sync,
sync_game, Database.plays), so the database's schema and its sync rules
stay in one place; when that module changes, only these functions adapt.
A play's date is `play["date"]`: the game's own start in UTC, with
`play["date_estimated"]` where the board never knew the time; `play["play"]`
is its unique key (board id + game identity, host/sync/db.py).
"""

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

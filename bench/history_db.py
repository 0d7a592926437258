"""A plays history of any size for bench/bench_history.py, made through the
real store path (host/sync/db.py Database.store: every record judged by
the engine, the per-play summary written in the same transaction), one
transaction per board as `sync` writes a board's games.

The plays: CORPUS distinct games played by tests/kit/tablebot.py (half
Stalk Exchange with undos, half Oh My. Orchids!, 2 to 5 players), each
stored again and again as the games of BOARDS_OF boards; every copy gets its
own nonce and start time (a new game on the board: the start record's
fields, nothing else, differ), one game every 20 minutes from 2020 on.

A file is built once per size and schema version and kept outside the
repository, in ~/.cache/bloomkeeper-bench/ (BLOOMKEEPER_BENCH_CACHE): about
3.5 ms a play on a quiet 2-core machine (10,000 plays in 35 s; 100,000 took
926 s on one shared with other work), 5.4 KB a play on disk (100,000 plays:
540 MB, of which the summaries and their json lines are about 1.5 KB a play).

    .venv/bin/python -m bench.history_db 100000     builds (or finds) it
"""

import json
import os
import struct
import sys
import time

CORPUS = 400
PER_BOARD = 1000  # games a board holds before the next board (game numbers 0001..1000 on each)
STEP_S = 20 * 60
EPOCH = 1577836800  # 2020-01-01T00:00:00Z
GENERATION = 1  # bump when the way the history is made changes: cached files are rebuilt


def cache_dir():
    d = os.environ.get("BLOOMKEEPER_BENCH_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "bloomkeeper-bench")
    os.makedirs(d, exist_ok=True)
    return d


def corpus(n=CORPUS):
    """n distinct games as record lists, their start records stamped with a
    nonce and a start time (patched per copy: patch())."""
    import engine_lite
    from tests.kit import tablebot

    games = []
    for seed in range(n):
        g = tablebot.stalk_game(seed, players=2 + seed % 4, undo_rate=0.1) if seed % 2 == 0 else \
            tablebot.orchids_game(seed, players=2 + seed % 4)
        lines = [json.loads(t) for t in tablebot.record_lines(g) if t.strip()]
        lines[0]["nonce"] = 1
        lines[0]["at"] = "2020-01-01T00:00:00Z"
        replayed = engine_lite.Game()
        for ev in lines:
            replayed.apply(ev)
        games.append([bytes(r) for r in replayed.log.records()])
    return games


def patch(start, nonce, at):
    """The start record with another nonce and start time (both u32, at the
    end of the record: engine_lite/stamp.py fields)."""
    from engine_lite import stamp

    i = stamp._end_of_names(start)
    return start[:i] + struct.pack("<II", nonce, at) + start[i + 8:]


def build(path, n, progress=None):
    import host.sync.db

    games = corpus()
    tmp = path + ".part"
    for f in (tmp, tmp + "-wal", tmp + "-shm"):
        if os.path.exists(f):
            os.unlink(f)
    db = host.sync.db.Database(tmp)
    t0 = time.perf_counter()
    try:
        k = 0
        while k < n:
            board = "club-%03d" % (k // PER_BOARD)
            who = {"board": board, "type": "pico", "clock": None}
            with db.tx():  # one board's sync
                for j in range(min(PER_BOARD, n - k)):
                    recs = list(games[(k + j) % len(games)])
                    recs[0] = patch(recs[0], 0x10000 + k + j, EPOCH + (k + j) * STEP_S)
                    play, added = db.store(who, "%04d" % (j + 1), recs)
                    assert play is not None and added == len(recs)
            k += min(PER_BOARD, n - k)
            if progress:
                progress(k, time.perf_counter() - t0)
        db.con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        db.close()
    os.replace(tmp, path)
    return time.perf_counter() - t0


def history(n, progress=None):
    """(path, seconds it took to build or migrate: None if it was made
    before). A history of an older schema version (same size, same
    generation) is copied and migrated, as a user's database would be
    (Database's own migrations), instead of built again."""
    import glob
    import shutil

    import host.sync.db

    import zlib

    schema = zlib.crc32(repr(host.sync.db.SCHEMA).encode())  # a changed schema is a new file, whatever its version says
    path = os.path.join(cache_dir(), "history-%d-v%d-%08x-g%d.sqlite3" % (n, host.sync.db.VERSION, schema, GENERATION))
    if os.path.exists(path):
        return path, None
    older = sorted(glob.glob(os.path.join(cache_dir(), "history-%d-v*-g%d.sqlite3" % (n, GENERATION))), key=os.path.getmtime)
    if older:
        t0 = time.perf_counter()
        tmp = path + ".part"
        shutil.copyfile(older[-1], tmp)
        db = host.sync.db.Database(tmp)
        db.con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        db.close()
        os.replace(tmp, path)
        return path, time.perf_counter() - t0
    return path, build(path, n, progress)


if __name__ == "__main__":
    size = int(sys.argv[1]) if len(sys.argv) > 1 else 100000
    p, took = history(size, lambda k, t: sys.stderr.write("\r%d plays, %.0f s" % (k, t)))
    print("\n%s %s" % (p, "made in %.0f s" % took if took else "(made before)"))

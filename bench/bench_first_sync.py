"""A first sync cut at every step, and first syncs started together: the
plays database is made whole or not at all, and nobody is locked out.

Every command is `bloomkeeper sync` in its own process, the board on a real
pty (tests/kit/hostile_board.py: the firmware's link and Store), the
database real SQLite on disk.

* Cut: a new database, one board with a finished game; the sync is killed
  (SIGKILL, no cleanup) as its Nth SQL statement starts, for every N of a
  whole first sync (tests/kit/cut_sync.py counts them with SQLite's trace
  hook). Then a plain sync, and the database is read.
* Together: K boards, each with its game, synced at the same moment into
  one new database, for several rounds.

Counted (the budget of the last four is 0):
first_sync_cuts              syncs cut, one per statement of a first sync
first_sync_concurrent        syncs started together on a new database
first_sync_lost              plays (or events) the board has that the database lacks after the next sync
first_sync_duplicated        plays stored twice
first_sync_locked_out        syncs refused after a cut, or refused while another ran
                             (an empty or half-made file, "busy")
first_sync_half_made         a cut that left a file at the path that is not a whole database
                             (the sync after it may mend it; an empty one locked the older release out)
"""

import os
import sqlite3
import subprocess
import sys
import tempfile
import threading

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RECORD = os.path.join(ROOT, "tests", "records", "stalk-2p.jsonl")
CAP_S = 60


def _board(uid):
    from tests.kit.hostile_board import HostileBoard

    b = HostileBoard(uid=uid)
    with open(RECORD) as f:
        b.load([t for t in f.read().splitlines() if t.strip()], finish=True)
    return b


def run_sync(port, db, cut=0):
    """`bloomkeeper sync` (cut as its statement `cut` starts; 0: never):
    (returncode, stderr, statements it ran)."""
    r = subprocess.run([sys.executable, "-m", "tests.kit.cut_sync", str(cut), "sync", "--port", port, "--db", db, "--quiet"],
                       cwd=ROOT, capture_output=True, text=True, timeout=CAP_S)
    n = [int(t.split()[1]) for t in r.stderr.splitlines() if t.startswith("statements: ")]
    return r.returncode, r.stderr, n[0] if n else None


def whole(db):
    """None: no file; True: a database of the current version; False: anything else."""
    if not os.path.exists(db):
        return None
    from host.sync.db import VERSION

    try:
        con = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
        try:
            return con.execute("PRAGMA user_version").fetchone()[0] == VERSION
        finally:
            con.close()
    except sqlite3.Error:
        return False


def stored(db):
    """{(board, ident): events} of every play in the database."""
    con = sqlite3.connect(db)
    try:
        rows = con.execute("SELECT g.board, g.ident, count(e.idx) FROM games g LEFT JOIN events e ON e.game = g.id "
                           "GROUP BY g.id").fetchall()
    finally:
        con.close()
    out = {}
    for board, ident, n in rows:
        out.setdefault((board, ident), []).append(n)
    return out


class Tally:
    def __init__(self):
        self.cuts = self.concurrent = self.lost = self.duplicated = self.locked_out = self.half_made = 0
        self.notes = []

    def note(self, kind, what):
        setattr(self, kind, getattr(self, kind) + 1)
        if len(self.notes) < 10:
            self.notes.append("%s: %s" % (kind, what))

    def check(self, db, boards, what):
        plays = stored(db)
        for b in boards:
            want = len(b.store.records(b.store.game_id))
            got = [v for (board, _), v in plays.items() if board == b.uid]
            if not got or max(got[0]) < want:
                self.note("lost", "%s: board %s" % (what, b.uid))
            elif len(got) > 1 or len(got[0]) > 1:
                self.note("duplicated", "%s: board %s" % (what, b.uid))


def cut_campaign(t, cuts=None, tmp=None):
    """Cut a first sync at statement 1, 2, ... (all of them, or those in `cuts`)."""
    from tests.kit.hostile_board import served

    with tempfile.TemporaryDirectory(dir=tmp) as d:
        b = _board("probe")
        with served(b) as port:
            rc, err, total = run_sync(port, os.path.join(d, "probe.sqlite3"))
        if rc != 0 or not total:
            raise RuntimeError("the uncut first sync failed: %s" % err.strip())
        for n in (cuts or range(1, total + 1)):
            if n > total:
                continue
            db = os.path.join(d, "p%d.sqlite3" % n)
            b = _board("cut%d" % n)
            with served(b) as port:
                rc, err, _ = run_sync(port, db, cut=n)
                t.cuts += 1
                if whole(db) is False:
                    t.note("half_made", "cut at statement %d left %d bytes" % (n, os.path.getsize(db)))
                rc, err, _ = run_sync(port, db)
                if rc != 0:
                    t.note("locked_out", "after a cut at statement %d: %s" % (n, err.strip().splitlines()[0]))
                    continue
            t.check(db, [b], "cut at statement %d" % n)
    return total


def concurrent_campaign(t, rounds=10, k=3, tmp=None):
    """`k` first syncs started together into one new database, `rounds` times."""
    import contextlib

    from tests.kit.hostile_board import served

    with tempfile.TemporaryDirectory(dir=tmp) as d:
        for r in range(rounds):
            db = os.path.join(d, "p%d.sqlite3" % r)
            boards = [_board("r%dk%d" % (r, i)) for i in range(k)]
            with contextlib.ExitStack() as stack:
                ports = [stack.enter_context(served(b)) for b in boards]
                results = [None] * k
                go = threading.Barrier(k)

                def one(i):
                    go.wait()
                    results[i] = run_sync(ports[i], db)

                threads = [threading.Thread(target=one, args=(i,)) for i in range(k)]
                for th in threads:
                    th.start()
                for th in threads:
                    th.join(CAP_S + 5)
            t.concurrent += k
            for i, res in enumerate(results):
                if res is None or res[0] != 0:
                    t.note("locked_out", "round %d sync %d: %s" % (r, i, (res[1].strip().splitlines() or ["no exit"])[0] if res else "hung"))
            t.check(db, boards, "round %d" % r)


def measure(rounds=10):
    t = Tally()
    statements = cut_campaign(t)
    concurrent_campaign(t, rounds=rounds)
    out = {
        "first_sync_statements": statements,
        "first_sync_cuts": t.cuts,
        "first_sync_concurrent": t.concurrent,
        "first_sync_lost": t.lost,
        "first_sync_duplicated": t.duplicated,
        "first_sync_locked_out": t.locked_out,
        "first_sync_half_made": t.half_made,
    }
    if t.notes:
        out["first_sync_notes"] = t.notes
    return out


if __name__ == "__main__":
    sys.path.insert(0, ROOT)
    for k, v in measure(int(sys.argv[1]) if len(sys.argv) > 1 else 10).items():
        print("%-28s %s" % (k, v))

"""Fault campaign for the plays database (host/sync/db.py): plays are never lost.

Three boards whose game numbers collide (each counts 0001, 0002, ...; one
of them does not know the time, one is erased and reused under the same
board id) play on between syncs, with undos, finished and abandoned games.
Syncs are cut at random points, each one of three ways:

* link drop: the cable is pulled after a random number of bytes
  (tests/kit/linkkit.LoopSerial);
* host killed: the sync runs in a forked process that SIGKILLs itself at a
  random SQL statement (sqlite3 trace callback), so often in the middle of
  a write transaction, and the next process opens the file after it;
* board power cut: the board's flash dies at a random operation and the
  link with it; the board reboots from what survived (boardkit/memfs.py).

Power cuts also hit the board while it is being played. The truth is what
the boards hold (plus, for an erased board, what it held when erased).
After every step, finished games the boards no longer hold must still be
in the database exactly; at the end, after one clean sync per board, every
play must be there exactly once, equal to the board's:

plays_lost        plays of the truth missing from the database
plays_duplicated  extra plays (the same game stored twice, or a play no board had)
plays_overwritten plays stored with events other than the board's

Run alone: .venv/bin/python -m bench.bench_plays
"""

import json
import os
import random
import signal
import sys
import tempfile
import time

import engine_lite
from boardkit.memfs import MemFS, PowerCut
from firmware.storage import Store
import host.sync.db
from host.errors import UserError
from tests.kit import tablebot
from tests.kit.linkkit import StoreBoard, host_for

BOARDS = 3


def game_lines(rnd):
    seed = rnd.randrange(10 ** 6)
    if rnd.random() < 0.5:
        g = tablebot.stalk_game(seed, players=rnd.randint(2, 5), undo_rate=0.1)
    else:
        g = tablebot.orchids_game(seed, players=rnd.randint(2, 5))
    return [ln for ln in tablebot.record_lines(g) if ln.strip()]


class Table:
    """One board and the games played on it (a queue of record lines)."""

    def __init__(self, uid, rnd, knows_time=True):
        self.rnd = rnd
        self.board = StoreBoard(store=Store(fs=MemFS()), board_id="pico", uid=uid)
        if not knows_time:
            self.board.clock.wall = None
        self.lines = []
        self.pos = 0

    def reboot(self):
        """Power back on: a new Store on what survived on the flash."""
        b = self.board
        self.board = StoreBoard(store=Store(fs=b.store.fs.survivor()), board_id=b.board_id, uid=b.uid, clock=b.clock)

    def erase(self):
        """The flash is erased (a re-flash): same board id, game numbers restart."""
        b = self.board
        self.board = StoreBoard(store=Store(fs=MemFS()), board_id=b.board_id, uid=b.uid, clock=b.clock)
        self.lines, self.pos = [], 0

    def play(self, n, cut=False):
        """Play n more events (start a new game when one ends; sometimes
        abandon a game or undo). `cut`: the power dies during one of them."""
        b = self.board
        if cut:
            b.store.fs.cut_at = b.store.fs.ops + self.rnd.randint(1, 4)
        try:
            for _ in range(n):
                if b.game is None or self.pos >= len(self.lines):
                    if b.game is not None:
                        b.finish()
                    self.lines, self.pos = game_lines(self.rnd), 0
                if self.rnd.random() < 0.01 and len(b.game.log if b.game else ()) > 3:
                    b.finish()  # menu -> new game: abandoned
                    self.lines, self.pos = game_lines(self.rnd), 0
                if self.rnd.random() < 0.05 and b.game is not None and len(b.game.log) > 1:
                    b.play({"ev": "undo"})
                    self.pos = max(1, self.pos - 1)  # that event is played again later
                    continue
                ev = json.loads(self.lines[self.pos])
                if ev["ev"] == "start":
                    b.store.fs.cut_at = None  # (cuts during a game start are the storage tests' business)
                b.play(ev)
                self.pos += 1
        except PowerCut:
            self.reboot()
            self.resync_pos()
        b = self.board
        b.store.fs.cut_at = None

    def resync_pos(self):
        """After a reboot the board holds the acknowledged events only: play
        on from the line after the last event it holds."""
        b = self.board
        if b.game is None:
            self.lines, self.pos = [], 0
            return
        held = len(b.game.events())
        g = engine_lite.Game()
        pos = 0
        while pos < len(self.lines) and len(g.events()) < held:
            g.apply(json.loads(self.lines[pos]))
            pos += 1
        if g.events() != b.game.events():
            self.lines, self.pos = [], 0  # cannot line up (undos): this game ends here, a new one follows
            b.finish()
            return
        self.pos = pos


def truth_of(board, truth):
    """Every game on the board -> truth[(board id, identity)] = its records."""
    ids = [g for g, _ in board.archived()] + ([board.current()] if board.current() else [])
    for gid in ids:
        recs = [bytes(r) for r in board.records(gid)]
        if recs:
            truth[(board.uid, host.sync.db.identity(recs[0]))] = recs


def probe(board, path):
    """(bytes on the wire, SQL statements) of a full sync right now, measured
    on copies of the board and the database: the cut points are drawn from
    inside the real exchange."""
    twin = StoreBoard(store=Store(fs=board.store.fs.survivor()), board_id=board.board_id, uid=board.uid, clock=board.clock)
    src = host.sync.db.Database(path)
    db = host.sync.db.Database(":memory:")
    src.con.backup(db.con)
    src.close()
    count = [0]
    db.con.set_trace_callback(lambda stmt: count.__setitem__(0, count[0] + 1))
    _, ser, hl = host_for(twin)
    host.sync.db.sync(hl, db)
    db.close()
    return ser.crossed, count[0]


def sync_cut_link(board, path, rnd):
    db = host.sync.db.Database(path)
    try:
        _, ser, hl = host_for(board, cut_after=rnd.randint(1, probe(board, path)[0]), request_timeout=0.005)
        hl.hello()
        host.sync.db.sync(hl, db)
        return False
    except UserError:
        return True
    finally:
        db.close()


def sync_killed(board, path, rnd):
    """Fork; the child syncs and SIGKILLs itself before SQL statement n."""
    n = rnd.randint(1, probe(board, path)[1])
    pid = os.fork()
    if pid == 0:  # the host process
        try:
            db = host.sync.db.Database(path)
            count = [0]

            def die_at(stmt):
                count[0] += 1
                if count[0] >= n:
                    os.kill(os.getpid(), signal.SIGKILL)

            db.con.set_trace_callback(die_at)
            host.sync.db.sync(host_for(board)[2], db)
        finally:
            os._exit(0)
    _, status = os.waitpid(pid, 0)
    return os.WIFSIGNALED(status)


def sync_power_cut(table, path, rnd):
    """The board dies during the sync: its flash at a random op (a
    mark_synced rename, if it gets that far) and the link with it."""
    b = table.board
    wire = probe(b, path)[0]
    b.store.fs.cut_at = b.store.fs.ops + rnd.randint(1, 3)
    db = host.sync.db.Database(path)
    try:
        _, ser, hl = host_for(b, cut_after=rnd.randint(1, wire), request_timeout=0.005)
        hl.hello()
        host.sync.db.sync(hl, db)
        cut = False
    except UserError:
        cut = True
    finally:
        db.close()
    table.reboot()
    table.resync_pos()
    return cut


def check(path, truth, frozen, final):
    """(lost, duplicated, overwritten): `frozen` plays (no board holds them
    any more) always; all of the truth when `final`."""
    db = host.sync.db.Database(path)
    rows = db.con.execute("SELECT id, board, ident FROM games").fetchall()
    stored = {}
    for pid, board, ident in rows:
        stored.setdefault((board, ident), []).append(pid)
    lost = dup = over = 0
    keys = truth if final else frozen
    for key in keys:
        pids = stored.get(key, [])
        if not pids:
            lost += 1
            continue
        dup += len(pids) - 1
        if db.play_records(pids[0]) != truth[key]:
            over += 1
    if final:
        dup += sum(len(p) for k, p in stored.items() if k not in truth)
    db.close()
    return lost, dup, over


def campaign(cut_syncs=240, seed=10):
    rnd = random.Random(seed)
    tables = [Table("board-%d" % i, rnd, knows_time=i != 1) for i in range(BOARDS)]
    truth, frozen = {}, set()
    kinds = {"link_drop": 0, "host_killed": 0, "board_power_cut": 0}
    cut = {k: 0 for k in kinds}
    power_in_play = erased = 0
    worst = [0, 0, 0]
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "plays.sqlite3")
        host.sync.db.Database(path).close()
        for i in range(cut_syncs):
            t = tables[i % BOARDS]
            if rnd.random() < 0.8:
                pc = rnd.random() < 0.1
                power_in_play += pc
                t.play(rnd.randint(1, 12), cut=pc)
            if i % 97 == 96:  # erase board 2 (the same board id), after a clean sync
                t2 = tables[2]
                db = host.sync.db.Database(path)
                host.sync.db.sync(host_for(t2.board)[2], db)
                db.close()
                truth_of(t2.board, truth)
                frozen.update(k for k in truth if k[0] == t2.board.uid)
                t2.erase()
                erased += 1
            for tb in tables:
                truth_of(tb.board, truth)
            kind = ("link_drop", "host_killed", "board_power_cut")[i % 3]
            kinds[kind] += 1
            if kind == "link_drop":
                cut[kind] += sync_cut_link(t.board, path, rnd)
            elif kind == "host_killed":
                cut[kind] += sync_killed(t.board, path, rnd)
            else:
                cut[kind] += sync_power_cut(t, path, rnd)
            truth_of(t.board, truth)
            worst = [max(a, b) for a, b in zip(worst, check(path, truth, frozen, False))]
        for tb in tables:
            truth_of(tb.board, truth)
            db = host.sync.db.Database(path)
            host.sync.db.sync(host_for(tb.board)[2], db)
            db.close()
            truth_of(tb.board, truth)
        final = check(path, truth, frozen, True)
        db = host.sync.db.Database(path)
        plays = db.con.execute("SELECT COUNT(*) FROM games").fetchone()[0]
        numbers = db.con.execute("SELECT COUNT(*) FROM (SELECT game_id FROM games GROUP BY game_id HAVING COUNT(*) > 1)").fetchone()[0]
        db.close()
    lost, dup, over = [max(a, b) for a, b in zip(worst, final)]
    return {
        "plays_fault_syncs": sum(kinds.values()),
        "plays_fault_syncs_cut": sum(cut.values()),
        "plays_fault_link_drops": cut["link_drop"],
        "plays_fault_host_kills": cut["host_killed"],
        "plays_fault_board_power_cuts": cut["board_power_cut"],
        "plays_fault_power_cuts_in_play": power_in_play,
        "plays_fault_boards": BOARDS,
        "plays_fault_erases": erased,
        "plays_in_truth": len(truth),
        "plays_stored": plays,
        "plays_colliding_numbers": numbers,
        "plays_lost": lost,
        "plays_duplicated": dup,
        "plays_overwritten": over,
    }


def measure(cut_syncs=240):
    t0 = time.monotonic()
    out = campaign(cut_syncs)
    out["plays_fault_seconds"] = round(time.monotonic() - t0, 1)
    return out


if __name__ == "__main__":
    for k, v in measure(int(sys.argv[1]) if len(sys.argv) > 1 else 240).items():
        print("%-36s %s" % (k, v))

"""A scripted table session for the storage tests (CPython and MicroPython).

`session()` is a list of steps built from a full 5-player Stalk Exchange
record (tests/records/stalk-5p-bag.jsonl: both ends, portfolios, scores):
every event applied through Store.apply, with undos sprinkled in (single
ones, a run of three that crosses a snapshot, and an undo sent as an
R.UNDO record), an illegal event that must write nothing, `finish`, and the
start of a second game. `play(store, steps, shadow)` runs it while keeping
`shadow` = what the board has ACKNOWLEDGED (a step counts only once its
Store call returned), and the apply in flight: its frame is the first of
its flash ops (a due snapshot follows), so a cut after the frame keeps an
event that is durable but not yet acknowledged (`Shadow.flown`).
"""

import json

import engine_lite
from boardkit.memfs import MemFile, MemFS
from engine_lite import record

RECORD = "tests/records/stalk-5p-bag.jsonl"


def load_events(path=RECORD):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def encode(events):
    """The records of `events` (a game record's lines), in order."""
    g = engine_lite.Game()
    recs = []
    for ev in events:
        rec = g.encode(ev)
        g.apply_record(rec)
        recs.append(rec)
    return recs


def records(path=RECORD):
    """Every record of the whole game in the record file `path`."""
    return encode(load_events(path))


def session(events):
    recs = encode(events)
    steps = [("new", recs[0])]
    for i in range(1, len(recs)):
        steps.append(("apply", recs[i]))
        if i % 9 == 4:
            steps.append(("undo", None))
            steps.append(("apply", recs[i]))
        if i == 40:
            steps += [("undo", None), ("undo", None), ("apply", record.UNDO)]
            steps += [("apply", recs[38]), ("apply", recs[39]), ("apply", recs[40])]
        if i == 20:
            steps.append(("refused", bytes((record.OP_PORTFOLIO, 0, 31, 1, 1, 1, 1, 1))))  # before game end
    steps.append(("finish", None))
    steps.append(("new", recs[0]))
    steps.append(("apply", recs[1]))
    return steps


class Shadow:
    """What the board acknowledged: the current game (a RAM Game) or None,
    and the finished games' events in order."""

    def __init__(self):
        self.game = None
        self.finished = []
        self.flight = None  # the record of the apply under way

    def events(self):
        return None if self.game is None else self.game.events()

    def flown(self):
        """The game as it is with the apply in flight (its frame landed, its
        call did not return), or None when no apply is under way."""
        if self.flight is None or self.game is None:
            return None
        g = engine_lite.Game()
        for rec in self.game.log.records():
            g.apply_record(rec)
        g.apply_record(self.flight)
        return g

    def holds(self, game):
        """True if the booted `game` (or None) holds exactly what was
        acknowledged, or that plus the apply in flight (never more)."""
        if self.game is None or game is None:
            return game is self.game
        for want in (self.game, self.flown()):
            if want is not None and game.events() == want.events() and game.state() == want.state():
                return True
        return False


def play(store, steps, shadow, game=None):
    """Run the steps; raise whatever the store raises (PowerCut). Returns
    the number of steps completed."""
    done = 0
    for kind, rec in steps:
        if kind == "new":
            game = store.new_game(rec)
            if shadow.game is not None:
                shadow.finished.append(shadow.game.events())
            shadow.game = engine_lite.Game()
            shadow.game.apply_record(rec)
        elif kind == "apply":
            shadow.flight = rec
            store.apply(game, rec)
            shadow.flight = None
            shadow.game.apply_record(rec)
        elif kind == "undo":
            store.undo(game)
            shadow.game.undo()
        elif kind == "refused":
            try:
                store.apply(game, rec)
            except engine_lite.EngineError:
                pass
            else:
                raise AssertionError("an illegal record was accepted")
        elif kind == "finish":
            store.finish()
            shadow.finished.append(shadow.game.events())
            shadow.game = None
        done += 1
    return done


class CountingFile(MemFile):
    """A MemFS file that tallies what is read of it in its MemFS: its bytes,
    and its frames (firmware/storage.py FlashLog._walk reads a frame's length
    byte alone, then the rest: one 1-byte read that got its byte is one
    frame read)."""

    def read(self, n=-1):
        out = MemFile.read(self, n)
        self.fs.tally(self.path, len(out), 0)
        return out

    def readinto(self, buf):
        n = MemFile.readinto(self, buf)
        self.fs.tally(self.path, n, int(len(buf) == 1 and n == 1))
        return n


class CountingFS(MemFS):
    """MemFS counting, per path, the bytes and frames the Store reads
    (`got[path] = [bytes, frames]`; `frames(path)`, `reset()`)."""

    File = CountingFile

    def __init__(self):
        MemFS.__init__(self)
        self.got = {}

    def tally(self, path, n, frames):
        g = self.got.setdefault(path, [0, 0])
        g[0] += n
        g[1] += frames

    def frames(self, path):
        return self.got.get(path, (0, 0))[1]

    def reset(self):
        self.got = {}

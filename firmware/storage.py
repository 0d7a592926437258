"""Crash-safe game storage on the board's flash (layout: docs/storage.md).

Why this shape: a power cut can come at any instant, including in the
middle of a write. So nothing on flash is ever rewritten in place:

* the game log is append-only; each record is one frame
  [len][record][crc32 LE], written by ONE write call, so a cut leaves at
  worst a torn LAST frame, which its checksum exposes and boot cuts off;
* undo is a frame too (the record.UNDO record), so undo survives a cut exactly
  like any event; the effective log is computed on read (a stack walk);
* a snapshot (engine state + the log offset it covers) is written to a
  temp file and renamed over the old one (rename is atomic), so boot folds
  only the frames after it: boot time does not grow with the game;
* finishing a game is a rename (.log -> .fin), syncing one is a rename
  (.fin -> .syn); settings are temp + rename.

An event is acknowledged once its frame is on flash: when `Store.apply`
returns, or with `later=True` (the app: the ring shows the event first)
when `Store.flush` returns. The frame write is the LAST flash op of that
(a due snapshot is written before it), so after a cut the board boots
holding every acknowledged event, plus at most the one whose frame landed
before the cut but which was not yet acknowledged (legal, shown on the
ring after the restore, undoable), and minus at most the one event the
ring showed whose frame had not landed (docs/storage.md).
"""

import binascii

from engine_lite import Game
from engine_lite import record
from engine_lite.vocab import DEFAULT_BRIGHTNESS

LOG = ".log"  # game in progress
SNP = ".snp"  # its snapshot
FIN = ".fin"  # finished, not yet synced to the host
SYN = ".syn"  # finished and synced (may be pruned)
TMP = ".tmp"  # half-made files: removed at boot
SETTINGS = "settings.json"
FAULTS = "faults.txt"  # faults the loop survived (App.recover), newest last; not *.log: boot takes those for games
FAULTS_MAX = 1024  # bytes kept: the oldest lines go first
SNAP_MAGIC = b"BKS1"
SNAP_ROOM = 512  # bytes for snapshot files before their buffer must grow (a 5-player game: ~110 Stalk Exchange, ~420 Orchids)
# crc32(data + crc32(data) as 4 LE bytes) is this constant for any data, so
# a frame checks with one crc32 call and no big-int arithmetic.
CRC_RESIDUE = 0x2144DF1C


def default_settings():
    # track_start: only start spaces the players (or the host) gave; the
    # placeholder table is never copied in (it would read as confirmed)
    return {"names": [], "brightness": DEFAULT_BRIGHTNESS, "track_start": {}}


def _u32(b, i):
    return b[i] | b[i + 1] << 8 | b[i + 2] << 16 | b[i + 3] << 24


def _put32(b, i, v):
    b[i] = v & 255
    b[i + 1] = v >> 8 & 255
    b[i + 2] = v >> 16 & 255
    b[i + 3] = v >> 24 & 255


def _crc(b):
    return binascii.crc32(b) & 0xFFFFFFFF


def frame(rec):
    """One log frame: [len 1..255][record][crc32 of len+record, LE]."""
    n = len(rec)
    if not 0 < n < 256:
        raise ValueError("record length")
    b = bytearray(n + 5)
    b[0] = n
    b[1 : n + 1] = rec
    _put32(b, n + 1, _crc(memoryview(b)[: n + 1]))
    return b


class _OsFS:
    """The real flash: the `os` module's calls and the builtin `open`, as
    attributes (plain functions: no method of ours in between)."""

    def __init__(self):
        import os

        self.open = open
        self.listdir = os.listdir
        self.stat = os.stat
        self.mkdir = os.mkdir
        self.remove = os.remove
        self.rename = getattr(os, "replace", os.rename)  # CPython on Windows: rename won't overwrite


def _write_file(fs, path, data):
    """Write a whole file atomically: temp file, then rename over `path`."""
    tmp = path + TMP
    with fs.open(tmp, "wb") as f:
        f.write(data)
        f.flush()
    try:
        fs.rename(tmp, path)
    except OSError:  # a filesystem whose rename refuses an existing target (FAT)
        fs.remove(path)
        fs.rename(tmp, path)


def _read_file(fs, path):
    """The whole file, or None if it cannot be read (missing)."""
    try:
        with fs.open(path, "rb") as f:
            return f.read()
    except OSError:
        return None


def _exists(fs, path):
    try:
        fs.stat(path)
    except OSError:
        return False
    return True


class FlashLog:
    """The engine's log interface (append/pop/records/__len__) on one flash file.

    RAM holds no records, only: `base` effective records lie before byte
    `base_off` (known from the snapshot), and `tail` lists the file offsets
    of the effective records after it (a few dozen at most between
    snapshots). `records(start)` for start >= base reads just the tail; an
    earlier start walks the whole file (undo's refold, sync)."""

    def __init__(self, fs, path):
        self.fs = fs
        self.path = path
        self.buf = bytearray(260)  # one frame
        self.base = 0
        self.base_off = 0
        self.tail = []
        self.end = 0  # bytes of valid frames
        self.size = 0  # bytes in the file when load() read it (more than end: a torn last frame)
        self.since = 0  # frames written since base_off
        self.snapped = False  # the snapshot file holds the state after the first `base` records
        self.pend = None  # a record appended, indexed, not yet on flash (flush)

    def __len__(self):
        return self.base + len(self.tail)

    def load(self, off=0, count=0):
        """Scan the file from `off` (where `count` effective records end).
        False if that start point is not consistent with the file."""
        self.size = self.fs.stat(self.path)[6]
        if off > self.size:
            return False
        f = self.fs.open(self.path, "rb")
        f.seek(off)
        stack = []  # type: list[int]
        end, under = self._scan(f, off, stack)
        f.close()
        if under:
            return False
        self.base, self.base_off, self.tail, self.end = count, off, stack, end
        self.since = len(stack)
        return True

    def _frame(self, f):
        """Read one frame at f's position into self.buf; its record length,
        or 0 if there is no whole, intact frame there (end or torn)."""
        buf = self.buf
        mv = memoryview(buf)
        if f.readinto(mv[:1]) != 1:
            return 0
        n = buf[0]
        if n == 0 or f.readinto(mv[1 : n + 5]) != n + 4:
            return 0
        if binascii.crc32(mv[: n + 5]) != CRC_RESIDUE:
            return 0
        return n

    def _scan(self, f, off, stack):
        """Walk frames from `off`, keeping `stack` = offsets of effective
        records. Returns (end of the last intact frame, underflow) where
        underflow means an undo reached back before `off`."""
        while True:
            n = self._frame(f)
            if not n:
                return off, False
            if n == 1 and self.buf[1] == record.OP_UNDO:
                if not stack:
                    return off, True
                stack.pop()
            else:
                stack.append(off)
            off += n + 5

    def _offsets(self):
        stack = []  # type: list[int]
        with self.fs.open(self.path, "rb") as f:
            self._scan(f, 0, stack)
        return stack

    def _put(self, fr):
        with self.fs.open(self.path, "ab") as f:  # on littlefs/FAT, close commits the data
            f.write(fr)
            f.flush()

    def flush(self):
        """Write the record append() left waiting, as one frame (the event
        is durable when this returns)."""
        rec = self.pend
        if rec is not None:
            self.pend = None
            self._put(frame(rec))  # framed here: no frame buffer held while the ring is drawn

    def append(self, rec):
        """Index `rec` now; its frame waits for flush(), done by the Store
        (and by any read of the file), so the ring may show the event before
        the flash work. At most one frame waits."""
        self.flush()
        self.tail.append(self.end)
        self.pend = rec
        self.end += len(rec) + 5  # its frame: length byte, record, crc32
        self.since += 1

    def pop(self):
        if not len(self):
            raise IndexError("pop from an empty log")
        self.append(record.UNDO)
        self.flush()
        self.tail.pop()  # the undo frame's own offset
        if self.tail:
            self.tail.pop()
        else:  # undo reached before the snapshot point: index the whole file
            self.base = 0
            self.base_off = 0
            self.snapped = False
            self.tail = self._offsets()

    def _read(self, f, off):
        f.seek(off)
        n = self._frame(f)
        return bytes(self.buf[1 : n + 1])

    def records(self, start=0):
        """Effective records from index `start`, oldest first, as bytes."""
        self.flush()
        if start < self.base and start == 0:
            # The start record is the first frame and is never undone, so
            # reading it (snapshot/restore do) needs no walk of the file.
            f = self.fs.open(self.path, "rb")
            rec = self._read(f, 0)
            f.close()
            yield rec
            start = 1
        if start < self.base:
            offs = self._offsets()
        else:
            offs = self.tail
            start -= self.base
        f = None
        for k in range(start, len(offs)):
            if f is None:
                f = self.fs.open(self.path, "rb")
            yield self._read(f, offs[k])
        if f is not None:
            f.close()


class Store:
    """Games on flash under `root`: the game in progress, the archive of
    finished games (the newest `keep`; unsynced ones are never pruned) and
    the settings. `fs` is os-like (default: the real flash)."""

    def __init__(self, root="/bk", fs=None, keep=20, snapshot_every=8):
        self.root = root.rstrip("/")
        self.fs = _OsFS() if fs is None else fs
        self.keep = keep
        self.snapshot_every = snapshot_every
        # The snapshot file's bytes, built or read: one buffer, reused, made
        # while the heap is still whole (see _buffer).
        self._buf = bytearray(SNAP_ROOM)
        self._held = 0  # bytes of _buf that are the game in progress's snapshot file (0: none)
        self.game_id = None  # id of the current game (kept after finish)
        self.log = None  # type: FlashLog | None  # the game in progress
        self._next = None  # type: int | None  # next game number (after boot)
        self._plog = None  # type: FlashLog | None  # the log whose last frame waits for flush()
        self._psnap = None  # the snapshot that waits for flush(), before that frame

    def _path(self, gid, ext):
        return "%s/%s%s" % (self.root, gid, ext)

    def _names(self):
        try:
            return self.fs.listdir(self.root)
        except OSError:
            self.fs.mkdir(self.root)
            return []

    def _ids(self, names, ext):
        return sorted(n[: -len(ext)] for n in names if n.endswith(ext))

    def boot(self):
        """Clean up after a cut and restore the game in progress (or None).
        What flush() had not yet written is dropped: the game is what the
        flash holds."""
        self._plog = self._psnap = None
        fs = self.fs
        names = self._names()
        top = 0
        for n in names:
            if n.endswith(TMP):
                fs.remove(self._path(n, ""))
            elif n[:1].isdigit():
                top = max(top, int(n.split(".")[0]))
        self._next = top + 1
        logs = self._ids(names, LOG)
        for gid in self._ids(names, SNP):
            if gid not in logs:
                fs.remove(self._path(gid, SNP))
        self.log = None
        if not logs:
            return None
        gid = logs[-1]
        self.game_id = gid
        log = FlashLog(fs, self._path(gid, LOG))
        snap = self._read_snapshot(gid)
        if snap is None or not log.load(_u32(snap, 4), _u32(snap, 8)):
            snap = None
            log.load()
        if log.end < log.size:  # torn last frame: keep only the intact prefix
            self._truncate(log.path, log.end)
        if not len(log):  # even the start record never made it
            fs.remove(log.path)
            return None
        self.log = log
        game = None
        if snap is not None:
            try:
                game = Game(log, snap[12 : len(snap) - 4])
            except ValueError:  # the snapshot does not belong to this log
                game = None
        if game is None:
            log.load()
            game = Game(log)
        else:
            log.snapped = True
        return game

    def _read_snapshot(self, gid):
        """The snapshot file of game `gid` (a view of the snapshot buffer,
        grown if the file is larger), or None if it is missing or damaged."""
        path = self._path(gid, SNP)
        try:
            size = self.fs.stat(path)[6]
            b = self._buffer(size)
            with self.fs.open(path, "rb") as f:
                if f.readinto(b) != size:
                    return None
        except OSError:
            return None
        n = size - 4
        if n < 12 or bytes(b[:4]) != SNAP_MAGIC or _crc(b[:n]) != _u32(b, n):
            return None
        self._held = size
        return b

    def _buffer(self, size):
        """The first `size` bytes of the snapshot buffer. One buffer for every
        snapshot, written or read: a snapshot grows a little with each event,
        so one allocated per snapshot would rarely fit the hole the previous
        one left, and those holes fragment a small heap. An outgrown buffer
        is replaced by one 64 bytes roomier than needed."""
        self._held = 0
        if len(self._buf) < size:
            self._buf = bytearray(size + 64)
        return memoryview(self._buf)[:size]

    def _truncate(self, path, size):
        """Rewrite the first `size` bytes of `path` (temp + rename): files
        cannot be truncated in place on MicroPython."""
        buf = bytearray(256)
        left = size
        with self.fs.open(path, "rb") as src:
            with self.fs.open(path + TMP, "wb") as dst:
                while left:
                    k = src.readinto(memoryview(buf)[: min(left, 256)])
                    if not k:
                        break
                    dst.write(memoryview(buf)[:k])
                    left -= k
                dst.flush()
        self.fs.rename(path + TMP, path)

    def _snapshot(self, log, b):
        """Snapshot file: magic, log offset, records covered, engine
        snapshot, crc32; `b` is from _snapshot_of. The log's RAM index
        restarts there now; the file is written by flush()."""
        n = len(b) - 4
        b[:4] = SNAP_MAGIC
        _put32(b, 4, log.end)
        _put32(b, 8, len(log))
        _put32(b, n, _crc(b[:n]))
        self._psnap = b
        log.base = len(log)
        log.base_off = log.end
        log.tail = []
        log.since = 0
        log.snapped = True
        self._held = len(b)

    def flush(self):
        """Write what apply(..., later=True) left waiting: a due snapshot,
        then the event's frame, the last flash op: once this returns the
        event is durable (acknowledged). Every other Store call that
        touches the flash flushes first."""
        snap = self._psnap
        log = self._plog
        self._psnap = self._plog = None
        if snap is not None:
            _write_file(self.fs, self._path(self.game_id, SNP), snap)
        if log is not None:
            log.flush()

    def _snapshot_of(self, game):
        """Game.snapshot with room for the file's header and checksum, in
        the snapshot buffer (see _buffer)."""
        self._held = 0  # overwritten: no longer the file's
        b = game.snapshot(12, 4, self._buf)
        if type(b) is not memoryview:  # it did not fit
            n = len(b)
            self._buffer(n)[:] = b
            b = memoryview(self._buf)[:n]
        return b

    def _due(self, game):
        """True if a snapshot is due before the next frame of `game`."""
        log = self.log
        return log is not None and game.log is log and log.since >= self.snapshot_every

    def new_game(self, start_record, later=False):
        """Start a new game (a game still in progress is archived first);
        `later` as for apply."""
        if self._next is None:
            self.boot()
        self.flush()
        n = self._next or 1
        gid = "%04d" % n
        log = FlashLog(self.fs, self._path(gid, LOG))  # no file until its first frame
        game = Game(log)
        game.judge(start_record)  # judged once, first: EngineError, nothing written or archived
        if self.log is not None:
            self._archive(self.log)
        self._held = 0  # the buffer holds the archived game's snapshot, if any
        self._next = n + 1
        self.log = self._plog = log
        self.game_id = gid
        log.append(start_record)
        if not later:
            self.flush()
        return game

    def apply(self, game, rec, later=False):
        """Judge `rec` and make it durable; returns once it is on flash, or
        with `later` once it is judged and queued: then flush() writes it
        (the app shows the event first). EngineError: refused, nothing
        written, nothing queued."""
        if rec[0] == record.OP_UNDO:
            return self.undo(game)
        self.flush()  # the event before, if it waits: at most one in flight
        snap = self._snapshot_of(game) if self._due(game) else None  # the state before rec
        game.judge(rec)  # EngineError: nothing written, nothing changed
        # A due snapshot goes BEFORE the frame, so the frame stays the last
        # flash op. (Judging rec on the game itself, not on a copy restored
        # from the snapshot: no second state in RAM.)
        if snap is not None:
            self._snapshot(self.log, snap)
        game.log.append(rec)
        self._plog = game.log
        if not later:
            try:
                self.flush()
            except OSError:  # flash full/failing: the RAM state must match flash
                game.log.load()
                game.refold()
                raise

    def undo(self, game):
        """Undo the last event, durably (an undo frame). Refolds from the
        snapshot file when it can (cost bounded by snapshot_every, not by
        the game's length), else from the start (Game.undo)."""
        self.flush()
        if len(game.log) > 1 and self._due(game):  # else Game.undo refuses: write nothing
            self._snapshot(self.log, self._snapshot_of(game))
            self.flush()
        log = self.log
        if log is not None and game.log is log and log.snapped and log.tail and len(log) > 1:
            # the file's bytes are still in the buffer unless a refused
            # record's snapshot overwrote them: then read the file back
            snap = memoryview(self._buf)[: self._held] if self._held else self._read_snapshot(self.game_id)
            if snap is not None:
                log.pop()
                game.table = Game(log, snap[12 : len(snap) - 4]).table
                return
        game.undo()

    def finish(self, game=None):
        """Archive the game in progress (it may still get records, e.g. a
        late portfolio; they go to the archived file)."""
        self.flush()
        if self.log is not None:
            self._archive(self.log)
        self._prune()

    def _archive(self, log):
        """The rename is the commit point and the last op: the snapshot goes
        first (a cut between the two only costs one full refold at boot)."""
        gid = log.path[len(self.root) + 1 : -len(LOG)]
        try:
            self.fs.remove(self._path(gid, SNP))
        except OSError:  # no snapshot yet
            pass
        fin = self._path(gid, FIN)
        self.fs.rename(log.path, fin)
        log.path = fin
        self.log = None

    def archived(self):
        """Finished games, oldest first: [(game_id, synced)]."""
        out = []
        for n in sorted(self._names()):
            if n.endswith(FIN) or n.endswith(SYN):
                out.append((n[:-4], n.endswith(SYN)))
        return out

    def _prune(self):
        games = self.archived()
        extra = len(games) - self.keep
        for gid, synced in games:
            if extra <= 0:
                break
            if synced:
                self.fs.remove(self._path(gid, SYN))
                extra -= 1

    def _find(self, gid):
        self.flush()  # a frame waiting for a game's file goes there before it is read or renamed
        for ext in (LOG, FIN, SYN):
            p = self._path(gid, ext)
            if _exists(self.fs, p):
                return p
        return None

    def records(self, game_id):
        """Effective records (bytes) of any stored game; KeyError if unknown."""
        p = self._find(game_id)
        if p is None:
            raise KeyError(game_id)
        log = FlashLog(self.fs, p)
        log.load()
        return list(log.records())

    def mark_synced(self, game_id):
        """The host holds this game: it may now be pruned. False if unknown."""
        p = self._find(game_id)
        if p is None:
            return False
        if p.endswith(FIN):
            self.fs.rename(p, self._path(game_id, SYN))
            self._prune()
        return True

    def erase(self, game_id):
        """Delete an archived game (the host asked, after syncing it);
        KeyError if no archived game has that id. The game in progress
        cannot be erased."""
        self.flush()
        for ext in (FIN, SYN):
            p = self._path(game_id, ext)
            if _exists(self.fs, p):
                self.fs.remove(p)
                return
        raise KeyError(game_id)

    def settings(self):
        """Stored settings over the defaults (defaults if missing/corrupt)."""
        s = default_settings()
        raw = _read_file(self.fs, self._path("", SETTINGS))
        if raw is not None:
            import json

            try:
                stored = json.loads(raw)
            except ValueError:  # a corrupt settings file: the defaults
                stored = None
            if type(stored) is dict:
                s.update(stored)
        return s

    def faults(self):
        """The fault log's text ("" if there is none)."""
        raw = _read_file(self.fs, self._path("", FAULTS))
        try:
            return "" if raw is None else str(raw, "utf-8")
        except ValueError:  # unreadable: start afresh
            return ""

    def log_fault(self, line):
        """Append one line to the fault log, dropping the oldest lines past
        FAULTS_MAX bytes (temp + rename: a cut keeps the old log whole)."""
        b = self.faults() + line[:160] + "\n"
        while len(b) > FAULTS_MAX:
            b = b[b.find("\n") + 1 :]
        self._names()  # the root exists
        _write_file(self.fs, self._path("", FAULTS), b.encode())

    def save_settings(self, d):
        import json

        self._names()  # the root exists
        _write_file(self.fs, self._path("", SETTINGS), json.dumps(d).encode())

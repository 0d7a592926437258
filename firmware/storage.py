"""Crash-safe game storage on the board's flash (layout: docs/storage.md).

Why this shape: a power cut can come at any instant, including in the
middle of a write. So nothing that holds an event is ever rewritten in
place:

* the game log is append-only; each record is one frame
  [len][record][crc32 LE], written by ONE write call, so a cut leaves at
  worst a torn LAST frame, which its checksum exposes and boot cuts off;
  the log is small segment files (FlashLog), each under littlefs's inline
  limit, so that an append erases no flash block;
* undo is a frame too (the record.UNDO record), so undo survives a cut exactly
  like any event; the effective log is computed on read (a stack walk);
* a snapshot (engine state + the log offset it covers) is written over
  the old one, so boot folds only the frames after it: boot time does not
  grow with the game; a cut that tears it fails its crc32 and costs one
  full refold, never a game;
* finishing a game is a copy of its effective records' frames into one
  file, temp + rename (-> .fin), with its summary and sparse index beside
  it (/bk-sum: a sync reads only the frames it asks for); syncing one is a
  rename (.fin -> .syn); settings are temp + rename.

An event is acknowledged once its frame is on flash: when `Store.apply`
returns, or with `later=True` (the app: the ring shows the event first)
when `Store.flush` returns. The frame goes first; a due snapshot (of the
game with the event) after it. So after a cut the board boots holding
every acknowledged event, plus at most the one whose frame landed before
the cut but which was not yet acknowledged (legal, shown on the ring after
the restore, undoable), and minus at most the one event the ring showed
whose frame had not landed (docs/storage.md).
"""

import binascii

from engine_lite import Game, const
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
PUMP = const(11)  # commits to the live directory since it compacted: at the next quiet spell, make it compact (Store.quiet)
SCRATCH = "/scratch"  # the file in the live directory whose rewrites do that (boot ignores it: no game's name)
SEG = 192  # bytes a live log's segment takes frames up to: littlefs keeps a file this small inline in the directory's metadata, so an append erases no block (docs/storage.md)
_ONE_SEG = const(0xFFFF)  # FlashLog.seg on the journal: a segment as long as an offset reaches
_STALL_MS = const(20)  # a write this long erased a block (docs/storage.md)
_OP_UNDO = const(11)  # record.OP_UNDO, folded (tests/house/test_folded_consts.py holds it equal)
_TICKS_MASK = const(0x3FFFFFFF)  # ticks_ms() wraps at 2**30 (buttons.ticks_diff's mask, folded here: an import of it costs the bundle 43 B)
_EVERY = const(16)  # records between two points of an archive's index (FlashLog.archive, Store.window): a fetch reads at most 15 frames before those it asks for
_SNAP_ROOM = const(512)  # bytes for snapshot files before their buffer must grow (a 5-player game: ~110 Stalk Exchange, ~420 Orchids)
# crc32(data + crc32(data) as 4 LE bytes) is this constant for any data, so
# a frame checks with one crc32 call and no big-int arithmetic.
_CRC_RESIDUE = const(0x2144DF1C)


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
    """Write a whole file atomically: temp file, then rename over `path`.
    On CircuitPython's journal a whole file is one entry, replayed whole
    after a cut, so it is written in place: a rename would drain the
    journal onto FAT inside the press that saved it (firmware/journal_cp.py)."""
    if getattr(fs, "drain", None) is not None:
        with fs.open(path, "wb") as f:
            f.write(data)
        return
    tmp = path + TMP
    with fs.open(tmp, "wb") as f:  # close commits it
        f.write(data)
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
    """The engine's log interface (append/pop/records/__len__) on one game's
    flash files: its segments, read as one stream of frames.

    Segments: `stem + ext` (e.g. /bk/0007.log), then `stem.l1`, `stem.l2`...
    A live log's segment takes frames while they fit in SEG bytes, so each
    stays small enough for littlefs to keep inside its directory's
    metadata: an append is then a metadata commit, not a fresh 4 KB block
    erased and the old last block copied into it, as an append to a larger
    file is (docs/storage.md "Flash work per event"). The last segment is
    written under `live` (the live directory, e.g. /bk-live/0007.l3); once
    the next one has its first frame, it moves under `stem` (the games
    directory): the directory every event commits to holds one segment (the
    snapshot has a directory of its own), so littlefs's compaction of it
    stays small. A segment is
    read wherever it is (a cut can leave two under `live`; an older
    firmware left all under `stem`). An offset is segment << 16 | offset
    in that segment, so a log written whole in one file by an older
    firmware (and its snapshot's offset) is just a long segment 0.

    RAM holds no records, only: `base` effective records lie before offset
    `base_off` (known from the snapshot), and `tail` lists the offsets of
    the effective records after it (a few dozen at most between
    snapshots).

    On CircuitPython's journal (firmware/journal_cp.py) a live log is one
    segment (`seg`: as far as an offset's 16 bits reach): FAT gains nothing
    from small files, and each segment's move is a rename, which drains the
    journal inside the event that begins the next segment."""

    seg = SEG  # bytes a segment takes frames up to

    def __init__(self, fs, stem, ext=LOG, live=None):
        self.fs = fs
        self.stem = stem
        self.ext = ext
        self.live = live  # a live log's stem in the live directory (None: one file, e.g. an archive)
        self.tip = live or stem  # the stem the last segment is under: appends go there
        self.buf = bytearray(260)  # one frame
        self.base = 0  # > 0: the snapshot file holds the state after that many records
        self.tail = []  # type: list[int]
        self.end = 0  # offset after the last intact frame
        self.since = 0  # frames written since the snapshot's point
        self.pend = None  # a record appended, indexed, not yet on flash (flush)
        self.moving = -1  # the full segment still in the live directory (move), or -1
        self.first = None  # the start record, once written or read: every snapshot asks for it (records), and a read of the file costs more (a file open; on CircuitPython, nvm's entries walked)

    def __len__(self):
        return self.base + len(self.tail)

    def path(self, k, stem=None):
        return (stem or self.stem) + (".l%d" % k if k else self.ext)

    def _seg(self, k):
        """The stem segment k is under, or None if it does not exist."""
        for s in (self.stem, self.live):
            if s and _exists(self.fs, self.path(k, s)):
                return s
        return None

    def load(self, off=0, count=0):
        """Index the frames from `off` (where `count` effective records
        end). False if that start point is not consistent with the files
        (past their end, or an undo reaching back before it)."""
        k = off >> 16
        s = self._seg(k)
        if off and (s is None or self.fs.stat(self.path(k, s))[6] < off & 0xFFFF):
            return False  # no such segment, or a shorter one (no file yet is fine if off is 0)
        self.end = off
        stack = self._index(off)
        if stack is None:
            return False
        self.tip = self._seg(self.end >> 16) or self.tip
        self.base, self.tail = count, stack
        self.since = len(stack)
        return True

    def _index(self, off):
        """The offsets of the effective records from `off` on (an undo
        frame pops one), or None if an undo reaches back before `off`;
        self.end becomes the end of the last intact frame."""
        stack = []  # type: list[int]
        w = self._walk(off)
        for o, n in w:
            self.end = o + n + 5
            if n == 1 and self.buf[1] == _OP_UNDO:
                if not stack:
                    w.close()
                    return None
                stack.pop()
            else:
                stack.append(o)
        return stack

    def _effective(self):
        """(bits, count): a bit a frame of the log from its start (bit i:
        frame i), set where the frame holds an effective record, and how
        many are. An undo frame clears the last bit set before it (one with
        nothing before it, which FlashLog.pop never writes, undoes nothing).
        Finishing a game runs when the heap is fullest: a bit a frame here,
        where a list of the records' offsets took kilobytes and the largest
        free block (docs/design.md, "Heap")."""
        bits = bytearray(16)
        i = count = 0
        for _, n in self._walk(0):
            if i >> 3 == len(bits):
                bits.extend(bytes(len(bits)))
            if n == 1 and self.buf[1] == _OP_UNDO:
                k = i - 1
                while k >= 0 and not bits[k >> 3] >> (k & 7) & 1:
                    k -= 1
                if k >= 0:
                    bits[k >> 3] &= ~(1 << (k & 7))
                    count -= 1
            else:
                bits[i >> 3] |= 1 << (i & 7)
                count += 1
            i += 1
        return bits, count

    def _walk(self, off):
        """The one frame walker: (offset, record length) of each intact
        frame from `off` to the first missing or damaged one, its bytes in
        self.buf (the frame at buf[0]). A frame never spans two segments."""
        buf = self.buf
        mv = memoryview(buf)
        while True:
            s = self._seg(off >> 16)
            if s is None:  # no such segment: the end
                return
            f = self.fs.open(self.path(off >> 16, s), "rb")
            try:
                f.seek(off & 0xFFFF)
                while f.readinto(mv[:1]):
                    n = buf[0]
                    if not n or f.readinto(mv[1 : n + 5]) != n + 4 or binascii.crc32(mv[: n + 5]) != _CRC_RESIDUE:
                        return
                    yield off, n
                    off += n + 5
            finally:
                f.close()
            if self.live is None:  # only a live log has more segments
                return
            off = ((off >> 16) + 1) << 16

    def drop(self, k=0):
        """Delete segments k, k+1..., the last first (a cut leaves a
        shorter log behind, never a gap)."""
        s = self._seg(k)
        if s:
            self.drop(k + 1)
            self.fs.remove(self.path(k, s))

    def repair(self):
        """Make the files hold exactly the intact frames load() found: the
        segment with a torn (or bad) frame keeps its intact prefix (temp +
        rename: files cannot be truncated in place on MicroPython), the
        segments after it go. Boot does this before any append, so no frame
        is ever written after garbage."""
        k = self.end >> 16
        n = self.end & 0xFFFF
        self.drop(k + 1)
        p = self.path(k, self.tip)
        if self.fs.stat(p)[6] > n:
            _write_file(self.fs, p, _read_file(self.fs, p)[:n])  # one segment: a few hundred bytes

    def flush(self):
        """Write the record append() left waiting, as one frame, in one
        write() (the event is durable when this returns)."""
        rec = self.pend
        if rec is not None:
            self.pend = None
            k = self.end >> 16
            with self.fs.open(self.path(k, self.tip), "ab") as f:  # on littlefs/FAT, close commits the data
                f.write(frame(rec))  # framed here: no frame buffer held while the ring is drawn
            if k and self.end & 0xFFFF == len(rec) + 5:  # a new segment's first frame: the one before is to leave the live directory
                self.move()  # the one before that, if no quiet spell moved it
                self.moving = k - 1  # (after the frame: moved first, littlefs erased both blocks of the live pair in one commit, once a game)

    def move(self):
        """Move the full segment out of the live directory, into the games
        directory: done when the buttons are quiet (Store.quiet), so that
        its two commits (and a compaction of either directory) are no
        event's flash work; at the latest when the next segment begins."""
        k = self.moving
        if k >= 0:
            self.moving = -1
            try:
                self.fs.rename(self.path(k, self.live), self.path(k))
            except OSError:  # an older firmware's, already there (or left where it is: it is read there too)
                pass

    def append(self, rec):
        """Index `rec` now; its frame waits for flush(), done by the Store
        (and by any read of the files), so the ring may show the event before
        the flash work. At most one frame waits. A live log's frame that
        would take its segment past SEG bytes starts the next segment."""
        self.flush()
        n = len(rec) + 5  # its frame: length byte, record, crc32
        if not self.end:
            self.first = bytes(rec)
        if self.live and self.end & 0xFFFF and (self.end & 0xFFFF) + n > self.seg:
            self.tip = self.live
            self.end = ((self.end >> 16) + 1) << 16
        self.tail.append(self.end)
        self.pend = rec
        self.end += n
        self.since += 1

    def rebase(self):
        """A snapshot now covers every record: the RAM index restarts at the
        end. Returns that end (the offset the snapshot file names)."""
        self.base = len(self)
        self.tail = []
        self.since = 0
        return self.end

    def pop(self):
        if not len(self):
            raise IndexError  # as list.pop: nothing to undo
        self.append(record.UNDO)
        self.flush()
        self.tail.pop()  # the undo frame's own offset
        if self.tail:
            self.tail.pop()
        else:  # undo reached before the snapshot point: index the whole log
            self.load()

    def archive(self, ext, summary):
        """A generator: each step one piece of the work, so a spread finish
        (Store.quiet) can do one piece a quiet spell; run to its end at
        once otherwise. Copy the effective records, and only them, into one file
        `stem + ext` (temp + rename: the rename is the commit point and the
        last op); the log goes on in that file (a late record is appended to
        it). The segments are left for Store._logs to delete, at the next
        boot or new game. Before the rename, the game's summary goes to file
        `summary` (Store.window), found in the same pass: the archive's size,
        its count of records and their prefix crc, then the index: for
        records 0, _EVERY, 2 x _EVERY..., its offset in the archive and the
        prefix crc of the records before it (u32 LE each; the archive holds
        no undone record and no undo frame, so record i is its i-th frame).
        Last, a crc32 of the summary's bytes before it. Nothing held but
        a bit a frame (FlashLog._effective) and the summary's bytes (8 per
        _EVERY records)."""
        path = self.stem + ext
        self.flush()
        end = i = j = c = 0
        keep, count = self._effective()
        b = bytearray(16 + 8 * ((count + _EVERY - 1) // _EVERY))
        with self.fs.open(path + TMP, "wb") as f:
            for o, n in self._walk(0):  # every frame (frame i); the effective ones copied
                if o & 0xFFFF == 0 and o:  # a segment copied: a piece of a spread finish (Store.quiet)
                    yield
                if keep[i >> 3] >> (i & 7) & 1:
                    if not j % _EVERY:  # an index point: where record j begins, the crc of those before it
                        _put32(b, 12 + 8 * (j // _EVERY), end)
                        _put32(b, 16 + 8 * (j // _EVERY), c)
                    c = binascii.crc32(memoryview(self.buf)[: n + 1], c)  # (length byte, record): codec.prefix_crc's chain
                    j += 1
                    end += f.write(memoryview(self.buf)[: n + 5])
                i += 1
        n = len(b) - 4
        _put32(b, 0, end)
        _put32(b, 4, j)
        _put32(b, 8, c)
        _put32(b, n, _crc(b[:n]))
        yield
        _write_file(self.fs, summary, b)
        yield
        self.fs.rename(path + TMP, path)
        self.ext = ext
        self.live = None
        self.tip = self.stem
        self.end = end
        self.rebase()  # no index of the file kept in RAM: records() walks it

    def records(self, start=0):
        """Effective records from index `start`, oldest first, as bytes."""
        self.flush()
        if start == 0 and len(self):
            # the start record, never undone: reading it (snapshot and
            # restore do) needs no walk of the log, and once read, no file
            if self.first is None:
                w = self._walk(0)
                n = next(w)[1]
                w.close()
                self.first = bytes(self.buf[1 : n + 1])
            yield self.first
            start = 1
        if start < self.base:
            offs = self._index(0)
        else:
            offs = self.tail
            start -= self.base
        if start < len(offs):
            w = self._walk(offs[start])
            for o, n in w:
                if o == offs[start]:
                    start += 1
                    yield bytes(self.buf[1 : n + 1])
                    if start == len(offs):
                        break
            w.close()


class Store:
    """Games on flash under `root`: the game in progress, the archive of
    finished games (the newest `keep`; unsynced ones are never pruned) and
    the settings. `fs` is os-like (default: the real flash); `clock`, the
    board's ticks_ms."""

    _held = 0  # bytes of _buf that are the game in progress's snapshot file (0: none); set only by _buffer
    _pfin = False  # finish(later=True) waits for flush(), after the frame
    _job = None  # a finish spread over quiet spells (_finishing), under way

    def __init__(self, root="/bk", fs=None, keep=20, snapshot_every=16, clock=None):
        self.root = root.rstrip("/")
        self.clock = clock  # ticks_ms: quiet() times its writes with it (None: quiet() does nothing)
        self._commits = PUMP  # commits to the live directory since it compacted (unknown at boot: due)
        self.live = self.root + "-live"  # the live directory (/bk-live): the game in progress's last segment (FlashLog)
        self.snaps = self.root + "-snap"  # the snapshot's (/bk-snap): in the live one, it made each compaction of it read 3x the flash
        self.fs = _OsFS() if fs is None else fs
        self.keep = keep
        self.snapshot_every = snapshot_every
        # The snapshot file's bytes, built or read: one buffer, reused, made
        # while the heap is still whole (see _buffer).
        self._buf = bytearray(_SNAP_ROOM)
        self.game_id = None  # id of the current game (kept after finish)
        self.log = None  # type: FlashLog | None  # the game in progress
        self._next = None  # type: int | None  # next game number (after boot)
        self._pgame = None  # type: Game | None  # the game whose log's last frame waits for flush()
        self.mark = None  # the board's Buttons (App sets it): told when each piece of flash work begins (_mark)

    def _path(self, gid, ext, d=None):
        return "%s/%s%s" % (d or self.root, gid, ext)

    def _log(self, gid, ext=LOG):
        log = FlashLog(self.fs, self._path(gid, ""), ext, self._path(gid, "", self.live) if ext == LOG else None)
        if getattr(self.fs, "drain", None) is not None:  # the journal on FAT: a game's log in one file (FlashLog)
            log.seg = _ONE_SEG
        return log

    def _names(self, d=None):
        d = d or self.root
        try:
            return self.fs.listdir(d)
        except OSError:
            self.fs.mkdir(d)
            return []

    def boot(self):
        """Clean up after a cut and restore the game in progress (or None).
        What flush() had not yet written is dropped: the game is what the
        flash holds."""
        self._pgame = None
        self._pfin = False
        self._job = None  # a spread finish a cut (or a fault) stopped: the flash says where it got
        fs = self.fs
        try:  # a write before any read: littlefs settles a move a cut left half-done (till then it hides the file after the moved one)
            fs.remove(self.live + SCRATCH)
        except OSError:
            pass
        names = self._names()
        live = self._names(self.live)
        top = 0
        self._names(self.root + "-sum")  # made if missing: the summaries' directory (summary)
        for d, ns in ((self.root, names), (self.live, live), (self.snaps, self._names(self.snaps))):
            for n in ns:
                if n.endswith(TMP) or d != self.snaps and n.endswith(SNP):  # half-made; a snapshot where an older firmware kept it
                    fs.remove(self._path(n, "", d))
                elif n.endswith(LOG) or n.endswith(FIN) or n.endswith(SYN) or n.endswith(SNP):  # a game's (its segments after 0 are not read: boot does not grow with the game)
                    top = max(top, int(n[:-4]))
        self._next = top + 1
        logs = self._logs(names + live)
        self.log = None
        if not logs:
            return None
        gid = logs[-1]
        log = self._log(gid)
        self.game_id = gid
        snap = self._read_snapshot(gid)
        if snap is None or not log.load(_u32(snap, 4), _u32(snap, 8)):
            snap = None
            log.load()
        if not len(log):  # even the start record never made it
            log.drop()
            return None
        log.repair()  # a torn last frame: keep only the intact prefix
        self.log = log
        if snap is not None:
            try:
                return Game(log, snap[12 : len(snap) - 4])
            except ValueError:  # the snapshot does not belong to this log
                pass
        log.load()
        return Game(log)

    def _logs(self, names):
        """Ids of the games in progress (one, unless a cut came at the wrong
        moment; oldest first). The segments of a game that also has its
        archive file are what archiving left after its commit point: they
        are deleted here."""
        out = []
        for n in names:
            if n.endswith(LOG):
                gid = n[:-4]
                if gid + FIN in names or gid + SYN in names:
                    self._log(gid).drop()
                else:
                    out.append(gid)
        out.sort()
        return out

    def _read_snapshot(self, gid):
        """The snapshot file of game `gid` (a view of the snapshot buffer,
        grown if the file is larger), or None if it is missing or damaged."""
        path = self._path(gid, SNP, self.snaps)
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
        return self._buffer(size, size)

    def _buffer(self, size, held=0):
        """The first `size` bytes of the snapshot buffer. One buffer for every
        snapshot, written or read: a snapshot grows a little with each event,
        so one allocated per snapshot would rarely fit the hole the previous
        one left, and those holes fragment a small heap. An outgrown buffer
        is replaced by one 64 bytes roomier than needed. `held`: how many
        of its bytes are now the game in progress's snapshot file (the one
        place that says so)."""
        self._held = held
        if len(self._buf) < size:
            self._buf = bytearray(size + 64)
        return memoryview(self._buf)[:size]

    def _snapshot(self, game):
        """Write the snapshot file of `game` (its log is the game in
        progress): magic, log offset, records covered, engine snapshot,
        crc32. Written in place, not temp + rename: one metadata commit
        instead of three, and a cut that tears it costs only boot time (its
        crc fails, boot refolds the log). It covers the log to its end. The
        log's RAM index restarts."""
        b = self._snapshot_of(game)
        log = game.log
        n = len(b) - 4
        b[:4] = SNAP_MAGIC
        _put32(b, 8, len(log))
        _put32(b, 4, log.rebase())
        _put32(b, n, _crc(b[:n]))
        self._buffer(n + 4, n + 4)
        with self.fs.open(self._path(self.game_id, SNP, self.snaps), "wb") as f:
            f.write(b)

    def flush(self):
        """Write what apply(..., later=True) left waiting: the event's frame
        (once it is on flash the event is durable), then a due snapshot of
        the game with the event in it (built here, after the ring showed
        the event: its work delays no light), then a finish(later=True),
        whose own last op is its commit (the archive's rename). The event is
        acknowledged when this returns: a cut in the snapshot's write keeps
        an event that is durable but was not yet acknowledged (the one in
        flight, docs/storage.md). A snapshot never covers a frame the flash
        does not hold. Every other Store call that touches the flash
        flushes first, and so ends a finish still spread over quiet
        spells (on CircuitPython's journal: the finish's FAT work is its
        pieces, done by quiet(), one a turn while the buttons rest)."""
        self._done()
        game = self._pgame
        self._pgame = None
        if game is not None:
            self._commit(game.log.flush)
            if self._due(game):
                self._mark(True)
                self._snapshot(game)
        if self._pfin:
            self._pfin = False
            spread = getattr(self.fs, "drain", None) is not None  # the journal on FAT; littlefs: one erase, at once (docs/storage.md)
            self._job = self._finishing(spread)
            if not spread:
                self._done()
        self._mark(False)

    def _finishing(self, spread):
        """The finish, as pieces (a generator): the snapshot's removal, the
        archive's copy one segment a piece, its summary, its rename (the
        commit point), the pruning; spread (quiet), then the finished
        game's segments, one a piece, the last first, unless something
        else needs the flash first (_done)."""
        self._mark(True)
        gid = self.game_id
        yield from self._archive()
        self._mark(True)
        self._prune()
        if spread:
            log = self._log(gid)
            k = 0
            while log._seg(k):
                k += 1
            while k:
                yield 1  # committed: what is left may wait for the next new game or boot (_done stops here)
                k -= 1
                self._mark(True)
                self.fs.remove(log.path(k, log._seg(k)))

    def _done(self):
        """The spread finish's pieces still to do, now, up to its leftover
        segments (the next new game or boot deletes those, as on littlefs)."""
        j = self._job
        if j:
            self._job = None
            for x in j:
                if x:
                    break

    def quiet(self):
        """The flash work no event should wait for, done while the buttons
        are quiet (firmware/main.py tidy; only with the board's clock):
        the full segment leaves the live directory, and once PUMP commits
        have gone to that directory since it last compacted (it does every
        ~15: littlefs's 4 KB metadata block takes 256 bytes a commit), up
        to five rewrites of a one-byte scratch file in it make it compact
        now, not in the write of the next event (docs/storage.md "Flash
        work per event"). On CircuitPython's FAT drive there is no
        littlefs to compact: the quiet work is the journal's drain onto
        FAT once it is seven eighths full (firmware/journal_cp.py), the
        segment's move and one piece of a finish (flush): True while
        pieces remain (tidy calls again next turn, unless a button has
        moved)."""
        log = self.log
        drain = getattr(self.fs, "drain", None)
        if drain is not None:
            drain(True)  # the journal onto FAT, if seven eighths full
            if log is not None and log.moving >= 0:
                log.move()  # before a piece of the finish: not under the archive's reader
            j = self._job
            if j:
                self._job = None  # while it runs (its pruning lists the archive)
                try:
                    next(j)
                    self._job = j
                except StopIteration:
                    j = None
                drain()  # that piece's own entries (the first piece's: the game's too)
            self._mark(False)
            return j is not None
        if log is not None and log.live and self.clock:
            if log.moving >= 0:
                self._commit(log.move)
            for _ in range(5):
                if self._commits >= PUMP:
                    self._commit(self._scratch)
            self._mark(False)

    def _commit(self, write):
        """Run `write`, a commit to the live directory, and count it; one
        that stalled for _STALL_MS erased a block: the directory compacted."""
        clock = self.clock
        t = clock and clock()
        self._mark(True)
        write()
        self._commits += 1
        if clock and (clock() - t) & _TICKS_MASK >= _STALL_MS:
            self._commits = 0

    def _mark(self, on):
        """Tell the buttons (`mark`) that a piece of flash work begins now
        (on) or that the flash work is over: a press the chip latched in a
        stall is dated from the start of the piece that hid it, so the
        pieces are each one write or one rename, never a whole game's end
        at once (firmware/buttons.py, "Presses during flash work")."""
        m = self.mark
        if m is not None and self.clock:
            m.busy = self.clock() if on else -1

    def _scratch(self):
        with self.fs.open(self.live + SCRATCH, "wb") as f:
            f.write(b"1")

    def _snapshot_of(self, game):
        """Game.snapshot with room for the file's header and checksum, in
        the snapshot buffer (see _buffer)."""
        self._buffer(0)  # overwritten: no longer the file's
        b = game.snapshot(12, 4, self._buf)
        if type(b) is not memoryview:  # it did not fit
            m = self._buffer(len(b))
            m[:] = b
            b = m
        return b

    def _due(self, game):
        """True if `game` is the game in progress and snapshot_every frames
        have gone since its snapshot."""
        log = game.log  # type: FlashLog
        return log is self.log and log.since >= self.snapshot_every

    def new_game(self, start_record, later=False):
        """Start a new game (a game still in progress is archived first);
        `later` as for apply."""
        if self._next is None:
            self.boot()
        self.flush()
        n = self._next or 1
        gid = "%04d" % n
        log = self._log(gid)  # no file until its first frame
        game = Game(log)
        game.judge(start_record)  # judged once, first: EngineError, nothing written or archived
        for _ in self._archive():
            pass
        self._logs(self._names() + self._names(self.live))  # an archived game's segments go (wherever they are) before the new game's first frame
        self._buffer(0)  # the buffer holds the archived game's snapshot, if any
        self._next = n + 1
        self.log = log
        self.game_id = gid
        log.append(start_record)
        self._pgame = game
        if not later:
            self.flush()
        return game

    def apply(self, game, rec, later=False):
        """Judge `rec` and make it durable; returns once it is on flash, or
        with `later` once it is judged and queued: then flush() writes it
        (the app shows the event first). EngineError: refused, nothing
        written, nothing queued."""
        if rec[0] == _OP_UNDO:
            return self.undo(game)
        self.flush()  # the event before, if it waits: at most one in flight
        game.judge(rec)  # EngineError: nothing written, nothing changed
        game.log.append(rec)
        self._pgame = game
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
            self._snapshot(game)
        log = game.log  # type: FlashLog
        if log is self.log and log.base and log.tail:  # a snapshot, and a record after it
            # the file's bytes are still in the buffer unless a refused
            # record's snapshot overwrote them: then read the file back
            snap = memoryview(self._buf)[: self._held] if self._held else self._read_snapshot(self.game_id)
            if snap is not None:
                log.pop()
                game.table = Game(log, snap[12 : len(snap) - 4]).table
                return
        game.undo()

    def finish(self, later=False):
        """Archive the game in progress (it may still get records, e.g. a
        late portfolio; they go to the archived file). `later` as for
        apply: queued, written by flush() after the frame before it (the
        app shows setup first); until then the flash holds the game in
        progress."""
        self._pfin = True
        if not later:
            self.flush()
            self._done()  # spread or not: archived when this returns

    def _archive(self):
        """A generator (pieces: FlashLog.archive). The game in progress, if any, into one .fin file, written whole
        (FlashLog.archive), so that the directory's metadata holds no
        finished game's segments. The snapshot goes first (a cut between
        the two only costs one full refold at boot)."""
        log = self.log
        if log is None:
            return
        try:
            self.fs.remove(self._path(self.game_id, SNP, self.snaps))
        except OSError:  # no snapshot yet
            pass
        yield
        yield from log.archive(FIN, self._path(self.game_id, "", self.root + "-sum"))
        self.log = None

    def archived(self):
        """Finished games, oldest first: [(game_id, synced)]."""
        self._done()  # a spread finish: that game is one of them
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
                self._remove(gid, SYN)
                extra -= 1

    def _remove(self, gid, ext):
        """Delete an archived game: first the segments its finish left (if
        they outlived the archive file, boot would take them for a game in
        progress), then the file."""
        self._log(gid).drop()
        try:
            self.fs.remove(self._path(gid, "", self.root + "-sum"))  # first: a cut leaves an archive without its summary (read whole), never the reverse
        except OSError:
            pass
        self.fs.remove(self._path(gid, ext))

    def _find(self, gid):
        self.flush()  # a frame waiting for a game's file goes there before it is read or renamed
        for ext in (FIN, SYN):  # the archive file, not the segments a finish left
            p = self._path(gid, ext)
            if _exists(self.fs, p):
                return p
        log = self._log(gid)  # the game in progress: its first segment, in either directory
        s = log._seg(0)
        return s and log.path(0, s)

    def window(self, game_id, start, room):
        """An archived game's (count of records, prefix crc of the first
        min(start, count), [the records from `start` on that fit `room`
        bytes as the link sends them, a length byte each: one at least, and
        at most one that does not fit]), through the summary its archiving
        wrote (FlashLog.archive) in /bk-sum (not in the root: its every
        lookup would grow): "nothing new" reads no frame, and a fetch reads
        the frames from the index point at or before `start` (at most 15
        before it, their crc chained from the index's) to the last it takes.
        So a sync's requests cost the board the same whatever the games
        kept and their length (bench/bench_board_sync.py). The index is
        used only when it is the one written for this archive: the summary's
        size is the archive's, its length its count's, and its crc32 holds;
        each frame checks its own crc. None where there is no summary, or it
        is an older firmware's (12 bytes: no index, "nothing new" only),
        damaged or cut, or not this file's (a late record grew the archive;
        the game in progress), or a damaged frame comes before the last one
        asked: then the records are read whole (records)."""
        p = self._find(game_id)
        b = p and p[-4:] != LOG and _read_file(self.fs, self._path(game_id, "", self.root + "-sum"))  # only an archived game has one (erase removes it)
        if not b or len(b) < 12 or _u32(b, 0) != self.fs.stat(p)[6]:  # (the archive's size, its count, their crc, the index; written whole: temp + rename)
            return None
        count = _u32(b, 4)
        n = len(b) - 4
        if n > 8 and (n != 12 + 8 * ((count + _EVERY - 1) // _EVERY) or _crc(b[:n]) != _u32(b, n)):
            return None  # a damaged or short summary: the archive is walked
        if start >= count:
            return count, _u32(b, 8), ()
        if n == 8:
            return None  # an older firmware's: no index
        k = 12 + 8 * (start // _EVERY)  # the index point at or before start
        i = start // _EVERY * _EVERY
        c = _u32(b, k + 4)
        log = self._log(game_id, p[-4:])
        buf = memoryview(log.buf)
        out = []
        w = log._walk(_u32(b, k))
        for _, m in w:
            if i == start:
                pc = c
            if i >= start:
                out.append(bytes(buf[1 : m + 1]))
                room -= m + 1
                if room < 2 or i + 1 == count:  # no room for another (a length byte and a byte), or no other
                    w.close()
                    return count, pc, out
            c = binascii.crc32(buf[: m + 1], c)
            i += 1
        return None  # a damaged frame before the last one asked: the archive is walked

    def records(self, game_id):
        """Effective records (bytes) of any stored game; KeyError if unknown."""
        p = self._find(game_id)
        if p is None:
            raise KeyError(game_id)
        log = self._log(game_id, p[-4:])
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
            if _exists(self.fs, self._path(game_id, ext)):
                self._remove(game_id, ext)
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

"""CircuitPython's flash: each event's write lands in a journal in
`microcontroller.nvm` (programmed, never erased, while the buttons move),
and the FAT drive gets it in one drain, most often at the game's finish.

Why: on CircuitPython the Store's files live on the CIRCUITPY FAT drive,
and CircuitPython writes that drive through one 4 KB cache sector that it
erases and reprograms whole, interrupts off, whenever a write moves to
another sector or anything is read (ports/raspberrypi/supervisor/
internal_flash.c). An append touches the file's
data and its directory entry (its size), sometimes the FAT: two or three
45 ms erases per event, more for a snapshot, with the loop stopped. The
RP2040's `microcontroller.nvm` is a 4 KB sector of its own, and
CircuitPython programs bytes there without erasing when they are still
erased (0xFF) (ports/raspberrypi/common-hal/nvm/ByteArray.c: `write_page`
when every target byte is 0xFF, else `erase_and_write_sector`). So an
event appended to the journal costs one or two page programs (0.4 ms
typical, 3 ms at the datasheet's maximum), and it is on flash when the
write returns: durable as soon as it was on FAT before.

`JournalFS` wraps the os-like FAT filesystem the Store is given
(firmware/storage.py): an append (`open(path, "ab")`) and a whole-file
write (`open(path, "wb")` and one write: the snapshot, settings) become
journal entries. A call that renames or removes a file the journal holds
bytes of first `drain()`s the journal (replays its entries on FAT, then
erases it: one erase); a read of one goes through the journal
(firmware/journal_read_cp.py), `stat` answers with the journaled length,
`listdir` with the files the journal made too; every other call goes to
FAT as it is (no entry names its file, so the order of the two cannot
matter). The Store calls `drain(True)` in each quiet spell (Store.quiet,
firmware/main.py tidy), which drains only a journal seven eighths full: a drain costs FAT a few sector erases however
few entries it holds, so the fewer the better. A whole 5-player game
fits with room to spare (2.2 KB of Stalk Exchange, 3.1 KB of Oh My.
Orchids!: a game's log is one file, FlashLog.seg, and the Store snapshots
every `snapshot_every` frames), so its FAT work is one drain, at its
finish (whose first piece removes the snapshot); a journal too full for
an entry drains first, inside that event's write.

An entry: kind (4 append, 5 whole file), the path's number, data length
(2 bytes), the file offset it was written at (3 bytes), the data, crc32 of
all that: 11 bytes around an event's frame of 6 to 10. A path is numbered
by an entry of its own (kind 3, its bytes as data) before its first entry,
so that a whole 5-player game fits nvm's 4 KB (it took 4.5 to 5.8 KB
with each entry naming its path; docs/storage.md). Entries of the first
layout (kind 1 or 2, the path's bytes in each) are still read: a bundle
copied over a journal that still held some.

A power cut in a program leaves a torn entry: its crc fails, and it and everything after it are not the journal (the write had
not returned: the event was not acknowledged). Replaying is idempotent, so
a cut during a drain only replays again at the next boot: an append whose
bytes FAT already holds (read back and compared) is skipped, one that
landed in part is written again from its offset, a whole file is written
again. The journal is erased only after FAT holds every entry.
Boot (`JournalFS()`) drains what a cut left.

Durability window: an event is durable when its journal entry is
programmed (the Store's flush returns), as before; FAT holds it after the
next drain (the finish, a sync, a full journal, the next boot). What FAT itself risks in a cut (an erase of a sector
holding directory entries, cut before its program) is the FAT drive's,
journal or not: docs/storage.md.
"""

import binascii

from engine_lite import const

_APPEND = const(1)  # what _entries() gives for an append (kind 4; 1 in the first layout)
_WHOLE = const(2)  # and for a whole file (5; 2)
FULL = const(7)  # eighths of nvm the journal fills before a quiet spell drains it (JournalFS.drain): a 5-player game takes 4.5-6.1 of them; the last eighth (512 B, ~25 events) is room for play with no rest
_NAME = const(3)  # numbers a path: the next number, the path's bytes as data
_HEAD1 = const(8)  # the first layout's: kind, path length, data length (2 B LE), offset (4 B LE), then the path
_HEAD = const(7)  # kind, path number, data length (2 B LE), offset (3 B LE)


def _u16(b, i):
    return b[i] | b[i + 1] << 8


class _Append:
    """A file opened "ab" through the journal: each write() one entry."""

    def __init__(self, j, path):
        self.j = j
        self.path = path

    def write(self, b):
        return self.j.append(self.path, b)

    def close(self):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        pass


class _Whole(_Append):
    """A file opened "wb" through the journal: its first write() is the whole
    file (one entry), each one after it an append (the archive's copy, frame
    by frame: the drain writes them in one write, _Run)."""

    def __init__(self, j, path):
        _Append.__init__(self, j, path)
        self.n = 0

    def write(self, b):
        self.n += 1
        if self.n == 1:
            return self.j.whole(self.path, b)
        return _Append.write(self, b)

    def close(self):
        if not self.n:  # an empty file
            self.write(b"")

    def __exit__(self, *exc):
        if exc[0] is None:
            self.close()


class _Run:
    """A run of appends that continue one another in one file (or a whole
    write and the appends after it), written to FAT at its end in one
    write(): FAT then allocates the file's clusters
    with fewer reads of its table, and on CircuitPython each read writes
    the cache sector back (an erase). 2.1 KB of frames cost 12 erases
    written frame by frame, 5 in one write (bench/bench_fat_cp.py: the
    drive modeled on the Unix port's VfsFat)."""

    def __init__(self, fs, path, mode):
        self.fs = fs
        self.path = path
        self.mode = mode  # "ab", or "wb": a whole write, and the appends after it
        self.data = bytearray()

    def close(self):
        with self.fs.open(self.path, self.mode) as f:
            f.write(self.data)


class JournalFS:
    """The Store's filesystem on CircuitPython: `fs` (os-like: open,
    listdir, stat, mkdir, remove, rename) behind a journal in `nvm` (a
    bytearray-like of flash: `nvm[a:b]` reads, `nvm[a:b] = data` programs;
    microcontroller.nvm). Construction drains what a cut left."""

    snapshot_every = 32  # the Store's, on the journal: a whole 5-player game's entries fit nvm's 4 KB (16: Oh My. Orchids! took 3.8 KB)

    def __init__(self, fs, nvm):
        self.fs = fs
        self.nvm = nvm
        self.size = len(nvm)
        self.sizes = {}  # path -> its length with its journaled bytes (paths the journal appended to)
        self.buf = bytearray(_HEAD + 260 + 4)  # one event's entry (a frame), or a path's
        self.ids = {}  # path -> its number in the journal (_NAME entries)
        self.end = 0  # the journal's first free byte
        self.next = 0  # where the entry after the one _entries() just gave begins
        self.dirty = True  # unknown until read: bytes past `end` may not be erased (a torn entry)
        try:
            self.drain()
        except OSError:  # a drive the computer owns (MENU held at reset): the entries wait for a boot that owns it
            self._entries_end()

    # -- the journal -------------------------------------------------

    def _entries(self):
        """(kind, path, offset, data) of each intact entry, in order; sets
        `end` and `dirty`, and once read to the end, `ids`."""
        nvm = self.nvm
        names = []
        pos = 0
        while pos + _HEAD1 + 4 <= self.size:
            h = nvm[pos : pos + _HEAD1]
            k = h[0]
            if k == 0xFF:
                break
            if k < _NAME:  # the first layout: the path in the entry
                at = _HEAD1 + h[1]
                off = _u16(h, 4) | _u16(h, 6) << 16
            else:
                at = _HEAD
                off = _u16(h, 4) | h[6] << 16
            n = at + _u16(h, 2)
            if pos + n + 4 > self.size or k > _NAME and h[1] >= len(names):
                break
            e = nvm[pos : pos + n + 4]
            if binascii.crc32(e[:n]) & 0xFFFFFFFF != e[n] | e[n + 1] << 8 | e[n + 2] << 16 | e[n + 3] << 24:
                break
            pos += n + 4
            self.next = pos
            if k == _NAME:
                names.append(str(bytes(e[at:n]), "utf-8"))
            elif k < _NAME:
                yield k, str(bytes(e[_HEAD1:at]), "utf-8"), off, e[at:n]
            else:
                yield k - _NAME, names[h[1]], off, e[at:n]
        if self.dirty:  # at boot: anything a torn entry left past the end must be erased before the next entry
            self.dirty = pos < self.size and nvm[pos : self.size] != b"\xff" * (self.size - pos)
        self.end = pos
        self.ids = {p: i for i, p in enumerate(names)}

    def _entries_end(self):
        """Find the journal's end without replaying it."""
        for _ in self._entries():
            pass

    def _put(self, kind, path, off, data, buf=None):
        """Program one entry at the end, after its path's number if the
        journal has none yet (draining first if they do not fit); False if
        it can never fit (then the caller writes FAT itself)."""
        p = path.encode()
        n = _HEAD + len(data) + 4
        name = _HEAD + len(p) + 4
        if n + name > self.size or off >> 24:
            return False
        i = self.ids.get(path)
        if self.dirty or self.end + n + (0 if i is not None else name) > self.size or i is None and len(self.ids) > 255:
            self.drain()
            i = self.ids.get(path)
        if i is None:
            i = len(self.ids)
            self._program(_NAME, i, 0, p, self.buf)
            self.ids[path] = i
        self._program(kind + _NAME, i, off, data, buf)
        return True

    def _program(self, kind, i, off, data, buf):
        """One entry, in one program of nvm at the journal's end."""
        n = _HEAD + len(data)
        if buf is None or len(buf) < n + 4:
            buf = bytearray(n + 4)
        b = buf
        b[0] = kind
        b[1] = i
        b[2] = len(data) & 255
        b[3] = len(data) >> 8
        for k in range(3):
            b[4 + k] = off >> 8 * k & 255
        b[_HEAD:n] = data
        c = binascii.crc32(memoryview(b)[:n]) & 0xFFFFFFFF
        for k in range(4):
            b[n + k] = c >> 8 * k & 255
        self.nvm[self.end : self.end + n + 4] = memoryview(b)[: n + 4]
        self.end += n + 4

    def append(self, path, data):
        off = self.sizes.get(path)
        if off is None:
            try:
                off = self.fs.stat(path)[6]
            except OSError:  # a new file: its first frame
                off = 0
        if not self._put(_APPEND, path, off, data, self.buf):
            self.drain()
            with self.fs.open(path, "ab") as f:
                f.write(data)
        self.sizes[path] = off + len(data)
        return len(data)

    def whole(self, path, data):
        if not self._put(_WHOLE, path, 0, data):
            self.drain()
            with self.fs.open(path, "wb") as f:
                f.write(data)
        self.sizes[path] = len(data)
        return len(data)

    def drain(self, quiet=False, gone=None):
        """Replay the journal on FAT, then erase it (the part written: one
        erase of nvm's sector). A file at a time, in the order they first
        appear (no entry names another file, so their order across files
        cannot matter), each file's entries in order: its appends that
        continue one another in one write (_Run), a file written whole
        more than once (the snapshot) once, its last, with the appends
        after it; `gone`, a file about to be removed, not at all if the
        journal wrote it whole (the snapshot). `quiet`
        (the loop's quiet spells, Store.quiet): only once the journal is
        seven eighths full (FULL). Why so late: the entries are durable
        already, and a drain costs a few erases however few entries it
        holds (the file's data, the FAT, the directory entry, nvm), 45 ms
        each, 400 ms at the datasheet's maximum, which a press made
        meanwhile waits for. So the FAT work of a whole game is one
        drain, most often at its finish, and a journal that fills up
        without a rest drains inside the event that finds it full. The
        journal is erased only once FAT has every entry: a cut in a drain
        replays them all again at boot."""
        if not (self.end or self.dirty) or quiet and self.end < FULL * self.size // 8:
            return
        fs = self.fs
        paths = []  # each file once, in the order they first appear
        last = {}  # path -> where its last whole write begins: its entries before that are replaced by it, never replayed
        begin = 0  # where the entry at hand begins (after the one before: a path's number may lie between)
        for kind, path, off, data in self._entries():
            if path not in paths:
                paths.append(path)
            if kind == _WHOLE:
                last[path] = begin
            begin = self.next
        if gone in last:  # written whole here: removed, it needs no FAT copy first
            paths.remove(gone)
        for p in paths:
            f = None  # the run of appends at hand (_Run: one open, one write)
            at = 0  # where that run has got to
            begin = 0
            for kind, path, off, data in self._entries():
                b, begin = begin, self.next
                if path != p or b < last.get(p, 0):  # another file's, or replaced by a whole write after it
                    continue
                if f is not None and (kind != _APPEND or off != at):
                    f.close()
                    f = None
                if kind == _WHOLE:  # the appends after it (the archive's copy) join it
                    f = _Run(fs, p, "wb")
                elif f is None and not self._landed(p, off, data):
                    f = _Run(fs, p, "ab")
                if f is not None:
                    f.data += data
                    at = off + len(data)
            if f is not None:
                f.close()
        n = self.size if self.dirty else self.end
        if n:
            self.nvm[0:n] = b"\xff" * n
        self.end = 0
        self.dirty = False
        self.sizes = {}
        self.ids = {}

    def _landed(self, path, off, data):
        """True if FAT holds this append already (a drain a cut stopped);
        one that landed in part is written again from its offset here.
        False: it goes at the file's end."""
        fs = self.fs
        try:
            have = fs.stat(path)[6]
        except OSError:
            have = 0
        if have <= off:
            return False
        with fs.open(path, "rb") as f:
            f.seek(off)
            if f.read(len(data)) == data:
                return True
        with fs.open(path, "r+b") as f:  # write it again from its offset
            f.seek(off)
            f.write(data)
        return True

    # -- the os-like API the Store uses ---------------------------------

    def open(self, path, mode="r"):
        if mode == "ab":
            return _Append(self, path)
        if mode == "wb":
            return _Whole(self, path)
        if path in self.sizes:  # its newest bytes are in the journal
            if mode == "rb":  # read through it, no drain (an undo reads the log back)
                from firmware.journal_read_cp import JournalReader

                return JournalReader(self, path)
            self.drain()
        return self.fs.open(path, mode)

    def listdir(self, path):
        """FAT's names, and those of the files in `path` the journal made
        that FAT does not have yet: no drain (a new game lists the games'
        directory, which holds the settings the same press saved)."""
        names = self.fs.listdir(path)
        for p in self.sizes:
            i = p.rfind("/")
            if p[:i] == path and p[i + 1 :] not in names:
                names.append(p[i + 1 :])
        return names

    def stat(self, path):
        n = self.sizes.get(path)
        if n is None:
            return self.fs.stat(path)
        return (0x8000, 0, 0, 0, 0, 0, n, 0, 0, 0)  # a file with journaled bytes: its length with them

    def mkdir(self, path):
        self.fs.mkdir(path)

    def remove(self, path):
        """Drains the journal first, but for a file it wrote whole (the
        snapshot, at the finish): a cut before the removal leaves FAT's
        older copy of it, or none, which the Store takes as it takes a
        stale snapshot. A file the journal alone held is gone then."""
        if path not in self.sizes:
            return self.fs.remove(path)
        self.drain(gone=path)
        try:
            self.fs.remove(path)
        except OSError:  # it was on no FAT sector yet
            pass

    def rename(self, old, new):
        if old in self.sizes or new in self.sizes:
            self.drain()
        self.fs.rename(old, new)

"""An in-memory, os-like filesystem with power-cut fault injection.

Why: the board's storage must survive a power cut at any instant, and the
only way to prove that is to cut power at every instant in a test. MemFS
offers the subset of MicroPython's `os` + `open` that firmware/storage.py
uses (open/listdir/stat/remove/rename/mkdir) and runs unchanged in CPython
and inside a real MicroPython (where the guest cannot write real files).

Fault model: every call that changes the flash is one numbered "op":
open for writing ('w' truncates/creates, 'a' creates), each `write()`,
`rename`, `remove`, `mkdir`. With `cut_at=N` the N-th op (1-based) is where
power dies: a write keeps only its first `torn` bytes (a torn write; None =
half of it), an open-for-write leaves the file created/truncated, a rename or
remove does not happen. With `junk=0xFF` (say) the rest of a torn write
is not missing but filled with that byte, as raw NOR flash can leave it
(erased cells), so only a checksum can tell. The op raises PowerCut and
every later call raises PowerCut too. `survivor()` is the flash as the
next boot sees it.
Renames are atomic (as on littlefs, the Pico's filesystem).

Flash stalls (optional, `stall=fn(ms)`): on the Pico an erase or a program
stops the whole chip (code runs from the flash being written), so a
simulated board must lose that time too. With `stall` given, every change
costs simulated time, at the W25Q16JV's typical datasheet figures: a page
program 0.4 ms per 256-byte page a write touches (a rename, remove or
mkdir: one metadata page), and a sector erase 45 ms whenever a file's data
grows into a new 4 KB block (its first bytes included: a new file, or a
snapshot's temp file). `fn` gets whole milliseconds (SimHW.advance: the
clock jumps, as the chip's would); `stalled_us` and `erases` add up.
This is a model of the chip's waiting, not of littlefs's own work.
"""

PAGE_US = 400  # W25Q16JV typical page program (256 B)
ERASE_US = 45000  # W25Q16JV typical 4 KB sector erase
BLOCK = 4096
PAGE = 256


class PowerCut(Exception):
    """Raised at the cut op and by every call after it. Deliberately not an
    OSError, so code that handles ordinary flash errors cannot swallow it."""


def _err(code):
    return OSError(code)  # MicroPython style: OSError(errno.ENOENT) etc.


ENOENT = 2
EEXIST = 17
EISDIR = 21


class MemFile:
    def __init__(self, fs, path, data, mode):
        self.fs = fs
        self.path = path
        self.data = data  # the bytearray stored in fs.files (shared)
        self.mode = mode
        self.pos = len(data) if "a" in mode else 0
        self.closed = False

    def read(self, n=-1):
        self.fs._alive()
        d = self.data
        end = len(d) if n is None or n < 0 else min(len(d), self.pos + n)
        out = bytes(d[self.pos : end])
        self.fs.bytes_read += end - self.pos
        self.pos = end
        return out

    def readinto(self, buf):
        self.fs._alive()
        n = min(len(buf), len(self.data) - self.pos)
        if n < 0:
            n = 0
        buf[:n] = self.data[self.pos : self.pos + n]
        self.pos += n
        self.fs.bytes_read += n
        return n

    def write(self, b):
        if "r" in self.mode and "+" not in self.mode:
            raise _err(9)  # EBADF
        cut, keep = self.fs._op("write", self.path, len(b))
        n = len(b)
        if cut:
            n = keep(n)
        if "a" in self.mode:
            self.pos = len(self.data)
        d = self.data
        if self.fs.stall is not None:
            end = self.pos + n
            blocks = max(0, (end + BLOCK - 1) // BLOCK - (len(d) + BLOCK - 1) // BLOCK)
            self.fs.erases += blocks
            self.fs._wait(blocks * ERASE_US + PAGE_US * max(1, (n + PAGE - 1) // PAGE))
        d[self.pos : self.pos + n] = b[:n]
        self.pos += n
        if cut:
            if self.fs.junk is not None:
                k = len(b) - n
                d[self.pos : self.pos + k] = bytes((self.fs.junk,)) * k
            raise PowerCut()
        return n

    def seek(self, off, whence=0):
        self.fs._alive()
        if whence == 1:
            off += self.pos
        elif whence == 2:
            off += len(self.data)
        self.pos = off
        return off

    def tell(self):
        return self.pos

    def flush(self):
        self.fs._alive()

    def close(self):
        self.closed = True

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class MemFS:
    """Flash in RAM. `files`: path -> bytearray; `dirs`: set of paths."""

    File = MemFile  # the file class `open` makes (tests may extend it)

    def __init__(self, cut_at=None, torn=None, trace=False, junk=None, stall=None):
        self.files = {}
        self.stall = stall
        self.stalled_us = 0
        self.erases = 0
        self._owed_us = 0  # stalled time not yet handed to `stall` (under a millisecond)
        self.junk = junk
        self.trace = [] if trace else None  # type: list | None  # (op, path, bytes) per op
        self.bytes_read = 0
        self.dirs = {"/": 1}
        self.ops = 0  # flash-changing calls so far (see module doc)
        self.cut_at = cut_at
        self.torn = torn
        self.dead = False

    # -- fault injection ----------------------------------------------

    def _alive(self):
        if self.dead:
            raise PowerCut()

    def _op(self, what, path, n=0):
        """Count one op; return (cut_here, keep) where keep(n) is how many
        bytes of an n-byte write survive."""
        self._alive()
        self.ops += 1
        if self.trace is not None:
            self.trace.append((what, path, n))
        if self.cut_at is not None and self.ops == self.cut_at:
            self.dead = True
            return True, self._keep
        return False, None

    def _commit(self, what, path):
        """One metadata op (mkdir, remove, rename): counted, a page's
        program of stall, and the power cut if it falls here (the op does
        not happen)."""
        cut, _ = self._op(what, path)
        if self.stall is not None:
            self._wait(PAGE_US)
        if cut:
            raise PowerCut()

    def _wait(self, us):
        """The chip stalls `us` microseconds (see the module doc)."""
        self.stalled_us += us
        us += self._owed_us
        self._owed_us = us % 1000
        if us >= 1000:
            self.stall(us // 1000)

    def _keep(self, n):
        if self.torn is None:
            return n // 2
        return self.torn if self.torn < n else n - 1 if n else 0

    def survivor(self, cut_at=None, torn=None, junk=None):
        """A fresh, powered MemFS holding exactly what survived on flash
        (optionally armed to cut again: recovery must survive cuts too)."""
        fs = MemFS(cut_at, torn, junk=junk)
        for p in self.files:
            fs.files[p] = bytearray(self.files[p])
        for p in self.dirs:
            fs.dirs[p] = 1
        return fs

    # -- os-like API ----------------------------------------------------

    def _parent(self, path):
        i = path.rfind("/")
        return "/" if i <= 0 else path[:i]

    def open(self, path, mode="r"):
        self._alive()
        if path in self.dirs:
            raise _err(EISDIR)
        if "w" in mode or "a" in mode:
            if self._parent(path) not in self.dirs:
                raise _err(ENOENT)
            cut, _ = self._op("open-" + mode, path)
            if "w" in mode or path not in self.files:
                if path in self.files:
                    self.files[path][:] = b""
                else:
                    self.files[path] = bytearray()
            if cut:
                raise PowerCut()
        elif path not in self.files:
            raise _err(ENOENT)
        return self.File(self, path, self.files[path], mode)

    def listdir(self, path="/"):
        self._alive()
        path = path.rstrip("/") or "/"
        if path not in self.dirs:
            raise _err(ENOENT)
        pre = "/" if path == "/" else path + "/"
        out = []
        for p in list(self.files) + list(self.dirs):
            if p != path and p.startswith(pre) and "/" not in p[len(pre) :]:
                out.append(p[len(pre) :])
        return sorted(out)

    def stat(self, path):
        self._alive()
        if path in self.dirs:
            return (0x4000, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        if path not in self.files:
            raise _err(ENOENT)
        return (0x8000, 0, 0, 0, 0, 0, len(self.files[path]), 0, 0, 0)

    def mkdir(self, path):
        self._alive()
        if path in self.dirs or path in self.files:
            raise _err(EEXIST)
        if self._parent(path) not in self.dirs:
            raise _err(ENOENT)
        self._commit("mkdir", path)
        self.dirs[path] = 1

    def remove(self, path):
        self._alive()
        if path not in self.files:
            raise _err(ENOENT)
        self._commit("remove", path)
        del self.files[path]

    def rename(self, old, new):
        """Atomic; replaces an existing `new` (littlefs semantics)."""
        self._alive()
        if old not in self.files:
            raise _err(ENOENT)
        self._commit("rename", old + " " + new)
        self.files[new] = self.files.pop(old)

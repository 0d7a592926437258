"""The simulated board's flash directory (`bloomkeeper sim --state-dir`).

The flash is laid out inside it as on a board's: the store's root `bk/`
(finished games, settings) and, beside it, the game in progress's
`bk-live/`, its snapshot's `bk-snap/` and the finished games' summaries'
`bk-sum/` (firmware/storage.py names them after the root). Everything is inside the directory, so deleting it gives
a fresh board: no game in progress is left beside it to resume under a
new board id. A directory of the older layout (the games in the directory
itself, the live and snapshot directories as its siblings `D-live`,
`D-snap`) is moved into this one on first start (`migrate`), its game in
progress with it.

Two more things live there, under names firmware/storage.py never uses:

* `sim.lock`: one simulator per flash. A second `bloomkeeper sim` on a
  directory in use would append to the same game log from two processes
  and corrupt it, so `claim` takes an exclusive `fcntl.flock` on this file
  and keeps it open. The kernel drops the lock when the process ends, even
  when it is killed, so a crash never leaves a stale lock behind.
* `board-id`: the simulated board's unique id (what a Pico reads from its
  flash chip), drawn at random once when the directory is first used and
  kept there. Delete the directory and you get a new board, as the README
  says; the host then keeps its plays apart from the old board's.
"""

import os
import secrets

from host.errors import UserError

LOCK = "sim.lock"
ID_FILE = "board-id"
ROOT = "bk"  # the store's root in the directory, as /bk on a board (bk-live, bk-snap beside it)
_OWN = (LOCK, ID_FILE, ID_FILE + ".new")

_held = {}  # realpath -> open lock file (one per directory per process)


def take(path):
    """Make `path` a simulated board's flash, held by this process; its board
    id. One line (UserError) when it is not a usable directory or is in use."""
    if os.path.lexists(path) and not os.path.isdir(path):
        raise UserError("state directory %s is not a directory" % path)
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as err:
        raise UserError("cannot use state directory %s: %s" % (path, err.strerror or err))
    claim(path)
    try:
        migrate(path)
    except OSError as err:
        raise UserError("cannot move the simulated flash %s into its new layout: %s" % (path, err.strerror or err))
    return board_id(path)


def flash_root(path):
    """The store's root (firmware/storage.py Store(root=...)) in the flash directory `path`."""
    return os.path.join(path, ROOT)


def migrate(path):
    """Move a flash directory of the older layout into this one (held by
    this process: `claim` first). Each step is a rename, and a start cut
    half-way finishes the move at the next start: the siblings first, then
    the root's files, gathered in `bk.move` and renamed to `bk` last. A
    directory with neither a board id nor a file of the store (new, or
    deleted and made again) is a fresh board: siblings `D-live`/`D-snap`
    left by the older layout are not taken into it."""
    root = flash_root(path)
    if os.path.isdir(root):
        return
    staging = root + ".move"
    mine = [n for n in os.listdir(path) if n not in (LOCK, ID_FILE + ".new")]
    if mine:  # a board's flash of the older layout (or a move cut half-way)
        base = path.rstrip("/" + os.sep) or path
        for suffix in ("-live", "-snap"):
            new = root + suffix
            for old in (base + suffix, os.path.join(path, suffix)):  # `D/` made the older store's `D/-live`
                if not os.path.exists(new) and _older_flash(old):
                    os.rename(old, new)
        os.makedirs(staging, exist_ok=True)
        for n in os.listdir(path):
            if n not in _OWN and n not in (ROOT + ".move", ROOT + "-live", ROOT + "-snap", ROOT + "-sum"):  # the store's files
                os.rename(os.path.join(path, n), os.path.join(staging, n))
        os.rename(staging, root)
    else:
        os.makedirs(root, exist_ok=True)


def _older_flash(path):
    """A live or snapshot directory of the older layout: a directory of game
    files only (not another simulator's flash directory, which has its id)."""
    if os.path.islink(path) or not os.path.isdir(path):
        return False
    names = os.listdir(path)
    return not any(n in _OWN or os.path.isdir(os.path.join(path, n)) for n in names)


def claim(path):
    """Hold `path` for this process (UserError naming it if another has it)."""
    real = os.path.realpath(path)
    if real in _held:
        return
    try:
        import fcntl
    except ImportError:  # Windows: no flock; the simulator runs unlocked
        return
    try:
        f = open(os.path.join(path, LOCK), "a")
    except OSError as err:
        raise UserError("cannot use state directory %s: %s" % (path, err.strerror or err))
    try:
        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        f.close()
        raise UserError("state directory %s is in use by another bloomkeeper sim (one simulator per flash)" % path)
    _held[real] = f


def release(path):
    f = _held.pop(os.path.realpath(path), None)
    if f is not None:
        f.close()


def board_id(path):
    """The board id kept in `path` (made once, at random)."""
    p = os.path.join(path, ID_FILE)
    try:
        with open(p) as f:
            v = f.read().strip()
        if v and len(v) <= 64 and v.isascii() and v.isalnum():
            return v
    except FileNotFoundError:
        pass
    except OSError as err:
        raise UserError("cannot read the board id %s: %s" % (p, err.strerror or err))
    v = new_id()
    with open(p + ".new", "w") as f:  # not .tmp: the board's boot deletes those
        f.write(v + "\n")
    os.replace(p + ".new", p)
    return v


def new_id():
    return "sim" + secrets.token_hex(6)

"""The simulated board's flash directory (`bloomkeeper sim --state-dir`).

Two things live beside the games there, under names firmware/storage.py
never uses:

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
    return board_id(path)


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

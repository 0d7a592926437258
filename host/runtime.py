"""Files a running bloomkeeper leaves for the others, in the user's runtime
directory (platformdirs.user_runtime_dir: `$XDG_RUNTIME_DIR/bloomkeeper` on
Linux, private to the user and emptied at logout).

Two kinds, each naming the process that made it so that a file left by a
process that died is recognised as stale and removed:
- `sim-<pid>.json`: a running simulator's pseudo-terminal and board id
  (`--port auto` finds it, host/sync/link.py, and uses it only once the
  process is proven to be that simulator and the pty's hello gives that id);
- `relay-<hash of the port>.sock`: the Unix socket of the process that holds
  a board's port (`serve`, `follow`), through which `names` reaches the board
  (host/sync/relay.py), with `relay-<hash>.sock.pid` naming its owner.
"""

import json
import os
import warnings

from host.errors import UserError
from host.io_util import read_bytes


def runtime_dir():
    """The directory (made, 0700, if missing); UserError (one line) when it
    cannot be (a file where it should be, no permission)."""
    import platformdirs

    with warnings.catch_warnings():  # no XDG_RUNTIME_DIR: platformdirs warns and uses /tmp/runtime-UID
        warnings.simplefilter("ignore")
        d = platformdirs.user_runtime_dir("bloomkeeper", appauthor=False)
    try:
        os.makedirs(d, mode=0o700, exist_ok=True)
        if not os.path.isdir(d):
            raise NotADirectoryError(20, "not a directory")
    except OSError as err:
        raise UserError("the runtime directory %s cannot be used (%s): remove what is there, or set XDG_RUNTIME_DIR"
                        % (d, err.strerror or err))
    return d


def alive(pid):
    """Is process `pid` running (a signal 0 reaches it)? A pid <= 0 names
    no one process (kill(0) and kill(-1) reach groups): never alive."""
    if type(pid) is not int or not 0 < pid < 1 << 31:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process: running
    return True


def publish_sim(pty_path, board_id):
    """Say that this process's simulator serves the link on `pty_path`,
    as board `board_id` (its hello's id); the path of the file (remove it
    with `unpublish` when the link closes). The file names the process by
    its pid and its start time, so a pid the system gave to another process
    since is not taken for this one."""
    try:
        path = os.path.join(runtime_dir(), "sim-%d.json" % os.getpid())
        tmp = path + ".tmp"
        with open(tmp, "w") as fh:
            json.dump({"pid": os.getpid(), "start": started(os.getpid()), "port": pty_path, "id": board_id}, fh)
        os.replace(tmp, path)
    except (UserError, OSError):
        return None  # no runtime directory: the simulator runs, `--port auto` does not find it (give --port PATH)
    return path


def unpublish(path):
    if path is None:
        return
    try:
        os.remove(path)
    except OSError:
        pass


def started(pid):
    """When process `pid` started, in clock ticks since boot (Linux
    /proc/PID/stat, field 22), or None where the system does not say."""
    try:
        with open("/proc/%d/stat" % pid, "rb") as fh:
            fields = fh.read(4096).rsplit(b")", 1)[1].split()
        return int(fields[19])
    except (OSError, IndexError, ValueError):
        return None


def holds(pid, path):
    """Does process `pid` have `path` open? True/False, or None where the
    system does not say (no /proc)."""
    fds = "/proc/%d/fd" % pid
    if not os.path.isdir("/proc/self/fd"):
        return None
    try:
        names = os.listdir(fds)
    except OSError:
        return False
    for n in names:
        try:
            if os.readlink(os.path.join(fds, n)) == path:
                return True
        except OSError:
            pass
    return False


def _sim_of(info):
    """A registration checked against the process it names: "ok" (the pid
    runs, started when the file says, and holds the pty), "stale" (it
    cannot be that simulator) or "unsure" (not provable here: not used,
    not removed)."""
    pid, port, bid, start = info.get("pid"), info.get("port"), info.get("id"), info.get("start")
    if type(pid) is not int or pid <= 0 or type(port) is not str or type(bid) is not str or not bid:
        return "stale"
    if start is not None and type(start) is not int:
        return "stale"
    if not alive(pid) or not os.path.exists(port):
        return "stale"
    now = started(pid)
    if now is not None and now != start:
        return "stale"  # the pid was given to another process since
    held = holds(pid, port)
    if held is False:
        return "stale" if now is not None else "unsure"
    return "ok"


def running_sims():
    """The simulators running now, oldest file first: [(pty path, board
    id)], each checked against the process it names (`_sim_of`). Files
    that cannot be a running simulator (gone, pid reused, pid <= 0,
    unreadable, an older format) are removed. `--port auto` still asks
    each pty's hello and uses it only if it gives that board id
    (host/sync/link.py)."""
    try:
        d = runtime_dir()
        names = os.listdir(d)
    except (UserError, OSError):
        return []  # no runtime directory: no simulator registered
    out = []
    for name in sorted(names, key=lambda n: _mtime(os.path.join(d, n))):
        if not (name.startswith("sim-") and name.endswith(".json")):
            continue
        path = os.path.join(d, name)
        try:
            info = json.loads(read_bytes(path, 4096))  # a regular file only: a FIFO put there would hang
            verdict = _sim_of(info) if type(info) is dict else "stale"
        except (OSError, ValueError, UserError, RecursionError):
            verdict = "stale"
        if verdict == "ok":
            out.append((info["port"], info["id"]))
        elif verdict == "stale":
            unpublish(path)
    return out


def _mtime(path):
    try:
        return os.path.getmtime(path)
    except OSError:
        return 0.0


def relay_path(port):
    """The relay socket of the process that holds `port` (a device path),
    named by a short hash of the port: the path stays far under the
    AF_UNIX limit (108 bytes on Linux, 104 on macOS) whatever the port."""
    import hashlib

    return os.path.join(runtime_dir(), "relay-%s.sock" % hashlib.sha256(port.encode("utf-8", "surrogatepass")).hexdigest()[:12])


def relays():
    """The relay sockets there are now (stale ones are found when asked)."""
    try:
        d = runtime_dir()
        names = os.listdir(d)
    except (UserError, OSError):
        return []  # no runtime directory: no relay
    return sorted(os.path.join(d, n) for n in names if n.startswith("relay-") and n.endswith(".sock"))

"""Files a running bloomkeeper leaves for the others, in the user's runtime
directory (platformdirs.user_runtime_dir: `$XDG_RUNTIME_DIR/bloomkeeper` on
Linux, private to the user and emptied at logout).

Two kinds, each naming the process that made it so that a file left by a
process that died is recognised as stale and removed:
- `sim-<pid>.json`: a running simulator's pseudo-terminal (`--port auto`
  finds it, host/sync/link.py);
- `relay-<port>.sock`: the Unix socket of the process that holds a board's
  port (`serve`, `follow`), through which `names` reaches the board
  (host/sync/relay.py).
"""

import json
import os
import warnings


def runtime_dir():
    """The directory (made, 0700, if missing)."""
    import platformdirs

    with warnings.catch_warnings():  # no XDG_RUNTIME_DIR: platformdirs warns and uses /tmp/runtime-UID
        warnings.simplefilter("ignore")
        d = platformdirs.user_runtime_dir("bloomkeeper", appauthor=False)
    os.makedirs(d, mode=0o700, exist_ok=True)
    return d


def alive(pid):
    """Is process `pid` running (a signal 0 reaches it)? A pid <= 0 names
    no one process (kill(0) and kill(-1) reach groups): never alive."""
    if type(pid) is not int or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process: running
    return True


def publish_sim(pty_path):
    """Say that this process's simulator serves the link on `pty_path`;
    the path of the file (remove it with `unpublish` when the link closes)."""
    path = os.path.join(runtime_dir(), "sim-%d.json" % os.getpid())
    tmp = path + ".tmp"
    with open(tmp, "w") as fh:
        json.dump({"pid": os.getpid(), "port": pty_path}, fh)
    os.replace(tmp, path)
    return path


def unpublish(path):
    try:
        os.remove(path)
    except OSError:
        pass


def running_sims():
    """The pseudo-terminals of the simulators running now, oldest file first;
    files of processes that are gone (or unreadable) are removed."""
    d = runtime_dir()
    out = []
    for name in sorted(os.listdir(d), key=lambda n: _mtime(os.path.join(d, n))):
        if not (name.startswith("sim-") and name.endswith(".json")):
            continue
        path = os.path.join(d, name)
        try:
            with open(path) as fh:
                info = json.load(fh)
            pid, port = info["pid"], info["port"]
            ok = type(pid) is int and type(port) is str and alive(pid) and os.path.exists(port)
        except (OSError, ValueError, KeyError, TypeError):
            ok = False
        if ok:
            out.append(port)
        else:
            unpublish(path)
    return out


def _mtime(path):
    try:
        return os.path.getmtime(path)
    except OSError:
        return 0.0


def relay_path(port):
    """The relay socket of the process that holds `port` (a device path)."""
    safe = "".join(c if c.isalnum() or c in "-." else "_" for c in port.strip("/"))[-60:]
    return os.path.join(runtime_dir(), "relay-%s.sock" % safe)


def relays():
    """The relay sockets there are now (stale ones are found when asked)."""
    d = runtime_dir()
    return sorted(os.path.join(d, n) for n in os.listdir(d) if n.startswith("relay-") and n.endswith(".sock"))

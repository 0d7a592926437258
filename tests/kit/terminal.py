"""A real terminal for the simulator's end-to-end tests (tests/host/test_sim_tui.py,
tests/host/test_sim_micropython.py; marked `tmux`): bash inside tmux on a socket
of the test's own, so a test never touches the user's tmux server. Keys go
in with send-keys, the screen comes back with capture-pane."""

import os
import subprocess
import time


def _tmux(*args):
    return subprocess.run(["tmux"] + list(args), capture_output=True, text=True, timeout=20)


class Terminal:
    """A real terminal: bash in tmux on its own socket (so a test never
    touches the user's tmux), `width` x `height` characters."""

    def __init__(self, tmp_path, name, width, height):
        self.sock = str(tmp_path / "tmux.sock")
        self.session = "%s%d" % (name, os.getpid())
        _tmux("-S", self.sock, "new-session", "-d", "-s", self.session, "-x", str(width), "-y", str(height),
              "bash --norc --noprofile")

    def keys(self, *keys):
        _tmux("-S", self.sock, "send-keys", "-t", self.session, *keys)

    def type_slowly(self, keys, pause=0.25):
        """One key at a time, as a player presses them."""
        for k in keys:
            self.keys(k)
            time.sleep(pause)

    def pane(self):
        return _tmux("-S", self.sock, "capture-pane", "-p", "-t", self.session).stdout

    def wait(self, text, timeout=20):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if text in self.pane():
                return
            time.sleep(0.1)
        raise AssertionError("no %r on screen:\n%s" % (text, self.pane()))

    def close(self):
        _tmux("-S", self.sock, "kill-server")

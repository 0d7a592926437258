"""The hub between the board thread and the open pages.

The board thread publishes a new state (the live panel's HTML and a few
facts) or a new ring frame; every Server-Sent Events stream waits on one
Condition for a version newer than the one it sent last. Nothing is queued
per client, so a slow phone can never hold memory or stall the board. The
web server's event loop listens too (listeners): one wake-up for all its
open pages.
"""

import threading


class Live:
    def __init__(self, state):
        self._cond = threading.Condition()
        self.state = state  # dict: "html", "link", ... (JSON-able)
        self.state_v = 1
        self.ring = None  # list of 24 "#rrggbb" or None (no game)
        self.ring_v = 0
        self.listeners = []  # called (no arguments, the publishing thread) after each change: the server's event loop

    def _changed(self):
        self._cond.notify_all()
        for fn in list(self.listeners):
            fn()

    def publish_state(self, state):
        with self._cond:
            if state != self.state:
                self.state = state
                self.state_v += 1
                self._changed()

    def publish_ring(self, ring):
        with self._cond:
            if ring != self.ring:
                self.ring = ring
                self.ring_v += 1
                self._changed()

    def current(self):
        with self._cond:
            return self.state_v, self.state, self.ring_v, self.ring

    def wait(self, state_v, ring_v, timeout):
        """(state_v, state, ring_v, ring) once either is newer than given,
        or the current ones after `timeout` seconds."""
        with self._cond:
            self._cond.wait_for(lambda: self.state_v != state_v or self.ring_v != ring_v, timeout)
            return self.state_v, self.state, self.ring_v, self.ring

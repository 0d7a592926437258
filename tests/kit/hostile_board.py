"""A board that hands the host what a mismatched firmware, a corrupted
flash or a hostile device could: records the rules engine refuses, odd
hellos and replies, ids with terminal escapes. It is the real device Link
over a real pseudo-terminal (host/board_sim/board.PtyPort), in a thread of
the test's process, so `bloomkeeper sync --port PATH` in its own process
talks to it as it would to a Pico.

    with served(HostileBoard(uid="u1")) as path: ...
"""

import contextlib
import select
import threading

from firmware import link
from host.board_sim.board import PtyPort
from tests.kit.linkkit import StoreBoard


class HostileBoard(StoreBoard):
    """A StoreBoard whose answers can be doctored: `extra[gid]` records
    served after the game's own; `hello` fields merged into (None: removed
    from) the hello; `replies[op]` an answer served instead of the real one."""

    def __init__(self, uid="u1", **kw):
        StoreBoard.__init__(self, uid=uid, **kw)
        self.extra = {}
        self.hello = {}
        self.replies = {}

    def records(self, gid):
        return list(StoreBoard.records(self, gid)) + list(self.extra.get(gid, ()))

    def window(self, gid, start, room):
        return None  # its doctored records are read whole, never through an archive's index

    def faults(self):
        return ""


class HostileLink(link.Link):
    def handle(self, payload):
        try:
            seq, req = link.codec.parse_request(payload)
        except link.codec.FrameError:
            return link.Link.handle(self, payload)
        if req["op"] in self.board.replies:
            return link.codec.reply(link.codec.K_OK, seq, self.board.replies[req["op"]])
        return link.Link.handle(self, payload)

    def op_hello(self, req):
        ans = link.Link.op_hello(self, req)
        for k, v in self.board.hello.items():
            if v is None:
                ans.pop(k, None)
            else:
                ans[k] = v
        return ans


@contextlib.contextmanager
def served(board):
    """The board's link on a pty while the block runs: yields the port path."""
    pty = PtyPort()
    dev = HostileLink(None, pty)
    dev.attach(board)
    stop = threading.Event()

    def run():
        while not stop.is_set():
            select.select([pty.master], [], [], 0.005)
            dev.poll()
            pty.flush()

    t = threading.Thread(target=run, daemon=True)
    t.start()
    try:
        yield pty.path
    finally:
        stop.set()
        t.join(5)
        pty.close()

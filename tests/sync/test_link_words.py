"""What the host says when the board does not answer, how often it asks
the time, and what the board calls itself in its hello.

* Unanswered requests: the line counts every request sent in a row (the
  events retries too: it said "tried 1 times" after three), and says what
  it means: before any hello, the app may not run or the board is still
  starting; after one, the app runs and the board was too slow.
* `sync` sets the board's clock once per connection (it sent `time` twice).
* The hello's `board` is the board's type (`pico` on MicroPython), as
  docs/protocol.md says, not the runtime's name.
"""

import pytest

from firmware import link
from host.sync.link import HostLink, NoAnswer
from tests.kit.hostile_board import HostileBoard, served
from tests.kit.linkkit import LoopSerial, StoreBoard
from tests.kit.mpy_harness import REPO, run_mpy


class Mute(link.Link):
    """A device that answers only the ops in `answers`."""

    answers = ("hello",)

    def handle(self, payload):
        try:
            _, req = link.codec.parse_request(payload)
        except link.codec.FrameError:
            return b""
        return link.Link.handle(self, payload) if req["op"] in self.answers else b""


def host(dev):
    return HostLink(LoopSerial(dev), name="loop", read_timeout=0, request_timeout=0.05, cap=30)


def board():
    b = StoreBoard(uid="u1")
    with open(str(REPO / "tests" / "records" / "stalk-2p.jsonl")) as f:
        b.load([t for t in f.read().splitlines() if t.strip()], finish=True)
    return b


def test_unanswered_events_count_every_request_and_say_the_app_runs():
    hl = host(Mute(board()))
    hl.hello()
    with pytest.raises(NoAnswer) as err:
        hl.events("0001", 0)
    msg = str(err.value)
    assert "3 events requests in a row went unanswered" in msg and "tried 1 times" not in msg
    assert "its app runs" in msg and "is the Bloomkeeper app running" not in msg and "\n" not in msg


def test_an_unanswered_hello_says_the_board_may_still_be_starting():
    dev = Mute(board())
    dev.answers = ()
    hl = host(dev)
    with pytest.raises(NoAnswer) as err:
        hl.hello()
    msg = str(err.value)
    assert "3 hello requests in a row went unanswered" in msg and "is the Bloomkeeper app running" in msg
    assert "a few seconds" in msg and "\n" not in msg


class Counting(HostileBoard):
    def __init__(self, **kw):
        HostileBoard.__init__(self, **kw)
        self.times = 0

    def set_time(self, t):
        self.times += 1
        return HostileBoard.set_time(self, t)


@pytest.mark.slow
def test_sync_sets_the_clock_once(tmp_path):
    import subprocess
    import sys

    b = Counting(uid="u1")
    with open(str(REPO / "tests" / "records" / "stalk-2p.jsonl")) as f:
        b.load([t for t in f.read().splitlines() if t.strip()], finish=True)
    with served(b) as port:
        r = subprocess.run([sys.executable, "-m", "host.cli", "sync", "--port", port, "--db", str(tmp_path / "p.sqlite3")],
                           cwd=REPO, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert b.times == 1


@pytest.mark.mpy
def test_the_hello_names_the_board_type_in_micropython():
    """firmware/main.py make_link, as main() calls it, in the Unix port."""
    code = """
import sys
sys.path.insert(0, '_stubs')
from firmware.main import make_link
from firmware.hw import make_hw
from firmware.storage import Store
from firmware.app import App
from boardkit.memfs import MemFS
hw = make_hw('pico', 'micropython')
store = Store('/bk', fs=MemFS())
app = App(hw, store, clock=hw.ticks_ms)
print(sys.implementation.name, make_link(app, store, None).board.board_id, make_link(app, store, 'feather_rp2040').board.board_id)
"""
    out = run_mpy(code).stdout.split()
    assert out[-3:] == ["micropython", "pico", "feather_rp2040"], out

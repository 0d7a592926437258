"""Shared parts of the dashboard tests: a board process that can be
unplugged and plugged back in (tests/kit/dashboard_board.py), `bloomkeeper
serve` as a process, and a plays database filled with recorded games."""

import json
import os
import re
import subprocess
import sys
import time
import urllib.request

import engine_lite

import host.sync.db

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RECORDS = os.path.join(REPO, "tests", "records")
# the game the live tests play: stalk-2p.jsonl without its last 4 events
# (a harvest, the end of the last turn, both portfolios), which they press
LIVE_RECORD = os.path.join(RECORDS, "stalk-2p.jsonl")
LIVE_CUT = 4
HISTORY = ("stalk-4p.jsonl", "stalk-5p-crash.jsonl", "stalk-5p-bag.jsonl", "orchids-2p.jsonl", "orchids-5p.jsonl")
OK, UNDO = 6, 5


def records_of(name):
    g = engine_lite.Game()
    with open(os.path.join(RECORDS, name)) as f:
        engine_lite.replay(f, g)
    return [bytes(r) for r in g.log.records()]


def fill_db(path, names=HISTORY):
    """Store recorded games as if synced from other boards (board `table-K`)."""
    db = host.sync.db.Database(path)
    try:
        for k, name in enumerate(names):
            recs = records_of(name)
            who = {"board": "table-%d" % k, "type": "table-%d" % k, "clock": None}  # a board known by its id only
            play, added = db.store(who, "0001", recs)
            assert play is not None and added == len(recs)
    finally:
        db.close()


def live_presses():
    """The presses that finish LIVE_RECORD: harvest 1 snowdrop (tap, OK),
    end the turn (hold OK), then each portfolio (taps, OK)."""
    lines = [json.loads(t) for t in open(LIVE_RECORD) if t.strip()][-LIVE_CUT:]
    assert [e["ev"] for e in lines] == ["harvest", "end_turn", "portfolio", "portfolio"]
    assert lines[0]["flower"] == "snowdrop" and lines[0]["count"] == 1
    harvest = [(3, "short"), (OK, "short")]
    end = [(OK, "long")]
    folios = []
    for e in lines[2:]:
        for f, name in enumerate(("dahlia", "daffodil", "globemaster", "snowdrop", "tulip")):
            folios += [(f, "short")] * e["counts"][name]
        folios.append((OK, "short"))
    return harvest, end, folios


class Board:
    """The simulated board process; kill() = unplugged, start() = plugged in."""

    def __init__(self, tmp, record=LIVE_RECORD, cut=LIVE_CUT):
        """A board that will hold `record` without its last `cut` events."""
        self.flash = os.path.join(tmp, "flash")
        self.port = os.path.join(tmp, "port")
        self.part = os.path.join(tmp, "part.jsonl")
        lines = [t for t in open(record) if t.strip()]
        with open(self.part, "w") as f:
            f.writelines(lines[:-cut])
        self.p = None

    def start(self, fresh=False):
        args = [sys.executable, "-m", "tests.kit.dashboard_board", "--state-dir", self.flash, "--link", self.port]
        if fresh:
            args += ["--record", self.part]
        self.p = subprocess.Popen(args, cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        line = self.p.stdout.readline()
        assert line.startswith("link: "), line
        return self

    def press(self, presses):
        """Make the presses (through the simulated pins) and wait until they are done."""
        self.p.stdin.write("".join("press %d %s\n" % p for p in presses) + "sync\n")
        self.p.stdin.flush()
        assert self.p.stdout.readline().strip() == "idle"

    def kill(self):
        if self.p is not None:
            self.p.kill()
            self.p.wait(10)
            self.p = None


class Serve:
    """`bloomkeeper serve` on a free port."""

    def __init__(self, port, db):
        self.p = subprocess.Popen(
            [sys.executable, "-m", "host.cli", "serve", "--port", port, "--db", db, "--http", "127.0.0.1:0"],
            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        line = self.p.stdout.readline()
        m = re.search(r"http://\S+/", line)
        if not m:
            self.p.kill()
            raise AssertionError("serve did not start: %r %s" % (line, self.p.stderr.read()))
        self.url = m.group(0)

    def get(self, path):
        with urllib.request.urlopen(self.url + path.lstrip("/"), timeout=30) as r:
            return r.status, r.headers.get("Content-Type"), r.read().decode()

    def state(self):
        return json.loads(self.get("state.json")[2])

    def wait_state(self, pred, timeout=30):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            st = self.state()
            if pred(st):
                return st
            time.sleep(0.05)
        raise AssertionError("the live state never got there: %s" % json.dumps(st)[:2000])

    def close(self):
        self.p.kill()
        self.p.wait(10)
        return self.p.stderr.read()


def shown_scores(html):
    return {n: int(v) for n, v in re.findall(r'data-score="([^"]+)">(\d+)<', html)}


def state_of(name, cut=0):
    """The engine's game of tests/records/NAME, less its last `cut` events."""
    g = engine_lite.Game()
    lines = [t for t in open(os.path.join(RECORDS, name)) if t.strip()]
    engine_lite.replay(lines[: len(lines) - cut], g)
    return g

"""The whole board as a hypothesis state machine: the board never stops.

"Random sequences of button gestures (including invalid ones), undo chains,
reboots at random points (clean and by power cut, on the project's flash
model), host link requests (sync, names, status) and new games, run through
the real App, Store and link, checked after every step against a model
(the engine's replay of the records the host can read back): the state
agrees, the ring renders, nothing raises."

The board: SimHW pins and strip, Store on MemFS (snapshots every 4 frames,
so restores from snapshots and undos across them are common), App, and the
device Link with AppBoard, all real. Gestures go through the simulated pins
(debounce and long-press timing included). The host reads the board only
through the link, as `bloomkeeper sync` does.

The model is what the host read back last: {game id: records}. After every
step the board is read again and:
* the App's game equals the engine's fold of the records the host reads,
  and so does a fresh boot of (a copy of) the flash;
* the step changed the records only as such a step may: a gesture appends
  at most two records (a harvest confirmed by a held OK, then the end of
  the turn) or undoes one, or finishes/starts a game; a refused gesture
  (the error blink) changes nothing; link requests other than new_game and
  clean reboots change nothing; a power cut keeps what was acknowledged
  plus at most the in-flight change (docs/storage.md);
* archived games never change or vanish; settings pushed by the host stay;
* the ring renders: the strip shows exactly Ring.render(view, now), and
  rendering at other times works too;
* nothing raised: App.recover (the loop's safety net) was never needed.

Used by tests/board/test_board_machine.py (bounded, in CI) and
bench/bench_board_machine.py (longer, prints steps and sequences tried).
"""

import json

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

import engine_lite
from engine_lite import record
from firmware import codec
from host.sync import codec_host
from firmware import ring
from boardkit import script
from firmware.buttons import LONG, SHORT
from boardkit.memfs import MemFS
from firmware.storage import Store
from tests.kit.app_helpers import Board
from tests.kit.tablebot import orchids_game, stalk_game

UNDO, OK, MENU = 5, 6, 7
NAMES = st.lists(st.sampled_from(["Ann", "Bo", "Cy", "Di", "Ed", "Flo"]), min_size=2, max_size=5, unique=True)
# OK (plant, confirm, end the turn) and UNDO write to flash most: weighted up
GESTURES = st.tuples(st.sampled_from([0, 1, 2, 3, 4, UNDO, OK, OK, OK, MENU]), st.sampled_from([SHORT, SHORT, LONG]))
STARTS = st.tuples(st.sampled_from(["stalk-exchange", "oh-my-orchids"]), NAMES)


_RECORDS = {}


def near_end_records(title, seed):
    """A complete game by the table bots (tests/kit/tablebot.py), as records."""
    key = (title, seed)
    if key not in _RECORDS:
        g = stalk_game(seed, 2 + seed % 4) if title == "stalk" else orchids_game(seed, 2 + seed % 4)
        _RECORDS[key] = [bytes(r) for r in g.log.records()]
    return _RECORDS[key]


class Counts:
    """Steps and sequences tried (the bench prints them)."""

    sequences = 0
    steps = 0
    cuts = 0
    reboots = 0
    events = 0  # records appended or undone, as the host saw them
    finished = 0  # games archived by buttons (results -> OK, or menu -> new game)


def fold(records):
    g = engine_lite.Game()
    for rec in records:
        g.apply_record(rec)
    return g


class BoardMachine(RuleBasedStateMachine):
    snapshot_every = 4

    def __init__(self):
        super().__init__()
        Counts.sequences += 1
        self.seq = 0
        self.names = None  # names the host pushed last (None: never)
        self.boot(MemFS())
        self.current, self.games = self.read_board()

    # -- the board ---------------------------------------------------------

    def boot(self, fs):
        """Power up on `fs`: hardware, store, app and link as firmware/main.py wires them."""
        b = Board(fs=fs, snapshot_every=self.snapshot_every, link=True)
        self.fs, self.hw, self.store, self.app, self.link = b.fs, b.hw, b.store, b.app, b.link

    def request(self, op, **args):
        """One request through the board's link; (kind, answer)."""
        self.seq = (self.seq + 1) & 0xFFFF
        args["op"] = op
        wire = codec.encode(bytes((codec.K_REQ, self.seq & 0xFF, self.seq >> 8)) + json.dumps(args).encode())
        out = [p for p in codec.Deframer(4096).feed(self.link.feed(wire)) if p[0] != codec.K_PUSH]
        assert len(out) == 1 and out[0][1] | out[0][2] << 8 == self.seq, (op, out)
        p = out[0]
        if p[0] == codec.K_EVENTS:
            return "E", bytes(p[3:])
        return chr(p[0]), json.loads(p[3:])

    def read_game(self, gid):
        recs = []
        while True:
            kind, body = self.request("events", game=gid, **{"from": len(recs)})
            assert kind == "E", body
            _, start, total, _, got = codec_host.parse_events(body)
            assert start == len(recs)
            recs += got
            if len(recs) >= total:
                return recs
            assert got, "the board sent no records but has more"

    def read_board(self):
        """(current game id or None, {game id: records}) as the host reads them."""
        kind, ans = self.request("games")
        assert kind == "R"
        games = {}
        for gid, _synced in ans["archived"]:
            games[gid] = self.read_game(gid)
        cur = ans["current"]
        if cur is not None:
            games[cur] = self.read_game(cur)
        return cur, games

    def gesture(self, button, kind):
        script.gesture(self.app, self.hw, button, kind)
        Counts.steps += 1

    # -- checks ------------------------------------------------------------

    def check(self, allowed, loaded=None):
        """Read the board and compare with the model (see the module doc).
        `allowed`: "same" (nothing may change), "gesture", "cut" or
        "host_new" (a gesture's changes); or "load": a new game holding
        the `loaded` records."""
        cur, games = self.read_board()
        old_cur, old = self.current, self.games
        assert self.app.faults == 0, self.store.faults()
        # archived games never change or vanish
        for gid, recs in old.items():
            if gid != old_cur:
                assert games.get(gid) == recs, "archived game %s changed" % gid
        self.check_app(cur, games)
        before = old.get(old_cur) if old_cur else None
        after = games.get(cur) if cur else None
        if allowed == "same":
            assert (cur, after) == (old_cur, before)
        elif allowed == "load":
            assert cur != old_cur and after == loaded
            assert old_cur is None or games[old_cur] == before, "the game in progress was not archived whole"
        elif cur == old_cur and cur is not None:
            self.check_same_game(before, after)
        elif old_cur is not None and cur != old_cur:
            # the game was finished or abandoned (archived: same records, or
            # one more in flight at a cut), and perhaps a new one started
            kept = games.get(old_cur)
            assert kept is not None, "the game in progress vanished"
            Counts.finished += allowed != "host_new"
            self.check_same_game(before, kept)
            self.check_new(cur, after)
        else:  # no game before: at most a new one
            self.check_new(cur, after)
        if cur is not None and cur == old_cur:
            Counts.events += abs(len(after) - len(before))
        self.current, self.games = cur, games

    def check_same_game(self, before, after):
        n = len(before)
        if after[:n] == before:
            assert len(after) - n <= 2, "more than two records from one step"
        else:
            assert after == before[:-1], "records changed other than by one undo"
            assert n > 1, "the start record was undone"

    def check_new(self, cur, after):
        if cur is not None:
            assert len(after) <= 3 and after[0][0] == record.OP_START, "a new game starts with its start record"

    def check_app(self, cur, games):
        app = self.app
        if cur is None:
            assert app.game is None
        else:
            recs = games[cur]
            assert app.game is not None and len(app.game.log) == len(recs)
            assert app.game.state() == fold(recs).state(), "the board's game is not the fold of its records"
            fresh = Store(fs=self.fs.survivor(), snapshot_every=self.snapshot_every).boot()
            assert fresh is not None and fresh.state() == app.game.state(), "a boot of the flash differs from RAM"
        # the ring: the strip shows the rendered view; rendering works at any time
        now = self.hw.now
        buf = app.show()
        want = ring.Ring(self.hw.count).render(app.view, now)
        assert bytes(buf) == bytes(want)
        assert [tuple(buf[3 * i : 3 * i + 3]) for i in range(self.hw.count)] == [tuple(p) for p in self.hw.pixels]
        for dt in (1, 333, 4999):
            ring.Ring(self.hw.count).render(app.view, now + dt)
        if self.names is not None:
            assert self.store.settings()["names"] == self.names

    # -- rules: buttons ----------------------------------------------------

    @initialize(start=st.one_of(st.none(), STARTS))
    def maybe_start(self, start):
        """Some sequences start with a game already running (from the host)."""
        if start is not None:
            self.host_new_game(start)

    @rule(button=st.integers(0, 7), kind=st.sampled_from([SHORT, LONG]))
    def press(self, button, kind):
        app = self.app
        blink = app.view.error_at
        compound = app.harvest.flower >= 0  # a harvest being counted is confirmed first
        before = self.games.get(self.current)
        self.gesture(button, kind)
        self.check("gesture")
        if app.view.error_at != blink and not compound and self.current is not None:
            assert self.games.get(self.current) == before, "a refused gesture changed the game"

    @rule(n=st.integers(1, 12))
    def undo_chain(self, n):
        for _ in range(n):
            self.gesture(UNDO, SHORT)
            self.check("gesture")

    @rule(seeds=st.integers(0, 4), plants=st.integers(0, 3))
    def play_a_turn(self, seeds, plants):
        """A turn as players make them (random presses rarely get far):
        Stalk Exchange plants then ends the turn; Orchids takes seeds or
        plants a flora, then ends the turn."""
        g = self.app.game
        if g is None:
            return
        if g.game == record.STALK:
            taps = [OK] * plants
        elif seeds:
            taps = [seeds - 1]
        else:  # plant a flora daffodil: OK, kind, points 1, OK, seeds 2, OK
            taps = [OK, 1, 0, OK, 1, OK]
        for b in taps:
            self.gesture(b, SHORT)
            self.check("gesture")
        self.gesture(OK, LONG)
        self.check("gesture")

    @rule(title=st.sampled_from(["stalk", "orchids"]), seed=st.integers(1, 6), left=st.integers(0, 10))
    def near_the_end(self, title, seed, left):
        """A game loaded to `left` records before its end through the App's
        own entry points (as `bloomkeeper sim --record` loads one), so the
        last turns, portfolio entry, results and finishing get pressed too."""
        from firmware.hw import stamp

        recs = near_end_records(title, seed)
        # a game loaded from a host carries its identity already: the board
        # keeps that stamp as it is (its nonce is the game's identity)
        recs = [stamp(recs[0], self.hw)] + recs[1 : len(recs) - left]
        self.app.new_game(recs[0])
        for rec in recs[1:]:
            assert self.app.apply(rec)
        Counts.steps += 1
        self.check("load", loaded=recs)

    # -- rules: power ------------------------------------------------------

    @rule()
    def reboot(self):
        """Unplugged between two steps: everything acknowledged is on flash."""
        Counts.reboots += 1
        self.boot(self.fs.survivor())
        self.check("same")

    @rule(after=st.integers(1, 8), gestures=st.lists(GESTURES, min_size=1, max_size=8))
    def power_cut(self, after, gestures):
        """The power dies at the `after`-th flash op from now (a frame
        write, a snapshot, an archive rename, a settings write...), during
        one of these gestures; the board boots on what survived."""
        self.fs.cut_at = self.fs.ops + after
        for button, kind in gestures:
            self.gesture(button, kind)
            if self.fs.dead:
                Counts.cuts += 1
                self.boot(self.fs.survivor())
                self.check("cut")
                return
            self.check("gesture")
        self.fs.cut_at = None

    # -- rules: the host ---------------------------------------------------

    @rule()
    def host_sync(self):
        """What `bloomkeeper sync` reads (games, every game's events) and status."""
        kind, st_ = self.request("status")
        assert kind == "R" and st_["game"] == self.current and st_["faults"] == 0
        assert st_["screen"] == self.app.screen
        self.check("same")

    @rule(names=NAMES)
    def host_names(self, names):
        kind, ans = self.request("settings", set={"names": names})
        assert kind == "R" and ans["settings"]["names"] == names
        self.names = names
        self.check("same")

    @rule(data=st.binary(max_size=80))
    def host_garbage(self, data):
        """Line noise, a damaged frame or a request the board refuses: an
        error reply or none, nothing changed."""
        settings = self.store.settings()
        self.link.feed(data + b"\x00")
        kind, _ = self.request("settings", set={"names": "not a list"})
        assert kind == "X"
        assert self.store.settings() == settings
        self.check("same")

    @rule(start=STARTS)
    def host_new_game(self, start):
        """`new_game` from the host: two steps with the confirm token."""
        ev = {"ev": "start", "game": start[0], "players": start[1]}
        kind, ans = self.request("new_game", start=ev)
        assert kind == "X" and ans["code"] == "confirm"
        kind, ans = self.request("new_game", start=ev, confirm=ans["token"])
        assert kind == "R", ans
        Counts.steps += 1
        self.check("host_new")
        assert self.current == ans["game"] and len(self.games[self.current]) == 1

    @invariant()
    def nothing_raised(self):
        """App.recover, the loop's safety net, is never what keeps this board running."""
        assert self.app.faults == 0

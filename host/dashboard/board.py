"""The board thread: follow the game on the board, record every event,
mirror the ring.

It uses the host code `follow` and `sync` use (host/sync/link.py connect,
host/sync/follow.Follower, the plays database through store.py), so the page
sees exactly what `follow` prints and the database holds exactly what
`sync` would store: every live event is written before the page shows it.

The ring on the page is the firmware's own: a mirror board (the simulator's
SimBoard, without a link: the real App, ring renderer and simulated strip)
is fed the same records, and its pixels are sent as they are. It shows the
board's game screens; what the board shows only while a button is being
used (a menu, a harvest being counted) never crosses the link.

A board that goes away (unplugged, a lost link) is shown as disconnected
and looked for again every second; when it is back, a full sync first
fetches whatever is missing, so nothing is lost.
"""

import threading
import time

from engine_lite import readout
from host.dashboard import store, views
from host.errors import UserError
from host.sync import relay
from host.sync.follow import Follower
from host.sync.link import connect

RETRY_S = 1.0  # how often a missing board is looked for
HEARTBEAT_S = 2.0  # an idle link is checked this often (a lost board shows within ~3 s)
POLL_S = 0.1  # wait for a live event at most this long, then redraw the ring


class RingMirror:
    """The firmware's App on the simulated backend, fed the board's records."""

    def __init__(self, clock=None):
        self.clock = clock  # ms; None = real time (the tests give a fixed one)
        self.sb = None
        self.log = []

    def update(self, game):
        recs = [] if game is None or game.table is None else [bytes(r) for r in game.log.records()]
        if not recs:
            self.sb, self.log = None, []
            return
        if self.sb is None or recs[: len(self.log)] != self.log:
            from host.board_sim.board import SimBoard

            self.sb = SimBoard(link=False, clock=self.clock).start()
            self.sb.app.new_game(recs[0])
            self.log = recs[:1]
        for r in recs[len(self.log) :]:
            self.sb.app.apply(r)
        self.log = recs

    def frame(self):
        """The ring now, as 24 CSS colours (lifted as the simulator lifts them), or None."""
        if self.sb is None:
            return None
        from host.board_sim.face import display_rgb

        self.sb.tick()
        b = self.sb.brightness()
        return ["#%02x%02x%02x" % display_rgb(p, b) for p in self.sb.pixels()]


class BoardWatcher(threading.Thread):
    def __init__(self, port, db_path, live):
        threading.Thread.__init__(self, name="board", daemon=True)
        self.port = port
        self.db_path = db_path
        self.live = live
        self.stop = threading.Event()
        self.mirror = RingMirror()
        self.game_state = None  # the last game seen (kept on screen while disconnected)
        self.round = []  # its round so far (engine_lite.readout.last_round)
        self.playing = False  # game_state is a game in progress (else the last one, or none)
        self.where = ""
        self.link = "connecting"
        # the next game's names (the page's form, `names` through the relay),
        # sent over the link from this thread's loop
        self.requests = relay.Requests()

    def run(self):
        seen = False
        while not self.stop.is_set():
            try:
                link = connect(self.port, cap=10**9)
            except UserError as err:
                self.publish("disconnected" if seen else "none", str(err))
                self.requests.fail_all("no board connected: %s" % err)
                self.stop.wait(RETRY_S)
                continue
            seen = True
            rel = relay.Relay(link.name, self.requests)
            try:
                rel.open()
                self.follow(link)
            except UserError as err:
                self.publish("disconnected", str(err))
            except Exception as err:  # the database, a firmware answer we cannot read: say it, try again
                self.publish("disconnected", "%s: %s" % (type(err).__name__, " ".join(str(err).split())))
                self.stop.wait(RETRY_S)
            finally:
                rel.close()
                self.requests.fail_all("the board went away before the names were sent; nothing changed")
                link.close()

    def follow(self, link):
        db = store.open_db(self.db_path)
        try:
            who = store.record_board(link, db)
            board = who["board"]
            f = Follower(link)
            f.refetch()
            gid = f.gid
            self.show(f, board, db)
            beat = time.monotonic()
            while not self.stop.is_set():
                self.requests.serve(link)
                push = link.wait_push(POLL_S)
                if push is not None:
                    f.take(push)
                    while link.pushes:  # a burst: fold it all, then record and draw once
                        f.take(link.pushes.popleft())
                    if f.gid != gid:  # a new game: the old one is archived; store all of it
                        store.record_board(link, db)
                        gid = f.gid
                    elif gid is not None:
                        store.record_game(link, db, who, gid)
                    self.show(f, board, db)
                    beat = time.monotonic()
                elif time.monotonic() - beat > HEARTBEAT_S:
                    link.status()  # raises when the board has gone
                    beat = time.monotonic()
                self.live.publish_ring(self.frame())
        finally:
            db.close()

    def show(self, f, board, db):
        game = f.game if f.game is not None and f.game.table is not None else None
        self.playing = game is not None
        try:
            self.mirror.update(game)
        except Exception:  # the ring is a picture: never let it stop the table view
            self.mirror = RingMirror()
        if game is not None:
            self.game_state = game.state()
            n = len(game.log)
            self.round = readout.last_round([bytes(r) for r in game.log.records(max(0, n - readout.ROUND_MAX))], game.table)
            self.where = "board %s, game %s: %d events, %d recorded" % (
                board, f.gid, len(game.log), store.count(db, board, f.gid))
        elif self.game_state is not None and "final" in self.game_state:
            self.where = "board %s: no game in progress; the last one:" % board
        else:
            self.game_state, self.where, self.round = None, "", []
        self.publish("live", "")
        self.live.publish_ring(self.frame())

    def frame(self):
        try:
            return self.mirror.frame()
        except Exception:
            self.mirror = RingMirror()
            return None

    def publish(self, link, note):
        self.link = link
        self.live.publish_state(views.live_state(link, note, self.game_state, self.where, self.playing, self.round))

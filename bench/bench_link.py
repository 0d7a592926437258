"""Serial link and sync figures (docs/protocol.md): every number is measured here.

* sync_bytes_per_event: bytes on the wire, both directions, for a whole
  sync of a 5-player game into a fresh database, over a real pty, divided by
  its events (hello, games list, events requests and answers, mark synced).
* sync_seconds_5p_game_115200: those bytes at 115200 baud (8N1 = 10 bits a
  byte) plus one measured pty round trip per request; beside it the
  measured wall time of the same sync over the pty (budget: 1 s).
* live_latency_ms_*: a button gesture handled by the App on the simulated
  board (its own thread, stepping every 5 ms as firmware/main.py does)
  until the host's pyserial read returns the live event; median / p95 /
  max over many presses. `live_latency_ms_pin_*`: from the simulated pin's
  release (debounce included) to the host.
* link_cut_trials / link_cut_mismatches: the link cut after a random
  number of bytes during a sync (and sometimes an undo on the board before
  the next one); after a full sync the database must equal the board's log.
* fuzz_frames / fuzz_failures: frames of garbage, random payloads with
  good checksums, bit-flipped requests and random structured requests into
  the device link of a real App + Store board; a failure is an exception
  out of the handler, a reply that is not exactly one frame, or a change of
  the board's games or settings by a request that was refused.
"""

import json
import os
import random
import statistics
import sys
import tempfile
import threading
import time

import engine_lite

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RECORD_5P = os.path.join(REPO, "tests", "records", "stalk-5p-bag.jsonl")


def _sim(record):
    from host.board_sim import serve_record

    return serve_record.build(record)


class _Runner:
    """Run a SimBoard's loop in a thread (as `bloomkeeper sim` would)."""

    def __init__(self, sb):
        self.sb = sb
        self.stop = False
        self.lock = threading.Lock()
        self.jobs = []
        self.t = threading.Thread(target=self.run, daemon=True)
        self.t.start()

    def run(self):
        import select

        fd = self.sb._pty.master
        while not self.stop:
            select.select([fd], [], [], 0.005)
            with self.lock:
                jobs, self.jobs = self.jobs, []
            for job in jobs:
                job()
            self.sb.tick()

    def call(self, fn):
        with self.lock:
            self.jobs.append(fn)

    def close(self):
        self.stop = True
        self.t.join(2)
        self.sb.close()


def measure_sync():
    import host.sync.db
    from host.sync.link import connect

    sb = _sim(RECORD_5P)
    r = _Runner(sb)
    try:
        n_events = len(sb.store.records(sb.store.game_id))
        walls, sizes, requests = [], [], []
        for _ in range(5):
            with tempfile.TemporaryDirectory() as d:
                t0 = time.monotonic()
                link = connect(sb.link_path, cap=30)
                db = host.sync.db.Database(os.path.join(d, "p.sqlite3"))
                seq0 = link.seq
                board = host.sync.db.sync(link, db)["board"]  # the board's unique id, which keys its plays in the database
                walls.append(time.monotonic() - t0)
                sizes.append(link.bytes_in + link.bytes_out)
                requests.append((link.seq - seq0) + 1)
                assert [bytes(x) for x in db.records(board, sb.store.game_id)] == [
                    bytes(x) for x in sb.store.records(sb.store.game_id)
                ]
                db.close()
                # one bare round trip: the per-request cost of the pty + board loop
                rts = []
                for _ in range(20):
                    t1 = time.monotonic()
                    link.status()
                    rts.append(time.monotonic() - t1)
                link.close()
        rt = statistics.median(rts)
        size = statistics.median(sizes)
        nreq = max(requests)
        return {
            "sync_events_5p_game": n_events,
            "sync_bytes_5p_game": size,
            "sync_bytes_per_event": round(size / n_events, 2),
            "sync_requests_5p_game": nreq,
            "sync_seconds_5p_game_115200": round(size * 10 / 115200 + nreq * rt, 3),
            "sync_seconds_5p_game_pty_measured": round(statistics.median(walls), 3),
            "link_round_trip_ms_pty": round(rt * 1000, 2),
        }
    finally:
        r.close()


def measure_latency(samples=60):
    from host.sync.link import connect
    from host.board_sim.board import SHORT

    rec = os.path.join(tempfile.mkdtemp(), "start.jsonl")
    with open(rec, "w") as f:
        f.write('{"ev":"start","game":"stalk-exchange","players":["Ann","Bo","Cy"]}\n')
    sb = _sim(rec)
    r = _Runner(sb)
    link = connect(sb.link_path, cap=600)
    link.subscribe(True)
    gesture, pin = [], []
    try:
        for i in range(samples):
            button = 6 if i % 2 == 0 else 5  # ok short = plant, then undo
            stamp = {}

            def press(b=button):
                stamp["t"] = time.monotonic()
                sb.app.press(b, SHORT)

            r.call(press)
            push = link.wait_push(5)
            t = time.monotonic()
            if push is None:
                raise RuntimeError("no live event for a press")
            gesture.append((t - stamp["t"]) * 1000)
        # through the simulated pin: debounce and release detection included
        for i in range(samples // 3):
            button = 6 if i % 2 == 0 else 5
            stamp = {}

            def down(b=button):
                sb.hw.press(b)

            def up(b=button):
                stamp["t"] = time.monotonic()
                sb.hw.release(b)

            r.call(down)
            time.sleep(0.08)
            r.call(up)
            push = link.wait_push(5)
            t = time.monotonic()
            if push is None:
                raise RuntimeError("no live event for a pin press")
            pin.append((t - stamp["t"]) * 1000)
    finally:
        link.close()
        r.close()

    def q(xs, p):
        xs = sorted(xs)
        return round(xs[min(len(xs) - 1, int(p * len(xs)))], 2)

    return {
        "live_latency_ms_median": round(statistics.median(gesture), 2),
        "live_latency_ms_p95": q(gesture, 0.95),
        "live_latency_ms_max": round(max(gesture), 2),
        "live_latency_ms_pin_median": round(statistics.median(pin), 2),
        "live_latency_ms_pin_max": round(max(pin), 2),
    }


def _board_state(app, store):
    games = {}
    ids = [g for g, _ in store.archived()]
    if app.game is not None:
        ids.append(store.game_id)
    for g in ids:
        games[g] = [bytes(x).hex() for x in store.records(g)]
    return json.dumps([games, store.archived(), store.settings()], sort_keys=True)


def measure_fuzz(frames=120_000, seed=1):
    from firmware import codec
    import firmware.link
    from tests.kit.app_helpers import Board

    rnd = random.Random(seed)
    board = Board()  # the tests' own board (SimHW, Store on MemFS, App)
    store, app = board.store, board.app
    g = engine_lite.Game()
    lines = open(RECORD_5P).read().splitlines()
    app.new_game(g.encode(json.loads(lines[0])))
    for t in lines[1:60]:
        app.apply(app.game.encode(json.loads(t)))
    dev = firmware.link.Link(firmware.link.AppBoard(app, store, board_id="fuzz", fw="bench"))
    valid = [
        {"op": "hello"}, {"op": "status"}, {"op": "games"}, {"op": "events", "game": store.game_id, "from": 3},
        {"op": "subscribe", "on": True}, {"op": "settings"}, {"op": "new_game", "start": json.loads(lines[0])},
        {"op": "erase", "game": "0001"}, {"op": "mark_synced", "game": store.game_id}, {"op": "press", "button": 1},
    ]
    junk_values = [None, True, -1, 0, 1, 70000, 3.5, "", "0001", "x" * 40, [], {}, [1, "a"], {"names": 5}, {"brightness": "x"}]
    base = _board_state(app, store)
    failures = 0
    kinds = {"garbage": 0, "random_payload": 0, "bitflip": 0, "structured": 0}
    deframe = codec.Deframer(8192)
    error_replies = 0  # 'X' frames the board answered (counted here: the board keeps no count)
    t0 = time.process_time()
    for i in range(frames):
        k = i % 4
        seq = rnd.randrange(0x10000)
        if k == 0:
            wire = bytes(rnd.randrange(256) for _ in range(rnd.randrange(1, 64)))
            if rnd.random() < 0.5:
                wire += b"\x00"
            kinds["garbage"] += 1
        elif k == 1:
            body = bytes(rnd.randrange(256) for _ in range(rnd.randrange(1, 100)))
            wire = codec.encode(body)
            kinds["random_payload"] += 1
        elif k == 2:
            req = dict(rnd.choice(valid))
            w = bytearray(codec.encode(bytes((codec.K_REQ, seq & 255, seq >> 8)) + json.dumps(req).encode()))
            for _ in range(rnd.randint(1, 3)):
                j = rnd.randrange(1, len(w) - 1)
                w[j] ^= 1 << rnd.randrange(8)
            wire = bytes(w)
            kinds["bitflip"] += 1
        else:
            req = dict(rnd.choice(valid))
            for key in rnd.sample(("game", "from", "on", "set", "start", "confirm", "button", "kind", "op"), rnd.randint(1, 3)):
                req[key] = rnd.choice(junk_values)
            wire = codec.encode(bytes((codec.K_REQ, seq & 255, seq >> 8)) + json.dumps(req).encode())
            kinds["structured"] += 1
        try:
            out = dev.feed(wire)
        except Exception:
            failures += 1
            continue
        replies = [p for p in deframe.feed(out) if p[0] != codec.K_PUSH]
        error_replies += sum(1 for p in replies if p[0] == codec.K_ERR)
        if k == 3 and len(replies) != 1:
            failures += 1
        if i % 500 == 499 or i == frames - 1:
            if _board_state(app, store) != base:
                failures += 1
                base = _board_state(app, store)
    cpu = time.process_time() - t0
    return {
        "fuzz_frames": frames,
        "fuzz_failures": failures,
        "fuzz_frames_by_kind": kinds,
        "fuzz_frames_per_second": int(frames / cpu) if cpu else None,
        "fuzz_error_replies": error_replies,
        "fuzz_frames_dropped_by_deframer": dev.rx.dropped,
    }


def measure_cuts(trials=1000, seed=2):
    """Cut the link after a random number of bytes, sync again, compare:
    the database must equal the board's log, without duplicates or gaps."""
    import host.sync.db
    from host.errors import UserError
    from tests.kit import tablebot
    from tests.kit.linkkit import StoreBoard, host_for

    rnd = random.Random(seed)
    bad = 0
    for t in range(trials):
        b = StoreBoard(board_id="cut")
        g = tablebot.stalk_game(t, players=rnd.randint(2, 5)) if t % 2 else tablebot.orchids_game(t, players=rnd.randint(2, 5))
        lines = tablebot.record_lines(g)
        b.load(lines, finish=True)
        b.load(lines[: rnd.randint(1, len(lines))])
        db = host.sync.db.Database(":memory:")
        _, ser, hl = host_for(b, cut_after=rnd.randint(1, 1500), request_timeout=0.005)
        try:
            hl.hello()
            host.sync.db.sync(hl, db)
        except UserError:
            pass
        if rnd.random() < 0.5 and b.game is not None and len(b.game.log) > 1:
            b.play({"ev": "undo"})
        host.sync.db.sync(host_for(b)[2], db)
        ids = [x for x, _ in b.archived()] + ([b.current()] if b.current() else [])
        ok = all(db.records("cut", x) == [bytes(r) for r in b.records(x)] for x in ids)
        # one play per game on the board (a cut never makes a second copy), one row per event
        dup = db.con.execute("SELECT COUNT(*) - COUNT(DISTINCT board || '/' || game_id) FROM games").fetchone()[0]
        bad += (not ok) or dup != 0
        db.close()
    return {"link_cut_trials": trials, "link_cut_mismatches": bad}


def measure(fuzz_frames=120_000, latency_samples=60, cut_trials=1000):
    out = {}
    out.update(measure_cuts(cut_trials))
    out.update(measure_sync())
    out.update(measure_latency(latency_samples))
    out.update(measure_fuzz(fuzz_frames))
    return out


if __name__ == "__main__":
    quick = "--quick" in sys.argv
    res = measure(fuzz_frames=5000 if quick else 120_000, latency_samples=20 if quick else 60, cut_trials=50 if quick else 1000)
    for k, v in res.items():
        print("%-36s %s" % (k, v))

"""The plays history at any size (docs/design.md, "The plays history at any
size"): what a page, an export and a sync cost on 1,000, 10,000 and 100,000
plays, and the dashboard under 1,000 open live pages.

The histories are made by bench/history_db.py through Database.store (every
record judged, the summaries written as a sync writes them) and kept in
~/.cache/bloomkeeper-bench/ (the first run builds them: about 3.5 ms a play,
100,000 plays in 6 to 15 minutes; later runs reuse them, and a history of
an older database version is copied and migrated: bench/history_db.py).

Each figure is one run of the real command, a process of its own
(`bloomkeeper plays`, `export`, `serve`): wall time from the process start
(Python's own start, about 0.15 s here, included), its peak resident memory
(the kernel's maxrss for that process). Budgets (docs/design.md):

plays_page_s          `bloomkeeper plays` (its first page, 50 plays)      <= 0.5 s
export_*              `bloomkeeper export --format F` whole, to a file    <= 200 MB peak, >= 5,000 plays/s
                      (plays_per_s by the wall clock; plays_per_cpu_s by the CPU time the
                      export used, which the machine's other work does not change)
history_page_s        first GET /history of a fresh `serve` (cold cache)   <= 0.5 s
history_page_warm_s   the same page again (cached until a write)
game_page_s           GET /game?play=N of a play in the middle (no chart: Oh My. Orchids!)  <= 0.1 s
game_chart_page_s     the same for a Stalk Exchange play (its market chart written, SVG)  <= 0.1 s
sync_one_game_s       `sync` of one new game into a copy of the database (open, sync, close)   <= 1 s
live_*                1,000 open live pages (event streams) on loopback, and 300 page loads
                      (/, /history, /state.json) alongside: their p50/p99 latency, and every
                      stream still answered
soak_rss_mb_*         the server's resident memory before and after a soak: live pages opened
                      and closed, page loads, a reconnect loop, for SOAK_S seconds

    .venv/bin/python -m bench.bench_history [--sizes 1000,10000,100000] [--soak SECONDS]
"""

import argparse
import json
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUDGETS = {"plays_page_s": 0.5, "history_page_s": 0.5, "game_page_s": 0.1, "game_chart_page_s": 0.1, "sync_one_game_s": 1.0}
BUDGETS.update({"export_%s_%s" % (fmt, k): v for fmt in ("json", "jsonl", "csv", "bgstats", "bgstats-links")
                for k, v in (("peak_mb", 200), ("plays_per_s", 5000))})
LIVE_PAGES = 1000
PAGE_LOADS = 300


def run(args, out=None, cpu=None, to=None):
    """(wall s, peak RSS MB, bytes of stdout) of one bloomkeeper command;
    `cpu` (a list), if given, gets the CPU seconds it used (user + system):
    its own work, whatever else the machine is doing. Its stdout is read
    through a pipe, or written to the file `to` (as `export > plays.json`:
    on a machine busy with other work, a pipe's 64 KiB handed back and forth
    between two processes costs more wall time than the export's own work)."""
    t0 = time.perf_counter()
    sink = open(to, "wb") if to else subprocess.PIPE
    try:
        p = subprocess.Popen([sys.executable, "-m", "host.cli", *args], cwd=ROOT, stdout=sink, stderr=subprocess.PIPE)
    finally:
        if to:
            sink.close()
    n = 0
    while not to:
        chunk = p.stdout.read(1 << 16)
        if not chunk:
            break
        n += len(chunk)
        if out is not None:
            out.append(chunk)
    err = p.stderr.read()
    if to:
        n = os.path.getsize(to)
    _, status, usage = os.wait4(p.pid, 0)
    p.returncode = status
    wall = time.perf_counter() - t0
    if cpu is not None:
        cpu.append(usage.ru_utime + usage.ru_stime)
    if status != 0:
        raise SystemExit("bloomkeeper %s failed: %s" % (" ".join(args), err.decode()[-300:]))
    return wall, usage.ru_maxrss / 1024, n


class Serve:
    """`bloomkeeper serve --port none` on a free port."""

    def __init__(self, db):
        self.p = subprocess.Popen([sys.executable, "-m", "host.cli", "serve", "--port", "none", "--db", db, "--http", "127.0.0.1:0"],
                                  cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        m = re.search(r"http://([\d.]+):(\d+)/", self.p.stdout.readline())
        self.host, self.port = m.group(1), int(m.group(2))

    def get(self, path):
        t0 = time.perf_counter()
        with urllib.request.urlopen("http://%s:%d%s" % (self.host, self.port, path), timeout=120) as r:
            body = r.read()
        return time.perf_counter() - t0, body

    def rss_mb(self):
        with open("/proc/%d/status" % self.p.pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
        return 0.0

    def stream(self):
        s = socket.create_connection((self.host, self.port), timeout=60)
        s.sendall(("GET /events HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n" % self.port).encode())
        return s

    def close(self):
        self.p.terminate()
        self.p.wait(10)


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q / 100 * (len(xs) - 1))))]


def middle_plays(path):
    """(an Oh My. Orchids! play, a Stalk Exchange play) near the middle of the history."""
    import sqlite3

    con = sqlite3.connect("file:%s?mode=ro" % path, uri=True)
    try:
        n = con.execute("SELECT max(id) FROM games").fetchone()[0]
        return tuple(con.execute("SELECT min(play) FROM summaries WHERE play >= ? AND game = ?", (n // 2, g)).fetchone()[0]
                     for g in ("oh-my-orchids", "stalk-exchange"))
    finally:
        con.close()


def sync_one(path, tmp):
    """Seconds to sync one new game (a board with one finished game) into a
    copy of the database: open, sync through the real link, close."""
    import host.sync.db
    from tests.kit.linkkit import StoreBoard, host_for

    copy = os.path.join(tmp, "copy.sqlite3")
    shutil.copy(path, copy)
    b = StoreBoard(uid="newcomer")
    with open(os.path.join(ROOT, "tests", "records", "stalk-4p.jsonl")) as f:
        b.load([t for t in f.read().splitlines() if t.strip()], finish=True)
    link = host_for(b)[2]
    t0 = time.perf_counter()
    db = host.sync.db.Database(copy)
    res = host.sync.db.sync(link, db)
    db.close()
    took = time.perf_counter() - t0
    assert res["added"] > 0
    os.unlink(copy)
    return took


def per_size(n, figures):
    from bench import history_db

    path, built = history_db.history(n, lambda k, t: sys.stderr.write("\r  building %d plays: %d, %.0f s " % (n, k, t)))
    if built:
        sys.stderr.write("\n")
        figures["build_s_%d" % n] = round(built, 1)
    f = {}
    f["plays_page_s"], f["plays_page_peak_mb"], _ = run(["plays", "--db", path])
    tmp = tempfile.mkdtemp(prefix="bk-bench-export-")
    for fmt in ("json", "jsonl", "csv", "bgstats", "bgstats-links"):
        cpu = []
        try:
            wall, peak, size = run(["export", "--db", path, "--format", fmt], cpu=cpu, to=os.path.join(tmp, "plays.out"))
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        os.makedirs(tmp)
        f["export_%s_s" % fmt], f["export_%s_peak_mb" % fmt] = wall, peak
        f["export_%s_plays_per_s" % fmt] = n / wall
        f["export_%s_plays_per_cpu_s" % fmt] = n / cpu[0]
        f["export_%s_mb" % fmt] = size / 1e6
    os.rmdir(tmp)
    orchids, stalk = middle_plays(path)
    srv = Serve(path)
    try:
        f["history_page_s"], _ = srv.get("/history")
        f["history_page_warm_s"], _ = srv.get("/history")
        f["game_page_s"], _ = srv.get("/game?play=%d" % orchids)
        f["game_chart_page_s"], _ = srv.get("/game?play=%d" % stalk)
        f["serve_rss_mb"] = srv.rss_mb()
    finally:
        srv.close()
    tmp = tempfile.mkdtemp(prefix="bk-bench-history-")
    try:
        f["sync_one_game_s"] = sync_one(path, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    for k, v in f.items():
        figures["%s_%d" % (k, n)] = round(v, 3 if v < 10 else 1)
    return path


def live(path, figures):
    """LIVE_PAGES open event streams, PAGE_LOADS page loads alongside."""
    srv = Serve(path)
    socks = []
    try:
        srv.get("/history")  # the cache warm, as on a table where someone looked once
        rss0 = srv.rss_mb()
        t0 = time.perf_counter()
        for _ in range(LIVE_PAGES):
            socks.append(srv.stream())
        heads = 0
        for s in socks:
            got = s.recv(4096)
            heads += got.startswith(b"HTTP/1.0 200")
        figures["live_open_s"] = round(time.perf_counter() - t0, 2)
        figures["live_pages_served"] = heads
        lat = []
        errors = 0
        for i in range(PAGE_LOADS):
            try:
                t, _ = srv.get(("/", "/history", "/state.json")[i % 3])
                lat.append(t * 1000)
            except OSError:
                errors += 1
        figures["live_page_loads_failed"] = errors
        figures["live_page_load_ms_p50"] = round(pct(lat, 50), 1)
        figures["live_page_load_ms_p99"] = round(pct(lat, 99), 1)
        figures["live_rss_mb_1000_pages"] = round(srv.rss_mb(), 1)
        figures["live_rss_mb_before"] = round(rss0, 1)
    finally:
        for s in socks:
            s.close()
        srv.close()


def soak(path, seconds, figures):
    """Live pages opened and closed (200 held, 20 replaced every turn), page
    loads and a client reconnecting in a loop, for `seconds`; the server's
    memory sampled every 10 s."""
    srv = Serve(path)
    stop = threading.Event()
    counts = {"reconnects": 0, "loads": 0, "load_errors": 0}

    def reconnect_loop():
        while not stop.is_set():
            try:
                s = srv.stream()
                s.recv(100)
                s.close()
                counts["reconnects"] += 1
            except OSError:
                pass

    try:
        held = [srv.stream() for _ in range(200)]
        srv.get("/history")
        time.sleep(1)
        samples = [srv.rss_mb()]
        t = threading.Thread(target=reconnect_loop, daemon=True)
        t.start()
        end = time.monotonic() + seconds
        next_sample = time.monotonic() + 10
        while time.monotonic() < end:
            for s in held[:20]:
                s.close()
            held = held[20:] + [srv.stream() for _ in range(20)]
            for p in ("/", "/history", "/state.json"):
                try:
                    srv.get(p)
                    counts["loads"] += 1
                except OSError:
                    counts["load_errors"] += 1
            if time.monotonic() >= next_sample:
                samples.append(srv.rss_mb())
                next_sample += 10
            time.sleep(0.2)
        stop.set()
        t.join(5)
        samples.append(srv.rss_mb())
        for s in held:
            s.close()
    finally:
        srv.close()
    figures["soak_s"] = seconds
    figures["soak_rss_mb_before"] = round(samples[0], 1)
    figures["soak_rss_mb_after"] = round(samples[-1], 1)
    figures["soak_rss_mb_max"] = round(max(samples), 1)
    figures["soak_rss_samples_mb"] = [round(x, 1) for x in samples]
    figures.update({"soak_" + k: v for k, v in counts.items()})


def measure(sizes=(1000, 10000, 100000), soak_s=120):
    figures = {}
    path = None
    for n in sizes:
        print("%d plays ..." % n, file=sys.stderr)
        path = per_size(n, figures)
    print("%d live pages ..." % LIVE_PAGES, file=sys.stderr)
    live(path, figures)
    if soak_s:
        print("soak %d s ..." % soak_s, file=sys.stderr)
        soak(path, soak_s, figures)
    return figures


def table(figures, sizes):
    rows = sorted({k.rsplit("_", 1)[0] for k in figures if k.rsplit("_", 1)[-1] in {str(n) for n in sizes}})
    print("%-28s %s  budget" % ("figure", "".join("%12d" % n for n in sizes)))
    for r in rows:
        vals = "".join("%12s" % figures.get("%s_%d" % (r, n), "") for n in sizes)
        print("%-28s %s  %s" % (r, vals, BUDGETS.get(r, "")))
    for k, v in figures.items():
        if k.startswith(("live_", "soak_")):
            print("%-28s %s" % (k, v))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="1000,10000,100000")
    ap.add_argument("--soak", type=int, default=120, help="seconds of soak (0: none)")
    ap.add_argument("--json", help="also write the figures to this file")
    a = ap.parse_args()
    sizes = [int(x) for x in a.sizes.split(",")]
    figures = measure(sizes, a.soak)
    table(figures, sizes)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(figures, f, indent=1)


if __name__ == "__main__":
    main()

"""`bloomkeeper serve` figures (docs/dashboard.md): how soon a press shows on the page.

* dashboard_latency_ms_*: the simulated board (tests/kit/dashboard_board.py:
  the real firmware, its own process, a pty) handles a gesture (a harvest
  confirmed with OK, or an undo); from the moment the board has handled it
  (the press released, the App stepped: it has pushed the live event) until
  the `state` event carrying the new value arrives at a client of the
  server's event stream (`bloomkeeper serve`, its own process: the event is
  folded, recorded into SQLite, rendered and sent). Median / p95 / max.
"""

import json
import os
import queue
import statistics
import tempfile
import threading
import time
import urllib.request

PRESSES = 12


def _stream(url, out):
    """Read the server's event stream; put (arrival time, snowdrop value) per state event."""
    with urllib.request.urlopen(url + "events", timeout=60) as r:
        event = None
        for raw in r:
            line = raw.decode().rstrip("\n")
            if line.startswith("event: "):
                event = line[7:]
            elif line.startswith("data: ") and event == "state":
                table = json.loads(line[6:])["table"]
                out.put((time.monotonic(), table["values"]["snowdrop"] if table else None))


def measure():
    from tests.kit import dashboard_kit

    with tempfile.TemporaryDirectory() as tmp:
        board = dashboard_kit.Board(tmp).start(fresh=True)
        serve = dashboard_kit.Serve(board.port, os.path.join(tmp, "plays.sqlite3"))
        try:
            serve.wait_state(lambda s: s["link"] == "live" and s["table"] is not None)
            events = queue.Queue()
            threading.Thread(target=_stream, args=(serve.url, events), daemon=True).start()
            _, value = events.get(timeout=30)  # the stream starts with the current state
            harvest = dashboard_kit.live_presses()[0]
            lat = []
            for i in range(PRESSES):
                board.press(harvest if i % 2 == 0 else [(dashboard_kit.UNDO, "short")])
                done = time.monotonic()
                want = value + 1 if i % 2 == 0 else value - 1
                while True:
                    t, v = events.get(timeout=30)
                    if v == want:
                        break
                lat.append(max(0.0, t - done) * 1000)
                value = want
        finally:
            board.kill()
            serve.close()
    lat.sort()
    res = {
        "dashboard_latency_ms_median": round(statistics.median(lat), 1),
        "dashboard_latency_ms_p95": round(lat[min(len(lat) - 1, int(0.95 * len(lat)))], 1),
        "dashboard_latency_ms_max": round(lat[-1], 1),
    }
    for k, v in res.items():
        print("%-32s %s" % (k, v))
    return res


if __name__ == "__main__":
    measure()

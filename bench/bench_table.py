"""The table page on the board (firmware/table_server.py, the Pico W's):
heap, the loop's cost with six phones, page latency, bytes per page load.

What runs: a whole 5-player game of each title (the presses a scorekeeper
makes, tests/kit/button_scripts.py, through tests/kit/game_driver.py: SimHW
pins + debounce + App + the flash Store on a real directory + the serial
link, booted through firmware/main.py load(), exactly as bench_board's heap
figures), in the official MicroPython Unix port with the code in flash as
on the Pico W's frozen image (bench_board's ROMFS mode: the bundle, the
server, the page and the readout in one mounted ROMFS image, whose own bytes
are not counted: bytecode and the page's bytes run in place), with
the board's table server listening on loopback and six phones connected to
its event stream from the start. The phones are client sockets in the same
guest (the Unix port has no threads to spare): their objects and receive
buffers are in the measured heap too, so every heap figure errs high. After
every gesture the server is polled twice (the loop's turn after the
change) and each phone reads what arrived.

Figures:

* ``table_heap_min_kb_full_game_<title>`` (and the larger,
  ``table_heap_min_kb_full_game``): the smallest ``-X heapsize`` in which
  that game ends with the CPython scores and six phones were streamed every
  state (bench_board's bisection). ``table_heap_live_kb_64bit_<title>``:
  the live heap (boot, peak, end) of the same run, and
  ``table_heap_server_kb_<title>``: its peak minus the same game's without
  the server (bench_board's ROMFS run), i.e. what the server's objects, the
  names and tables its modules (and the readout) keep in RAM, the state
  JSON and the six phones cost.
* ``table_heap_min_kb_full_game_32bit_est``: the 64-bit figure x the
  32-bit/64-bit live-heap ratio bench_board measured for the same game (ROMFS)
  in the WebAssembly port (that port has no sockets to run the server in: the
  ratio is borrowed, and said so). Budget (docs/design.md): the Pico W keeps
  at least a third of its heap free, ``table_heap_budget_kb_32bit`` = 2/3 of
  the 200 KB the Pico W's image has (measured on the emulated RP2040:
  bench/bench_chip_pico_w.py).
* ``table_push_us_*``: the server's poll in the turn after a change (the
  state built as JSON once, sent to six phones), Unix-port microseconds,
  median and max over the game; ``table_idle_poll_us_median``: an idle poll
  with six phones connected. The Unix port runs board code ~100-220x faster
  than a Pico (docs/design.md), so x100 and x220 give the Pico range
  (``table_push_ms_pico_est``). Press-to-light with six phones: the ring is
  lit in App.turn, before the poll, so a press in the turn of a change is
  lit as without phones; a press that lands during the push waits at most
  one push (added to bench_path's press-to-light, ``table_press_to_light_added_ms_pico_est_max``).
* ``table_page_latency_us_*``: a change shown on the ring (the end of the
  gesture's App.step) to the state's bytes in all six phones' sockets,
  Unix-port microseconds on loopback (WiFi airtime not included).
* ``table_bytes_page_load_gzip`` / ``_plain``: what one phone receives to
  open the page: the page's response, gzipped or not, plus the event
  stream's head and its first state (the final state of the Stalk
  Exchange game, the largest); ``table_bytes_state_final_<title>``: one
  state event.
"""

import json
import math
import statistics
import tempfile
from pathlib import Path

from bench import bench_board
from host.board_sim.page import free_port
from tests.kit.button_scripts import FULL_GAMES, cpython_result, load_events
from tests.kit.mpy_harness import ROMFS_MOUNT, run_mpy

ROOT = Path(__file__).resolve().parent.parent
PHONES = 6
PICO_W_HEAP_KB = 200  # the RPI_PICO_W image's heap: 205,184 B (bench/bench_chip_pico_w.py on the emulated RP2040)
HEAP_HI = 400

GAME = """
import socket, time
from tests.kit.game_driver import start, step, finish, board
start(%(gestures)r, %(live)r)
print('IMAGE', globals().get('IMAGE_ALLOC', 0))
from firmware.table_server import TableServer
srv = TableServer(board["app"], "127.0.0.1", %(port)d)
addr = socket.getaddrinfo("127.0.0.1", %(port)d)[0][-1]
phones = []
for i in range(%(phones)d):
    c = socket.socket()
    c.connect(addr)
    c.setblocking(False)
    c.send(b"GET /events HTTP/1.1\\r\\n\\r\\n")
    srv.poll()
    phones.append(c)
got = [0] * len(phones)
def drain():
    n = 0
    for i in range(len(phones)):
        try:
            d = phones[i].recv(4096)
        except OSError:
            d = None
        if d:
            got[i] += len(d)
            n += 1
    return n
push = []
idle = []
lat = []
while True:
    t0 = time.ticks_us()
    more = step()
    if not more:
        break
    v = srv.v
    t1 = time.ticks_us()
    srv.poll()
    t2 = time.ticks_us()
    if srv.v != v:
        push.append(time.ticks_diff(t2, t1))
        seen = 0
        while seen < len(phones):
            seen += drain()
        lat.append(time.ticks_diff(time.ticks_us(), t1))
    t3 = time.ticks_us()
    srv.poll()
    idle.append(time.ticks_diff(time.ticks_us(), t3))
    drain()
finish()
print("STREAMED", min(got), srv.v)
if %(timing)r:
    print("PUSH", " ".join(str(x) for x in push))
    print("IDLE", " ".join(str(x) for x in idle))
    print("LAT", " ".join(str(x) for x in lat))
    print("STATE", len(srv.event))
"""


def run_game(tree, live=False, timing=False, heapsize_kb=None):
    code = GAME % {"gestures": bench_board.GESTURES, "live": live, "port": free_port(), "phones": PHONES, "timing": timing}
    return run_mpy(code, setup=ROMFS_MOUNT, heapsize_kb=heapsize_kb, tree=tree, timeout=600).stdout


def _vals(out, key):
    return [int(x) for x in [ln for ln in out.splitlines() if ln.startswith(key + " ")][0].split()[1:]]


def page_bytes():
    """Bytes a phone receives to open the page (head and body as the server sends them)."""
    from firmware import table_page

    head = b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nCache-Control: no-store\r\nConnection: close\r\n"
    tail = b"Vary: Accept-Encoding\r\nContent-Length: %d\r\n\r\n"
    gz = len(head) + len(b"Content-Encoding: gzip\r\n") + len(tail % len(table_page.PAGE_GZ)) + len(table_page.PAGE_GZ)
    plain = len(head) + len(tail % len(table_page.PAGE)) + len(table_page.PAGE)
    stream_head = len(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n")
    return gz, plain, stream_head


def measure():
    out = {"table_phones": PHONES}
    base = json.loads((ROOT / "bench" / "results.json").read_text()) if (ROOT / "bench" / "results.json").exists() else {}
    gz, plain, stream_head = page_bytes()
    states = {}
    with tempfile.TemporaryDirectory(prefix="bk-table-") as tmp:
        for key, path, script_of in FULL_GAMES:
            text = script_of(load_events(ROOT / path))
            want = cpython_result(text)
            tree = bench_board.game_tree(Path(tmp) / key, text, "romfs")
            t = run_game(tree, live=True, timing=True)
            streamed, versions = _vals(t, "STREAMED")
            assert streamed > 0 and versions > 10, t
            image, live = bench_board.live_kb(t)
            out["table_heap_live_kb_64bit_" + key] = dict(zip(("boot", "peak", "end"), live))
            plain_live = base.get("heap_live_kb_64bit_" + key + "_romfs")
            if isinstance(plain_live, dict):
                out["table_heap_server_kb_" + key] = round(live[1] - plain_live["peak"], 1)
            push, idle, lat = _vals(t, "PUSH"), _vals(t, "IDLE"), _vals(t, "LAT")
            out["table_push_us_median_" + key] = statistics.median(push)
            out["table_push_us_max_" + key] = max(push)
            out["table_idle_poll_us_median_" + key] = statistics.median(idle)
            out["table_page_latency_us_median_" + key] = statistics.median(lat)
            out["table_page_latency_us_max_" + key] = max(lat)
            states[key] = _vals(t, "STATE")[0]
            out["table_bytes_state_final_" + key] = states[key]
            kb, tried = bench_board.heap_min_kb(lambda k: run_game(tree, heapsize_kb=k), want, lo=64 + math.ceil(image / 1024), hi=HEAP_HI)
            if kb is not None:
                kb = math.ceil(kb - image / 1024)  # the image is in flash on the board
            out["table_heap_min_kb_full_game_" + key] = kb
            out["table_heap_bisection_" + key] = {str(k): v for k, v in sorted(tried.items())}
            ratio = base.get("heap_32bit_vs_64bit_" + key + "_romfs")
            if kb and ratio:
                out["table_heap_min_kb_full_game_32bit_est_" + key] = math.ceil(kb * ratio)
    keys = [k for k, _, _ in FULL_GAMES]
    out["table_heap_min_kb_full_game"] = max(out["table_heap_min_kb_full_game_" + k] or HEAP_HI + 1 for k in keys)
    ests = [out.get("table_heap_min_kb_full_game_32bit_est_" + k) for k in keys]
    if all(ests):
        out["table_heap_min_kb_full_game_32bit_est"] = max(ests)
    out["table_heap_budget_kb_32bit"] = PICO_W_HEAP_KB * 2 // 3
    push_max = max(out["table_push_us_max_" + k] for k in keys)
    out["table_push_ms_pico_est"] = "%.1f-%.1f (median), %.1f-%.1f (max)" % (
        max(out["table_push_us_median_" + k] for k in keys) * 100 / 1000, max(out["table_push_us_median_" + k] for k in keys) * 220 / 1000,
        push_max * 100 / 1000, push_max * 220 / 1000)
    out["table_press_to_light_added_ms_pico_est_max"] = round(push_max * 220 / 1000, 1)
    out["table_idle_poll_us_median"] = max(out["table_idle_poll_us_median_" + k] for k in keys)
    big = max(states.values())
    out["table_bytes_page_load_gzip"] = gz + stream_head + big
    out["table_bytes_page_load_plain"] = plain + stream_head + big
    return out


if __name__ == "__main__":
    for k, v in sorted(measure().items()):
        print("%s: %s" % (k, v))

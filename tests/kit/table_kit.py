"""What the table page's tests share (tests/board/test_table_server*.py,
tests/host/test_sim_page.py, test_wifi_cmd.py, test_table_page_browser.py):
the Unix-port guest that runs the board's table server beside an App and
its phones, and `bloomkeeper sim --board pico_w --headless` in its own
process."""

import os
import subprocess
import sys
import urllib.request

from host.board_sim.page import free_port  # the Unix port's sockets cannot say which port a bind to 0 took
from tests.kit.alloc_guest import SETUP
from tests.kit.mpy_harness import REPO, run_mpy

RECORDS = os.path.join(REPO, "tests", "records")

GUEST = r"""
import socket
from firmware.table_server import TableServer
import firmware.table_server as ts
clk = [0]
hw = SimHW(None, 24)
hw.strip = NeoPixel(24)
app = App(hw, RamStore(), clock=lambda: clk[0])
logged = []
srv = TableServer(app, "127.0.0.1", PORT, clock=lambda: clk[0], log=logged.append)
ADDR = socket.getaddrinfo("127.0.0.1", PORT)[0][-1]

def turn():
    app.step()
    srv.poll()

def turns(n, ms=0):
    for i in range(n):
        clk[0] += ms
        turn()

def client(req):
    c = socket.socket()
    c.connect(ADDR)
    c.setblocking(False)
    if req:
        c.send(req)
    turn()
    return c

def drain(c):
    out = b""
    while True:
        try:
            d = c.recv(4096)
        except OSError:
            return out
        if not d:
            return out
        out += d

def press(b, kind=1):
    app.press(b, kind)
    turn()
"""

START_STALK_5P = "for b in (6, 4, 6, 6):\n    press(b)\n"


def run(code, **kw):
    port = free_port()
    return run_mpy((GUEST + code).replace("PORT", str(port)), setup=SETUP, **kw)


def lines(out):
    return dict(line.split(" ", 1) for line in out.strip().splitlines() if " " in line)


class PageSim:
    """`bloomkeeper sim --board pico_w --headless --record FILE` in its own process."""

    def __init__(self, record, runtime):
        self.p = subprocess.Popen(
            [sys.executable, "-m", "host.cli", "sim", "--board", "pico_w", "--runtime", runtime, "--headless",
             "--record", record], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.first = [self.p.stdout.readline(), self.p.stdout.readline()]
        if not self.first[1].startswith("page: "):
            self.close()
            raise AssertionError("no page line: %r %s" % (self.first, self.p.stderr.read()))
        self.url = self.first[1].split(" ", 1)[1].strip()

    def get(self, path, **headers):
        req = urllib.request.Request(self.url + path.lstrip("/"), headers=headers)
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, dict(r.headers), r.read()

    def close(self):
        self.p.terminate()
        try:
            self.p.wait(10)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait(10)
        return self.p.stderr.read()

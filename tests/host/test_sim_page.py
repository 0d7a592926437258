"""`bloomkeeper sim --board pico_w`: the board's table page beside the
simulated board, on both runtimes, in --headless mode: `page:` on its own
line after `link:`, the page gzipped where asked, the state live as the
board holds it, and a request that tries to change something refused with
one line on stderr."""

import gzip
import json
import os
import subprocess
import sys
import urllib.error
import urllib.request

import pytest

from firmware import table_page
from tests.kit.mpy_harness import REPO
from tests.kit.table_kit import RECORDS, PageSim


@pytest.mark.parametrize("runtime", ["cpython", pytest.param("micropython", marks=pytest.mark.mpy)])
def test_sim_pico_w_serves_the_table_page_beside_the_board(runtime):
    sim = PageSim(os.path.join(RECORDS, "stalk-5p-crash.jsonl"), runtime)
    try:
        assert sim.first[0].startswith("link: /dev/")
        assert sim.url.startswith("http://127.0.0.1:") and sim.url.endswith("/")
        status, head, body = sim.get("/", **{"Accept-Encoding": "gzip"})
        assert status == 200 and head["Content-Encoding"] == "gzip" and gzip.decompress(body) == table_page.PAGE
        status, head, body = sim.get("/")
        assert "Content-Encoding" not in head and body == table_page.PAGE
        doc = json.loads(sim.get("/state.json")[2])
        final = doc["table"]["final"]
        assert doc["table"]["game"] == "stalk-exchange" and [p["name"] for p in final["players"]] == ["P2", "P1", "P5", "P3", "P4"]
        assert "more dahlias" in final["players"][3]["tiebreak"]
        req = urllib.request.Request(sim.url + "state.json", data=b"tokens=99", method="POST")
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(req, timeout=10)
        assert err.value.code == 405
        assert json.loads(sim.get("/state.json")[2]) == doc  # nothing changed
    finally:
        stderr = sim.close()
    assert [line for line in stderr.splitlines() if "table page" in line] == [
        "bloomkeeper: sim: table page: 405 method b'POST': the table is read-only"]


def test_sim_pico_has_no_page():
    p = subprocess.Popen([sys.executable, "-m", "host.cli", "sim", "--headless", "--record",
                          os.path.join(RECORDS, "stalk-2p.jsonl")], cwd=REPO, stdout=subprocess.PIPE, text=True)
    try:
        assert p.stdout.readline().startswith("link: ")
    finally:
        p.terminate()
        out = p.communicate(timeout=10)[0]
    assert "page:" not in out

"""`bloomkeeper wifi` against a simulated Pico W over its serial link: the
card's access point by default, a network to join stored in the board's
settings, the password never sent back, a bad name or password one line
that sends nothing."""

import os
import subprocess
import sys

from firmware.wifi import default_ap
from tests.kit.table_kit import RECORDS, PageSim
from tests.kit.mpy_harness import REPO


def bk(*args):
    return subprocess.run([sys.executable, "-m", "host.cli", *args], cwd=REPO, capture_output=True, text=True, timeout=60)


def test_wifi_shows_the_card_then_joins_a_network_and_never_echoes_the_password():
    sim = PageSim(os.path.join(RECORDS, "stalk-2p.jsonl"), "cpython")
    port = sim.first[0].split(" ", 1)[1].strip()
    try:
        r = bk("wifi", "--port", port)
        assert r.returncode == 0, r.stderr
        assert r.stdout.startswith("its own access point bloomkeeper-") and ", password bloom-" in r.stdout
        r = bk("wifi", "join", "--ssid", "x", "--password", "short", "--port", port)
        assert r.returncode == 2 and r.stderr.strip().count("\n") == 0 and "8-63" in r.stderr
        r = bk("wifi", "join", "--ssid", "Table net", "--password", "s3cret-pass", "--port", port)
        assert r.returncode == 0, r.stderr
        assert "joins the network Table net" in r.stdout and "s3cret-pass" not in r.stdout
        r = bk("wifi", "--port", port)
        assert "joins the network Table net" in r.stdout and "s3cret-pass" not in r.stdout + r.stderr
        r = bk("wifi", "ap", "--port", port)
        assert r.returncode == 0 and "its own access point bloomkeeper-" in r.stdout, r.stderr
    finally:
        sim.close()


def test_the_cards_access_point_is_the_boards_own_and_wpa2_long():
    name, password = default_ap("e6614c311b7a8d2f")
    assert name == "bloomkeeper-8d2f" and password == "bloom-7a8d2f" and 8 <= len(password) <= 63

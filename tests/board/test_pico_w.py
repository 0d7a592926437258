"""The Pico W's entry (firmware/pico_w.py) and WiFi settings (firmware/wifi.py).

The radio itself needs the chip; what is held here: a board whose radio
cannot come up (the Unix port has no `network` module) plays on with the
plain loop turn and says why in its fault log, inside the real MicroPython;
the settings choose the access point or the network to join."""

import pytest

from firmware.wifi import Wifi, default_ap
from tests.kit.alloc_guest import SETUP
from tests.kit.mpy_harness import run_mpy


@pytest.mark.mpy
def test_without_a_radio_the_board_plays_on_and_logs_why():
    r = run_mpy(
        """
from boardkit.memfs import MemFS
from firmware import main, pico_w
hw = SimHW(None, 24)
hw.uid = "e6614c311b7a8d2f"
app = App(hw, Store(fs=MemFS()))
turn = pico_w.with_table(app)
print("plain", turn is main.loop_step)
print("fault", app.store.faults().strip())
""",
        setup=SETUP,
    )
    out = dict(line.split(" ", 1) for line in r.stdout.strip().splitlines())
    assert out["plain"] == "True", r.stdout
    assert out["fault"].startswith("wifi off: ") and "network" in out["fault"], r.stdout


def test_settings_choose_the_access_point_or_the_network():
    ap = Wifi({}, "e6614c311b7a8d2f")
    assert (ap.mode, ap.ssid, ap.password) == ("ap",) + default_ap("e6614c311b7a8d2f")
    own = Wifi({"wifi": {"mode": "ap", "ssid": "Our table", "password": "petals-and-stalks"}}, "e6614c311b7a8d2f")
    assert (own.mode, own.ssid, own.password) == ("ap", "Our table", "petals-and-stalks")
    join = Wifi({"wifi": {"mode": "join", "ssid": "Home", "password": "home-pass"}}, "e6614c311b7a8d2f")
    assert (join.mode, join.ssid, join.password) == ("join", "Home", "home-pass")

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


class Radio:
    """The radio's two answers firmware/wifi.py asks (network.WLAN's
    isconnected, joined, and status, the access point's link): the chip's,
    which no test here can ask (bench/bench_chip_pico_w.py asks the real
    image on the emulated chip, which has no radio: status 0)."""

    def __init__(self):
        self.up = False

    def isconnected(self):
        return self.up

    def status(self):
        from firmware.wifi import LINK_UP

        return LINK_UP if self.up else 0


def test_a_change_of_the_link_is_said_once_and_the_radio_asked_twice_a_second():
    from firmware.wifi import CHECK_MS

    net = Wifi({"wifi": {"mode": "join", "ssid": "Home", "password": "home-pass"}}, "e6614c311b7a8d2f")
    net.nic = Radio()
    assert net.changed(0) is False  # down, as it started
    net.nic.up = True
    assert net.changed(CHECK_MS - 1) is False  # not asked yet
    assert net.changed(CHECK_MS) is True and net.is_up
    assert net.changed(2 * CHECK_MS) is False  # once
    net.nic.up = False
    assert net.changed(3 * CHECK_MS) is True and not net.is_up


def test_the_access_point_is_up_only_when_its_link_is():
    """MicroPython's active() is its own flag, True after active(True) even
    if the radio never answered: the ring would say WiFi is up with no page
    to reach. The access point's link status is the radio's answer."""
    from firmware.wifi import CHECK_MS

    net = Wifi({}, "e6614c311b7a8d2f")
    net.nic = Radio()
    net.nic.active = lambda: True  # asked for, whatever the radio did
    assert net.changed(0) is False and not net.is_up
    net.nic.up = True  # the radio brought the access point's link up
    assert net.changed(CHECK_MS) is True and net.is_up


def test_a_radio_that_never_comes_up_is_said_once_after_the_grace():
    """The emulated Pico W (no radio: bench/bench_chip_pico_w.py) answers
    status 0 and active() True: the ring says WiFi is down, once, after
    GRACE_MS, not up and not nothing."""
    from firmware.wifi import CHECK_MS, GRACE_MS

    net = Wifi({}, "e6614c311b7a8d2f")
    net.nic = Radio()
    said = [t for t in range(0, GRACE_MS + 4 * CHECK_MS, CHECK_MS) if net.changed(t)]
    assert said == [GRACE_MS] and net.is_up is False

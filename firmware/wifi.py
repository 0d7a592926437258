"""The Pico W's WiFi: its own access point unless told to join a network.

What the players expect (docs/phones.md): with nothing configured the board
is an access point whose name and password are derived from its unique id
and printed on its reference card (`bloomkeeper wifi` prints them for this
board); the host can change them (`bloomkeeper wifi ap ...`) or make the
board join the table's network instead (`bloomkeeper wifi join ...`). Both
are kept in the board's settings under "wifi" (firmware/link.py checks
them); the password is never sent back over the link.

Why up() returns at once: joining a network takes seconds, and the board's
loop must not wait for it (the server listens on every interface, so it
answers as soon as the link is up). changed() asks the radio every CHECK_MS
whether the link is up and says so once per change (and once if it is not
up GRACE_MS after the first ask): the ring shows its WiFi pattern then
(firmware/ring.py NET_MS), once.
"""

from firmware.buttons import ticks_diff

CHECK_MS = 500  # the radio is asked this often, not every loop turn
# The access point is up when its interface's link is (network.WLAN.status()
# with no argument: cyw43_tcpip_link_status, 3 = CYW43_LINK_UP, the AP's
# netif up with its address). Not active(): MicroPython's own flag, True
# after active(True) even when the radio never answered (the emulated Pico
# W has none: bench/bench_chip_pico_w.py), and not isconnected(), which for
# an access point also waits for a phone to join.
LINK_UP = 3
GRACE_MS = 10000  # joining a network takes seconds: "down" is said only after this

AP_PREFIX = "bloomkeeper-"


def default_ap(uid_hex):
    """(name, password) of a board's own access point, from its unique id:
    the same every boot, different per board, printed on its card."""
    tail = uid_hex[-6:].lower()
    return AP_PREFIX + tail[-4:], "bloom-" + tail


class Wifi:
    def __init__(self, settings, uid_hex):
        w = settings.get("wifi") or {}
        self.mode = w.get("mode", "ap")
        ssid, password = default_ap(uid_hex)
        self.ssid = w.get("ssid") or ssid
        self.password = w.get("password") or password
        self.nic = None
        self.is_up = None  # not yet said
        self._at = -1  # when the radio was last asked
        self._since = -1  # when it was first asked

    def up(self):
        """Start the radio (returns at once)."""
        import network

        if self.mode == "join":
            self.nic = network.WLAN(network.STA_IF)
            self.nic.active(True)
            self.nic.connect(self.ssid, self.password)
        else:
            self.nic = network.WLAN(network.AP_IF)
            self.nic.config(ssid=self.ssid, password=self.password)
            self.nic.active(True)

    def changed(self, now):
        """True once when the link came up or went down (asked every
        CHECK_MS), and once if it is still not up GRACE_MS after the first
        ask: a radio that never comes up is said, not left silent."""
        if self.nic is None or (self._at >= 0 and ticks_diff(now, self._at) < CHECK_MS):
            return False
        self._at = now
        if self._since < 0:
            self._since = now
        up = self.nic.isconnected() if self.mode == "join" else self.nic.status() == LINK_UP
        if up == self.is_up or (self.is_up is None and not up and ticks_diff(now, self._since) < GRACE_MS):
            return False
        self.is_up = up
        return True

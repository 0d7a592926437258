"""The Pico W's WiFi pattern on the ring (firmware/ring.py _net): up = the
ring fills blue clockwise from px 0, down = four blue marks blink; shown
once, NET_MS after the change, then the screen as it was; drawn without
allocating, inside the real MicroPython."""

import pytest

from firmware import ring
from tests.kit.alloc_guest import SETUP
from tests.kit.mpy_harness import run_mpy


def lit(buf):
    return [i for i in range(len(buf) // 3) if any(buf[3 * i : 3 * i + 3])]


def frame(view, now):
    r = ring.Ring(24)
    return bytes(r.render(view, now))


def test_up_fills_the_ring_once_and_down_blinks_four_marks():
    v = ring.View()
    plain = frame(v, 10_000)
    v.net_at, v.net_up = 10_000, True
    assert lit(frame(v, 10_000)) == [0]
    assert lit(frame(v, 10_000 + ring.NET_MS // 2)) == list(range(13))
    assert lit(frame(v, 10_000 + ring.NET_MS - 1)) == list(range(24))
    assert frame(v, 10_000 + ring.NET_MS) == plain  # once: then the screen as it was
    v.net_up = False
    assert lit(frame(v, 10_000)) == [0, 6, 12, 18]
    assert lit(frame(v, 10_000 + 300)) == []  # blinking: off
    assert lit(frame(v, 10_000 + 500)) == [0, 6, 12, 18]
    px = frame(v, 10_000)
    assert px[0:3] == px[18:21] and px[2] > px[0] and px[2] > px[1]  # blue


@pytest.mark.mpy
def test_the_pattern_is_drawn_without_allocating():
    r = run_mpy(
        """
ring = firmware.ring.Ring(24)
view = firmware.ring.View()
ring.render(view, 0)  # the first frame prepares the screen (as the board's first frame does)
def frames():
    for up in (True, False):
        view.net_up = up
        view.net_at = 1000
        for t in range(1000, 2600, 37):
            ring.render(view, t)
print("locked", locked(frames), untouched(frames))
""",
        setup=SETUP,
    )
    assert "locked ok ok" in r.stdout, r.stdout

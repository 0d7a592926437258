"""Power cuts on real littlefs with the ring ahead of the flash.

The board shows an event on the ring, then the same loop step writes it to
flash and only then acknowledges it (firmware/app.py settle). A cut in
between may lose that one shown event, never an acknowledged one. This runs
tests/kit/lfs_powercut.py's campaign inside the real MicroPython (the Unix port,
littlefs with the rp2 port's geometry: tests/kit/lfs_flash.py) on whole 5-player
games of both titles played through the pins, on a sample of the cut points
(every 40th block operation, a program also torn at half its bytes); the
bench (bench/bench_board.py, powercut_lfs_*) cuts at every one.
"""

import json

import pytest

from tests.kit.button_scripts import FULL_GAMES, load_events
from tests.kit.mpy_harness import REPO, run_mpy

pytestmark = pytest.mark.mpy

STRIDE = 40


@pytest.mark.parametrize("name, path, to_script", FULL_GAMES, ids=[g[0] for g in FULL_GAMES])
def test_a_cut_loses_no_acknowledged_event_and_at_most_the_one_shown(name, path, to_script):
    text = to_script(load_events(REPO / path))
    code = "import json\nprint('RES', json.dumps(campaign(%r, %d, window=False)))" % (text, STRIDE)
    r = run_mpy(code, setup="from tests.kit.lfs_powercut import campaign", heapsize_kb=12000, timeout=600)
    res = json.loads([x for x in r.stdout.splitlines() if x.startswith("RES ")][0][4:])
    assert res["bad"] == [] and res["unmountable"] == 0
    assert res["durable_lost"] == 0
    assert res["shown_lost_max"] == 1  # the one event in flight, when the cut falls after its light
    assert res["window"] > 0 and res["kept"] > 0  # the sample reached both sides of the frame's landing
    assert res["points"] >= res["ops"] // STRIDE and res["erases"] > 0 and res["events"] > 50

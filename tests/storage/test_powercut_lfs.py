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


# A cut right after the first commit of a segment's move (a rename from the
# live directory to the games directory): on remount littlefs holds the
# move as pending, and until its first write it hides the file after the
# moved one in the live directory (the segment being written, with
# acknowledged events in it). Store.boot writes first (a remove), which
# makes littlefs settle the move; without that write this boot lost them.
MOVE_CUT = """
import os
from firmware.storage import Store
from engine_lite import record
from tests.kit.lfs_flash import Flash, mount, unmount, PROG
import engine_lite, json
def game(f, cut=None):
    mount(f, "/flash")
    store = Store("/flash/bk", clock=lambda: 0)
    store.boot()
    g = store.new_game(START)
    n = 1
    while store.log.moving < 1:  # l1 to move, l2 begun: l2 sorts after it (the case littlefs hides)
        store.apply(g, record.encode_take(1 + n % 3))
        store.apply(g, record.END_TURN)
        n += 2
    ops = []
    f.log = lambda kind, b, off, nb: ops.append(kind)
    if cut is not None:
        f.cut_at(f.ops + cut)
    try:
        store.quiet()
    except OSError:
        pass
    f.log = None
    unmount("/flash")
    return n, ops
f = Flash()
n, ops = game(f)
first = ops.index(PROG)  # the move's first commit
f = Flash()
game(f, cut=first + 1)
f.power_on()
mount(f, "/flash", mkfs=False)
g = Store("/flash/bk").boot()
print(json.dumps([n, len(g.log)]))
"""


def test_a_cut_inside_a_segment_s_move_hides_no_acknowledged_event():
    import engine_lite

    start = "START = %r" % (engine_lite.Game().encode(load_events(REPO / "tests/records/orchids-5p.jsonl")[0]),)
    r = run_mpy(start + "\n" + MOVE_CUT, heapsize_kb=4000)
    played, booted = json.loads(r.stdout.strip().splitlines()[-1])
    assert booted == played

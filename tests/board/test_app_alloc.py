"""Inside a real MicroPython (the official Unix port): rendering a frame and handling
a button event allocate nothing (docs/design.md: an allocation can trigger a
garbage collection, milliseconds on the Pico, inside a gesture).

Two proofs, because heap_lock alone misses one kind of allocation: a call
of a bytecode function whose locals and stack take more than 11 slots gets
its frame from the heap with m_malloc_maybe, which under heap_lock quietly
falls back to the C stack instead of raising. Such a frame costs a search
for a free block on every call (gc_alloc: most of the slowest frame in
bench_path, in a fragmented heap). So the frames are also counted with
micropython.mem_total() (every byte ever allocated): it must not move.

What runs under heap_lock:
* Ring.render for every screen of both games at many instants;
* App.press(OK) = a Stalk Exchange plant: gesture -> engine judge -> log ->
  on_event hooks -> view update, and the other play gestures (swap, harvest
  counting, end turn);
* a whole App.step() that polls the pins, debounces, handles the press and
  pushes the changed pixels into a MicroPython-style NeoPixel buffer.
The flash write itself is the one step that must allocate (a file object per
open, a frame buffer): the store here is a RAM stand-in with a preallocated
log, and the bytes the real flash Store allocates per event are measured and
bounded separately.
"""

import pytest

from firmware import ring as firmware_ring
from tests.kit.alloc_guest import SETUP
from tests.kit.button_scripts import FULL_GAMES, load_events
from tests.kit.mpy_harness import REPO, run_mpy
from tests.kit.ring_tour import RING_TOUR

pytestmark = pytest.mark.mpy


STALK_5P = """
hw = SimHW(None, 24)
hw.strip = NeoPixel(24)
app = App(hw, RamStore())
hooked = [0]
def hook(gid, index, rec):
    hooked[0] += 1
app.on_event.append(hook)
for b in (6, 4, 6, 6):  # Stalk Exchange, 5 players, start space, go
    app.press(b, 1)
assert app.screen == 'stalk', app.screen
gc.collect()
"""


def _lines(out):
    return dict(line.split(" ", 1) for line in out.strip().splitlines())


def test_render_allocates_nothing_on_any_screen():
    code = (
        STALK_5P
        + """
ring = app.ring
view = app.view
def frames():
    for t in range(0, 3000, 37):
        ring.render(view, t)
screens = []
counted = []
def screen():
    screens.append(locked(frames))
    counted.append(untouched(frames))
""" + RING_TOUR + """
print('render', ' '.join(screens))
print('counted', ' '.join(counted))
"""
    )
    r = run_mpy(code, setup=SETUP)
    res = _lines(r.stdout)["render"].split()
    assert res and set(res) == {"ok"}, r.stdout
    counted = _lines(r.stdout)["counted"].split()
    assert len(counted) == len(res) and set(counted) == {"ok"}, r.stdout


@pytest.mark.parametrize("key, record, to_script", FULL_GAMES, ids=[g[0] for g in FULL_GAMES])
def test_the_results_screen_redraws_without_allocating(key, record, to_script):
    """The real path of the slowest frame: a whole 5-player game played
    through the App to its results screen, then App.show (render, the
    comparison with the last frame, the copy into the strip's buffer, the
    write) frame after frame of its animation."""
    lines = to_script(load_events(REPO / record)).splitlines()[:-1]  # the last OK would leave the results
    code = """
from boardkit import script
hw = SimHW(None, 24)
hw.strip = NeoPixel(24)
app = App(hw, Store(fs=MemFS()))
n = 0
for line in %r:
    n += 1
    g = script.parse_line(line, n)
    if g is not None:
        script.play(app, hw, (g,))
gc.collect()
def frames():
    for _ in range(80):  # 3 s of its animation
        hw.advance(37)
        app.show()
w = hw.strip.writes
print('screen', app.screen, app.view.mode)
print('locked', locked(frames))
print('counted', untouched(frames))
print('written', hw.strip.writes - w > 80)
""" % (lines,)
    r = run_mpy(code, setup=SETUP)
    out = _lines(r.stdout)
    mode = firmware_ring.M_STALK_END if key.startswith("stalk") else firmware_ring.M_ORCHIDS_END
    assert out["screen"] == "results %d" % mode, r.stdout
    assert out["locked"] == "ok" and out["counted"] == "ok", r.stdout
    assert out["written"] == "True", r.stdout  # the animation really redrew (the winners pulse)


def test_handling_play_gestures_allocates_nothing():
    code = (
        STALK_5P
        + """
def plant():
    app.press(6, 1)      # OK: plant
def swap():
    app.press(7, 1)      # MENU: swap
def count():
    app.press(4, 1)      # tulip: count one harvested tulip
def end_turn():
    app.press(6, 2)      # hold OK: end turn
before = app.game.table.actions
print('plant', locked(plant))
print('swap', locked(swap))
print('count', locked(count))
print('state', app.game.table.actions - before, app.harvest.flower, app.harvest.n, hooked[0])
app.press(5, 1)          # UNDO takes the count back (not locked)
print('end_turn', locked(end_turn))
print('player', app.game.table.player)
"""
    )
    r = run_mpy(code, setup=SETUP)
    out = _lines(r.stdout)
    assert out["plant"] == "ok" and out["swap"] == "ok" and out["count"] == "ok", r.stdout
    assert out["end_turn"] == "ok", r.stdout
    # the plant and swap really happened (2 actions, 2 hooks after the start), tulip counted once
    assert out["state"] == "2 4 1 3", r.stdout
    assert out["player"] == "1"


def test_a_whole_loop_step_with_a_press_allocates_nothing():
    """Pins -> debounce -> gesture -> plant -> ring -> NeoPixel buffer."""
    code = (
        STALK_5P
        + """
def idle():
    for _ in range(60):  # 300 ms: the start's green acknowledgement is over
        hw.advance(5)
        app.step()
def press_and_release():
    hw.press(6)
    for _ in range(8):
        hw.advance(5)
        app.step()
    hw.release(6)
    for _ in range(8):
        hw.advance(5)
        app.step()
idle()
w = hw.strip.writes
a = app.game.table.actions
print('idle', locked(idle))
print('press', locked(press_and_release))
print('done', app.game.table.actions - a, hw.strip.writes > w)
"""
    )
    r = run_mpy(code, setup=SETUP)
    out = _lines(r.stdout)
    assert out["idle"] == "ok" and out["press"] == "ok", r.stdout
    assert out["done"] == "1 True", r.stdout


def test_flash_store_allocation_per_event_is_small():
    """The real Store on (in-memory) flash: a file open and a frame per event.
    Measured with the GC off; bounded so it cannot quietly grow."""
    code = """
hw = SimHW(None, 24)
app = App(hw, Store(fs=MemFS()))
for b in (6, 4, 6, 6):
    app.press(b, 1)
gc.collect()
gc.disable()
a = gc.mem_alloc()
app.press(6, 1)
b = gc.mem_alloc()
gc.enable()
print('flash_plant_bytes', b - a)
"""
    r = run_mpy(code, setup=SETUP)
    n = int(_lines(r.stdout)["flash_plant_bytes"])
    print("bytes allocated by one plant through the flash Store:", n)
    assert 0 < n < 2048

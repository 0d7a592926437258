"""The board's main loop (firmware/main.py loop_step and its tidy): an idle
turn allocates nothing and asks the heap nothing, and the garbage is
collected once per quiet spell of the buttons, never inside a gesture.

Why it matters: on the Pico, gc.mem_free() and gc.mem_alloc() each walk the
heap's whole allocation table (about 7 ms each), so a loop that asked them
every turn ran every ~20 ms instead of every 5 ms, and a release was seen up
to a whole period late. A collection is milliseconds too: it must fall in a
pause, not between a press and its light.
"""

import json

import pytest

import firmware.main as board_main
from firmware.buttons import Buttons
from firmware.main import QUIET_MS, tidy
from tests.kit.button_scripts import FULL_GAMES, cpython_result, load_events
from tests.kit.mpy_harness import REPO, guest_tree, run_mpy


class Pin:
    def __init__(self):
        self.v = 1

    def value(self):
        return self.v


class QuietStore:
    """Counts the quiet work tidy asks of the Store."""

    def __init__(self):
        self.quiet_spells = 0

    def quiet(self):
        self.quiet_spells += 1


class Board:
    """Just what tidy reads of an App: its buttons (on a stepped clock) and its store."""

    def __init__(self):
        self.t = 0
        self.pins = [Pin() for _ in range(8)]
        self.buttons = Buttons(self.pins, lambda: self.t)
        self.store = QuietStore()

    def run(self, ms, collected):
        for _ in range(0, ms, 5):
            self.t += 5
            self.buttons.poll()
            tidy(self)
        return len(collected)


def test_tidy_does_the_quiet_work_once_per_quiet_spell_never_inside_a_gesture(monkeypatch):
    collected = []
    monkeypatch.setattr(board_main.gc, "collect", lambda: collected.append(1))
    b = Board()
    assert b.run(QUIET_MS + 10, collected) == 1  # quiet since boot: one collection
    assert b.run(5000, collected) == 1  # still quiet: nothing more to do
    b.pins[6].v = 0  # a long press: nothing until well after its LONG has fired
    assert b.run(QUIET_MS - 10, collected) == 1
    assert b.run(20, collected) == 2  # held on past the quiet time: its release fires nothing
    b.pins[6].v = 1
    assert b.run(QUIET_MS - 10, collected) == 2  # released, but not quiet long enough yet
    assert b.run(20, collected) == 3  # now: once
    for _ in range(10):  # taps 300 ms apart: the player is playing, no collection
        b.pins[2].v = 0
        b.run(60, collected)
        b.pins[2].v = 1
        b.run(240, collected)
    assert len(collected) == 3
    assert b.run(QUIET_MS + 10, collected) == 4
    assert b.store.quiet_spells == 4  # the Store's quiet work comes with each collection, never inside a gesture


class PiecesStore(QuietStore):
    """A Store with quiet work in `left` pieces (CircuitPython's spread
    finish: Store.quiet answers True while pieces remain)."""

    left = 0

    def quiet(self):
        QuietStore.quiet(self)
        self.left = max(0, self.left - 1)
        return self.left > 0


def test_quiet_work_in_pieces_goes_on_one_a_turn_until_a_button_moves(monkeypatch):
    monkeypatch.setattr(board_main.gc, "collect", lambda: None)
    b = Board()
    b.store = PiecesStore()
    b.store.left = 6
    b.run(QUIET_MS - 10, [])
    assert b.store.quiet_spells == 0  # not quiet long enough yet
    b.run(10, [])
    b.run(5, [])
    assert b.store.quiet_spells == 2  # quiet: a piece each turn
    b.pins[2].v = 0  # a press: no piece while it lasts, nor until the buttons rest again
    b.run(60, [])
    b.pins[2].v = 1
    b.run(QUIET_MS - 10, [])
    assert b.store.quiet_spells == 2
    b.run(40, [])  # rested: the remaining four, one a turn, then nothing more
    assert b.store.quiet_spells == 6 and b.store.left == 0
    b.run(1000, [])
    assert b.store.quiet_spells == 6


# An idle turn of the real loop, in the real MicroPython at the Pico's heap,
# on the real Store (MemFS flash) and a NeoPixel-style strip: the setup screen, then a game's play
# screen, each turn with the heap locked. The turns run through QUIET_MS,
# so the quiet collection falls inside the locked turns too (a collection
# allocates nothing).
IDLE = """
import gc, json, micropython
from boardkit.hw_sim import SimHW
from boardkit.memfs import MemFS
from firmware.storage import Store
from firmware.app import App
from firmware.main import loop_step, QUIET_MS, SLEEP_MS
class NeoPixel:
    # MicroPython's neopixel.NeoPixel as the App sees it: buf in GRB ORDER, write()
    ORDER = (1, 0, 2, 3)
    def __init__(self, n):
        self.buf = bytearray(3 * n)
    def write(self):
        pass
hw = SimHW(None, 24)
hw.strip = NeoPixel(24)
app = App(hw, Store(fs=MemFS()))
sleep_ms = hw.advance
res = []
def idle(turns):
    r = 'ALLOC'
    n = 0
    micropython.heap_lock()
    try:
        for n in range(turns):
            loop_step(app, sleep_ms)
        r = 'ok'
    except MemoryError:
        pass
    micropython.heap_unlock()
    return r
def untouched(turns):
    # heap_lock does not see a call frame taken from the heap (MicroPython
    # falls back to the C stack): count every byte allocated instead
    t = micropython.mem_total()
    for n in range(turns):
        loop_step(app, sleep_ms)
    return micropython.mem_total() - t
def tap(b):
    hw.press(b)
    for _ in range(36 // SLEEP_MS):  # held 36 ms of turns (a press needs 20)
        loop_step(app, sleep_ms)
    hw.release(b)
    for _ in range(12 // SLEEP_MS):
        loop_step(app, sleep_ms)
for _ in range(50):
    loop_step(app, sleep_ms)  # the first frames drawn, caches warm
turns = 2 * QUIET_MS // SLEEP_MS  # the turns' pauses alone make twice the quiet time
res.append([app.screen, idle(turns), app.faults, untouched(turns)])
tap(6)  # Stalk Exchange: its rules load once, after the light (App.settle)
res.append([app.screen, idle(turns), app.faults, untouched(turns)])
for b in (4, 6, 6):  # 5 players, start space, go
    tap(b)
tap(6)  # a plant: garbage on the heap, collected in the next quiet spell
junk = [bytearray(64) for _ in range(50)]
junk = None
before = gc.mem_alloc()
res.append([app.screen, idle(turns), app.faults, gc.mem_alloc() < before, untouched(turns)])
print(json.dumps(res))
"""


@pytest.mark.mpy
def test_an_idle_loop_turn_allocates_nothing_in_real_micropython():
    setup, players, play = json.loads(run_mpy(IDLE, heapsize_kb=240).stdout)
    # idle turns ran locked and allocated not a byte, their call frames
    # included (a frame over 11 slots comes from the heap: firmware/main.py run),
    # before the title's choice and after it (its rules loaded once, not every turn)
    assert setup == ["setup_game", "ok", 0, 0]
    assert players == ["setup_players", "ok", 0, 0]
    # the plant went through, every idle turn ran locked, and the quiet
    # collection inside them freed the garbage
    assert play == ["stalk", "ok", 0, True, 0]


class _Stop(BaseException):
    """Ends run()'s loop in a test, as Ctrl-C would (not an Exception)."""


def test_the_loop_recovers_from_a_fault_and_goes_on(monkeypatch):
    """run() guards the turns once, around all of them: a turn that raises
    is recovered (App.recover) and the turns go on."""
    seen = []

    class FlakyApp:
        buttons = Board().buttons

        def turn(self):
            seen.append("turn")
            if len(seen) == 2:
                raise OSError("flash failed")
            if len(seen) > 4:
                raise _Stop

        def recover(self, e):
            seen.append("recover: %s" % e)

    with pytest.raises(_Stop):
        board_main.run(FlakyApp(), lambda ms: None)
    assert seen == ["turn", "turn", "recover: flash failed", "turn", "turn"]


# A whole game from boot, as firmware/main.py boots (load(), in the game
# driver): which modules load after boot, by the game's start and by its end.
TITLE_RULES = """
import sys
from tests.kit.game_driver import start, step, finish, board
booted = set(sys.modules)
start('gestures.txt')
while board['app'].game is None and step():
    pass
print('STARTED', ' '.join(sorted(set(sys.modules) - booted)))
while step():
    pass
finish()
print('ENDED', ' '.join(sorted(set(sys.modules) - booted)))
"""


@pytest.mark.mpy
@pytest.mark.parametrize("key,record,script_of", FULL_GAMES, ids=[g[0] for g in FULL_GAMES])
def test_a_game_loads_its_titles_rules_alone_when_it_starts(tmp_path, key, record, script_of):
    """load() brings in every board module at boot, so that their loading
    garbage is collected before the game allocates (firmware/main.py); the
    title's rules come once setup is past the title's choice, and only
    that title's (engine_lite/game.py rules, App.settle): the other
    title's bytecode never takes the heap, and nothing of the host's rules
    (table_score, readout, stamp) is ever imported on the board."""
    text = script_of(load_events(REPO / record))
    tree = guest_tree(tmp_path / "t")
    (tree / "gestures.txt").write_text(text)
    lines = run_mpy(TITLE_RULES, heapsize_kb=240, tree=tree, timeout=600).stdout.splitlines()
    rules = " ".join(sorted(["engine_lite.ranking", "engine_lite.stalk" if key.startswith("stalk") else "engine_lite.orchids"]))
    assert [x for x in lines if x.startswith(("STARTED", "ENDED"))] == ["STARTED " + rules, "ENDED " + rules]
    assert [x for x in lines if x.startswith("RESULT")] == [cpython_result(text)]


TWO_TITLES = """
import sys
from tests.kit.game_driver import start, step, finish, board
start('gestures.txt')
app = board['app']
for want_game in (True, False, True):  # Stalk Exchange starts, ends; Oh My. Orchids! starts
    while (app.game is None) == want_game and step():
        pass
print('SECOND', ' '.join(sorted(m for m in sys.modules if m in ('engine_lite.stalk', 'engine_lite.orchids'))))
while step():
    pass
finish()
"""


@pytest.mark.mpy
def test_a_board_holds_one_titles_rules_after_playing_both(tmp_path):
    """A game of Stalk Exchange, then one of Oh My. Orchids! without a
    power cycle: once setup picks Oh My. Orchids!, Stalk Exchange's rules
    leave sys.modules (engine_lite/game.py forget_other_rules) and the App lets
    the finished game go (App._take_rules), so their bytecode is garbage
    and the board holds one title's rules, not both; the second game plays
    to the same end as in CPython."""
    (key, srec, sscript), (_, orec, oscript) = FULL_GAMES
    text = sscript(load_events(REPO / srec)) + oscript(load_events(REPO / orec))
    tree = guest_tree(tmp_path / "t")
    (tree / "gestures.txt").write_text(text)
    lines = run_mpy(TWO_TITLES, heapsize_kb=240, tree=tree, timeout=600).stdout.splitlines()
    assert [x for x in lines if x.startswith("SECOND")] == ["SECOND engine_lite.orchids"]
    assert [x for x in lines if x.startswith("RESULT")] == [cpython_result(text)]

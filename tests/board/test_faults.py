"""A main loop that cannot die: "Whatever an unexpected exception
does, the board keeps running: the error is caught at the top of each loop
step, written to a small crash log on flash (bounded in size, readable by
the host ...), shown as a distinct ring pattern ... and the board recovers
by reloading its state from flash. A test injects a fault into each layer
(engine, storage, ring, link) and shows the loop survives and the state
reloads."

Each fault here is a one-shot exception planted in the real code of one
layer, on a board built of the real App, Store (on the MemFS flash model),
buttons and ring. After it: the loop runs on, the fault log on flash holds
one line naming the error and where it came from, the ring shows the fault
cross, the game equals a fresh boot of the flash, and the next gesture
works. (The log is called the *fault* log: "crash" is a Stalk Exchange
rule, the market crash.)
"""

import errno

import pytest

from engine_lite.stalk import StalkState
from firmware import link
import firmware.ring
from boardkit.memfs import MemFile, MemFS
from firmware.storage import FAULTS_MAX, Store
from tests.kit.app_helpers import Board, lit

STALK = "ok\nok\nok\n"  # Stalk Exchange, 3 players (the default), default track start


def once(monkeypatch, owner, name, exc):
    """owner.name raises `exc` the first time it is called, then works."""
    real = getattr(owner, name)
    shots = []

    def faulty(*args, **kw):
        if not shots:
            shots.append(1)
            raise exc
        return real(*args, **kw)

    monkeypatch.setattr(owner, name, faulty)
    return shots


INJECTED = "test_faults.py, line"  # where once() raises: the innermost frame


def flash_state(board):
    """The game as a fresh boot of the board's flash restores it."""
    g = Store(fs=board.fs.survivor()).boot()
    return None if g is None else g.state()


def fault_cross(board):
    """The frame at the fault and 250 ms later: the white cross, then dark."""
    at = board.app.view.fault_at
    on, off = board.frame(at), board.frame(at + 250)
    return [i for i in range(24) if lit(on[i])], [i for i in range(24) if lit(off[i])], on[0]


def check_recovered(board, error, where):
    app = board.app
    assert app.faults == 1
    lines = board.store.faults().splitlines()
    assert len(lines) == 1 and error in lines[0] and where in lines[0], lines
    assert app.game.state() == flash_state(board), "the game reloaded from flash"
    on, off, colour = fault_cross(board)
    assert on == [0, 6, 12, 18] and off == [] and colour[0] == colour[1] == colour[2] > 0  # white
    later = board.frame(app.view.fault_at + firmware.ring.FAULT_MS)
    assert sum(1 for p in later if lit(p)) > 4, "after the fault pattern the game screen is back"
    n = len(app.game.log)
    board.do("ok")  # the loop runs on: a plant is accepted
    assert len(app.game.log) == n + 1 and app.faults == 1
    assert flash_state(board) == app.game.state()


@pytest.fixture
def board():
    b = Board()
    b.do(STALK + "ok\nok\nlong ok")  # plant, plant, end the turn: on flash
    assert b.screen == "stalk" and len(b.app.game.log) == 4
    return b


def test_engine_fault_before_the_write_keeps_the_flash_state(board, monkeypatch):
    before = board.state
    once(monkeypatch, StalkState, "apply", RuntimeError("engine fault"))
    board.do("ok")
    assert board.state == before  # the plant never reached flash
    check_recovered(board, "RuntimeError: engine fault", INJECTED)


def test_engine_fault_after_the_judgement_drops_the_event_never_shown(board, monkeypatch):
    """The plant is judged, then the view update fails before the ring
    shows it and before its frame is written (a step writes an event after
    showing it): the reload from flash drops it, and no hook ever heard of
    it. The same fault with the frame already on flash: the next test."""
    n = len(board.app.game.log)
    heard = []
    board.app.on_event.append(lambda *a: heard.append(a))
    once(monkeypatch, StalkState, "crash_distance", ZeroDivisionError("division by zero"))
    board.do("ok")
    assert len(board.app.game.log) == n and heard == []
    check_recovered(board, "ZeroDivisionError", INJECTED)
    assert len(heard) == 1  # check_recovered's own plant, once it was on flash


def test_a_fault_after_the_write_reloads_the_acknowledged_event(board, monkeypatch):
    """The frame is on flash when an on_event hook fails: the reload shows it."""
    n = len(board.app.game.log)
    shots = []

    def hook(*a):
        if not shots:
            shots.append(1)
            raise ZeroDivisionError("division by zero")

    board.app.on_event.append(hook)
    board.do("ok")
    assert shots and len(board.app.game.log) == n + 1
    check_recovered(board, "ZeroDivisionError", "test_faults.py, line")


def test_a_real_bug_is_logged_where_it_happened(board):
    """Not an injected raise: RAM state the app cannot draw (as a bug would
    leave it). The fault line names the product code that failed."""
    board.app.game.table.flushed = b""  # the plant is legal; drawing it fails
    board.do("ok")
    check_recovered(board, "IndexError", "firmware/screens.py, line")


def test_storage_fault_a_failing_write(board, monkeypatch):
    before = board.state
    once(monkeypatch, MemFile, "write", OSError(errno.EIO))
    board.do("ok")
    assert board.state == before
    check_recovered(board, "OSError", INJECTED)


def test_ring_fault(board, monkeypatch):
    once(monkeypatch, board.app.ring, "draw", IndexError("ring fault"))
    board.wait(100)
    check_recovered(board, "IndexError: ring fault", INJECTED)


class FlakyPort:
    """A USB serial port whose first read fails (a driver error)."""

    def __init__(self):
        self.reads = 0
        self.out = bytearray()

    def read(self, n):
        self.reads += 1
        if self.reads == 1:
            raise OSError(errno.EIO)
        return None

    def write(self, data):
        self.out.extend(data)


def test_link_fault(board):
    port = FlakyPort()
    board.app.link = link.Link(link.AppBoard(board.app, board.store), port)
    board.wait(100)
    assert port.reads > 1, "the loop went on polling the link"
    check_recovered(board, "OSError", ", in read")


def test_a_fault_in_an_op_is_an_error_reply_not_a_fault(board, monkeypatch):
    """A request whose handling raises is answered 'X' internal by the link
    itself (docs/protocol.md); the loop has nothing to recover from."""
    dev = link.Link(link.AppBoard(board.app, board.store))
    once(monkeypatch, board.store, "records", RuntimeError("op fault"))
    from tests.kit.linkkit import answer

    kind, ans = answer(dev, "status")
    assert kind == "X" and ans["code"] == "internal"
    assert answer(dev, "status")[0] == "R"
    assert board.app.faults == 0


def test_a_fault_during_setup_returns_to_setup(monkeypatch):
    b = Board()
    b.do("ok")  # Stalk Exchange chosen: players screen
    once(monkeypatch, b.app.ring, "draw", RuntimeError("setup fault"))
    b.wait(60)
    assert b.app.faults == 1 and b.app.game is None and b.screen == "setup_game"
    b.do(STALK)
    assert b.screen == "stalk"


def test_dead_flash_the_loop_still_runs(board):
    """Every flash write fails (worn out, full): the fault cannot even be
    logged, but the loop runs, reloads what it can read and keeps trying."""

    class DeadFile(MemFile):
        def write(self, b):
            raise OSError(errno.ENOSPC)

    board.fs.File = DeadFile
    before = board.state
    board.do("ok\nok")
    assert board.app.faults == 2 and board.state == before
    assert board.store.faults() == ""  # could not be written
    board.fs.File = MemFile  # the flash is back
    board.do("ok")
    assert len(board.app.game.log) == 5


def test_a_fault_at_boot_is_logged_and_the_reload_restores_the_game(monkeypatch):
    b = Board()
    b.do(STALK + "ok")
    want = b.state
    shots = once(monkeypatch, Store, "boot", RuntimeError("boot fault"))
    b2 = Board(fs=b.fs)
    assert shots and b2.app.faults == 1 and "boot fault" in b2.store.faults()
    assert b2.screen == "stalk" and b2.state == want  # the recovery's own reload worked


def test_a_boot_that_always_fails_starts_setup_and_the_game_stays_on_flash(monkeypatch):
    b = Board()
    b.do(STALK + "ok")
    want = b.state

    def broken(self):
        raise RuntimeError("boot broken")

    real = Store.boot
    monkeypatch.setattr(Store, "boot", broken)
    b2 = Board(fs=b.fs)
    assert b2.app.faults == 1 and b2.app.game is None and b2.screen == "setup_game"
    b2.wait(100)  # the loop runs
    monkeypatch.setattr(Store, "boot", real)
    assert Board(fs=b.fs).state == want


def test_the_fault_log_is_bounded_and_keeps_the_newest_lines(store):
    store.boot()
    for i in range(200):
        store.log_fault("fault %03d " % i + "x" * 100)
    text = store.faults()
    lines = text.splitlines()
    assert len(text) <= FAULTS_MAX and text.endswith("\n")
    assert lines[-1].startswith("fault 199") and all(len(x) == 110 for x in lines)
    assert [int(x[6:9]) for x in lines] == list(range(200 - len(lines), 200))
    store.log_fault("y" * 500)
    assert store.faults().splitlines()[-1] == "y" * 160  # one line is capped too


def test_the_fault_log_is_not_a_game_and_survives_a_reboot(board, monkeypatch):
    once(monkeypatch, board.app.ring, "draw", RuntimeError("ring fault"))
    board.wait(60)
    b2 = board.reboot()
    assert b2.store.archived() == [] and b2.state == board.state
    assert "ring fault" in b2.store.faults()
    assert b2.app.faults == 0  # faults since power-up


def test_the_link_reads_the_fault_log(board, monkeypatch):
    from tests.kit.linkkit import answer

    dev = link.Link(link.AppBoard(board.app, board.store))
    assert answer(dev, "faults") == ("R", {"faults": ""})
    assert answer(dev, "status")[1]["faults"] == 0
    once(monkeypatch, board.app.ring, "draw", RuntimeError("ring fault"))
    board.wait(60)
    kind, ans = answer(dev, "faults")
    assert kind == "R" and ans["faults"].startswith("#1 stalk RuntimeError: ring fault @ ")
    assert answer(dev, "status")[1]["faults"] == 1


@pytest.mark.mpy
def test_in_micropython_a_fault_is_logged_with_its_place_and_the_loop_runs_on():
    """The board's path of _fault_line (sys.print_exception into a StringIO),
    in a real MicroPython on the board's own modules."""
    from tests.kit.mpy_harness import run_mpy

    code = """
hw = SimHW(None, 24)
store = Store(fs=MemFS())
app = App(hw, store)
script.play(app, hw, script.parse("ok\\nok\\nok\\nok"))
n = len(app.game.log)
app.game.table.flushed = b""
script.play(app, hw, script.parse("ok"))
print(app.faults, n, len(app.game.log))
print(store.faults().strip())
"""
    setup = """
from boardkit.hw_sim import SimHW
from boardkit.memfs import MemFS
from firmware.storage import Store
from firmware.app import App
from boardkit import script
"""
    r = run_mpy(code, setup=setup, timeout=300)
    counts, line = r.stdout.strip().splitlines()[-2:]
    faults, n, after = map(int, counts.split())
    # the drawing failed before the step wrote the plant: reloaded without it
    assert faults == 1 and after == n
    print(line)
    assert line.startswith("#1 stalk IndexError") and 'screens.py", line ' in line and "in show" in line, line


def test_the_fault_cross_is_a_shape_no_other_screen_shows():
    """docs/ring.md: "a shape, not a colour": every documented screen, on
    and off phase, lights some other set of pixels than the bare cross."""
    import importlib.util

    from tests.kit.mpy_harness import REPO

    path = REPO / "docs" / "render_ring.py"
    spec = importlib.util.spec_from_file_location("render_ring_for_faults", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    ring = firmware.ring.Ring(24)
    cross = [0, 6, 12, 18]
    seen = {}
    for name, _, view, t in mod.SCREENS:
        for dt in range(0, 1200, 50):
            buf = ring.render(view, t + dt)
            seen.setdefault(name, set()).add(tuple(i for i in range(24) if any(buf[3 * i : 3 * i + 3])))
    assert cross_in(seen.pop("fault"), cross)
    assert not any(tuple(cross) in shapes for shapes in seen.values())


def cross_in(shapes, cross):
    return tuple(cross) in shapes and () in shapes


def test_a_fault_that_repeats_every_step_is_logged_once_and_the_link_still_answers(board, monkeypatch):
    """A ring that always fails: the loop recovers at every step, but the
    flash is written once (not 200 times a second), and the host can still
    read the fault log over the port (the link is served before drawing)."""
    import json

    from firmware import codec

    def broken(*a):
        raise RuntimeError("stuck")

    monkeypatch.setattr(board.app.ring, "draw", broken)
    port = QueuePort()
    board.app.link = link.Link(link.AppBoard(board.app, board.store), port)
    board.wait(200)
    assert board.app.faults >= 30
    assert len(board.store.faults().splitlines()) == 1
    port.inbox += codec.encode(bytes((codec.K_REQ, 9, 0)) + b'{"op": "faults"}')
    board.wait(20)
    (reply,) = codec.Deframer(4096).feed(bytes(port.out))
    assert reply[0] == codec.K_OK and "RuntimeError: stuck" in json.loads(reply[3:])["faults"]


class QueuePort:
    def __init__(self):
        self.inbox = bytearray()
        self.out = bytearray()

    def read(self, n):
        data, self.inbox = bytes(self.inbox[:n]), self.inbox[n:]
        return data or None

    def write(self, data):
        self.out.extend(data)

"""bench/bench_path.py's machinery on a short script (the bench plays whole games).

Why: the figures of the path the board really runs stand on three pieces
that must keep working: callgrind counting only the board's instructions
(not the flash device's, the strip's or the pipe's Python), every flash
operation of real littlefs reaching the host's model, and the host's chip
clock driving the guest's ticks_ms so that the board's own debounce takes
the scheduled presses. Checked on the first gestures of the 5-player Stalk
Exchange game (setup and the first plays, which write to flash), in the
real Unix port under callgrind. No timing is asserted: only that the
pieces agree with each other and with the board's own counters.
"""

import shutil
import subprocess

import pytest

from firmware.main import SLEEP_MS

from bench import bench_path
from tests.kit.mpy_harness import micropython_command

pytestmark = pytest.mark.mpy
needs_valgrind = pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind is not installed (Debian: apt install valgrind)")

GESTURES = 14  # setup (5 players, track start), the start record, the first plays


@pytest.fixture(scope="module")
def run():
    if shutil.which("valgrind") is None:
        pytest.skip("valgrind is not installed (Debian: apt install valgrind)")
    return bench_path.play(bench_path.ROOT, "stalk", "typical", limit=GESTURES)


def test_without_callgrind_the_pipe_the_flash_and_the_presses_still_agree():
    # the same guest, host and schedule with no instructions counted (the
    # clock is the modeled waits alone): what the bench stands on, where
    # valgrind is missing
    dry = bench_path.play(bench_path.ROOT, "stalk", "typical", limit=GESTURES, dry=True)
    screen, reads, progs, pages, erases, faults = dry.result
    assert (screen, faults) == ("stalk", "0")
    assert (dry.reads, dry.progs, dry.pages, dry.erases) == (int(reads), int(progs), int(pages), int(erases))
    assert len([g for g in dry.gestures if g["delivered"] is not None]) == GESTURES
    assert dry.instructions == 0


def test_every_flash_operation_reaches_the_model(run):
    screen, reads, progs, pages, erases, faults = run.result
    assert screen == "stalk" and faults == "0", run.result
    assert (run.reads, run.progs, run.pages, run.erases) == (int(reads), int(progs), int(pages), int(erases))
    assert run.progs > 0  # the game's start record went to flash
    assert run.result[0] == "stalk"


def test_the_scheduled_presses_reach_the_board_through_its_debounce(run):
    taken = [g for g in run.gestures if g["delivered"] is not None]
    assert len(taken) == GESTURES - run.lost, [(g["button"], g["kind"]) for g in run.gestures]
    for g in taken:
        assert g["press"] < g["release"] <= g["delivered"] if g["kind"] == 1 else g["press"] < g["delivered"]
        if g.get("unlit"):  # the ring already showed it (an ack still lit): no frame changed
            assert g["frame"] is None
        else:
            assert g["frame"] is not None and g["frame"] >= g["delivered"]


def test_the_chip_clock_is_every_turn_s_counted_cpu_plus_its_modeled_waits(run):
    assert run.instructions > 0
    prev = 0.0
    for t in run.turns:
        start, end, cpu, tidy, walk = t[:5]
        assert start == pytest.approx(prev)
        assert cpu > 0 and walk >= 0  # counted (heap walks: only in a collection, found by name)
        waits = end - start - cpu - SLEEP_MS * 1000  # the loop's pause (firmware/main.py)
        if not (t[6] or t[7] or t[8]):  # no frame, flash work or read: nothing else is modeled
            assert waits == pytest.approx(0, abs=1e-6)
        else:
            assert waits > 0
        prev = end


GATED = """
import sys
sys.path.insert(0, '.')
from path_guest import Gate0, DUMP
def work():
    s = 0
    for i in range(5000):
        s += i
gated = Gate0(work)
class Turn:
    def __init__(self, fn):
        self.fn = fn
    def __iter__(self):
        return self
    def __next__(self):
        self.fn()
        any(DUMP)
        return 0
for fn in (lambda: None, gated, work):
    all(Turn(fn))
"""


@needs_valgrind
def test_work_inside_a_gate_is_not_counted(tmp_path):
    bench_path.guest_tree(tmp_path)
    (tmp_path / "gated.py").write_text(GATED)
    cmd = bench_path.callgrind_command() + micropython_command() + ["gated.py"]
    r = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    dumps = bench_path.Dumps(tmp_path)
    empty, gated, counted = (bench_path.chip_ns(dumps.next())[3] for _ in range(3))
    assert counted > 20 * 5000  # 5000 loop turns of bytecode, counted
    assert gated - empty < 2000  # the same work behind a gate: the call alone


def test_the_calibration_commit_s_guest_is_built_by_its_own_bundler(tmp_path):
    """--calibrate (and make bench) run the instrument on the commit the
    emulated RP2040 measured: its bundle must be what that commit's own
    `make firmware` made (this tree's manifest cannot build an older tree),
    with this tree's guest half beside it."""
    root = bench_path.ROOT
    old = tmp_path / "old"
    r = subprocess.run(["git", "worktree", "add", "--detach", str(old), bench_path.CALIBRATION_COMMIT], cwd=root, capture_output=True, text=True)
    if r.returncode:
        pytest.skip("commit %s is not in this clone" % bench_path.CALIBRATION_COMMIT)
    try:
        dst = bench_path.guest_tree(tmp_path / "guest", old)
        assert (dst / "firmware" / "app.mpy").exists() and (dst / "path_guest.mpy").exists()
        assert not (dst / "host").exists()  # what the old bundler ships, no more
        new = bench_path.guest_tree(tmp_path / "new")
        assert (dst / "firmware" / "storage.mpy").read_bytes() != (new / "firmware" / "storage.mpy").read_bytes()
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(old)], cwd=root, capture_output=True)

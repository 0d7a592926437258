"""`bloomkeeper doctor` and the simulator after a firmware fault (the
fault log is "readable by the host", and the simulator "must also
survive rather than show 'firmware error' and ignore presses").

The board is the simulator's real firmware (host/board_sim/board.SimBoard: App +
Store + link on a real pseudo-terminal), served from a thread; the host is
the `bloomkeeper` command in its own process.
"""

import subprocess
import sys

import pytest

from host import __version__
from host.board_sim import serve_record
from host.commands.doctor import version_note
from host.board_sim.board import SHORT, SimBoard
from tests.kit.mpy_harness import REPO

pytestmark = pytest.mark.slow  # bloomkeeper doctor and sync as processes against a simulated board


def bk(*args):
    return subprocess.run([sys.executable, "-m", "host.cli", *args], cwd=REPO, capture_output=True, text=True, timeout=60)


def ring_fault_once(sb, msg):
    real = sb.app.ring.draw  # what App.show calls every frame

    def draw(*a):
        sb.app.ring.draw = real
        raise RuntimeError(msg)

    sb.app.ring.draw = draw


def test_doctor_shows_the_fault_log(served, tmp_path):
    sb = SimBoard(state_dir=str(tmp_path / "flash")).start()
    serve_record.load_into(sb.app, [{"ev": "start", "game": "oh-my-orchids", "players": ["Ann", "Bo"]}, {"ev": "take", "seeds": 2}])
    ring_fault_once(sb, "the ring fell over")
    sb.tick()
    served(sb)
    r = bk("doctor", "--port", sb.link_path)
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "game in progress: 0001, 2 events" in out
    assert "board sim-pico (id %s)," % sb.hw.uid in out  # the board's own id, beside its type
    assert "firmware faults survived since power-up: 1" in out
    assert "#1 orchids RuntimeError: the ring fell over @ " in out and "in draw" in out
    assert (tmp_path / "flash" / "bk" / "faults.txt").is_file()  # the store inside the flash directory


def test_doctor_on_a_board_without_faults(served):
    sb = served(SimBoard(state_dir=None).start())
    r = bk("doctor", "--port", sb.link_path)
    assert r.returncode == 0, r.stderr
    assert "no game in progress" in r.stdout and "fault log: empty" in r.stdout
    # the simulator runs this host's firmware: both versions named, no mismatch line
    assert "firmware %s, link protocol 1; this host: bloomkeeper %s" % (__version__, __version__) in r.stdout
    assert "differs" not in r.stdout


def test_doctor_says_in_one_line_when_the_board_runs_other_firmware(served):
    sb = SimBoard(state_dir=None).start()
    sb.link.board.fw = "0.0.9"  # the hello's firmware version, as an older bundle stamped it
    served(sb)
    r = bk("doctor", "--port", sb.link_path)
    assert r.returncode == 0, r.stderr
    lines = [x for x in r.stdout.splitlines() if "differs" in x]
    assert lines == ["firmware 0.0.9 differs from this host's %s: update it with bloomkeeper flash --port %s"
                     % (__version__, sb.link_path)]
    assert version_note("0") .startswith("firmware version unknown") and version_note(__version__) is None


def test_doctor_without_a_board_is_one_line_and_status_2(tmp_path):
    r = bk("doctor", "--port", str(tmp_path / "no-such-port"), "--timeout", "3")
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and r.stderr.startswith("bloomkeeper: ")


def test_the_simulator_survives_a_fault_and_keeps_taking_presses(tmp_path):
    now = [0]
    sb = SimBoard(state_dir=str(tmp_path / "flash"), link=False, clock=lambda: now[0]).start()
    ring_fault_once(sb, "boom")
    sb.tick()
    assert sb.errors == 1 and sb.last_error.startswith("firmware fault, board reloaded its game from flash: #1 setup_game RuntimeError: boom @ ")
    sb.press(0, SHORT)  # Stalk Exchange
    sb.press(6, SHORT)  # OK: next screen
    for _ in range(200):
        if not sb.busy() and sb.screen_name() == "setup_players":
            break
        now[0] += 10
        sb.tick()
    assert sb.screen_name() == "setup_players"


def test_sync_offers_the_update_to_a_board_on_other_firmware(served, tmp_path):
    """sync does its work, then says in one line on stderr that the board's
    firmware is not this host's version, and how to update it."""
    sb = SimBoard(state_dir=None).start()
    sb.link.board.fw = "0.0.9"
    served(sb)
    r = bk("sync", "--port", sb.link_path, "--db", str(tmp_path / "p.sqlite3"))
    assert r.returncode == 0 and r.stdout.startswith("synced board "), r.stderr
    assert r.stderr == "bloomkeeper: note: firmware 0.0.9 differs from this host's %s: update it with bloomkeeper flash --port %s\n" % (
        __version__, sb.link_path)


def test_doctor_after_a_game_ends_says_game_over_not_in_progress(served):
    """A game that ended shows its results until the players press OK: doctor
    says it is over (and not yet archived), never "game in progress"."""
    from tests.kit.minimal_records import MINIMAL_STALK
    import json

    sb = SimBoard(state_dir=None).start()
    serve_record.load_into(sb.app, [json.loads(line) for line in MINIMAL_STALK.splitlines()])
    sb.tick()
    served(sb)
    r = bk("doctor", "--port", sb.link_path)
    assert r.returncode == 0, r.stderr
    assert "game over: 0001, 9 events, results on the board's ring" in r.stdout
    assert "game in progress" not in r.stdout
    assert "archived games on the board: 0 (0 not synced yet); the game over above is not archived yet" in r.stdout

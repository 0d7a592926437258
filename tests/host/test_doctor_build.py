"""`bloomkeeper doctor` says which kind of build the board runs (the hello's
`build`, docs/protocol.md): a frozen image (updated with a new UF2), .mpy
files on its file system (updated by `bloomkeeper flash`), or unknown on
firmware older than the key; and its update hint follows that kind.

The board is the simulator's real firmware on a pty, served from a thread;
the host is the `bloomkeeper` command in its own process.
"""

import subprocess
import sys

import pytest

from host import __version__
from host.board_sim.board import SimBoard
from host.commands.doctor import version_note
from host.commands.uf2_flash import build_words, update_command
from tests.kit.frozen_sim import run_frozen
from tests.kit.mpy_harness import REPO


def test_the_three_kinds_in_words():
    assert build_words({"build": "frozen"}).startswith("frozen image") and "bloomkeeper flash --uf2" in build_words({"build": "frozen"})
    assert build_words({"build": "files"}).startswith(".mpy files on the board's file system")
    assert build_words({}) == "unknown (firmware from before the hello named its build)"
    # a board's answers are data: whatever it says is named, bounded, never trusted
    assert build_words({"build": 7}) == "unknown (int)"
    assert build_words({"build": "x" * 500}).startswith("unknown (xxx") and len(build_words({"build": "x" * 500})) < 60


def test_the_update_hint_follows_the_build_kind():
    assert update_command({"build": "frozen"}, "/dev/ttyACM0") == "bloomkeeper flash --uf2 --port /dev/ttyACM0"
    assert update_command({"build": "files"}) == "bloomkeeper flash"
    assert version_note("0.0.1", "auto", {"build": "frozen"}).endswith("update it with bloomkeeper flash --uf2")
    assert version_note("0.0.1", "auto", {}).endswith("update it with bloomkeeper flash")
    assert version_note(__version__, "auto", {"build": "frozen"}) is None


def doctor(port):
    r = subprocess.run([sys.executable, "-m", "host.cli", "doctor", "--port", port], cwd=REPO, capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return r.stdout


@pytest.mark.slow
def test_doctor_names_the_build_of_the_simulated_board(served):
    sb = served(SimBoard(state_dir=None).start())
    out = doctor(sb.link_path)
    lines = [x for x in out.splitlines() if x.startswith("build: ")]
    assert len(lines) == 1
    assert lines[0] == "build: " + build_words(sb.link.op_hello({}))  # what the firmware's own hello says


@pytest.mark.slow
def test_doctor_on_a_frozen_board(served):
    sb = SimBoard(state_dir=None).start()
    run_frozen(sb)
    sb.link.board.fw = "0.0.1"
    served(sb)
    out = doctor(sb.link_path)
    assert "build: frozen image (the code is inside the MicroPython firmware" in out
    assert "firmware 0.0.1 differs from this host's %s: update it with bloomkeeper flash --uf2 --port %s" % (
        __version__, sb.link_path) in out


def test_a_hostile_build_is_printed_escaped_on_one_line():
    words = build_words({"build": "fro\nzen\x1b[2J"})
    assert words.startswith("unknown (") and "\n" not in words and "\x1b" not in words

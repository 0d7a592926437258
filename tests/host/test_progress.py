"""The progress bar (host/progress.py) of `simulate` and `sync`: drawn on a
terminal only, never into a pipe, never with --quiet, and it changes neither
the command's output nor its result."""

import io
import json
import subprocess
import sys

import pytest

from host import progress
from host.fullrules import simulate
from tests.kit.mpy_harness import REPO


class _Tty(io.StringIO):
    def isatty(self):
        return True


def test_the_bar_is_for_a_terminal_only():
    assert progress.wanted(stream=_Tty()) is True
    assert progress.wanted(quiet=True, stream=_Tty()) is False
    assert progress.wanted(stream=io.StringIO()) is False  # a pipe or a file


def test_off_it_draws_nothing_and_on_it_draws_the_count():
    quiet = _Tty()
    with progress.bar("x", total=3, quiet=True, stream=quiet) as advance:
        advance(1)
    assert quiet.getvalue() == ""
    shown = _Tty()
    seen = []
    with progress.bar("simulating", total=5, stream=shown, force=True) as advance:
        stats = simulate.run("stalk-exchange", 2, 5, 1, progress=lambda done: (seen.append(done), advance(done)))
    assert seen == [1, 2, 3, 4, 5] and stats["games"] == 5
    assert "simulating" in shown.getvalue() and "5/5" in shown.getvalue()


@pytest.mark.slow
def test_simulate_through_a_pipe_prints_only_its_result():
    """stderr is a pipe here: no bar in it, and --quiet is accepted."""
    for extra in ([], ["--quiet"]):
        r = subprocess.run([sys.executable, "-m", "host.cli", "simulate", "--game", "oh-my-orchids", "--players", "2",
                            "--games", "3", "--json", *extra], cwd=REPO, capture_output=True, text=True, timeout=120)
        assert r.returncode == 0 and r.stderr == "", r.stderr
        assert json.loads(r.stdout)["games"] == 3

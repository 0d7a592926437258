"""Fixtures the host tests share."""

import threading

import pytest

from host.board_sim import serve_record


@pytest.fixture
def served():
    """start(sb): a simulated board served on its pty (serve_record.serve)
    in a thread, as `bloomkeeper sim --headless` serves it; stopped and
    closed after the test."""
    boards = []

    def start(sb):
        stop = threading.Event()
        t = threading.Thread(target=serve_record.serve, args=(sb, stop.is_set), daemon=True)
        t.start()
        boards.append((sb, stop, t))
        return sb

    yield start
    for sb, stop, t in boards:
        stop.set()
        t.join(10)
        sb.close()

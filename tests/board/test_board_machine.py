"""The whole board against its model, as a hypothesis state machine
(tests/kit/board_machine.py). Bounded here so CI stays fast; the
bench (bench/bench_board_machine.py) runs it longer."""

import pytest
from hypothesis import HealthCheck, settings

from tests.kit.board_machine import BoardMachine

pytestmark = pytest.mark.slow  # a hypothesis state machine over the whole board

TestBoard = BoardMachine.TestCase
TestBoard.settings = settings(
    max_examples=40,
    stateful_step_count=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)

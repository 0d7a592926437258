"""The whole board against its model, run long: the board never stops, whatever is pressed.

tests/kit/board_machine.py drives the real App, Store (MemFS flash model) and
link with random gestures, undo chains, clean reboots, power cuts, host
requests and new games, and checks every step against the engine's fold of
what the host reads back (CI runs it bounded: tests/board/test_board_machine.py).
Here it runs for many more sequences, without shrinking (a failure is
reported as found, with its steps printed).

* model_sequences / model_steps: state-machine sequences and board steps
  (a gesture, a reboot, a host request...) tried;
* model_power_cuts / model_reboots: power cuts that hit a flash op, clean reboots;
* model_events: records appended or undone, as the host saw them;
* model_games_finished: games archived by buttons (results then OK, or
  menu -> new game -> confirm);
* model_failures: sequences where the board and the model disagreed or
  something raised (0, or the run stopped at the first).

Run alone: .venv/bin/python -m bench.bench_board_machine [sequences]
"""

import sys
import time
import traceback

SEQUENCES = 400
STEPS = 60


def measure(sequences=SEQUENCES, steps=STEPS):
    from hypothesis import HealthCheck, Phase, settings
    from hypothesis.stateful import run_state_machine_as_test

    from tests.kit.board_machine import BoardMachine, Counts

    t0 = time.process_time()
    failures = 0
    try:
        run_state_machine_as_test(
            BoardMachine,
            settings=settings(
                max_examples=sequences,
                stateful_step_count=steps,
                deadline=None,
                phases=[Phase.generate],
                database=None,
                suppress_health_check=list(HealthCheck),
            ),
        )
    except Exception:
        failures = 1
        traceback.print_exc()
    secs = time.process_time() - t0
    return {
        "model_sequences": Counts.sequences,
        "model_steps": Counts.steps,
        "model_power_cuts": Counts.cuts,
        "model_reboots": Counts.reboots,
        "model_events": Counts.events,
        "model_games_finished": Counts.finished,
        "model_failures": failures,
        "model_steps_per_second": round(Counts.steps / secs, 1) if secs else 0,
    }


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    res = measure(int(argv[0]) if argv else SEQUENCES)
    for k, v in res.items():
        print("%-28s %s" % (k, v))
    return 1 if res["model_failures"] else 0


if __name__ == "__main__":
    sys.exit(main())

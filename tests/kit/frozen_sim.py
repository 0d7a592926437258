"""The simulated board (host/board_sim/board.SimBoard) as it runs from a
frozen image (`make uf2`), for the tests of `flash --uf2` and `doctor`.

The simulator runs the firmware's own sources, so its hello's `build`
(docs/protocol.md) is what the firmware says of itself there; a board that
booted a UF2 says "frozen". These two helpers are the one place the tests
ask for that."""

from host.board_sim.board import SimBoard


def hello_names_build():
    """Does this firmware's hello say its build kind (firmware/link.py)?"""
    sb = SimBoard(state_dir=None).start()
    try:
        return "build" in sb.link.op_hello({})
    finally:
        sb.close()


def run_frozen(sb):
    """`sb` (started) as it runs from a frozen image: its hello says build "frozen"."""
    sb.link.board.build = "frozen"
    return sb

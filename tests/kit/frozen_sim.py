"""The simulated board (host/board_sim/board.SimBoard) as it runs from a
frozen image (`make uf2`), for the tests of `flash --uf2` and `doctor`.

The simulator runs the firmware's own sources as files, and its hello's
`build` (docs/protocol.md) says "files"; a board that booted a UF2 says
"frozen" (firmware/main.py make_link, from firmware/hw.py image). This is
the one place the tests have the simulator say so."""


def run_frozen(sb):
    """`sb` (started) as it runs from a frozen image: its hello says build "frozen"."""
    sb.link.board.build = "frozen"
    return sb

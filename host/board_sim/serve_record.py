"""`bloomkeeper sim --headless --record FILE`: a simulated board holding a
game record, its serial link served on a pseudo-terminal.

The board is the real firmware: SimHW + Store on MemFS + App (built by
host/board_sim/board.SimBoard, as the terminal simulator does). The record is
loaded through the App's own entry points (App.new_game / apply / undo),
so it is stored and announced exactly as if it had been played on the
buttons. The first stdout line is `link: /dev/pts/N`; then the board runs
(App.step, which serves the link) until it is killed.
"""

import json
import select
import sys
import time

import engine_lite

from host.errors import UserError
from host.io_util import checked_lines, lines_of


def record_events(path):
    """The record's events, read as `bloomkeeper replay` reads them and
    checked by the rules (UserError naming the line)."""
    lines = lines_of(path)
    try:
        engine_lite.replay(checked_lines(lines))
    except (engine_lite.EngineError, UserError) as err:
        raise UserError("%s: %s" % (path, err))
    return [json.loads(t) for t in lines if t.strip()]


def load_into(app, events):
    """Play the events into the App as if pressed on the board."""
    for i, ev in enumerate(events, 1):
        if ev["ev"] == "start":
            app.new_game(engine_lite.Game().encode(ev))
            ok = True
        elif ev["ev"] == "undo":
            ok = app.undo()
        else:
            ok = app.apply(app.game.encode(ev))
        if not ok:
            raise UserError("event %d refused by the board" % i)


def build(path, board="pico"):
    """A started SimBoard (host/board_sim/board.py) with the record loaded."""
    from host.board_sim.board import SimBoard, SimUnavailable

    events = record_events(path)
    try:
        sb = SimBoard(board=board, state_dir=None).start()
    except SimUnavailable as err:
        raise UserError(str(err))
    if sb.link is None or sb.link_path is None:
        raise UserError("the simulated board has no serial link: %s" % (sb.link_note or "unknown reason"))
    load_into(sb.app, events)
    sb.tick()
    return sb


def serve(sb, stop=None, period=0.005):
    """Run the board: a step whenever the host sent something, at least every `period` s."""
    pty = getattr(sb, "_pty", None)
    fds = [pty.master] if pty is not None else []
    while stop is None or not stop():
        if fds:
            select.select(fds, [], [], period)
        else:
            time.sleep(period)
        sb.tick()


def run_record(path, board="pico", runtime="cpython", **_ignored):
    if runtime == "micropython":
        from host.board_sim.micropython_board import record_board

        sb = record_board(path, board=board)
    else:
        sb = build(path, board=board)
    import signal

    from host import runtime as rundir

    # `kill` ends the server cleanly: the pty (and on MicroPython the board
    # process and its temporary files) are closed by the finally below, and
    # the file that lets `--port auto` find this simulator is removed.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    published = rundir.publish_sim(sb.link_path, sb.uid)  # host/runtime.py
    sb.page_echo = True
    try:
        sys.stdout.write("link: %s\n" % sb.link_path)
        if sb.page_url:  # a board with WiFi: its table page (host/board_sim/page.py)
            sys.stdout.write("page: %s\n" % sb.page_url)
        sys.stdout.flush()
        serve(sb)
    finally:
        rundir.unpublish(published)
        sb.close()
    return 0

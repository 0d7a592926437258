"""The terminal simulator behind `make run` / `bloomkeeper sim`.

The board's firmware runs UNCHANGED (firmware/app.py on firmware/hw.py's
simulated backend, with a real directory-backed firmware/storage.Store) and
this module is only its case:

* the LED ring: the App's real pixels (what it last wrote to the strip),
  drawn as a circle of coloured cells;
* the eight buttons: keys press the simulated pins, so the firmware's own
  debounce and long-press logic decides what a press was;
* the game in words (boardkit/app_words.py `describe`), the buttons that mean something
  now (boardkit/app_words.py `hint`, it follows the phase) and the last
  refusal in words (cleared by the next accepted event);
* the serial link on a pseudo-terminal whose path is shown (when
  firmware/link.py is there), so `bloomkeeper sync --port PATH` works
  against the simulator as against a real board.

Keys (shown on screen, host/board_sim/face.py KEYMAP): 1-5 the five flower
buttons; u undo; space or enter ok; m menu; a long press is the shifted key
or the prefix key l, then the button key. A mouse click on a button in the
legend is a short press of it.
q or Ctrl-C quits (the flash directory keeps the game for next time).

Time: `App.step()` runs on a ~10 ms timer and the simulated board's clock is
fed from real (monotonic) time; a key holds its pin down for a short press
(80 ms) or past the firmware's long-press threshold.

SimBoard (host/board_sim/board.py) is the UI-free board this module draws;
SimApp (host/board_sim/textual_app.py) is the textual application, imported
only when it runs (the headless modes never load textual); face.py holds what
it draws with.
"""

from host.board_sim.board import SimBoard, SimUnavailable, one_line


def run(board="pico", state_dir=None, runtime="cpython"):
    """Run the interactive simulator until q / Ctrl-C. Returns the exit status.
    A firmware piece that is missing or fails to boot is one line (UserError)
    before the screen is taken over. runtime "micropython": the firmware
    bundle in the MicroPython Unix port (host/board_sim/micropython_board.py)."""
    import sys

    from host.errors import UserError

    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise UserError("sim needs a terminal (for scripts: sim --headless --buttons FILE or --record FILE)")
    if runtime == "micropython":
        from host.board_sim.micropython_board import MpySimBoard, micropython_command

        micropython_command()  # not installed: one line, before anything starts
        sim = MpySimBoard(board=board, state_dir=state_dir)
    else:
        sim = SimBoard(board=board, state_dir=state_dir)
    try:
        sim.start()
    except UserError:
        sim.close()
        raise
    except SimUnavailable as err:
        sim.close()
        raise UserError(str(err))
    except Exception as err:
        sim.close()
        raise UserError("the firmware failed to start: %s" % one_line(err))
    from host.board_sim.textual_app import SimApp

    from host import runtime as rundir

    app = SimApp(sim=sim)
    published = rundir.publish_sim(sim.link_path, sim.uid) if sim.link_path else None  # `--port auto` finds it
    try:
        app.run()
    finally:
        if published:
            rundir.unpublish(published)
        sim.close()
    if app.startup_error:
        raise UserError(app.startup_error)
    return 0

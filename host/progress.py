"""A progress bar for long commands (`simulate`, `sync`), drawn by rich on stderr.

Only for a person watching: it is off when stderr is not a terminal (a pipe,
a file, CI, the tests), with --quiet, or for a run too short to need one, so
the command's real output (stdout) and its one-line errors never mix with it.
"""

import contextlib
import sys


def wanted(quiet=False, stream=None):
    """Whether a bar would be drawn: not --quiet, and stderr is a terminal."""
    stream = sys.stderr if stream is None else stream
    return not quiet and bool(getattr(stream, "isatty", lambda: False)())


@contextlib.contextmanager
def bar(label, total=None, quiet=False, stream=None, force=False):
    """Yield advance(done): set how much is done so far (out of `total`;
    None: a count without an end). A no-op unless `wanted` (or `force`, for
    a terminal that rich is told to assume)."""
    if not (force or wanted(quiet, stream)):
        yield lambda done: None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    console = Console(file=sys.stderr if stream is None else stream, force_terminal=force or None)
    columns = [TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn()]
    with Progress(*columns, console=console, transient=True) as progress:
        task = progress.add_task(label, total=total)
        yield lambda done: progress.update(task, completed=done)

"""Long games on the MemFS flash model, for the boot-cost checks of
tests/storage/test_storage.py and the restore figures of bench/bench_board.py:
an Oh My. Orchids! game of n records, and the guest source that rebuilds
its flash inside MicroPython (so a guest boots from the very bytes the
CPython Store wrote, without replaying the game there first).
"""

import engine_lite

from boardkit.memfs import MemFS
from firmware.storage import Store


def orchids_marathon(n):
    """An Oh My. Orchids! game of n records (take/end_turn turns): the
    longest games the rules allow, for boot-cost checks."""
    g = engine_lite.Game()
    g.apply({"ev": "start", "game": "oh-my-orchids", "players": ["A", "B"]})
    while len(g.log) < n:
        g.apply({"ev": "take", "seeds": 1})
        g.apply({"ev": "end_turn"})
    return [bytes(r) for r in g.log.records()][:n]


def marathon_on_flash(n):
    """(fs, game): a MemFS whose Store holds the game in progress of
    orchids_marathon(n), written event by event as the board writes it."""
    fs = MemFS()
    store = Store(fs=fs)
    store.boot()
    recs = orchids_marathon(n)
    game = store.new_game(recs[0])
    for rec in recs[1:]:
        store.apply(game, rec)
    return fs, game


def flash_literal(n):
    """Guest source that rebuilds, in a MemFS called `fs`, the flash of a
    game of n records (an Oh My. Orchids! take/end_turn marathon)."""
    fs = marathon_on_flash(n)[0]
    return (
        "from boardkit.memfs import MemFS\n"
        "fs = MemFS()\n"
        "for p in %r:\n    fs.dirs[p] = 1\n"
        "for p, d in %r.items():\n    fs.files[p] = bytearray(d)\n"
    ) % (list(fs.dirs), {p: bytes(d) for p, d in fs.files.items()})

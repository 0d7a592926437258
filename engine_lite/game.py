"""A game as a fold over its log of compact records.

`Game.apply(event_dict)` is the single entry for a table event, on the
board and on the host: the event is checked and encoded (record.py), judged
by the game's rules (stalk.py / orchids.py), and only then appended to the
log. Undo drops the last record and folds the log again from the start, so
undo is an exact inverse by construction.
"""

import sys

from engine_lite import const, errors, record
from engine_lite.log import RamLog

# engine_lite/record.py's title and opcodes read here, as private copies
# (tests/house/test_folded_consts.py holds them equal to record's): a const folds
# only within its module.
_STALK = const(0)
_OP_START = const(1)
_OP_UNDO = const(11)


def rules(game):
    """The table class of title `game` (record.STALK, record.ORCHIDS), its
    module imported at the first use: a board playing one title never
    holds the other's rules in RAM (on the board a .mpy module's bytecode
    is in the heap: Stalk Exchange's rules take 7 KB of it on the 64-bit
    port, Oh My. Orchids!'s 5 KB). The board loads them while setup is
    past the title's choice (firmware/app.py settle), so that the press
    that starts the game does not wait for it (~45 ms on the Pico)."""
    if game == _STALK:
        from engine_lite.stalk import StalkState

        return StalkState
    from engine_lite.orchids import OrchidsState

    return OrchidsState


def forget_other_rules(game):
    """Let the other title's rules module go (the one rules() does not
    import for `game`): out of sys.modules and the engine_lite package, so
    that once nothing else holds it (no game of that title in play) the
    next collection frees its bytecode, and rules() imports it afresh when
    asked. The board calls it when setup picks a title (firmware/app.py),
    so a board that has played both titles since power-on holds one
    title's rules, not both (3-5 KB).
    Not in CPython: there the host's own modules (readout, the dashboard)
    import both titles' rules for good, so dropping one would free nothing
    and leave two copies of the module, the tests' patched one and a new."""
    if sys.implementation.name == "cpython":
        return
    name = "orchids" if game == _STALK else "stalk"
    if sys.modules.pop("engine_lite." + name, None) is not None:
        pkg = sys.modules["engine_lite"]
        if hasattr(pkg, name):
            delattr(pkg, name)


def new_state(start):
    return rules(start[1])(start)


class Game:
    """One game. `log` is any object with append/pop/records/__len__ (RamLog
    by default); a log that already holds records is folded at once, from
    `snapshot` (see `snapshot()`) when one is given: then only the records
    after it are folded (a boot that must not refold a long log)."""

    def __init__(self, log=None, snapshot=None):
        self.log = RamLog() if log is None else log
        self.table = None  # the rules' state: see below
        if snapshot is not None:
            self._restore(snapshot)
        elif len(self.log):
            self.refold()

    @property
    def game(self):
        return None if self.table is None else self.table.game

    @property
    def names(self):
        return [] if self.table is None else self.table.names

    # `table` is the table now, for reading only (None before the start):
    # seats `n`, `names`, `player`, `turn`, `over` and per title the counts
    # the rulebook has players track (docs/architecture.md lists them), with the
    # rules' own answers: refused(op), cost(op), turn_done(), crash_distance(),
    # all_entered(), final() (Stalk Exchange), planted(seat), ends_game(seat),
    # new_name(kind) (Orchids). Changes go through apply/undo only. A plain
    # attribute: the board reads it on every event.

    # -- the read-only view: all the board, the link and the host read ------

    def legal(self, op, early=False):
        """May the table do `op` (record.OP_*) now? The turn's rules only
        (what a record carries is judged when it is applied); why not:
        table.refused(op), an errors code."""
        return self.table is not None and self.table.refused(op, early) is None

    def encode(self, ev):
        """The compact record of an event dict (fields checked, rules not)."""
        return record.encode(ev, self.game, self.names)

    def apply(self, ev):
        """Apply one event dict; EngineError and no change if it is illegal."""
        self.apply_record(self.encode(ev))

    def apply_record(self, rec):
        """Apply one compact record (an undo record undoes)."""
        if rec[0] == _OP_UNDO:
            self.undo()
            return
        self.judge(rec)
        self.log.append(rec)

    def judge(self, rec):
        """Apply a record to the state only; the log is the caller's business
        (refold and restore feed it the log, storage judges a record before
        any of it reaches flash). EngineError: the state is unchanged."""
        if rec[0] == _OP_START:
            if self.table is not None:
                raise errors.EngineError(errors.ALREADY_STARTED, "the game has already started")
            self.table = new_state(rec)
        elif self.table is None:
            raise errors.EngineError(errors.NOT_STARTED, "the first event must be start")
        else:
            self.table.apply(rec)

    def undo(self):
        """Remove the latest event after start (any number of times)."""
        if len(self.log) <= 1:
            raise errors.EngineError(errors.NOTHING_TO_UNDO, "undo: nothing to undo")
        self.log.pop()
        self.refold()

    def refold(self):
        self.table = None
        for rec in self.log.records():
            self.judge(rec)

    def snapshot(self, pre=0, post=0, spare=None):
        """The state as bytes, for a boot that must not refold a long log:
        [records covered: 4 bytes][start record length][start record][table's dump],
        with `pre` spare bytes before it and `post` after (the store's
        header and checksum), in one buffer of exactly that length: the
        first bytes of `spare` (a memoryview) when it is a bytearray big
        enough, else a new bytearray. No pieces joined: on a small heap
        they fragment it (the store reuses its buffers instead)."""
        if self.table is None:
            raise errors.EngineError(errors.NOT_STARTED, "no game to snapshot")
        count = len(self.log)
        start = next(iter(self.log.records()))
        k = len(start)
        n = pre + 5 + k + self.table.dump_size() + post
        out = memoryview(spare)[:n] if spare is not None and len(spare) >= n else bytearray(n)
        out[pre : pre + 4] = count.to_bytes(4, "little")
        out[pre + 4] = k
        out[pre + 5 : pre + 5 + k] = start
        self.table.dump_into(out, pre + 5 + k)
        return out

    def _restore(self, snap):
        """The snapshot must belong to this log (same start record, no more
        records than the log holds); anything else raises ValueError and the
        caller falls back to a full refold."""
        count = int.from_bytes(snap[:4], "little")
        k = snap[4]
        start = bytes(snap[5 : 5 + k])
        if count < 1 or count > len(self.log) or bytes(next(iter(self.log.records()))) != start:
            raise ValueError("snapshot")
        self.table = new_state(start)
        self.table.load(snap[5 + k :])
        for rec in self.log.records(count):
            self.judge(rec)

    def state(self):
        """The state as a plain dict (see docs/game-record.md). Imported on
        first use: the board never asks (engine_lite/readout.py)."""
        from engine_lite.readout import state_dict

        return state_dict(self.table)

    def events(self):
        """The effective events, as dicts, oldest first (host side: the
        decoder is imported on first use)."""
        from engine_lite.readout import log_events

        return log_events(self.log)

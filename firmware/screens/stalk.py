"""Stalk Exchange: play, the harvest being counted, portfolio entry.

Play: OK plant, MENU swap, a flower = harvest +1 of it (counted on the
harvest screen, OK confirms), hold a flower = its market value for 2 s,
hold OK end turn (before two basic actions: "stuck", straight to the
upkeep, ruling R3), hold MENU menu, UNDO undo. Whether an action is legal
and what it costs is the engine's answer (Game.legal / Game.cost), never
re-derived here. Gestures that are a table event allocate nothing (the
records are the engine's constants, a heap_lock test proves it).
"""

from engine_lite import record
from engine_lite.tables import TOKENS_PER_FLOWER
from engine_lite.vocab import B_UNDO, B_OK, B_MENU
from firmware import ring
from firmware.buttons import SHORT, LONG
from firmware.number_entry import NumberEntry
from firmware.screens import Screen


class StalkPlay(Screen):
    name = "stalk"

    def show(self):
        g = self.app.game
        t = g.table
        v = self.app.view
        v.mode = ring.M_STALK
        v.n = t.n
        v.player = t.player
        v.values[:] = t.values  # in C, no allocation: both are 5 bytes
        for s in range(t.n):  # per seat: a state that lost a seat fails here, not later
            v.tokens[s] = t.tokens[s]
            v.flushed[s] = t.flushed[s]
        v.extra_cost = g.cost(record.OP_PLANT)
        v.upkeep = 1 if t.upkeep else 0
        v.until_crash = t.crash_distance()
        v.bag = t.bag
        v.trigger = t.trigger
        v.pending = -1

    def press(self, b, kind):
        app = self.app
        if b < 5:
            if kind == LONG:
                app.peek(b)
            else:
                app.harvest.count(b)
        elif b == B_OK:
            if kind == SHORT:
                app.apply(record.PLANT)
            elif app.game.legal(record.OP_END_TURN):
                app.apply(record.END_TURN)
            else:  # stuck before two basic actions: straight to the upkeep (ruling R3)
                app.apply(record.STUCK)
        elif b == B_MENU:
            if kind == LONG:
                app.menu.open(self)
            else:
                app.apply(record.SWAP)
        else:
            app.undo()


class HarvestCount(Screen):
    """Harvested tokens of one flower being counted: the same flower +1,
    held or UNDO -1, another flower confirms and counts that one, OK
    confirms (held: and ends the turn). Anything else confirms first and is
    then a play gesture."""

    name = "harvest"

    def __init__(self, app):
        self.app = app
        self.flower = -1  # being counted, or -1
        self.n = 0

    def count(self, f):
        """One more harvested token of flower f. The engine says whether
        harvesting may start (after the turn's two basic actions)."""
        app = self.app
        if not app.game.legal(record.OP_HARVEST):
            app.blink_error(ring.E_RULE)
            return
        if self.flower != f:
            if not self.commit():
                return
            self.flower = f
            self.n = 0
        self.n += 1
        app.go(self)

    def show(self):
        self.app.stalk.show()
        v = self.app.view
        v.pending = self.flower
        v.pending_count = self.n

    def clear(self):
        self.flower = -1
        self.n = 0

    def commit(self):
        """Apply the counted harvest (if any); False if it was refused."""
        if self.flower < 0:
            return True
        rec = bytes((record.OP_HARVEST, self.flower, self.n))
        self.clear()
        return self.app.apply(rec) or self.app.home()

    def press(self, b, kind):
        app = self.app
        if b == self.flower or b == B_UNDO:
            if kind == LONG or b == B_UNDO:
                self.n -= 1
                if self.n <= 0:
                    self.clear()
                    app.home()
                else:
                    self.show()
            else:
                self.count(b)
        elif b < 5:
            if kind == LONG:
                app.peek(b)
            else:
                self.count(b)
        elif b == B_OK:
            if self.commit() and kind == LONG:
                app.apply(record.END_TURN)
        elif self.commit() or kind == LONG:  # MENU: swap (refused in the upkeep) or the menu
            app.stalk.press(b, kind)


class PortfolioEntry(Screen):
    """Game over: each player's portfolio, flower = +1 token, held -1, UNDO
    the last tap, OK = this player done. The seat is the first whose
    portfolio is missing; a new seat starts from zero."""

    name = "portfolio"

    def __init__(self, app):
        self.app = app
        self.seat = -1
        self.counts = NumberEntry(5)

    def clear(self):
        self.seat = -1

    def show(self):
        t = self.app.game.table
        v = self.app.view
        seat = 0
        for s in range(t.n):
            v.entered[s] = t.entered[s]
        for s in range(t.n):
            if not t.entered[s]:
                seat = s
                break
        if seat != self.seat:
            self.counts.start(0)
            self.seat = seat
        v.n = t.n
        v.player = seat
        v.mode = ring.M_PORTFOLIO
        v.counts[:] = self.counts.values

    def press(self, b, kind):
        app = self.app
        c = self.counts
        if b < 5:
            if c.add(b, 1 if kind == SHORT else -1, TOKENS_PER_FLOWER):
                self.show()
            else:
                app.blink_error(ring.E_SHORT)
        elif b == B_OK:
            v = c.values
            app.apply(record.encode_portfolio(self.seat, v))
        elif b == B_UNDO:
            if c.undo():
                self.show()
            else:
                app.undo()
        else:
            app.menu.open(self)

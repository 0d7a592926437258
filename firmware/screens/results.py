"""Results (both games): winners and scores on the ring; OK starts the
next game, UNDO reopens the last entry, hold a flower (Stalk Exchange) =
its final value."""

from engine_lite import record
from engine_lite.vocab import FLOWERS, B_UNDO, B_OK, B_MENU
from firmware import ring
from firmware.buttons import LONG
from firmware.screens import Screen


class Results(Screen):
    name = "results"

    def show(self):
        g = self.app.game
        t = g.table
        final = t.final()
        v = self.app.view
        v.n = t.n
        if g.game == record.STALK:
            v.mode = ring.M_STALK_END
            for f in range(5):
                v.values[f] = final["values"][FLOWERS[f]]
                v.busted[f] = 1 if FLOWERS[f] in final["busted"] else 0
        else:
            v.mode = ring.M_ORCHIDS_END
        for s in range(5):
            v.winner[s] = 0
            v.scores[s] = 0
        for row in final["players"]:
            s = t.names.index(row["name"])
            v.winner[s] = 1 if row["winner"] else 0
            v.scores[s] = row["score"]

    def press(self, b, kind):
        app = self.app
        if b == B_OK:
            app.finish()
        elif b == B_UNDO:
            app.undo()
        elif b == B_MENU:
            app.menu.open(self)
        elif kind == LONG and app.game.game == record.STALK:
            app.peek(b)  # a held flower: its final value
        else:
            app.blink_error()

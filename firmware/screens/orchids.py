"""Oh My. Orchids!: play and plant entry.

Play: flower k = take k Seed cards, OK plant, hold OK end turn / pass,
UNDO undo, hold MENU menu. Plant entry: kind (dahlia = a flora of a type
this player has not planted, daffodil = a type already planted, OK =
orchid) -> points -> Seed cards; the engine names the plant so that the
variety count stays right (ruling R7, OrchidsState.new_name).
"""

try:
    from micropython import const
except ImportError:  # CPython

    def const(x):
        return x


from engine_lite import EngineError
from engine_lite import record
from engine_lite.vocab import B_UNDO, B_OK, B_MENU
from firmware import ring
from firmware.buttons import SHORT, LONG
from firmware.number_entry import NumberEntry
from firmware.screens import Screen, show_choice, show_number, number_press

STEPS = ("plant_kind", "plant_points", "plant_seeds")
_KIND = const(0)
_POINTS = const(1)
_SEEDS = const(2)


class OrchidsPlay(Screen):
    name = "orchids"

    def show(self):
        t = self.app.game.table
        v = self.app.view
        v.mode = ring.M_ORCHIDS
        v.n = t.n
        v.player = t.player
        ending = 0
        for s in range(t.n):
            v.flowers[s] = t.planted(s)
            if t.ends_game(s):
                ending |= 1 << s
        v.ending = ending
        v.last_round = 1 if t.last_round else 0

    def press(self, b, kind):
        app = self.app
        if b < 5:
            if kind == SHORT:
                app.apply(bytes((record.OP_TAKE, b + 1)))
            else:
                app.blink_error()
        elif b == B_OK:
            if kind == SHORT:
                app.plant.begin()
            else:
                app.apply(record.END_TURN)
        elif b == B_UNDO:
            app.undo()
        else:
            app.menu.open(self)


class PlantEntry(Screen):
    def __init__(self, app):
        self.app = app
        self.step = _KIND
        self.name = STEPS[0]
        self.kind = 0  # 0 orchid, 1 flora of a new type, 2 a flora type already planted
        self.points = 0
        self.number = NumberEntry()  # the points, then the Seed cards

    def begin(self):
        self._go(_KIND, 0)

    def _go(self, step, value):
        self.step = step
        self.name = STEPS[step]
        self.number.start(value)
        self.app.go(self)

    def show(self):
        v = self.app.view
        if self.step == _KIND:
            show_choice(v, ring.CH_KIND, 3, -1)
        else:
            show_number(v, ring.N_POINTS if self.step == _POINTS else ring.N_SEEDS, self.number.value())

    def press(self, b, kind):
        app = self.app
        s = self.step
        if s == _KIND:
            if b < 2 and kind == SHORT:
                if b and app.game.table.flora_name() is None:
                    app.blink_error(ring.E_RULE)
                    return
                self.kind = b + 1
            elif b == B_OK:
                self.kind = 0
            elif b == B_UNDO or b == B_MENU:
                app.home()
                return
            else:
                app.blink_error()
                return
            self._go(_POINTS, 0)
        elif b == B_OK:
            if s == _POINTS:
                self.points = self.number.value()
                self._go(_SEEDS, 0)
            else:
                self._sow(self.number.value())
        elif b == B_MENU:
            app.home()
        elif b == B_UNDO and not self.number.n:
            if s == _POINTS:
                self._go(_KIND, 0)
            else:
                self._go(_POINTS, self.points)
        elif number_press(app, self.number, b, kind, record.POINTS_MAX):
            self.show()

    def _sow(self, seeds):
        app = self.app
        game = app.game
        ev = {
            "ev": "plant",
            "name": game.table.new_name(self.kind),
            "kind": "flora" if self.kind else "orchid",
            "points": self.points,
            "seeds": seeds,
        }
        try:
            rec = game.encode(ev)
        except EngineError:
            app.blink_error()
            return
        if app.apply(rec):
            app.home()

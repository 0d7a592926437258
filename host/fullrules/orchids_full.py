"""Oh My. Orchids! with every card: the full-rules engine.

engine_lite only hears "took 3 seeds" and "planted Bamboo Orchid for 3
seeds"; this module holds the cards themselves: the three face-down decks,
the Orchid (3), Flora (4) and Seed (5) displays, every hand, the discard
pile and each player's composted cards, and plays complete games with seeded
policies. It tells an `engine_lite.Game` the same events a player would and
asks what the table rules decide (whether a take is legal and how many cards
the hand limit composts: `Game.table.refused` / `cost`; the last round, game
over, final scores and ranks: `Game.state()`): none of those rules is
written here a second time. With `check=True` it compares its hands, flowers
and composted cards with the engine after every turn.

The real card list is not known to us: decks come from a JSON file
(data/orchids_sample_deck.json is a clearly labelled SAMPLE; its format is
in docs/simulation.md). Interpretations of the rulebook are in
docs/rulings.md, section "Full engine (host)".
"""

import functools
import itertools
import os
import random

import engine_lite
from engine_lite import record
from engine_lite import tables
from host.fullrules.fullgame import begin, load_json, play_turns, record_lines, summary

SAMPLE_DECK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "orchids_sample_deck.json")
ORCHID_DISPLAY = 3  # Setup 2: "flip over 3 Orchid cards"
FLORA_DISPLAY = 4  # Setup 3: "flip over 4 Flora cards"
COST_KINDS = ("same_colour", "different_types", "exact_seeds")

TAKE = "take"
PLANT = "plant"


class DeckError(ValueError):
    """A deck file that cannot be played (one-line message)."""


class Seed:
    """A seed card: a colour and a seed type (its number of seeds, 1 to 4)."""

    __slots__ = ("colour", "seeds", "id")

    def __init__(self, colour, seeds, id):
        self.colour = colour
        self.seeds = seeds
        self.id = id

    def __repr__(self):
        return "Seed(%s,%d)" % (self.colour, self.seeds)


class Flower:
    """An Orchid or Flora card with its points and its cost."""

    __slots__ = ("name", "kind", "points", "cost_kind", "cost_n", "id")

    def __init__(self, name, kind, points, cost_kind, cost_n, id):
        self.name = name
        self.kind = kind
        self.points = points
        self.cost_kind = cost_kind
        self.cost_n = cost_n
        self.id = id

    def __repr__(self):
        return "Flower(%s)" % self.name

    def pays(self, cards):
        """Whether these seed cards are exactly this flower's cost.

        same_colour n: n cards, all of one colour. different_types n: n cards,
        no two of the same seed type. exact_seeds n: any cards whose seeds add
        up to exactly n (ruling "Orchids costs")."""
        if self.cost_kind == "exact_seeds":
            return bool(cards) and sum(c.seeds for c in cards) == self.cost_n
        if len(cards) != self.cost_n:
            return False
        if self.cost_kind == "same_colour":
            return len({c.colour for c in cards}) == 1
        return len({c.seeds for c in cards}) == len(cards)

    def payments(self, hand):
        """Every way to pay this flower from `hand`: tuples of hand indexes."""
        n = len(hand)
        if self.cost_kind == "exact_seeds":
            out = []
            for k in range(1, n + 1):
                for combo in itertools.combinations(range(n), k):
                    if sum(hand[i].seeds for i in combo) == self.cost_n:
                        out.append(combo)
            return out
        if self.cost_n > n:
            return []
        out = []
        for combo in itertools.combinations(range(n), self.cost_n):
            if self.pays([hand[i] for i in combo]):
                out.append(combo)
        return out

    def event(self, seeds):
        return {"ev": "plant", "name": self.name, "kind": self.kind, "points": self.points, "seeds": seeds}


class Deck:
    """The card list of a game: seed cards, orchids, flora, from a JSON file."""

    def __init__(self, seeds, orchids, flora, name="deck", sample=False):
        self.seeds = seeds  # list of (colour, seeds)
        self.orchids = orchids  # list of (name, points, cost_kind, n)
        self.flora = flora  # list of (name, points, cost_kind, n), one per copy
        self.name = name
        self.sample = sample

    @classmethod
    def load(cls, path=None):
        path = SAMPLE_DECK if path is None else path
        data = load_json(path, "deck", DeckError)
        try:
            seeds = []
            for c in data["seed_cards"]:
                s = int(c["seeds"])
                if not 1 <= s <= 9 or not isinstance(c["colour"], str):
                    raise ValueError
                seeds.extend([(c["colour"], s)] * int(c.get("copies", 1)))
            orchids = [cls._flower(x) for x in data["orchids"]]
            flora = []
            for x in data["flora"]:
                flora.extend([cls._flower(x)] * int(x.get("copies", 1)))
        except (KeyError, TypeError, ValueError):
            raise DeckError("deck %s: needs seed_cards [{colour, seeds, copies}], orchids and flora [{name, points, cost: {kind, count|total}, copies}]" % path)
        names = [o[0] for o in orchids]
        if len(set(names)) != len(names):
            raise DeckError("deck %s: orchid names must be unique (each orchid card is unique)" % path)
        if not seeds:
            raise DeckError("deck %s: no seed cards" % path)
        return cls(seeds, orchids, flora, data.get("name", os.path.basename(path)), bool(data.get("sample")))

    @staticmethod
    def _flower(x):
        cost = x["cost"]
        kind = cost["kind"]
        if kind not in COST_KINDS:
            raise ValueError
        n = int(cost["total"] if kind == "exact_seeds" else cost["count"])
        if n < 1 or not isinstance(x["name"], str) or int(x["points"]) < 0:
            raise ValueError
        return (x["name"], int(x["points"]), kind, n)


@functools.cache
def sample_deck():
    """The shipped sample deck, loaded once per process."""
    return Deck.load()


class Mismatch(AssertionError):
    """The full engine and engine_lite disagree: a bug in one of them."""


class OrchidsGame:
    """One complete game: build, play(), result()."""

    def __init__(self, names, seed=0, policies=None, deck=None, check=True, max_turns=2000):
        begin(self, "Oh My. Orchids!", names, seed, policies, GreedyPolicy, check, max_turns)
        n = self.n
        deck = sample_deck() if deck is None else deck
        self.deck = deck
        # Setup 1: three decks, shuffled face down; pop() draws the top card.
        self.seed_deck = [Seed(c, s, i) for i, (c, s) in enumerate(deck.seeds)]
        self.orchid_deck = [Flower(nm, "orchid", p, k, c, i) for i, (nm, p, k, c) in enumerate(deck.orchids)]
        self.flora_deck = [Flower(nm, "flora", p, k, c, 1000 + i) for i, (nm, p, k, c) in enumerate(deck.flora)]
        for d in (self.seed_deck, self.orchid_deck, self.flora_deck):
            self.rng.shuffle(d)
        self.discard = []
        self.reshuffles = 0
        # Setup 2-4: the displays.
        self.orchid_display = []
        self.flora_display = []
        self.seed_display = []
        self._refill_flowers()
        self._refill_seeds()
        # Setup 5: seat k draws k seed cards.
        self.hands = [[self._draw_seed() for _ in range(tables.STARTING_SEEDS[s])] for s in range(n)]
        if any(c is None for h in self.hands for c in h):
            raise ValueError("the deck has too few seed cards for the starting hands")
        self.flowers = [[] for _ in range(n)]
        self.composted = [[] for _ in range(n)]
        self.g = engine_lite.Game()
        self.g.apply({"ev": "start", "game": "oh-my-orchids", "players": self.names})
        self.seat = 0
        self.turns = 0
        self.last_round = False
        self.planted_this_turn = 0
        self.end_reason = None
        self.final = None
        self.stats = {TAKE: 0, PLANT: 0, "passes": 0, "composted": 0}
        if check:
            self.cross_check(self.g.state())

    # -- decks and displays -------------------------------------------------

    def _draw_seed(self):
        """Top card of the seed deck; "If there are insufficient cards in the
        Seed deck, shuffle the discard pile to form a new deck"."""
        if not self.seed_deck and self.discard:
            self.seed_deck = self.discard
            self.discard = []
            self.rng.shuffle(self.seed_deck)
            self.reshuffles += 1
        return self.seed_deck.pop() if self.seed_deck else None

    def _refill_seeds(self):
        while len(self.seed_display) < tables.SEED_DISPLAY:
            c = self._draw_seed()
            if c is None:
                return  # every seed card is in a hand or composted
            self.seed_display.append(c)

    def _refill_flowers(self):
        """"replenished to 3 and 4 face-up cards ... In the rare case that
        there are insufficient Orchids, there will be less cards"."""
        while len(self.orchid_display) < ORCHID_DISPLAY and self.orchid_deck:
            self.orchid_display.append(self.orchid_deck.pop())
        while len(self.flora_display) < FLORA_DISPLAY and self.flora_deck:
            self.flora_display.append(self.flora_deck.pop())

    # -- what a policy may ask -------------------------------------------

    def take_options(self):
        """("colour", c) and ("type", s) for every colour and seed type on
        the Seed display: "all cards of the same Seed type, or all cards of
        the same colour"."""
        opts = []
        for c in sorted({x.colour for x in self.seed_display}):
            opts.append(("colour", c))
        for s in sorted({x.seeds for x in self.seed_display}):
            opts.append(("type", s))
        return opts

    def taken_by(self, how, value):
        if how == "colour":
            return [x for x in self.seed_display if x.colour == value]
        return [x for x in self.seed_display if x.seeds == value]

    def display(self):
        """(where, position, Flower) for every flower card face up."""
        out = [("orchid", i, f) for i, f in enumerate(self.orchid_display)]
        out += [("flora", i, f) for i, f in enumerate(self.flora_display)]
        return out

    def plant_options(self, seat=None):
        """(where, position, Flower, payments) for every affordable flower."""
        hand = self.hands[self.seat if seat is None else seat]
        out = []
        for where, i, f in self.display():
            pays = f.payments(hand)
            if pays:
                out.append((where, i, f, pays))
        return out

    def may_take(self):
        """A take is legal now (engine_lite's refused: not in the last round,
        not after a plant, ruling R9) and the Seed display holds a card."""
        return self.g.table.refused(record.OP_TAKE) is None and bool(self.seed_display)

    def take_excess(self, k):
        """Seed cards over the hand limit after taking `k`, which "must
        immediately" be composted: engine_lite's cost of the take."""
        return self.g.table.cost(record.OP_TAKE, k)

    # -- actions ---------------------------------------------------------

    def do_take(self, how, value, policy):
        cards = self.taken_by(how, value)
        if not cards or not self.may_take():
            raise ValueError("take: nothing to take as %s %r" % (how, value))
        excess = self.take_excess(len(cards))  # asked before the engine takes them
        self.g.apply({"ev": "take", "seeds": len(cards)})
        self.seed_display = [x for x in self.seed_display if x not in cards]
        hand = self.hands[self.seat]
        hand.extend(cards)
        if excess > 0:
            # The engine already composted `excess` cards (a count); the
            # player chooses which ones.
            drop = sorted(set(policy.compost(self, excess)), reverse=True)
            if len(drop) != excess:
                raise ValueError("policy composted %d cards, %d needed" % (len(drop), excess))
            for i in drop:
                self.composted[self.seat].append(hand.pop(i))
            self.stats["composted"] += excess
        self._refill_seeds()
        self.stats[TAKE] += 1

    def do_plant(self, where, pos, payment):
        disp = self.orchid_display if where == "orchid" else self.flora_display
        f = disp[pos]
        hand = self.hands[self.seat]
        cards = [hand[i] for i in payment]
        if len(set(payment)) != len(payment) or not f.pays(cards):
            raise ValueError("plant: %r does not pay for %s" % (cards, f.name))
        self.g.apply(f.event(len(cards)))
        for i in sorted(payment, reverse=True):
            self.discard.append(hand.pop(i))
        del disp[pos]
        self.flowers[self.seat].append(f)
        self.planted_this_turn += 1
        self.stats[PLANT] += 1

    # -- the turn ----------------------------------------------------------

    def play_turn(self, st):
        policy = self.policies[self.seat]
        self.last_round = st["last_round"]
        self.planted_this_turn = 0
        took = False
        while True:
            act = policy.choose(self)
            if act is None:
                break
            if act[0] == TAKE:
                self.do_take(act[1], act[2], policy)
                took = True
                break
            self.do_plant(act[1], act[2], act[3])
        if not took and self.planted_this_turn == 0:
            if not self.last_round:
                if self.may_take() or self.plant_options():
                    raise ValueError("policy %r passed outside the last round" % policy)
                self.end_reason = "stalled"  # ruling H10
                return None
            self.stats["passes"] += 1
        if self.planted_this_turn:
            self._refill_flowers()
        self.g.apply({"ev": "end_turn"})
        self.turns += 1
        st = self.g.state()
        self.seat = (self.seat + 1) % self.n
        if self.check:
            self.cross_check(st)
        return st

    def play(self):
        st = play_turns(self)
        if st is None:
            return self.result()
        self.end_reason = "seven_flowers"
        self.final = st["final"]
        return self.result()

    # -- results and checks --------------------------------------------------

    def result(self):
        return summary(self, "oh-my-orchids", reshuffles=self.reshuffles)

    def record_lines(self):
        return record_lines(self.g)

    def cross_check(self, st):
        """Cards on the table vs. engine_lite: hand sizes, composted cards,
        flowers planted; and every seed card in exactly one place."""
        for s, name in enumerate(self.names):
            p = st["players"][name]
            if p["hand"] != len(self.hands[s]):
                raise Mismatch("%s's hand: engine %d, table %d" % (name, p["hand"], len(self.hands[s])))
            if p["composted"] != len(self.composted[s]):
                raise Mismatch("%s composted: engine %d, table %d" % (name, p["composted"], len(self.composted[s])))
            if [f["name"] for f in p["flowers"]] != [f.name for f in self.flowers[s]]:
                raise Mismatch("%s's flowers differ" % name)
            if p["points"] != sum(f.points for f in self.flowers[s]):
                raise Mismatch("%s's flower points differ" % name)
        if not st["game_over"] and st["current_player"] != self.names[self.seat]:
            raise Mismatch("turn order: engine says %s, table %s" % (st["current_player"], self.names[self.seat]))
        ids = [c.id for c in self.seed_deck + self.seed_display + self.discard]
        for s in range(self.n):
            ids += [c.id for c in self.hands[s] + self.composted[s]]
        if sorted(ids) != list(range(len(self.deck.seeds))):
            raise Mismatch("the seed cards are not each in exactly one place")


# ---------------------------------------------------------------------------
# Policies. choose(game) returns ("take", "colour"|"type", value),
# ("plant", where, position, payment) or None (end the turn);
# compost(game, k) returns k hand indexes to compost.


class RandomPolicy:
    """A random legal move with a seeded rng: take or plant with even odds
    (whichever is possible), a random take option, a random affordable flower
    paid a random way; after a plant, another one half the time; in the last
    round it plants when it can four times in five. Composts at random."""

    name = "random"

    def __init__(self, rng):
        self.rng = rng

    def choose(self, game):
        r = self.rng
        if game.planted_this_turn:
            if r.random() < 0.5:
                return None
            plants = game.plant_options()
            return self._plant(plants) if plants else None
        plants = game.plant_options()
        if game.last_round:
            return self._plant(plants) if plants and r.random() < 0.8 else None
        takes = game.take_options() if game.may_take() else []
        if plants and (not takes or r.random() < 0.5):
            return self._plant(plants)
        if takes:
            how, value = takes[r.randrange(len(takes))]
            return (TAKE, how, value)
        return None

    def _plant(self, plants):
        where, pos, f, pays = plants[self.rng.randrange(len(plants))]
        return (PLANT, where, pos, pays[self.rng.randrange(len(pays))])

    def compost(self, game, k):
        return self.rng.sample(range(len(game.hands[game.seat])), k)


class GreedyPolicy:
    """Plants whenever it can, the flower worth most now (its points plus the
    variety bonus it adds), paid with the fewest cards; keeps planting while
    anything is affordable. Otherwise it takes the option after which the
    best display flower is affordable, else the one that brings most cards
    without composting. It composts the cards of its rarest colour, lowest
    seeds first."""

    name = "greedy"

    def __init__(self, rng):
        self.rng = rng

    def _value(self, game, f):
        mine = game.flowers[game.seat]
        names = {x.name for x in mine}
        gain = f.points
        if f.name not in names:
            gain += tables.variety_bonus(len(names) + 1) - tables.variety_bonus(len(names))
        return gain

    def choose(self, game):
        plants = game.plant_options()
        if plants:
            best = max(plants, key=lambda p: (self._value(game, p[2]), -min(len(x) for x in p[3])))
            where, pos, f, pays = best
            pay = min(pays, key=lambda x: (len(x), sum(game.hands[game.seat][i].seeds for i in x)))
            return (PLANT, where, pos, pay)
        if game.planted_this_turn or not game.may_take():
            return None
        hand = game.hands[game.seat]
        best = None
        best_key = None
        for how, value in game.take_options():
            cards = game.taken_by(how, value)
            excess = game.take_excess(len(cards))
            after = hand + cards
            if excess:
                after = after[: len(after) - excess]  # roughly: the excess goes
            top = 0
            for where, i, f in game.display():
                if f.payments(after):
                    top = max(top, self._value(game, f))
            # cards kept, less the ones composted
            key = (top, len(cards) - 2 * excess, self.rng.random())
            if best_key is None or key > best_key:
                best_key = key
                best = (TAKE, how, value)
        return best

    def compost(self, game, k):
        hand = game.hands[game.seat]
        freq = {}
        for c in hand:
            freq[c.colour] = freq.get(c.colour, 0) + 1
        order = sorted(range(len(hand)), key=lambda i: (freq[hand[i].colour], hand[i].seeds, i))
        return order[:k]


POLICIES = {"random": RandomPolicy, "greedy": GreedyPolicy}


def play_game(names, seed, policy_names=("greedy",), deck=None, check=True):
    """Play one seeded game; `policy_names` is cycled over the seats."""
    master = random.Random(seed)
    policies = []
    for i in range(len(names)):
        cls = POLICIES[policy_names[i % len(policy_names)]]
        policies.append(cls(random.Random(master.getrandbits(64))))
    game = OrchidsGame(names, seed=master.getrandbits(64), policies=policies, deck=deck, check=check)
    game.play()
    return game

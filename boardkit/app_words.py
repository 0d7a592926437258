"""The board's state in words, for the simulator beside the drawn ring.

Why a separate module: only the simulator (and a curious host over the
link) asks for words; on the board this module is never imported (the
bundle leaves it out), so its strings cost neither flash nor RAM.

Words say what a player sees and does, never an internal screen name:
`describe(app)` is the game in words (first line: where you are),
`hint(app)` the buttons that mean something right now (it follows the
phase: action phase, extra actions, upkeep, a harvest being counted, the
last turn / round), `label(app)` a short name for the middle of the drawn
ring, `refusal(app, code)` why the ring just blinked when the app itself
refused a press (the engine's own refusals carry their message).
"""

from engine_lite import errors, record
from engine_lite.tables import BASIC_ACTIONS, PORTFOLIO_SIZE, TRACK_START_PLACEHOLDER, track_key
from engine_lite.vocab import BRIGHT_LEVELS, FLOWERS, GAME_TITLES
from firmware import ring
from firmware.buttons import ticks_diff

TITLES = {
    "setup_game": ("Setup: which game?", "which game?"),
    "setup_players": ("Setup: how many players?", "players?"),
    "setup_length": ("Setup: 2 players, long or short game?", "long/short?"),
    "setup_track": ("Setup: market-track start space", "start space"),
    "stalk": ("Stalk Exchange", "Stalk Exch."),
    "harvest": ("Stalk Exchange: harvest", "harvest"),
    "orchids": ("Oh My. Orchids!", "Orchids"),
    "plant_kind": ("Plant: which kind?", "plant: kind"),
    "plant_points": ("Plant: its points", "plant: points"),
    "plant_seeds": ("Plant: Seed cards discarded for it", "plant: cards"),
    "portfolio": ("Game over: portfolio entry", "portfolios"),
    "results": ("Results", "results"),
    "menu": ("Menu", "menu"),
    "brightness": ("Menu: brightness", "brightness"),
    "confirm_new": ("Menu: abandon this game?", "new game?"),
}

HINTS = {
    "setup_game": "1 dahlia = Stalk Exchange · 2 daffodil = Oh My. Orchids! · MENU cycles · OK next",
    "setup_players": "2-5 = that many players · MENU cycles · OK next · UNDO back",
    "setup_length": "1 dahlia = long game · 2 daffodil = short game · OK next · UNDO back",
    "plant_kind": "1 dahlia = flora of a type new to this player · 2 daffodil = a type they have · OK = orchid · UNDO cancels",
    "plant_points": "flower k = +k · hold k = -k · OK next · UNDO last tap / back · MENU cancels",
    "plant_seeds": "Seed CARDS, not seeds (3 cards of 2 seeds = 3): flower k = +k · hold k = -k · OK plants · UNDO back",
    "portfolio": "flower = +1 token · hold = -1 · OK = this player done · UNDO last tap · hold MENU menu",
    "menu": "1 flush · 2 crash · 3 brightness · 4 new game · 5 close · MENU moves · OK chooses · UNDO closes",
    "brightness": "flower 1-5 = level %s · OK keeps it · UNDO cancels" % ", ".join(str(x) for x in BRIGHT_LEVELS),
    "confirm_new": "OK = abandon this game and start a new one · anything else = no",
}

# Why the app itself refused a press (no engine message), by screen and code.
APP_REFUSALS = {
    ("stalk", ring.E_RULE): "harvest comes in the upkeep, after the turn's two basic actions",
    ("harvest", ring.E_RULE): "harvest comes in the upkeep, after the turn's two basic actions",
    ("plant_kind", ring.E_RULE): "this player has planted no flora yet: 1 dahlia for a new type",
}
# The menu's items (hold MENU), in sector / flower-button order, in the
# rulebook's words: what each one does at the table.
MENU_ITEMS = (
    "flush the Exchange: 1 token, once a game",
    "crash: harvest met the top Stalk Value",
    "brightness of the ring",
    "new game (abandon this one)",
    "close the menu",
)

CODE_WORDS = {
    ring.E_NOTHING: "that button does nothing here",
    ring.E_RULE: "not at this point of the turn",
    ring.E_SHORT: "out of range (not enough, or past the limit)",
    ring.E_ONCE: "already done (once only)",
}


def player_refusal(app, err):
    """The engine refused an event: why, as a player at the table would say
    it (the cards' words, the numbers from the table). The engine's stable
    code stays out of this line (the link, the tests and docs/ key on it);
    its own message is the fallback for a code not worded here."""
    code = getattr(err, "code", None)
    g = app.game
    st = g.table if g is not None else None
    who = st.names[st.player] if st is not None and not st.over else ""
    stalk = g is not None and g.game == record.STALK
    if code == errors.PORTFOLIO_SIZE:
        seat = app.view.player
        held_ = sum(app.portfolio.counts.values[f] for f in range(5))
        return "%s entered %s, but with %d players every portfolio holds exactly %d" % (
            st.names[seat], count(held_, "token"), st.n, PORTFOLIO_SIZE[st.n])
    if code == errors.TURN_INCOMPLETE:
        if stalk:
            return "%s plays two basic actions (plant or swap) first" % who
        return "%s takes Seed cards or plants first" % who
    if code == errors.HAND_SHORT:
        return "%s has %s: that flower costs %d" % (who, count(st.hand[st.player], "Seed card"), app.plant.number.values[0])
    if code == errors.TOO_MANY and "garden" in str(err) and st is not None:  # ruling R10
        return "the Garden has only %s to harvest (this turn's Bulbs wait for the next turn)" % count(st.garden, "Flower token")
    if code == errors.MIXED_TURN:
        return "a turn is one or the other: take Seed cards, or plant flowers"
    words = {
        errors.UPKEEP: "the upkeep has begun (the first harvest): no more plants or swaps this turn",
        errors.FLUSH_USED: "%s has already flushed the Exchange (once a game)" % who,
        errors.EXCHANGE_EMPTY: "the Stalk Exchange is empty: nothing to plant or swap",
        errors.NO_TOKENS: "%s has no Seedy Business token left" % who,
        errors.TRIGGERED: "the game's end is already triggered: this is the last turn",
        errors.GAME_OVER: "the game is over" + (": enter the portfolios" if stalk else ""),
        errors.NOT_OVER: "portfolios are entered after the game",
        errors.LAST_ROUND: "last round: plant only, no taking Seed cards",
        errors.NOTHING_TO_UNDO: "nothing to undo",
    }.get(code)
    if words:
        return words
    msg = str(getattr(err, "message", err))
    for prefix in ("plant: ", "harvest: ", "portfolio: ", "undo: "):  # the event's name: not a player's word
        if msg.startswith(prefix):
            msg = msg[len(prefix):]
    return msg


def title(app):
    return TITLES.get(app.screen, (app.screen, app.screen))[0]


def label(app):
    """A few words for the middle of the drawn ring."""
    return TITLES.get(app.screen, ("", ""))[1]


def blinks(code):
    """How the ring showed refusal `code` (firmware/ring.py E_*)."""
    return "1 long blink" if code <= ring.E_NOTHING else "%d red blinks" % code


def refusal(app, code):
    """Words for a refusal the app made itself (no engine error)."""
    why = APP_REFUSALS.get((app.screen, code)) or CODE_WORDS.get(code, "refused")
    return "%s (%s)" % (why, blinks(code))


def _menu(app):
    """The menu in words: every item it offers, the chosen one marked (the
    ring marks it with its sector; OK chooses it)."""
    m = app.menu
    out = ["Menu: OK chooses the marked item, MENU moves"]
    for i, words in enumerate(MENU_ITEMS):
        if m.items & (1 << i):
            out.append("%s %d %s" % (">" if i == m.sel else " ", i + 1, words))
    return out


def held(app):
    """The flower held down (hold a flower = its value), in words, while the
    ring shows it (ring.PEEK_MS); None otherwise."""
    v = app.view
    if v.peek < 0 or v.peek_at < 0 or ticks_diff(app.clock(), v.peek_at) >= ring.PEEK_MS:
        return None
    final = app.screen == "results"
    return "held: %s, %s %d" % (FLOWERS[v.peek], "final value" if final else "Stalk Value", v.values[v.peek])


def describe(app):
    g = app.game
    s = app.screen
    if s == "menu" and app.menu.step == 0:  # the menu's items (its brightness and confirm steps keep their title)
        return _menu(app)
    lines = [] if s in ("stalk", "harvest", "orchids", "results", "portfolio") else [title(app)]
    if g is not None and g.table is not None:
        st = g.table
        if g.game == record.STALK:
            lines.extend(_stalk(app, st))
        else:
            lines.extend(_orchids(app, st))
    else:
        su = app.setup
        lines.append(
            "chosen: %s, %d players%s"
            % (GAME_TITLES[su.game], su.players, (", short" if su.short else ", long") if su.players == 2 else "")
        )
    if s == "setup_track":
        lines.append("start space: %d (the number printed on your Market board at your player count)" % app.setup.track.values[0])
        if app.setup.unconfirmed:
            key = track_key(app.setup.players, app.setup.short)
            lines.append("UNCONFIRMED: %d is a placeholder; tap flowers to set it, hold OK to confirm it" % TRACK_START_PLACEHOLDER[key])
    elif s == "plant_points":
        lines.append("points: %d" % app.plant.number.values[0])
    elif s == "plant_seeds":
        lines.append("Seed cards discarded: %d" % app.plant.number.values[0])
    peek = held(app)
    if peek:
        lines.append(peek)
    return lines


def hint(app):
    """The buttons that mean something now (the simulator's help line)."""
    s = app.screen
    g = app.game
    if s == "setup_track":
        return "flower k = +k · hold k = -k · OK start · hold OK = confirm the number shown and start · UNDO back"
    if s == "harvest":
        f = FLOWERS[app.harvest.flower]
        return "%s again = +1 · hold %s or UNDO = -1 · other flower = next · OK confirms · hold OK confirms, ends turn" % (f, f)
    if s == "stalk" and g is not None:
        st = g.table
        if st.upkeep:
            return "UPKEEP: flower = harvest +1 (OK confirms) · hold OK end turn · hold flower = its value · UNDO undo"
        more = "OK plant · MENU swap"
        if g.table.cost(record.OP_PLANT):  # past the two basic actions
            more = "OK/MENU = extra plant/swap (a token)" if not st.trigger else "OK plant · MENU swap"
            more += " · flower = harvest +1 · hold OK end turn"
        else:
            more += " · hold OK = stuck, to the upkeep (R3)"
        return more + " · hold flower = its value · hold MENU menu · UNDO undo"
    if s == "orchids" and g is not None:
        st = g.table
        if st.last_round:
            return "LAST ROUND, plant only: OK plant · hold OK end turn / pass · UNDO undo · hold MENU menu"
        return "flower k = take k Seed CARDS · OK plant · hold OK end turn · UNDO undo · hold MENU menu"
    if s == "results":
        if g is not None and g.game == record.STALK:
            return "OK = next game · hold flower = its final value · UNDO reopens the last entry"
        return "OK = next game · UNDO reopens the game"
    return HINTS.get(s, "")


def _actions(st):
    basic = st.actions if st.actions < BASIC_ACTIONS else BASIC_ACTIONS
    extra = st.actions - basic
    out = count(basic, "basic action") + " done"
    if extra:
        out += " + %d extra" % extra
    return out


def count(n, word):
    """ "1 card", "2 cards" (the words here all take an s)."""
    return "%d %s%s" % (n, word, "" if n == 1 else "s")


def _who(st):
    """The player to play, with the seat when the name does not say it
    ("Ann (seat 2)", but "Seat 2")."""
    name = st.names[st.player]
    seat = "Seat %d" % (st.player + 1)
    return name if name == seat else "%s (%s)" % (name, seat.lower())


def _results(out, final, sums):
    """The ranked scores, each with its sum (`sums(player)`, from the final
    breakdown) and, where a tie-break placed the player, the tier that did."""
    for row in final["players"]:
        out.append("#%d %s %d%s = %s" % (row["rank"], row["name"], row["score"], "  WINNER" if row["winner"] else "", sums(row)))
        if "tiebreak" in row:
            out.append("   tie-break: " + row["tiebreak"])


def _stalk(app, st):
    out = []
    if st.over:
        out.append("Stalk Exchange: game over (%s)" % ("market crash" if st.trigger == 1 else "bag empty"))
    else:
        out.append("Stalk Exchange, turn %d: %s" % (st.turn, _who(st)))
        out.append("%s, %s" % ("UPKEEP (harvesting)" if st.upkeep else "action phase", _actions(st)))
    if st.over and st.all_entered():
        fin = app.game.state()["final"]
        out.append("final values (after the bust): " + ", ".join("%s %d" % (f, fin["values"][f]) for f in FLOWERS))
        out.append(
            "busted: %s"
            % (", ".join("%s (%d -> %d)" % (f, st.values[FLOWERS.index(f)], fin["values"][f]) for f in fin["busted"]) or "none")
        )
        _results(out, fin, lambda r: " + ".join("%sx%s" % tuple(label.split()[1:4:2]) for label, _ in r["breakdown"]))
        return out
    out.append("market: " + ", ".join("%s %d" % (FLOWERS[f], st.values[f]) for f in range(5)))
    if not st.over:
        out.append(
            "tokens: "
            + ", ".join("%s %d%s" % (st.names[s], st.tokens[s], " flushed" if st.flushed[s] else "") for s in range(st.n))
        )
        out.append("bag %d, exchange %d, harvested %d" % (st.bag, st.exchange, st.harvested))
        if not st.trigger:  # the placeholder start space was said once, at setup
            out.append("crash: at least %s" % count(st.crash_distance(), "more harvested token"))
    if st.trigger and not st.over:
        out.append("LAST TURN (%s): the game ends after it" % ("market crash" if st.trigger == 1 else "bag empty"))
    if app.harvest.flower >= 0:
        out.append("harvest being counted: %s x%d (OK confirms)" % (FLOWERS[app.harvest.flower], app.harvest.n))
    if st.over:
        seat = app.view.player
        counts = app.portfolio.counts.values
        out.append("portfolio of %s: %s" % (st.names[seat], ", ".join("%s %d" % (FLOWERS[f], counts[f]) for f in range(5))))
        out.append("%d of %d tokens (%d players: %d each)"
                   % (sum(counts[f] for f in range(5)), PORTFOLIO_SIZE[st.n], st.n, PORTFOLIO_SIZE[st.n]))
    return out


def _orchids(app, st):
    out = []
    if st.over:
        out.append("Oh My. Orchids!: game over")
        _results(out, app.game.state()["final"], lambda r: "%d + %d variety - %d composted" % (r["flower_points"], r["variety_bonus"], r["composted"]))
        return out
    out.append("Oh My. Orchids!, turn %d: %s%s" % (st.turn, _who(st), ", LAST ROUND" if st.last_round else ""))
    for s in range(st.n):
        if app.screen != "orchids" and s != st.player:
            continue  # plant entry: only the planting player (80x24)
        kinds = len(set(f[0] for f in st.flowers[s]))
        out.append(
            "%s: %s, %s, %s, %d composted"
            % (st.names[s], count(len(st.flowers[s]), "flower"), count(kinds, "type"), count(st.hand[s], "Seed card"), st.composted[s])
        )
    return out

"""The board's state in words, for the simulator beside the drawn ring.

Why a separate module: only the simulator (and a curious host over the
link) asks for words; on the board this module is never imported, so its
strings cost no RAM during a game.
"""

from engine_lite import record as R
from engine_lite.tables import FLOWERS

HINTS = {
    "setup_game": "Choose the game: dahlia = Stalk Exchange, daffodil = Oh My. Orchids! (MENU cycles, OK next)",
    "setup_players": "How many players? daffodil 2, globemaster 3, snowdrop 4, tulip 5 (OK next, UNDO back)",
    "setup_length": "2 players: dahlia = long game, daffodil = short game (OK next, UNDO back)",
    "setup_track": "Market-track start space: flower k adds k, hold subtracts k (OK starts the game)",
    "stalk": "OK plant | MENU swap | flower = harvest +1 (OK confirms) | hold OK end turn (stuck: to the upkeep) | hold MENU menu | UNDO undo",
    "orchids": "flower k = take k seeds | OK plant | hold OK end turn / pass | MENU menu | UNDO undo",
    "plant_kind": "Plant: flower button = flora of that type, OK = orchid (UNDO cancels)",
    "plant_points": "Plant: its points; flower k adds k, hold subtracts k (OK next, UNDO back)",
    "plant_seeds": "Plant: its seed cost; flower k adds k, hold subtracts k (OK plants it, UNDO back)",
    "portfolio": "Portfolio: flower = +1 token, hold = -1 (OK confirms this player, UNDO takes back)",
    "results": "OK = next game | UNDO reopens the last entry",
    "menu": "Menu: dahlia flush, daffodil crash, globemaster brightness, snowdrop new game, tulip close",
    "brightness": "Brightness: flower 1-5 = level (OK keeps it, UNDO cancels)",
    "confirm_new": "Abandon this game and start a new one? OK = yes, anything else = no",
}


def describe(app):
    lines = ["screen: %s" % app.screen]
    g = app.game
    if g is not None and g.rules is not None:
        st = g.rules
        if g.game == R.STALK:
            lines.extend(_stalk(app, st))
        else:
            lines.extend(_orchids(app, st))
    else:
        s = app.setup
        lines.append(
            "setup: %s, %d players%s"
            % (("Stalk Exchange", "Oh My. Orchids!")[s.game], s.players, (", short" if s.short else ", long") if s.players == 2 else "")
        )
    s = app.screen
    if s.startswith("plant_") or s == "setup_track":
        lines.append("entry: %d" % app.number)
    lines.append(HINTS.get(s, ""))
    return lines


def _stalk(app, st):
    out = []
    if st.over:
        out.append("Stalk Exchange: game over (%s)" % ("crash" if st.trigger == 1 else "bag empty"))
    else:
        out.append(
            "Stalk Exchange, turn %d: %s (seat %d), %s, %d basic action%s done"
            % (st.turn, st.names[st.player], st.player + 1, "upkeep" if st.upkeep else "action phase", st.actions, "" if st.actions == 1 else "s")
        )
    out.append("market: " + ", ".join("%s %d" % (FLOWERS[f], st.values[f]) for f in range(5)))
    out.append(
        "tokens: "
        + ", ".join("%s %d%s" % (st.names[s], st.tokens[s], " (flushed)" if st.flushed[s] else "") for s in range(st.n))
    )
    out.append("bag %d, exchange %d, harvested %d, crash in >= %d harvested tokens" % (st.bag, st.exchange, st.harvested, st.crash_distance()))
    if st.trigger and not st.over:
        out.append("LAST TURN: the %s ended the game; it ends after this turn" % ("market crash" if st.trigger == 1 else "empty bag"))
    if app.pending >= 0:
        out.append("harvest being counted: %s x%d (OK confirms)" % (FLOWERS[app.pending], app.pending_count))
    if st.over:
        if st.all_entered():
            fin = app.game.state()["final"]
            out.append("busted: %s" % (", ".join(fin["busted"]) or "none"))
            for row in fin["players"]:
                out.append("#%d %s %d%s" % (row["rank"], row["name"], row["score"], "  WINNER" if row["winner"] else ""))
        else:
            seat = app.view.player
            out.append(
                "portfolio of %s: %s"
                % (st.names[seat], ", ".join("%s %d" % (FLOWERS[f], app.counts[f]) for f in range(5)))
            )
    return out


def _orchids(app, st):
    out = []
    if st.over:
        out.append("Oh My. Orchids!: game over")
        for row in app.game.state()["final"]["players"]:
            out.append("#%d %s %d%s" % (row["rank"], row["name"], row["score"], "  WINNER" if row["winner"] else ""))
        return out
    out.append(
        "Oh My. Orchids!, turn %d: %s (seat %d)%s" % (st.turn, st.names[st.player], st.player + 1, ", LAST ROUND" if st.last_round else "")
    )
    for s in range(st.n):
        out.append(
            "%s: %d flowers, %d seeds in hand, %d composted" % (st.names[s], len(st.flowers[s]), st.hand[s], st.composted[s])
        )
    return out

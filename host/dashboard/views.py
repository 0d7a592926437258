"""What the pages show of a game: the live page's state (the table page,
host/dashboard/table.html, draws it in the browser, as the Pico W's phones
do) and a game's final scores with their score sheet as HTML (a game's
page in the history).

The pages compute no rule: who would bust is engine_lite.stalk.bust, the
scores are the engine's `final`, the crash countdown its
`tokens_until_crash`. `data-*` attributes name what each number is (the
browser tests read them).
"""

from html import escape

from engine_lite import stalk
from engine_lite.tables import FLOWERS


def link_words(link):
    """The board connection in words: live, disconnected, or none."""
    return {
        "live": "board connected",
        "connecting": "looking for the board",
        "disconnected": "disconnected: waiting for the board to come back (nothing is lost)",
        "none": "no board attached: showing the plays history only",
    }.get(link, link)


def live_state(link, note, game_state, where, playing, round_events):
    """What the live page (host/dashboard/table.html, the board's own page)
    is sent: the board's connection in words, the game as the board's
    server sends it (table_doc) and the round so far."""
    return {"link": link, "said": link_words(link), "note": note, "where": where if game_state else "",
            "live": playing, "table": table_doc(game_state), "round": round_events}


def _values(st):
    return [st["values"][f] for f in FLOWERS]


def will_bust(st):
    """The flowers that would bust if the game ended now (the rule: engine_lite.stalk.bust)."""
    return stalk.bust(bytearray(_values(st)))[1]


def table_doc(game_state):
    """The state as the table page (host/dashboard/table.html) reads it,
    the board's own (firmware/table_server.py): who would bust added."""
    if game_state is None or game_state.get("game") is None:
        return None
    if game_state["game"] == "stalk-exchange" and "final" not in game_state:
        return dict(game_state, will_bust=[] if game_state["game_over"] else will_bust(game_state))
    return game_state


def final_table(final, game):
    """The engine's ranked final scores, the tie-break that placed a player
    (when one did), then the score sheet the scores add up on."""
    rows = []
    cols = 4 if game == "oh-my-orchids" else 3
    for r in final["players"]:
        detail = ""
        if game == "oh-my-orchids":
            detail = "<td><small>%d + %d variety - %d composted</small></td>" % (r["flower_points"], r["variety_bonus"], r["composted"])
        rows.append(
            '<tr class="%s"><td>%d.</td><td>%s%s</td><td class="score" data-score="%s">%d</td>%s</tr>'
            % ("winner" if r["winner"] else "", r["rank"], escape(r["name"]), " &#9733;" if r["winner"] else "",
               escape(r["name"]), r["score"], detail)
        )
        if "tiebreak" in r:
            rows.append('<tr class="tiebreak"><td></td><td colspan="%d" data-tiebreak="%s"><small>tie-break: %s</small></td></tr>'
                        % (cols - 1, escape(r["name"]), escape(r["tiebreak"])))
    return '<table class="final" id="final"><tr><th colspan="%d">final scores</th></tr>%s</table>\n%s' % (
        cols, "".join(rows), score_sheet(final, game))


def score_sheet(final, game):
    """The paper score sheet: one column per player (in rank order), one row
    per line of the engine's breakdown; Stalk Exchange rows are the flowers,
    each with its final value (a busted one struck through from its value
    before the bust) and each cell portfolio x final value = points."""
    players = final["players"]
    head = "".join("<th>%s</th>" % escape(r["name"]) for r in players)
    rows = []
    if game == "stalk-exchange":
        head = "<th>flower</th><th>value</th>" + head
        for i, f in enumerate(FLOWERS):
            v = final["values"][f]
            if f in final["busted"]:
                value = '<s>%d</s> %d <span class="bust">busted</span>' % (final["before_bust"][f], v)
            else:
                value = "%d" % v
            cells = []
            for r in players:
                label, points = r["breakdown"][i]
                count = label.split(" ")[1]  # "dahlia 4 x 5 ...": the portfolio's count
                cells.append('<td data-sheet="%s/%s">%s &times; %d = <b>%d</b></td>' % (escape(r["name"]), f, count, v, points))
            rows.append('<tr><td class="fname">%s</td><td>%s</td>%s</tr>' % (f, value, "".join(cells)))
    else:
        head = "<th></th>" + head
        for i, (label, _) in enumerate(players[0]["breakdown"] if players else ()):
            cells = "".join("<td>%d</td>" % r["breakdown"][i][1] for r in players)
            rows.append("<tr><td>%s</td>%s</tr>" % (escape(label), cells))
    pad = '<td></td>' if game == "stalk-exchange" else ""
    rows.append('<tr class="total"><td>total</td>%s%s</tr>' % (pad, "".join("<td><b>%d</b></td>" % r["score"] for r in players)))
    return '<div class="scroll"><table class="sheet" id="sheet"><tr>%s</tr>%s</table></div>' % (head, "".join(rows))

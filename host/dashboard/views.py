"""The live panel: a game state (engine_lite's `Game.state()`) as HTML.

Pure functions of the state, so they are tested without a browser and the
page never computes a rule: who would bust is engine_lite.stalk.bust, the
scores are the engine's `final`, the crash countdown its
`tokens_until_crash`. `data-*` attributes name what each number is (the
browser test reads them).
"""

from html import escape

from engine_lite import stalk
from engine_lite.tables import FLOWERS

BAR_MIN_SCALE = 10  # bars are relative to the leader, but never to less than this


def link_banner(link, note):
    """The board connection in words: live, disconnected, or none."""
    text = {
        "live": "live",
        "connecting": "looking for the board",
        "disconnected": "disconnected: waiting for the board to come back (nothing is lost)",
        "none": "no board attached: showing the plays history only",
    }.get(link, link)
    extra = "<br><span class=\"note\">%s</span>" % escape(note) if note else ""
    return '<div id="link" class="link link-%s" data-link="%s">%s%s</div>' % (link, link, escape(text), extra)


def panel(link, note, game_state, where=""):
    """The whole live panel: connection, then the game (if any)."""
    out = [link_banner(link, note)]
    if game_state is None or game_state.get("game") is None:
        if link == "live":
            out.append('<p class="big">No game on the board: start one with its buttons.</p>')
        return "\n".join(out)
    if where:
        out.append('<p class="where">%s</p>' % escape(where))
    if game_state["game"] == "stalk-exchange":
        out.append(stalk_panel(game_state))
    else:
        out.append(orchids_panel(game_state))
    return "\n".join(out)


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


def market(values, busted, label):
    scale = max(BAR_MIN_SCALE, max(values))
    rows = ['<div class="market" aria-label="%s">' % escape(label)]
    for f, v in zip(FLOWERS, values):
        mark = '<span class="bust">%s</span>' % ("busted" if label == "final" else "will bust") if f in busted else ""
        rows.append(
            '<div class="bar-row"><span class="fname">%s</span>'
            '<span class="bar"><span class="fill f-%s" style="width:%d%%"></span></span>'
            '<span class="num" data-flower="%s">%d</span><span class="mark">%s</span></div>' % (f, f, round(100 * v / scale), f, v, mark)
        )
    rows.append("</div>")
    return "\n".join(rows)


def stalk_panel(st):
    """Most important first: the end, whose turn and the players, then the
    market and the counts (after the game: the scores, then the final market)."""
    over = st["game_over"]
    out = ['<h2>Stalk Exchange <span class="sub">turn %d</span></h2>' % st["turn"]]
    if st["end_triggered"]:
        why = "market crash" if st["end_triggered"] == "crash" else "the bag is empty"
        if over:
            out.append('<p class="ending" data-ending="over">Game over (%s)%s</p>' % (
                why, "" if "final" in st else ": entering portfolios, %d of %d in" % (len(st["portfolios_entered"]), len(st["players"]))))
        else:
            out.append('<p class="ending" data-ending="last">LAST TURN: %s</p>' % why)
    else:
        n = st["tokens_until_crash"]
        out.append('<p class="countdown">crash in <b data-fact="until_crash">%d</b> harvested token%s at the earliest</p>' % (n, "" if n == 1 else "s"))
    if "final" in st:
        f = st["final"]
        out.append(final_table(f, "stalk-exchange"))
        out.append("<h3>Final market (after the bust)</h3>")
        out.append(market([f["values"][x] for x in FLOWERS], f["busted"], "final"))
    else:
        # whose turn and the players first: at 1280x900 they are above the fold, the market under them
        if not over:
            out.append('<p class="whose">%s to play (%s)</p>' % (escape(st["current_player"]), st["phase"]))
        rows = []
        for name in st["players"]:
            turn = (not over) and name == st["current_player"]
            rows.append(
                '<tr class="%s"><td class="who">%s%s</td><td data-tokens="%s">%s <small>%d</small></td><td>%s</td></tr>'
                % ("turn" if turn else "", "&#9654; " if turn else "", escape(name), escape(name),
                   "&#9679;" * st["tokens"][name], st["tokens"][name], "flushed" if st["flush_used"][name] else "flush left")
            )
        out.append('<table class="players"><tr><th>player</th><th>tokens</th><th>flush</th></tr>%s</table>' % "".join(rows))
        out.append(market(_values(st), [] if over else will_bust(st), "market"))
    facts = (("bag", st["bag"]), ("exchange", st["exchange"]), ("harvested", st["harvested"]))
    out.append(
        '<div class="facts">%s</div>'
        % "".join('<span class="fact"><b data-fact="%s">%d</b> %s</span>' % (k, v, k) for k, v in facts)
    )
    return "\n".join(out)


def orchids_panel(st):
    over = st["game_over"]
    out = ["<h2>Oh My. Orchids! <span class=\"sub\">turn %d</span></h2>" % st["turn"]]
    if st["last_round"] and not over:
        out.append('<p class="ending" data-ending="last">LAST ROUND</p>')
    if "final" in st:
        out.append(final_table(st["final"], "oh-my-orchids"))
    if not over:
        out.append('<p class="whose">%s to play</p>' % escape(st["current_player"]))
    rows = []
    for name in st["seats"]:
        p = st["players"][name]
        turn = (not over) and name == st["current_player"]
        kinds = sorted({f["name"] for f in p["flowers"]})
        orchids = sum(1 for f in p["flowers"] if f["kind"] == "orchid")
        rows.append(
            '<tr class="%s"><td class="who">%s%s</td><td>%d</td><td data-flowers="%s">%d</td>'
            '<td title="%s">%d <small>(%d orchid%s)</small></td><td>%d</td><td>%d</td></tr>'
            % ("turn" if turn else "", "&#9654; " if turn else "", escape(name), p["hand"], escape(name), len(p["flowers"]),
               escape(", ".join(kinds)), len(kinds), orchids, "" if orchids == 1 else "s", p["points"], p["composted"])
        )
    out.append(
        '<table class="players"><tr><th>player</th><th>hand</th><th>flowers</th><th>kinds</th><th>points</th>'
        "<th>composted</th></tr>%s</table>" % "".join(rows)
    )
    return "\n".join(out)


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

"""The plays history: every stored game, and per-player statistics.

Input is the list of plays as store.read_plays gives them; scores and
winners are the engine's `final` (computed when the play is read), never
recomputed here. Statistics count scored games only (a game still in
progress, or abandoned, has no winner yet).
"""

from html import escape
from urllib.parse import urlencode

from engine_lite import vocab
from host.dashboard import views

GAME_TITLES = dict(zip(vocab.GAMES, vocab.GAME_TITLES))


def game_link(p):
    """A play's page is keyed by its play id: (board, game number) is not
    unique once a board is erased or its counter restarts."""
    return "/game?" + urlencode({"play": p["play"]})


def find(plays, play_id):
    for p in plays:
        if str(p["play"]) == play_id:
            return p
    return None


def local_date(p, zone=False):
    """The game's own start in this machine's local time, "2026-12-01 19:20"
    (with the zone, "CET", when asked), `~` first where it was estimated
    from the board's uptime because the board never knew the time (as
    `bloomkeeper plays`)."""
    import calendar
    import time

    try:
        t = time.localtime(calendar.timegm(time.strptime(p["date"], "%Y-%m-%dT%H:%M:%SZ")))
        local = time.strftime("%Y-%m-%d %H:%M" + (" %Z" if zone else ""), t)
    except (ValueError, TypeError):
        local = str(p["date"])  # not a time this host can read: as stored
    return ("~" if p.get("date_estimated") else "") + local


def date_words(p, zone=False):
    """local_date as HTML: the stored UTC time is the title (shown on hover),
    and the date never wraps (the game page's heading)."""
    return '<span class="date" title="%s UTC">%s</span>' % (escape(str(p["date"])), escape(local_date(p, zone)))


def stats(plays):
    """Rows {player, game, players, plays, wins, win_rate, avg, best}, one per
    player, game and player count, plus one per player and game over every
    player count (players = "all"). Sorted by game, player count, wins."""
    groups = {}
    for p in plays:
        if "final" not in p:
            continue
        n = len(p["players"])
        for r in p["final"]["players"]:
            g = groups.setdefault((r["name"], p["game"], n), [0, 0, 0, None])
            g[0] += 1
            g[1] += 1 if r["winner"] else 0
            g[2] += r["score"]
            g[3] = r["score"] if g[3] is None else max(g[3], r["score"])
    return stats_rows([k + tuple(v) for k, v in groups.items()])


def stats_rows(groups):
    """stats() from its groups: (player, game, table size, plays, wins, sum
    of scores, best), as the plays database sums them in SQL (Database.stats)."""
    sizes = {}
    for name, game, n, plays, wins, total, best in groups:
        a = sizes.setdefault((name, game), [0, 0, 0, 0, None])
        a[0] += 1
        a[1] += plays
        a[2] += wins
        a[3] += total
        a[4] = best if a[4] is None else max(a[4], best)
    rows = [{"player": name, "game": game, "players": n, "plays": plays, "wins": wins, "win_rate": wins / plays,
             "avg": total / plays, "best": best} for name, game, n, plays, wins, total, best in groups]
    for (name, game), (k, plays, wins, total, best) in sizes.items():
        if k > 1:  # one table size only: "all" would repeat its row
            rows.append({"player": name, "game": game, "players": "all", "plays": plays, "wins": wins, "win_rate": wins / plays,
                         "avg": total / plays, "best": best})
    rows.sort(key=lambda r: (r["game"], str(r["players"]), -r["wins"], -r["win_rate"], r["player"]))
    return rows


def result_words(p):
    """(players with scores, winners) in words."""
    if "final" not in p:
        state = "over, not scored" if p["over"] else ("abandoned" if p.get("abandoned") else "in progress")
        return ", ".join(escape(n) for n in p["players"]), state
    rows = p["final"]["players"]
    who = ", ".join('%s <b>%d</b>' % (escape(r["name"]), r["score"]) for r in rows)
    return who, ", ".join(escape(r["name"]) for r in rows if r["winner"])


def problems_list(problems):
    """Damaged or quarantined plays, one item each with its reason (the
    plays database lists them; the page shows every other play)."""
    if not problems:
        return ""
    items = "".join('<li class="problem">board %s, game %s: %s %d record(s) from record %d: %s</li>'
                    % (escape(q["board"]), escape(q["game_id"]), "quarantined" if q["kind"] == "quarantined" else "damaged,",
                       q["count"], q["index"], escape(q["reason"])) for q in problems)
    return ('<h2>Plays not shown</h2><p>These records could not be read as a game (the rules engine refused them); '
            '<code>bloomkeeper repair</code> re-judges quarantined ones.</p><ul class="problems" id="problems">%s</ul>' % items)


def history_body(plays, problems=()):
    """The whole history on one page, from every play (read() of the database)."""
    return history_page_body(sorted(plays, key=lambda p: p["date"], reverse=True), stats(plays), problems)


PAGE = 100  # plays on one /history page


def pager(page, total):
    """Which plays of how many a page shows, with links to the newer and
    older pages (nothing while every play fits on one page)."""
    if total <= PAGE and page == 1:
        return ""
    first, last = (page - 1) * PAGE + 1, min(page * PAGE, total)
    links = []
    if page > 1:
        links.append('<a href="/history?page=%d" rel="prev">newer plays</a>' % (page - 1))
    if last < total:
        links.append('<a href="/history?page=%d" rel="next">older plays</a>' % (page + 1))
    return '<p class="pager" id="pager">plays %d to %d of %d (newest first) %s</p>' % (first, last, total, " ".join(links))


def history_page_body(plays, stats_rows, problems=(), page=1, total=None):
    """One page of the history: `plays` newest first (a page of them), the
    statistics rows (stats_rows) and the plays that cannot be shown."""
    total = len(plays) if total is None else total
    out = ["<h1>Plays</h1>"]
    if not total:
        out.append('<p class="big">No plays recorded yet.</p>')
        out.append(problems_list(problems))
        return "\n".join(out)
    rows = []
    for p in plays:
        who, winner = result_words(p)
        rows.append(
            '<tr class="play"><td>%s</td><td>%s</td><td>%s</td><td class="winner-cell">%s</td><td><a href="%s">%s</a></td></tr>'
            % (date_words(p), GAME_TITLES.get(p["game"], p["game"]), who, winner, escape(game_link(p)),
               "chart" if p["game"] == "stalk-exchange" else "details")
        )
    nav = pager(page, total)
    if nav:
        out.append(nav)
    out.append('<div class="scroll"><table class="plays" id="plays"><tr><th>date</th><th>game</th><th>players and scores</th>'
               "<th>winner</th><th></th></tr>%s</table></div>" % "".join(rows))
    if nav:
        out.append(nav.replace('id="pager"', 'id="pager-end"'))
    out.append("<h2>Players</h2>")
    srows = []
    for r in stats_rows:
        srows.append(
            '<tr data-player="%s" data-group="%s/%s"><td>%s</td><td>%s</td><td>%s</td><td>%d</td><td>%d</td>'
            "<td>%d%%</td><td>%.1f</td><td>%d</td></tr>"
            % (escape(r["player"]), r["game"], r["players"], escape(r["player"]), GAME_TITLES.get(r["game"], r["game"]),
               r["players"] if r["players"] == "all" else "%d players" % r["players"], r["plays"], r["wins"],
               round(100 * r["win_rate"]), r["avg"], r["best"])
        )
    if srows:
        out.append('<div class="scroll"><table class="stats" id="stats"><tr><th>player</th><th>game</th><th>table</th><th>plays</th>'
                   "<th>wins</th><th>win rate</th><th>average</th><th>best</th></tr>%s</table></div>" % "".join(srows))
    else:
        out.append("<p>No scored game yet.</p>")
    out.append(problems_list(problems))
    return "\n".join(out)


def game_body(p, chart_svg):
    """One game: result and, for Stalk Exchange, the market chart."""
    out = ["<h1>%s <span class=\"sub\">%s</span></h1>" % (GAME_TITLES.get(p["game"], p["game"]), date_words(p, zone=True))]
    out.append('<p class="where">board %s, game %s: %d events</p>' % (escape(p["board"]), escape(p["game_id"]), len(p["events"])))
    if "final" in p:
        out.append(views.final_table(p["final"], p["game"]))
    else:
        out.append("<p>%s</p>" % ("Over, portfolios not all entered." if p["over"] else "Still in progress."))
    if chart_svg:
        out.append('<h2>The market, turn by turn</h2><div class="chart" id="chart">%s</div>' % chart_svg)
    out.append('<p><a href="/history">all plays</a></p>')
    return "\n".join(out)

"""The pages' shells. The live table is the table page the Pico W serves
(host/dashboard/table.html: one page to keep), which draws the state the
server sends over Server-Sent Events, with this dashboard's own links and
form in its one slot (HOST_SLOT, an HTML comment the board serves as is).
The history pages share one stylesheet (large type, one column on a
phone); every word and number on them is rendered in Python (views.py,
history.py).
"""

from html import escape
from pathlib import Path

TABLE_HTML = Path(__file__).with_name("table.html")
HOST_SLOT = "<!--host-->"  # where live_page puts the history link and the names form

CSS = """
:root { color-scheme: dark; }
body { margin: 0; background: #111; color: #eee; font: clamp(18px, 2.4vw, 30px)/1.35 system-ui, sans-serif; }
nav { display: flex; gap: 1.2em; padding: .4em 1em; background: #222; font-size: .8em; }
nav a { color: #9cf; }
main { padding: .6em 1em; }
h1, h2 { margin: .2em 0 .4em; } h3 { margin: .6em 0 .2em; font-size: .9em; }
.sub, small, .note, .where { color: #aaa; font-weight: normal; } .note { font-size: .75em; color: #ddd; }
.where { font-size: .7em; margin: 0 0 .5em; }
.fname { width: 6.2em; } .num { font-size: 1.5em; font-weight: bold; width: 1.6em; text-align: right; }
.bust { background: #b00020; color: #fff; font-size: .7em; padding: .05em .4em; border-radius: .3em; white-space: nowrap; }
table { border-collapse: collapse; margin: .4em 0; } td, th { padding: .15em .6em; text-align: left; }
th { color: #aaa; font-weight: normal; font-size: .8em; }
td.who, small { white-space: nowrap; } tr.turn { background: #33403a; } tr.winner { color: #ffd24a; }
.score { font-size: 1.4em; font-weight: bold; text-align: right; }
.date { white-space: nowrap; } .sheet { font-size: .8em; } .sheet td { border-top: 1px solid #333; white-space: nowrap; } .sheet tr.total td { border-top: 2px solid #666; }
.sheet s { color: #f66; } tr.tiebreak td { padding-top: 0; color: #ccc; }
.plays td, .stats td { border-top: 1px solid #333; } .plays, .stats { font-size: .8em; }
.chart { background: #111; border-radius: .3em; max-width: 1000px; } .chart svg { width: 100%; height: auto; }
.big { font-size: 1.2em; } .scroll { overflow-x: auto; max-width: 100%; }
@media (max-width: 700px) { .final { font-size: .75em; } td, th { padding: .15em .35em; } }
"""


def page(title, body):
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        "<title>%s</title><style>%s</style></head><body>"
        '<nav><a href="/">live table</a><a href="/history">plays history</a></nav>'
        "<main>%s</main></body></html>"
        % (escape(title), CSS, body)
    )


def live_page(form=""):
    """The live table: the table page (the board's own, table_page) with
    what only this dashboard has put in its one slot: the link to the
    plays history and, for this machine, the next game's names form."""
    more = '<nav><a href="/history">plays history</a></nav>%s' % form
    return table_page().replace(HOST_SLOT, more, 1)


def table_page():
    """The phone-sized table page: the same bytes the Pico W serves
    (host/dashboard/table.html, frozen into firmware/table_page.py)."""
    return TABLE_HTML.read_text(encoding="utf-8")

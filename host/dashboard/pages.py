"""The page shell: one stylesheet (large type, one column on a phone), the
ring drawing, and the few lines of JavaScript that swap in what the
server sends over Server-Sent Events. Every word and number on the page
is rendered in Python (views.py, history.py); the script only places it.
"""

import math
from html import escape

from engine_lite.tables import FLOWERS
from host.dashboard.charts import flower_colour

RING_PIXELS = 24

CSS = """
:root { color-scheme: dark; }
body { margin: 0; background: #111; color: #eee; font: clamp(18px, 2.4vw, 30px)/1.35 system-ui, sans-serif; }
nav { display: flex; gap: 1.2em; padding: .4em 1em; background: #222; font-size: .8em; }
nav a { color: #9cf; }
main { padding: .6em 1em; }
.live { display: flex; flex-wrap: wrap; gap: 1.2em; align-items: flex-start; }
.ringbox { flex: 0 0 auto; width: min(38vw, 420px); min-width: 220px; }
.ringbox.off { opacity: .35; }
#ring { width: 100%; height: auto; }
#panel { flex: 1 1 420px; min-width: 0; }
h1, h2 { margin: .2em 0 .4em; } h3 { margin: .6em 0 .2em; font-size: .9em; }
.sub, small, .note, .where { color: #aaa; font-weight: normal; } .note { font-size: .75em; color: #ddd; }
.where { font-size: .7em; margin: 0 0 .5em; }
.link { font-size: .8em; padding: .25em .6em; border-radius: .3em; display: inline-block; margin-bottom: .4em; }
.link-live { background: #174d1f; } .link-disconnected { background: #7a1b1b; } .link-none, .link-connecting { background: #444; }
.bar-row { display: flex; align-items: center; gap: .5em; margin: .15em 0; }
.fname { width: 6.2em; } .num { font-size: 1.5em; font-weight: bold; width: 1.6em; text-align: right; }
.bar { flex: 1; height: 1.1em; background: #2a2a2a; border-radius: .2em; overflow: hidden; }
.fill { display: block; height: 100%; }
.mark { width: 5.4em; } .bust { background: #b00020; color: #fff; font-size: .7em; padding: .05em .4em; border-radius: .3em; white-space: nowrap; }
.facts { display: flex; flex-wrap: wrap; gap: 1.2em; margin: .4em 0; } .fact b { font-size: 1.5em; }
.countdown b { font-size: 1.4em; color: #f66; }
.ending { font-size: 1.3em; font-weight: bold; color: #fff; background: #8a2be2; padding: .2em .5em; border-radius: .3em; }
table { border-collapse: collapse; margin: .4em 0; } td, th { padding: .15em .6em; text-align: left; }
th { color: #aaa; font-weight: normal; font-size: .8em; }
td.who, small { white-space: nowrap; } tr.turn { background: #33403a; } tr.winner { color: #ffd24a; }
.score { font-size: 1.4em; font-weight: bold; text-align: right; }
.date { white-space: nowrap; } .sheet { font-size: .8em; } .sheet td { border-top: 1px solid #333; white-space: nowrap; } .sheet tr.total td { border-top: 2px solid #666; }
.sheet s { color: #f66; } tr.tiebreak td { padding-top: 0; color: #ccc; }
.plays td, .stats td { border-top: 1px solid #333; } .plays, .stats { font-size: .8em; }
.chart { background: #111; border-radius: .3em; max-width: 1000px; } .chart svg { width: 100%; height: auto; }
.big { font-size: 1.2em; } .scroll { overflow-x: auto; max-width: 100%; }
form.names { font-size: .75em; margin-top: 1em; } form.names input[type=text] { width: 7em; font: inherit; }
#gone { display: none; background: #7a1b1b; padding: .3em 1em; } body.gone #gone { display: block; }
@media (max-width: 700px) { .ringbox { width: 60vw; margin: 0 auto; } .bar-row { font-size: .8em; } .mark { width: 4.6em; }
  .players, .final { font-size: .75em; } td, th { padding: .15em .35em; } }
""" + "".join(".f-%s { background: %s; }\n" % (f, flower_colour(i)) for i, f in enumerate(FLOWERS))

LIVE_JS = """
const ring = document.getElementById('ringbox');
const es = new EventSource('/events');
es.addEventListener('state', (e) => {
  const d = JSON.parse(e.data);
  document.getElementById('panel').innerHTML = d.html;
  document.body.dataset.link = d.link;
  ring.classList.toggle('off', d.link !== 'live');
  document.body.classList.remove('gone');
});
es.addEventListener('ring', (e) => {
  const px = JSON.parse(e.data);
  ring.style.display = px ? '' : 'none';
  if (px) px.forEach((c, i) => document.getElementById('p' + i).setAttribute('fill', c === '#000000' ? '#262626' : c));
});
es.onerror = () => document.body.classList.add('gone');
"""


def ring_svg():
    """24 pixels on a circle, pixel 0 at the top, clockwise (as on the board)."""
    dots = []
    for i in range(RING_PIXELS):
        a = 2 * math.pi * i / RING_PIXELS
        x, y = 100 + 80 * math.sin(a), 100 - 80 * math.cos(a)
        dots.append('<circle id="p%d" cx="%.1f" cy="%.1f" r="9.5" fill="#262626" stroke="#555"/>' % (i, x, y))
    return ('<svg id="ring" viewBox="0 0 200 200" role="img" aria-label="the LED ring">'
            '<circle cx="100" cy="100" r="96" fill="#1b1b1b"/><circle cx="100" cy="100" r="62" fill="#111"/>%s</svg>'
            % "".join(dots))


def page(title, body, script=""):
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        "<title>%s</title><style>%s</style></head><body>"
        '<nav><a href="/">live table</a><a href="/history">plays history</a></nav>'
        '<div id="gone">the dashboard server is not answering</div>'
        "<main>%s</main>%s</body></html>"
        % (escape(title), CSS, body, "<script>%s</script>" % script if script else "")
    )


def live_page(state, ring, form=""):
    hidden = "" if ring else ' style="display:none"'
    off = "" if state.get("link") == "live" else " off"
    body = '<div class="live"><div id="ringbox" class="ringbox%s"%s>%s</div><div id="panel">%s</div></div>%s' % (
        off, hidden, ring_svg(), state["html"], form)
    return page("Bloomkeeper: live table", body, LIVE_JS)


def table_page():
    """The phone-sized table page: the same bytes the Pico W serves
    (host/dashboard/table.html, frozen into firmware/table_page.py)."""
    from pathlib import Path

    return (Path(__file__).with_name("table.html")).read_text(encoding="utf-8")

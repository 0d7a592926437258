"""The Stalk Exchange market chart: the five Stalk Values turn by turn.

The values come from replaying the stored events through engine_lite (the
one place the rules live); this module only samples them at each end of
turn and writes them as SVG, element by element (no plotting library: a
game's page is drawn in a few milliseconds, the first time too). Flower
colours are the ring's (firmware/ring.py FLOWER_RGB), so the chart matches
the board; each flower also has its own marker shape, in the lines, in the
key and at its last value, where its name is written: the chart reads
without telling the colours apart.
"""

from html import escape

import engine_lite
from engine_lite import stalk
from engine_lite.tables import FLOWERS
from firmware.ring import FLOWER_RGB

# The page is dark (pages.CSS): the chart is drawn for it, not white on black.
DARK = {"page": "#111111", "plot": "#1b1b1b", "text": "#dddddd", "axis": "#555555"}
END_COLOURS = {"crash": ("#b00020", "#ff6b6b"), "bag": ("#d97000", "#ffa94d")}  # (its line, its words)
END_WORDS = {"crash": "market crash", "bag": "bag empty"}
# One marker shape per flower, in FLOWERS order: a shape as an SVG path
# around (0, 0), about 10 px across.
MARKERS = (
    "M-5 0a5 5 0 1 0 10 0a5 5 0 1 0-10 0Z",  # circle
    "M-4.5-4.5h9v9h-9Z",  # square
    "M0-5.5L5 4.5H-5Z",  # triangle, point up
    "M0-6L6 0L0 6L-6 0Z",  # diamond
    "M0 5.5L5-4.5H-5Z",  # triangle, point down
)
MARKER_NAMES = ("circle", "square", "triangle up", "diamond", "triangle down")
W, H = 800, 420  # the drawing's units (it is scaled to the page's width: pages.CSS .chart svg)
HALO = 'stroke="%s" stroke-width="4" paint-order="stroke"' % DARK["plot"]  # words written over the lines stay readable
LEFT, RIGHT, TOP, BOTTOM = 56, 596, 40, 362  # the plot's box; the names of the last values go right of it


def flower_colour(i):
    return "#%02x%02x%02x" % tuple(FLOWER_RGB[3 * i : 3 * i + 3])


def market_series(events):
    """Replay a Stalk Exchange game. Returns {"turns": [0, 1, ...], "values":
    {flower: [value after each turn]}, "end": (turn, "crash"|"bag") or None,
    "busted": [...], "over": bool}. Turn 0 is the start; a point is taken
    at each end of turn (and once more if the game stops mid-turn)."""
    g = engine_lite.Game()
    turns, rows, end = [], [], None
    for ev in events:
        g.apply(ev)
        st = g.table
        if ev["ev"] == "start":
            turns.append(0)
            rows.append(list(st.values))
        elif ev["ev"] == "end_turn":
            turns.append(len(turns))
            rows.append(list(st.values))
        if end is None and st is not None and st.trigger:
            # an end of turn that empties the bag marks its own point; a crash
            # (a harvest, or declared) marks the turn in progress, which ends next
            end = (turns[-1] if ev["ev"] == "end_turn" else turns[-1] + 1, stalk.TRIGGERS[st.trigger])
    table = g.table
    if table is not None and rows and rows[-1] != list(table.values):
        turns.append(len(turns))
        rows.append(list(table.values))
    busted = stalk.bust(table.values)[1] if table is not None and table.over else []
    return {
        "turns": turns,
        "values": {f: [r[i] for r in rows] for i, f in enumerate(FLOWERS)},
        "end": end,
        "busted": busted,
        "over": bool(table is not None and table.over),
    }


def _step(n):
    """A tick step (1, 2, 5, 10, 20, ...) that puts at most 10 ticks on 0..n."""
    step = 1
    while n / step > 10:
        step = step * 5 // 2 if str(step)[0] == "2" else step * 2  # 1, 2, 5, 10, 20, 50, ...
    return step


def _marker(i, x, y):
    return '<path d="%s" transform="translate(%.1f %.1f)" fill="%s" stroke="%s" stroke-width="1.2"/>' % (
        MARKERS[i], x, y, flower_colour(i), DARK["page"])


def market_svg(events, title=""):
    """The chart as inline SVG (str, starting "<svg"): a step line per
    flower with its marker at every rise, a dashed line where the market
    crashed or the bag ran empty, each busted flower's fall drawn with its
    numbers, the flowers named at their last values."""
    s = market_series(events)
    turns, values = s["turns"], s["values"]
    xmax = max(1, turns[-1]) if turns else 1
    top = max([1] + [v for vs in values.values() for v in vs])
    ymax = top + max(1, top * 0.12)  # room over the highest value for the words of the end

    def x(t):
        return LEFT + (RIGHT - LEFT) * t / xmax

    def y(v):
        return BOTTOM - (BOTTOM - TOP) * v / ymax

    text = DARK["text"]
    out = ['<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d %d" role="img" aria-label="%s" '
           'font-family="DejaVu Sans, Verdana, sans-serif" font-size="13">' % (W, H, escape("the Stalk Values turn by turn" +
                                                                                     (": " + title if title else ""))),
           '<rect width="%d" height="%d" fill="%s"/>' % (W, H, DARK["page"]),
           '<rect x="%d" y="%d" width="%d" height="%d" fill="%s" stroke="%s"/>' % (LEFT, TOP, RIGHT - LEFT, BOTTOM - TOP, DARK["plot"],
                                                                                 DARK["axis"])]
    if title:
        out.append('<text x="%d" y="24" text-anchor="middle" fill="%s" font-size="15">%s</text>' % ((LEFT + RIGHT) // 2, text,
                                                                                                  escape(title)))
    for t in range(0, xmax + 1, _step(xmax)):
        out.append('<line x1="%.1f" x2="%.1f" y1="%d" y2="%d" stroke="%s" stroke-opacity=".45"/>' % (x(t), x(t), TOP, BOTTOM, DARK["axis"]))
        out.append('<text x="%.1f" y="%d" text-anchor="middle" fill="%s">%d</text>' % (x(t), BOTTOM + 17, text, t))
    for v in range(0, int(ymax) + 1, _step(top)):
        out.append('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="%s" stroke-opacity=".45"/>' % (LEFT, RIGHT, y(v), y(v), DARK["axis"]))
        out.append('<text x="%d" y="%.1f" text-anchor="end" fill="%s">%d</text>' % (LEFT - 6, y(v) + 4.5, text, v))
    out.append('<text x="%d" y="%d" text-anchor="middle" fill="%s" font-size="14">turn</text>' % ((LEFT + RIGHT) // 2, BOTTOM + 40, text))
    out.append('<text transform="translate(16 %d) rotate(-90)" text-anchor="middle" fill="%s" font-size="14">Stalk Value</text>'
               % ((TOP + BOTTOM) // 2, text))
    if s["end"] is not None:
        turn, why = s["end"]
        line, words = END_COLOURS[why]
        out.append('<line x1="%.1f" x2="%.1f" y1="%d" y2="%d" stroke="%s" stroke-width="1.8" stroke-dasharray="7 4"/>'
                   % (x(turn), x(turn), TOP, BOTTOM, line))
        right = x(turn) + 110 > RIGHT  # no room to its right: the words go on its left
        out.append('<text x="%.1f" y="%d" text-anchor="%s" fill="%s" font-size="14" font-weight="bold" %s>%s</text>'
                   % (x(turn) + (-5 if right else 5), TOP + 17, "end" if right else "start", words, HALO, END_WORDS[why]))
    for i, f in enumerate(FLOWERS):
        vs = values[f]
        if not vs:
            continue
        path = ["M%.1f %.1f" % (x(turns[0]), y(vs[0]))]
        for k in range(1, len(vs)):
            path.append("H%.1f V%.1f" % (x(turns[k]), y(vs[k])))
        out.append('<path d="%s" fill="none" stroke="%s" stroke-width="2.5" stroke-linejoin="round"/>' % (" ".join(path), flower_colour(i)))
        out.extend(_marker(i, x(turns[k]), y(vs[k])) for k in range(1, len(vs)) if vs[k] != vs[k - 1])
    if s["over"] and turns:  # the bust drawn: the final value below the value before it
        last = x(turns[-1])
        for i, f in enumerate(FLOWERS):
            if f in s["busted"]:
                v = values[f][-1]
                out.append('<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="%s" stroke-width="2"/>' % (last, last, y(v), y(v // 2) - 7,
                                                                                                       flower_colour(i)))
                out.append('<path d="M%.1f %.1f l-5-9h10Z" fill="%s"/>' % (last, y(v // 2), flower_colour(i)))
                out.append('<text x="%.1f" y="%.1f" text-anchor="end" fill="%s" %s>%s</text>'
                           % (last - 8, y(v // 2) + 16, text, HALO, escape("%s busts %d -> %d" % (f, v, v // 2))))
    out.extend(_key(s, y))
    out.append("</svg>")
    return "\n".join(out)


def _key(s, y):
    """Each flower's name and last value right of the plot, at that value
    (moved apart just enough not to overlap), after its marker."""
    rows = []
    for i, f in enumerate(FLOWERS):
        vs = s["values"][f]
        last = vs[-1] if vs else 0
        busted = f in s["busted"]
        words = "%s %d" % (f, last // 2 if busted and s["over"] else last) + (" (busted)" if busted else "")
        rows.append([y(last // 2 if busted and s["over"] else last), i, words])
    rows.sort()
    gap = 18
    for k in range(1, len(rows)):
        rows[k][0] = max(rows[k][0], rows[k - 1][0] + gap)
    shift = max(0, rows[-1][0] - (BOTTOM + 4))
    for r in rows:
        r[0] = max(TOP + 6, r[0] - shift)
    for at, i, words in rows:
        yield _marker(i, RIGHT + 16, at)
        yield '<text x="%d" y="%.1f" fill="%s">%s</text>' % (RIGHT + 27, at + 4.5, DARK["text"], escape(words))

"""The Stalk Exchange market chart: the five Stalk Values turn by turn.

The values come from replaying the stored events through engine_lite (the
one place the rules live); this module only samples them at each end of
turn and draws them with matplotlib (SVG, server-side). Flower colours are
the ring's (firmware/ring.py FLOWER_RGB), so the chart matches the board.
"""

import io
import threading

import engine_lite
from engine_lite import stalk
from engine_lite.tables import FLOWERS
from firmware.ring import FLOWER_RGB

# The page is dark (pages.CSS): the chart is drawn for it, not white on black.
DARK = {"page": "#111111", "plot": "#1b1b1b", "text": "#dddddd", "axis": "#555555"}
_DRAW = threading.Lock()  # matplotlib's state is not thread-safe; charts are drawn one at a time


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


def market_svg(events, title=""):
    """The chart as an SVG document (str)."""
    s = market_series(events)
    with _DRAW:
        from matplotlib.figure import Figure
        from matplotlib.ticker import MaxNLocator

        fig = Figure(figsize=(8, 4.2), facecolor=DARK["page"])
        ax = fig.add_subplot(1, 1, 1, facecolor=DARK["plot"])
        for i, f in enumerate(FLOWERS):
            label = f + (" (busted)" if f in s["busted"] else "")
            ax.step(s["turns"], s["values"][f], where="post", color=flower_colour(i), lw=2.5, label=label)
        if s["end"] is not None:
            turn, why = s["end"]
            ax.axvline(turn, color="#b00020" if why == "crash" else "#d97000", ls="--", lw=1.5)
            ax.annotate(
                "market crash" if why == "crash" else "bag empty",
                xy=(turn, 1), xycoords=("data", "axes fraction"), xytext=(4, -14), textcoords="offset points",
                color="#ff6b6b" if why == "crash" else "#ffa94d", fontsize=11, fontweight="bold",
            )
        if s["over"] and s["turns"]:  # the bust drawn: the final value below the value before it
            last = s["turns"][-1]
            for i, f in enumerate(FLOWERS):
                if f in s["busted"]:
                    v = s["values"][f][-1]
                    ax.annotate("", xy=(last, v // 2), xytext=(last, v),
                                arrowprops={"arrowstyle": "->", "color": flower_colour(i), "lw": 2})
                    ax.annotate("%s busts %d -> %d" % (f, v, v // 2), xy=(last, v // 2), xytext=(-6, -4),
                                textcoords="offset points", ha="right", va="top", color=DARK["text"], fontsize=10)
        for side in ax.spines.values():
            side.set_color(DARK["axis"])
        ax.tick_params(colors=DARK["text"])
        ax.xaxis.label.set_color(DARK["text"])
        ax.yaxis.label.set_color(DARK["text"])
        ax.title.set_color(DARK["text"])
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_xlabel("turn")
        ax.set_ylabel("Stalk Value")
        ax.set_xlim(0, max(1, s["turns"][-1]) if s["turns"] else 1)
        ax.set_ylim(bottom=0)
        ax.grid(alpha=0.3, color=DARK["axis"])
        legend = ax.legend(loc="upper left", fontsize=9, frameon=False)
        for text in legend.get_texts():
            text.set_color(DARK["text"])
        if title:
            ax.set_title(title, fontsize=11, parse_math=False)  # player names are text: "Ke$ha" is no TeX
        fig.tight_layout()
        buf = io.StringIO()
        fig.savefig(buf, format="svg")
    return buf.getvalue()

"""Render a picture of every ring screen into docs/ring/ (PNG, matplotlib).

Why generated: the pictures in docs/ring.md must show what the board really
draws, so they come from firmware/ring.py's `Ring.render` (the same pure
function the board runs), never from a drawing by hand. Run:

    .venv/bin/python docs/render_ring.py        # writes docs/ring/*.png

Pixel 0 is at the top, numbering runs clockwise. LEDs look far brighter than
a screen's pixels of the same value, so the pictures lift dim values with a
display gamma; the frames are rendered at brightness 255.
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import firmware.ring  # noqa: E402
from tests.kit.ring_tour import current_ma  # noqa: E402

OUT = os.path.join(HERE, "ring")


def view(mode, **kw):
    v = firmware.ring.View()
    v.mode = mode
    v.brightness = 255
    for k, val in kw.items():
        if isinstance(getattr(v, k, None), bytearray):
            getattr(v, k)[: len(val)] = bytes(val)
        else:
            setattr(v, k, val)
    return v


def stalk(**kw):
    base = dict(n=4, player=1, values=(4, 2, 6, 0, 3), tokens=(3, 2, 3, 4), until_crash=9, bag=40)
    base.update(kw)
    return view(firmware.ring.M_STALK, **base)


# (file name, title, view, time in ms)
SCREENS = [
    ("setup-game", "Setup: which game (dahlia = Stalk Exchange)", view(firmware.ring.M_CHOICE, choice=firmware.ring.CH_GAME, options=3, sel=0), 0),
    ("setup-game-orchids", "Setup: which game (daffodil = Oh My. Orchids!)", view(firmware.ring.M_CHOICE, choice=firmware.ring.CH_GAME, options=3, sel=1), 0),
    ("setup-players", "Setup: 4 players (4 sectors lit)", view(firmware.ring.M_CHOICE, choice=firmware.ring.CH_PLAYERS, options=30, sel=3), 0),
    ("setup-length", "Setup: 2 players, long (short = 2 px)", view(firmware.ring.M_CHOICE, choice=firmware.ring.CH_LENGTH, options=3, sel=0), 0),
    ("setup-track", "Setup: market-track start space 23 (entered or confirmed)", view(firmware.ring.M_NUMBER, num_kind=firmware.ring.N_TRACK, number=23), 0),
    ("setup-track-unconfirmed", "Start space 23 still the placeholder: dashed half of each second",
     view(firmware.ring.M_NUMBER, num_kind=firmware.ring.N_TRACK, number=23, unconfirmed=1), 500),
    ("stalk-play", "Stalk Exchange: seat 2 to play, 2 tokens left", stalk(), 1000),
    ("stalk-ack", "Event accepted: the active seat flashes green", stalk(ack_at=1000), 1100),
    ("stalk-extra", "2 basic actions done: the token an extra action costs blinks", stalk(extra_cost=1), 1000),
    ("stalk-upkeep", "Upkeep (harvesting): the active seat turns amber", stalk(upkeep=1, extra_cost=1), 1000),
    ("stalk-flushed", "Seat 4 has flushed (brighter blue); seat 2, to play, stays white", stalk(flushed=(0, 1, 0, 1)), 1500),
    ("stalk-flushed-dip", "... and dips blue 0.2 s each second (it has flushed too)", stalk(flushed=(0, 1, 0, 1)), 1100),
    ("stalk-peek", "Hold globemaster: its value, 6, for 2 s", stalk(peek=2, peek_at=1000), 1200),
    ("stalk-harvest", "Counting a harvest: 3 globemasters (OK confirms)", stalk(pending=2, pending_count=3, upkeep=1), 130),
    ("stalk-warn-1", "Crash warning, far (6 tokens): faint slow red glow", stalk(until_crash=6), 1000),
    ("stalk-warn-4", "Crash warning, next harvest may crash: strong fast glow", stalk(until_crash=1), 250),
    ("stalk-bag-warn", "Bag warning (4 tokens left): every third unlit pixel, marching", stalk(bag=4), 250),
    ("stalk-last-turn", "Last turn (an end trigger fired): a white comet circles", stalk(trigger=1, until_crash=0), 400),
    ("stalk-5-tokens", "5 tokens (seat 5 of 5): first pip white", stalk(n=5, player=4, tokens=(3, 3, 3, 4, 5)), 1000),
    ("portfolio", "Portfolio of seat 2: 2 dahlia, 4 daffodil, 1 globemaster, 3 snowdrop, 2 tulip",
     view(firmware.ring.M_PORTFOLIO, n=4, player=1, counts=(2, 4, 1, 3, 2), entered=(1, 0, 0, 0)), 500),
    ("stalk-results", "Results: globemaster busted (blinks red), seat 3 won (gold)",
     view(firmware.ring.M_STALK_END, n=4, values=(4, 2, 3, 0, 3), busted=(0, 0, 1, 0, 0), winner=(0, 0, 1, 0)), 400),
    ("orchids-play", "Oh My. Orchids!: seat 2 to play; 5, 2, 7 flowers",
     view(firmware.ring.M_ORCHIDS, n=3, player=1, flowers=(5, 2, 7), ending=0b100), 0),
    ("orchids-last-round", "Last round: red gaps and the comet",
     view(firmware.ring.M_ORCHIDS, n=4, player=2, flowers=(7, 4, 5, 6), ending=0b1, last_round=1), 300),
    ("orchids-kind", "Plant: dahlia = new flora type, daffodil = a type already planted, OK = orchid",
     view(firmware.ring.M_CHOICE, choice=firmware.ring.CH_KIND, options=3, sel=-1), 0),
    ("orchids-points", "Plant: 8 points", view(firmware.ring.M_NUMBER, num_kind=firmware.ring.N_POINTS, number=8), 0),
    ("orchids-seeds", "Plant: paid with 4 Seed cards", view(firmware.ring.M_NUMBER, num_kind=firmware.ring.N_SEEDS, number=4), 0),
    ("orchids-results", "Results: scores relative to the best, winner gold",
     view(firmware.ring.M_ORCHIDS_END, n=3, winner=(0, 1, 0), scores=[30, 41, 22]), 250),
    ("menu", "Menu: flush, crash, brightness, new game, close (flush selected)",
     view(firmware.ring.M_CHOICE, choice=firmware.ring.CH_MENU, options=31, sel=0), 0),
    ("brightness", "Brightness: level 3 of 5", view(firmware.ring.M_CHOICE, choice=firmware.ring.CH_BRIGHT, options=31, sel=2), 0),
    ("confirm-new", "Abandon the game? OK = yes", view(firmware.ring.M_CHOICE, choice=firmware.ring.CH_CONFIRM, options=31, sel=0), 150),
    ("error", "Refused: the whole ring blinks red; count the blinks", stalk(error_at=1000), 1000),
    ("fault", "Fault survived: white cross blinks, game reloaded from flash", stalk(fault_at=1000), 1000),
]

# Animations shown as a row of frames: (file name, title, view, times in ms)
SEQUENCES = [
    ("stalk-crash-breathe", "Crash warning (level 4): every unlit pixel breathes red together",
     stalk(until_crash=1), (0, 125, 250, 375)),
    ("stalk-bag-march", "Bag warning (level 4): the orange dots march round",
     stalk(bag=4), (0, 170, 340, 510)),
    ("setup-track-blink", "Unconfirmed start space: whole, then dashed, each second",
     view(firmware.ring.M_NUMBER, num_kind=firmware.ring.N_TRACK, number=23, unconfirmed=1), (0, 500)),
]

# Refusal blink codes (firmware/ring.py E_*): drawn as time lines.
ERROR_CODES = [
    (firmware.ring.E_NOTHING, "1 long: that button does nothing here"),
    (firmware.ring.E_RULE, "2: the rules say not now (turn order, phase)"),
    (firmware.ring.E_SHORT, "3: not enough (tokens, seed cards, exchange) / out of range"),
    (firmware.ring.E_ONCE, "4: already done, once only (flush, crash, orchid, portfolio)"),
]


def lift(c):
    """Display gamma: an LED at 30/255 looks clearly lit, a monitor pixel not."""
    return (c / 255.0) ** 0.45 if c else 0.0


def draw(ax, buf, count=24):
    import math

    from matplotlib.patches import Circle

    ax.set_xlim(-1.45, 1.45)
    ax.set_ylim(-1.45, 1.45)
    ax.set_aspect("equal")
    ax.axis("off")
    ax.add_patch(Circle((0, 0), 1.25, color="#1b1b1b"))
    ax.add_patch(Circle((0, 0), 0.78, color="#f4f4f4"))
    for i in range(count):
        a = math.pi / 2 - 2 * math.pi * i / count  # pixel 0 at the top, clockwise
        x, y = math.cos(a), math.sin(a)
        rgb = tuple(lift(buf[3 * i + k]) for k in range(3))
        ax.add_patch(Circle((x, y), 0.13, facecolor=rgb if any(rgb) else "#333333", edgecolor="#555555", lw=0.8))
        ax.text(1.37 * x, 1.37 * y, str(i), ha="center", va="center", fontsize=6, color="#666666")


def error_codes(plt):
    """One time line per blink code: red where the ring is lit red."""
    ring = firmware.ring.Ring(24)
    fig, ax = plt.subplots(figsize=(6.4, 2.0), dpi=100)
    for row, (code, label) in enumerate(ERROR_CODES):
        v = stalk(error_at=0, error_code=code, n=2)
        y = len(ERROR_CODES) - row
        for t in range(0, 1000, 10):
            buf = ring.render(v, t)
            if all(buf[3 * i] > 0 and buf[3 * i + 1] == 0 for i in range(24)):
                ax.add_patch(plt.Rectangle((t, y - 0.35), 10, 0.7, color="#e00000", lw=0))
        ax.text(1010, y, label, va="center", fontsize=7)
    ax.set_xlim(0, 1900)
    ax.set_ylim(0.3, len(ERROR_CODES) + 0.7)
    ax.set_yticks([])
    ax.set_xticks(range(0, 1001, 250))
    ax.set_xlabel("ms after the refused press", fontsize=7)
    ax.tick_params(labelsize=6)
    for side in ("top", "right", "left"):
        ax.spines[side].set_visible(False)
    ax.set_title("Refusal blink codes: the whole ring blinks red, count the blinks", fontsize=8)
    fig.savefig(os.path.join(OUT, "error-codes.png"), bbox_inches="tight", facecolor="white")
    plt.close(fig)
    print("error-codes.png")


def main():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    os.makedirs(OUT, exist_ok=True)
    ring = firmware.ring.Ring(24)
    for name, title, v, times in SEQUENCES:
        fig, axes = plt.subplots(1, len(times), figsize=(2.0 * len(times), 2.3), dpi=100)
        for ax, t in zip(axes, times):
            draw(ax, ring.render(v, t))
            ax.set_title("%d ms" % t, fontsize=7)
        fig.suptitle(title, fontsize=8)
        fig.savefig(os.path.join(OUT, name + ".png"), bbox_inches="tight", facecolor="white")
        plt.close(fig)
        print("%-22s %s" % (name + ".png", title))
    error_codes(plt)
    for name, title, v, t in SCREENS:
        buf = ring.render(v, t)
        fig, ax = plt.subplots(figsize=(3.2, 3.5), dpi=100)
        draw(ax, buf)
        ax.set_title(title, fontsize=7, wrap=True)
        fig.savefig(os.path.join(OUT, name + ".png"), bbox_inches="tight", facecolor="white")
        plt.close(fig)
        print("%-22s %4d mA  %s" % (name + ".png", current_ma(buf), title))


if __name__ == "__main__":
    main()

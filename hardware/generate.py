"""Generate the build kit's drawings from the firmware's pin map.

    .venv/bin/python hardware/generate.py          # rewrite the files below
    .venv/bin/python hardware/generate.py --check  # exit 1 if any is stale

Writes (all derived from firmware/pinmap.json, so wiring and firmware cannot
drift; tests/packaging/test_hardware.py parses them back and regenerates them):

* ``hardware/wiring-<board>.svg`` for every board in the pin map: which pin
  goes to which button and to the ring, with R1/C1 and the ground bus. Every
  wire carries ``data-ends="<end> <end>"`` (``board:GP2``, ``button:dahlia``,
  ``ring:DIN``, ``gnd``, ...) so a program can read the drawing back.
* ``hardware/wokwi/diagram.json`` + ``wokwi.toml``: the Pico build for the
  Wokwi simulator (wokwi-pi-pico, a 24-pixel wokwi-led-ring, 8 pushbuttons).
* the wiring tables in ``hardware/README.md`` (between its "generated:wiring"
  markers).
* ``hardware/reference-card.svg``: a printable card of the buttons (colours,
  gestures, pins) and the main ring screens, drawn from the firmware's own
  renderer (firmware/ring.py via docs/render_ring.py).

Output is deterministic (no dates, fixed float formatting).
"""

import importlib.util
import json
import math
import os
import sys
from xml.sax.saxutils import escape

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
if REPO not in sys.path:
    sys.path.insert(0, REPO)

PINMAP = os.path.join(REPO, "firmware", "pinmap.json")
from engine_lite.vocab import BUTTONS  # noqa: E402 (after the sys.path line above)
FLOWER_NAMES = {"dahlia": "red", "daffodil": "yellow", "globemaster": "purple", "snowdrop": "white", "tulip": "pink"}
CONTROL_RGB = {"undo": (150, 150, 150), "ok": (40, 170, 60), "menu": (40, 90, 230)}
WOKWI_KEYS = {"dahlia": "1", "daffodil": "2", "globemaster": "3", "snowdrop": "4", "tulip": "5", "undo": "u", "ok": "o", "menu": "m"}
MICROPYTHON_UF2 = "RPI_PICO-20251209-v1.27.0.uf2"  # from micropython.org/download/RPI_PICO/

# Physical header pin of each signal, for the labels (and Wokwi's GND.n choice).
PICO_PHYS = {"GP%d" % g: p for g, p in zip(range(0, 23), (1, 2, 4, 5, 6, 7, 9, 10, 11, 12, 14, 15, 16, 17, 19, 20, 21, 22, 24, 25, 26, 27, 29))}
PICO_PHYS.update({"GP26": 31, "GP27": 32, "GP28": 34, "VBUS": 40, "VSYS": 39, "3V3": 36})
PICO_GND = {"GND.1": 3, "GND.2": 8, "GND.3": 13, "GND.4": 18, "GND.5": 23, "GND.6": 28, "GND.7": 33, "GND.8": 38}
RPI_PHYS = {"D2": 3, "D3": 5, "D4": 7, "D14": 8, "D15": 10, "D17": 11, "D18": 12, "D27": 13, "D22": 15, "D23": 16,
            "D24": 18, "D10": 19, "D9": 21, "D25": 22, "D11": 23, "D8": 24, "D7": 26, "D5": 29, "D6": 31, "D12": 32,
            "D13": 33, "D19": 35, "D16": 36, "D26": 37, "D20": 38, "D21": 40}
POWER = {  # board -> (5 V pin label, GND pin label)
    "pico": ("VBUS · pin 40", "GND · pin 38"),
    "feather_rp2040": ("USB (5 V)", "GND"),
    "rpi_blinka": ("5V · pin 2", "GND · pin 6"),
}


def load_pinmap(path=PINMAP):
    with open(path) as f:
        return json.load(f)["boards"]


def pin_label(board, pin):
    if board == "pico" and pin in PICO_PHYS:
        return "%s · pin %d" % (pin, PICO_PHYS[pin])
    if board == "rpi_blinka" and pin in RPI_PHYS:
        return "GPIO%s (%s) · pin %d" % (pin[1:], pin, RPI_PHYS[pin])
    if board == "feather_rp2040" and pin[:1] == "D" and pin[1:].isdigit():
        return "%s (silk %s)" % (pin, pin[1:])
    return pin


def flower_rgb():
    """Button colours: the ring's own flower colours (firmware/ring.py), controls fixed."""
    try:
        from firmware import ring

        raw = bytes(ring.FLOWER_RGB)
        out = {b: tuple(raw[3 * i : 3 * i + 3]) for i, b in enumerate(BUTTONS[:5])}
    except Exception:  # the renderer moved: fall back to the documented colours
        out = {"dahlia": (220, 0, 40), "daffodil": (255, 170, 0), "globemaster": (140, 0, 255),
               "snowdrop": (150, 200, 255), "tulip": (255, 40, 140)}
    out.update(CONTROL_RGB)
    return out


def hexrgb(rgb):
    return "#%02x%02x%02x" % tuple(rgb)


def f(x):
    """Fixed float formatting: identical output on every machine."""
    s = "%.1f" % x
    return s[:-2] if s.endswith(".0") else s


# ------------------------------------------------------------------ wiring SVG


def wiring_svg(board, spec):
    colours = flower_rgb()
    v5, gnd = POWER.get(board, ("5V", "GND"))
    W, H = 960, 600
    bx, bw, y0, dy = 40, 250, 110, 34
    px = bx + bw  # pin stubs on the board's right edge
    rows = [("button", b, spec["buttons"][b]) for b in BUTTONS]
    y_din = y0 + dy * len(rows) + 20
    y_5v, y_gnd = y_din + dy, y_din + 2 * dy
    bus_x = 700
    out = []
    w = out.append
    w('<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="Helvetica, Arial, sans-serif" font-size="13" data-board="%s">'
      % (W, H, W, H, escape(board)))
    w('<title>Bloomkeeper wiring: %s</title>' % escape(spec["label"]))
    w('<rect x="0" y="0" width="%d" height="%d" fill="#ffffff"/>' % (W, H))
    w('<text x="%d" y="34" font-size="20" font-weight="bold">Bloomkeeper wiring: %s (%s)</text>' % (bx, escape(spec["label"]), escape(spec["runtime"])))
    w('<text x="%d" y="56" fill="#555">Generated from firmware/pinmap.json by hardware/generate.py. Buttons: momentary, pin to GND, internal pull-ups (no resistors).</text>' % bx)
    # the board
    w('<g class="board" data-name="%s">' % escape(board))
    w('<rect x="%d" y="%d" width="%d" height="%d" rx="10" fill="#2f6f3e" stroke="#1d4527" stroke-width="2"/>' % (bx, y0 - 40, bw, y_gnd - y0 + 70))
    w('<text x="%d" y="%d" fill="#ffffff" font-weight="bold">%s</text>' % (bx + 14, y0 - 16, escape(spec["label"])))
    pins = [(y0 + dy * i, p) for i, (_, _, p) in enumerate(rows)] + [(y_din, spec["pixel_pin"]), (y_5v, "5V"), (y_gnd, "GND")]
    labels = {spec["pixel_pin"]: pin_label(board, spec["pixel_pin"]), "5V": v5, "GND": gnd}
    for y, p in pins:
        w('<rect x="%d" y="%d" width="12" height="12" fill="#d4af37" stroke="#6b5a1e"/>' % (px - 6, y - 6))
        w('<text class="pin" data-pin="%s" x="%d" y="%d" fill="#ffffff" text-anchor="end">%s</text>'
          % (escape(p), px - 12, y + 4, escape(labels.get(p) or pin_label(board, p))))
    w("</g>")
    # ground bus
    w('<line class="bus" x1="%d" y1="%d" x2="%d" y2="%d" stroke="#000" stroke-width="3"/>' % (bus_x, y0, bus_x, y_gnd))
    w('<text x="%d" y="%d" text-anchor="middle" font-weight="bold">GND bus</text>' % (bus_x, y0 - 14))
    # buttons
    for i, (_, name, pin) in enumerate(rows):
        y = y0 + dy * i
        rgb = colours[name]
        w('<g class="button" data-button="%s" data-pin="%s">' % (name, escape(pin)))
        w('<path class="wire" data-ends="board:%s button:%s" d="M%d %d H%d" stroke="#1f77b4" stroke-width="2" fill="none"/>' % (escape(pin), name, px + 6, y, 500))
        w('<rect x="500" y="%d" width="28" height="24" rx="4" fill="#444"/>' % (y - 12))
        w('<circle cx="514" cy="%d" r="9" fill="%s" stroke="#222"/>' % (y, hexrgb(rgb)))
        w('<text x="490" y="%d" text-anchor="end">%s</text>' % (y - 5, escape("%d %s" % (i + 1, name) if i < 5 else name.upper())))
        w('<path class="wire" data-ends="button:%s gnd" d="M528 %d H%d" stroke="#000" stroke-width="2" fill="none"/>' % (name, y, bus_x))
        w('<circle cx="%d" cy="%d" r="3" fill="#000"/>' % (bus_x, y))
        w("</g>")
    # ring: DIN through R1, 5V with C1, GND to the bus
    rx, ry, rr = 850, 250, 70
    w('<g class="ring" data-pixels="%d" data-din="%s">' % (spec["pixel_count"], escape(spec["pixel_pin"])))
    w('<circle cx="%d" cy="%d" r="%d" fill="#1b1b1b"/><circle cx="%d" cy="%d" r="%d" fill="#ffffff"/>' % (rx, ry, rr, rx, ry, rr - 22))
    for i in range(spec["pixel_count"]):
        a = math.pi / 2 - 2 * math.pi * i / spec["pixel_count"]
        w('<circle cx="%s" cy="%s" r="6" fill="#f5f5f5" stroke="#888"/>' % (f(rx + (rr - 11) * math.cos(a)), f(ry - (rr - 11) * math.sin(a))))
    w('<text x="%d" y="%d" text-anchor="middle" font-size="11">px 0</text>' % (rx, ry - rr - 6))
    w('<text x="%d" y="%d" text-anchor="middle">%d × WS2812 ring</text>' % (rx, ry + rr + 22, spec["pixel_count"]))
    pads = {"DIN": ry + rr + 50, "5V": ry + rr + 80, "GND": ry + rr + 110}
    for pad, y in pads.items():
        w('<rect x="%d" y="%d" width="12" height="12" fill="#d4af37" stroke="#6b5a1e"/><text x="%d" y="%d">%s</text>' % (rx - 6, y - 6, rx + 12, y + 4, pad))
    w("</g>")
    din = escape(spec["pixel_pin"])
    y_pad = pads["DIN"]
    w('<path class="wire" data-ends="board:%s r1:1" d="M%d %d H760 V%d H770" stroke="#2ca02c" stroke-width="2" fill="none"/>' % (din, px + 6, y_din, y_pad))
    w('<g class="part" data-part="r1"><rect x="770" y="%d" width="50" height="14" fill="#f3e0b5" stroke="#7a5c1e"/><text x="795" y="%d" text-anchor="middle" font-size="11">R1 330 Ω</text></g>' % (y_pad - 7, y_pad - 11))
    w('<path class="wire" data-ends="r1:2 ring:DIN" d="M820 %d H%d" stroke="#2ca02c" stroke-width="2" fill="none"/>' % (y_pad, rx - 6))
    w('<path class="wire" data-ends="board:5V ring:5V" d="M%d %d H780 V%d H%d" stroke="#d62728" stroke-width="2" fill="none"/>' % (px + 6, y_5v, pads["5V"], rx - 6))
    w('<path class="wire" data-ends="board:GND gnd" d="M%d %d H%d" stroke="#000" stroke-width="3" fill="none"/>' % (px + 6, y_gnd, bus_x))
    w('<path class="wire" data-ends="ring:GND gnd" d="M%d %d H800 V%d H%d" stroke="#000" stroke-width="2" fill="none"/>' % (rx - 6, pads["GND"], y_gnd, bus_x))
    cy5, cyg = pads["5V"], pads["GND"]
    w('<g class="part" data-part="c1"><path class="wire" data-ends="c1:+ ring:5V" d="M818 %d V%d" stroke="#d62728" stroke-width="2"/>' % (cy5, cy5 + 9))
    w('<rect x="810" y="%d" width="16" height="10" fill="#cfe3ff" stroke="#234"/>' % (cy5 + 9))
    w('<path class="wire" data-ends="c1:- gnd" d="M818 %d V%d" stroke="#000" stroke-width="2"/>' % (cy5 + 19, cyg))
    w('<circle cx="818" cy="%d" r="3" fill="#d62728"/><circle cx="818" cy="%d" r="3" fill="#000"/>' % (cy5, cyg))
    w('<text x="%d" y="%d" font-size="11" text-anchor="end">C1 1000 µF</text></g>' % (806, cy5 + 18))
    notes = [
        "R1 (300–500 Ω) sits at the ring end of the data wire; C1 (1000 µF, ≥ 6.3 V) across the ring's 5V and GND, minus to GND.",
        "The board drives DIN at 3.3 V; a WS2812 at 5 V wants ≥ 3.5 V: most rings work, else a 74AHCT125 level shifter (hardware/README.md).",
        "Ring current is capped by the firmware at 400 mA (docs/ring.md): USB power is enough.",
    ]
    if board == "rpi_blinka":
        notes[2] = "The ring must be on D10, D12, D18 or D21 (rpi_ws281x) and the app needs root. Power the ring from the Pi's 5V."
    for i, n in enumerate(notes):
        w('<text x="%d" y="%d" fill="#333" font-size="12">%s</text>' % (bx, H - 62 + 20 * i, escape(n)))
    w("</svg>")
    return "\n".join(out) + "\n"


# ----------------------------------------------------------------------- Wokwi


def nearest_gnd(pin):
    phys = PICO_PHYS[pin]
    return min(PICO_GND, key=lambda g: (abs(PICO_GND[g] - phys), PICO_GND[g]))


def wokwi_diagram(spec):
    colours = flower_rgb()
    parts = [{"type": "wokwi-pi-pico", "id": "pico", "top": 0, "left": 0, "attrs": {}}]
    parts.append({"type": "wokwi-led-ring", "id": "ring", "top": -40, "left": 230,
                  "attrs": {"pixels": str(spec["pixel_count"])}})
    conns = [
        ["ring:DIN", "pico:%s" % spec["pixel_pin"], "green", []],
        ["ring:VCC", "pico:VBUS", "red", []],
        ["ring:GND", "pico:%s" % nearest_gnd("VBUS"), "black", []],
    ]
    for i, name in enumerate(BUTTONS):
        pin = spec["buttons"][name]
        bid = "btn_" + name
        parts.append({"type": "wokwi-pushbutton", "id": bid, "top": 260 + 60 * (i // 4), "left": -140 + 110 * (i % 4),
                      "attrs": {"color": hexrgb(colours[name]), "label": name, "key": WOKWI_KEYS[name]}})
        conns.append(["%s:1.l" % bid, "pico:%s" % pin, "blue", []])
        conns.append(["%s:2.l" % bid, "pico:%s" % nearest_gnd(pin), "black", []])
    doc = {"version": 1, "author": "Bloomkeeper (generated by hardware/generate.py from firmware/pinmap.json)",
           "editor": "wokwi", "parts": parts, "connections": conns, "dependencies": {}}
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def wokwi_toml():
    return (
        "# Wokwi for VS Code: open hardware/wokwi/ and run \"Wokwi: Start Simulator\".\n"
        "# Download the MicroPython firmware named below into this folder first\n"
        "# (micropython.org/download/RPI_PICO/), then load the app with\n"
        "#   bloomkeeper flash --port rfc2217://localhost:4000\n"
        "# Generated by hardware/generate.py.\n"
        "[wokwi]\n"
        "version = 1\n"
        "firmware = \"%s\"\n"
        "elf = \"%s\"\n"
        "rfc2217ServerPort = 4000\n" % (MICROPYTHON_UF2, MICROPYTHON_UF2)
    )


# -------------------------------------------------------------- reference card

CARD_GESTURES = {  # docs/controls.md, condensed
    "dahlia": ("harvest +1 · hold: its value", "take 1 Seed card · plant: new flora type", "menu: flush"),
    "daffodil": ("harvest +1 · hold: its value", "take 2 Seed cards · plant: flora type again", "menu: crash"),
    "globemaster": ("harvest +1 · hold: its value", "take 3 Seed cards", "menu: brightness"),
    "snowdrop": ("harvest +1 · hold: its value", "take 4 Seed cards", "menu: new game"),
    "tulip": ("harvest +1 · hold: its value", "take 5 Seed cards", "menu: close"),
    "undo": ("undo the last thing", "undo (in a plant: the last tap)", "close"),
    "ok": ("tap: plant · hold: end turn (stuck: upkeep)", "tap: plant (OK again = orchid) · hold: end / pass", "choose"),
    "menu": ("tap: swap · hold: menu", "leave a plant entry · hold: menu", "move to the next"),
}
CARD_SCREENS = ("stalk-play", "stalk-peek", "stalk-warn-4", "stalk-bag-warn", "stalk-last-turn",
                "orchids-play", "setup-track-unconfirmed", "error", "fault")


def _render_ring_module():
    path = os.path.join(REPO, "docs", "render_ring.py")
    if not os.path.exists(path):
        return None
    spec = importlib.util.spec_from_file_location("bloomkeeper_render_ring", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _lift(c):
    return round(255 * (c / 255.0) ** 0.45) if c else 0


def ring_frames():
    """[(name, caption, bytes of 24 RGB)] rendered by the firmware's own ring code."""
    mod = _render_ring_module()
    if mod is None:
        return []
    import firmware.ring

    r = firmware.ring.Ring(24)
    by_name = {s[0]: s for s in mod.SCREENS}
    out = []
    for name in CARD_SCREENS:
        if name in by_name:
            _, title, view, t = by_name[name]
            out.append((name, title, bytes(r.render(view, t))))
    return out


def _wrap(text, width):
    words, lines, cur = text.split(), [], ""
    for word in words:
        if cur and len(cur) + 1 + len(word) > width:
            lines.append(cur)
            cur = word
        else:
            cur = (cur + " " + word).strip()
    return lines + ([cur] if cur else [])


def reference_card(pinmap):
    colours = flower_rgb()
    pico = pinmap["pico"]["buttons"]
    W, H = 1123, 794  # A4 landscape at 96 dpi
    out = []
    w = out.append
    w('<svg xmlns="http://www.w3.org/2000/svg" width="297mm" height="210mm" viewBox="0 0 %d %d" font-family="Helvetica, Arial, sans-serif" font-size="13">' % (W, H))
    w("<title>Bloomkeeper reference card</title>")
    w('<rect x="0" y="0" width="%d" height="%d" fill="#ffffff"/>' % (W, H))
    w('<text x="40" y="50" font-size="28" font-weight="bold">Bloomkeeper</text>')
    w('<text x="250" y="50" font-size="16" fill="#444">reference card · tap = press and let go · hold = keep pressed 0.6 s · UNDO always undoes the last thing</text>')
    if any(b.get("wifi") for b in pinmap.values()):  # the Pico W's own network (firmware/wifi.py, docs/phones.md)
        w('<text class="card-wifi" x="40" y="72" font-size="12" fill="#333">Pico W, the table on your phone: join WiFi '
          'bloomkeeper-____ password bloom-______ (`bloomkeeper wifi` prints this board\'s), open http://192.168.4.1/</text>')
    # buttons
    w('<text x="40" y="92" font-size="15" font-weight="bold">Buttons</text>')
    w('<text x="310" y="92" font-size="12" fill="#555">Stalk Exchange</text><text x="600" y="92" font-size="12" fill="#555">Oh My. Orchids!</text><text x="900" y="92" font-size="12" fill="#555">menu (hold MENU)</text>')
    for i, name in enumerate(BUTTONS):
        y = 114 + 30 * i
        stalk, orchids, menu = CARD_GESTURES[name]
        w('<g class="card-button" data-button="%s">' % name)
        w('<circle cx="58" cy="%d" r="13" fill="%s" stroke="#222" stroke-width="1.5"/>' % (y, hexrgb(colours[name])))
        label = "%d %s" % (i + 1, name) if i < 5 else name.upper()
        sub = FLOWER_NAMES.get(name, "")
        w('<text x="80" y="%d" font-weight="bold">%s</text>' % (y + 5, escape(label)))
        w('<text x="190" y="%d" font-size="11" fill="#777">%s%s</text>' % (y + 5, escape(sub + " · " if sub else ""), escape(pico[name])))
        w('<text x="310" y="%d">%s</text><text x="600" y="%d">%s</text><text x="900" y="%d">%s</text>' % (y + 5, escape(stalk), y + 5, escape(orchids), y + 5, escape(menu)))
        w("</g>")
    y = 114 + 30 * 8
    extras = [
        "Stalk Exchange: harvest = tap the flower n times, then OK (hold that flower = one fewer) · flush = hold MENU, 1 · crash the board could not see = hold MENU, 2",
        "Harvest at most the tokens in the garden: 9 seeded (2 players) or 6, + bulbs of earlier turns − harvested; more = red blink. Stuck: hold OK before 2 actions = upkeep.",
        "Game over: tap each flower once per portfolio token (hold = one fewer), OK = next player; OK after the results = next game.",
        "Setup: flower buttons choose (1 Stalk Exchange · 2 Orchids; n players; 1 long · 2 short), MENU next, OK next screen, UNDO back.",
        "Start space: the number printed on your Market board at your player count. Dashed blinking number = not confirmed: tap flowers to set it, hold OK to confirm.",
        "Orchids: numbers count Seed CARDS, not seeds (3 cards of 2 seeds = 3) · plant: 1 = flora type new to the player, 2 = a type they have, OK = orchid.",
    ]
    for i, t in enumerate(extras):
        w('<text x="40" y="%d" font-size="11.5" fill="#333">%s</text>' % (y + 4 + 17 * i, escape(t)))
    # ring screens
    y_r = y + 17 * len(extras) + 32
    w('<text x="40" y="%d" font-size="15" font-weight="bold">The ring (pixel 0 at the top, clockwise)</text>' % (y_r - 10))
    frames = ring_frames()
    cell = (W - 80) // max(1, len(frames))
    for k, (name, title, buf) in enumerate(frames):
        cx, cy, rr = 40 + cell * k + cell // 2, y_r + 62, min(48, cell // 2 - 12)
        w('<g class="card-ring" data-screen="%s">' % name)
        w('<circle cx="%d" cy="%d" r="%d" fill="#1b1b1b"/>' % (cx, cy, rr + 10))
        for i in range(len(buf) // 3):
            a = math.pi / 2 - 2 * math.pi * i / (len(buf) // 3)
            rgb = tuple(_lift(c) for c in buf[3 * i : 3 * i + 3])
            fill = hexrgb(rgb) if any(rgb) else "#333333"
            w('<circle cx="%s" cy="%s" r="6.5" fill="%s"/>' % (f(cx + rr * math.cos(a)), f(cy - rr * math.sin(a)), fill))
        for j, line in enumerate(_wrap(title, min(22, cell // 6))[:4]):
            w('<text x="%d" y="%d" font-size="10.5" text-anchor="middle">%s</text>' % (cx, cy + rr + 26 + 12 * j, escape(line)))
        w("</g>")
    keys = [
        "Stalk Exchange: px 0–14 market (3 px per flower, button order; full 3 px = would bust) · px 15–19 seats (full white = to play, blue = flushed) · px 20–23 tokens.",
        "End approaches: unlit pixels breathe red = crash · orange dots march = bag; faster as it nears · white comet = last turn.",
        "Oh My. Orchids!: five sectors, one per seat; dim pixel = 1 flower, bright = 2; gold at 7 · red gaps + comet = last round.",
        "White cross blinking on a dark ring = a firmware fault was survived, the game reloaded from flash (check it; bloomkeeper doctor shows the fault).",
        "Refused = the ring blinks red, nothing changed; count the blinks: 1 long = nothing here · 2 = not now · 3 = not enough / out of range · 4 = already done",
    ]
    for i, t in enumerate(keys):
        w('<text class="card-key" x="40" y="%d" font-size="12" fill="#333">%s</text>' % (H - 100 + 17 * i, escape(t)))
    w('<text x="%d" y="%d" font-size="9" fill="#999" text-anchor="end">generated by hardware/generate.py from firmware/pinmap.json and firmware/ring.py · docs/controls.md, docs/ring.md</text>' % (W - 20, H - 8))
    w("</svg>")
    return "\n".join(out) + "\n"


# ------------------------------------------------------------ README tables

README_BEGIN = "<!-- generated:wiring begin (hardware/generate.py; edit firmware/pinmap.json instead) -->"
README_END = "<!-- generated:wiring end -->"


def wiring_tables(boards):
    out = []
    for name, spec in boards.items():
        v5, gnd = POWER.get(name, ("5V", "GND"))
        out.append("### %s (%s)\n" % (spec["label"], spec["runtime"]))
        out.append("| Part | Board pin | Other side |")
        out.append("|---|---|---|")
        for i, b in enumerate(BUTTONS):
            label = "button %d %s" % (i + 1, b) if i < 5 else "button %s" % b.upper()
            out.append("| %s | %s | GND |" % (label, pin_label(name, spec["buttons"][b])))
        out.append("| ring DIN (through R1 330 Ω) | %s | |" % pin_label(name, spec["pixel_pin"]))
        out.append("| ring 5V (+ C1 1000 µF to GND) | %s | |" % v5)
        out.append("| ring GND | %s | |" % gnd)
        if spec.get("notes"):
            out.append("\n%s" % spec["notes"])
        out.append("")
    return "\n".join(out)


def readme(boards, path=os.path.join(HERE, "README.md")):
    """hardware/README.md with its generated wiring tables brought up to date."""
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    i, j = text.find(README_BEGIN), text.find(README_END)
    if i < 0 or j < i:
        return None
    return text[: i + len(README_BEGIN)] + "\n\n" + wiring_tables(boards) + "\n" + text[j:]


# ------------------------------------------------------------------------ main


def outputs(pinmap=None):
    """{path relative to hardware/: file text} for every generated file."""
    boards = load_pinmap() if pinmap is None else pinmap
    files = {}
    for name, spec in boards.items():
        files["wiring-%s.svg" % name] = wiring_svg(name, spec)
    files["wokwi/diagram.json"] = wokwi_diagram(boards["pico"])
    files["wokwi/wokwi.toml"] = wokwi_toml()
    files["reference-card.svg"] = reference_card(boards)
    guide = readme(boards)
    if guide is not None:
        files["README.md"] = guide
    return files


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    check = "--check" in argv
    stale = []
    for rel, text in sorted(outputs().items()):
        path = os.path.join(HERE, rel)
        old = open(path, encoding="utf-8").read() if os.path.exists(path) else None
        if old == text:
            continue
        stale.append(rel)
        if not check:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8", newline="\n") as fh:
                fh.write(text)
            print("wrote hardware/%s" % rel)
    if check and stale:
        print("stale (run .venv/bin/python hardware/generate.py): %s" % ", ".join(stale))
        return 1
    if not stale:
        print("hardware/: all generated files up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main())

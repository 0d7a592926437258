"""The build kit (hardware/): "the SVG and the Wokwi diagram match the pin map",
and they are generated from it, so regenerating changes nothing (no drift).

The drawings are parsed back (xml.etree for the SVGs, json for Wokwi) and
every button, the ring's data line and the ground wiring are compared with
firmware/pinmap.json. The pin map's own rules (no pin twice, only pins the
board has) are tests/packaging/test_pinmap.py.
"""

import csv
import importlib.util
import json
from xml.etree import ElementTree

import pytest

from firmware.buttons import BUTTONS
from tests.kit.mpy_harness import REPO

HW = REPO / "hardware"
BOARDS = json.loads((REPO / "firmware" / "pinmap.json").read_text())["boards"]
SVG = "{http://www.w3.org/2000/svg}"

# Wokwi's pin names on wokwi-pi-pico (docs.wokwi.com; the part's GP*, GND.1-8, power pins).
WOKWI_PICO_PINS = {"GP%d" % i for i in list(range(23)) + [26, 27, 28]} | {"GND.%d" % i for i in range(1, 9)} | {
    "VBUS", "VSYS", "3V3", "3V3_EN", "RUN", "ADC_VREF"}


def _generator():
    spec = importlib.util.spec_from_file_location("bk_hw_generate", HW / "generate.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


GEN = _generator()


@pytest.fixture(scope="module")
def generated():
    return GEN.outputs()


def test_regenerating_changes_nothing(generated):
    """No drift: the committed files are exactly what the generator makes from
    the current pin map (and ring renderer). If this fails: run
    `.venv/bin/python hardware/generate.py` and commit the result."""
    stale = [rel for rel, text in sorted(generated.items()) if not (HW / rel).exists() or (HW / rel).read_text(encoding="utf-8") != text]
    assert not stale, "stale generated files (run .venv/bin/python hardware/generate.py): %s" % stale


def test_generator_is_deterministic():
    assert GEN.outputs() == GEN.outputs()


# ------------------------------------------------------------------- the SVGs


def _wires(root):
    ends = []
    for el in root.iter():
        if el.get("class") == "wire":
            a, b = el.get("data-ends").split()
            ends.append(frozenset((a, b)))
    return ends


@pytest.mark.parametrize("board", sorted(BOARDS))
def test_wiring_svg_matches_the_pin_map(board):
    spec = BOARDS[board]
    root = ElementTree.parse(HW / ("wiring-%s.svg" % board)).getroot()
    assert root.get("data-board") == board
    wires = _wires(root)
    # every button: its pin -> the button, the button -> ground; nothing else wired to it
    groups = {g.get("data-button"): g for g in root.iter(SVG + "g") if g.get("class") == "button"}
    assert sorted(groups) == sorted(BUTTONS)
    for name in BUTTONS:
        pin = spec["buttons"][name]
        assert groups[name].get("data-pin") == pin
        assert frozenset(("board:" + pin, "button:" + name)) in wires, "%s: %s not wired to %s" % (board, name, pin)
        assert frozenset(("button:" + name, "gnd")) in wires, "%s: %s not wired to GND" % (board, name)
        assert sum(1 for w in wires if "button:" + name in w) == 2
    # ring: DIN from the pixel pin through R1; 5V and GND; C1 across 5V/GND; board GND on the bus
    pix = spec["pixel_pin"]
    assert frozenset(("board:" + pix, "r1:1")) in wires and frozenset(("r1:2", "ring:DIN")) in wires
    assert frozenset(("board:5V", "ring:5V")) in wires and frozenset(("ring:GND", "gnd")) in wires
    assert frozenset(("board:GND", "gnd")) in wires
    assert frozenset(("c1:+", "ring:5V")) in wires and frozenset(("c1:-", "gnd")) in wires
    ring = [g for g in root.iter(SVG + "g") if g.get("class") == "ring"][0]
    assert ring.get("data-din") == pix and int(ring.get("data-pixels")) == spec["pixel_count"]
    # every board pin a wire uses is labelled on the board, and every label is a pin-map pin (or power)
    used = {e.split(":", 1)[1] for w in wires for e in w if e.startswith("board:")}
    labels = {t.get("data-pin") for t in root.iter(SVG + "text") if t.get("class") == "pin"}
    assert used == labels == set(spec["buttons"].values()) | {pix, "5V", "GND"}
    for t in root.iter(SVG + "text"):
        if t.get("class") == "pin" and t.get("data-pin") not in ("5V", "GND"):
            assert t.text.startswith(t.get("data-pin")) or "(%s)" % t.get("data-pin") in t.text


def test_pico_labels_give_the_physical_pins():
    root = ElementTree.parse(HW / "wiring-pico.svg").getroot()
    text = {t.get("data-pin"): t.text for t in root.iter(SVG + "text") if t.get("class") == "pin"}
    assert text["GP2"] == "GP2 · pin 4" and text["GP16"] == "GP16 · pin 21" and text["5V"] == "VBUS · pin 40"


# ------------------------------------------------------------------ Wokwi


def test_wokwi_diagram_matches_the_pin_map():
    spec = BOARDS["pico"]
    doc = json.loads((HW / "wokwi" / "diagram.json").read_text())
    parts = {p["id"]: p for p in doc["parts"]}
    picos = [p for p in doc["parts"] if p["type"] in ("wokwi-pi-pico", "board-pi-pico")]
    rings = [p for p in doc["parts"] if p["type"] == "wokwi-led-ring"]
    buttons = [p for p in doc["parts"] if p["type"] == "wokwi-pushbutton"]
    assert len(picos) == 1 and len(rings) == 1 and len(buttons) == 8
    pico, ring = picos[0]["id"], rings[0]["id"]
    assert rings[0]["attrs"]["pixels"] == str(spec["pixel_count"]) == "24"
    links = {}
    for a, b, _colour, _route in doc["connections"]:
        links.setdefault(a, set()).add(b)
        links.setdefault(b, set()).add(a)
    for end in links:
        part, pin = end.split(":", 1)
        assert part in parts, end
        if part == pico:
            assert pin in WOKWI_PICO_PINS, "%s is not a wokwi-pi-pico pin" % end

    def pico_pins(end):
        return {e.split(":", 1)[1] for e in links.get(end, ()) if e.split(":", 1)[0] == pico}

    assert pico_pins(ring + ":DIN") == {spec["pixel_pin"]}
    assert pico_pins(ring + ":VCC") == {"VBUS"}
    assert all(p.startswith("GND.") for p in pico_pins(ring + ":GND")) and pico_pins(ring + ":GND")
    by_label = {b["attrs"]["label"]: b for b in buttons}
    assert sorted(by_label) == sorted(BUTTONS)
    for name in BUTTONS:
        bid = by_label[name]["id"]
        # a pushbutton's 1.* pins are one side, 2.* the other: pin on one side, GND on the other
        side1 = set().union(*(pico_pins("%s:1.%s" % (bid, s)) for s in "lr"))
        side2 = set().union(*(pico_pins("%s:2.%s" % (bid, s)) for s in "lr"))
        assert side1 == {spec["buttons"][name]}, name
        assert side2 and all(p.startswith("GND.") for p in side2), name


def test_wokwi_keys_match_the_simulator_keys():
    """Wokwi lets the keyboard press the buttons: the same keys as `bloomkeeper sim`."""
    from host.board_sim.face import KEYMAP

    doc = json.loads((HW / "wokwi" / "diagram.json").read_text())
    for p in doc["parts"]:
        if p["type"] == "wokwi-pushbutton":
            assert KEYMAP[p["attrs"]["key"]] == (BUTTONS.index(p["attrs"]["label"]), 1)


def test_wokwi_toml_names_a_pico_micropython_firmware_and_the_serial_port():
    tomllib = pytest.importorskip("tomllib")  # Python >= 3.11
    cfg = tomllib.loads((HW / "wokwi" / "wokwi.toml").read_text())["wokwi"]
    assert cfg["version"] == 1 and cfg["firmware"].startswith("RPI_PICO-") and cfg["firmware"].endswith(".uf2")
    assert cfg["rfc2217ServerPort"] == 4000  # bloomkeeper flash --port rfc2217://localhost:4000


# ------------------------------------------------------ card, parts, guide


def test_reference_card_shows_every_button_and_ring_screens():
    root = ElementTree.parse(HW / "reference-card.svg").getroot()
    names = [g.get("data-button") for g in root.iter(SVG + "g") if g.get("class") == "card-button"]
    assert names == list(BUTTONS)
    screens = [g.get("data-screen") for g in root.iter(SVG + "g") if g.get("class") == "card-ring"]
    assert "stalk-play" in screens and "orchids-play" in screens and "error" in screens
    # the warnings' patterns, the unconfirmed start space, the blink codes
    assert {"stalk-bag-warn", "stalk-warn-4", "setup-track-unconfirmed", "stalk-peek"} <= set(screens)
    text = " ".join(t.text or "" for t in root.iter(SVG + "text"))
    assert "count the blinks" in text and "4 = already done" in text
    assert "printed on your Market board" in text and "Seed CARDS" in text
    for g in root.iter(SVG + "g"):
        if g.get("class") == "card-ring":
            assert len([c for c in g if c.tag == SVG + "circle"]) == 1 + 24


def test_reference_card_and_controls_say_why_a_harvest_is_refused():
    # the board refuses a harvest above the garden's tokens (ruling R10) and offers the
    # stuck turn (R3); the printed card and docs/controls.md must say so
    text = " ".join(t.text or "" for t in ElementTree.parse(HW / "reference-card.svg").getroot().iter(SVG + "text"))
    assert "Harvest at most the tokens in the garden: 9 seeded (2 players) or 6" in text
    assert "bulbs of earlier turns" in text and "Stuck: hold OK before 2 actions = upkeep" in text
    controls = (HW.parent / "docs" / "controls.md").read_text(encoding="utf-8")
    assert "this turn's bulbs never count (rulings R10)" in controls
    assert "**hold OK** before two basic actions = straight to the upkeep" in controls


def test_parts_csv():
    with open(HW / "parts.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert list(rows[0]) == ["part", "quantity", "example part number", "alternatives"]
    text = " ".join(r["part"].lower() for r in rows)
    for word in ("pico", "ring", "button", "resistor", "capacitor"):
        assert word in text, word
    assert all(r["quantity"].strip() and r["example part number"].strip() for r in rows)
    buttons = [r for r in rows if "button" in r["part"].lower()]
    assert sum(int(r["quantity"]) for r in buttons) == 8


def test_build_guide_covers_parts_wiring_power_and_flashing():
    guide = (HW / "README.md").read_text()
    for needle in ("Raspberry Pi Pico", "Feather RP2040", "Blinka", "power budget", "level shifter",
                   "1000 µF", "pull-up", "enclosure", "bloomkeeper flash", "first boot", "troubleshooting",
                   "wokwi", "make firmware", "parts.csv", "reference-card.svg"):
        assert needle.lower() in guide.lower(), needle
    for board, spec in BOARDS.items():  # the guide's wiring tables name the pin map's pins
        for pin in list(spec["buttons"].values()) + [spec["pixel_pin"]]:
            assert pin in guide, "%s %s missing from hardware/README.md" % (board, pin)


def test_drawings_follow_a_changed_pin_map():
    """The drawings come from the pin map, not from a hand-kept copy: move two
    buttons and the ring in a copy of the map, and the outputs move with them."""
    boards = json.loads(json.dumps(BOARDS))
    pico = boards["pico"]
    pico["buttons"]["dahlia"], pico["buttons"]["tulip"] = pico["buttons"]["tulip"], pico["buttons"]["dahlia"]
    pico["pixel_pin"] = "GP22"
    files = GEN.outputs(boards)
    wires = _wires(ElementTree.fromstring(files["wiring-pico.svg"]))
    assert frozenset(("board:" + pico["buttons"]["dahlia"], "button:dahlia")) in wires
    assert frozenset(("board:GP22", "r1:1")) in wires
    conns = json.loads(files["wokwi/diagram.json"])["connections"]
    assert ["ring:DIN", "pico:GP22", "green", []] in conns
    assert ["btn_dahlia:1.l", "pico:%s" % pico["buttons"]["dahlia"], "blue", []] in conns
    assert "GP22 · pin 29" in files["README.md"]


def test_the_guide_states_the_firmwares_brightness_levels_and_a_bundle_within_budget():
    """hardware/README.md says what the firmware has: the menu's brightness
    levels and default (engine_lite/vocab.py), and an example `flash` run whose
    bundle is within the flash budget tests/packaging/test_bundle.py holds."""
    import re

    from engine_lite.vocab import BRIGHT_LEVELS, DEFAULT_BRIGHTNESS
    from tests.packaging.test_bundle import BUNDLE_BUDGET

    text = (HW / "README.md").read_text()
    levels = "levels %s; default %d" % (", ".join(str(b) for b in BRIGHT_LEVELS), DEFAULT_BRIGHTNESS)
    assert levels in text
    shown = [int(n) for n in re.findall(r"bundle: (?:firmware \S+, )?\d+ files, (\d+) bytes of \.mpy", text)]
    assert shown and all(n <= BUNDLE_BUDGET for n in shown), shown

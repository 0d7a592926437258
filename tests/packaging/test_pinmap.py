"""firmware/pinmap.json: the pin maps of the three reference boards.

The requirement: "Pin maps per board live in one data file (Pico, an Adafruit
Feather RP2040 under CircuitPython, a Raspberry Pi with Blinka)." A wiring
mistake here is a dead button on the table, so: every pin must be one the
board offers, and no pin may serve twice.
"""

import json

import pytest

from firmware.buttons import BUTTONS
from firmware.hw import board_spec, button_pins, pinmap_path

BOARDS = json.load(open(pinmap_path()))["boards"]


def test_four_boards_with_their_runtimes():
    assert {k: v["runtime"] for k, v in BOARDS.items()} == {
        "pico": "micropython",
        "pico_w": "micropython",
        "feather_rp2040": "circuitpython",
        "rpi_blinka": "blinka",
    }


def test_the_boards_circuitpython_runs_carry_its_board_ids():
    """board.board_id, the name of the board's directory in CircuitPython's
    source (ports/raspberrypi/boards/raspberry_pi_pico, raspberry_pi_pico_w,
    adafruit_feather_rp2040):
    firmware/hw_cp.py picks the entry by it. The Pico's board.GP* names are
    its MicroPython names."""
    ids = {k: v.get("circuitpython") for k, v in BOARDS.items()}
    assert ids == {"pico": "raspberry_pi_pico", "pico_w": "raspberry_pi_pico_w",
                   "feather_rp2040": "adafruit_feather_rp2040", "rpi_blinka": None}


def test_pico_matches_the_contract():
    pico = BOARDS["pico"]
    assert pico["pixel_pin"] == "GP16" and pico["pixel_count"] == 24
    assert button_pins(pico) == ["GP%d" % i for i in range(2, 10)]


@pytest.mark.parametrize("name", sorted(BOARDS))
def test_every_button_once_only_valid_pins_none_twice(name):
    b = BOARDS[name]
    assert set(b["buttons"]) == set(BUTTONS)
    used = list(b["buttons"].values()) + [b["pixel_pin"]]
    assert len(used) == len(set(used)), "a pin is used twice: %s" % used
    bad = [p for p in used if p not in b["valid_pins"]]
    assert not bad, "not valid on %s: %s" % (name, bad)
    assert len(b["valid_pins"]) == len(set(b["valid_pins"]))
    assert b["pixel_count"] == 24
    assert board_spec(name) == b


def test_valid_pin_lists_leave_out_what_the_board_uses_itself():
    assert {"GP23", "GP24", "GP25", "GP29"}.isdisjoint(BOARDS["pico"]["valid_pins"])  # SMPS, VBUS, LED, VSYS
    assert {"GP23", "GP24", "GP25", "GP29"}.isdisjoint(BOARDS["pico_w"]["valid_pins"])  # the radio's on the Pico W


def test_pico_w_is_the_pico_wiring_with_wifi():
    w = dict(BOARDS["pico_w"])
    assert w.pop("wifi") is True and "wifi" not in BOARDS["pico"]
    for key in ("runtime", "pixel_pin", "pixel_count", "pixel_order", "buttons", "valid_pins"):
        assert w[key] == BOARDS["pico"][key], key
    feather = BOARDS["feather_rp2040"]
    assert "NEOPIXEL" not in feather["valid_pins"]  # the on-board pixel
    assert "D13" not in list(feather["buttons"].values()) + [feather["pixel_pin"]]  # red LED on D13
    assert {"D0", "D1"}.isdisjoint(BOARDS["rpi_blinka"]["valid_pins"])  # HAT ID EEPROM
    # rpi_ws281x can only drive the ring from PWM/PCM/SPI pins.
    assert BOARDS["rpi_blinka"]["pixel_pin"] in ("D10", "D12", "D18", "D21")

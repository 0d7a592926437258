"""Figures quoted in prose keep up with the measured ones: the hardware
page's CircuitPython RAM proxy is the README table's (bench/results.json,
written by `make bench`)."""

import json
import os
import re

from tests.kit.mpy_harness import REPO


def _read(rel):
    with open(os.path.join(REPO, rel), encoding="utf-8") as f:
        return f.read()


def test_the_hardware_pages_ram_figures_are_the_benchs():
    results = json.loads(_read("bench/results.json"))
    text = " ".join(_read("hardware/README.md").split())
    m = re.search(r"sources instead of `\.mpy`, (\d+) KB against (\d+) KB with `\.mpy` files", text)
    assert m, "the CircuitPython RAM sentence moved: keep this test on it"
    assert (int(m.group(1)), int(m.group(2))) == (results["heap_min_kb_full_game_py_sources"], results["heap_min_kb_full_game"])

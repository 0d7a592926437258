"""The board's main loop collects garbage between steps (firmware/main.py
tidy), in the real MicroPython: so that a collection, milliseconds on the
Pico, comes between two gestures instead of inside one when an allocation
finds the heap full (docs/design.md: a button event <= 15 ms worst case)."""

import json

import pytest

from tests.mpy_harness import run_mpy

pytestmark = pytest.mark.mpy

CODE = """
import gc, json, micropython
from firmware.main import tidy
locked = 'ALLOC'  # globals bound first: a new one would allocate
before = 0
gc.collect()
junk = [bytearray(100) for i in range(20)]
junk = None  # a little garbage: a collection would show
before = gc.mem_alloc()
micropython.heap_lock()  # plenty free: nothing to do, and nothing allocated
try:
    tidy()
    locked = 'ok'
except MemoryError:
    pass
micropython.heap_unlock()
quiet = gc.mem_alloc() - before
junk = []
while gc.mem_free() >= gc.mem_alloc() // 3:  # fill the heap until less than a quarter is free
    junk.append(bytearray(200))
junk = None  # now garbage, still counted until a collection
full = gc.mem_alloc()
tidy()
print(json.dumps([locked, quiet, full, gc.mem_alloc()]))
"""


def test_tidy_collects_only_once_less_than_a_quarter_is_free():
    locked, quiet, full, after = json.loads(run_mpy(CODE, heapsize_kb=128).stdout)
    assert locked == "ok" and quiet == 0  # a step with room to spare: no collection, no allocation
    assert after < full // 4  # the garbage is gone after the loop's tidy

"""firmware/keys_cp.py's PIO watch under a whole script of gestures: the
shipped PROGRAM run once on rp2040js's PIO (tests/kit/pio_watch.mjs, one
node process a script) for the pin levels the script makes, and its words
written into a PioWatch-like ring at their push times as a loop's clock
advances (tests/kit/keypad_model.py play, feed "pio").

Why once a script and not stepped with the loop: the pins follow the
player's script whatever the loop does, and the PIO and the DMA run on
their own through the loop's flash stalls, so the words and the times they
were pushed do not depend on the loop; only when the loop reads them does.

What is not modelled: the DMA's restart at the ring's end (background_read
restarts it from an interrupt, which a stall holds off, so the PIO's FIFO
is then what one stall can hold). A script's words are checked to stay
under RING (512), so its DMA never reaches the ring's end and never waits.
"""

import functools
import json
import shutil
import subprocess
from array import array

from firmware.keys_cp import EMPTY, FREQUENCY, PROGRAM, RING, WRAP, WRAP_TARGET
from tests.kit.mpy_harness import REPO

NODE = shutil.which("node")
RP2040JS = REPO / "bench/chip/node_modules/rp2040js/package.json"
SCRIPT = REPO / "tests/kit/pio_watch.mjs"
MISSING = None if NODE and RP2040JS.exists() else "needs node and bench/chip/node_modules (make test installs them: cd bench/chip && npm ci)"
IN_BASE = 2  # the Pico's GP2-GP9 (hardware pin map)
CLKDIV = 15625  # 125 MHz / FREQUENCY
MS = 1000000
LEAD = 2  # ms the machine ran before the loop's clock starts: its first word (pushed 1 ms in) is in the ring when PioButtons is made, and the pins it reads first are the released ones, as keypad's first scan


@functools.lru_cache(maxsize=None)
def _run(job_json):
    p = subprocess.run([NODE, str(SCRIPT)], input=job_json, capture_output=True, text=True, timeout=600, cwd=str(REPO))
    assert p.returncode == 0, p.stderr + p.stdout
    return json.loads(p.stdout)


def script_words(edges, end_ms):
    """The words rp2040js's PIO pushed for `edges` [(ms, button, level)]
    (the loop's ms, from 0), run until the loop's `end_ms`: [(word, ms the
    DMA wrote it, on the loop's clock from 0)]. Cached: every loop that
    plays the same script reads the same words."""
    levels = 0xFF
    tl = [[0, 0xFF]]
    for t, k, lv in sorted(edges):
        levels = levels & ~(1 << k) | lv << k
        ns = (t + LEAD) * MS
        if tl[-1][0] == ns:
            tl[-1][1] = levels
        else:
            tl.append([ns, levels])
    job = dict(program=list(PROGRAM), wrap_target=WRAP_TARGET, wrap=WRAP, in_base=IN_BASE, clkdiv_int=CLKDIV, timeline=tl,
               end_ns=(end_ms + LEAD) * MS)
    out = _run(json.dumps(job, sort_keys=True))
    assert out["period_ns"] * FREQUENCY == 1e9
    assert not out["rxstall"]  # the DMA never waits here (no ring's end inside a script): no word dropped
    words = [(w, -(-ns // MS) - LEAD) for w, ns in out["words"]]  # the first whole ms at or after its push
    assert len(words) < RING, len(words)  # the model's limit: see the module's docstring
    return words


class _SM:
    """rp2pio.StateMachine's three members PioButtons reads: the DMA pops
    each word as it is pushed (in_waiting 0) and no word was dropped
    (script_words checks rp2040js's FDEBUG)."""

    rxstall = False
    in_waiting = 0

    def clear_rxfifo(self):
        raise AssertionError("no word was dropped: nothing to clear")


class ScriptWatch:
    """firmware/keys_cp.py PioWatch's members (ring, t0, hz, sm), its ring
    written by `dma(ms)` as background_read's DMA would: each word, slot
    after slot, from the millisecond it was pushed, stalls or not."""

    def __init__(self, words, t0):
        self.ring = array("L", [EMPTY] * RING)
        self.t0 = (t0 - LEAD) & 0x3FFFFFFF  # PioWatch took the clock when it started the machine
        self.hz = FREQUENCY
        self.sm = _SM()
        self.words = words
        self.n = 0  # words written

    def dma(self, ms):
        """Every word pushed by `ms` (the loop's, from 0) into the ring."""
        words = self.words
        while self.n < len(words) and words[self.n][1] <= ms:
            self.ring[self.n % RING] = words[self.n][0]
            self.n += 1

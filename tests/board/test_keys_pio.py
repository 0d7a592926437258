"""firmware/keys_cp.py's PIO watch: the shipped PIO program run on a real
PIO model, its words decoded by the real PioButtons into the real Buttons'
events, with the loop held off by flash stalls.

What answers here:
* the program: firmware/keys_cp.pio assembled by adafruit_pioasm (what
  CircuitPython's own tools assemble with) must be `PROGRAM`, `WRAP_TARGET`,
  `WRAP`;
* the words: that PROGRAM run on rp2040js's PIO (1.4.1, bench/chip's pin),
  configured as rp2pio.StateMachine configures it and stepped at its 8 kHz
  clock, fed a timeline of the eight pins' levels (tests/kit/pio_watch.mjs):
  every word the tests decode was pushed by it, popped from its RX FIFO at
  the step that pushed it, as the DMA would;
* the DMA's ring: `PioWatch.ring`'s array, written slot after slot with
  those words at the millisecond they were pushed (background_read's loop);
* the decoding and the events: firmware/keys_cp.py PioButtons and
  firmware/buttons.py Buttons, unchanged, in CPython and in the real
  MicroPython Unix port (from the .mpy bundle, under heap_lock).

The one stand-in: the `sm` PioButtons reads (`rxstall`, `in_waiting`,
`clear_rxfifo()`), the three members of CircuitPython's rp2pio.StateMachine
it uses, since rp2pio
exists only on the board; its rxstall is what rp2040js's FDEBUG said.
(The controls subclass PioButtons to show what a naive decoder would read;
each says so.)

The loop polls every POLL_MS except inside flash stalls (400 ms and 450 ms:
a 4 KB erase at the W25Q16JV datasheet's maximum, the FAT save's pieces;
10 s: a new game's files at the datasheet's maximum), when it does not poll
at all; the words wait in the ring.
"""

import functools
import json
import shutil
import subprocess

import pytest

from firmware.buttons import LONG, SHORT, Buttons
from firmware.keys_cp import EMPTY, FREQUENCY, PROGRAM, RING, SAMPLE_CYCLES, WRAP, WRAP_TARGET, PioButtons
from tests.kit.mpy_harness import REPO, run_mpy

NODE = shutil.which("node")
RP2040JS = REPO / "bench/chip/node_modules/rp2040js/package.json"
SCRIPT = REPO / "tests/kit/pio_watch.mjs"
IN_BASE = 2  # the Pico's GP2-GP9 (hardware pin map)
CLKDIV = 15625  # 125 MHz / FREQUENCY
MS = 1000000
CYCLE_NS = 125000  # one PIO cycle at FREQUENCY
T0 = 7000  # the board's ticks_ms when PioWatch started the machine
POLL_MS = 5  # a loop turn
SAMPLE_MS = SAMPLE_CYCLES * 1000 / FREQUENCY  # 5.25
_COUNT = 0x1FFFFF
WRAP_MS = (_COUNT + 1) * SAMPLE_CYCLES * 1000 // FREQUENCY  # the count's wrap: 2**21 samples, 11,010,048 ms (3.06 h)
FIRST_IN = 2  # cycles from the machine's start to sample 0's `in pins`
PUSH = 6  # cycles from a sample's `in pins` to its `push`

needs_node = pytest.mark.skipif(
    NODE is None or not RP2040JS.exists(),
    reason="needs node and bench/chip/node_modules (make test installs them: cd bench/chip && npm ci)",
)


# The program


def test_the_shipped_words_are_keys_cp_pio_assembled_by_adafruit_pioasm():
    import adafruit_pioasm

    prog = adafruit_pioasm.Program((REPO / "firmware/keys_cp.pio").read_text())
    assert list(prog.assembled) == list(PROGRAM)
    assert (prog.pio_kwargs["wrap_target"], prog.pio_kwargs["wrap"]) == (WRAP_TARGET, WRAP)
    assert prog.pio_kwargs.get("sideset_enable", 0) == 0 and len(PROGRAM) <= 32


def _path(pc, x_differs):
    """The instructions one sample runs from pc (the wrap target) to the
    wrap, following the program's jumps: the quiet path or the change's."""
    out = []
    while True:
        out.append(pc)
        w = PROGRAM[pc]
        if pc == WRAP:
            return out
        if w >> 13 == 0:  # jmp
            cond = w >> 5 & 7
            taken = cond == 0 or (cond == 5 and x_differs) or cond == 4  # always; x!=y; y-- (its target is the next instruction: either way)
            pc = (w & 0x1F) if taken else pc + 1
        else:
            pc += 1
        assert len(out) < 32


def _cycles(path):
    return sum(1 + (PROGRAM[pc] >> 8 & 0x1F) for pc in path)


def test_a_sample_is_42_cycles_on_both_paths():
    """Every sample, change or not, is SAMPLE_CYCLES = 42 cycles (each
    instruction one cycle plus its delay, following the jumps from the wrap
    target to the wrap): so sample k's `in pins` is 2 + 42 k cycles after
    the start (the start's path to its first wrap is 12 cycles, 2 of them
    before its `in pins`), and time is samples x 42 whichever path each
    took. rp2040js's run checks the same in time below."""
    quiet, change = _path(WRAP_TARGET, False), _path(WRAP_TARGET, True)
    assert quiet == [5, 6, 7, 8, 9, 14, 15, 16] and change == [5, 6, 7, 8, 10, 11, 12, 13, 14, 15, 16]
    assert _cycles(quiet) == _cycles(change) == SAMPLE_CYCLES == 42
    start = _path(0, True)  # mov osr, null; mov isr, null; in pins; mov y, isr; jmp changed; the change's path
    assert start == [0, 1, 2, 3, 4] + change[4:] and PROGRAM[2] >> 13 == 2  # `in pins, 8` its third instruction
    # sample 1's `in pins`: after the start's path (12 cycles) and the wrap target's 32
    assert _cycles(start) == 12 and _cycles(quiet[:1]) == 32 and 12 + 32 == FIRST_IN + SAMPLE_CYCLES
    # from `in pins` to `push` on the change's path: mov y, isr; jmp x!=y; mov x, y; in null; in osr; push
    assert change.index(13) - change.index(6) == PUSH and start.index(13) - start.index(2) == PUSH


# rp2040js's PIO


def timeline(gestures, end_ms):
    """[[t_ns, levels]] from gestures (button, press ms, hold ms; pressed at
    0: held at the start). Also the truth: [(ms, button, level)] after 0."""
    changes = []
    for k, at, hold in gestures:
        changes += [(at, k, 0), (at + hold, k, 1)]
    changes.sort()
    assert end_ms > changes[-1][0]
    levels = 0xFF
    out, truth = [[0, 0xFF]], []
    for at, k, lv in changes:
        levels = levels & ~(1 << k) | lv << k
        if out[-1][0] == round(at * MS):
            out[-1][1] = levels
        else:
            out.append([round(at * MS), levels])
        if at:
            truth.append((at, k, lv))
    return out, truth


@functools.lru_cache(maxsize=None)
def _pio(job_json):
    p = subprocess.run([NODE, str(SCRIPT)], input=job_json, capture_output=True, text=True, timeout=300, cwd=str(REPO))
    assert p.returncode == 0, p.stderr + p.stdout
    return json.loads(p.stdout)


def pio_words(tl, end_ms, dma_hold=()):
    """The words rp2040js's PIO pushed for the timeline: [(word, ns the DMA
    took it)], and the ns from which its FDEBUG had RXSTALL (None: never)."""
    job = dict(program=list(PROGRAM), wrap_target=WRAP_TARGET, wrap=WRAP, in_base=IN_BASE, clkdiv_int=CLKDIV, timeline=tl, end_ns=end_ms * MS,
               dma_hold=[[a * MS, (a + d) * MS] for a, d in dma_hold])
    out = _pio(json.dumps(job, sort_keys=True))
    assert out["period_ns"] * FREQUENCY == 1e9
    assert out["rxstall"] == (out["rxstall_ns"] is not None)
    return [tuple(w) for w in out["words"]], out["rxstall_ns"]


def sample_of(word):
    """A word's sample index: its count runs down from 0 (-k for sample k)."""
    return -word & _COUNT


# The loop: the same source runs in CPython and in MicroPython.

LOOP = "POLL = %d\n" % POLL_MS + """
from array import array
from firmware.keys_cp import EMPTY, FREQUENCY, RING, KeyPin, PioButtons
from firmware.buttons import ButtonEvent
class SM:  # the stand-in for rp2pio.StateMachine: the three members PioButtons reads
    in_waiting = 0  # words in the RX FIFO: none, the harness pops each as it is pushed (the DMA)
    def __init__(self, stall_at):
        self.stall_at = stall_at  # the clock's ms from which rp2040js's FDEBUG had RXSTALL, or -1
        self.clears = 0
    @property
    def rxstall(self):
        return 0 <= self.stall_at <= T[0] and not self.clears
    def clear_rxfifo(self):
        self.clears += 1
class Watch:  # firmware/keys_cp.py PioWatch's members, without rp2pio
    def __init__(self, t0, stall_at):
        self.ring = array('L', [EMPTY] * RING)
        self.t0 = t0
        self.hz = FREQUENCY
        self.sm = SM(stall_at)
T = [0]
def clock():
    return T[0] & 0x3FFFFFFF
D = [0]  # words the DMA has written
def dma(watch, words, at):  # background_read's loop: slot after slot, each word once pushed
    while D[0] < len(words) and at[D[0]] <= T[0]:
        watch.ring[D[0] % RING] = words[D[0]]
        D[0] += 1
OUT = bytearray(512)  # events: button << 4 | kind
OUT_T = [0] * 512  # the clock when each was taken
EDGE = bytearray(1024)  # latched edges: lat's byte (button << 4 | flags | level)
EDGE_T = [0] * 1024  # and at[] (the time PioButtons gave it)
EDGE_R = [0] * 1024  # and the clock of the poll that took it
N = [0, 0]
ev = ButtonEvent()
def take(b, w0):
    j = w0
    while j != b.w:
        EDGE[N[1]] = b.lat[j]
        EDGE_T[N[1]] = b.at[j]
        EDGE_R[N[1]] = T[0]
        N[1] += 1
        j = j + 1 & 31
    while b.get_into(ev):
        OUT[N[0]] = ev.button << 4 | ev.kind
        OUT_T[N[0]] = T[0]
        N[0] += 1
def play(b, watch, words, at, stalls, end):
    while T[0] < end:
        T[0] += 1
        dma(watch, words, at)
        k = 0
        while k < len(stalls) and not (stalls[k] <= T[0] < stalls[k + 1]):
            k += 2
        if k == len(stalls) and T[0] % POLL == 0:
            w0 = b.w
            b.poll()
            take(b, w0)
def start(t0, words, at, stall_at, cls=None, late=False):
    T[0] = t0
    watch = Watch(clock(), stall_at)
    T[0] += 2  # the first word is pushed 1 ms after the machine starts
    if not late:  # late: the DMA has not written it yet, and __init__ gives up waiting
        dma(watch, words, at)
    b = (cls or PioButtons)(watch, [KeyPin() for _ in range(8)], clock)
    return b, watch
"""


def _ms_after(ns):
    return -(-ns // MS)  # the first whole millisecond at or after ns


def guest_args(words, t0=T0):
    """The words as the guest's DMA writes them: (word, clock ms when written)."""
    return [w for w, _ in words], [t0 + _ms_after(ns) for _, ns in words]


def decode(words, stalls=(), end_ms=None, t0=T0, rxstall_ns=None, cls=None, late=False, jump=None, tweak=None):
    """Run LOOP in CPython: events [(button, kind, taken ms)], edges
    [(button, level, at ms, taken ms)], the PioButtons. cls: a control's
    subclass of PioButtons; late: the first word written only after
    PioButtons.__init__ gave up waiting for it; jump (at_ms, by_ms): the
    loop's clock (and with it the DMA's writes of every word pushed after
    at_ms) jumps by by_ms at at_ms; tweak(b): a control's change to the
    PioButtons before the play."""
    ns = {}
    exec(compile(LOOP, "<LOOP>", "exec"), ns)
    w, at = guest_args(words, t0)
    if jump:
        at = [a + jump[1] if a > t0 + jump[0] else a for a in at]
    b, watch = ns["start"](t0, w, at, -1 if rxstall_ns is None else t0 + _ms_after(rxstall_ns), cls, late)
    if tweak:
        tweak(b)
    flat = [t0 + x for s, d in stalls for x in (s, s + d)]
    if jump:
        ns["play"](b, watch, w, at, flat, t0 + jump[0])
        ns["T"][0] += jump[1]
        flat = [x + jump[1] if x > t0 + jump[0] else x for x in flat]
        ns["play"](b, watch, w, at, flat, t0 + end_ms + jump[1])
    else:
        ns["play"](b, watch, w, at, flat, t0 + end_ms)
    n, m = ns["N"]
    events = [(c >> 4, c & 3, ns["OUT_T"][i] - t0) for i, c in enumerate(ns["OUT"][:n])]
    edges = [(c >> 4, c & 1, (ns["EDGE_T"][i] - t0) & 0x3FFFFFFF, ns["EDGE_R"][i] - t0) for i, c in enumerate(ns["EDGE"][:m])]
    return events, edges, b


def kinds(events):
    return [(k, kind) for k, kind, _ in events]


def want(gestures):
    """The events the gestures make, in order of their decision (a hold's
    LONG at 600 ms, a tap's SHORT at its release)."""
    out = [(at + (600 if hold >= 600 else hold), k, LONG if hold >= 600 else SHORT) for k, at, hold in gestures]
    return [(k, kind) for _, k, kind in sorted(out)]


OFFSETS = []  # every check_edges' decoded - true times, for the run's summary


def check_edges(name, edges, truth):
    """The latched edges are the true ones, in order (two in one sample: by
    button), each dated within a sample of its true time. The bound: an edge
    at true time e is seen by the first `in pins` at or after it, sample k's,
    at 0.25 + 5.25 k ms (2 + 42 k cycles) after the machine's start, so
    after the one before: e in (5.25 k - 5, 5.25 k + 0.25]; PioButtons dates
    sample k at t0 + 5.25 k ms kept in whole milliseconds (the remainder
    carried: floor, up to 0.75 ms early). So decoded - true is in
    [-1.0, 5.0)."""
    truth = sorted(truth, key=lambda e: (e[0], e[1]))
    assert [(k, lv) for k, lv, *_ in edges] == [(k, lv) for _, k, lv in truth]
    off = [e[2] - t for e, (t, _, _) in zip(edges, truth)]
    print("\n%s: decoded - true edge times: min %.2f ms, max %.2f ms, over %d edges" % (name, min(off), max(off), len(off)))
    OFFSETS.extend(off)
    assert all(-1.0 <= d < 5.0 for d in off), off
    return off


TAPS = [(0, 100, 45), (3, 300, 80), (7, 500, 700), (2, 1400, 80),
        (4, 1700, 80), (5, 1700, 80),  # two buttons in the same sample
        (1, 2000, 100), (6, 2030, 80)]  # overlapping: 1 down, 6 down, 1 up, 6 up


@needs_node
@pytest.mark.slow
def test_rp2040js_pushes_one_word_a_change_with_the_documented_layout():
    """The first word: levels at start, count 0 (sample 0); each later one:
    the new levels, bit 21 clear, and the low 21 bits of -k for its sample
    k: pushed (2 + 42 k + 6) cycles after the start, so consecutive words'
    `in pins` instants differ by a multiple of 42 cycles and a word's sample
    index times 42 cycles from the first sample is its time. Each change is
    in the first sample whose `in pins` is at or after it."""
    tl, truth = timeline(TAPS, 2300)
    words, rxstall = pio_words(tl, 2300)
    assert rxstall is None
    changes = sorted({t for t, _, _ in truth})
    assert len(words) == 1 + len(changes)  # one word a change (4 and 5 together: one)
    assert words[0] == (0xFF << 22, (FIRST_IN + PUSH) * CYCLE_NS)  # `push` is the program's 9th cycle
    levels = 0xFF
    for (w, ns), (w0, ns0), t in zip(words[1:], words, changes):
        k, k0 = sample_of(w), sample_of(w0)
        assert w >> 30 == 0 and w >> 21 & 1 == 0 and k > k0
        assert (ns - ns0) % (SAMPLE_CYCLES * CYCLE_NS) == 0 and ns - ns0 == (k - k0) * SAMPLE_CYCLES * CYCLE_NS
        assert ns - words[0][1] == k * SAMPLE_CYCLES * CYCLE_NS  # sample k x 42 cycles from the first sample
        in_pins = (FIRST_IN + k * SAMPLE_CYCLES) * CYCLE_NS
        assert in_pins - SAMPLE_CYCLES * CYCLE_NS < round(t * MS) <= in_pins
        assert w >> 22 != levels
        levels = w >> 22
    assert levels == 0xFF


@needs_node
@pytest.mark.slow
def test_taps_holds_and_order_read_right_with_the_loop_polling():
    """45 and 80 ms taps SHORT, a 700 ms hold LONG, two buttons pressed in
    the same sample both (in button order), overlapping presses in order;
    the loop polling every POLL_MS, no stall."""
    tl, truth = timeline(TAPS, 2400)
    words, rxstall = pio_words(tl, 2400)
    assert rxstall is None
    events, edges, b = decode(words, end_ms=2400)
    assert kinds(events) == want(TAPS) == [(0, SHORT), (3, SHORT), (7, LONG), (2, SHORT), (4, SHORT), (5, SHORT), (1, SHORT), (6, SHORT)]
    check_edges("polling", edges, truth)
    assert b.dropped == 0 and b.watch.sm.clears == 0


@needs_node
@pytest.mark.slow
def test_a_button_held_at_start_is_ignored_until_released():
    """The first word's levels are the start's: button 6 held then (and
    released at 900 ms, a LONG's worth later) is ignored until released,
    as Buttons does; then it taps as any."""
    tl, truth = timeline([(6, 0, 900), (6, 1000, 80)], 1200)
    words, _ = pio_words(tl, 1200)
    assert words[0][0] >> 22 == 0xFF & ~(1 << 6) and words[0][0] & _COUNT == 0
    events, edges, b = decode(words, end_ms=1200)
    assert b.k == sample_of(words[-1][0]) > 0  # the last word's sample
    assert kinds(events) == [(6, SHORT)]
    check_edges("held at start", edges, truth)


@needs_node
@pytest.mark.slow
def test_a_first_word_read_late_still_ignores_a_button_held_at_start():
    """The DMA has not written the first word when PioButtons.__init__
    gives up waiting for it (b.k stays -1), and the loop's first poll comes
    only after a 400 ms stall: the first word, read then, still says button
    6 was held at the start, and it is ignored until released (no LONG at
    its 900 ms release, no press at all), while a tap inside the stall and
    a later tap of 6 read SHORT, dated as when read in time. The control:
    the same 900 ms hold begun just after the start (not held at it) reads
    LONG."""
    gestures = [(6, 0, 900), (2, 50, 45), (6, 1000, 80)]
    tl, truth = timeline(gestures, 1300)
    words, _ = pio_words(tl, 1300)
    assert words[0][0] >> 22 == 0xFF & ~(1 << 6)
    stall = [(3, 400)]
    ns = {}
    exec(compile(LOOP, "<LOOP>", "exec"), ns)
    w, at = guest_args(words)
    b, _ = ns["start"](T0, w, at, -1, None, True)
    assert b.k == -1 and b.i == 0 and b.raw[6] == 1  # __init__ gave up: nothing known of the start yet
    events, edges, b = decode(words, stall, 1300, late=True)
    assert kinds(events) == [(2, SHORT), (6, SHORT)]
    assert events[0][2] == 405  # the first poll after the stall
    check_edges("first word late", edges, truth)
    assert edges == decode(words, stall, 1300)[1]  # the same as the first word read in __init__
    # the control: held from 10 ms, not at the start: a press, LONG at 600
    tl, _ = timeline([(6, 10, 890), (2, 50, 45), (6, 1000, 80)], 1300)
    control, _, _ = decode(pio_words(tl, 1300)[0], stall, 1300, late=True)
    assert kinds(control) == [(2, SHORT), (6, LONG), (6, SHORT)]


@needs_node
@pytest.mark.slow
def test_edges_at_every_phase_of_the_sample_are_dated_within_one():
    """300 taps whose edges fall at every phase of the 5.25 ms sample (the
    press 0.3 ms later each time, the hold 0.35 ms longer), 601 words: the
    DMA's ring (RING slots) wraps, each edge is dated within a sample of its
    truth, and every tap reads SHORT."""
    taps = [(i % 8, 50 + 250 * i + 0.3 * i, 45 + 0.35 * i) for i in range(300)]
    end = 250 * 300 + 400
    tl, truth = timeline(taps, end)
    words, _ = pio_words(tl, end)
    assert len(words) == 601 > RING
    events, edges, b = decode(words, end_ms=end)
    assert kinds(events) == want(taps)
    off = check_edges("phases", edges, truth)
    assert max(off) - min(off) > 5  # the phases were covered
    assert b.dropped == 0


# The point of the design: the loop is away, the words wait with their times.

STALL = [(1000, 450), (2000, 400), (3400, 400), (4000, 450), (4455, 450), (4910, 450)]
STALLED = [
    (2, 1010, 45), (5, 1125, 45), (2, 1240, 45), (7, 1355, 45),  # four 45/70 taps inside one 450 ms stall
    (4, 2100, 700),  # a hold begun inside a 400 ms stall
    (1, 3390, 80),  # an 80 ms tap begun just before a 400 ms stall
    # 45/70 taps through three 450 ms stalls in a row (5 ms between them), a hold across two
    (0, 4010, 45), (3, 4125, 45), (6, 4240, 70), (0, 4380, 45), (5, 4495, 70), (7, 4635, 700),
    (2, 5400, 45), (1, 5515, 45),
]


@needs_node
@pytest.mark.slow
def test_gestures_inside_flash_stalls_keep_their_kind_and_order():
    """Four 45/70 taps inside one 450 ms stall all arrive, in order, SHORT;
    a 700 ms hold begun inside a 400 ms stall is LONG; an 80 ms tap begun
    just before one stays SHORT; taps and a hold through three stalls in a
    row as well. Each edge within a sample of its true time."""
    tl, truth = timeline(STALLED, 6000)
    words, rxstall = pio_words(tl, 6000)
    assert rxstall is None
    events, edges, b = decode(words, STALL, 6000)
    assert kinds(events) == want(STALLED)
    check_edges("stalls", edges, truth)
    assert b.dropped == 0
    # the four taps in the first stall came out at the first poll after it
    assert [t for _, _, t in events[:4]] == [1450] * 4


class ReadTime(PioButtons):
    """The control: PioButtons with each word's edges dated when the loop
    reads the word (its `now`), the PIO's count ignored."""

    def _word(self, v, now):
        j = self.w
        PioButtons._word(self, v, now)
        while j != self.w:
            self.at[j] = now
            j = j + 1 & 31
        self.t = now


@needs_node
@pytest.mark.slow
def test_the_control_words_dated_when_read_misread_the_stalled_gestures():
    """The same words dated when the loop reads them (ReadTime): the taps
    inside a stall are lost and the holds begun in one read short: 5
    events of 14, 2 of them misread. So the test above passes because of
    the PIO's count."""
    tl, _ = timeline(STALLED, 6000)
    words, _ = pio_words(tl, 6000)
    events, _, _ = decode(words, STALL, 6000, cls=ReadTime)
    got = kinds(events)
    assert len(want(STALLED)) == 14
    # the four taps in the first stall: gone; the hold begun in the next: SHORT;
    # the five taps through the three stalls in a row: gone, the hold across them SHORT
    assert got == [(4, SHORT), (1, SHORT), (7, SHORT), (2, SHORT), (1, SHORT)]


# A backlog: seconds of flash work (a new game's files: 22 erases at the
# datasheet's maximum, 10 s), 60 taps inside it, the words waiting in the
# ring; the latch ring takes 24 one-edge words a poll, so after the stall the
# loop needs several polls, each with the clock seconds past the words.
BACKLOG_STALL = [(1000, 10000)]
BACKLOG = [(7, 900, 300)] + [(i % 7, 1300 + 115 * i, 45 + (i % 2) * 25) for i in range(60)]  # a press before it released inside it, then 45/70 taps


def _backlog():
    tl, truth = timeline(BACKLOG, 11500)
    words, rxstall = pio_words(tl, 11500)
    assert rxstall is None
    pending = [ns for _, ns in words if 1000 * MS < ns < 11000 * MS]
    assert len(pending) == 121 > 24  # more edges wait than one poll's latch ring takes
    return words, truth


def _split_taps(edges, after):
    """The taps whose press a poll at or after `after` took and whose
    release it left for a later poll: their buttons, in order."""
    out, down = [], {}
    for k, lv, _, taken in edges:
        if not lv:
            down[k] = taken
        elif k in down and after <= down[k] != taken:
            out.append(k)
    return out


class ClockTimed(PioButtons):
    """The control: PioButtons polled Buttons.poll's way, the held buttons
    timed up to the clock (after taking the words as _feed does), not to
    the last word taken."""

    def poll(self):
        self._feed()
        Buttons.poll(self)


@needs_node
@pytest.mark.slow
def test_a_backlog_times_held_buttons_only_to_the_last_word_taken():
    """121 words wait in the ring after a 10 s stall, more than the 24 one
    poll takes: the polls after it, the clock seconds ahead of the words,
    take them 24 at a time, and a tap whose press one poll takes and whose
    release waits for the next is held, for all the loop knows, only until
    the last word taken: every tap reads SHORT, each edge within a sample.
    The control (ClockTimed: the held buttons timed to the clock, as
    Buttons.poll does): the same words read each such tap LONG."""
    words, truth = _backlog()
    events, edges, b = decode(words, BACKLOG_STALL, 11500)
    assert kinds(events) == want(BACKLOG)
    check_edges("backlog", edges, truth)
    split = _split_taps(edges, 11000)
    assert len(split) == 5  # each poll of the backlog but the last left a tap's release behind
    assert sorted({taken for *_, taken in edges if taken >= 11000}) == [11000 + POLL_MS * i for i in range(6)]
    control, c_edges, _ = decode(words, BACKLOG_STALL, 11500, cls=ClockTimed)
    assert [e[:3] for e in c_edges] == [e[:3] for e in edges]  # the same words, the same dates
    assert kinds(control) != kinds(events)
    long = [k for k, kind in kinds(control) if kind == LONG]
    assert long == split  # exactly the taps split across polls read LONG
    assert len(control) == len(events)


# The DMA held at the ring's end through a 450 ms stall (its restart is an
# interrupt): the PIO's FIFO fills and `push noblock` drops the rest.
# rp2040js's FIFO is 4 words whatever FJOIN says (the chip's joined one is 8),
# so here the third tap's press is the first word dropped.
HELD = [(1000, 450)]
DROPS = [(0, 1010, 45), (1, 1085, 45), (2, 1160, 45), (3, 1235, 45), (5, 1310, 45),  # 45/30 taps inside it
         (6, 3000, 450), (7, 4000, 80)]  # later: a 450 ms press (SHORT) and a tap


def _dropped():
    tl, truth = timeline(DROPS, 5000)
    words, rxstall = pio_words(tl, 5000, dma_hold=HELD)
    assert rxstall is not None and len(words) == 1 + 4 + 4  # the first, four kept in the FIFO, the four after
    return words, rxstall, truth


@needs_node
@pytest.mark.slow
def test_a_full_fifo_counts_a_dropped_event_and_clears():
    """rxstall (rp2pio: the FIFO was full, a word dropped) counts one
    dropped event and clears the flag; the kept taps still read."""
    words, rxstall, _ = _dropped()
    events, _, b = decode(words, HELD, 5000, rxstall_ns=rxstall)
    assert kinds(events)[:2] == [(0, SHORT), (1, SHORT)]
    assert b.dropped == 1 and b.watch.sm.clears == 1 and not b.watch.sm.rxstall


@needs_node
@pytest.mark.slow
def test_after_a_dropped_word_later_gestures_keep_their_kind_and_time():
    """The words after the drop carry their own samples (a count never
    reset), so the six words the full FIFO lost shift none of them: the
    450 ms press after it reads SHORT and the tap SHORT, every edge the
    loop got dated within a sample of its truth."""
    words, rxstall, truth = _dropped()
    events, edges, b = decode(words, HELD, 5000, rxstall_ns=rxstall)
    assert kinds(events) == [(0, SHORT), (1, SHORT), (6, SHORT), (7, SHORT)]
    kept = truth[:4] + truth[-4:]  # the four words the FIFO kept, the four after
    check_edges("after a drop", edges, kept)
    assert b.dropped == 1


@needs_node
@pytest.mark.slow
def test_times_hold_across_the_clocks_wrap():
    """ticks_ms wraps at 2**30: a machine started 3 s before the wrap dates
    the gestures across it as it does anywhere else."""
    tl, truth = timeline(STALLED, 6000)
    words, _ = pio_words(tl, 6000)
    events, edges, _ = decode(words, STALL, 6000, t0=(1 << 30) - 3000)
    assert kinds(events) == want(STALLED)
    assert [e[:3] for e in edges] == [e[:3] for e in decode(words, STALL, 6000)[1]]  # the dates (the polls' phase differs)


WRAPPED = [(0, 100, 45), (3, 1000, 80), (5, 1300, 700)]


@needs_node
@pytest.mark.slow
@pytest.mark.parametrize("t0", [T0, (1 << 30) - 20000000])
@pytest.mark.parametrize("wraps", [1, 3])
def test_a_word_read_wraps_after_the_one_before_gets_the_wraps_the_clock_says(wraps, t0):
    """The count is 21 bits: after 2**21 quiet samples (3.06 h) it is back
    where it was, so the words rp2040js pushed for a tap at 1000 ms and a
    hold at 1300 are, bit for bit, the words it would push for them
    `wraps` whole wraps later (the levels the same all along, the count's
    low 21 bits the same): the words are rp2040js's, unedited, and only
    the loop's clock (with the DMA's writes of those words) jumps by the
    wraps after the first tap. PioButtons dates them with the wraps the
    clock says went by: each exactly `wraps` x 11,010,048 ms after the
    same words read with no jump, within a sample of the truth, all three
    gestures read right (also across the clock's 2**30 wrap, t0 20,000 s
    before it). The control: the same with PioButtons' wrap put out of
    reach (no wraps added) dates the tap hours early, and it reads LONG."""
    tl, truth = timeline(WRAPPED, 2500)
    words, _ = pio_words(tl, 2500)
    by = wraps * WRAP_MS
    events, edges, b = decode(words, end_ms=2500, t0=t0, jump=(600, by))
    assert b.wrap == WRAP_MS
    assert kinds(events) == want(WRAPPED)
    plain = decode(words, end_ms=2500, t0=t0)[1]
    assert [e[:3] for e in edges[:2]] == [e[:3] for e in plain[:2]]
    assert [e[2] for e in edges[2:]] == [(e[2] + by) & 0x3FFFFFFF for e in plain[2:]]
    shifted = truth[:2] + [(t + by, k, lv) for t, k, lv in truth[2:]]
    check_edges("%d wraps" % wraps, edges, shifted)
    # the control: no wraps added
    control, _, _ = decode(words, end_ms=2500, t0=t0, jump=(600, by), tweak=lambda b: setattr(b, "wrap", 1 << 29))
    assert kinds(control) == [(0, SHORT), (3, LONG), (5, LONG)]


# The real MicroPython


@needs_node
@pytest.mark.slow
@pytest.mark.mpy
@pytest.mark.parametrize("case", ["stalls", "backlog"])
def test_in_real_micropython_the_feed_allocates_nothing_and_reads_the_same(case):
    """PioButtons.poll with rp2040js's words in the ring, from the .mpy
    bundle, under micropython.heap_lock(): nothing allocated, and the same
    events and latched times as CPython's (the stalls, and the backlog, where
    poll times held buttons to the last word taken)."""
    if case == "stalls":
        gestures, stalls, end = STALLED, STALL, 6000
        words, _ = pio_words(*timeline(STALLED, 6000)[:1], 6000)
    else:
        gestures, stalls, end = BACKLOG, BACKLOG_STALL, 11500
        words, _ = _backlog()
    w, at = guest_args(words)
    flat = [T0 + x for s, d in stalls for x in (s, s + d)]
    setup = LOOP + "\nWORDS = %r\nAT = %r\nSTALLS = %r\nb, watch = start(%d, WORDS, AT, -1)\n" % (w, at, flat, T0)
    code = (
        "gc.collect()\nmicropython.heap_lock()\nplay(b, watch, WORDS, AT, STALLS, %d)\nmicropython.heap_unlock()\n"
        "print(list(OUT[:N[0]]))\nprint(OUT_T[:N[0]])\nprint(list(EDGE[:N[1]]))\nprint(EDGE_T[:N[1]])\n" % (T0 + end)
    )
    r = run_mpy(code, setup="import micropython, gc\n" + setup)
    got = r.stdout.strip().splitlines()
    events, edges, _ = decode(words, stalls, end)
    assert got == [
        str([k << 4 | kind for k, kind, _ in events]),
        str([t + T0 for _, _, t in events]),
        str([k << 4 | (8 | 1 if lv else 4) for k, lv, *_ in edges]),
        str([t + T0 for _, _, t, _ in edges]),
    ]
    assert kinds(events) == want(gestures)


def test_no_word_is_empty_and_the_ring_wraps_by_mask():
    """Bit 21 of every word is 0 and EMPTY's is 1; the ring's index wraps
    with `& RING - 1`."""
    assert EMPTY >> 21 & 1 and EMPTY < 1 << 30 and RING & RING - 1 == 0

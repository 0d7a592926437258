"""The path the board really runs: button release to light and to flash, on a modeled RP2040.

What runs: ``firmware/main.py``'s own loop turn, ``loop_step(app, sleep_ms)``
(``app.turn(); tidy(app); sleep_ms(SLEEP_MS)``), in the MicroPython Unix port at the
Pico's heap (``-X heapsize=240k``), from the firmware's ``.mpy`` bundle; the
real ``Store`` on real littlefs (``vfs.VfsLfs2`` with the rp2 port's
settings, on tests/kit/lfs_flash.py's device with the rp2 geometry, mounted
where the board's paths land in it as on the board); the buttons on pins
whose ``value()`` is a C call, as ``machine.Pin``'s is; the presses of
whole 5-player games of both titles (tests/kit/button_scripts.py on
tests/records/stalk-5p-bag.jsonl and orchids-5p.jsonl), 60 ms holds, 60 ms
gaps, 700 ms long holds (boardkit/script.py), scheduled on the chip's
clock as a player would press, not when the board is ready (Player: a
long press is held on until the board takes it; a press it never takes
is counted lost and pressed again 600 ms later; the next press waits for
a press not yet taken, counted).

The chip's clock, kept live. The guest's ``ticks_ms()`` is the modeled
chip clock, so that debounce, long presses and the 20 ms frame cadence
behave as on the chip. The guest cannot read callgrind's counter, so the
host reads it for it: the guest (bench/path_guest.py) makes callgrind dump
its instruction counts at every point where time matters (the end of the
App's step, a redraw's start, the strip write, every flash program and
erase, the sleep), tells the host on a pipe which point it is, and waits;
the host parses that dump, turns it into chip time, adds the modeled
stall, and answers with the new clock (and, at the sleep, the button
interrupts: ``interrupts``, edges inside a flash stall latched until its
end). So every clock read sees the chip time of everything before the
last such point (a clock read between two points misses only the CPU
since the last one): no first pass, no table of estimates, no drift. The
price is a dump per point (one in an idle turn, a few in a busy one;
~15-40 ms of callgrind's time each), which is what makes this module's
run take minutes.

What a dump becomes (the chip model, every term stated):

* CPU: Unix-port instructions x ``NS_PER_INSTRUCTION`` (27.6 ns,
  bench/bench_speed.py: the slower of its two calibration points against
  the emulated RP2040 at 125 MHz), except the two walks over the heap's
  whole allocation table, ``gc_info`` (``gc.mem_free()``/``mem_alloc()``)
  and ``gc_collect_end`` (the sweep), at x ``WALK_FACTOR`` the same ns: the
  Pico's 240 KB heap is cut into 16-byte blocks, the 64-bit port's into
  32-byte ones, so the chip walks twice the blocks for the same heap (a
  derived factor, checked by ``--calibrate`` against the chip's 13.6 ms).
* Not counted (callgrind does not collect inside them): the flash device's
  Python, the strip stand-in, the clock and the sleep, the instrument's
  pipe. Each is modeled instead, as the rp2 port does it:
  a read is a ``memcpy`` from the execute-in-place window
  (``READ_US`` + ``READ_NS_PER_BYTE`` per byte; the emulator waits for no
  flash, real XIP misses would add more); a program stalls the whole chip
  for its pages x the page-program time, an erase for the sector-erase
  time (rp2_flash.c runs both with interrupts off and XIP disabled);
  the strip write is 24 px x 30 us of bitstream; the sleep is what the loop asks (``SLEEP_MS``).
* Flash times: ``FLASH`` (W25Q16JV datasheet, typical 45 ms / 0.4 ms and
  maximum 400 ms / 3 ms per sector erase / page program). Each column is a
  run of its own, because the stall changes when the loop polls.

Figures, over both titles (short presses; long ones apart):

* ``press_to_light_ms_*``: the release edge -> the first bit of the frame
  the App drew for the change (a redraw made because the App was dirty;
  one that changed no pixel, e.g. an acknowledgement still lit, leaves
  the press unlit, counted in ``presses_unlit``); polling delay, debounce,
  the handler, the store, the redraw; p50 p90 p99 max.
  ``press_to_first_frame_ms_*``: to the first frame of any kind;
* ``event_durable_ms_p99`` (and the rest): the release edge -> the end of
  the last flash program/erase of the loop step that took the gesture (its
  frame, a due snapshot, a finish; events that write only). The quiet
  work the loop does once the buttons have been still for 300 ms
  (``Store.quiet``: a segment's move, a compaction made ahead of need) is
  no event's: no event waits for it. What it costs a press that comes
  during it is in press-to-light;
* ``loop_idle_ms``: the median period of a turn in which nothing happened;
* ``frame_ms_max``: the slowest redraw of a frame that was written
  (App.show's start -> the strip write);
* counts: sector erases, programs and pages, littlefs CPU per writing event
  (the lfs2_* functions and VfsLfs2's own glue, median ms).
The ``_flashmax`` keys are the same with the datasheet-maximum flash.

Budgets (printed beside, never asserted): press-to-light p50 <= 10, p90 <=
25, max <= 40 ms; event-durable p99 <= 60 ms; idle loop <= 5 ms; every
frame <= 2.5 ms (typical flash; docs/design.md gives the reasons).

``--calibrate`` runs the same instrument on commit ``fc0d9e7`` (the one the
emulated RP2040 measured; it has no loop_step, so the guest runs its
loop's body) and prints its figures beside the chip's; ``measure()``
(``make bench``) prints its figures beside their budgets, then runs the
calibration too (its model figures: ``path_calibration_model_*``).

Needs valgrind; without it the bench says so in one line and gives no figures.
``--phones`` plays both titles (typical flash) on the Pico W's loop, with
its table server polled after every turn and six phones on its event
stream, beside the same runs without it (``measure_phones``: what is and is
not counted there).

Run:  .venv/bin/python -m bench.bench_path [--calibrate | --phones]
API:  measure() -> dict; play(root, title, flash) -> Run (the raw timeline)
"""

import os
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.bench_speed import NS_PER_INSTRUCTION, valgrind  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
HEAP_KB = 240  # the Pico's MicroPython heap
WALK_FUNCTIONS = ("gc_info", "gc_collect_end")  # the walks over every block of the heap
# ns per Unix-port instruction of those walks on the Pico: measured, not
# derived (docstring): the chip's 13.6 ms for one tidy() (its two walks)
# over the 586.6k instructions they take here at 240 KB, at fc0d9e7.
WALK_NS = 23.2
LFS_PREFIXES = ("lfs2_",)  # littlefs
VFS_PREFIXES = ("lfs2_", "mp_vfs_lfs2_")  # littlefs with VfsLfs2's file layer (open, write, close)
READ_US = 1.0  # rp2_flash_readblocks: argument checks, mp_event_handle_nowait
READ_NS_PER_BYTE = 8.0  # memcpy from XIP, ~1 cycle a byte at 125 MHz
STRIP_US = 24 * 30  # 24 pixels of WS2812, 30 us each
PAGE = 256
# W25Q16JV datasheet, tSE (4 KB sector erase) and tPP (page program), in us
FLASH = {"typical": (45000, 400), "flashmax": (400000, 3000)}
TITLES = {
    "stalk": ("tests/records/stalk-5p-bag.jsonl", "stalk_script"),
    "orchids": ("tests/records/orchids-5p.jsonl", "orchids_script"),
}
SETTLE_MS = 1500  # after the last gesture: the loop runs on until its flash work is done
LOST_MS = 600  # a gesture not taken this long after its release is lost: the player presses it again
TRIES = 3  # ... up to this many times; then the game stops there (`abandoned`: its plan index)
CALIBRATION_COMMIT = "fc0d9e7"
# The emulated RP2040 at fc0d9e7, the 5-player Stalk Exchange game, typical flash
CHIP = {
    "press_to_light_ms_p50": 39.4,
    "press_to_light_ms_p90": 96,
    "press_to_light_ms_max": 193,
    "tidy_ms_median": 13.6,
    "lfs_ms_per_writing_event_median": 5.5,
    "lfs_vfs_ms_per_writing_event_median": 5.5,  # the same chip figure, against littlefs with its file layer
    "flash_erases": 43,
    "flash_progs": 176,
    "event_step_ms_p50": 8.85,
    "event_step_ms_max": 48.5,
}
BUDGET = {
    "press_to_light_ms_p50": 10,
    "press_to_light_ms_p90": 25,
    "press_to_light_ms_max": 40,
    "event_durable_ms_p99": 60,
    "loop_idle_ms": 5,
    "frame_ms_max": 2.5,
}
SYNC_TAGS = b"SZFWPEB"
PHONES = 6  # --phones: the table server's event streams open during the game (the Pico W's 6 players)


# -------------------------------------------------------------- the guest


def guest_tree(dst, root=ROOT, phones=0, port=0):
    """The guest's directory: the `make firmware` bundle of `root` (another
    tree's made by that tree's own bundler), and this tree's flash device
    and guest half compiled with this tree's mpy-cross; with `phones`, the
    Pico W's table server, its page and the readout too (its image's
    `wifi` modules, but WiFi itself: the phones are on loopback)."""
    from host.build import bundle

    dst = Path(dst)
    if Path(root).resolve() == ROOT:
        bundle.build("micropython", dst, ROOT)
    else:  # another commit (the calibration's): its own `make firmware`, by its own bundler
        out = dst.parent / (dst.name + "-build")
        env = dict(os.environ, PYTHONPATH=str(root))
        subprocess.run([sys.executable, "-m", "host.build.bundle", "--out", str(out)], cwd=root, env=env, check=True, capture_output=True)
        shutil.copytree(out / "firmware-micropython", dst, dirs_exist_ok=True)
    (dst / "tests" / "kit").mkdir(parents=True, exist_ok=True)
    (dst / "tests" / "__init__.py").write_text("")
    (dst / "tests" / "kit" / "__init__.py").write_text("")
    bundle.compile_file(ROOT / "tests" / "kit" / "lfs_flash.py", dst / "tests" / "kit" / "lfs_flash.mpy", source_name="tests/kit/lfs_flash.py")
    bundle.compile_file(ROOT / "bench" / "path_guest.py", dst / "path_guest.mpy", source_name="bench/path_guest.py")
    if phones:
        for rel in ("firmware/table_server.py", "firmware/table_page.py", "engine_lite/readout.py"):
            bundle.compile_file(ROOT / rel, dst / rel.replace(".py", ".mpy"), source_name=rel)
    (dst / "main_guest.py").write_text("import path_guest\npath_guest.run(%d, %d)\n" % (phones, port))
    return dst


def gestures(title, short_ms=None, long_ms=None):
    """(button, kind, hold ms) of every gesture of the title's 5-player
    record, from setup (a wait line: button -1, its ms). The holds are the
    button scripts' own unless given (the chip bench holds as a finger does)."""
    from boardkit import script
    from tests.kit import button_scripts

    record, fn = TITLES[title]
    text = getattr(button_scripts, fn)(button_scripts.load_events(ROOT / record))
    out = []
    for line in text.splitlines():
        g = script.parse_line(line)
        if g is None:
            continue
        b, kind, count = g
        if b == script.WAIT:
            out.append((-1, 0, kind))
            continue
        if kind == script.LONG:
            hold = script.LONG_HOLD_MS if long_ms is None else long_ms
        else:
            hold = script.SHORT_HOLD_MS if short_ms is None else short_ms
        out += [(b, kind, hold)] * count
    return out


# -------------------------------------------------------------- callgrind dumps


class Dumps:
    """Reads callgrind's dump files one by one: (instructions, {function: self cost})."""

    def __init__(self, cwd):
        self.cwd = Path(cwd)
        self.n = 0
        self.names = {}

    def next(self):
        """The next dump: ({function: self instructions}, the instructions
        of littlefs calls made from outside littlefs, everything under them
        included: its own CPU work, memcpy and the glue it calls)."""
        self.n += 1
        p = self.cwd / ("cg.out.%d" % self.n)
        selfc = {}
        fn = cfn = None
        call = False
        lfs = vfs = 0
        names = self.names
        with open(p) as f:
            for line in f:
                c = line[:1]
                if c.isdigit() or c in "+-*":
                    cost = int(line.rsplit(None, 1)[1])
                    if call:
                        call = False
                        if cfn is not None:
                            caller = fn or ""
                            if cfn.startswith(LFS_PREFIXES) and not caller.startswith(LFS_PREFIXES):
                                lfs += cost
                            if cfn.startswith(VFS_PREFIXES) and not caller.startswith(VFS_PREFIXES):
                                vfs += cost
                        continue
                    selfc[fn] = selfc.get(fn, 0) + cost
                elif line.startswith("fn=") or line.startswith("cfn="):
                    s = line[line.index("=") + 1 :].strip()
                    if s.startswith("("):
                        i = s.index(")")
                        key = s[1:i]
                        name = s[i + 1 :].strip()
                        if name:
                            names[key] = name
                        name = names.get(key, key)
                    else:
                        name = s
                    if c == "f":
                        fn = name
                    else:
                        cfn = name
                elif line.startswith("calls="):
                    call = True
        p.unlink()
        return selfc, lfs, vfs


def chip_ns(dump):
    """(chip ns, (littlefs ns, with its file layer), heap-walk ns,
    instructions) of one dump."""
    selfc, lfs_ir, vfs_ir = dump
    cpu = walk = 0.0
    lfs = (lfs_ir * NS_PER_INSTRUCTION, vfs_ir * NS_PER_INSTRUCTION)
    n = 0
    for fn, ir in selfc.items():
        n += ir
        name = fn.split("'")[0] if fn else ""
        if name in WALK_FUNCTIONS:
            t = ir * WALK_NS
            walk += t
        else:
            t = ir * NS_PER_INSTRUCTION
        cpu += t
    return cpu, lfs, walk, n


# -------------------------------------------------------------- one run


class Run:
    """One game played on the modeled chip: the raw timeline (microseconds).

    turns: [start, end, cpu, tidy (None: not split), walk, gestures,
    frames, programs + erases, reads]
    gestures: dicts (button, kind, press, release, delivered, frame,
    durable, writes, lfs, step) in the order played
    frames: [start of the redraw, first bit, redraw cpu]
    """

    def __init__(self, title, model):
        self.title = title
        self.erase_us, self.page_us = FLASH[model]
        self.model = model
        self.clock = 0.0
        self.turns = []
        self.stalls = []  # (start, end) of each flash program or erase: interrupts off
        self.frames = []
        self.gestures = []
        self.reads = self.read_bytes = self.progs = self.pages = self.erases = 0
        self.lost = 0
        self.waited = 0
        self.misread = 0
        self.abandoned = None
        self.result = None
        self.phones = None
        self.cpu_s = None
        self.instructions = 0
        self._turn = None
        self._redraw = None
        self._answer = False  # the redraw under way was made for a change
        self._seg_after = None

    # the guest's segments and notes, in order

    def begin(self):
        self.clock = 0.0
        self._new_turn()

    def _new_turn(self):
        self._turn = [self.clock, None, 0.0, None, 0.0, 0, 0, 0, 0]
        self._redraw = self.clock  # a redraw with no F dump of its own starts with the turn

    def segment(self, tag, n, cpu_ns, lfs_ns, walk_ns, ir):
        """A dump ending at `tag`: add its CPU, then what the tag models."""
        us = cpu_ns / 1000.0
        self.clock += us
        self.instructions += ir
        t = self._turn
        t[2] += us
        t[4] += walk_ns / 1000.0
        g = self._current()
        if g is not None:
            g["lfs"] += lfs_ns[0] / 1000.0
            g["vfs"] += lfs_ns[1] / 1000.0
            if g["delivered"] is not None and g["step_open"]:
                g["step"] += us
        if self._seg_after == b"Z"[0]:  # Z .. S is tidy()
            t[3] = us
        self._seg_after = tag
        if tag == b"S"[0]:
            self._close_dark()
            t[1] = self.clock + n * 1000
            self.turns.append(t)
            self.clock += n * 1000
            for g in self.gestures[-2:]:
                g["step_open"] = False
            self._new_turn()
        elif tag == b"Z"[0]:
            for g in self.gestures[-2:]:
                g["step_open"] = False
        elif tag == b"F"[0]:
            self._close_dark()
            self._redraw = self.clock
            self._answer = n == 1
        elif tag == b"W"[0]:
            t[6] += 1
            self.frames.append([self._redraw, self.clock, self.clock - self._redraw])
            for h in self.gestures:
                if h["delivered"] is not None and h.get("first") is None:
                    h["first"] = self.clock  # the first frame of any kind after it
                if self._answer and h["delivered"] is not None and h["frame"] is None and not h.get("unlit"):
                    h["frame"] = self.clock
            self._answer = False
            if g is not None and g["step_open"]:
                g["step"] += STRIP_US
            self.clock += STRIP_US
        elif tag == b"P"[0]:
            pages = (n + PAGE - 1) // PAGE
            self.progs += 1
            self.pages += pages
            self.stalls.append((self.clock, self.clock + pages * self.page_us))
            self.clock += pages * self.page_us
            t[7] += 1
            self._flash_done()
        elif tag == b"E"[0]:
            self.erases += 1
            self.stalls.append((self.clock, self.clock + self.erase_us))
            self.clock += self.erase_us
            t[7] += 1
            self._flash_done()

    def read(self, n):
        """A read: littlefs's, so its memcpy counts as littlefs work."""
        self._turn[8] += 1
        self.reads += 1
        self.read_bytes += n
        us = READ_US + n * READ_NS_PER_BYTE / 1000.0
        self.clock += us
        g = self._current()
        if g is not None:
            g["lfs"] += us
            g["vfs"] += us
            g["reads"] += 1

    def delivered(self, code):
        b, kind = code % 8, code // 8
        g = self.gestures[-1] if self.gestures else None
        if g is not None and g["delivered"] is None and g["button"] == b and g["kind"] != kind:
            self.misread += 1  # the board took the held button as the other kind
        for g in self.gestures:
            if g["delivered"] is None and not g.get("lost") and g["button"] == b and g["kind"] == kind:
                g["delivered"] = self.clock
                g["turn"] = len(self.turns)
                g["step_open"] = True
                self._turn[5] += 1
                return
        self._turn[5] += 1  # a gesture the script did not make (a bounce): counted in the turn

    def _close_dark(self):
        """A redraw made for a change ended without a frame: the gestures it
        answered changed no pixel (an ack already lit): unlit."""
        if self._answer:
            for h in self.gestures:
                if h["delivered"] is not None and h["frame"] is None:
                    h["unlit"] = True
            self._answer = False

    def _current(self):
        for g in reversed(self.gestures):
            if g["delivered"] is not None:
                return g
        return None

    def _flash_done(self):
        g = self._current()
        if g is not None and g["step_open"]:  # the step that took it (the quiet work is no event's)
            g["durable"] = self.clock
            g["writes"] += 1

    def press(self, button, kind, at):
        self.gestures.append({"button": button, "kind": kind, "press": at, "release": None, "delivered": None,
                              "frame": None, "durable": None, "writes": 0, "lfs": 0.0, "vfs": 0.0, "reads": 0, "step": 0.0, "step_open": False})


def callgrind_command(instrument=True):
    """valgrind's argv: collect inside all() only, never inside a call of a
    callable instance, dump at each any() (bench/path_guest.py). Without
    `instrument` nothing is instrumented until callgrind_control turns it
    on: the interpreter's start-up and the board's boot run at full speed,
    and each dump has fewer basic blocks to walk (a dump of a fully
    instrumented run cost ~40 ms, ~15 ms this way; zeroing the counters
    at each turn cost ~8 ms more, so there is none: outside all() nothing
    is collected, and each dump starts the next count from zero)."""
    return [valgrind(), "--tool=callgrind", "--instr-atstart=%s" % ("yes" if instrument else "no"),
            "--collect-atstart=no", "--toggle-collect=mp_builtin_all", "--toggle-collect=mp_obj_instance_call",
            "--dump-before=mp_builtin_any", "--callgrind-out-file=cg.out", "--dump-instr=no", "--compress-pos=no"]


class NoDumps:
    """Stands in for Dumps when the guest runs without callgrind (`dry`):
    no instructions, so the clock is the modeled waits alone."""

    def next(self):
        return {}, 0, 0


_BUILD = threading.Lock()  # one bundle build at a time (the runs themselves go in parallel)


def play(root, title, model, limit=None, dry=False, phones=0, heap_kb=HEAP_KB):
    """Play the title's whole game on the modeled chip (flash `model`:
    FLASH key) with the firmware of `root`; the Run. `dry`: without
    callgrind, CPU time zero (a check of the machinery, not a figure).
    `phones`: the Pico W's loop, with its table server and that many
    phones on its event stream (path_guest.phones); `heap_kb`: the heap."""
    from host.board_sim.page import free_port
    from boardkit import script
    from host.board_sim.micropython_board import micropython_command

    plan = gestures(title)[:limit]
    run = Run(title, model)
    with tempfile.TemporaryDirectory(prefix="bk-path-") as tmp:
        with _BUILD:  # CPython 3.11's ast.parse is not thread-safe ("recursion depth mismatch")
            guest_tree(tmp, root, phones, free_port() if phones else 0)
        cmd = [] if dry else callgrind_command(instrument=False)
        with open(Path(tmp) / "valgrind.log", "w") as err:
            p = subprocess.Popen(cmd + micropython_command() + ["-X", "heapsize=%dk" % heap_kb, "main_guest.py"],
                                 cwd=tmp, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err)
            try:
                _drive(p, NoDumps() if dry else Dumps(tmp), run, plan, script, dry)
            except BaseException:
                p.kill()
                raise
            finally:
                try:
                    ru = os.wait4(p.pid, 0)[2]  # the run's CPU seconds (the machine is shared: wall time is not its cost)
                    run.cpu_s = ru.ru_utime + ru.ru_stime
                    p.returncode = 0
                except ChildProcessError:
                    p.wait()
            if run.result is None:
                raise RuntimeError("the guest stopped: %s" % (Path(tmp, "valgrind.log").read_text().strip().splitlines() or ["no output"])[-1])
    return run


class Player:
    """Presses the plan's gestures on the chip's clock: a press GAP_MS after
    the last release; held SHORT_HOLD_MS (LONG_HOLD_MS for a long one). If
    the board has not taken the last gesture by then, the player waits for
    it (counted: `waited`); one it never takes (LOST_MS after its release)
    is lost (counted) and pressed again."""

    def __init__(self, plan, run, script):
        self.plan = plan
        self.run = run
        self.gap = script.GAP_MS * 1000
        self.k = 0
        self.at = 300000.0  # the first press, after some idle turns
        self.held = None  # (gesture, release time)
        self.end_at = None
        self.tries = {}  # plan index: times lost
        self.last = 0.0  # the chip time of the last call: an edge held back until now comes after it

    def edges(self, now):
        """The pin edges due by `now` (button, level, time), in order."""
        out = []
        try:
            return self._edges(now, out)
        finally:
            self.last = now

    def _edges(self, now, out):
        run = self.run
        while True:
            if self.held is not None:
                g, rel = self.held
                if now < rel:
                    return out
                if g["kind"] == 2 and g["delivered"] is None and now < rel + 3 * (rel - g["press"]):
                    return out  # a long press is held until the ring answers it
                g["release"] = rel
                g["released_at"] = now  # the boundary its edge is applied at: the board polls it after this
                let_go = max(rel, self.last)  # a long press held past rel until the ring answered: let go now
                out.append((g["button"], 1, let_go))
                self.held = None
                self.at = let_go + self.gap  # the next press comes after the finger is off (the same button, often)
                continue
            prev = run.gestures[-1] if run.gestures else None
            if prev is not None and prev["delivered"] is None and not prev.get("lost"):
                if now - prev["released_at"] < LOST_MS * 1000:
                    if now >= self.at and not prev.get("waited"):
                        prev["waited"] = True
                        run.waited += 1
                    return out
                run.lost += 1  # never taken: pressed again
                prev["lost"] = True
                self.tries[prev["i"]] = self.tries.get(prev["i"], 0) + 1
                if self.tries[prev["i"]] >= TRIES:  # the board takes it no more: the game stops here
                    run.abandoned = prev["i"]
                    self.k = len(self.plan)
                else:
                    self.k = prev["i"]
                    self.at = now
            elif prev is not None and prev.get("waited"):
                self.at = max(self.at, prev["delivered"])
            if self.k >= len(self.plan):
                if self.end_at is None:
                    self.end_at = now + SETTLE_MS * 1000
                return out
            b, kind, hold = self.plan[self.k]
            if b < 0:  # a wait line
                self.at += hold * 1000
                self.k += 1
                continue
            if now < self.at:
                return out
            run.press(b, kind, self.at)
            run.gestures[-1]["i"] = self.k
            self.held = (run.gestures[-1], self.at + hold * 1000)
            self.k += 1
            out.append((b, 0, max(self.at, self.last)))

    def done(self, now):
        return self.end_at is not None and now >= self.end_at


def _drive(p, dumps, run, plan, script, dry=False):
    """The host's half of the pipe: turn each dump into chip time, answer
    the clock, press and release the pins on the chip's clock."""
    started = False
    player = Player(plan, run, script)
    pending = []
    while True:
        line = p.stdout.readline()
        if not line:
            return
        if line.startswith(b"RESULT"):
            run.result = line.decode().split()[1:]
            continue
        if line.startswith(b"PHONES"):
            run.phones = [int(x) for x in line.split()[1:]]  # phones, states pushed, bytes they read, refusals
            continue
        tag, n = line[0], int(line[2:14])
        if tag == b"R"[0]:
            if started:
                run.read(n)
            continue
        if tag == b"G"[0]:
            if started:
                run.delivered(n)
            continue
        if not started:  # boot runs uninstrumented: no dumps
            if tag == b"B"[0]:
                started = True
                run.begin()
                on = None if dry else subprocess.run(["callgrind_control", "-i", "on", str(p.pid)], capture_output=True, text=True)
                if on is not None and on.returncode != 0:
                    raise RuntimeError("callgrind_control: %s" % (on.stdout + on.stderr).strip())
            p.stdin.write(b"%012d%s-\n" % (0, b"-" * 13 * SLOTS))
            p.stdin.flush()
            continue
        cpu, lfs, walk, ir = chip_ns(dumps.next())
        run.segment(tag, n, cpu, lfs, walk, ir)
        slots = b""
        cmd = b"-"
        if tag == b"S"[0]:
            now = run.clock
            pending += interrupts(player.edges(now), run.stalls)
            e = pending[:SLOTS]
            del pending[:SLOTS]
            slots = b"".join(b"%d%d%d%010d" % (b, flags, level, at // 1000) for b, flags, level, at in e)
            if player.done(now) and not pending:
                cmd = b"Q"
        p.stdin.write(b"%012d%s%s\n" % (int(run.clock), slots.ljust(13 * SLOTS, b"-"), cmd))
        p.stdin.flush()


SLOTS = 4  # interrupts per answer (bench/path_guest.py sync); more wait for the next sleep


def interrupts(edges, stalls):
    """The RP2040's GPIO interrupts for pin edges (button, level, time us),
    in order: (button, flags, level, tick us). An edge while the chip runs
    or sleeps interrupts at its own time. An edge inside a flash program or
    erase (`stalls`: interrupts off, rp2_flash.c) is latched in IO_BANK0's
    INTR bits and interrupts at the stall's end, once for all that pin's
    edges in that stall: flags 1 fell, 2 rose, 3 both (machine_pin.c
    gpio_irq: `irq->flags = intr & trigger`), the level the last one left."""
    out = []
    for b, level, t in edges:
        at = t
        for s, e in reversed(stalls):
            if s <= t < e:
                at = e
                break
            if e < t - 2e6:  # stalls are in time order: none this old can hold t
                break
        flags = 2 if level else 1
        for x in out:
            if x[0] == b and x[3] == at and at != t:  # the same pin, latched in the same stall
                x[1] |= flags
                x[2] = level
                break
        else:
            out.append([b, flags, level, at])
    out.sort(key=lambda x: x[3])  # sorted() is stable: same tick, edge order
    return [tuple(x) for x in out]


# -------------------------------------------------------------- figures


def pct(xs, q):
    """The q-quantile by nearest rank (q=1: the largest)."""
    xs = sorted(xs)
    if not xs:
        return None
    i = max(0, min(len(xs) - 1, int(-(-q * len(xs) // 1)) - 1))
    return xs[i]


def _median(xs):
    return pct(xs, 0.5)


def _r(x, nd=2):
    return None if x is None else round(x, nd)


def figures(runs, suffix=""):
    """The figures of one flash model's runs (both titles), keyed as the
    module docstring says, with `suffix` after each timing key."""
    from engine_lite.vocab import LONG_PRESS_MS

    light, durable, long_light, lfs, step, frames, idle, tidy, first = [], [], [], [], [], [], [], [], []
    n = lost = waited = unanswered = unlit = misread = 0
    reads = []
    vfs = []
    for r in runs:
        for g in r.gestures:
            if g.get("lost"):
                continue
            n += 1
            if g["delivered"] is None:
                unanswered += 1
                continue
            start = g["release"] if g["kind"] == 1 else g["press"] + LONG_PRESS_MS * 1000
            if g["kind"] == 1 and g.get("first") is not None:
                first.append((g["first"] - start) / 1000)
            if g["frame"] is not None:
                (light if g["kind"] == 1 else long_light).append((g["frame"] - start) / 1000)
            else:
                unlit += 1
            if g["writes"]:
                durable.append((g["durable"] - start) / 1000)
                lfs.append(g["lfs"] / 1000)
                vfs.append(g["vfs"] / 1000)
                reads.append(g["reads"])
            step.append(g["step"] / 1000)
        frames += [f[2] / 1000 for f in r.frames]
        idle += [(t[1] - t[0]) / 1000 for t in r.turns if not (t[5] or t[6] or t[7] or t[8])]
        tidy += [t[3] / 1000 for t in r.turns if t[3] is not None]
        lost += r.lost
        waited += r.waited
        misread += r.misread
    out = {}
    for key, xs in (("press_to_light_ms", light), ("press_to_first_frame_ms", first), ("event_durable_ms", durable), ("long_press_light_ms", long_light),
                    ("frame_ms", frames), ("event_step_ms", step)):
        for q, name in ((0.5, "p50"), (0.9, "p90"), (0.99, "p99"), (1, "max")):
            out["%s_%s%s" % (key, name, suffix)] = _r(pct(xs, q))
    out["loop_idle_ms" + suffix] = _r(_median(idle))
    out["loop_idle_ms_max" + suffix] = _r(pct(idle, 1))
    out["tidy_ms_median" + suffix] = _r(_median(tidy))
    out["lfs_ms_per_writing_event_median" + suffix] = _r(_median(lfs))
    out["lfs_ms_per_writing_event_max" + suffix] = _r(pct(lfs, 1))
    out["lfs_vfs_ms_per_writing_event_median" + suffix] = _r(_median(vfs))
    out["writing_events" + suffix] = len(lfs)
    out["reads_per_writing_event_median" + suffix] = _median(reads)
    out["presses_lost" + suffix] = lost
    out["presses_waited" + suffix] = waited
    out["presses_unanswered" + suffix] = unanswered
    out["presses_unlit" + suffix] = unlit
    out["presses_misread" + suffix] = misread
    out["gestures_played" + suffix] = n
    for r in runs:
        for k in ("erases", "progs", "pages", "reads"):
            out["flash_%s_%s%s" % (k, r.title, suffix)] = getattr(r, k)
    return out


def _play_all(root, jobs):
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(2) as pool:  # separate valgrind processes, one per core
        return list(pool.map(lambda job: play(root, *job), jobs))


def measure():
    """The figures at this tree (see the module docstring); {} without valgrind."""
    if not valgrind():
        print("bench_path: skipped: valgrind is not installed (Debian: apt install valgrind)")
        return {}
    jobs = [(title, model) for model in FLASH for title in TITLES]
    runs = _play_all(ROOT, jobs)
    out = {}
    for model in FLASH:
        out.update(figures([r for r in runs if r.model == model], "" if model == "typical" else "_" + model))
    for k, v in BUDGET.items():
        out["path_budget_" + k] = v
    out["path_cpu_seconds"] = round(sum(r.cpu_s or 0 for r in runs), 1)
    out["path_ns_per_instruction"] = NS_PER_INSTRUCTION
    out["path_walk_ns_per_instruction"] = WALK_NS
    print("\n".join(report(out)))
    got = calibrate()
    if got:
        for key in CHIP:
            out["path_calibration_model_" + key] = got.get(key)
    return out


def measure_phones(n=PHONES):
    """Press-to-light with the Pico W's table server and `n` phones on its
    event stream (path_guest.phones: the server's poll after every turn, as
    firmware/pico_w.py runs it; the phones on loopback), both titles at
    typical flash, beside the same runs without the server, at the same
    heap: keys with ``_phones<n>`` and ``_nophones`` after them. Counted on
    the chip: the server's poll in every turn (the state's JSON once per
    change, the round so far, the sends' MicroPython side) and the garbage
    collections its allocations bring sooner. Not counted: the phones, the
    kernel's side of the sockets, and on the Pico W lwIP and the radio's
    SPI transfers (the emulated chip has no radio to measure them on)."""
    if not valgrind():
        print("bench_path: skipped: valgrind is not installed (Debian: apt install valgrind)")
        return {}
    jobs = [(title, "typical", None, False, k) for k in (n, 0) for title in TITLES]
    runs = _play_all(ROOT, jobs)
    out = {}
    for k in (n, 0):
        got = [r for r in runs if bool(r.phones) == bool(k)]
        suffix = "_phones%d" % k if k else "_nophones"
        out.update(figures(got, suffix))
        if k:
            out["phones_states_pushed" + suffix] = sum(r.phones[1] for r in got)
            out["phones_bytes_read_each" + suffix] = sum(r.phones[2] for r in got) // k
            out["phones_refused" + suffix] = sum(r.phones[3] for r in got)
    out["phones_path_cpu_seconds"] = round(sum(r.cpu_s or 0 for r in runs), 1)
    print("%-34s %10s %10s %8s" % ("figure (ms)", "%d phones" % n, "none", "budget"))
    for key in ("press_to_light_ms_p50", "press_to_light_ms_p90", "press_to_light_ms_p99", "press_to_light_ms_max",
                "long_press_light_ms_p50", "long_press_light_ms_max", "event_durable_ms_p99", "loop_idle_ms", "loop_idle_ms_max",
                "event_step_ms_max"):
        print("%-34s %10s %10s %8s" % (key, out.get(key + "_phones%d" % n), out.get(key + "_nophones"), BUDGET.get(key, "")))
    for key in ("presses_lost", "presses_unanswered", "presses_unlit", "gestures_played"):
        print("%-34s %10s %10s" % (key, out.get(key + "_phones%d" % n), out.get(key + "_nophones")))
    print("states pushed %s, bytes each phone read %s, refusals %s" % (
        out["phones_states_pushed_phones%d" % n], out["phones_bytes_read_each_phones%d" % n], out["phones_refused_phones%d" % n]))
    return out


def report(out, lines=None):
    """The headline figures beside their budgets, both flash columns."""
    lines = [] if lines is None else lines
    lines.append("%-34s %10s %10s %8s" % ("figure (ms)", "typical", "flash max", "budget"))
    for key in ("press_to_light_ms_p50", "press_to_light_ms_p90", "press_to_light_ms_p99", "press_to_light_ms_max",
                "event_durable_ms_p50", "event_durable_ms_p99", "event_durable_ms_max", "long_press_light_ms_p50",
                "long_press_light_ms_max", "loop_idle_ms", "loop_idle_ms_max", "frame_ms_max", "event_step_ms_p50",
                "event_step_ms_max", "tidy_ms_median", "lfs_ms_per_writing_event_median",
                "lfs_vfs_ms_per_writing_event_median", "press_to_first_frame_ms_p50", "press_to_first_frame_ms_p90",
                "press_to_first_frame_ms_max"):
        lines.append("%-34s %10s %10s %8s" % (key, out.get(key), out.get(key + "_flashmax"), BUDGET.get(key, "")))
    for key in sorted(k for k in out if k.startswith(("flash_", "presses_", "writing_events", "gestures_")) and not k.endswith("_flashmax")):
        lines.append("%-34s %10s %10s" % (key, out[key], out.get(key + "_flashmax")))
    return lines


def calibrate():
    """The instrument on the commit the emulated RP2040 measured, its
    5-player Stalk Exchange game, typical flash: beside the chip's figures."""
    with tempfile.TemporaryDirectory(prefix="bk-path-cal-") as tmp:
        old = Path(tmp) / "tree"
        r = subprocess.run(["git", "worktree", "add", "--detach", str(old), CALIBRATION_COMMIT], cwd=ROOT, capture_output=True, text=True)
        if r.returncode:
            print("calibration: skipped: commit %s is not in this clone (%s)" % (CALIBRATION_COMMIT, (r.stderr.strip().splitlines() or ["git failed"])[-1]))
            return {}
        try:
            run = play(old, "stalk", "typical")
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(old)], cwd=ROOT, capture_output=True)
    got = figures([run])
    got["flash_erases"] = run.erases
    got["flash_progs"] = run.progs
    print("calibration at %s, 5-player Stalk Exchange, typical flash (model vs emulated RP2040):" % CALIBRATION_COMMIT)
    for key, chip in CHIP.items():
        m = got.get(key)
        off = None if m is None else (m - chip) / chip * 100
        print("  %-34s %8s %8s  %s" % (key, m, chip, "-" if off is None else "%+.0f%%%s" % (off, "" if abs(off) <= 25 else "  OUTSIDE 25%")))
    print("  pages programmed %d, reads %d; presses lost %d (pressed again), waited for %d, unlit %d" % (
        run.pages, run.reads, run.lost, run.waited, got["presses_unlit"]))
    walks = sorted(t[4] * 1000 / WALK_NS for t in run.turns if t[3] is not None)
    if walks:
        w = walks[len(walks) // 2]
        print("  heap walks: %.0fk instructions per tidy() here -> %.1f ns each for the chip's %.1f ms (%.1f used;"
              " 2 x %.1f, the derived block-count factor, would give %.1f ms)" % (
                  w / 1000, CHIP["tidy_ms_median"] * 1e6 / w, CHIP["tidy_ms_median"], WALK_NS, NS_PER_INSTRUCTION,
                  w * 2 * NS_PER_INSTRUCTION / 1e6))
    print("  littlefs: %.2f ms per writing event alone, %.2f ms with VfsLfs2's file layer (open, write, close:"
          " the C under Python's file calls); the chip's 5.5 ms is nearer the second" % (
              got["lfs_ms_per_writing_event_median"], got["lfs_vfs_ms_per_writing_event_median"]))
    return got


def main(argv=()):
    if "--calibrate" in argv:
        calibrate()
        return 0
    if "--phones" in argv:
        measure_phones()
        return 0
    measure()  # prints the figures beside their budgets, then the calibration
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

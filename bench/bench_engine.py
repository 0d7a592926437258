"""The rules core on the board: .mpy bytes, microseconds per record, live heap.

Budgets: engine_lite compiles to <= 16 KB of .mpy (docs/design.md; armv6m, the
Pico); live heap growth during a 5-player game under 4 KB. Measured in the
official MicroPython Unix port (tests/kit/mpy_harness.py, the `make firmware`
bundle). That port is 64-bit: its heap figures are up to ~1.35x what the
Pico's 32-bit core needs; and it runs roughly 100-220x faster than a Pico
(docs/design.md), so ``us_per_record_*`` (the fastest of 5 folds of the whole game)
is for ratios and trends, not for the board.

Run:  .venv/bin/python -m bench.bench_engine
API:  measure() -> dict
"""

import json
import sys
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from host.build import bundle
from tests.kit.mpy_harness import mpy_sizes, run_mpy

RECORDS = Path(__file__).resolve().parent.parent / "tests" / "records"
MPY_BUDGET = 16 * 1024
HEAP_BUDGET = 4 * 1024
GAMES = ("stalk-5p-bag.jsonl", "orchids-5p.jsonl")

# Records are encoded up front so the measured loop is what the board runs
# per button press: judge + append (apply_record), no JSON.
_LOAD = """
import json, gc, engine_lite
with open(%r) as f:
    lines = [l for l in f.read().split('\\n') if l]
enc = engine_lite.Game()
recs = []
for l in lines:
    ev = json.loads(l)
    recs.append(enc.encode(ev))
    enc.apply(ev)
del enc
gc.collect()
"""

_FOLD = """
import time
best = None
for run in range(5):
    gc.collect()
    g = engine_lite.Game()
    t0 = time.ticks_us()
    for r in recs:
        g.apply_record(r)
    us = time.ticks_diff(time.ticks_us(), t0)
    best = us if best is None else min(best, us)
print(best)
"""

# A log that keeps nothing in RAM: isolates the engine's own state from the
# event log, which on the board lives on flash (firmware/storage.py).
_FLASHLIKE = """
class NoRamLog:
    n = 0
    def __len__(self): return self.n
    def append(self, rec): self.n += 1
"""

# Growth is measured from the state right after `start` (the state is
# allocated once, there) to every later record. The loop's own variables
# exist before `base` and it walks by index (a `recs[1:]` copy, ~0.9 KB,
# and new globals growing the namespace were once counted as growth).
_HEAP = """
g = engine_lite.Game(%s)
g.apply_record(recs[0])
peak = used = i = 0
gc.collect()
base = gc.mem_alloc()
for i in range(1, len(recs)):
    g.apply_record(recs[i])
    gc.collect()
    used = gc.mem_alloc() - base
    if used > peak:
        peak = used
print(json.dumps([used, peak, len(recs)]))
"""


def _guest(name):
    return "tests/records/" + name  # the harness copies tests/records


def us_per_record(name):
    """Microseconds per record of a whole game folded by apply_record (fastest of 5)."""
    setup = _LOAD % _guest(name)
    events = len([line for line in (RECORDS / name).read_text().splitlines() if line])
    return int(run_mpy(_FOLD, setup=setup).stdout) / events


def heap_growth(name, log=""):
    setup = _LOAD % _guest(name) + _FLASHLIKE
    end, peak, events = json.loads(run_mpy(_HEAP % log, setup=setup).stdout)
    return {"end": end, "peak": peak, "events": events}


# Host-only parts of the package: the engine_lite files the board bundle leaves
# out (not in host/build/manifest.py, the one list), e.g. table_score, stamp, readout.
_ON_BOARD = set(bundle.shipped("micropython"))
HOST_ONLY = tuple(sorted(p.relative_to(bundle.ROOT).as_posix() for p in (bundle.ROOT / "engine_lite").glob("*.py")
                         if p.relative_to(bundle.ROOT).as_posix() not in _ON_BOARD))


def measure():
    sizes = mpy_sizes()
    engine = {rel: n for rel, n in sizes.items() if rel.startswith("engine_lite/")}
    board = sum(n for rel, n in engine.items() if rel not in HOST_ONLY)
    out = {
        "mpy_bytes_engine_lite": board,
        "mpy_bytes_engine_lite_with_host_only": sum(engine.values()),
        "mpy_bytes_engine_lite_budget": MPY_BUDGET,
    }
    for name in GAMES:
        key = name.split(".")[0]
        out["us_per_record_" + key] = round(us_per_record(name), 2)
        out["heap_growth_ram_log_" + key] = heap_growth(name)
        out["heap_growth_engine_state_" + key] = heap_growth(name, "NoRamLog()")
    out["heap_growth_budget"] = HEAP_BUDGET
    return out


def main():
    m = measure()
    print(
        "engine_lite .mpy (armv6m) on the board: %d bytes (budget %d); with host-only table_score and stamp: %d"
        % (m["mpy_bytes_engine_lite"], MPY_BUDGET, m["mpy_bytes_engine_lite_with_host_only"])
    )
    for name in GAMES:
        key = name.split(".")[0]
        ram, state = m["heap_growth_ram_log_" + key], m["heap_growth_engine_state_" + key]
        print("%s: %d records, %.2f us per record (Unix port)" % (key, ram["events"], m["us_per_record_" + key]))
        print("  live heap growth, engine state only (log on flash): end %d B, peak %d B (budget %d)" % (state["end"], state["peak"], HEAP_BUDGET))
        print("  live heap growth, with the event log in RAM (host replay): end %d B, peak %d B" % (ram["end"], ram["peak"]))
    return m


if __name__ == "__main__":
    main()

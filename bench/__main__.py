"""`make bench`: every benchmark and fault campaign, one table, bench/results.json.

Each bench module exposes `measure() -> dict` of figures from measurement
only (deterministic ones exact, timed ones medians of several runs). This
runner merges them, records the machine, prints one table and writes
bench/results.json; `--readme` also rewrites the table between the
BENCH markers in README.md. Module names as arguments
(`python -m bench --readme bench.bench_board`) rerun only those and keep
the other figures of bench/results.json.
"""

import importlib
import json
import os
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results.json"

# (module, what it measures). Order = order of the table.
MODULES = (
    ("bench.bench_engine", "rules core in the MicroPython Unix port"),
    ("bench.bench_board", "firmware in the MicroPython Unix port, power cuts"),
    ("bench.bench_link", "serial link and sync"),
    ("bench.bench_sim", "full-rules simulator"),
    ("bench.bench_dashboard", "bloomkeeper serve: a press to the page"),
    ("bench.bench_plays", "plays database fault campaign"),
    ("bench.bench_host_faults", "host fault campaign: damaged databases, a hostile board, HTTP on loopback"),
    ("bench.bench_first_sync", "a first sync cut at every step, first syncs started together"),
    ("bench.bench_board_sync", "the board's side of a sync with 1, 10, 50 games kept (Unix port, littlefs): through the archive index, and walking the archive"),
    ("bench.bench_board_machine", "the whole board against its model"),
    ("bench.bench_speed", "board speed: redraw, event, press-to-light (instructions counted in the Unix port, RP2040 estimates)"),
    ("bench.bench_path", "the path the board really runs: its loop, littlefs, flash stalls, polling, on a modeled RP2040"),
    ("bench.bench_table", "the Pico W's table page: heap with six phones, push cost, page latency, bytes per page load"),
    ("bench.bench_fat_cp", "CircuitPython's FAT drive, modeled: sector erases of the nvm journal's drains"),
)

# The headline figures: a row each in the table, with its unit; a run that lacks one exits 1.
HEADLINE = (
    ("mpy_bytes_total", "bytes", "everything that goes on the board (.mpy, armv6m)"),
    ("heap_min_kb_full_game", "KB", "smallest -X heapsize for a full 5-player game of either title (64-bit Unix port)"),
    ("heap_min_kb_full_game_32bit_est", "KB", "the same on a 32-bit core, estimated: x the live-heap ratio measured in the WebAssembly port (budget 64)"),
    ("heap_min_kb_full_game_romfs", "KB", "the same 64-bit figure with the bundle in a mounted ROMFS image (bytecode in flash; the image's own bytes not counted)"),
    ("heap_min_kb_full_game_32bit_est_romfs", "KB", "its 32-bit estimate: x the live-heap ratio with the same image mounted in the WebAssembly port (budget 64)"),
    ("heap_min_kb_full_game_py_sources", "KB", "the 64-bit figure with the bundle's modules as .py source, compiled at import: a proxy for CircuitPython, whose bundle ships source"),
    ("frame_alloc_bytes", "bytes", "allocated by one ring frame render"),
    ("us_per_event", "µs", "one button event + redraw + flash write (in RAM), MicroPython Unix port, not Pico time"),
    ("sync_bytes_per_event", "bytes", "on the wire per event"),
    ("sync_seconds_5p_game_115200", "s", "sync a 5-player game at 115200 baud"),
    ("sim_games_per_second", "games/s", "complete 4-player Stalk Exchange games"),
    ("powercut_points_tried", "cuts", "power cuts injected"),
    ("powercut_events_lost", "events", "acknowledged events lost"),
    ("fuzz_frames", "frames", "random frames into the board's link"),
    ("fuzz_failures", "frames", "that crashed it or changed state"),
    ("plays_fault_syncs_cut", "syncs", "syncs cut (link drop, host killed, board power cut), 3 boards, colliding game numbers"),
    ("plays_lost", "plays", "plays missing from the database after the campaign"),
    ("plays_duplicated", "plays", "plays stored twice"),
    ("plays_overwritten", "plays", "plays stored with other events than the board's"),
    ("host_fault_cases", "cases", "commands and requests tried: damaged databases x plays/export/sync/serve, a hostile board, HTTP"),
    ("host_fault_tracebacks", "cases", "that printed a traceback (budget 0)"),
    ("host_fault_wrong_acceptances", "cases", "that accepted what must be refused: a damaged file, a refused record, a raw escape, a foreign Host (budget 0)"),
    ("host_fault_hangs", "cases", "past their time cap, or a half-sent request never closed (budget 0)"),
    ("host_fault_plays_unreadable", "plays", "intact plays a command did not show (budget 0)"),
    ("first_sync_cuts", "syncs", "first syncs into a new database killed, one at each SQL statement"),
    ("first_sync_lost", "plays", "board games missing after the next sync (budget 0)"),
    ("first_sync_duplicated", "plays", "stored twice (budget 0)"),
    ("first_sync_locked_out", "syncs", "refused after a cut or beside another first sync (budget 0)"),
    ("model_steps", "steps", "board steps checked against the model (gestures, cuts, reboots, host)"),
    ("model_failures", "sequences", "where board and model disagreed"),
    ("redraw_ms_rp2040_est", "ms", "slowest full ring redraw, RP2040 estimate (Unix-port instructions x 27.6 ns, calibrated; budget 2)"),
    ("event_ms_rp2040_est_median", "ms", "button event, median, RP2040 estimate (budget 5)"),
    ("event_ms_rp2040_est_max", "ms", "button event, worst, RP2040 estimate (budget 15)"),
    ("press_to_light_ms_rp2040_est", "ms", "button release to the first LED bit, RP2040 estimate (budget 25)"),
    ("dashboard_latency_ms_median", "ms", "a board event to the dashboard page's event stream"),
    ("press_to_light_ms_p50", "ms", "release edge to the answering frame's first bit, the board's whole loop on a modeled RP2040, typical flash, both titles (budget 10)"),
    ("press_to_light_ms_p90", "ms", "the same, p90 (budget 25)"),
    ("press_to_light_ms_max", "ms", "the same, worst (budget 40)"),
    ("event_durable_ms_p99", "ms", "release edge to the event's last flash program/erase done, p99 (budget 60)"),
    ("loop_idle_ms", "ms", "the loop's period when nothing happens, median (budget 5)"),
    ("frame_ms_max", "ms", "slowest redraw of a written frame inside the games (budget 2.5)"),
    ("press_to_light_ms_p50_flashmax", "ms", "press-to-light p50 with the flash's datasheet-maximum erase/program times"),
    ("press_to_light_ms_p90_flashmax", "ms", "the same, p90"),
    ("press_to_light_ms_max_flashmax", "ms", "the same, worst"),
    ("event_durable_ms_p99_flashmax", "ms", "event-durable p99, datasheet-maximum flash"),
    ("loop_idle_ms_flashmax", "ms", "idle loop period, datasheet-maximum flash"),
    ("frame_ms_max_flashmax", "ms", "slowest frame redraw, datasheet-maximum flash"),
    ("flash_erases_stalk", "erases", "4 KB sector erases in the 5-player Stalk Exchange game"),
    ("flash_progs_stalk", "programs", "flash programs in that game"),
    ("lfs_ms_per_writing_event_median", "ms", "littlefs CPU work (and its reads) per event that writes, median, modeled RP2040"),
)


def machine():
    return {
        "platform": platform.platform(),
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "processor": platform.processor() or platform.machine(),
        "date": time.strftime("%Y-%m-%d"),
    }


def run_all(only=None):
    """Every module's figures; with `only` (module names), just those
    modules', merged over the last run's bench/results.json: a change that
    moves one part's figures reruns that part, not the 20-minute whole."""
    results = json.loads(RESULTS.read_text()) if only else {}
    timings = results.get("bench_seconds", {})
    keys = results.get("bench_keys", {})  # each module's figure names, so a rerun drops the ones it no longer makes
    for name, what in MODULES:
        if only and name not in only:
            continue
        t0 = time.monotonic()
        mod = importlib.import_module(name)
        print("== %s (%s)" % (name, what), flush=True)
        figures = mod.measure()
        for k in keys.get(name, ()):
            results.pop(k, None)
        results.update(figures)
        keys[name] = sorted(figures)
        timings[name] = round(time.monotonic() - t0, 1)
    results["machine"] = machine()
    results["bench_seconds"] = timings
    results["bench_keys"] = keys
    return results


def fmt(v):
    if isinstance(v, float):
        return "%.3g" % v if v < 100 else "%d" % round(v)
    return str(v)


def table(results):
    lines = ["| figure | value | unit | what |", "|---|---:|---|---|"]
    for key, unit, what in HEADLINE:
        lines.append("| `%s` | %s | %s | %s |" % (key, fmt(results.get(key, "missing")), unit, what))
    m = results["machine"]
    lines.append("")
    lines.append("Measured on %s, Python %s, %s CPUs, %s." % (m["platform"], m["python"], m["cpus"], m["date"]))
    return "\n".join(lines)


def update_readme(text):
    readme = ROOT / "README.md"
    s = readme.read_text()
    a, b = "<!-- BENCH:BEGIN -->", "<!-- BENCH:END -->"
    if a in s and b in s:
        s = s[: s.index(a) + len(a)] + "\n" + text + "\n" + s[s.index(b) :]
        readme.write_text(s)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    only = [a for a in argv if not a.startswith("--")]
    unknown = sorted(set(only) - set(name for name, _ in MODULES))
    if unknown:
        print("no such bench module: %s (python -m bench [--readme] [bench.bench_x ...])" % ", ".join(unknown))
        return 2
    results = run_all(only)
    RESULTS.write_text(json.dumps(results, indent=2, sort_keys=True) + "\n")
    text = table(results)
    print()
    print(text)
    print("\nall figures: %s" % RESULTS.relative_to(ROOT))
    if "--readme" in argv:
        update_readme(text)
    missing = [k for k, _, _ in HEADLINE if k not in results]
    if missing:
        print("missing figures: %s" % ", ".join(missing))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

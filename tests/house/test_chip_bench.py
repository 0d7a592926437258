"""The chip bench's host-side helpers, which need no firmware image
(the bench itself, `make chip-bench`, does: docs/chip-bench.md).

* bench/chip_image.py: the littlefs image it writes into the emulated
  flash must be one MicroPython's own littlefs mounts with the rp2 port's
  settings (asked of the real interpreter: the official Unix port), and
  one it reads back.
* bench/chip/ws2812.mjs: the WS2812 decoder, on a waveform made here with
  the datasheet's timings (run by node; skipped, saying so, without it).
* bench/bench_chip.py: the reference ring a chip frame is checked against.
* bench/bench_chip_cp.py: its heap probe (a code.py) hooks what
  firmware/main.py has.
"""

import json
import shutil
import subprocess
import textwrap
from pathlib import Path

import pytest

from bench import chip_image
from tests.kit.mpy_harness import run_program

ROOT = Path(__file__).resolve().parents[2]


def test_geometry_is_the_rp2_ports():
    # RPI_PICO: 1408 KiB of storage at the end of the 2 MiB flash, 4 KiB blocks
    assert chip_image.FS_OFFSET == 0xA0000
    assert chip_image.BLOCKS == 352
    assert len(chip_image.build({})) == 1408 * 1024


def test_image_round_trips():
    files = {"/main.py": b"import firmware.main\n", "/firmware/pinmap.json": b"{}", "/engine_lite/x.mpy": bytes(range(256)) * 40}
    assert chip_image.read(chip_image.build(files)) == files


@pytest.mark.mpy
@pytest.mark.slow
def test_micropython_mounts_the_image_with_the_rp2_settings(tmp_path):
    files = {"/main.py": b"print('hi')\n", "/firmware/hw.mpy": b"M" * 5000}
    (tmp_path / "fs.img").write_bytes(chip_image.build(files))
    # a block device over the image, mounted as ports/rp2/modules/_boot.py mounts the flash
    (tmp_path / "prog.py").write_text(
        textwrap.dedent(
            """
            import vfs, os
            class Dev:
                def __init__(self, b):
                    self.b = b
                def readblocks(self, n, buf, off=0):
                    s = n * 4096 + off
                    buf[:] = self.b[s : s + len(buf)]
                def writeblocks(self, n, buf, off=0):
                    raise OSError(30)
                def ioctl(self, op, arg):
                    return {4: len(self.b) // 4096, 5: 4096}.get(op, 0)
            with open("fs.img", "rb") as f:
                dev = Dev(f.read())
            vfs.mount(vfs.VfsLfs2(dev, progsize=256), "/flash", readonly=True)
            print(sorted(os.listdir("/flash")), sorted(os.listdir("/flash/firmware")))
            print(len(open("/flash/firmware/hw.mpy", "rb").read()), open("/flash/main.py").read().strip())
            """
        )
    )
    out, err, status = run_program(tmp_path / "prog.py", tmp_path, heapsize_kb=4096)
    assert status == 0, out + err
    assert out.split("\n")[:2] == ["['firmware', 'main.py'] ['hw.mpy']", "5000 print('hi')"]


# ------------------------------------------------------------ the WS2812 decoder

T0H, T1H, BIT, LATCH = 400, 800, 1250, 60000  # ns: WS2812 datasheet timings, a latch gap over 50 us


def waveform(frames, start=1000):
    """(level, t_ns) edges of frames of bytes sent MSB first, a latch between frames."""
    edges, t = [], start
    for data in frames:
        for byte in data:
            for k in range(7, -1, -1):
                high = T1H if byte >> k & 1 else T0H
                edges += [(1, t), (0, t + high)]
                t += BIT
        t += LATCH
    return edges


def decode(edges, end_ns):
    if shutil.which("node") is None:
        pytest.skip("node is not installed: the decoder is the chip bench's (bench/chip/ws2812.mjs)")
    script = textwrap.dedent(
        """
        import { WS2812Decoder, pixels } from './ws2812.mjs';
        const edges = JSON.parse(process.argv[1]);
        const out = [];
        const d = new WS2812Decoder((f) => out.push({ start: f.start_ns, bits: f.bits, bad: f.bad, px: pixels(f.bytes, 'GRB') }));
        for (const [level, t] of edges) d.edge(level, t);
        d.idle(Number(process.argv[2]));
        console.log(JSON.stringify(out));
        """
    )
    p = subprocess.run(
        ["node", "--input-type=module", "-e", script, json.dumps(edges), str(end_ns)],
        cwd=ROOT / "bench" / "chip",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def test_decoder_reads_two_frames_in_grb_order():
    a = bytes([0x10, 0xFF, 0x00] + [0, 0, 0] * 22 + [0x80, 0x01, 0x7E])  # pixel 0: G=0x10 R=0xFF B=0
    b = bytes([0xAA] * 72)
    edges = waveform([a, b])
    frames = decode(edges, edges[-1][1] + LATCH)
    assert [f["bits"] for f in frames] == [576, 576]
    assert not any(f["bad"] for f in frames)
    assert frames[0]["px"][0] == [0xFF, 0x10, 0x00]
    assert frames[0]["px"][23] == [0x01, 0x80, 0x7E]
    assert frames[1]["px"] == [[0xAA, 0xAA, 0xAA]] * 24
    assert frames[0]["start"] == 1000 and frames[1]["start"] == 1000 + 576 * BIT + LATCH


def test_decoder_marks_a_frame_cut_short():
    edges = waveform([bytes(72)])[:-6]  # the last 3 bits never sent
    frames = decode(edges, edges[-1][1] + LATCH)
    assert frames[0]["bits"] == 573 and frames[0]["bad"]


def test_a_frame_is_not_ended_before_its_latch_gap():
    edges = waveform([bytes(72)])
    assert decode(edges, edges[-1][1] + 40000) == []  # 40 us of low: still inside the frame's reset time


# ------------------------------------------------------------ the ring check


def test_the_reference_knows_the_ring_a_frame_should_show():
    from bench.bench_chip import reference_rings, rgb_hex

    (ring,) = reference_rings([], [300])  # no press: setup's first screen, drawn 275-305 ms
    assert ring and all(len(h) == 24 * 6 for h in ring)
    rgb = bytes.fromhex(sorted(ring)[0])
    grb = bytes(x for i in range(0, 72, 3) for x in (rgb[i + 1], rgb[i], rgb[i + 2]))
    assert rgb_hex({"hex": grb.hex()}, "GRB") in ring  # the chip's frame, decoded in the strip's order
    assert rgb_hex({"hex": bytes(72).hex()}, "GRB") not in ring  # a dark ring is not what setup shows


def _played(tap=80, gap=220):
    """A whole Stalk Exchange game of the bench's script played through the
    firmware on the simulated board at a player's pace, as the reference
    plays it: (the board's MemFS, its App)."""
    from bench.bench_chip import gestures
    from boardkit.hw_sim import SimHW
    from boardkit.memfs import MemFS
    from firmware.app import App
    from firmware.hw import make_hw
    from firmware.storage import Store

    hw = make_hw("pico", backend=SimHW)
    fs = MemFS()
    app = App(hw, Store(fs=fs))
    t = 0

    def run(ms):
        nonlocal t
        for _ in range(ms):
            t += 1
            hw.now = t
            app.step()

    run(500)
    for b, _kind, hold in gestures("stalk", tap):
        if b < 0:
            run(hold)
            continue
        hw.press(b)
        run(hold)
        hw.release(b)
        run(gap)
    run(3000)
    return fs, app


@pytest.mark.slow
def test_a_drive_reads_back_as_the_game_the_board_recorded():
    """bench_chip.drive_games reads the Store a board left in a drive's
    files (what chip_fat.read gives) as game_records reads the board's own
    Store: the chip bench's "record as CPython's" compares those two. A
    record lost from the drive makes them differ."""
    from bench.bench_chip import drive_games, game_records

    fs, app = _played()
    mine = game_records(app.store)
    assert len(mine) == 1 and len(mine[0]) > 50  # one finished game, its start and its events
    files = {path: bytes(data) for path, data in fs.files.items()}
    assert drive_games(files) == mine
    fin = [p for p in files if p.endswith(".fin")][0]
    cut = dict(files)
    cut[fin] = files[fin][: len(files[fin]) - 40]  # its last records gone
    assert drive_games(cut) != mine


# ------------------------------------------------------- the CircuitPython heap probe


def test_the_circuitpython_heap_probe_hooks_what_firmware_main_has():
    # bench_chip_cp.PROBE (the heap runs' code.py) replaces firmware.main's
    # run and tidy and reads the quiet spell as tidy does: if main.py renames
    # or reshapes them, the probe would stop the board at boot, not measure it
    import inspect

    import firmware.main as m
    from bench import bench_chip_cp

    code = compile(bench_chip_cp.PROBE, "code.py", "exec")
    used = set(code.co_names) | {n for c in code.co_consts if inspect.iscode(c) for n in c.co_names}
    for name in ("tidy", "run", "loop_step", "QUIET_MS", "ticks_diff", "main"):
        assert name in used and hasattr(m, name), name
    assert list(inspect.signature(m.run).parameters)[:2] == ["app", "sleep_ms"]
    assert "step" in inspect.signature(m.run).parameters  # the probe passes main()'s turn on
    assert bench_chip_cp.MARKER.encode() not in code.co_consts  # written byte by byte: no literal copy in RAM
    assert str(tuple(bench_chip_cp.MARKER.encode())) in bench_chip_cp.PROBE  # the bytes it writes are the marker the runner looks for


def test_a_tap_lit_only_after_the_next_press_counts_in_the_press_to_light_of_every_tap():
    """bench_chip.figures on a timeline whose frames are the reference's own
    rings, drawn 8 ms after each tap, but one tap's light held back until
    50 ms after the next press (as FAT work inside an event did): the
    press-to-light over taps lit before the next press leaves that tap out
    (`unlit`), the one over every tap that changes the ring counts it,
    with its true wait."""
    from bench.bench_chip import figures, gestures, reference_rings

    plan = gestures("stalk")[:8]
    presses, t = [], 1000
    for b, _kind, hold in plan:
        presses.append({"button": b, "down_ns": t * 10**6, "up_ns": (t + hold) * 10**6, "hold_ms": hold})
        t += hold + 220
    end = t
    nexts = [p["down_ns"] for p in presses[1:]] + [end * 10**6]
    rings = reference_rings(presses, [n // 10**6 - 6 for n in nexts])
    first = sorted(reference_rings([], [900])[0])[0]
    late = next(i for i in range(3, 7) if rings[i] != rings[i - 1])  # a tap that changes the ring
    frames = [{"start_ns": 900 * 10**6, "hex": first, "bad": False}]
    for i, p in enumerate(presses):
        at = nexts[i] + 50 * 10**6 if i == late else p["up_ns"] + 8 * 10**6
        frames.append({"start_ns": at, "hex": sorted(rings[i])[0], "bad": False})
    frames.sort(key=lambda f: f["start_ns"])
    out = {"frames": frames, "presses": presses, "flash": [], "end_ns": end * 10**6, "first_light_ns": 900 * 10**6, "cycles_busy": 0}
    fig = figures(out, plan, order="RGB")
    wait = (nexts[late] + 50 * 10**6 - presses[late]["up_ns"]) / 1e6
    assert fig["changing_taps_over_25ms"] == 1 and fig["changing_taps_ms_max"] == round(wait, 2)
    assert fig["press_to_light_ms_max"] == 8 and fig["unlit"] >= 1

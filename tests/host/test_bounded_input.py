"""Bounded input: every file a command reads has a size cap and stops at
it with one line (host/io_util.MAX_INPUT); a duration of NaN, infinity or
below 0 is refused when the command line is parsed (a NaN cap is never
reached); nesting deeper than the data needs is one line; `flash --out`
on a file is one line. Each command runs in its own process."""

import json
import subprocess
import sys

import pytest

from tests.kit.mpy_harness import REPO

pytestmark = pytest.mark.slow  # endless and oversized inputs through bloomkeeper processes


def bk(*args, timeout=60):
    return subprocess.run([sys.executable, "-m", "host.cli", *args], cwd=REPO, capture_output=True, text=True, timeout=timeout)


def one_line(r):
    return r.returncode == 2 and r.stderr.count("\n") == 1 and "Traceback" not in r.stderr


@pytest.mark.parametrize("argv", [
    ["replay", "/dev/zero"],
    ["sim", "--headless", "--buttons", "/dev/zero"],
    ["sim", "--headless", "--record", "/dev/zero"],
    ["simulate", "--game", "stalk-exchange", "--players", "2", "--layout", "/dev/zero"],
])
def test_an_endless_input_device_is_refused_at_open_with_one_line(argv):
    r = bk(*argv, timeout=120)
    assert one_line(r) and "/dev/zero is a device, not a regular file" in r.stderr, r.stderr


def test_an_endless_input_file_stops_at_the_cap_with_one_line(tmp_path):
    big = tmp_path / "big.jsonl"
    with open(big, "wb") as f:
        f.truncate((1 << 20) + 10)  # sparse: a file past the cap
    r = bk("replay", str(big))
    assert one_line(r) and "larger than" in r.stderr, r.stderr


@pytest.mark.parametrize("argv", [
    ["replay", "{}"],
    ["sim", "--headless", "--buttons", "{}"],
    ["sim", "--headless", "--record", "{}"],
    ["simulate", "--game", "stalk-exchange", "--players", "2", "--layout", "{}"],
])
def test_a_fifo_given_as_an_input_file_is_refused_at_open_with_one_line(argv, tmp_path):
    import os

    fifo = str(tmp_path / "fifo")
    os.mkfifo(fifo)
    r = bk(*[a.replace("{}", fifo) for a in argv], timeout=60)  # before: the open waited for a writer forever
    assert one_line(r) and "is a FIFO, not a regular file" in r.stderr, r.stderr


@pytest.mark.parametrize("argv", [
    ["sync", "--timeout", "nan"], ["sync", "--timeout", "inf"], ["sync", "--timeout", "-1"], ["sync", "--timeout", "0"],
    ["follow", "--seconds", "nan"], ["follow", "--seconds", "-inf"], ["follow", "--seconds", "-3"],
    ["doctor", "--timeout", "NaN"], ["flash", "--wait", "nan", "--dry-run"],
])
def test_nan_infinite_and_negative_durations_are_refused_when_parsed(argv):
    r = bk(*argv, "--port", "/nonexistent-port")
    assert one_line(r) and "seconds" in r.stderr and "no such port" not in r.stderr, r.stderr


def test_a_deeply_nested_layout_is_one_line(tmp_path):
    path = tmp_path / "deep.json"
    path.write_text("[" * 100000 + "]" * 100000)
    r = bk("simulate", "--game", "stalk-exchange", "--players", "2", "--layout", str(path))
    assert one_line(r) and "nested" in r.stderr, r.stderr


def test_flash_out_on_a_file_is_one_line(tmp_path):
    f = tmp_path / "afile"
    f.write_text("x")
    r = bk("flash", "--dry-run", "--out", str(f))
    assert one_line(r) and "is a file" in r.stderr, r.stderr


def test_a_button_script_whose_waits_add_up_past_the_cap_is_one_line(tmp_path):
    """12 KB of `wait 600000` lines, within the size cap, would have run for
    33 minutes: refused at parse, naming the line."""
    f = tmp_path / "waits.txt"
    f.write_text("wait 600000\n" * 1000)
    r = bk("sim", "--headless", "--buttons", str(f))
    assert one_line(r) and "line 7:" in r.stderr and "board time" in r.stderr, r.stderr


def test_repeats_count_toward_the_cap_too():
    from boardkit import script

    with pytest.raises(script.ScriptError) as err:
        script.parse("tulip x999\n" * 100)
    assert "board time" in str(err.value)
    assert len(script.parse("tulip x3\nwait 500\nok\n")) == 3

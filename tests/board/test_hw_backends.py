"""firmware/hw.py: one interface, the board's two backends, and the simulator's.

* MicroPython: runs inside a REAL MicroPython (the official Unix port). It
  has no GPIO and no neopixel, so stand-in `machine` and `neopixel` modules
  (host/board_sim/mpy_guest/) are put on the guest's sys.path; everything above them
  (firmware.hw, hw_mp, pinmap.json, buttons) is the real board code.
* CircuitPython/Blinka: runs under the REAL Adafruit Blinka with
  BLINKA_OS_AGNOSTIC=1 (its generic OS-agnostic board) and the real
  adafruit-circuitpython-neopixel, in a subprocess (the variable must be set
  before `board` is imported). The `digitalio.DigitalInOut` pins are real
  Blinka objects; only the lowest layers are steered: each generic pin's
  read behaviour (Blinka's `pin_behavior` table) is replaced by a level the
  test sets, and NeoPixel output is captured at `neopixel.neopixel_write`
  (the real one, called through, is a no-op on the agnostic board).
* Simulated: in-memory pins, pixels and clock (boardkit/hw_sim.py), a
  backend class the simulator passes to make_hw (firmware/ has none).
"""

import json
import os
import subprocess
import sys

import pytest

from firmware.buttons import LONG, SHORT, ButtonEvent, Buttons
from boardkit.hw_sim import SimHW
from firmware.hw import make_hw, pick_backend
from tests.kit.mpy_harness import REPO, run_mpy


def test_backend_modules_import_no_hardware_module():
    code = (
        "import sys\n"
        "import firmware.hw, firmware.hw_mp, firmware.hw_cp, boardkit.hw_sim\n"
        "print(sorted(m for m in ('machine', 'board', 'digitalio', 'neopixel', 'time') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True)
    # `time` may be imported by CPython itself; the hardware modules must not be.
    assert "machine" not in out.stdout and "board" not in out.stdout and "neopixel" not in out.stdout


def test_auto_backend_choice():
    assert pick_backend("rpi_blinka") == "circuitpython"  # a Pi runs Blinka
    # CPython has no Pico: the simulator passes its own backend (below)
    for board in (None, "pico"):
        with pytest.raises(ValueError, match="no backend for cpython"):
            pick_backend(board)
    with pytest.raises(ValueError):
        pick_backend(backend="arduino")
    with pytest.raises(ValueError):
        pick_backend(backend="sim")  # the board's hw.py knows no simulator


def test_sim_backend_pins_pixels_clock():
    hw = make_hw(backend=SimHW)  # default board: the pico's pin map
    assert isinstance(hw, SimHW) and hw.spec["runtime"] == "micropython"
    assert len(hw.pins) == 8 and hw.count == 24 and len(hw.pixels) == 24
    assert [p.value() for p in hw.pins] == [1] * 8
    hw.press(3)
    assert hw.pins[3].value() == 0
    hw.release(3)
    assert hw.pins[3].value() == 1
    hw.strip[0] = (1, 2, 3)
    assert hw.pixels[0] == (0, 0, 0)  # nothing shows before write()
    hw.strip.write()
    assert hw.pixels[0] == (1, 2, 3)
    hw.now = 1000
    hw.advance(5)
    assert hw.ticks_ms() == 1005


def test_sim_backend_drives_buttons():
    hw = make_hw("pico", backend=SimHW)
    b = Buttons(hw.pins, hw.ticks_ms)
    ev = ButtonEvent()
    hw.press(6)
    for _ in range(100):
        hw.advance(1)
        b.poll()
    hw.release(6)
    for _ in range(100):
        hw.advance(1)
        b.poll()
    assert b.get_into(ev) and (ev.button, ev.kind) == (6, SHORT)


MPY_SETUP = "import sys\nsys.path.insert(0, '_stubs')\n"

MPY_CODE = """
import machine, neopixel
from firmware.hw import make_hw
from firmware.buttons import Buttons, ButtonEvent
hw = make_hw()
print(type(hw).__name__, hw.count)
print([(p.id, p.mode, p.pull) for p in hw.pins])
print(hw.strip.pin.id, hw.strip.pin.mode, hw.strip.n)
hw.strip[0] = (10, 20, 30)
hw.strip[23] = (1, 2, 3)
hw.strip.write()
s = hw.strip.buf
print(hw.strip.writes, list(s[:3]), list(s[69:]))
T = [0]
b = Buttons(hw.pins, lambda: T[0])
ev = ButtonEvent()
hw.pins[5].level = 0  # undo held
for i in range(700):
    T[0] += 1
    b.poll()
print(b.get_into(ev), ev.button, ev.kind)
t0 = hw.ticks_ms()
print(type(t0).__name__)
print(hw.uid, hw.utc())
hw.set_utc(1796068200)  # 2026-11-30T19:50:00Z, as the host's `time` request sets it
print(machine.RTC.set_to[:7], abs(hw.utc() - 1796068200) <= 1, hw.uptime() >= 0)
"""


@pytest.mark.mpy
def test_micropython_backend_in_real_micropython():
    r = run_mpy(MPY_CODE, setup=MPY_SETUP)
    lines = r.stdout.splitlines()
    assert lines[0] == "MicroPythonHW 24"
    # machine.Pin(n, Pin.IN, Pin.PULL_UP) for GP2..GP9, in BUTTONS order
    assert lines[1] == str([(n, 0, 1) for n in range(2, 10)])
    assert lines[2] == "16 1 24"  # ring on GP16, output, 24 pixels
    assert lines[3] == "1 [20, 10, 30] [2, 1, 3]"  # one write; GRB order on the wire
    assert lines[4] == "True 5 %d" % LONG
    assert lines[5] == "int"  # time.ticks_ms of the real interpreter
    # the id is machine.unique_id() in hex; the clock is unknown until the
    # host sets it, then machine.RTC gets (year, month, day, weekday, h, m, s, subseconds)
    assert lines[6] == "e6613852832a4f21 None"
    assert lines[7] == "(2026, 11, 30, 0, 19, 50, 0) True True"


BLINKA_SCRIPT = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
import board, digitalio, neopixel
from firmware.hw import make_hw
from firmware.buttons import Buttons, ButtonEvent, BUTTONS

sent = []
real_write = neopixel.neopixel_write
def spy(gpio, buf):
    sent.append((type(gpio).__module__ + "." + type(gpio).__name__, bytes(buf)))
    return real_write(gpio, buf)
neopixel.neopixel_write = spy

# Eight distinct digital pins of Blinka's generic OS-agnostic board.
names = ["Dx_INPUT_TRUE", "Dx_INPUT_FALSE", "Dx_INPUT_TRUE_PULL_UP", "Dx_INPUT_TRUE_PULL_DOWN",
         "Dx_OUTPUT", "Dx_INPUT_TOGGLE", "DOTSTAR_DATA", "DOTSTAR_CLK"]
spec = {"runtime": "blinka", "pixel_pin": "NEOPIXEL", "pixel_count": 24, "pixel_order": "GRB",
        "buttons": dict(zip(BUTTONS, names))}
hw = make_hw(backend="circuitpython", spec=spec)
out = {"hw": type(hw).__name__, "count": hw.count}
out["pin_types"] = sorted({type(p.dio).__module__ + "." + type(p.dio).__name__ for p in hw.pins})
out["pull_up"] = [p.dio.pull == digitalio.Pull.UP for p in hw.pins]
out["input"] = [p.dio.direction == digitalio.Direction.INPUT for p in hw.pins]
# Steer the generic pins' lowest layer: one level per button, set by the test.
level = [True] * 8
for i, p in enumerate(hw.pins):
    gp = p.dio._pin
    gp.pin_behavior[gp.id] = (lambda i=i: level[i])
out["idle"] = [p.value() for p in hw.pins]
T = [0]
b = Buttons(hw.pins, lambda: T[0])
ev = ButtonEvent()
got = []
def run(ms):
    for _ in range(ms):
        T[0] += 1
        b.poll()
        while b.get_into(ev):
            got.append([ev.button, ev.kind])
level[0] = False; run(50); level[0] = True; run(50)   # short dahlia
level[7] = False; run(700); level[7] = True; run(50)  # long menu
out["events"] = got
hw.strip[0] = (10, 20, 30)
hw.strip[23] = (1, 2, 3)
out["sent_before_write"] = len(sent)  # auto_write=False: nothing yet
hw.strip.write()
out["sent"] = [[g, list(buf[:3]), list(buf[-3:]), len(buf)] for g, buf in sent]
t1 = hw.ticks_ms(); t2 = hw.ticks_ms()
out["ticks_ok"] = isinstance(t1, int) and 0 <= t2 - t1 < 1000 and t2 < 2**30
print(json.dumps(out))
"""


@pytest.mark.slow
def test_circuitpython_backend_under_real_blinka():
    env = dict(os.environ, BLINKA_OS_AGNOSTIC="1")
    p = subprocess.run(
        [sys.executable, "-c", BLINKA_SCRIPT, str(REPO)], capture_output=True, text=True, env=env, cwd="/", timeout=120
    )
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout.strip().splitlines()[-1])
    assert out["hw"] == "CircuitPythonHW" and out["count"] == 24
    assert out["pin_types"] == ["digitalio.DigitalInOut"]  # real Blinka objects
    assert out["pull_up"] == [True] * 8
    assert out["input"] == [True] * 8
    assert out["idle"] == [1] * 8
    assert out["events"] == [[0, SHORT], [7, LONG]]
    assert out["sent_before_write"] == 0
    # one frame through neopixel_write on the ring's DigitalInOut, GRB, 24 x 3 bytes
    assert out["sent"] == [["digitalio.DigitalInOut", [20, 10, 30], [2, 1, 3], 72]]
    assert out["ticks_ok"]


# ------------------------------------------------- which board CircuitPython is

def test_circuitpython_picks_its_pin_map_by_its_own_board_id():
    """CircuitPython names its board (board.board_id, the name of the board's
    directory in CircuitPython's source): the Pico and the Feather RP2040
    get their own entries, never a fixed one; Blinka gets the Pi's."""
    from firmware import hw_cp
    from firmware.hw import board_spec

    assert hw_cp.board_name("raspberry_pi_pico") == "pico"
    assert hw_cp.board_name("adafruit_feather_rp2040") == "feather_rp2040"
    assert hw_cp.board_name() == "rpi_blinka"  # CPython: a Raspberry Pi under Blinka
    name, spec = hw_cp.board_entry("raspberry_pi_pico", {"pico": board_spec("pico"), "rpi_blinka": board_spec("rpi_blinka")})
    assert name == "pico" and spec["buttons"]["menu"] == "GP9" and spec["pixel_pin"] == "GP16"
    assert hw_cp.board_entry("adafruit_qtpy_rp2040", {"pico": board_spec("pico")}) is None


UNKNOWN_BOARD_SCRIPT = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
import board
from adafruit_blinka.microcontroller.generic_agnostic_board import pin as generic
from firmware import hw_cp

led = []  # what the LED pin is set to, at the generic pin's lowest layer (its `write`)
P = generic.Pin
real_write = getattr(P, "write")
def spy(self, v):
    led.append(v)
    return real_write(self, v)
setattr(P, "write", spy)
got = hw_cp.board_name(board.board_id, led="Dx_OUTPUT", cycles=1)
print(json.dumps({"board_id": board.board_id, "got": got, "led": led}))
"""


@pytest.mark.slow
def test_an_unknown_board_says_one_line_and_blinks_under_real_blinka():
    """Blinka's own OS-agnostic board (a real board.board_id no pinmap.json
    entry names) stands for a CircuitPython board without a pin map: one
    line on the console, then the blink code on its LED pin (one cycle
    here; on a board, until reset), and no traceback."""
    env = dict(os.environ, BLINKA_OS_AGNOSTIC="1")
    p = subprocess.run([sys.executable, "-c", UNKNOWN_BOARD_SCRIPT, str(REPO)], capture_output=True, text=True, env=env, cwd="/", timeout=120)
    assert p.returncode == 0 and p.stderr == "", p.stderr
    lines = p.stdout.splitlines()
    assert len(lines) == 2, lines
    assert lines[0].startswith("bloomkeeper: no pin map for CircuitPython board 'OS_AGNOSTIC_BOARD' in firmware/pinmap.json")
    assert "adafruit_feather_rp2040, raspberry_pi_pico" in lines[0]
    out = json.loads(lines[1])
    assert out["got"] is None
    from firmware.hw_cp import BLINK_UNKNOWN

    n = 2 * BLINK_UNKNOWN
    assert out["led"][-n:] == [1, 0] * BLINK_UNKNOWN and not any(out["led"][:-n])  # off, then the flashes

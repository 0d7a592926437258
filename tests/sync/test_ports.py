"""`--port auto`: which USB serial ports may carry a board's link (pyserial's
own port records, as the system lists them)."""

import pytest
from serial.tools.list_ports_common import ListPortInfo

from host.sync import link


def _port(device, vid, pid, interface=None, location=None):
    p = ListPortInfo(device, skip_link_detection=True)
    p.vid, p.pid, p.interface, p.location = vid, pid, interface, location
    return p


PORTS = [
    _port("/dev/ttyACM0", 0x2E8A, 0x0005, "Board CDC", "1-1:1.0"),  # MicroPython on a Pico
    _port("/dev/ttyACM1", 0x239A, 0x80F2, "CircuitPython CDC control", "1-2:1.0"),  # a Feather's REPL console
    _port("/dev/ttyACM2", 0x239A, 0x80F2, "CircuitPython CDC2 control", "1-2:1.2"),  # its data channel: the link
    _port("COM7", 0x239A, 0x80F2, None, "1-3:x.2"),  # the same on Windows: no interface names
    _port("COM6", 0x239A, 0x80F2, None, "1-3:x.0"),
    _port("/dev/ttyUSB0", 0x10C4, 0xEA60, "CP2102", "1-4:1.0"),  # some other serial adapter
    _port("/dev/ttyACM3", 0x2E8A, 0x000A, "Pico SDK", "1-5:1.0"),  # a Pico running something else
]


@pytest.fixture
def listed(monkeypatch):
    monkeypatch.setattr(link.list_ports, "comports", lambda *a, **k: list(PORTS))


def test_auto_finds_picos_and_circuitpython_data_channels_but_not_their_consoles(listed):
    assert link.candidate_ports() == ["/dev/ttyACM0", "/dev/ttyACM2", "COM7"]


def test_flash_looks_for_micropython_picos_only(listed):
    assert link.micropython_ports() == ["/dev/ttyACM0"]


def test_no_board_names_both_kinds_in_one_line(monkeypatch, tmp_path):
    monkeypatch.setattr(link.list_ports, "comports", lambda *a, **k: [])
    # no simulator either: one the user has open (make run) publishes its
    # port in the runtime directory, where --port auto would find it
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    with pytest.raises(link.UserError) as e:
        link.discover()
    msg = str(e.value)
    assert "2E8A:0005" in msg and "239A" in msg and "\n" not in msg

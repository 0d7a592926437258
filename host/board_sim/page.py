"""The table page beside a simulated Pico W (`bloomkeeper sim --board pico_w`).

The server is the board's own, firmware/table_server.py, polled once per
simulator tick right after the App's step, as the Pico W's loop polls it:
in CPython for the CPython runtime, inside the MicroPython guest for
`--runtime micropython` (host/board_sim/mpy_guest/simboard.py). It listens
on loopback only (a simulator is not a table's access point) on a port this
module picks, since MicroPython's sockets cannot say which port a bind to 0
took.
"""

import json
import socket
import sys

from host.board_sim.board import PINMAP


def has_wifi(board):
    """Does this pin map board carry WiFi (pinmap.json "wifi")?"""
    try:
        with open(PINMAP) as f:
            return bool(json.load(f)["boards"][board].get("wifi"))
    except (OSError, ValueError, KeyError, AttributeError):
        return False


def free_port():
    """A loopback port nobody holds now."""
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
    finally:
        s.close()


def url(port):
    return "http://127.0.0.1:%d/" % port


def echo(line):
    """A refused request: one line on stderr."""
    sys.stderr.write("bloomkeeper: sim: %s\n" % line)
    sys.stderr.flush()

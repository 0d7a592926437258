"""A simulated board for the dashboard tests, in its own process.

The real firmware (host/board_sim/board.SimBoard: App + Store + SimHW + the
device side of the link on a pty), with its flash in a directory, so that
killing this process is a power cut / an unplugged USB cable and starting
it again on the same directory is plugging the board back in: it boots
from flash with the game in progress, as a Pico does.

    python -m tests.kit.dashboard_board --state-dir DIR --link PATH [--record FILE]

PATH is a symlink pointed at the pty (a stable port name, as /dev/ttyACM0
is for a real board). Stdin takes button presses, one per line:
`press B short|long` (B = 0..7, docs/controls.md), through the simulated
pins (debounce and long-press timing are the firmware's); `sync` answers
`idle` once every queued press has been made.
"""

import argparse
import os
import select
import sys

from firmware.buttons import LONG, SHORT
from host.board_sim.serve_record import load_into, record_events
from host.board_sim.board import SimBoard


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--state-dir", required=True)
    ap.add_argument("--link", required=True)
    ap.add_argument("--record")
    a = ap.parse_args()
    sb = SimBoard(state_dir=a.state_dir).start()
    if sb.link_path is None:
        sys.exit("no link: %s" % sb.link_note)
    if a.record:
        load_into(sb.app, record_events(a.record))
    tmp = a.link + ".new"
    if os.path.lexists(tmp):
        os.unlink(tmp)
    os.symlink(sb.link_path, tmp)
    os.replace(tmp, a.link)
    print("link: %s" % a.link, flush=True)
    waiting = False
    buf = b""
    todo = []  # presses not yet handed to the board (its own queue is short, like a keyboard's)
    while True:
        ready, _, _ = select.select([sb._pty.master, sys.stdin], [], [], 0.005)
        if sys.stdin in ready:
            chunk = os.read(sys.stdin.fileno(), 4096)
            if not chunk:
                return
            buf += chunk
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                words = line.decode().split()
                if words[:1] == ["press"]:
                    todo.append((int(words[1]), LONG if words[2] == "long" else SHORT))
                elif words[:1] == ["sync"]:
                    waiting = True
        if todo and not sb.busy():
            sb.press(*todo.pop(0))
        sb.tick()
        if waiting and not todo and not sb.busy():
            waiting = False
            print("idle", flush=True)


if __name__ == "__main__":
    main()

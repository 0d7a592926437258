"""The Pico W's entry: the board's loop (firmware/main.py) with WiFi and
the table page polled in it (firmware/wifi.py, firmware/table_server.py).

Only the Pico W's image has this module (host/build/manifest.py, option
`wifi`); the Pico's bundle and budget are untouched. The turn is main's
loop_step, then the server's poll, then (every half second) the radio's
state: the ring and the flash come first in every turn, the phones after.
A change of the WiFi shows once on the ring (firmware/ring.py NET_MS).
"""

from firmware import main as board


def with_table(app):
    """The loop turn of a board with WiFi, for board.main(turn=...)."""
    from firmware.table_server import TableServer
    from firmware.wifi import Wifi

    net = Wifi(app.settings, app.hw.uid)  # the RP2040's flash id, as hex (firmware/hw_mp.py)
    try:
        net.up()
    except Exception as e:  # no radio, bad settings: the board plays on without its page
        app.store.log_fault("wifi off: %s" % e)
        return board.loop_step
    srv = TableServer(app, "0.0.0.0", 80, board="pico_w")

    def turn(app, sleep_ms):
        board.loop_step(app, sleep_ms)
        srv.poll()
        if net.changed(app.clock()):
            show_net(app, net.is_up)

    return turn


def show_net(app, up):
    """The ring's WiFi pattern, once: up (filling) or down (blinking marks)."""
    app.view.net_at = app.clock()
    app.view.net_up = up  # the overlay is drawn on the next frame (every 20 ms)


def main():
    board.main("pico_w", turn=with_table)

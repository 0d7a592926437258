"""Guest code (MicroPython source) that walks the ring through every screen.

The code that includes it defines `view` (app.view) and `screen()`, which is
called once per screen state: the allocation test renders under heap_lock
there, the bench measures bytes per frame. One tour, so the test and the
figure cover the same screens.

current_ma() estimates a frame's LED current on the host, beside the tour,
for the cap's test and the ring's pictures (docs/render_ring.py): the board
itself only sums a frame when it may be over its limit (Ring._output)."""

MA_PER_CHANNEL = 20  # a WS2812 channel at 255 (firmware/ring.py caps frames by the same figure)
IDLE_MA_PER_PIXEL = 1


def current_ma(buf):
    """Estimated LED current of a rendered frame (r, g, b bytes a pixel):
    20 mA per channel at 255, plus every LED's idle current."""
    return sum(buf) * MA_PER_CHANNEL // 255 + IDLE_MA_PER_PIXEL * (len(buf) // 3)

RING_TOUR = """
screen()                       # plain play screen
view.until_crash = 1           # crash warning, a pending harvest, error blink
view.pending = 2
view.pending_count = 4
view.error_at = 100
view.extra_cost = 1
screen()
view.pending = -1
screen()                       # the crash warning itself (the harvest count hid it)
view.until_crash = 99
view.bag = 3
screen()                       # the bag warning (every third unlit pixel)
view.trigger = 1               # last turn
screen()
for mode in (firmware.ring.M_ORCHIDS, firmware.ring.M_PORTFOLIO, firmware.ring.M_STALK_END, firmware.ring.M_ORCHIDS_END, firmware.ring.M_NUMBER):
    view.mode = mode
    view.last_round = 1
    view.number = 37
    view.winner[1] = 1
    view.busted[4] = 1
    view.flowers[0] = 7
    view.ending = 1
    view.counts[0] = 9
    screen()
view.mode = firmware.ring.M_CHOICE
# each choice with the options the app offers on it (firmware/screens.py show_choice)
for ch, options in ((firmware.ring.CH_GAME, 3), (firmware.ring.CH_PLAYERS, 30), (firmware.ring.CH_LENGTH, 3), (firmware.ring.CH_MENU, 31), (firmware.ring.CH_BRIGHT, 31), (firmware.ring.CH_KIND, 3), (firmware.ring.CH_CONFIRM, 31)):
    view.choice = ch
    view.options = options
    screen()
"""

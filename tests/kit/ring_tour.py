"""Guest code (MicroPython source) that walks the ring through every screen.

The code that includes it defines `view` (app.view) and `screen()`, which is
called once per screen state: the allocation test renders under heap_lock
there, the bench measures bytes per frame. One tour, so the test and the
figure cover the same screens."""

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

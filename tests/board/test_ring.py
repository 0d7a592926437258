"""The ring's visual language (docs/ring.md): a pure function View -> pixels.

Each test names what a player must be able to read from across the table."""

import pytest

import firmware.ring
from tests.kit.ring_tour import current_ma


def frame(view, now=0, ring=None):
    ring = ring or firmware.ring.Ring(24)
    buf = ring.render(view, now)
    return [tuple(buf[3 * i : 3 * i + 3]) for i in range(24)]


def lit(p):
    return sum(p) > 0


def stalk_view(**kw):
    v = firmware.ring.View()
    v.mode = firmware.ring.M_STALK
    v.brightness = 255
    v.n = 4
    for s, t in enumerate((3, 3, 3, 4)):
        v.tokens[s] = t
    for k, val in kw.items():
        setattr(v, k, val)
    return v


def test_render_is_a_pure_function_into_one_buffer():
    ring = firmware.ring.Ring(24)
    v = stalk_view(until_crash=2)
    a = bytes(ring.render(v, 1234))
    b = ring.render(v, 1234)
    assert bytes(b) == a
    assert ring.render(v, 99) is b  # preallocated: the same buffer every frame
    assert bytes(firmware.ring.Ring(24).render(v, 1234)) == a  # nothing but (view, time) matters


def test_each_flower_has_its_place_on_the_market_arc():
    """Readable without hue: flower f is always px 3f..3f+2 (button order),
    the bar grows away from its first pixel and brightens along it."""
    for f in range(5):
        v = stalk_view()
        v.values[f] = 6
        fr = frame(v)
        market = [i for i in range(15) if lit(fr[i])]
        others = [3 * g for g in range(5) if g != f]  # empty flowers: one dim pixel each
        assert sorted(market) == sorted(others + [3 * f, 3 * f + 1, 3 * f + 2])
        assert sum(fr[3 * f]) < sum(fr[3 * f + 1]) < sum(fr[3 * f + 2])


def _bars(fr):
    return [sum(1 for i in range(3 * f, 3 * f + 3) if lit(fr[i])) for f in range(5)]


def test_only_the_leaders_that_will_bust_fill_their_segment():
    """"The highest valued flower loses half of its value ... ALL the tied
    Flower Stalks bust": a full 3-px bar means exactly that, the others are
    1-2 px relative to the leader."""
    v = stalk_view()
    v.values[:] = bytes((6, 4, 1, 0, 6))
    fr = frame(v)
    assert _bars(fr) == [3, 2, 1, 1, 3]  # the empty flower keeps its dim place-holder pixel
    assert sum(fr[9]) < sum(fr[6])  # ... dimmer than a real value
    v.values[:] = bytes((6, 5, 1, 0, 2))  # 5 against 6: one pixel short of the leader
    assert _bars(frame(v)) == [3, 2, 1, 1, 1]


def test_holding_a_flower_shows_its_exact_value():
    """Values 2 and 3 look alike as relative bars: a held flower button
    shows its value as a number in its colour for PEEK_MS, then the screen
    is back."""
    v = stalk_view()
    v.values[:] = bytes((2, 3, 9, 0, 1))
    normal = frame(v, 5000)
    v.peek, v.peek_at = 1, 4000
    fr = frame(v, 4100)
    assert [lit(p) for p in fr] == [True] * 3 + [False] * 21
    assert all(abs(fr[0][k] - firmware.ring.FLOWER_RGB[3 + k] * 110 // 255) <= 1 for k in range(3))  # daffodil yellow
    assert frame(v, 4000 + firmware.ring.PEEK_MS) == normal
    v.peek, v.peek_at = 2, 4000
    assert [lit(p) for p in frame(v, 4100)] == [True] * 9 + [False] * 15


def test_turn_seat_tokens_and_flush():
    v = stalk_view(player=1)
    v.flushed[3] = 1
    fr = frame(v, 1000)
    seats = [sum(fr[15 + s]) for s in range(5)]
    assert seats[1] == max(seats) and seats[4] == 0  # active seat brightest, no 5th player
    assert fr[18][2] > fr[18][0]  # a flushed player's seat is blue ...
    assert max(fr[18]) > 3 * max(fr[17])  # ... and brighter than an unflushed one
    assert [lit(fr[i]) for i in range(20, 24)] == [True, True, True, False]  # 3 tokens left


def test_five_tokens_show_a_white_first_pip():
    v = stalk_view(player=4, n=5)
    v.tokens[4] = 5
    fr = frame(v)
    assert all(lit(fr[i]) for i in range(20, 24))
    assert fr[20][0] == fr[20][1] == fr[20][2]


def test_the_token_an_extra_action_costs_blinks():
    v = stalk_view(extra_cost=1)  # the table's cost(plant) after two basic actions
    on = [frame(v, t)[22] for t in range(0, 1600, 100)]
    assert any(lit(p) for p in on) and any(not lit(p) for p in on)
    v.extra_cost = 0
    assert all(lit(frame(v, t)[22]) for t in range(0, 1600, 100))


def _peak_glow(v):
    return max(frame(v, t)[17][0] for t in range(0, 2000, 10))  # px 17: seat 3, empty in a 2p game


@pytest.mark.slow
@pytest.mark.parametrize("field,values", [("until_crash", (7, 6, 4, 2, 1)), ("bag", (25, 20, 14, 8, 4))])
def test_end_warning_grows_stronger_near_the_end(field, values):
    glows = []
    for x in values:
        v = stalk_view(n=2)
        setattr(v, field, x)
        glows.append(_peak_glow(v))
    assert glows[0] == 0
    assert glows[1:] == sorted(glows[1:]) and len(set(glows[1:])) == 4


def test_crash_and_bag_warnings_differ_in_pattern_not_only_hue():
    """Crash: every unlit pixel breathes together (red). Bag: every third
    unlit pixel glows and the dots march round (orange)."""
    empty = range(17, 20)  # seats 3-5 of a 2-player game: unlit
    v = stalk_view(n=2, until_crash=1)
    for t in range(0, 500, 10):
        fr = frame(v, t)
        assert len({fr[i] for i in empty}) == 1  # all alike at any moment
    p = max((frame(v, t)[17] for t in range(0, 500, 10)), key=sum)
    assert p[0] > 0 and p[1] == 0
    v = stalk_view(n=2, bag=3)
    seen = set()
    for t in range(0, 500, 10):
        fr = frame(v, t)
        on = tuple(i for i in empty if lit(fr[i]))
        assert len(on) == 1  # one dot in three
        seen.add(on)
    assert len(seen) == 3  # ... and it moves
    p = frame(v, 0)[next(i for i in empty if lit(frame(v, 0)[i]))]
    assert p[0] > 0 and p[1] > 0


@pytest.mark.parametrize("brightness", [16, 32, 48, 128, 255, 3, 7])
def test_the_crash_warning_lights_exactly_the_unlit_pixels(brightness):
    """Whatever the play screen shows (market bars, seats, tokens, at any
    brightness), the crash warning breathes in every pixel it left dark and
    in no other: the ring finds the dark pixels with bytearray.find, which
    also meets runs of zero bytes that straddle two pixels."""
    import random

    rnd = random.Random(brightness)
    ring = firmware.ring.Ring(24, limit_ma=10**6)  # no current cap: it would dim the lit pixels too
    glowing = 0
    for trial in range(400):
        v = stalk_view(n=rnd.randint(2, 5))
        v.brightness = brightness
        v.player = rnd.randrange(v.n)
        for f in range(5):
            v.values[f] = rnd.choice((0, 0, 1, 2, 3, 5, 8, 13))
            v.tokens[f] = rnd.randint(0, 6)
            v.flushed[f] = rnd.random() < 0.3
        v.extra_cost = rnd.randint(0, 1)
        now = rnd.randrange(100000)
        calm = frame(v, now, ring)
        v.until_crash = rnd.randint(0, 6)
        warned = frame(v, now, ring)
        dark = [i for i in range(24) if not lit(calm[i])]
        assert [warned[i] for i in range(24) if lit(calm[i])] == [calm[i] for i in range(24) if lit(calm[i])]
        assert len({warned[i] for i in dark}) <= 1  # one colour, breathing together: all lit, or all at the trough
        glowing += any(lit(warned[i]) for i in dark)
    assert glowing > 100 or brightness < 16  # at the lowest levels the glow itself rounds to dark


def test_last_turn_is_a_comet_not_a_glow():
    """After an end trigger the warning glow stops and one white head circles."""
    v = stalk_view(n=2, trigger=1, until_crash=0)
    heads = []
    for t in range(0, 1200, 50):
        fr = frame(v, t)
        whites = [i for i in range(24) if fr[i] == (255, 255, 255) and i != 15]  # 15: the active seat
        heads.append(whites)
    assert all(len(w) <= 1 for w in heads)
    assert len({w[0] for w in heads if w}) >= 22  # it goes all the way round
    assert frame(v, 600)[17][1] == frame(v, 600)[17][0]  # no red glow on the empty seats


def _blinks(v, t0):
    """How many separate all-red blinks the ring makes after t0."""
    n = 0
    was = False
    for t in range(t0, t0 + 2000, 10):
        fr = frame(v, t)
        on = all(p[0] > 0 and p[1] == 0 and p[2] == 0 for p in fr)
        assert on or not all(p[0] > 0 for p in fr)
        n += on and not was
        was = on
    return n


@pytest.mark.parametrize("code,blinks", [(firmware.ring.E_NOTHING, 1), (firmware.ring.E_RULE, 2), (firmware.ring.E_SHORT, 3), (firmware.ring.E_ONCE, 4)])
def test_each_refusal_reason_has_its_own_blink_count(code, blinks):
    v = stalk_view(error_at=1000, error_code=code)
    assert _blinks(v, 1000) == blinks
    assert frame(v, 1000 + firmware.ring.error_ms(code)) == frame(stalk_view(), 1000 + firmware.ring.error_ms(code))


def test_a_refusal_that_means_nothing_is_one_long_blink():
    v = stalk_view(error_at=1000, error_code=firmware.ring.E_NOTHING)
    assert all(frame(v, t)[0][0] > 0 for t in range(1000, 1000 + firmware.ring.LONG_BLINK_MS, 20))


def test_engine_refusals_map_to_blink_codes():
    from engine_lite import errors

    short = (errors.NO_TOKENS, errors.HAND_SHORT, errors.EXCHANGE_EMPTY, errors.TOO_MANY)
    once = (errors.FLUSH_USED, errors.TRIGGERED, errors.ORCHID_TAKEN, errors.ALREADY_ENTERED)
    rule = (errors.TURN_INCOMPLETE, errors.UPKEEP, errors.MIXED_TURN, errors.LAST_ROUND, errors.GAME_OVER, errors.NOT_OVER, errors.BAD_EVENT)
    assert [firmware.ring.refusal(c) for c in short] == [firmware.ring.E_SHORT] * 4
    assert [firmware.ring.refusal(c) for c in once] == [firmware.ring.E_ONCE] * 4
    assert [firmware.ring.refusal(c) for c in rule] == [firmware.ring.E_RULE] * 7
    assert firmware.ring.refusal(errors.NOTHING_TO_UNDO) == firmware.ring.E_NOTHING


def test_error_blink_survives_the_ticks_wrap():
    v = stalk_view(error_at=(1 << 30) - 50, error_code=firmware.ring.E_NOTHING)
    assert all(p[0] > 0 for p in frame(v, 10))  # 60 ms later, after ticks_ms wrapped


def test_pending_harvest_shows_its_count():
    v = stalk_view(pending=3, pending_count=4)
    fr = frame(v, 0)
    assert [lit(fr[i]) for i in range(15, 24)] == [True] * 4 + [False] * 5
    assert fr[15] == frame(v, 125)[10]  # the count is drawn in the flower's colour ...
    assert frame(v, 125)[9] != frame(v, 0)[9]  # ... and its segment blinks


def test_orchids_flowers_toward_seven():
    v = firmware.ring.View()
    v.mode = firmware.ring.M_ORCHIDS
    v.brightness = 255
    v.n = 3
    v.player = 1
    v.flowers[:3] = bytes((7, 0, 3))
    v.ending = 1  # seat 0 planted enough to end the game (the engine's ends_game)
    fr = frame(v)
    # seat 0: 7 flowers = 3 bright + 1 dim pixel, gold
    assert [sum(fr[i]) > 400 for i in range(4)] == [True, True, True, False] and lit(fr[3])
    assert fr[0][0] > fr[0][2] and fr[0][1] > fr[0][2]
    # seat 1 (the active player, no flowers): its sector glows white
    assert all(fr[i][0] == fr[i][1] == fr[i][2] > 0 for i in range(5, 9))
    # seat 2: 3 flowers = 1 bright + 1 dim, green
    assert fr[10][1] > fr[10][0] and sum(fr[11]) < sum(fr[10]) and not lit(fr[12])
    assert not any(lit(fr[i]) for i in range(15, 24))  # no 4th/5th player
    v.last_round = 1
    fr = frame(v, 600)
    assert all(fr[g][0] > 0 and fr[g][1] == 0 for g in (4, 9, 14))


def test_active_seat_is_always_bright_even_after_it_flushed():
    """The player whose turn it is: full white at every moment; a flush
    shows as a short blue dip, never as a pale colour all the time."""
    v = stalk_view(player=2)
    v.flushed[2] = 1
    frames = [frame(v, t)[17] for t in range(0, 2000, 50)]
    assert sum(1 for p in frames if p == (255, 255, 255)) >= len(frames) * 3 // 4
    assert any(p[2] > p[0] for p in frames)  # the blue dip


def test_orchids_active_seat_with_a_full_sector_blinks():
    v = firmware.ring.View()
    v.mode = firmware.ring.M_ORCHIDS
    v.brightness = 255
    v.n = 2
    v.player = 0
    v.flowers[:2] = bytes((8, 8))
    v.ending = 3
    assert frame(v, 0)[3] != frame(v, 500)[3]
    assert frame(v, 0)[8] == frame(v, 500)[8]  # not the waiting seat


def test_unconfirmed_start_space_is_a_dashed_blinking_number():
    v = firmware.ring.View()
    v.mode = firmware.ring.M_NUMBER
    v.brightness = 255
    v.number = 20
    v.unconfirmed = 1
    assert [lit(p) for p in frame(v, 0)] == [True] * 20 + [False] * 4
    assert [lit(p) for p in frame(v, 500)] == [i % 2 == 0 for i in range(20)] + [False] * 4
    v.unconfirmed = 0
    assert frame(v, 500) == frame(v, 0)


def test_ring_refuses_a_pixel_count_it_has_no_layout_for():
    with pytest.raises(ValueError, match="pixel_count 16: .*24 pixels"):
        firmware.ring.Ring(16)


def test_number_entry():
    v = firmware.ring.View()
    v.mode = firmware.ring.M_NUMBER
    v.brightness = 255
    v.number = 7
    fr = frame(v)
    assert [lit(p) for p in fr] == [True] * 7 + [False] * 17
    assert sum(fr[4]) > sum(fr[3])  # every fifth pixel is brighter
    v.number = 37  # units on px 0-9, tens (white) on px 12-23
    fr = frame(v)
    assert [lit(fr[i]) for i in range(24)] == [True] * 7 + [False] * 5 + [True] * 3 + [False] * 9


def test_choice_screens_light_the_selected_sector():
    v = firmware.ring.View()
    v.mode = firmware.ring.M_CHOICE
    v.brightness = 255
    v.choice = firmware.ring.CH_MENU
    v.options = 31
    v.sel = 1
    fr = frame(v)
    assert sum(fr[5]) > 2 * sum(fr[0])
    v.choice = firmware.ring.CH_PLAYERS
    v.sel = 3  # 4 players: four sectors lit
    fr = frame(v)
    assert [lit(fr[5 * s]) for s in range(5)] == [True, True, True, True, False]


def _all_views():
    """A view of every screen, in its brightest state."""
    views = []
    v = stalk_view(n=5)
    v.values[:] = bytes((5, 5, 5, 5, 5))
    v.tokens[0] = 5
    views.append(v)
    for mode in (firmware.ring.M_ORCHIDS, firmware.ring.M_PORTFOLIO, firmware.ring.M_STALK_END, firmware.ring.M_ORCHIDS_END, firmware.ring.M_NUMBER):
        v = firmware.ring.View()
        v.mode = mode
        v.brightness = 255
        v.n = 5
        v.flowers[:] = bytes((8, 8, 8, 8, 8))
        v.ending = 31
        v.counts[:] = bytes((4, 4, 4, 4, 4))
        v.winner[:] = bytes((1, 1, 1, 1, 1))
        v.scores = [9, 9, 9, 9, 9]
        v.values[:] = bytes((5, 5, 5, 5, 5))
        v.number = 24
        views.append(v)
    for ch in range(7):
        v = firmware.ring.View()
        v.mode = firmware.ring.M_CHOICE
        v.brightness = 255
        v.choice = ch
        v.options = 31
        v.sel = 4
        views.append(v)
    v = stalk_view(error_at=0)  # the error blink lights all 24 in full red
    views.append(v)
    return views


def test_power_budget_worst_frame_under_usb_limit():
    """docs/ring.md: 24 px x 60 mA = 1.44 A at full white; frames are capped
    so the LEDs stay under 400 mA (+ ~50 mA for the Pico < 500 mA)."""
    ring = firmware.ring.Ring(24)
    worst = 0
    for v in _all_views():
        for t in range(0, 1200, 40):
            ring.render(v, t)
            worst = max(worst, current_ma(ring.buf))
    assert worst <= firmware.ring.DEFAULT_LIMIT_MA + 24
    # full white everywhere would be ~1.44 A before the cap
    v = firmware.ring.View()
    v.mode = firmware.ring.M_CHOICE
    v.choice = firmware.ring.CH_PLAYERS
    v.sel = 4
    v.brightness = 255
    ring.render(v, 0)
    assert current_ma(ring.buf) <= firmware.ring.DEFAULT_LIMIT_MA + 24


def test_brightness_scales_every_pixel():
    v = stalk_view()
    v.values[0] = 3
    full = frame(v)
    v.brightness = 64
    dim = frame(v)
    for a, b in zip(full, dim):
        for x, y in zip(a, b):
            assert y <= x and y == x * 64 // 255 or abs(y - x * 64 // 255) <= 1


def test_no_warning_distances_are_the_warning_tables_lengths():
    """render skips the warning without a call from _CRASH_FAR / _BAG_FAR
    on: they must be where the level tables end (docs/ring.md)."""
    assert firmware.ring._CRASH_FAR == len(firmware.ring.CRASH_LEVEL) and firmware.ring._BAG_FAR == len(firmware.ring.BAG_LEVEL)


@pytest.mark.parametrize("count", [12, 16, 23, 25, 60])
def test_a_ring_of_another_pixel_count_is_refused_in_one_line(count):
    """The layouts are drawn for the 24-pixel ring of the parts list,
    so any other count is refused at start with one line naming it, instead of
    screens drawn on the wrong pixels."""
    with pytest.raises(ValueError) as err:
        firmware.ring.Ring(count)
    assert str(err.value) == "pixel_count %d: the ring's screens need 24 pixels" % count


def test_the_longest_refusal_blink_is_the_one_render_waits_for():
    """render skips the blink test once a refusal is older than
    _ERROR_MAX_MS: it must be the longest error_ms of any code, or a
    blink would be cut short."""
    r = firmware.ring
    longest = max(r.error_ms(c) for c in (r.E_NOTHING, r.E_RULE, r.E_SHORT, r.E_ONCE))
    assert r._ERROR_MAX_MS == longest


def test_a_refusal_code_is_matched_whole_not_as_a_substring():
    r = firmware.ring
    for part in ("used", "tokens", "too", "taken", "_"):
        assert r.refusal(part) == r.E_RULE


def test_every_screen_is_one_layout_class_with_prepare_and_draw():
    """Each View.mode has its own Layout (docs/ring.md "One class per
    screen"): a screen added without one, or two modes sharing a layout,
    would draw another screen's picture."""
    r = firmware.ring
    modes = [r._M_OFF, r.M_STALK, r.M_ORCHIDS, r.M_CHOICE, r.M_NUMBER, r.M_PORTFOLIO, r.M_STALK_END, r.M_ORCHIDS_END]
    assert modes == list(range(len(modes)))
    layouts = r.Ring(24).layouts
    assert len(layouts) == len(modes)
    assert len({type(layout) for layout in layouts}) == len(modes)
    assert all(isinstance(layout, r.Layout) for layout in layouts)

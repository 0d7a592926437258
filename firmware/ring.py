"""The LED ring's visual language: a pure function View -> pixels.

Why a View object and not the engine state: the ring must be drawable from
the simulator, the docs renderer and a test without a game, and rendering
must allocate nothing (it runs every few milliseconds on the board). So the
app copies the few numbers a screen needs into one preallocated View (ints
and bytearrays) and `Ring.render(view, now_ms)` writes one preallocated
bytearray (3 bytes per pixel, pixel 0 at the top, clockwise; R,G,B unless
the Ring was given the strip's byte ORDER, so the app can copy the frame
into a MicroPython NeoPixel buffer in one slice). Same view and same time ->
same pixels, always. Integer arithmetic only: a float would be a heap object
on the Pico.

Speed (bench/bench_speed.py, bench/bench_path.py; interpreted bytecode,
since the tests load the same .mpy files on other machines): each screen
is a Layout (one class per screen, below the Ring), found by the view's
mode. What no clock moves (the market, the waiting seats, the sectors, the
choices, a number, the bars) its `prepare` draws once per change of the
view, into `base`; a frame is a copy of it plus what moves (blinks,
pulses, the comet, the warnings), its `draw`, then the overlays: `App.show`
says whether the view changed. A frame is drawn straight into the output
buffer with the brightness folded into the palette (once per change); the
market segments, the swatches, the token rows and a waiting Orchids seat's
sector are precomputed per brightness and copied with slice stores; a run
of one colour (also every n-th pixel: the gaps, the dashes, every fifth of
a number) is one call with the colour computed once; the crash warning
finds the unlit pixels with bytearray.find (in C); below brightness 70 no
current estimate is needed at all (decided per brightness change). Loops
with a variable step are `while` loops (a `range` with a variable step is
a heap object in MicroPython), and so are the loops of methods near their
slot limit (a range's iterator takes four stack slots). And no method on the frame path
takes more than 11 slots of locals and value stack: MicroPython puts a
larger call frame on the heap (m_malloc_maybe, which heap_lock does not
catch), and in a fragmented heap the search for its block was most of the
slowest frame. That is why the layouts are split into small methods and
some expressions are computed into a reused local first;
tests/board/test_app_alloc.py counts the bytes (micropython.mem_total).

Layouts (docs/ring.md has a picture of every screen):

* Stalk Exchange play: px 0-14 market (3 px per flower, button order),
  px 15-19 seats, px 20-23 Seedy Business tokens of the active player.
* Oh My. Orchids! play and most menus: five sectors of 4 px (px 5k..5k+3),
  one per seat / option, with one gap pixel between them (px 4, 9, 14, 19).
* Overlays: crash warning (unlit pixels breathe red) and bag warning
  (every third unlit pixel glows orange and the dots march round), both
  faster and stronger as the end nears; last turn (a white comet
  circling); a refusal (the whole ring blinks red: the number of blinks is
  the reason, E_*); acknowledgement (active seat flashes green); a held
  flower button (its exact market value as a number, PEEK_MS); fault
  recovered (a dark ring but for a blinking white cross, FAULT_MS); the
  Pico W's WiFi came up (a blue ring filling clockwise) or went down (four
  blue quarter marks blinking), once per change, NET_MS.

The layouts are drawn for a 24-pixel ring: Ring refuses any other count.
"""

from engine_lite.vocab import DEFAULT_BRIGHTNESS

from engine_lite import const


# Screens (View.mode)
_M_OFF = const(0)
M_STALK = const(1)
M_ORCHIDS = const(2)
M_CHOICE = const(3)
M_NUMBER = const(4)
M_PORTFOLIO = const(5)
M_STALK_END = const(6)
M_ORCHIDS_END = const(7)

# Choice palettes (View.choice)
CH_GAME = const(0)
CH_PLAYERS = const(1)
CH_LENGTH = const(2)
CH_MENU = const(3)
CH_BRIGHT = const(4)
CH_KIND = const(5)
CH_CONFIRM = const(6)

# Number colours (View.num_kind)
N_TRACK = const(0)
N_POINTS = const(1)
N_SEEDS = const(2)

# Refusal blink codes (View.error_code; docs/ring.md, the reference card):
# the whole ring blinks red, the count of blinks says why.
E_NOTHING = const(1)  # one long blink: that button means nothing here
E_RULE = const(2)  # two: the rules say not now (turn order, phase, game over)
E_SHORT = const(3)  # three: not enough (tokens, seeds, exchange) or out of range
E_ONCE = const(4)  # four: already done, once only (flush, crash, orchid, portfolio)
_BLINK_MS = const(120)  # on and off of one short blink
LONG_BLINK_MS = const(500)
PEEK_MS = const(2000)  # a held flower shows its value this long
_RING_PIXELS = const(24)
# Named pixel segments (the first pixel of each; LED_Animation's PixelMap
# idea, as constants so that a frame pays nothing for the names): a layout
# says _SEATS + s, never 15 + s. Byte offsets are 3 x these (folded by
# the compiler).
_MARKET = const(0)  # Stalk Exchange: 3 px per flower, button order (px 0-14)
_SEATS = const(15)  # Stalk Exchange: one px per seat (px 15-19)
_TOKENS = const(20)  # Stalk Exchange: the active player's tokens (px 20-23)
_HARVEST = const(15)  # a harvest being counted: px 15-23, over the seats and tokens
_HARVEST_PX = const(9)
_COUNTS_PX = const(19)  # portfolio entry: the tokens entered (px 0-18), then
_ENTERED = const(19)  # the seats (px 19-23)
_SECTOR_PX = const(5)  # Orchids, menus, results: seat/option s = px 5s..5s+3, gap px 5s+4
_UNITS = const(0)  # a number: its units from px 0 (all of it up to 24)
_TENS = const(12)  # a number above 24: its tens in white, px 12-23
_TENS_PX = const(12)
_ACK_MS = const(250)
FAULT_MS = const(3000)  # six blinks of the fault cross (App.recover)
NET_MS = const(1500)  # the WiFi pattern, shown once per change (firmware/pico_w.py)
_TICKS_MASK = const(0x3FFFFFFF)  # time.ticks_ms() wraps at 2**30
_DARK = b"\0\0\0"  # an unlit pixel

# Colours as RGB triples in bytes (a tuple literal could be built at run time).
# Flowers in button order: dahlia, daffodil, globemaster, snowdrop, tulip.
FLOWER_RGB = bytes((220, 0, 40, 255, 170, 0, 140, 0, 255, 150, 200, 255, 255, 40, 140))
# The Ring's palette: the flowers, then the misc colours (flower k is
# colour k, C_x is colour x).
PALETTE = FLOWER_RGB + bytes(
    (
        255, 255, 255,  # _C_WHITE
        0, 0, 0,  # _C_OFF
        255, 0, 0,  # _C_RED
        0, 255, 40,  # _C_GREEN
        255, 110, 0,  # _C_AMBER (Seedy Business tokens)
        40, 90, 255,  # _C_BLUE (a flushed player's token is flipped blue)
        255, 190, 0,  # _C_GOLD (winner, 7 flowers)
        190, 0, 255,  # _C_ORCHID
        255, 70, 0,  # _C_BAG (bag warning)
        120, 60, 10,  # _C_SEED
    )
)
_C_WHITE = const(5)
_C_OFF = const(6)
_C_RED = const(7)
_C_GREEN = const(8)
_C_AMBER = const(9)
_C_BLUE = const(10)
_C_GOLD = const(11)
_C_ORCHID = const(12)
_C_BAG = const(13)
_C_SEED = const(14)

# Bar levels of the 3 market pixels: dim -> bright, so two full bars side by
# side still show where one flower ends (position, not hue).
BAR_LEVEL = bytes((70, 150, 255))
# Warning levels 1-4: pulse period (x10 ms) and peak glow.
# (one table: the periods of levels 1-4, then their peaks)
WARN = bytes((200, 140, 90, 50, 40, 70, 120, 200))
NUM_COLOUR = bytes((_C_WHITE, _C_GOLD, _C_SEED))
MENU_COLOUR = bytes((_C_BLUE, _C_RED, _C_WHITE, _C_GREEN, _C_OFF))
_MENU_CLOSE = const(4)  # the dark option (its white dot circles)

# Current budget (docs/ring.md): ~20 mA per channel at full drive.
_MA_PER_CHANNEL = const(20)
DEFAULT_LIMIT_MA = const(400)  # LEDs; + Pico ~50 mA keeps USB under 500 mA


class View:
    """Everything a screen shows, preallocated. The app writes it, the ring
    reads it; nothing here refers to the engine."""

    def __init__(self):
        self.mode = _M_OFF
        self.n = 0  # players
        self.player = 0  # active seat
        # Stalk Exchange
        self.values = bytearray(5)  # market values (or final values at the end)
        self.tokens = bytearray(5)  # Seedy Business tokens left per seat
        self.flushed = bytearray(5)
        self.extra_cost = 0  # Seedy Business tokens the next plant/swap costs (engine: StalkState.cost)
        self.upkeep = 0  # harvesting has begun this turn
        self.until_crash = 99
        self.bag = 99
        self.trigger = 0  # 0 none, 1 crash, 2 bag: the last turn is on
        self.pending = -1  # flower of a harvest being counted, or -1
        self.pending_count = 0
        self.busted = bytearray(5)
        # Oh My. Orchids!
        self.flowers = bytearray(5)  # flowers planted per seat
        self.last_round = 0
        self.ending = 0  # bit per seat that planted enough to start the last round (engine: ends_game)
        # Both games at the end: 1 = winner (rank 1), per seat; scores per seat
        self.winner = bytearray(5)
        self.scores = [0, 0, 0, 0, 0]
        # Choice screens: options available (bit per sector) and the selection
        self.choice = CH_GAME
        self.options = 0
        self.sel = 0
        # Number entry
        self.number = 0
        self.num_kind = N_TRACK
        # Portfolio entry
        self.counts = bytearray(5)
        self.entered = bytearray(5)
        # Feedback timers: time of the event in ms, or -1
        self.error_at = -1
        self.error_code = E_RULE
        # A held flower button: its value shows as a number (-1: none)
        self.peek = -1
        self.peek_at = -1
        # Setup: the start space is still the placeholder (not confirmed)
        self.unconfirmed = 0
        self.ack_at = -1
        self.fault_at = -1  # the app recovered from a firmware fault
        self.net_at = -1  # the Pico W's WiFi came up or went down (net_up)
        self.net_up = False
        # Output settings
        self.brightness = DEFAULT_BRIGHTNESS  # 0..255, applied to every pixel


def _since(now, at):
    """ms since `at` (ticks arithmetic), or a large number if `at` is -1."""
    if at < 0:
        return _TICKS_MASK
    return (now - at) & _TICKS_MASK


def _rows(n, size):
    """n preallocated rows of `size` bytes."""
    return [bytearray(size) for _ in range(n)]


def _tri(now, period, peak):
    """Triangle wave 0..peak..0 over `period` ms (ints only)."""
    t = now % period
    half = period >> 1
    if t >= half:
        t = period - t
    return t * peak // half


# Warning level (4 strongest .. 1, 0 none) by distance to the end: tokens
# until the crash 0-1 -> 4, 2 -> 3, 3-4 -> 2, 5-6 -> 1; tokens left in the
# greenhouse bag 0-4 -> 4, 5-8 -> 3, 9-14 -> 2, 15-20 -> 1 (docs/ring.md).
CRASH_LEVEL = bytes((4, 4, 3, 2, 2, 1, 1))
BAG_LEVEL = bytes((4, 4, 4, 4, 4, 3, 3, 3, 3, 2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1))
# From these distances on there is no warning (the lengths of the tables
# above, as constants: most frames of a game ask, and need no call to know)
_CRASH_FAR = const(7)
_BAG_FAR = const(21)

# Swatches: (colour, level) of the seats, precomputed per
# brightness so a frame copies 3 bytes instead of computing them.
SWATCH = bytes((_C_WHITE, 30, _C_WHITE, 255, _C_BLUE, 150, _C_BLUE, 255, _C_AMBER, 255, _C_GREEN, 255, _C_GREEN, 120, _C_WHITE, 80, _C_WHITE, 25, _C_WHITE, 90))
_S_IDLE = const(0)  # a waiting seat
_S_ACTIVE = const(1)  # the seat to play
_S_FLUSHED = const(2)  # a waiting seat that has flushed
_S_DIP = const(3)  # the seat to play that has flushed: its blue dip
_S_UPKEEP = const(4)  # the seat to play, harvesting
_S_ACK = const(5)  # event accepted
_S_ENTERED = const(6)  # portfolio screen: a seat whose portfolio is in
_S_WAITING = const(7)  # portfolio screen: the seat being entered, its dim blink
_S_FAINT = const(8)  # portfolio screen: the other seats and the gaps
_S_TAIL = const(9)  # the comet's tail (its head is _S_ACTIVE, its tip _S_IDLE)



def refusal(code):
    """The blink code of an engine_lite error code."""
    if code == "nothing_to_undo":
        return E_NOTHING
    # whole codes (engine_lite/errors.py), never a substring of a list
    if code in ("no_tokens", "hand_short", "exchange_empty", "display_empty", "too_many"):
        return E_SHORT
    return E_ONCE if code in ("flush_used", "triggered", "orchid_taken", "already_entered") else E_RULE


def error_ms(code):
    """How long the refusal blink of `code` lasts."""
    return LONG_BLINK_MS if code <= E_NOTHING else 2 * _BLINK_MS * code


_ERROR_MAX_MS = const(2 * _BLINK_MS * E_ONCE)  # the longest blink: error_ms(E_ONCE), longer than LONG_BLINK_MS


class Ring:
    """Renders a View into `buf` (3 bytes per pixel, in the byte `order`
    given: order[c] = where channel c (R, G, B) goes; default R G B).

    The Ring owns the buffers, the palette and what is precomputed per
    brightness, the drawing primitives and the segments more than one
    layout draws (the market arc, the comet, a number); each screen is a
    Layout below, found by the view's mode in `layouts`. The overlays any
    screen can carry (a held flower's value, a refusal, the fault cross,
    the current cap) are drawn here, by `draw`."""

    def __init__(self, count=_RING_PIXELS, limit_ma=DEFAULT_LIMIT_MA, order=None, bright=255):
        if count != _RING_PIXELS:
            raise ValueError("pixel_count %d: the ring's screens need 24 pixels" % count)
        self.limit_ma = limit_ma
        self.buf = bytearray(3 * count)  # what goes to the LEDs
        self.base = bytearray(3 * count)  # what no clock moves of the view's frame (prepare)
        self.zero = bytes(3 * count)
        self.order = order
        self.pal = bytearray(len(PALETTE))  # the palette x brightness, in the strip's byte order
        # The 9 bytes of each flower's market segment, per look (0 empty,
        # 1-3 a bar of that many px, 4 all full): a frame copies 5 of them
        # instead of drawing up to 15 pixels.
        # Row 9 f + look: indexed by the segment's first byte, so a frame
        # needs no multiplication per flower (slots 9 f + 5..8 are unused).
        self.segs = [bytearray(9) if i % 9 < 5 else None for i in range(45)]
        self.sws = _rows(len(SWATCH) // 2, 3)
        self.toks = _rows(12, 12)  # px 20-23 per (tokens 0-5, blink hidden)
        self.px = bytearray(3)  # the pen: one pixel's colour (pen)
        self.secs = _rows(18, 12)  # Orchids: a waiting seat's sector, 0-8+ flowers, then the same gold (ending)
        # The screens by View.mode (_M_OFF .. M_ORCHIDS_END)
        self.layouts = (Layout(), Stalk(), Orchids(), Choice(), Number(), Portfolio(), StalkEnd(), OrchidsEnd())
        self.bright = -1
        # the brightness the first frame will use (the app passes its
        # setting): folding it in costs ~25 ms on the Pico, which belongs to
        # the boot, not to the first button press
        self._scale(bright)

    def _scale(self, bright):
        """Fold a new brightness into the palette, the market segments and
        the swatches (only when it changes; allocates nothing)."""
        self.bright = bright
        self.capped = bright * 3 * _RING_PIXELS * _MA_PER_CHANNEL > self.limit_ma * 255
        order = self.order
        for k in range(0, len(PALETTE), 3):
            for c in range(3):
                self.pal[k + (c if order is None else order[c])] = PALETTE[k + c] * bright // 255
        buf = self.buf
        for f in range(5):
            for look in range(5):
                buf[:] = self.zero
                if look == 0:  # empty: one dim pixel marks the flower's place
                    self.put(0, f, 25)
                for j in range(3 if look == 4 else look):  # a bar of 1-3 px, or all 3 full (counting a harvest)
                    self.put(j, f, 255 if look == 4 else BAR_LEVEL[j])
                self.segs[9 * f + look][:] = buf[0:9]
        for n in range(len(SWATCH) // 2):
            self.sws[n][:] = self.pen(SWATCH[2 * n], SWATCH[2 * n + 1])
        for look in range(12):
            buf[:] = self.zero
            self._tokens(look >> 1, look & 1)
            self.toks[look][:] = buf[3 * _TOKENS : 3 * _RING_PIXELS]
        for k in range(18):
            buf[:] = self.zero
            self.sector(0, k % 9, k // 9)
            self.secs[k][:] = buf[0:12]

    def _tokens(self, t, hide):
        """px 20-23: t Seedy Business tokens, one amber pip each (a 5th
        token turns the first pip white); `hide` 1: the last one is dark
        (the token the next extra action costs, blinking)."""
        self.run(_TOKENS, (t if t < 4 else 4) - hide, _C_AMBER, 200)
        if t > 4:
            self.put(_TOKENS, _C_WHITE, 200)

    # -- drawing primitives (all write self.buf) ---------------------------

    def put(self, i, k, level=255):
        """Pixel i = palette colour k (flower 0-4 or C_*) at level/255."""
        i *= 3
        self.buf[i : i + 3] = self.pen(k, level)

    def run(self, i, n, k, level=255, step=1):
        """n pixels = colour k at level: i, i + step, i + 2 step, ... The
        colour is computed once (pen) and each pixel is one slice store:
        a call per pixel (put) was most of a frame's time."""
        if n > 0:  # every local and stack slot counted (no frame on the heap: <= 11): k and level are reused
            k = self.pen(k, level)  # k: the pen from here on
            level = self.buf  # level: the frame's buffer
            i *= 3
            step *= 3
            n = i + n * step
            while i < n:
                level[i : i + 3] = k
                i += step

    def pen(self, k, level):
        """self.px = colour k at level/255; returns it."""
        level += level >> 7  # 0..256: >> 8 below is exact at full level
        pal = self.pal
        px = self.px
        k *= 3
        px[0] = pal[k] * level >> 8
        px[1] = pal[k + 1] * level >> 8
        px[2] = pal[k + 2] * level >> 8
        return px

    def fill(self, j, end, step):
        """The pen's colour at bytes j, j + step, ... < end. Not range():
        with a variable step it is a heap object."""
        buf = self.buf
        px = self.px
        while j < end:
            buf[j : j + 3] = px
            j += step

    def sw(self, i, w):
        """Pixel i = swatch w (precomputed per brightness)."""
        i *= 3
        self.buf[i : i + 3] = self.sws[w]

    def sectors(self, mask, k, level):
        """px 5s..5s+3 = colour k at level, for each sector s whose bit is
        set in `mask`: the colour computed once, then a fill per sector."""
        self.pen(k, level)
        k = 0
        while mask:
            if mask & 1:
                self.fill(k, k + 12, 3)
            mask >>= 1
            k += 3 * _SECTOR_PX

    def gaps(self, k, level):
        """The four gap pixels between the sectors (px 4, 9, 14, 19)."""
        self.run(_SECTOR_PX - 1, 4, k, level, _SECTOR_PX)

    # -- segments more than one layout draws --------------------------------

    def market(self, values):
        """px 0-14: each flower's bar relative to the leader. Only the
        leader(s), the flowers that would bust, fill all 3 px; the others
        1-2 px. The first pixel of an empty segment glows dimly so every
        flower's place on the ring stays visible."""
        top = max(values)  # in C, no allocation
        j = 0
        while j < 3 * _SEATS:  # flower f's bytes (and rows in segs): 9 f
            v = values[j // 9]
            if v:
                v = j + (3 if v == top else (1 if 2 * v <= top else 2))  # look = ceil(2 v / top)
            else:
                v = j
            self.buf[j : j + 9] = self.segs[v]  # slice store: no allocation
            j += 9

    def sector(self, base, f, full):
        """The flowers of one Orchids seat from px `base`, gold if `full`
        (the seat planted enough to start the last round); returns the
        pixels lit."""
        full = _C_GOLD if full else _C_GREEN
        lit = f >> 1 if f < 8 else 4  # bright pixels: two flowers each
        self.run(base, lit, full)
        if lit < 4 and f & 1:
            self.put(base + lit, full, 60)  # dim: one flower
            lit += 1
        return lit

    def comet(self, now):
        """Last turn: a white comet with a two-pixel tail circles the ring."""
        head = (now % 1200) * _RING_PIXELS // 1200
        self.sw(head, _S_ACTIVE)
        self.sw((head + _RING_PIXELS - 1) % _RING_PIXELS, _S_TAIL)
        self.sw((head + _RING_PIXELS - 2) % _RING_PIXELS, _S_IDLE)

    def number(self, value, k):
        """0-24: that many pixels, every fifth brighter; above 24: units on
        px 0-9, tens in white on px 12-23. Zero: one dim pixel."""
        if value <= 0:
            self.put(0, k, 40)
            return
        tens = 0
        if value > _RING_PIXELS:
            tens = value // 10
            value %= 10
        self.run(_UNITS, value, k, 110)
        self.run(_UNITS + 4, value // 5, k, 255, 5)  # every fifth brighter
        tens = tens if tens < _TENS_PX else _TENS_PX
        self.run(_TENS, tens, _C_WHITE, 110)
        self.run(_TENS + 4, tens // 5, _C_WHITE, 255, 5)

    # -- the entry points ------------------------------------------------

    def render(self, view, now_ms):
        """The frame for `view` at `now_ms`: returns self.buf (reused)."""
        return self.draw(view, now_ms, True)

    def prepare(self, view):
        """Draw what no clock moves of the view's frame into self.base
        (draw, when the view changed: once per change, not per frame):
        the view's layout's prepare. draw() starts every other frame
        from a copy of it."""
        if view.brightness != self.bright:
            self._scale(view.brightness)
        self.buf[:] = self.zero  # equal-length slice copy: no allocation
        self.layouts[view.mode].prepare(self, view)
        self.base[:] = self.buf

    def draw(self, view, now_ms, changed):
        """The frame for `view` at `now_ms`, `changed`: the view is not
        the one last drawn (any change, its brightness too), so it is
        prepared first (App.show: its _dirty). A copy of self.base, then
        what moves (the layout's draw) and the overlays. Returns self.buf
        (reused)."""
        if changed:
            self.prepare(view)  # (which leaves self.buf = self.base)
        else:
            self.buf[:] = self.base
        if view.peek >= 0 and _since(now_ms, view.peek_at) < PEEK_MS:
            self.buf[:] = self.zero
            self.number(view.values[view.peek], view.peek)
        else:
            self.layouts[view.mode].draw(self, view, now_ms)
        if view.error_at >= 0:
            self._error(view, now_ms)
        at = view.fault_at
        if at >= 0:
            at = (now_ms - at) & _TICKS_MASK  # its age
            if at < FAULT_MS:
                self._fault(at)
        if view.net_at >= 0:
            self._net(view, now_ms)
        if self.capped:
            self._output()
        return self.buf

    # -- the overlays, and the current budget ---------------------------------

    def _error(self, view, now):
        """Refused: the whole ring blinks red, once long (E_NOTHING) or
        `code` short blinks (on-off), for error_ms(code)."""
        age = (now - view.error_at) & _TICKS_MASK
        code = view.error_code
        if age < _ERROR_MAX_MS and age < error_ms(code):  # a blink long over: no call
            if code <= E_NOTHING or (age // _BLINK_MS) & 1 == 0:
                self.run(0, _RING_PIXELS, _C_RED)
            else:
                self.buf[:] = self.zero

    def _fault(self, age):
        """The board survived a firmware fault and reloaded its game from
        flash: the screen goes dark but for a white cross (px 0, 6, 12, 18)
        blinking 250 ms on, 250 ms off: a shape no screen uses."""
        self.buf[:] = self.zero
        if (age // 250) & 1 == 0:
            self.run(0, 4, _C_WHITE, 255, _RING_PIXELS // 4)

    def _net(self, view, now):
        """The WiFi changed: up = the ring fills blue clockwise from px 0;
        down = four blue marks (px 0, 6, 12, 18) blink: shapes, not hue
        alone, and none a screen uses. Once: NET_MS, then nothing."""
        age = (now - view.net_at) & _TICKS_MASK
        if age < NET_MS:
            self.buf[:] = self.zero
            if view.net_up:
                self.run(0, 1 + age * _RING_PIXELS // NET_MS, _C_BLUE)
            elif (age // 250) & 1 == 0:
                self.run(0, 4, _C_BLUE, 255, _RING_PIXELS // 4)

    def _output(self):
        """Scale the frame down if it would draw more than limit_ma (only
        called when `capped`: below brightness ~70 no frame can, 24 px x 3
        x 20 mA x 70/255 < 400 mA, so the frame is not even summed)."""
        buf = self.buf
        ma = sum(buf) * _MA_PER_CHANNEL // 255
        if ma > self.limit_ma:
            scale = self.limit_ma * 256 // ma
            for j in range(3 * _RING_PIXELS):
                buf[j] = buf[j] * scale >> 8


# -- the layouts: one class per screen ----------------------------------------


class Layout:
    """A screen's picture, drawn by a Ring `r` from a View `v`. prepare()
    draws what no clock moves, once per change of the view (Ring.prepare
    keeps it as the frame's base); draw() adds what moves at `now`, every
    frame, on a copy of it. This one is the dark screen (_M_OFF)."""

    def prepare(self, r, v):
        """Draw the still part of `v` into r.buf (which is dark)."""

    def draw(self, r, v, now):
        """Draw what moves at `now` over r.buf (the still part)."""


class EndWarning(Layout):
    """The end approaches (Stalk Exchange play), stronger and faster as it
    nears. Crash: every unlit pixel breathes red in place. Bag: every third
    unlit pixel glows orange and the dots march round (the bag draining).
    The more urgent of the two is shown (the crash on a tie). A layout
    that shows it subclasses this one and calls warn()."""

    def warn(self, r, v, now):
        lc = v.until_crash
        lc = CRASH_LEVEL[lc] if lc < _CRASH_FAR else 0
        bag = v.bag
        bag = BAG_LEVEL[bag] if bag < _BAG_FAR else 0
        if lc >= bag:
            if lc:
                self.breathe(r, lc - 1, now)
        else:
            self.march(r, bag - 1, now)

    def breathe(self, r, level, now):
        """The crash warning (level 0-3): bytearray.find (in C) jumps from
        one run of three zero bytes to the next, instead of a test per
        pixel; a run across two pixels looks on from the next pixel."""
        px = WARN[level + 4]  # its peak (apart: one stack slot fewer)
        now = _tri(now, 10 * WARN[level], px)
        px = r.pen(_C_RED, 8 + now)
        r = r.buf  # r: the frame's buffer from here on (one slot, not two)
        j = r.find(_DARK)
        while j >= 0:
            if j % 3:
                j += 3 - j % 3
                j = r.find(_DARK, j)
                continue
            r[j : j + 3] = px
            j = r.find(_DARK, j + 3)

    def march(self, r, level, now):
        """The bag warning (level 0-3): every third pixel from the marching
        phase, if unlit (one test, not three)."""
        j = 8 + WARN[level + 4]
        px = r.pen(_C_BAG, j)
        level = 10 * WARN[level]
        j = 3 * (2 - now * 3 // level % 3)
        r = r.buf  # r: the frame's buffer from here on (one slot, not two)
        while j < 3 * _RING_PIXELS:
            if not (r[j] or r[j + 1] or r[j + 2]):
                r[j : j + 3] = px
            j += 9


class Stalk(EndWarning):
    """Stalk Exchange play: the market (px 0-14), the seats (px 15-19),
    the active player's Seedy Business tokens (px 20-23), then the
    last-turn comet or the end's warning. While a harvest is counted,
    px 15-23 count its tokens in the flower's colour (beyond 9 all
    white) and the flower's segment blinks."""

    def prepare(self, r, v):
        """The market, and the waiting seats faint white, or brighter blue
        once flushed (the flipped token); or the harvest's count."""
        r.market(v.values)
        t = v.pending_count
        if v.pending >= 0:
            if t > _HARVEST_PX:
                r.run(_HARVEST, _HARVEST_PX, _C_WHITE, 200)
            else:
                r.run(_HARVEST, t, v.pending)
            return
        r.px[:] = r.sws[_S_IDLE]  # the n seats waiting, then the others
        r.fill(3 * _SEATS, 3 * _SEATS + 3 * v.n, 3)
        if max(v.flushed):  # in C: until someone flushes, no loop over the seats
            for s in range(v.n):
                if v.flushed[s] and s != v.player:
                    r.sw(_SEATS + s, _S_FLUSHED)

    def draw(self, r, v, now):
        """The harvest's segment blinks; or the active seat, its tokens
        (after the two basic actions the token the next extra action
        costs blinks) and the end's signal."""
        if v.pending >= 0:
            if (now // 125) & 1:
                now = 9 * v.pending
                r.buf[now : now + 9] = r.segs[now + 4]
            return
        self.seat(r, v, now)
        t = v.tokens[v.player]
        hide = v.extra_cost and not v.upkeep and t > 0 and not v.trigger and (now // 400) & 1  # 0 (False) or 1
        t = 2 * (t if t < 5 else 5) + hide
        r.buf[3 * _TOKENS : 3 * _RING_PIXELS] = r.toks[t]
        if v.trigger:
            r.comet(now)
        elif v.until_crash < _CRASH_FAR or v.bag < _BAG_FAR:
            self.warn(r, v, now)

    def seat(self, r, v, now):
        """The active seat is always full bright white (amber in the
        upkeep; if it has flushed it dips blue for 0.2 s each second);
        green flash = event accepted."""
        p = v.player
        if p < v.n:
            s = _S_ACTIVE
            if _since(now, v.ack_at) < _ACK_MS:
                s = _S_ACK
            elif v.flushed[p] and now % 1000 < 200:
                s = _S_DIP
            elif v.upkeep:
                s = _S_UPKEEP
            r.sw(_SEATS + p, s)


class Orchids(Layout):
    """Oh My. Orchids! play: five sectors of 4 px, one per seat: each pixel
    holds two flowers (dim = one, bright = two), so 7 flowers = 3.5 px;
    gold once 7 are reached. The active seat's unlit pixels glow white (a
    full sector's last pixel blinks white instead), green flash = event
    accepted. Last round: red gaps and the comet."""

    def prepare(self, r, v):
        for s in range(v.n):
            if s != v.player:
                self.waiting(r, v, s)
            else:
                self.active(r, v, s)
        if v.last_round:
            r.gaps(_C_RED, 160)

    def waiting(self, r, v, s):
        """A waiting seat's sector, as Ring._scale drew it."""
        f = v.flowers[s]
        f = 9 * (v.ending >> s & 1) + (f if f < 8 else 8)
        s *= 3 * _SECTOR_PX
        r.buf[s : s + 12] = r.secs[f]

    def active(self, r, v, s):
        """The active seat's sector: its flowers, the unlit pixels white."""
        lit = r.sector(_SECTOR_PX * s, v.flowers[s], v.ending >> s & 1)
        s *= _SECTOR_PX
        r.run(s + lit, 4 - lit, _C_WHITE, 35)

    def draw(self, r, v, now):
        s = v.player
        if s < v.n:
            if v.ending >> s & 1 and (now // 500) & 1:
                r.put(_SECTOR_PX * s + 3, _C_WHITE)  # a full sector: its tip blinks white
            if _since(now, v.ack_at) < _ACK_MS:
                r.put(_SECTOR_PX * s, _C_GREEN)
        if v.last_round:
            r.comet(now)


class Choice(Layout):
    """Setup and menus: options sit in the five sectors (the flower button
    below the sector picks it); the selected one is bright. What moves: a
    confirmation's sectors pulse alike, the menu's dark option (close) has
    a white dot circling."""

    def prepare(self, r, v):
        """Sectors of one colour and level are one sectors() call (the
        colour computed once)."""
        kind = v.choice
        if kind == CH_PLAYERS or kind == CH_BRIGHT:  # n players / level n = n lit sectors
            r.sectors((2 << v.sel) - 1, _C_WHITE, 200)
        elif kind == CH_KIND:  # a new flora type: 4 colours; one already planted: 1 colour
            if v.options & 1:
                self.quad(r, 160)
            r.sectors(v.options & 30, 4, 160)
            r.gaps(_C_ORCHID, 255)  # ok = orchid: the gap pixels glow orchid purple
        elif kind != CH_CONFIRM:
            s = 0
            while s < 5:
                if v.options & (1 << s):
                    self.option(r, kind, s, v.sel)
                s += 1

    def draw(self, r, v, now):
        kind = v.choice
        if kind == CH_CONFIRM:
            now = 60 + _tri(now, 600, 195)
            r.sectors(v.options, _C_RED, now)
        elif kind == CH_MENU and v.options >> _MENU_CLOSE & 1:
            kind = 255 if v.sel == _MENU_CLOSE else 40  # its level
            r.put(_SECTOR_PX * _MENU_CLOSE + (now // 250) % 4, _C_WHITE, kind)

    def quad(self, r, level):
        """px 0-3 in the four flower colours (the Stalk Exchange option, a
        new flora type)."""
        for j in range(4):
            r.put(j, j, level)

    def option(self, r, kind, s, sel):
        """Option s of a choice screen, bright if selected."""
        sel = 255 if s == sel else 40  # its level
        if kind == CH_GAME:
            if s == 0:  # Stalk Exchange: the five flower colours
                self.quad(r, sel)
            else:
                r.run(_SECTOR_PX * s, 4, _C_ORCHID, sel)
        elif kind == CH_LENGTH:  # long: 4 px, short: 2 px
            r.run(_SECTOR_PX * s, 4 if s == 0 else 2, _C_WHITE, sel)
        elif kind == CH_MENU:
            r.run(_SECTOR_PX * s, 4, MENU_COLOUR[s], sel)


class Number(Layout):
    """Number entry: the number (Ring.number); an unconfirmed one is
    dashed, blinking: "read your Market board"."""

    def prepare(self, r, v):
        r.number(v.number, NUM_COLOUR[v.num_kind])

    def draw(self, r, v, now):
        if v.unconfirmed and (now // 500) & 1:
            r.px[:] = _DARK
            r.fill(3, 3 * _RING_PIXELS + 3, 6)  # every other pixel from px 1 dark


class Portfolio(Layout):
    """Portfolio entry (Stalk Exchange, game over): the tokens entered so
    far as coloured runs in button order, separated by a dim white pixel
    (px 0-18; a red px 18 = more than fits); the seats (px 19-23): being
    entered = blinking white, entered = green."""

    def prepare(self, r, v):
        i = 0
        f = 0
        while f < 5:
            c = v.counts[f]
            if c > _COUNTS_PX - 1 - i:
                c = _COUNTS_PX - 1 - i
            r.run(i, c, f)
            i += c
            if f < 4 and i < _COUNTS_PX - 1:
                r.sw(i, _S_FAINT)
                i += 1
            f += 1
        if i >= _COUNTS_PX - 1 and sum(v.counts) + 4 > _COUNTS_PX - 1:  # sum of a bytearray: in C
            r.put(_COUNTS_PX - 1, _C_RED)  # its last pixel red: more than fits

    def draw(self, r, v, now):
        s = v.n
        while s:  # not range(): its iterator takes four stack slots
            s -= 1
            if v.entered[s]:
                w = _S_ENTERED
            elif s == v.player:
                w = _S_ACTIVE if (now // 400) & 1 else _S_WAITING
            else:
                w = _S_FAINT
            r.sw(_ENTERED + s, w)


class StalkEnd(Layout):
    """End of a Stalk Exchange game: the final (busted) values on the
    market arc, the seats that did not win faint white; the busted
    flowers' first pixel blinks red, the winners' seats pulse gold."""

    def prepare(self, r, v):
        r.market(v.values)
        for f in range(v.n):
            if not v.winner[f]:
                r.sw(_SEATS + f, _S_IDLE)

    def draw(self, r, v, now):
        if (now // 300) & 1:
            f = 5
            while f:  # not range(): its iterator takes four stack slots
                f -= 1
                if v.busted[f]:
                    r.put(3 * f, _C_RED)
        now = 120 + _tri(now, 1000, 135)  # the winners' pulse
        f = v.n
        while f:
            f -= 1
            if v.winner[f]:
                r.put(_SEATS + f, _C_GOLD, now)


class OrchidsEnd(Layout):
    """End of an Oh My. Orchids! game: the final scores as bars (up to
    4 px a seat) relative to the best (`top`, found by prepare): the
    others' white, the winners' gold, pulsing."""

    def __init__(self):
        self.top = 1  # an instance's attribute: prepare's store allocates nothing

    def prepare(self, r, v):
        top = 1
        for s in range(v.n):
            if v.scores[s] > top:
                top = v.scores[s]
        self.top = top
        r.pen(_C_WHITE, 60)
        self.bars(r, v, 0)

    def draw(self, r, v, now):
        now = 120 + _tri(now, 1000, 135)  # the winners' pulse
        r.pen(_C_GOLD, now)
        self.bars(r, v, 1)

    def bars(self, r, v, win):
        """The bars of the winners (win 1) or of the others (0), in the
        pen's colour."""
        s = v.n
        while s:  # not range(): one stack slot fewer, and the fill below needs it
            s -= 1
            if v.winner[s] == win:
                end = v.scores[s]
                end = 3 * _SECTOR_PX * s + 3 * ((4 * (end if end > 0 else 0) + self.top - 1) // self.top)
                r.fill(3 * _SECTOR_PX * s, end, 3)

"""The textual application of the terminal simulator (`bloomkeeper sim`).

Kept apart from host/board_sim/tui.py and board.py (SimBoard) so that the
headless modes, which build a SimBoard too, never import textual; what it
draws with (keys, legend, colours, the ring's layout) is face.py, which
imports neither this module nor tui.py.

Everything fits an 80x24 terminal: a one-line header, the ring (15 rows)
beside the game in words, then the buttons box: what the buttons do now
(the help line follows the phase) and the keys (tests/host/test_sim_tui.py
checks it in a real 80x24 tmux window).
"""

from rich.style import Style
from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.css.query import NoMatches
from textual.widget import Widget
from textual.widgets import Static

from host.board_sim.board import LONG, SHORT, SimBoard, SimUnavailable, one_line
from host.board_sim.face import (
    ENTER_KEYS,
    FALLBACK_COLOURS,
    KEYMAP,
    LEGEND,
    LONG_PREFIX,
    button_colours,
    display_rgb,
    header,
    ring_layout,
    short_path,
)


class RingView(Widget):
    """The LED ring: one coloured two-column cell per pixel, on a circle."""

    DEFAULT_CSS = """
    RingView { width: auto; height: auto; padding: 0 1; }
    """

    def __init__(self, **kw):
        super().__init__(**kw)
        self.pix = []
        self.centre = ""
        self.brightness = 255

    def set_pixels(self, pixels, centre="", brightness=255):
        if pixels != self.pix or centre != self.centre or brightness != self.brightness:
            resize = len(pixels) != len(self.pix)
            self.pix = list(pixels)
            self.centre = centre
            self.brightness = brightness
            self.refresh(layout=resize)

    def get_content_width(self, container, viewport):
        return ring_layout(max(1, len(self.pix) or 24))[1]

    def get_content_height(self, container, viewport, width):
        return ring_layout(max(1, len(self.pix) or 24))[0]

    def render(self):
        count = len(self.pix) or 24
        rows, cols, pos = ring_layout(count)
        grid = [[(" ", None)] * cols for _ in range(rows)]
        for i, (r, c) in enumerate(pos):
            rgb = self.pix[i] if i < len(self.pix) else (0, 0, 0)
            if any(rgb):
                style = "rgb(%d,%d,%d)" % display_rgb(rgb, self.brightness)
                grid[r][c] = grid[r][c + 1] = ("█", style)
            else:
                grid[r][c] = grid[r][c + 1] = ("·", "grey35")
        centre = self.centre[: cols - 10]
        if centre:
            r = rows // 2
            start = (cols - len(centre)) // 2
            for k, ch in enumerate(centre):
                grid[r][start + k] = (ch, "bold")
        text = Text(no_wrap=True)
        for r, row in enumerate(grid):
            for ch, style in row:
                text.append(ch, style=style)
            if r < rows - 1:
                text.append("\n")
        return text


class ButtonsView(Static):
    """The eight buttons and their keys; the one held down is lit. A mouse
    click on a button is a short press of it."""

    def show(self, held, long_armed, colours, hint=""):
        t = Text(no_wrap=False)
        if hint:
            t.append("now: ", style="bold")
            t.append(hint + "\n")
        for i, (key, name) in enumerate(LEGEND):
            if i < 5:
                base = "rgb(%d,%d,%d)" % colours[i]
            else:
                base = "white"
            style = ("reverse bold " + base) if held == i else base
            click = Style(meta={"bk_button": i})  # read back by on_click
            t.append("%s " % key, style=Style.parse("bold reverse" if held == i else "bold") + click)
            t.append("%s" % name, style=Style.parse(style) + click)
            t.append("\n" if i == 5 else "  ")
        if long_armed:
            t.append(" [LONG armed: next key is a long press]", style="bold yellow")
        else:
            t.append(" long press: ", style="bold")
            t.append("Shift+key or l, key")
        t.append("   q quit", style="bold")
        self.update(t)

    def on_click(self, event):
        button = event.style.meta.get("bk_button") if event.style else None
        if isinstance(button, int):
            event.stop()
            self.app.action_press_button(button, SHORT)


class SimApp(App):
    """`bloomkeeper sim`: the board in a terminal."""

    TITLE = "Bloomkeeper simulator"
    CSS = """
    Screen { layout: vertical; }
    #top { height: auto; }
    #info { height: 1; padding: 0 1; color: $text-muted; }
    #ring { border: round $primary; }
    #side { width: 1fr; height: auto; padding: 0 0 0 1; }
    #state { height: auto; border: round $secondary; padding: 0 0 0 1; }
    #error { height: auto; max-height: 4; padding: 0 1; }
    #history { height: 1; padding: 0 1; color: $text-muted; }
    #buttons { height: auto; border: round $accent; padding: 0 1; }
    """
    BINDINGS = [
        Binding("q", "quit", "quit", priority=True),
        Binding("ctrl+c", "quit", "quit", priority=True, show=False),
    ]
    TICK_S = 0.01
    ENABLE_COMMAND_PALETTE = False

    def __init__(self, board="pico", state_dir=None, clock=None, link=True, sim=None):
        super().__init__()
        self.sim = sim or SimBoard(board=board, state_dir=state_dir, clock=clock, link=link)
        self.long_armed = False
        self.startup_error = None
        self._shown = None
        self._colours = FALLBACK_COLOURS

    def compose(self) -> ComposeResult:
        yield Static(id="info")
        with Horizontal(id="top"):
            yield RingView(id="ring")
            with Vertical(id="side"):
                yield Static(id="state")
                yield Static(id="error")
                yield Static(id="history")
        yield ButtonsView(id="buttons")

    def on_mount(self):
        try:
            if self.sim.app is None:
                self.sim.start()
        except SimUnavailable as err:
            self.startup_error = str(err)
        except Exception as err:
            self.startup_error = "the firmware failed to start: %s" % one_line(err)
        self._colours = button_colours()
        self.query_one("#ring").border_title = "LED ring"
        self.query_one("#state").border_title = "the game"
        self.query_one("#buttons").border_title = "buttons (keyboard)"
        self.refresh_view(force=True)
        if self.startup_error is None:
            self.set_interval(self.TICK_S, self.on_tick)

    def on_tick(self):
        self.sim.tick()
        try:
            self.refresh_view()
        except NoMatches:  # a last tick while the screen is being taken down
            pass

    def on_unmount(self):
        self.sim.close()

    def refresh_view(self, force=False):
        sim = self.sim
        if self.startup_error is not None:
            self.query_one("#info", Static).update(Text("%s (simulated)" % sim.board))
            self.query_one("#error", Static).update(Text("error: " + self.startup_error, style="bold red"))
            self.query_one("#state", Static).update(Text("The simulator cannot run the firmware yet. q quits."))
            self.query_one("#buttons", ButtonsView).show(None, self.long_armed, self._colours)
            return
        shown = (tuple(sim.pixels()), sim.ring_label(), tuple(sim.describe()), sim.hint(), sim.error_text(), sim.pressed(),
                 self.long_armed, tuple(sim.history), sim.link_path, sim.link_note, sim.brightness())
        if shown == self._shown and not force:
            return
        self._shown = shown
        pixels, label, lines, hint, err, held, armed, history, link_path, link_note, bright = shown
        self.query_one("#ring", RingView).set_pixels(list(pixels), label, bright)
        link = ("link: %s" % link_path) if link_path else ("link: none (%s)" % (link_note or "not started"))
        info = Text(no_wrap=True, overflow="ellipsis")  # one line: the board's name is cut first
        if sim.page_url:  # a board with WiFi: its table page (host/board_sim/page.py)
            link += "  page: %s" % sim.page_url
        flash = short_path(sim.state_dir) if sim.state_dir else "in memory"
        room = max(self.size.width - 2, 40)  # the header's padding
        info.append(header(link, getattr(sim.hw, "uid", "?"), bright, flash, "%s (simulated)" % sim.label, room))
        info.stylize("bold", 0, len(link))
        self.query_one("#info", Static).update(info)
        state = Text()
        for k, line in enumerate(lines):
            state.append(line + ("\n" if k < len(lines) - 1 else ""), style="bold" if k == 0 else "")
        self.query_one("#state", Static).update(state)
        self.query_one("#error", Static).update(
            Text("last error: " + err, style="bold red") if err else Text("last error: none", style="dim"))
        self.query_one("#history", Static).update(
            Text("pressed: " + ", ".join(reversed(history[-4:])) if history else "", no_wrap=True, overflow="ellipsis"))
        self.query_one("#buttons", ButtonsView).show(held, armed, self._colours, hint)

    def action_press_button(self, button, kind):
        """A click on a button of the legend."""
        if self.startup_error is None and 0 <= button < 8 and kind in (SHORT, LONG):
            self.sim.press(button, kind)
            self.refresh_view()

    def on_key(self, event):
        key = event.key
        ch = event.character
        if key in ENTER_KEYS:
            ch = " "
        elif key == "space":
            ch = " "
        if ch == LONG_PREFIX:
            self.long_armed = not self.long_armed
            event.stop()
            self.refresh_view()
            return
        if key == "escape":
            self.long_armed = False
            event.stop()
            self.refresh_view()
            return
        hit = KEYMAP.get(ch) if ch else None
        if hit is None:
            return
        button, kind = hit
        if self.long_armed:
            kind = LONG
            self.long_armed = False
        event.stop()
        if self.startup_error is None:
            self.sim.press(button, kind)
        self.refresh_view()

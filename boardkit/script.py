"""Button scripts: a game written as the presses a player would make.

Why: the headless simulator (`bloomkeeper sim --headless --buttons FILE`)
and the tests drive the real App through real (simulated) pins, debounce and
long-press timing included, from a plain text file a human can write.
Format (docs/controls.md):

    # a comment; blank lines are ignored
    ok              short press of a button
    long menu       long press (also: hold menu)
    tulip x3        the same gesture three times (also: long tulip x2)
    wait 500        let 500 ms pass (the ring animates, nothing is pressed)

Buttons: dahlia daffodil globemaster snowdrop tulip undo ok menu.
MicroPython-compatible (no re), so a board could replay a script too.
"""

from firmware.buttons import BUTTONS, SHORT, LONG
from engine_lite.vocab import HOLD_MS

WAIT = -1  # gesture "button" of a wait line
STEP_MS = 5  # the board loop sleeps 5 ms between steps
SHORT_HOLD_MS = 60
LONG_HOLD_MS = HOLD_MS  # > a long press (vocab.LONG_PRESS_MS)
GAP_MS = 60  # released time between gestures (> debounce)
REPEAT_MAX = 999
WAIT_MAX = 600000
TOTAL_MAX = 3600000  # board time (ms) a whole script may take, waits and presses: a 5-player game takes a few minutes


class ScriptError(ValueError):
    def __init__(self, line, message):
        ValueError.__init__(self, "line %d: %s" % (line, message))
        self.line = line
        self.message = message


def parse_line(text, n=0):
    """One line -> (button, kind, count) / (WAIT, ms, 1) / None for blank."""
    i = text.find("#")
    if i >= 0:
        text = text[:i]
    words = text.lower().split()
    if not words:
        return None
    if words[0] == "wait":
        if len(words) != 2 or not _digits(words[1]):
            raise ScriptError(n, "wait needs a number of milliseconds, e.g. wait 500")
        ms = int(words[1])
        if ms > WAIT_MAX:
            raise ScriptError(n, "wait %d is longer than %d ms" % (ms, WAIT_MAX))
        return (WAIT, ms, 1)
    kind = SHORT
    if words[0] in ("long", "hold"):
        kind = LONG
        words = words[1:]
    elif words[0] in ("short", "press"):
        words = words[1:]
    if not words:
        raise ScriptError(n, "a gesture names a button (%s)" % " ".join(BUTTONS))
    if words[0] not in BUTTONS:
        raise ScriptError(n, "unknown button %r (buttons: %s)" % (words[0], " ".join(BUTTONS)))
    b = BUTTONS.index(words[0])
    count = 1
    if len(words) == 2 and words[1][:1] == "x" and _digits(words[1][1:]):
        count = int(words[1][1:])
        if not 1 <= count <= REPEAT_MAX:
            raise ScriptError(n, "repeat count must be 1 to %d" % REPEAT_MAX)
    elif len(words) != 1:
        raise ScriptError(n, "unexpected %r after the button (repeat: x3)" % " ".join(words[1:]))
    return (b, kind, count)


def _digits(s):
    if not s:
        return False
    for c in s:
        if not "0" <= c <= "9":
            return False
    return True


def parse(text):
    """A whole script -> list of gestures; ScriptError names the first bad
    line, and the line where the script's board time passes TOTAL_MAX (a
    file of long waits or repeats within the size cap would run for hours)."""
    out = []
    n = 0
    total = 0
    for line in text.split("\n"):
        n += 1
        g = parse_line(line, n)
        if g is not None:
            total += g[1] if g[0] == WAIT else g[2] * ((LONG_HOLD_MS if g[1] == LONG else SHORT_HOLD_MS) + GAP_MS)
            if total > TOTAL_MAX:
                raise ScriptError(n, "the script's presses and waits pass %d s of board time here: split it" % (TOTAL_MAX // 1000))
            out.append(g)
    return out


def run_for(app, hw, ms):
    """Let `ms` pass on a simulated board, one app.step() per STEP_MS."""
    t = 0
    while t < ms:
        hw.advance(STEP_MS)
        app.step()
        t += STEP_MS


def gesture(app, hw, button, kind):
    """Press and release a simulated button like a finger would."""
    hw.press(button)
    run_for(app, hw, LONG_HOLD_MS if kind == LONG else SHORT_HOLD_MS)
    hw.release(button)
    run_for(app, hw, GAP_MS)


def play(app, hw, gestures):
    """Run parsed gestures through the App on a SimHW."""
    for g in gestures:
        if g[0] == WAIT:
            run_for(app, hw, g[1])
            continue
        for _ in range(g[2]):
            gesture(app, hw, g[0], g[1])

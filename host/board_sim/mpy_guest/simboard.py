"""The simulated board inside the MicroPython Unix port (host/board_sim/micropython_board.py).

Runs next to the firmware bundle (the exact `make firmware` .mpy files) and
this directory's `machine` and `neopixel`. It builds the board as
firmware/main.py does, on the MicroPython backend (firmware/hw_mp.py), with
the flash Store on a real directory, the serial link on a port whose bytes
travel in this protocol, and a clock the host sets. Then it serves the
protocol on stdin/stdout until `x` or end of input.

Usage: micropython simboard.py BOARD FLASH_DIR BOARD_ID FW_VERSION UID [PAGE_PORT]

With PAGE_PORT (a board with WiFi), the board's table server
(firmware/table_server.py) listens on 127.0.0.1:PAGE_PORT and is polled
after every App.step(), as on the Pico W.

Protocol: the host sends one command per line; every reply is some lines
and then a line with a single `.`.

  p I / r I      press / release button I (BUTTONS order): its pin goes 0 / 1
  s MS           set the clock to MS, run one App.step()
  w MS           let MS pass: clock + 5 ms and one App.step(), MS/5 times
  l HEX          bytes from the host arrive on the board's serial port
  e K HEX        load a record as if played: K = n (new game), a (apply),
                 u (undo); replies O 1 (accepted) or O 0 (refused)
  d              the screen in words (boardkit/app_words.py describe): D lines
  g              the current (else the last) game: G HEX per record, J state
  x              exit

Every reply also carries: P HEX (the 24 pixels as RGB, when the strip was
written), L HEX (bytes the board sent on its serial port), K WHY (the ring
blinked its error; WHY = the rules' refusal, if any: its stable code, a
space, then why in a player's words, boardkit/app_words.py), E TEXT (a firmware
exception, caught so the simulator keeps running), then S SCREEN and
B BRIGHTNESS; W LINE for each request the table server refused.
"""

import binascii
import json
import sys
import time

STEP_MS = 5


class Port:
    """The board's serial port: host bytes in, board bytes out (firmware/link.py port)."""

    def __init__(self):
        self.inp = bytearray()
        self.out = bytearray()

    def read(self, n):
        if not self.inp:
            return None
        data = bytes(self.inp[:n])
        self.inp = self.inp[n:]
        return data

    def write(self, data):
        self.out.extend(data)


class Board:
    def __init__(self, board, root, board_id, fw, uid, page_port=0):
        import machine
        from firmware.hw import make_hw
        from firmware.storage import Store
        from firmware.app import App
        from firmware import link

        self.now = 0
        self.refusal = None
        sim = self

        class ObservedStore(Store):
            # The real Store; a refusal by the rules is noted for the host's
            # "last error" line, then raised on unchanged (as host/board_sim/board.py).
            def apply(self, game, rec, later=False):
                try:
                    return Store.apply(self, game, rec, later)
                except Exception as err:
                    sim.refusal = sim.words(err)
                    raise

            def undo(self, game):
                try:
                    return Store.undo(self, game)
                except Exception as err:
                    sim.refusal = sim.words(err)
                    raise

        machine.UID = uid.encode()
        self.hw = make_hw(board)
        self.hw.uid = uid  # the simulator's id as it is, like the CPython runtime's (not hexlified)
        self.hw.set_utc(int(time.time()))  # the simulator uses the host's clock (the Unix port's is)
        self.store = ObservedStore(root)
        self.port = Port()
        self.link = link.Link(None, self.port)
        self.app = App(self.hw, self.store, clock=self.clock, link=self.link)
        link_board = link.AppBoard(self.app, self.store, board_id=board_id, fw=fw)
        link_board.remote_buttons = True  # simulator only: the host may press buttons over the link
        self.link.attach(link_board)
        self.writes = -1
        self.page = None
        self.page_lines = []
        if page_port:
            from firmware.table_server import TableServer

            self.page = TableServer(self.app, "127.0.0.1", page_port, log=self.page_lines.append, board=board)

    def clock(self):
        return self.now

    def words(self, err):
        """A refusal for the K line: its stable code, then why in a player's
        words (boardkit/app_words.py, as the CPython runtime says it), else
        the engine's own message."""
        code = getattr(err, "code", type(err).__name__)
        try:
            from boardkit import app_words

            why = app_words.player_refusal(self.app, err)
        except Exception:
            why = str(err)
        return "%s %s" % (code, " ".join(str(why).split()))

    def step(self, out):
        view = self.app.view
        blink = view.error_at
        self.refusal = None
        try:
            self.app.step()
            if self.page is not None:
                self.page.poll()
        except Exception as err:
            out.append("E %s: %s" % (type(err).__name__, " ".join(str(err).split())))
        while self.page_lines:
            out.append("W " + self.page_lines.pop(0))
        if view.error_at != blink:
            out.append("K " + (self.refusal or ""))

    def load(self, kind, rec):
        app = self.app
        if kind == "n":
            app.new_game(rec)
            return True
        if kind == "u":
            return app.undo()
        return app.apply(rec)

    def game_lines(self, out):
        app = self.app
        g = app.game if app.game is not None else app.last_game
        if g is None:
            out.append("J " + json.dumps({"game": None}))
            return
        for rec in g.log.records():
            out.append("G " + binascii.hexlify(bytes(rec)).decode())
        out.append("J " + json.dumps(g.state()))

    def report(self, out):
        strip = self.hw.strip
        if strip.writes != self.writes:
            self.writes = strip.writes
            buf = strip.buf
            rgb = bytearray(len(buf))
            for i in range(0, len(buf), 3):  # GRB on the wire -> RGB
                rgb[i] = buf[i + 1]
                rgb[i + 1] = buf[i]
                rgb[i + 2] = buf[i + 2]
            out.append("P " + binascii.hexlify(rgb).decode())
        if self.port.out:
            out.append("L " + binascii.hexlify(self.port.out).decode())
            self.port.out = bytearray()
        out.append("S " + str(self.app.screen))
        out.append("B %d" % self.app.view.brightness)


def serve(b):
    write = sys.stdout.write
    out = ["T %d %d" % (b.app.buttons.debounce_ms, b.app.buttons.long_ms)]
    b.report(out)
    write("\n".join(out) + "\n.\n")
    while True:
        line = sys.stdin.readline()
        if not line:
            return
        words = line.split()
        if not words:
            continue
        cmd = words[0]
        out = []
        try:
            if cmd == "p":
                b.hw.pins[int(words[1])].level = 0
            elif cmd == "r":
                b.hw.pins[int(words[1])].level = 1
            elif cmd == "s":
                b.now = int(words[1])
                b.step(out)
            elif cmd == "w":
                t = 0
                while t < int(words[1]):
                    b.now += STEP_MS
                    b.step(out)
                    t += STEP_MS
            elif cmd == "l":
                b.port.inp.extend(binascii.unhexlify(words[1]))
            elif cmd == "e":
                ok = b.load(words[1], binascii.unhexlify(words[2]) if len(words) > 2 else None)
                out.append("O %d" % (1 if ok else 0))
            elif cmd == "d":
                from boardkit import app_words

                for text in app_words.describe(b.app):
                    out.append("D " + str(text))
            elif cmd == "g":
                b.game_lines(out)
            elif cmd == "x":
                return
            else:
                out.append("E unknown command %r" % cmd)
        except Exception as err:
            out.append("E %s: %s" % (type(err).__name__, " ".join(str(err).split())))
        b.report(out)
        write("\n".join(out) + "\n.\n")


if __name__ == "__main__":
    serve(Board(sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5], int(sys.argv[6]) if len(sys.argv) > 6 else 0))

"""The host's side of the serial link (docs/protocol.md).

`connect(port)` opens the port (`auto` = find the board by USB VID:PID
2E8A:0005 and its hello), says hello, checks the protocol version and sets
the board's clock.
`HostLink` sends requests and waits for the reply with the same sequence
number; every read has a timeout (`read_timeout`), every request a
deadline with retries, and the whole exchange a cap (`cap` seconds): the
host never hangs. Every failure is a `host.errors.UserError` with one line.
"""

import errno
import random
import sys
import time
from collections import deque

import serial
from serial.tools import list_ports

from firmware import codec
from host.errors import UserError
from host.sync import codec_host
from host.io_util import show

VID = 0x2E8A  # Raspberry Pi
PID = 0x0005  # MicroPython on RP2040
BAUD = 115200


class BoardError(UserError):
    """The board answered with an error reply ('X'): nothing changed on it."""

    def __init__(self, op, reply):
        self.code = reply.get("code", "?")
        self.reply = reply
        UserError.__init__(self, "board refused %s: %s (%s)" % (op, reply.get("msg", ""), self.code))


class NoAnswer(UserError):
    """No (readable) answer within the request's retries."""


def peer_error(op, what, name="board"):
    """An answer whose fields are missing or odd: one line. What a board
    sends is data, checked before use (a mismatched firmware, a damaged
    flash or a hostile device must not crash the host)."""
    return UserError("%s: odd answer to %s (%s): firmware and host tool do not match?" % (show(name), op, what))


def _short_text(info, key, required):
    v = info.get(key)
    if v is None and not required:
        return
    if type(v) is not str or not 0 < len(v) <= 64:
        raise peer_error("hello", "%s %s" % (key, "missing" if v is None else "is not a short string"))


class HostLink:
    def __init__(self, ser, name="board", read_timeout=0.05, request_timeout=1.0, cap=60.0, retries=3):
        self.ser = ser
        self.name = name
        ser.timeout = read_timeout
        self.request_timeout = request_timeout
        self.retries = retries
        self.deadline = time.monotonic() + cap
        self.cap = cap
        self.rx = codec.Deframer(max_payload=4096)
        self.seq = random.randrange(1, 0xFFFF)
        self.pushes = deque()
        self.chunk = 0xFFFF  # most payload bytes asked per events answer (halved on a noisy line)
        self.info = None
        self.clock = None  # (host time, the board's answer) of the clock set on this connection (set_clock)
        self.bytes_in = 0
        self.bytes_out = 0

    # -- transport ---------------------------------------------------------
    def _check_cap(self):
        if time.monotonic() > self.deadline:
            raise UserError("%s: gave up after %.0f s (the exchange is capped; try again)" % (self.name, self.cap))

    def _write(self, data):
        try:
            self.ser.write(data)
            self.bytes_out += len(data)
        except (serial.SerialException, OSError) as err:
            raise UserError("%s: lost the connection (%s)" % (self.name, _why(err)))

    def _read(self):
        """One read (at most read_timeout): the payloads it completed."""
        try:
            data = self.ser.read(max(1, getattr(self.ser, "in_waiting", 0) or 0))
        except (serial.SerialException, OSError) as err:
            raise UserError("%s: lost the connection (%s)" % (self.name, _why(err)))
        self.bytes_in += len(data)
        return self.rx.feed(data) if data else []

    def _next_seq(self):
        self.seq = self.seq % 0xFFFF + 1
        return self.seq

    def send(self, op, seq, **args):
        args["op"] = op
        self._write(codec_host.request(seq, args))

    def call(self, op, retry=True, timeout=None, **args):
        """Send a request, return its answer: a dict ('R') or bytes ('E').
        An 'X' reply raises BoardError. Timeouts retry (if `retry`)."""
        tries = self.retries if retry else 1
        for _ in range(tries):
            self._check_cap()
            seq = self._next_seq()
            self.send(op, seq, **args)
            end = min(time.monotonic() + (timeout or self.request_timeout), self.deadline)
            while time.monotonic() < end:
                answer = None
                for kind, got, value in self._replies():  # every payload of the read: a push may follow the answer
                    if kind == codec.K_PUSH:
                        self.pushes.append(value)
                    elif answer is None and got == seq:
                        answer = (kind, value)
                if answer is not None:
                    if answer[0] == codec.K_ERR:
                        raise BoardError(op, answer[1])
                    return answer[1]
        self._check_cap()
        raise self.no_answer(op, tries, timeout or self.request_timeout)

    def no_answer(self, op, sent, each):
        """The line for `sent` requests `op` in a row that got no answer
        within `each` seconds, saying what that means: before any hello
        answered, the app may not run (or the board is still starting);
        after one, the app runs and the board was too slow or the line
        dropped."""
        said = "%s: %d %s request%s in a row went unanswered (%g s each)" % (self.name, sent, op, "" if sent == 1 else "s", each)
        if self.info is None:
            return NoAnswer(said + ": is the Bloomkeeper app running (not the REPL)? A board just plugged in or reset "
                            "needs a few seconds before it answers: try again")
        return NoAnswer(said + ": the board answered before, so its app runs; it was too slow or the line dropped "
                        "(a loose cable?): try again")

    def _replies(self):
        """(kind, seq, value) of each payload one read completed (codec_host.parse_reply);
        a damaged or unreadable one is skipped: a late answer is waited for
        again, a lost live event is a gap the follower sees and refetches."""
        out = []
        for p in self._read():
            try:
                out.append(codec_host.parse_reply(p))
            except ValueError:  # codec.FrameError, or a game id that is not UTF-8
                pass
        return out

    # -- requests ------------------------------------------------------------
    def hello(self):
        self._write(b"\x00\x00")  # end whatever half frame the board holds
        info = self.call("hello")
        if type(info) is not dict:
            raise peer_error("hello", "not an object", self.name)
        if info.get("proto") != codec.PROTO:
            raise UserError(
                "%s speaks link protocol %s, this bloomkeeper speaks %d: update the firmware or the host tool"
                % (show(self.name), show(str(info.get("proto")))[:20], codec.PROTO)
            )
        _short_text(info, "board", True)
        _short_text(info, "id", False)
        self.info = info
        return info

    def set_clock(self):
        """Set the board's clock to the host's (unix seconds UTC): done
        whenever the host talks to a board, so games started later carry
        their real date. Firmware without board ids has no clock request.
        The answer's uptime is checked: it dates games back (db.start_date)."""
        if self.clock is not None:  # set once per connection: connect() did, sync's board_of reads it
            return self.clock[1]
        if self.info and self.info.get("id"):
            t = time.time()
            ans = self.call("time", set=int(t))
            up = ans.get("up") if type(ans) is dict else None
            if up is not None and (type(up) is not int or not 0 <= up <= 0xFFFFFFFF):
                raise peer_error("time", "up is not a whole number of seconds", self.name)
            self.clock = (t, ans if type(ans) is dict else {})
            return self.clock[1]
        return None

    def events(self, gid, start, limit=None):
        """(start, total, board's prefix crc of records[:start], [records]);
        `limit`: payload bytes to ask for at most (16: just one record)."""
        for i in range(self.retries):
            try:
                cap = self.chunk if limit is None else max(16, min(limit, self.chunk))
                body = self.call("events", retry=False, game=gid, max=cap, **{"from": start})
                break
            except NoAnswer:
                if i == self.retries - 1:
                    raise self.no_answer("events", self.retries, self.request_timeout)  # all of them, not the last one's 1
                self.chunk = max(32, self.chunk // 2)  # a noisy line: smaller frames get through
        try:
            got, start, total, pcrc, recs = codec_host.parse_events(body)
            if got != gid:
                raise ValueError("answer for another game")
            return start, total, pcrc, recs
        except ValueError as err:
            raise UserError("%s: malformed events answer (%s): firmware and host tool do not match?" % (self.name, err))

    def games(self):
        return self.call("games")

    def status(self):
        ans = self.call("status")
        if type(ans) is not dict:
            raise peer_error("status", "not an object", self.name)
        return ans

    def mark_synced(self, gid):
        return self.call("mark_synced", game=gid)

    def subscribe(self, on=True):
        return self.call("subscribe", on=on)

    def settings(self, new=None):
        ans = self.call("settings") if new is None else self.call("settings", set=new)
        s = ans.get("settings") if type(ans) is dict else None
        if type(s) is not dict:
            raise peer_error("settings", "settings is not an object", self.name)
        return s

    def confirmed(self, op, **args):
        """A dangerous request: ask, receive the one-time token, send it back."""
        try:
            return self.call(op, retry=False, **args)
        except BoardError as err:
            if err.code != "confirm":
                raise
            return self.call(op, retry=False, confirm=err.reply["token"], **args)

    def wait_push(self, timeout):
        """The next live event (gid, index, record), or None after `timeout`."""
        end = time.monotonic() + timeout
        while not self.pushes and time.monotonic() < end:
            for kind, _, value in self._replies():
                if kind == codec.K_PUSH:
                    self.pushes.append(value)
        return self.pushes.popleft() if self.pushes else None

    def close(self):
        try:
            self.ser.close()
        except Exception:
            pass


def _why(err):
    return " ".join(str(getattr(err, "strerror", None) or err).split()) or type(err).__name__


def _busy(err):
    text = str(err).lower()
    return getattr(err, "errno", None) in (errno.EBUSY, errno.EAGAIN) or "lock" in text or "busy" in text


def _denied(err):
    """EACCES/EPERM: this user may not open the port (not: someone else has it)."""
    return getattr(err, "errno", None) in (errno.EACCES, errno.EPERM) or "permission denied" in str(err).lower()


def open_serial(path, baud=BAUD):
    """pyserial port for PATH or URL, with one-line errors (busy, missing)."""
    try:
        if "://" in path:
            return serial.serial_for_url(path, baudrate=baud, timeout=0.05)
        return serial.Serial(path, baudrate=baud, timeout=0.05, exclusive=True)
    except (serial.SerialException, OSError, ValueError) as err:
        if _denied(err):
            raise UserError("port %s: permission denied: this user may not open it (on Linux: join the group that owns it, "
                            "often dialout: `sudo usermod -aG dialout $USER`, then log in again)" % path)
        if _busy(err):
            raise UserError("port %s is busy: another program has it open (mpremote, a serial monitor, another bloomkeeper?)" % path)
        if getattr(err, "errno", None) == errno.ENOENT or "no such file" in str(err).lower():
            raise UserError("no such port %s (see `--port auto`)" % path)
        raise UserError("cannot open %s: %s" % (path, _why(err)))


# Adafruit's USB vendor id: CircuitPython boards. Their boot.py (the bundle's)
# enables a second CDC interface, the data channel, which carries the link;
# the first is the REPL console, which the link never uses.
CP_VID = 0x239A


def is_circuitpython_data(port):
    """A CircuitPython board's data channel: its interface is named
    "CircuitPython CDC2 ..." (the console is "CircuitPython CDC ..."); where
    the system gives no interface name (Windows), the USB location's
    interface number 2 (the second CDC's first interface)."""
    if port.vid != CP_VID:
        return False
    if port.interface:
        return port.interface.startswith("CircuitPython CDC2")
    return (port.location or "").endswith(".2")


def micropython_ports():
    """Picos running MicroPython (VID:PID 2E8A:0005): the ones `flash` can update."""
    return sorted(p.device for p in list_ports.comports() if p.vid == VID and p.pid == PID)


def candidate_ports():
    """Every USB serial port a board's link may be on: MicroPython Picos and
    CircuitPython boards' data channels (`--port auto` asks each one's hello)."""
    ports = list_ports.comports()
    return sorted(p.device for p in ports if (p.vid == VID and p.pid == PID) or is_circuitpython_data(p))


def connect(port="auto", cap=60.0, request_timeout=1.0):
    """A HostLink to the board, hello done."""
    if port in (None, "", "auto"):
        return discover(cap=cap, request_timeout=request_timeout)
    link = HostLink(open_serial(port), name=port, cap=cap, request_timeout=request_timeout)
    try:
        link.hello()
        link.set_clock()
    except UserError:
        link.close()
        raise
    return link


def discover(cap=60.0, request_timeout=1.0, ports=None):
    """`--port auto`: a board plugged in by USB, else a running simulator
    (it publishes its pseudo-terminal: host/runtime.py); says on stderr
    which one it chose."""
    sims = {}  # a simulator's pty -> the board id it published: used only if its hello gives that id
    if ports is None:
        ports = candidate_ports()
        if not ports:
            from host import runtime

            sims = dict(runtime.running_sims())  # each checked against its process first (host/runtime.py)
            ports = list(sims)
    if not ports:
        raise UserError("no board found: no USB serial device with VID:PID 2E8A:0005 (MicroPython Pico) nor a CircuitPython "
                        "board's data channel (VID 239A), and no running simulator (plugged in? or give --port PATH)")
    found, busy, silent, denied, other = [], [], [], [], []
    for dev in ports:
        try:
            link = HostLink(open_serial(dev), name=dev, cap=cap, request_timeout=request_timeout, retries=2)
        except UserError as err:
            (denied if "permission denied" in str(err) else busy if "busy" in str(err) else silent).append(dev)
            continue
        try:
            link.hello()
        except UserError:
            link.close()
            silent.append(dev)
            continue
        if dev in sims and link.info.get("id") != sims[dev]:  # not the simulator that published it: nothing more is sent
            link.close()
            other.append(dev)
            continue
        found.append(link)
    if len(found) == 1:
        try:
            found[0].set_clock()
        except UserError:
            found[0].close()
            raise
        sys.stderr.write("bloomkeeper: --port auto: %s\n" % (
            ("the simulator on %s (no board is plugged in)" if sims else "the board on %s") % found[0].name))
        return found[0]
    for link in found:
        link.close()
    if len(found) > 1:
        raise UserError("several boards found (%s): choose one with --port" % ", ".join(x.name for x in found))
    if denied and not busy and not silent:
        raise UserError("port %s: permission denied: this user may not open it (on Linux: join the group that owns it, "
                        "often dialout: `sudo usermod -aG dialout $USER`, then log in again)" % denied[0])
    if busy:
        raise UserError("the board on %s is busy: another program has it open (mpremote, a serial monitor?)" % busy[0])
    if other and not silent:
        raise UserError("no board found: the simulator registered on %s answers as another board: not used "
                        "(give --port PATH to choose it)" % ", ".join(other))
    raise UserError("%s does not answer the hello: is the Bloomkeeper app running (not the REPL)? A board just plugged in "
                    "or reset needs a few seconds before it answers: try again" % ", ".join(silent))

"""`bloomkeeper wifi`: the Pico W's network, kept in the board's settings.

* `bloomkeeper wifi`: what the board uses now: its own access point (the
  name and password printed on its reference card: derived from its unique
  id, firmware/wifi.py default_ap) or the network it joins (name only: the
  board never sends a password back).
* `bloomkeeper wifi ap [--ssid NAME --password PW]`: its own access point;
  without a name and password, the card's again.
* `bloomkeeper wifi join --ssid NAME --password PW`: join the table's network.

The board takes the change at its next power-up (docs/phones.md). A name or
password the board would refuse is one line here, and nothing is sent.
"""

from host import pages
from host.commands import options
from host.errors import UserError


def _check(ssid, password):
    from firmware.link import LinkError, check_wifi  # the board's own rule, one place

    try:
        return check_wifi({"mode": "join", "ssid": ssid, "password": password})
    except LinkError as err:
        raise UserError(str(err))


def wifi_cmd(args):
    from firmware.wifi import default_ap
    from host.sync.link import connect

    new = None
    if args.action == "ap":
        if (args.ssid is None) != (args.password is None):
            raise UserError("wifi ap: give both --ssid and --password, or neither (the card's name and password)")
        new = {"mode": "ap"} if args.ssid is None else dict(_check(args.ssid, args.password), mode="ap")
    elif args.action == "join":
        if args.ssid is None or args.password is None:
            raise UserError("wifi join: give --ssid and --password of the network to join")
        new = _check(args.ssid, args.password)
    link = connect(args.port, cap=args.timeout)
    try:
        s = link.settings(None if new is None else {"wifi": new})
        uid = (link.info or {}).get("id")
    finally:
        link.close()
    w = s.get("wifi") if type(s.get("wifi")) is dict else {"mode": "ap"}
    if w.get("mode") == "join":
        print("joins the network %s (its password is kept on the board, never shown)" % w.get("ssid"))
    elif w.get("ssid"):
        print("its own access point %s (the password you set; kept on the board, never shown)" % w["ssid"])
    elif uid:
        name, password = default_ap(str(uid))
        print("its own access point %s, password %s (as on its reference card)" % (name, password))
    else:
        print("its own access point (the name and password on its reference card)")
    if new is not None:
        print("saved on the board: it takes effect at its next power-up")
    return 0


def register(sub):
    p = sub.add_parser(
        "wifi", help="the Pico W's WiFi: its own access point (default) or a network to join",
        description="Show or change the Pico W's network, kept in the board's settings (the password is never "
        "sent back). Without an action: what it uses. `ap`: its own access point (the reference card's name "
        "and password, or --ssid/--password); `join`: the table's network. Taken at the next power-up; phones "
        "then open http://192.168.4.1/ on its access point (%s)." % pages.ref("phones"))
    p.add_argument("action", nargs="?", choices=("ap", "join"), help="ap = its own access point; join = a network")
    p.add_argument("--ssid", help="network name, 1-32 printable ASCII characters")
    p.add_argument("--password", help="network password, 8-63 printable ASCII characters (WPA2)")
    options.port(p)
    options.timeout(p, 10.0)
    p.set_defaults(func=wifi_cmd)

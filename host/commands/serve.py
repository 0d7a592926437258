"""`bloomkeeper serve [--db FILE] [--port auto|PATH|none] [--http HOST:PORT]`.

The web server starts first (a port in use is one line and nothing else
starts); then the board thread looks for the board. Loopback by default:
listening anywhere else is an explicit --http choice, and said so.
"""

import sys

from host.commands import options
from host.dashboard import store, views
from host.dashboard.live import Live

LOOPBACK = ("127.0.0.1", "localhost", "::1")


def serve_cmd(args):
    from host.dashboard.server import make_server, parse_http  # the event loop's imports: for serve only

    db = store.open_db(args.db, readonly=True)  # a database that cannot be opened is one line, before anything starts
    db_path = db.path
    db.close()
    board = args.port != "none"
    link = "connecting" if board else "none"
    live = Live(views.live_state(link, "", None, "", False, []))
    server = make_server(args.http, live, db_path)
    host, port = server.server_address[:2]
    print("serving http://%s:%d/  (board: %s, plays: %s)" % ("[%s]" % host if ":" in host else host, port,
                                                            args.port if board else "none", db_path))
    if parse_http(args.http)[0] not in LOOPBACK:
        print("note: listening on %s: every machine that can reach it sees the page" % host)
    sys.stdout.flush()
    watcher = None
    if board:
        from host.dashboard.board import BoardWatcher

        watcher = BoardWatcher(args.port, db_path, live)
        server.names = watcher.requests.submit
        watcher.start()
    try:
        server.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass  # Ctrl-C is how one stops the server
    finally:
        if watcher is not None:
            watcher.stop.set()
            watcher.join(5)
        server.server_close()
    return 0


def register(sub):
    p = sub.add_parser("serve", help="the live table and the plays history in a web browser")
    options.db(p)
    options.port(p, none="history only")
    p.add_argument("--http", default="127.0.0.1:8765", metavar="HOST:PORT",
                   help="where to listen (default 127.0.0.1:8765, this machine only; port 0 = any free port)")
    p.set_defaults(func=serve_cmd)

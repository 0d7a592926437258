"""`bloomkeeper docs [TOPIC] [--path]`: the documentation pages.

The pages ship inside the package (host/pages.py), so a wheel or pipx user
reads the same pages as a clone: without a topic the list, with one the
page on stdout (pipe it to a pager), with --path where its file is.
"""

from host import pages
from host.errors import UserError


def docs_cmd(args):
    if not args.topic:
        width = max(len(t) for t in pages.SOURCES)
        for topic in sorted(pages.SOURCES):
            print("%-*s  %s" % (width, topic, pages.path(topic) or "(not in this install)"))
        return 0
    p = pages.path(args.topic)
    if p is None:
        if args.topic in pages.SOURCES:
            raise UserError("the page %s is not in this install (reinstall bloomkeeper)" % args.topic)
        raise UserError("no page %r: the pages are %s" % (args.topic, ", ".join(sorted(pages.SOURCES))))
    if args.path:
        print(p)
        return 0
    with open(p, encoding="utf-8") as f:
        print(f.read(), end="")
    return 0


def register(sub):
    p = sub.add_parser("docs", help="show a documentation page (they ship with bloomkeeper)")
    p.add_argument("topic", nargs="?", metavar="TOPIC", help="the page: %s" % ", ".join(sorted(pages.SOURCES)))
    p.add_argument("--path", action="store_true", help="print where the page's file is, not the page")
    p.set_defaults(func=docs_cmd)

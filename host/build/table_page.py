"""The table page (host/dashboard/table.html, the one page the board's
server and the host dashboard both serve) as a board module,
firmware/table_page.py: its bytes and their gzip, so that the Pico W serves
both from flash (a frozen bytes constant stays in flash) and never
compresses anything itself.

    python -m host.build.table_page        rewrite firmware/table_page.py

tests/packaging/test_table_page.py holds the module equal to what this
writes from the page, so the two never drift apart.
"""

import gzip
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "host" / "dashboard" / "table.html"
MODULE = ROOT / "firmware" / "table_page.py"


def module_text(page_bytes):
    gz = gzip.compress(page_bytes, 9, mtime=0)  # mtime 0: the same page, the same bytes
    return (
        '"""The table page and its gzip, written by host/build/table_page.py from\n'
        'host/dashboard/table.html (edit the page, then run\n'
        '`python -m host.build.table_page`): %d bytes, %d gzipped."""\n\n'
        "PAGE = %r\n\nPAGE_GZ = %r\n" % (len(page_bytes), len(gz), page_bytes, gz)
    )


def main():
    MODULE.write_text(module_text(PAGE.read_bytes()))
    print("wrote %s" % MODULE.relative_to(ROOT))


if __name__ == "__main__":
    main()

"""firmware/table_page.py is what host/build/table_page.py writes from the
one table page (host/dashboard/table.html): the board and the dashboard
serve the same bytes, and the board's gzip is that page's."""

import gzip

from firmware import table_page
from host.build import table_page as writer


def test_the_board_module_is_written_from_the_page():
    assert writer.MODULE.read_text() == writer.module_text(writer.PAGE.read_bytes()), (
        "host/dashboard/table.html changed: run `python -m host.build.table_page`")


def test_the_gzip_is_the_page():
    assert gzip.decompress(table_page.PAGE_GZ) == table_page.PAGE == writer.PAGE.read_bytes()


def test_the_page_needs_nothing_from_the_internet():
    page = table_page.PAGE.decode()
    for needle in ("http://", "https://", "//cdn", "@import", "<link"):
        assert needle not in page, needle

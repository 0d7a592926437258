"""A real headless Chromium for the browser tests (Debian's `chromium` and
`chromium-driver`, driven by selenium; .ci/run installs them): the one place
that knows where they are, the flags this closed network needs (no
background connections, a fresh profile) and how to start one.

    pytestmark = [pytest.mark.browser, chromium.needed]
    d = chromium.start(tmp_path, (390, 844)); ...; d.quit()
"""

import os

import pytest

CHROMIUM = "/usr/bin/chromium"
DRIVER = "/usr/bin/chromedriver"
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync")

needed = pytest.mark.skipif(
    not (os.access(CHROMIUM, os.X_OK) and os.access(DRIVER, os.X_OK)),
    reason="Chromium not installed (Debian packages chromium and chromium-driver; .ci/run installs them)",
)


def start(tmp_path, size):
    """A headless Chromium with a fresh profile under tmp_path and a window
    of `size` (width, height) CSS pixels; the caller quits it."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for f in FLAGS:
        opts.add_argument(f)
    opts.add_argument("--user-data-dir=%s" % (tmp_path / "chromium-profile"))
    opts.add_argument("--window-size=%d,%d" % size)
    d = webdriver.Chrome(options=opts, service=Service(DRIVER))
    d.set_page_load_timeout(30)
    return d

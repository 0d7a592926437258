"""Six phones follow a whole game of each title on the board's own table
page: the server is the board's (firmware/table_server.py) inside the real
MicroPython Unix port (a simulated Pico W, host/board_sim/micropython_board.py),
the phones are six tabs of a real headless Chromium in a phone-sized window.

The record is played into the board one event at a time, as if pressed;
every few events each tab must show the board's newest state (its version,
the numbers it names and the round so far), and at the end every tab shows the final scores,
the winner and the tie-break reasons. A screenshot of each title's final
screen is left under build/table-page/ (docs/table-page/ holds copies).
"""

import json
import os
import threading
import time
import urllib.request

import pytest

from tests.kit import chromium
from tests.kit.mpy_harness import REPO

SHOTS = os.path.join(REPO, "build", "table-page")
PHONE = (390, 844)  # a phone's CSS viewport
TABS = 6
CHECK_EVERY = 8  # events between two looks at every tab

pytestmark = [
    pytest.mark.browser,
    pytest.mark.mpy,
    chromium.needed,
]


@pytest.fixture
def browser(tmp_path):
    d = chromium.start(tmp_path, PHONE)
    yield d
    d.quit()


class Ticker(threading.Thread):
    """The simulated board's loop: a tick every 5 ms, as the simulator runs
    it, while the browser loads and waits; `lock` keeps the test's own
    loads of events between two ticks."""

    def __init__(self, sb):
        threading.Thread.__init__(self, daemon=True)
        self.sb = sb
        self.lock = threading.Lock()
        self.stop = threading.Event()

    def run(self):
        while not self.stop.is_set():
            with self.lock:
                self.sb.tick()
            time.sleep(0.005)

    def until(self, pred, what, timeout=30):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if pred():
                return
            time.sleep(0.02)
        raise AssertionError("timed out waiting for %s" % what)


def state(url):
    with urllib.request.urlopen(url + "state.json", timeout=10) as r:
        return json.loads(r.read())


def shown(d, sel):
    return d.execute_script("return Array.from(document.querySelectorAll(arguments[0])).map(e => [e.getAttribute(arguments[1]), e.textContent])",
                            sel, sel.strip("[]"))


@pytest.mark.parametrize("record", ["stalk-5p-crash.jsonl", "orchids-5p.jsonl"])
def test_six_phones_follow_a_whole_game_to_its_final_scores(browser, record):
    import engine_lite
    from host.board_sim.micropython_board import start_board
    from host.board_sim.serve_record import record_events

    d = browser
    events = record_events(os.path.join(REPO, "tests", "records", record))
    sb = start_board("pico_w", link=False)
    t = None
    try:
        assert sb.page_url
        t = Ticker(sb)
        t.start()
        tabs = []
        for i in range(TABS):
            if i:
                d.switch_to.new_window("tab")
            d.get(sb.page_url)
            tabs.append(d.current_window_handle)

        def all_show(v):
            for h in tabs:
                d.switch_to.window(h)
                t.until(lambda: d.execute_script("return document.body.getAttribute('data-v')") == str(v),
                        "tab %s to show state %d" % (h, v))

        enc = engine_lite.Game()
        for i, ev in enumerate(events, 1):
            with t.lock:
                if ev["ev"] == "undo":
                    assert sb.app.load("u")
                    enc.undo()
                else:
                    rec = enc.encode(ev)
                    enc.apply_record(rec)
                    assert sb.app.load("n" if ev["ev"] == "start" else "a", rec)
            if i % CHECK_EVERY == 0 or i == len(events):
                doc = state(sb.page_url)
                all_show(doc["v"])
                st = doc["table"]
                d.switch_to.window(tabs[(i + 1) % TABS])  # the round so far, in words, with whose turn each event was
                said = [x[1] for x in shown(d, "[data-round]")]
                assert doc["round"], "a game with events has a round"
                assert [x.split(": ")[0] for x in said] == [e["who"] for e in doc["round"]] and len(said) == len(doc["round"])
                if doc["round"] and doc["round"][-1]["ev"] == "harvest":
                    assert said[-1].endswith("harvest %d %s" % (doc["round"][-1]["count"], doc["round"][-1]["flower"]))
                if st["game"] == "stalk-exchange" and "final" not in st:
                    d.switch_to.window(tabs[i % TABS])
                    assert dict(shown(d, "[data-flower]")) == {f: str(v) for f, v in st["values"].items()}
                    assert dict(shown(d, "[data-tokens]")) == {n: str(k) for n, k in st["tokens"].items()}
                    assert d.find_element("css selector", "[data-fact=bag]").text == str(st["bag"])
        final = state(sb.page_url)["table"]["final"]
        for h in tabs:
            d.switch_to.window(h)
            assert d.execute_script("return document.body.getAttribute('data-over')") == "final"
            assert dict(shown(d, "[data-score]")) == {p["name"]: str(p["score"]) for p in final["players"]}
            text = d.find_element("css selector", "body").text
            assert "winner: " + [p["name"] for p in final["players"] if p["winner"]][0] in text
            for p in final["players"]:
                if p.get("tiebreak"):
                    assert "tie-break: " + p["tiebreak"] in text
        os.makedirs(SHOTS, exist_ok=True)
        h = d.execute_script("return document.documentElement.scrollHeight")
        d.set_window_size(PHONE[0], max(PHONE[1], h + 140))
        assert d.save_screenshot(os.path.join(SHOTS, "%s-final.png" % final["game"]))
    finally:
        if t is not None:
            t.stop.set()
            t.join(5)
        sb.close()

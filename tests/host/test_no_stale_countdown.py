"""Nothing derived from the table is shown once it no longer means anything:
the crash countdown (`tokens_until_crash`, ruling R1) disappears from every
screen that shows it -- the follow scoreboard and the state the table page
draws (the board's and the dashboard's; the page shows "Crash in" only
while the state has a countdown: tests/host/test_dashboard_browser.py) -- from the event that triggers the end (a counted
crash, a declared one, an empty bag) to the scores. The simulator's words:
tests/host/test_sim_words.py; the ring draws the last-turn light instead
(firmware/ring.py, tests/board/)."""

import pytest

from host.dashboard import views
from host.sync.follow import scoreboard
from tests.kit.dashboard_kit import state_of


@pytest.mark.parametrize("record", ["stalk-5p-crash.jsonl", "stalk-5p-bag.jsonl"])
def test_every_screen_drops_the_countdown_from_the_trigger_on(record):
    total = len(state_of(record).events())
    seen_trigger = seen_countdown = 0
    for cut in range(total - 1, -1, -1):
        g = state_of(record, cut=cut)
        st = g.state()
        board, doc = scoreboard(g), views.table_doc(st)
        if st["end_triggered"]:
            seen_trigger += 1
            assert st["tokens_until_crash"] is None
            assert "crash in" not in board, board
            assert doc["tokens_until_crash"] is None
        else:
            seen_countdown += 1
            assert "crash in %d harvested token" % st["tokens_until_crash"] in board
            assert doc["tokens_until_crash"] == st["tokens_until_crash"]
    assert seen_trigger and seen_countdown  # both sides of the trigger were looked at

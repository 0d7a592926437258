"""One start stamp: a start record that already carries its start time
(`at`), its uptime or its nonce keeps them and is never stamped again.

A game played elsewhere and loaded into a board (`sim --record`, the link's
new_game request) arrives with its own start fields; a second stamp would
append a nonce and a time after the ones already there, and the host would
read the start date from the wrong bytes (a game of 2026-11-29 dated 2077).
Every path that hands a start record to a board goes through
firmware.hw.stamp (App.new_game, which the link's new_game op and
`sim --record` call), so the stamp itself is tested, then each path.
"""

from engine_lite import record, stamp as jstamp

import host.sync.db
from firmware.hw import stamp
from host.board_sim import serve_record
from tests.kit.app_helpers import Board

AT = "2026-11-29T19:30:00Z"


class Clock:
    def utc(self):
        return 1796068200  # 2026-11-30T19:50:00Z: not the game's own date

    def uptime(self):
        return 77


def start(**extra):
    ev = {"ev": "start", "game": "oh-my-orchids", "players": ["Ann", "Bo"]}
    ev.update(extra)
    return record.encode_start(ev)


def test_a_start_with_its_own_time_keeps_it_and_gets_no_second_stamp():
    for fields in ({"at": AT}, {"uptime": 12}, {"nonce": 5}, {"nonce": 5, "at": AT}, {"nonce": 5, "uptime": 12}):
        rec = start(**fields)
        assert stamp(rec, Clock()) == rec, fields


def test_an_unstamped_start_is_stamped_once():
    rec = stamp(start(), Clock())
    nonce, at, up = jstamp.fields(rec)
    assert nonce is not None and jstamp.iso(at) == "2026-11-30T19:50:00Z" and up is None
    assert stamp(rec, Clock()) == rec


def test_the_board_writes_the_flags_the_host_reads():
    """firmware/hw.py names the flags as private consts (folded into the
    board's code, where engine_lite/stamp.py is not): they are stamp.py's,
    and an unknown clock stamps the uptime."""
    import firmware.hw

    assert (firmware.hw._F_NONCE, firmware.hw._F_AT, firmware.hw._F_UPTIME) == (jstamp.F_NONCE, jstamp.F_AT, jstamp.F_UPTIME)

    class NoClock(Clock):
        def utc(self):
            return None

    rec = stamp(start(), NoClock())
    assert rec[3] & (jstamp.F_NONCE | jstamp.F_AT | jstamp.F_UPTIME) == jstamp.F_NONCE | jstamp.F_UPTIME
    nonce, at, up = jstamp.fields(rec)
    assert nonce is not None and at is None and up == 77


def test_app_new_game_keeps_a_loaded_games_date():
    b = Board()
    rec = start(at=AT)
    b.app.new_game(rec)
    stored = bytes(b.store.records(b.store.game_id)[0])
    assert stored == rec
    assert host.sync.db.start_date(stored, "x", None) == (AT, 0)


def test_sim_record_loads_a_dated_game_with_its_own_date():
    b = Board()
    serve_record.load_into(b.app, [{"ev": "start", "game": "stalk-exchange", "players": ["Ann", "Bo"], "at": AT}])
    first = bytes(b.store.records(b.store.game_id)[0])
    assert host.sync.db.start_date(first, "x", None) == (AT, 0)


def test_the_links_new_game_request_keeps_a_dated_starts_date():
    from tests.kit.linkkit import StoreBoard, host_for

    board = StoreBoard(uid="u1")
    _, _, hl = host_for(board)
    hl.hello()
    hl.confirmed("new_game", start={"ev": "start", "game": "stalk-exchange", "players": ["Ann", "Bo"], "at": AT})
    first = bytes(board.records(board.current())[0])
    assert host.sync.db.start_date(first, "x", None) == (AT, 0)

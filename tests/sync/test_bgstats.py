"""The BG Stats export against the import shape BG Stats documents, field by field.

Source (docs/protocol.md, "BG Stats"): BG Stats' own page for apps that push
plays to it, https://www.bgstatsapp.com/support/push-plays-to-bg-stats-from-other-apps-or-websites/
-- a link https://app.bgstatsapp.com/createPlay.html?data=<data>, where <data>
is one play as URL-encoded JSON. tests/fixtures/bgstats-documented-play.json
is a play in that page's documented shape (its example payload's fields,
our own values); DOCUMENTED is its fields with their types. `sourceName` and
`sourcePlayId` (the app the play comes from, and the play's id there) are
the top-level fields the same page's integrations send beside it.
"""

import json
import os
import re
import subprocess
import sys
import time
import urllib.parse

import pytest

import host.sync.db
from host.sync import export
from tests.kit.linkkit import StoreBoard, host_for
from tests.kit.mpy_harness import REPO

RECORDS = os.path.join(REPO, "tests", "records")

NUMBER = (int, float)


def _types(value):
    """A documented value -> its shape: dicts and lists kept, leaves by type
    (a score may be any number)."""
    if isinstance(value, dict):
        return {k: NUMBER if k == "score" else _types(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_types(value[0])]
    return type(value)


with open(os.path.join(REPO, "tests", "fixtures", "bgstats-documented-play.json")) as _f:
    DOCUMENTED_PLAY = json.load(_f)
DOCUMENTED = _types(DOCUMENTED_PLAY)
# What BG Stats needs to import a scored play without asking: the play's
# source and date, the game, and per player the result.
REQUIRED = {"sourceName", "sourcePlayId", "playDate", "game", "players"}


def _plays(*records, lines=None, names=None):
    """The plays of these records (file name, finished?) after a sync;
    `names` replaces the players' names in every start."""
    b = StoreBoard()
    for name, finish in records:
        with open(os.path.join(RECORDS, name)) as f:
            got = f.readlines()[:lines]
        if names is not None:
            start = json.loads(got[0])
            start["players"] = names
            got[0] = json.dumps(start)
        b.load(got, finish=finish)
    db = host.sync.db.Database(":memory:")
    host.sync.db.sync(host_for(b)[2], db)
    return db.plays()


def _check_shape(value, shape, where):
    if isinstance(shape, dict):
        assert isinstance(value, dict), where
        unknown = set(value) - set(shape)
        assert not unknown, "%s: fields BG Stats does not document: %s" % (where, sorted(unknown))
        for k, v in value.items():
            _check_shape(v, shape[k], "%s.%s" % (where, k))
    elif isinstance(shape, list):
        assert isinstance(value, list) and value, where
        for i, item in enumerate(value):
            _check_shape(item, shape[0], "%s[%d]" % (where, i))
    else:
        assert isinstance(value, shape) and not (shape is int and isinstance(value, bool)), "%s: %r" % (where, value)


def test_the_fixture_is_in_the_documented_shape():
    """The checker below accepts the documented play and refuses a field the page does not name."""
    _check_shape(DOCUMENTED_PLAY, DOCUMENTED, "play")
    with pytest.raises(AssertionError, match="does not document"):
        _check_shape(dict(DOCUMENTED_PLAY, endDate="x"), DOCUMENTED, "play")
    assert REQUIRED <= set(DOCUMENTED_PLAY)


def test_each_play_has_bg_stats_documented_fields_and_types():
    plays = _plays(("stalk-5p-crash.jsonl", True), ("orchids-2p.jsonl", True))
    out = json.loads(export.to_bgstats(plays))
    assert isinstance(out, list) and len(out) == 2
    for play in out:
        _check_shape(play, DOCUMENTED, "play")
        assert REQUIRED <= set(play)
        assert set(play) - set(DOCUMENTED) == set() and "durationMin" not in play  # the board records no end
        assert set(play["game"]) == set(DOCUMENTED["game"])
        for pl in play["players"]:
            assert set(pl) == set(DOCUMENTED["players"][0])
        assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d", play["playDate"])


def test_each_field_carries_the_play_it_came_from():
    plays = _plays(("stalk-5p-crash.jsonl", True), ("orchids-2p.jsonl", True))
    for p, play in zip(plays, json.loads(export.to_bgstats(plays))):
        assert play["sourceName"] == "Bloomkeeper"
        assert play["sourcePlayId"] == export.source_play_id(p) and play["sourcePlayId"].startswith(p["board"])
        assert play["playDate"] == p["date"].replace("T", " ")[:-1]  # the start, in UTC
        assert "comments" not in play and p["date_estimated"] is False
        game = play["game"]
        assert game["name"] == export.GAME_NAMES[p["game"]] and game["sourceGameId"] == p["game"]
        assert game["bggId"] == 0  # unverified: BG Stats then matches by name
        assert game["highestWins"] is True and game["noPoints"] is False  # both games: most points wins
        final = {r["name"]: r for r in p["final"]["players"]}
        assert [pl["name"] for pl in play["players"]] == p["players"]  # seat order
        for seat, pl in enumerate(play["players"]):
            r = final[pl["name"]]
            assert pl["sourcePlayerId"] == pl["name"]  # named players: the name is the person
            assert pl["score"] == r["score"] and pl["rank"] == r["rank"] and pl["winner"] is bool(r["winner"])
            assert pl["startPlayer"] is (seat == 0) and pl["role"] == ""
        assert sum(pl["winner"] for pl in play["players"]) >= 1


@pytest.mark.parametrize("zone", ["America/New_York", "Asia/Tokyo", "UTC"])
def test_play_date_is_the_start_in_utc_in_every_host_zone(monkeypatch, zone):
    """BG Stats reads playDate as UTC: an evening play in Tokyo or New York
    keeps its UTC day and time, whatever the zone of the host exporting it."""
    plays = _plays(("orchids-2p.jsonl", True))
    plays[0]["date"] = "2026-12-03T23:51:24Z"
    monkeypatch.setenv("TZ", zone)
    time.tzset()
    try:
        assert export.bgstats_play(plays[0])["playDate"] == "2026-12-03 23:51:24"
    finally:
        monkeypatch.undo()
        time.tzset()


def test_an_estimated_start_says_so_in_the_comments():
    plays = _plays(("orchids-2p.jsonl", True))
    plays[0]["date_estimated"] = True
    play = export.bgstats_play(plays[0])
    assert play["comments"] == export.ESTIMATED_NOTE and "estimated" in play["comments"]
    _check_shape(play, DOCUMENTED, "play")


def test_unnamed_seats_are_never_the_same_person_across_plays():
    """BG Stats remembers a match per (sourceName, sourcePlayerId): "Seat 1"
    of one play must not become "Seat 1" of every later play."""
    plays = _plays(("orchids-2p.jsonl", True), ("orchids-2p.jsonl", True), names=["Seat 1", "Seat 2"])
    out = [export.bgstats_play(p) for p in plays]
    ids = [pl["sourcePlayerId"] for play in out for pl in play["players"]]
    assert len(set(ids)) == 4, ids
    for p, play in zip(plays, out):
        assert [pl["name"] for pl in play["players"]] == ["Seat 1", "Seat 2"]
        for seat, pl in enumerate(play["players"], 1):
            assert pl["sourcePlayerId"] == "%s/seat %d" % (play["sourcePlayId"], seat)
            assert len(pl["sourcePlayerId"]) > 12  # longer than any name: never a named player's id


def test_a_named_player_is_one_person_across_plays_and_seats():
    plays = _plays(("orchids-2p.jsonl", True), names=["Ann", "Seat 2"]) + _plays(("orchids-2p.jsonl", True),
                                                                                 names=["Bo", "Ann"])
    first, second = (export.bgstats_play(p)["players"] for p in plays)
    assert first[0]["sourcePlayerId"] == second[1]["sourcePlayerId"] == "Ann"
    assert first[1]["sourcePlayerId"].endswith("/seat 2") and second[0]["sourcePlayerId"] == "Bo"


def test_a_seat_named_like_another_seat_is_a_name():
    """"Seat 2" sitting in seat 1 is a name someone chose (the board's own
    default for seat 1 is "Seat 1"): kept as the person's id."""
    plays = _plays(("orchids-2p.jsonl", True), names=["Seat 2", "Ann"])
    assert export.bgstats_play(plays[0])["players"][0]["sourcePlayerId"] == "Seat 2"


def test_unscored_plays_stay_out():
    plays = _plays(("orchids-2p.jsonl", False), lines=10)  # a game in progress
    assert json.loads(export.to_bgstats(plays)) == [] and export.to_bgstats_links(plays) == ""


def test_each_link_is_the_documented_url_with_one_play():
    plays = _plays(("stalk-5p-crash.jsonl", True), ("orchids-2p.jsonl", True))
    links = export.to_bgstats_links(plays).splitlines()
    assert len(links) == 2
    for link, play in zip(links, json.loads(export.to_bgstats(plays))):
        url = urllib.parse.urlsplit(link)
        assert (url.scheme, url.netloc, url.path) == ("https", "app.bgstatsapp.com", "/createPlay.html")
        assert " " not in link and "&" not in url.query
        (data,) = urllib.parse.parse_qs(url.query)["data"]
        assert json.loads(data) == play


@pytest.mark.slow
def test_the_export_says_that_bggid_is_unverified(tmp_path):
    path = str(tmp_path / "p.sqlite3")
    b = StoreBoard()
    with open(os.path.join(RECORDS, "stalk-5p-crash.jsonl")) as f:
        b.load(f, finish=True)
    db = host.sync.db.Database(path)
    host.sync.db.sync(host_for(b)[2], db)
    db.close()
    r = subprocess.run([sys.executable, "-m", "host.cli", "export", "--db", path, "--format", "bgstats"], cwd=REPO,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and json.loads(r.stdout)[0]["game"]["bggId"] == 0
    assert r.stderr.count("\n") == 1 and "bggId is 0 for Stalk Exchange" in r.stderr and "not verified" in r.stderr
    r = subprocess.run([sys.executable, "-m", "host.cli", "export", "--db", path, "--format", "json"], cwd=REPO,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stderr == ""

"""The BG Stats export against the import shape BG Stats documents, field by field.

Source (docs/protocol.md, "BG Stats"): BG Stats' own page for apps that push
plays to it, https://www.bgstatsapp.com/support/push-plays-to-bg-stats-from-other-apps-or-websites/
-- a link https://app.bgstatsapp.com/createPlay.html?data=<data>, where <data>
is one play as URL-encoded JSON. DOCUMENTED below is that page's example
payload, its values replaced by their types; `sourceName` and `sourcePlayId`
(the app the play comes from, and the play's id there) are the top-level
fields the same page's integrations send beside it.
"""

import json
import os
import re
import subprocess
import sys
import urllib.parse

import pytest

import host.sync.db
from host.sync import export
from tests.kit.linkkit import StoreBoard, host_for
from tests.kit.mpy_harness import REPO

RECORDS = os.path.join(REPO, "tests", "records")

NUMBER = (int, float)
DOCUMENTED = {
    "sourceName": str,
    "sourcePlayId": str,
    "board": str,
    "durationMin": int,
    "comments": str,
    "location": str,
    "playDate": str,  # "2020-10-23 19:16:58"
    "game": {"bggId": int, "highestWins": bool, "name": str, "noPoints": bool, "sourceGameId": str},
    "players": [{"startPlayer": bool, "name": str, "rank": int, "role": str, "score": NUMBER,
                 "sourcePlayerId": str, "winner": bool}],
}
# What BG Stats needs to import a scored play without asking: the play's
# source and date, the game, and per player the result.
REQUIRED = {"sourceName", "sourcePlayId", "playDate", "game", "players"}


def _plays(*records, lines=None):
    b = StoreBoard()
    for name, finish in records:
        with open(os.path.join(RECORDS, name)) as f:
            b.load(f.readlines()[:lines], finish=finish)
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


def test_each_play_has_bg_stats_documented_fields_and_types():
    plays = _plays(("stalk-5p-crash.jsonl", True), ("orchids-2p.jsonl", True))
    out = json.loads(export.to_bgstats(plays))
    assert isinstance(out, list) and len(out) == 2
    for play in out:
        _check_shape(play, DOCUMENTED, "play")
        assert REQUIRED <= set(play)
        assert set(play["game"]) == set(DOCUMENTED["game"])
        for pl in play["players"]:
            assert set(pl) == set(DOCUMENTED["players"][0])
        assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d", play["playDate"])


def test_each_field_carries_the_play_it_came_from():
    plays = _plays(("stalk-5p-crash.jsonl", True), ("orchids-2p.jsonl", True))
    for p, play in zip(plays, json.loads(export.to_bgstats(plays))):
        assert play["sourceName"] == "Bloomkeeper"
        assert play["sourcePlayId"] == export.source_play_id(p) and play["sourcePlayId"].startswith(p["board"])
        assert play["playDate"] == export.local_time(p["date"])
        game = play["game"]
        assert game["name"] == export.GAME_NAMES[p["game"]] and game["sourceGameId"] == p["game"]
        assert game["bggId"] == 0  # unverified: BG Stats then matches by name
        assert game["highestWins"] is True and game["noPoints"] is False  # both games: most points wins
        final = {r["name"]: r for r in p["final"]["players"]}
        assert [pl["name"] for pl in play["players"]] == p["players"]  # seat order
        for seat, pl in enumerate(play["players"]):
            r = final[pl["name"]]
            assert pl["sourcePlayerId"] == pl["name"]
            assert pl["score"] == r["score"] and pl["rank"] == r["rank"] and pl["winner"] is bool(r["winner"])
            assert pl["startPlayer"] is (seat == 0) and pl["role"] == ""
        assert sum(pl["winner"] for pl in play["players"]) >= 1


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

"""The plays history at any size (host/sync/db.py version 3): per-play
summaries written with the records, pages read in SQL newest first, the
statistics in SQL, exports streamed one play at a time with the bytes the
whole-history export wrote, the dashboard's cache dropped by a write, and
the migration from the version before.

Speed and memory are measured in bench/bench_history.py, never here.
"""

import io
import json
import os
import sqlite3
import subprocess
import sys

import pytest
from hypothesis import given, settings, strategies as st

import host.sync.db
from host.dashboard import history, store
from host.sync import export
from tests.kit import damaged_db, dashboard_kit
from tests.kit.mpy_harness import REPO


def bk(*args):
    return subprocess.run([sys.executable, "-m", "host.cli", *args], cwd=REPO, capture_output=True, text=True, timeout=60)


@pytest.fixture
def db_path(tmp_path):
    path = str(tmp_path / "plays.sqlite3")
    dashboard_kit.fill_db(path)
    return path


def more_plays(path, n, board="extra"):
    """n more plays (a recorded game, each under its own game number)."""
    recs = dashboard_kit.records_of("orchids-2p.jsonl")
    db = host.sync.db.Database(path)
    try:
        for k in range(n):
            who = {"board": "%s-%d" % (board, k), "type": "pico", "clock": None}
            assert db.store(who, "%04d" % (k + 1), recs)[0] is not None
    finally:
        db.close()


def as_v2(path):
    """The file as the release before wrote it (version 2)."""
    con = sqlite3.connect(path)
    damaged_db.strip_version_3(con)
    con.commit()
    con.close()


def replayed(path):
    db = host.sync.db.Database(path, create=False, readonly=True)
    try:
        return db.read()
    finally:
        db.close()


def streamed(path, fmt):
    db = host.sync.db.Database(path, create=False, readonly=True)
    try:
        buf = io.StringIO()
        export.WRITERS[fmt](db.stream(export.LINES.get(fmt)), buf)
        return buf.getvalue()
    finally:
        db.close()


# -- the summaries say what replaying says -------------------------------------------

def test_a_page_lists_what_replaying_every_play_lists_newest_first(db_path):
    more_plays(db_path, 3)
    plays, problems = replayed(db_path)
    db = host.sync.db.Database(db_path)
    page, total = db.page()
    assert total == len(plays) == 8
    newest = sorted(plays, key=lambda p: p["date"], reverse=True)
    assert [p["play"] for p in page] == [p["play"] for p in newest]
    for listed, whole in zip(page, newest):
        assert listed["event_count"] == len(whole["events"])
        assert {k: v for k, v in listed.items() if k != "event_count"} == {k: v for k, v in whole.items() if k != "events"}
    assert db.problems() == problems
    assert history.stats_rows(db.stats()) == history.stats(plays)
    one = db.play(newest[3]["play"])
    assert one == newest[3], "one play's page reads that play alone, and says what read() says"
    assert db.play(10 ** 6) is None


def test_pages_follow_one_another_and_since_keeps_the_later_plays(db_path):
    more_plays(db_path, 7)
    db = host.sync.db.Database(db_path)
    every, total = db.page()
    first, t1 = db.page(5)
    second, t2 = db.page(5, 5)
    assert t1 == t2 == total == 12 and len(first) == 5 and len(second) == 5
    assert [p["play"] for p in first + second] == [p["play"] for p in every[:10]]
    log, _ = db.page(5, 0, log=True)
    newest = sorted(every, key=lambda p: (p["date"], p["play"]))[-5:]
    assert [p["play"] for p in log] == [p["play"] for p in newest], "the newest page, listed oldest first"
    cut = every[4]["date"]
    later, n = db.page(since=cut)
    assert n == len(later) == sum(1 for p in every if p["date"] >= cut) and all(p["date"] >= cut for p in later)


def test_plays_lists_the_newest_page_and_says_what_is_left_out(db_path):
    more_plays(db_path, 4)
    r = bk("plays", "--db", db_path, "--limit", "3")
    rows = [t for t in r.stdout.splitlines() if " events " in t]
    assert r.returncode == 0 and len(rows) == 3, r.stdout + r.stderr
    assert "6 older play(s) not shown (of 9)" in r.stdout and "--page 2" in r.stdout
    whole = bk("plays", "--db", db_path, "--limit", "0")
    all_rows = [t for t in whole.stdout.splitlines() if " events " in t]
    assert len(all_rows) == 9 and all_rows[-3:] == rows, "the first page holds the newest, listed oldest first"
    last = bk("plays", "--db", db_path, "--limit", "3", "--page", "3")
    assert [t for t in last.stdout.splitlines() if " events " in t] == all_rows[:3] and "not shown" not in last.stdout
    far = bk("plays", "--db", db_path, "--since", "2999-01-01")
    assert far.returncode == 0 and "no plays in" in far.stdout and "since" in far.stdout


@pytest.mark.parametrize("args", [("--limit", "-1"), ("--limit", "many"), ("--page", "0"), ("--since", "yesterday"),
                                  ("--since", "2026-13-45")])
def test_a_bad_page_option_is_one_line(db_path, args):
    r = bk("plays", "--db", db_path, *args)
    assert r.returncode == 2 and "Traceback" not in r.stderr and args[0] in r.stderr, r.stderr
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("bloomkeeper: plays: argument %s:" % args[0]), r.stderr


# -- exports stream with the same bytes ------------------------------------------------

@pytest.mark.parametrize("case", [None] + sorted(c for c in damaged_db.CASES if damaged_db.CASES[c][1] == "read"
                                                 and c != "malformed-events-page"))
def test_every_streamed_export_is_byte_for_byte_the_whole_history_export(case, tmp_path):
    """The exports of the summaries, one play at a time, against the
    exports of every play replayed at once (the way every release before
    wrote them): good files, and files damaged by hand (whose changed plays
    are summarized again) or under the summaries (read from the records)."""
    path = str(tmp_path / "p.sqlite3")
    if case is None:
        dashboard_kit.fill_db(path)
    else:
        damaged_db.make(case, path)
    plays, _ = replayed(path)
    for fmt, whole in export.FORMATS.items():
        assert streamed(path, fmt) == whole(plays), (case, fmt)
    lines = streamed(path, "jsonl").splitlines()
    assert [json.loads(t) for t in lines] == json.loads(export.to_json(plays))


def test_jsonl_is_each_play_compact_byte_for_byte(db_path):
    """JSON Lines from the stored json lines (their layout dropped, not
    parsed) against each replayed play encoded compact."""
    more_plays(db_path, 2)
    plays, _ = replayed(db_path)
    want = "".join(json.dumps(export.json_item(p), separators=(",", ":")) + "\n" for p in plays)
    assert streamed(db_path, "jsonl") == want
    buf = io.StringIO()
    export.write_jsonl(plays, buf)
    assert buf.getvalue() == want, "the replayed plays (no stored lines) the same"


# Names are 1-12 printable characters: the text that could look like JSON's own marks.
_TRICKY = st.sampled_from(['": ', ': x', 'a"b', "a\\", "\\", "{", "[", ",", "]", "}", 'x": y', "a: b", "  ", "Seat 1", "\x7f", "\u00e9"])
_TEXT = st.text(max_size=12) | _TRICKY
_JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | _TEXT,
                     lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_TEXT, inner, max_size=4), max_leaves=25)


@settings(max_examples=400, deadline=None)
@given(st.dictionaries(_TEXT, _JSON, min_size=1, max_size=4))
def test_a_stored_json_tail_made_compact_is_what_json_writes_compact(members):
    """compact_tail drops the layout of any members, or says it cannot
    (then the play is parsed): it never writes other bytes."""
    tail = export._indent(json.dumps(members, indent=2).split("\n", 1)[1].rsplit("\n", 1)[0])
    made = export.compact_tail(tail)
    assert made is None or made == json.dumps(members, separators=(",", ":"))[1:-1]
    if all(_plain(t) for t in _texts(members)):
        assert made is not None, "plain names take the short way"


def _plain(text):
    """Text json writes as it is (printable ASCII) without the marks that
    send a tail to be parsed: a quote, a backslash, a colon, a last space."""
    return all(" " <= c <= "~" for c in text) and set(text).isdisjoint('"\\:') and not text.endswith(" ")


def _texts(v):
    if isinstance(v, dict):
        return [t for k, x in v.items() for t in [k] + _texts(x)]
    if isinstance(v, list):
        return [t for x in v for t in _texts(x)]
    return [v] if isinstance(v, str) else []


@settings(max_examples=400, deadline=None)
@given(_JSON, st.sampled_from(["", "  ", "    "]))
def test_indented_is_json_dumps_with_indent_2(value, pad):
    assert export.indented(value, pad) == json.dumps(value, indent=2).replace("\n", "\n" + pad)


def test_quoting_a_bgstats_link_is_urllib_quote():
    import urllib.parse

    every = "".join(map(chr, range(128))) + json.dumps({"name": "Ke$ha & A/B?=#%"}) + "\u00e9"
    for text in (every, every[:-1], ""):
        assert export.quote_ascii(text) == urllib.parse.quote(text, safe="")


def test_export_on_the_command_line_streams_the_same_bytes(db_path):
    more_plays(db_path, 2)
    plays, _ = replayed(db_path)
    for fmt in ("json", "csv", "bgstats", "bgstats-links"):
        r = bk("export", "--db", db_path, "--format", fmt)
        assert r.returncode == 0 and r.stdout == export.FORMATS[fmt](plays), fmt
    r = bk("plays", "--db", db_path, "--json")
    assert r.stdout == export.to_json(plays)
    r = bk("export", "--db", db_path, "--format", "jsonl")
    assert [json.loads(t)["game_id"] for t in r.stdout.splitlines()] == [p["game_id"] for p in plays]


# -- summaries follow every change -----------------------------------------------------

def test_records_changed_by_another_hand_are_summarized_again(db_path):
    """The triggers mark a play stale whoever changes its records: the next
    opening summarizes it again, so a page never shows what is no longer stored."""
    con = sqlite3.connect(db_path)
    pid = con.execute("SELECT MIN(id) FROM games").fetchone()[0]
    con.execute("DELETE FROM events WHERE game=? AND idx>=10", (pid,))
    con.commit()
    assert con.execute("SELECT count(*) FROM stale").fetchone()[0] == 1
    con.close()
    db = host.sync.db.Database(db_path)
    page, _ = db.page()
    assert db.con.execute("SELECT count(*) FROM stale").fetchone()[0] == 0
    mine = [p for p in page if p["play"] == pid][0]
    assert mine == {k: v for k, v in dict(db.play(pid), event_count=mine["event_count"]).items() if k != "events"}
    assert mine["event_count"] == len(db.play(pid)["events"]) < 20
    plays, _ = db.read()
    assert history.stats_rows(db.stats()) == history.stats(plays), "the statistics lost that play's scores (and its best)"
    con = sqlite3.connect(db_path)
    con.execute("DELETE FROM events WHERE game=(SELECT MAX(id) FROM games)")  # a play gone whole
    con.commit()
    con.close()
    db.close()
    db = host.sync.db.Database(db_path)
    plays, _ = db.read()
    assert len(plays) == 4 and db.page()[1] == 4
    assert history.stats_rows(db.stats()) == history.stats(plays)


def test_a_sync_writes_the_summary_of_the_play_it_changed(db_path):
    db = host.sync.db.Database(db_path)
    recs = dashboard_kit.records_of("stalk-2p.jsonl")
    who = {"board": "late", "type": "pico", "clock": None}
    play, _ = db.store(who, "0001", recs[:10])
    before = [p for p in db.page()[0] if p["play"] == play][0]["event_count"]
    db.store(who, "0001", recs)
    after = [p for p in db.page()[0] if p["play"] == play][0]
    assert after["event_count"] > before and after["event_count"] == len(db.play(play)["events"])
    assert history.stats_rows(db.stats()) == history.stats(db.read()[0]), "the finished play's scores are counted"
    assert db.con.execute("SELECT count(*) FROM stale").fetchone()[0] == 0, "summarized in the sync's own transaction"


def test_the_dashboards_pages_are_cached_until_a_sync_writes(db_path):
    cache = store.Cache(db_path)
    made = []

    def make():
        made.append(1)
        return store.history_page(db_path, 1)[1]

    assert cache.get("h", make) == 5 and cache.get("h", make) == 5 and len(made) == 1, "served from the cache"
    more_plays(db_path, 1)  # a sync, through another connection
    assert cache.get("h", make) == 6 and len(made) == 2, "the write made the cached page stale"


def test_the_history_pages_through_every_play(db_path, monkeypatch):
    more_plays(db_path, 4)
    monkeypatch.setattr(history, "PAGE", 4)
    seen = []
    for page in (1, 2, 3):
        plays, total, rows, problems = store.history_page(db_path, page)
        body = history.history_page_body(plays, rows, problems, page, total)
        assert total == 9 and ("older plays" in body) == (page < 3) and ("newer plays" in body) == (page > 1)
        seen += [p["play"] for p in plays]
    assert sorted(seen) == list(range(1, 10))
    whole, problems = replayed(db_path)
    assert history.history_page_body(*store.history_page(db_path, 1)[:1], history.stats(whole), problems, 1, 9).count(
        '<tr class="play">') == 4


def test_the_history_of_a_small_database_is_the_page_it_always_was(db_path):
    plays, problems = replayed(db_path)
    page, total, rows, probs = store.history_page(db_path, 1)
    assert history.history_page_body(page, rows, probs, 1, total) == history.history_body(plays, problems)


# -- the migration from the version before -----------------------------------------------

def test_a_version_2_database_gains_its_summaries_with_nothing_changed(db_path, tmp_path):
    more_plays(db_path, 2)
    want_plays, want_problems = replayed(db_path)
    want = {fmt: f(want_plays) for fmt, f in export.FORMATS.items()}
    as_v2(db_path)
    con = sqlite3.connect(db_path)
    events = con.execute("SELECT game, idx, record FROM events ORDER BY game, idx").fetchall()
    con.close()
    db = host.sync.db.Database(db_path)
    assert db.version() == host.sync.db.VERSION == 4
    assert db.con.execute("SELECT count(*) FROM summaries").fetchone()[0] == 7
    assert db.con.execute("SELECT game, idx, record FROM events ORDER BY game, idx").fetchall() == events
    assert db.read() == (want_plays, want_problems)
    db.close()
    for fmt, text in want.items():
        assert streamed(db_path, fmt) == text
    fresh = str(tmp_path / "fresh.sqlite3")
    host.sync.db.Database(fresh).close()

    def schema(path):
        c = sqlite3.connect(path)
        try:
            return sorted(c.execute("SELECT type, name, sql FROM sqlite_master").fetchall(), key=repr)
        finally:
            c.close()
    assert schema(db_path) == schema(fresh)


def test_a_version_3_database_gains_its_compact_lines_with_the_same_exports(db_path):
    more_plays(db_path, 2)
    plays, _ = replayed(db_path)
    want = "".join(json.dumps(export.json_item(p), separators=(",", ":")) + "\n" for p in plays)
    con = sqlite3.connect(db_path)
    damaged_db.strip_version_4(con)
    con.commit()
    con.close()
    db = host.sync.db.Database(db_path)
    assert db.version() == 4
    assert db.con.execute("SELECT count(*) FROM json_tails WHERE compact IS NULL").fetchone()[0] == 0
    db.close()
    assert streamed(db_path, "jsonl") == want
    con = sqlite3.connect(db_path)
    con.execute("UPDATE json_tails SET compact = NULL WHERE play = (SELECT min(play) FROM json_tails)")  # a hand took one away
    con.commit()
    con.close()
    assert streamed(db_path, "jsonl") == want, "its json lines, made compact, the same"


def test_a_read_only_version_2_database_is_read_from_an_upgraded_copy(db_path):
    """A file of the release before that this user may not write: the
    commands read an upgraded copy in memory, and the file stays version 2."""
    plays, problems = replayed(db_path)
    as_v2(db_path)
    os.chmod(db_path, 0o444)
    pre = damaged_db.drop_root_write() if os.geteuid() == 0 else ()
    for fmt in ("json", "csv"):
        r = subprocess.run([*pre, sys.executable, "-m", "host.cli", "export", "--db", db_path, "--format", fmt], cwd=REPO,
                           capture_output=True, text=True, timeout=60)
        assert r.returncode == 0 and r.stdout == export.FORMATS[fmt](plays), r.stderr
    r = subprocess.run([*pre, sys.executable, "-m", "host.cli", "plays", "--db", db_path], cwd=REPO, capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0 and r.stdout.count(" events ") == len(plays), r.stdout + r.stderr
    con = sqlite3.connect(db_path)
    assert con.execute("PRAGMA user_version").fetchone()[0] == 2, "the file is left as it is"
    con.close()

"""`bloomkeeper simulate`: statistics, --json, --records, --plot, and one-line errors."""

import json
import os
import subprocess
import sys

import pytest

import engine_lite
from host.cli import main
from tests.kit.mpy_harness import REPO


def simulate(capsys, *args):
    status = main(["simulate", *args])
    out = capsys.readouterr()
    return status, out.out, out.err


def test_json_statistics_for_stalk_exchange(capsys):
    status, out, _ = simulate(capsys, "--game", "stalk-exchange", "--players", "4", "--games", "12", "--seed", "5", "--json")
    assert status == 0
    stats = json.loads(out)  # exactly one JSON object
    assert out.count("\n") == 1
    assert stats["game"] == "stalk-exchange" and stats["players"] == 4 and stats["games"] == 12
    assert sum(stats["end_reasons"].values()) == 12
    assert set(stats["end_reasons"]) <= {"crash", "bag", "stalled", "turn_limit"}
    assert stats["turns"]["min"] <= stats["turns"]["median"] <= stats["turns"]["max"]
    seats = stats["seats"]
    assert [s["seat"] for s in seats] == [1, 2, 3, 4]
    assert sum(s["wins"] for s in seats) == pytest.approx(stats["finished"])  # shared wins are split
    assert stats["scores"]["winner"]["mean"] >= stats["scores"]["all"]["mean"]
    assert isinstance(stats["track_start"], int) and stats["track_start"] > 0


def test_same_seed_same_statistics(capsys):
    args = ("--game", "oh-my-orchids", "--players", "3", "--games", "5", "--seed", "9", "--json", "--policy", "random")
    a = simulate(capsys, *args)[1]
    b = simulate(capsys, *args)[1]
    c = simulate(capsys, *args[:-3], "--seed", "10", "--json", "--policy", "random")[1]
    assert a == b and a != c


def test_text_output_names_the_statistics(capsys):
    status, out, _ = simulate(capsys, "--game", "oh-my-orchids", "--players", "2", "--games", "4", "--policy", "greedy,random")
    assert status == 0
    assert "end reasons:" in out and "turns per game:" in out and "seat  policy" in out
    assert "greedy" in out and "random" in out
    # the end said in words, not the internal label
    assert "end reasons: 7 flowers planted" in out and "seven_flowers" not in out


def test_records_replay_to_the_final_scores(capsys, tmp_path):
    d = tmp_path / "recs"
    status, out, _ = simulate(capsys, "--game", "stalk-exchange", "--players", "3", "--games", "4", "--seed", "2", "--records", str(d), "--json", "--verify")
    assert status == 0
    stats = json.loads(out)
    assert stats["verified"] == 4 and stats["mismatches"] == []
    files = sorted(os.listdir(d))
    assert files == ["game-00001.jsonl", "game-00002.jsonl", "game-00003.jsonl", "game-00004.jsonl"]
    winners = {}
    for name in files:
        lines = (d / name).read_text().splitlines()
        start = json.loads(lines[0])
        # no --track-start: the placeholder is used and the record does not claim it is
        # the printed number (replay says track_start_placeholder)
        assert start["ev"] == "start" and "track_start" not in start
        assert json.loads(lines[-1])["ev"] == "portfolio"
        state = engine_lite.replay(lines)
        assert state["track_start_placeholder"] is True
        assert state["final"]["players"][0]["winner"]
        for row in state["final"]["players"]:
            if row["rank"] == 1:
                winners[row["name"]] = winners.get(row["name"], 0) + 1
    # the JSON's seat wins come from the same games
    for seat in stats["seats"]:
        assert seat["outright_wins"] <= winners.get("P%d" % seat["seat"], 0)


def test_orchids_records(capsys, tmp_path):
    d = tmp_path / "o"
    status, _, _ = simulate(capsys, "--game", "oh-my-orchids", "--players", "5", "--games", "2", "--records", str(d))
    assert status == 0
    for name in sorted(os.listdir(d)):
        state = engine_lite.replay((d / name).read_text().splitlines())
        assert state["game_over"] and len(state["final"]["players"]) == 5


@pytest.mark.slow
def test_plot_writes_a_png(capsys, tmp_path):
    p = tmp_path / "dist.png"
    status, out, _ = simulate(capsys, "--game", "stalk-exchange", "--players", "2", "--games", "6", "--plot", str(p))
    assert status == 0
    assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and p.stat().st_size > 10_000
    assert "plot: " in out


def test_two_player_short_game_option(capsys):
    status, out, _ = simulate(capsys, "--game", "stalk-exchange", "--players", "2", "--length", "short", "--games", "3", "--json")
    short = json.loads(out)
    status, out, _ = simulate(capsys, "--game", "stalk-exchange", "--players", "2", "--games", "3", "--json")
    long_ = json.loads(out)
    assert short["length"] == "short" and short["track_start"] != long_["track_start"]


BAD = [
    (["--game", "chess"], "--game"),
    (["--game", "stalk-exchange", "--players", "1"], "--players"),
    (["--game", "stalk-exchange", "--players", "6"], "--players"),
    (["--game", "stalk-exchange", "--players", "two"], "--players"),
    (["--game", "stalk-exchange", "--games", "0"], "--games"),
    (["--game", "stalk-exchange", "--seed", "-3"], "--seed"),
    (["--game", "stalk-exchange", "--policy", "clever"], "--policy"),
    (["--game", "stalk-exchange", "--players", "2", "--policy", "random,greedy,random"], "--policy"),
    (["--game", "stalk-exchange", "--players", "3", "--length", "short"], "--length"),
    (["--game", "oh-my-orchids", "--track-start", "20"], "--track-start"),
    (["--game", "stalk-exchange", "--deck", "x.json"], "--deck"),
    (["--game", "stalk-exchange", "--plot", "out.svg"], "--plot"),
    (["--game", "stalk-exchange", "--plot", "/no/such/dir/p.png"], "--plot"),
    (["--game", "stalk-exchange", "--layout", "/no/such/layout.json"], "layout"),
    (["--game", "oh-my-orchids", "--deck", "/no/such/deck.json"], "deck"),
    (["--players", "3"], "--game"),
]


@pytest.mark.slow
@pytest.mark.parametrize("args, names", BAD, ids=[" ".join(a) for a, _ in BAD])
def test_bad_arguments_exit_2_with_one_line(capsys, args, names):
    with pytest.raises(SystemExit) as exc:
        main(["simulate", *args])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("bloomkeeper: ") and names in err
    assert "Traceback" not in err


def test_records_path_that_is_a_file_is_refused(capsys, tmp_path):
    f = tmp_path / "file"
    f.write_text("x")
    with pytest.raises(SystemExit) as exc:
        main(["simulate", "--game", "stalk-exchange", "--records", str(f)])
    assert exc.value.code == 2 and "--records" in capsys.readouterr().err


@pytest.mark.slow
def test_the_installed_command_line_fails_in_one_line():
    # the real process: exit status 2, one stderr line, no traceback
    r = subprocess.run(
        [sys.executable, "-m", "host.cli", "simulate", "--game", "stalk-exchange", "--players", "9"],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert r.returncode == 2
    assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr and r.stdout == ""


def test_verify_notices_a_record_that_disagrees():
    # --verify must be able to fail: a game whose record lost its last event
    from host.fullrules.simulate import play_one, verify_record

    g = play_one("stalk-exchange", 3, 1, 0, ("greedy",), {})
    assert verify_record(g) is None
    g.g.undo()  # the live engine loses the last portfolio; the game's own final stays
    assert verify_record(g) == "final scores differ after replay"

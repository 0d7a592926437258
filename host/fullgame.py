"""What both full-rules games (stalk_full, orchids_full) hand to simulate.py."""

import json


def seat_results(names, final):
    """Per-seat scores and ranks, seat order, from engine_lite's `final`
    (None for every seat while the game is unscored)."""
    scores = [None] * len(names)
    ranks = [None] * len(names)
    if final is not None:
        seat = {nm: i for i, nm in enumerate(names)}
        for p in final["players"]:
            scores[seat[p["name"]]] = p["score"]
            ranks[seat[p["name"]]] = p["rank"]
    return scores, ranks


def record_lines(game):
    """The game record (docs/game-record.md) of an engine_lite.Game, one JSON string per event."""
    return [json.dumps(ev, separators=(",", ":")) for ev in game.events()]

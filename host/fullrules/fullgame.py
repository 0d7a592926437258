"""What both full-rules games (stalk_full, orchids_full) share: how a game
begins and runs its turns, and what it hands to simulate.py."""

import json
import random

from engine_lite import tables


def begin(play, title, names, seed, policies, greedy, check, max_turns):
    """The start both full games share: the seats, the seeded random source,
    one policy per seat (greedy(rng) each by default), the cross-checks and
    the turn limit. ValueError (one line) for a wrong table."""
    play.names = list(names)
    n = play.n = len(play.names)
    if not tables.MIN_PLAYERS <= n <= tables.MAX_PLAYERS:
        raise ValueError("%s is for 2 to 5 players" % title)
    play.rng = random.Random(seed)
    play.policies = list(policies) if policies is not None else [greedy(random.Random(play.rng.random())) for _ in range(n)]
    if len(play.policies) != n:
        raise ValueError("one policy per player")
    play.check = check
    play.max_turns = max_turns


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


def summary(play, game, **extra):
    """The plain result of a full game `play` (names, end_reason, turns, final,
    stats): end reason, turns, per-seat scores and ranks, plus `extra`."""
    scores, ranks = seat_results(play.names, play.final)
    out = {
        "game": game,
        "players": play.names,
        "end_reason": play.end_reason,
        "turns": play.turns,
        "scores": scores,
        "ranks": ranks,
        "final": play.final,
        "actions": dict(play.stats),
    }
    out.update(extra)
    return out


def play_turns(play):
    """Play turns (play.play_turn(state) -> the next state dict, or None
    when the game stopped early) until the game is over. Returns the last
    state, or None if it stopped first: play.max_turns reached
    (end_reason "turn_limit") or play_turn's own reason."""
    st = play.g.state()
    while not st["game_over"]:
        if play.turns >= play.max_turns:
            play.end_reason = "turn_limit"
            return None
        st = play.play_turn(st)
        if st is None:
            return None
    return st


def load_json(path, label, error):
    """A data file (layout, deck) as JSON; `error(one line)` if unreadable."""
    from host.errors import UserError
    from host.io_util import read_json

    try:
        return read_json(path)  # capped in size, strict, nesting bounded (host/io_util.py)
    except UserError as e:
        raise error("%s %s" % (label, e))


def record_lines(game):
    """The game record (docs/game-record.md) of an engine_lite.Game, one JSON string per event."""
    return [json.dumps(ev, separators=(",", ":")) for ev in game.events()]

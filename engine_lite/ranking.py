"""Ranking shared by both games' final scores."""


def ranked(rows, names, extra=None):
    """Players in rank order. rows: (score, tie-break key, seat, ...).

    Equal score and key share a rank ("the tied players share the
    victory"); ranks skip after a shared one (1, 1, 3). Shared ranks keep
    seat order. `extra(row)` adds game-specific fields (None: there are
    none, and no call or dict per player for them: the board's results
    screen)."""
    # highest score, then highest key (lists of equal length compare
    # tier by tier), then lowest seat: no negated copy of each key
    order = sorted(rows, key=lambda r: (r[0], r[1], -r[2]), reverse=True)
    out = []
    rank = 0
    prev = None
    for i, row in enumerate(order):
        if prev is None or row[0] != prev[0] or row[1] != prev[1]:
            rank = i + 1
        prev = row
        p = {"name": names[row[2]], "score": row[0], "rank": rank, "winner": rank == 1}
        if extra is not None:
            p.update(extra(row))
        out.append(p)
    return out

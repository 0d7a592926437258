"""One place for each thing (issue 12), checked on the source:

* nothing in firmware/ reads the engine's internal state object
  (`game.rules`): the board reads the table through engine_lite's read-only
  view (`Game.table`, `legal`, `cost`, `over`, `ends_game` ...), so a rule
  number is never repeated outside engine_lite;
* no single-letter module aliases (`as R`, `as SF` ...) in engine_lite/ and
  firmware/: a name says what it is and can be searched for.
"""

import ast
import re
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def sources(*dirs):
    for d in dirs:
        for p in sorted((REPO / d).rglob("*.py")):
            rel = p.relative_to(REPO).as_posix()
            yield rel, p.read_text()


def test_firmware_reads_no_engine_internals():
    bad = []
    for rel, text in sources("firmware"):
        for n, line in enumerate(text.splitlines(), 1):
            if re.search(r"\.rules\b", line.split("#")[0]):
                bad.append("%s:%d: %s" % (rel, n, line.strip()))
    assert not bad, "read the table through engine_lite's view (Game.table/legal/cost):\n" + "\n".join(bad)


def test_no_short_module_aliases_on_the_board():
    bad = []
    for rel, text in sources("engine_lite", "firmware"):
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for a in node.names:
                    if a.asname and len(a.asname.strip("_")) <= 2 and a.asname != "_app":
                        bad.append("%s:%d: import %s as %s" % (rel, node.lineno, a.name, a.asname))
    assert not bad, "\n".join(bad)


def test_the_ring_repeats_no_rule_number():
    """The ring draws what the view says ("turn done", "ends the game"); the
    thresholds behind them are the engine's (tables.BASIC_ACTIONS,
    tables.LAST_ROUND_FLOWERS via Game.cost and OrchidsState.ends_game)."""
    text = (REPO / "firmware/ring.py").read_text()
    assert not re.search(r"\b(actions|flowers\[\w+\]|f)\s*>=\s*\d", text)

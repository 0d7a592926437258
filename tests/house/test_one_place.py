"""One place for each thing, checked on the source:

* nothing in firmware/ or host/ reads the engine's state through its old
  name (`game.rules`): the board, the dashboard and the full-rules engines
  read the table through engine_lite's read-only view (`Game.table`,
  `legal`, `refused`, `cost`, `turn_done`, `ends_game` ...), so a rule
  number is never repeated outside engine_lite;
* the host's full engines ask engine_lite for the action economy and the
  hand limit instead of comparing with the rule numbers themselves;
* a compact record is built only in engine_lite/record.py (no
  `bytes((record.OP_...` by hand in firmware/ or host/);
* no single-letter module aliases (`as R`, `as SF` ...) in engine_lite/ and
  firmware/: a name says what it is and can be searched for.
"""

import ast
import re

import pytest

from tests.kit.mpy_harness import REPO


def sources(*dirs):
    for d in dirs:
        for p in sorted((REPO / d).rglob("*.py")):
            rel = p.relative_to(REPO).as_posix()
            yield rel, p.read_text()


def rules_lines(text):
    """Lines that read a `<something>.rules` attribute (the syntax tree, so a
    module path in a string such as "host.commands.rules" is not one)."""
    return [node.lineno for node in ast.walk(ast.parse(text)) if isinstance(node, ast.Attribute) and node.attr == "rules"]


def rules_reads(dirs):
    return ["%s:%d: .rules" % (rel, n) for rel, text in sources(*dirs) for n in rules_lines(text)]


@pytest.mark.slow
def test_firmware_reads_no_engine_internals():
    bad = rules_reads(("firmware", "boardkit"))
    assert not bad, "read the table through engine_lite's view (Game.table/legal/cost):\n" + "\n".join(bad)


@pytest.mark.slow
def test_host_reads_no_engine_internals():
    bad = rules_reads(("host",))
    assert not bad, "read the table through engine_lite's view (Game.table/legal/cost):\n" + "\n".join(bad)


def test_the_check_sees_a_rules_read():
    """The checker itself: a `.rules` attribute is found, a module path in a
    string is not (host/cli.py names "host.commands.rules")."""
    assert rules_lines('x = game.rules.values\nname = "host.commands.rules"\ny = g.table.over\n') == [1]


def test_full_engines_repeat_no_economy_number():
    """The action economy ("A player MUST do 2 Basic Actions", extra actions
    for a Seedy Business token) and the hand limit ("If a player has more
    than 7 Seed cards, they must ... compost") are decided by engine_lite's
    refused/cost/turn_done; the full engines ask, never compare with
    tables.BASIC_ACTIONS or tables.HAND_LIMIT themselves."""
    bad = []
    for rel, text in sources("host"):
        for n, line in enumerate(text.splitlines(), 1):
            if re.search(r"\b(BASIC_ACTIONS|HAND_LIMIT)\b", line.split("#")[0]):
                bad.append("%s:%d: %s" % (rel, n, line.strip()))
    assert not bad, "ask engine_lite (table.refused/cost/turn_done):\n" + "\n".join(bad)


@pytest.mark.slow
def test_no_short_module_aliases_on_the_board():
    bad = []
    for rel, text in sources("engine_lite", "firmware", "boardkit"):
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for a in node.names:
                    if a.asname and len(a.asname.strip("_")) <= 2 and a.asname != "_app":
                        bad.append("%s:%d: import %s as %s" % (rel, node.lineno, a.name, a.asname))
    assert not bad, "\n".join(bad)


def test_the_ring_repeats_no_rule_number():
    """The ring draws what the view says ("turn done", "ends the game"); the
    thresholds behind them are the engine's (tables.BASIC_ACTIONS,
    tables.LAST_ROUND_FLOWERS via StalkState.cost and OrchidsState.ends_game)."""
    text = (REPO / "firmware/ring.py").read_text()
    assert not re.search(r"\b(actions|flowers\[\w+\]|f)\s*>=\s*\d", text)


def hand_built_records(text):
    """`bytes((...OP_...` / `bytearray((...OP_...` calls: a record built by hand."""
    out = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("bytes", "bytearray") and node.args:
            arg = node.args[0]
            if isinstance(arg, (ast.Tuple, ast.List)) and arg.elts:
                first = arg.elts[0]
                name = first.attr if isinstance(first, ast.Attribute) else getattr(first, "id", "")
                if name.startswith("OP_"):
                    out.append(node.lineno)
    return out


@pytest.mark.slow
def test_records_are_built_only_by_record_py():
    bad = ["%s:%d" % (rel, n) for rel, text in sources("firmware", "boardkit", "host") for n in hand_built_records(text)]
    assert not bad, "build records with engine_lite/record.py (encode_*):\n" + "\n".join(bad)


def test_the_check_sees_a_hand_built_record():
    assert hand_built_records("rec = bytes((record.OP_TAKE, 3))\nok = record.encode_take(3)\n") == [1]

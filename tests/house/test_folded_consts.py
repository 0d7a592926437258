"""The board modules' folded copies of other modules' int constants.

A `const` folds only within its module, so a board module that read
`record.OP_PLANT` (or imported `B_OK`) paid for the name in its .mpy and a
lookup or two on every use, and every bundle byte is heap on the Pico
(docs/design.md "Memory and the bundle"). So the board modules keep private
copies (`_OP_PLANT = const(2)`) of the int constants of engine_lite/record.py,
engine_lite/vocab.py, firmware/buttons.py and firmware/ring.py that they
read: each must equal its module's; a module with a copy does not also
import the name; and no board module reads one of record's or ring's int
constants as `record.X` or `ring.X` (fold it instead).
"""

import ast

from engine_lite import record, vocab
from firmware import buttons, ring
from host.build import bundle
from tests.kit.mpy_harness import REPO

SOURCES = {"engine_lite/record.py": record, "engine_lite/vocab.py": vocab, "firmware/buttons.py": buttons, "firmware/ring.py": ring}
# the modules the board imports whole (`from engine_lite import record`): a read of
# one of their int constants as `module.X` is a lookup a private copy would fold
READ_WHOLE = {"record": "engine_lite/record.py", "ring": "firmware/ring.py"}


def _ints(rel, module):
    """The public int constants module `rel` assigns itself (not those it imports)."""
    own = set()
    for node in ast.parse((REPO / rel).read_text(), rel).body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        own.update(t.id for t in targets if isinstance(t, ast.Name))
    return {n: v for n, v in vars(module).items() if n in own and n.isupper() and not n.startswith("_") and type(v) is int}


def _all_ints():
    out = {}
    for rel, module in SOURCES.items():
        for n, v in _ints(rel, module).items():
            assert n not in out, "%s is an int constant of two modules" % n
            out[n] = (rel, v)
    return out


def _copies(tree, names):
    """{name: value} of the module's `_NAME = const(v)` for each NAME of `names`."""
    out = {}
    for node in tree.body:
        if isinstance(node, ast.AnnAssign):
            target, value = node.target, node.value
        elif isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        else:
            continue
        if (
            isinstance(target, ast.Name)
            and target.id.startswith("_")
            and target.id[1:] in names
            and isinstance(value, ast.Call)
            and getattr(value.func, "id", None) == "const"
        ):
            out[target.id[1:]] = ast.literal_eval(value.args[0])
    return out


def _imported(tree):
    return {a.asname or a.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) for a in node.names}


def test_the_board_modules_copies_equal_their_modules_constants():
    ints = _all_ints()
    found = {}
    bad = []
    for rel in bundle.shipped("micropython"):
        tree = ast.parse((REPO / rel).read_text(), rel)
        copies = _copies(tree, ints)
        found[rel] = copies
        for n, v in copies.items():
            if ints[n][0] == rel or ints[n][1] != v:
                bad.append("%s: _%s = %r, %s has %r" % (rel, n, v, ints[n][0], ints[n][1]))
        bad += ["%s imports %s and has a copy of it" % (rel, n) for n in sorted(_imported(tree) & set(copies))]
        bad += [
            "%s:%d: %s.%s: fold it into a private const" % (rel, node.lineno, node.value.id, node.attr)
            for node in ast.walk(tree)
            if isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in READ_WHOLE
            and node.attr in ints
            and ints[node.attr][0] == READ_WHOLE[node.value.id]
        ]
    assert bad == []
    # the rules, the game, the screens and the store read record's opcodes; the screens every button
    for rel in ("engine_lite/stalk.py", "engine_lite/orchids.py", "engine_lite/game.py", "firmware/screens.py", "firmware/storage.py"):
        assert any(n.startswith("OP_") for n in found[rel]), rel
    assert {"B_UNDO", "B_OK", "B_MENU", "SHORT", "LONG"} <= set(found["firmware/screens.py"])
    # the screens' modes, palettes, colours and refusals from the ring
    assert len([n for n in found["firmware/screens.py"] if ints[n][0] == "firmware/ring.py"]) >= 19


def test_the_check_sees_a_copy_and_its_value():
    ints = _all_ints()
    tree = ast.parse("from engine_lite.vocab import B_OK\n_OP_PLANT = const(3)\n_STALK: int = const(0)\n_OTHER = const(9)\n_B_OK = const(6)\n")
    assert _copies(tree, ints) == {"OP_PLANT": 3, "STALK": 0, "B_OK": 6}
    assert ints["OP_PLANT"] == ("engine_lite/record.py", 2) and ints["SHORT"] == ("firmware/buttons.py", 1)
    assert "B_OK" in _imported(tree)

"""The board's folded copies of engine_lite/record.py's int constants.

A `const` folds only within its module, so a board module that read
`record.OP_PLANT` paid for the name in its .mpy and two lookups on every
use, and every bundle byte is heap on the Pico (docs/design.md "Memory and
the bundle"). So the board modules keep private copies (`_OP_PLANT =
const(2)`): each must equal record's, and no board module may read one of
record's int constants as `record.X` (fold it instead).
"""

import ast

from engine_lite import record
from host.build import bundle
from tests.kit.mpy_harness import REPO


def _record_ints():
    return {n: v for n, v in vars(record).items() if n.isupper() and type(v) is int}


def _board_modules():
    return [rel for rel in bundle.shipped("micropython") if rel != "engine_lite/record.py"]


def _copies(tree, ints):
    """{record name: value} of the module's `_NAME = const(v)` for record's NAME."""
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
            and target.id[1:] in ints
            and isinstance(value, ast.Call)
            and getattr(value.func, "id", None) == "const"
        ):
            out[target.id[1:]] = ast.literal_eval(value.args[0])
    return out


def test_the_board_modules_copies_of_records_constants_equal_records():
    ints = _record_ints()
    found = {}
    read = []
    for rel in _board_modules():
        tree = ast.parse((REPO / rel).read_text(), rel)
        copies = _copies(tree, ints)
        found[rel] = copies
        assert copies == {n: ints[n] for n in copies}, rel
        read += [
            "%s:%d: record.%s" % (rel, node.lineno, node.attr)
            for node in ast.walk(tree)
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "record" and node.attr in ints
        ]
    assert read == [], "fold these into private consts: %s" % read
    # the rules, the game, the screens, the app and the store read record's opcodes
    for rel in ("engine_lite/stalk.py", "engine_lite/orchids.py", "engine_lite/game.py", "firmware/screens.py", "firmware/storage.py"):
        assert any(n.startswith("OP_") for n in found[rel]), rel


def test_the_check_sees_a_wrong_copy_and_a_read():
    ints = _record_ints()
    tree = ast.parse("_OP_PLANT = const(3)\n_STALK: int = const(0)\n_OTHER = const(9)\nx = record.OP_SWAP\n")
    assert _copies(tree, ints) == {"OP_PLANT": 3, "STALK": 0}
    assert ints["OP_PLANT"] == 2 and "OP_SWAP" in ints

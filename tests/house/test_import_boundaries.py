"""The house's walls (docs/architecture.md, "The house and its walls"): "a test
that enforces the import boundaries (`engine_lite` -> nothing; `firmware` ->
`engine_lite`; only `host` -> `firmware`)").

* `engine_lite` imports nothing of the project: only itself and what Python /
  MicroPython provide (it runs on the board AND on the host);
* `firmware` imports only `engine_lite` and itself (it is the board bundle);
* `boardkit` (the simulator's board modules: simulated pins, in-memory
  flash, button scripts, words) imports only `engine_lite`, `firmware` and
  itself, since it runs in MicroPython too; `firmware` never imports it;
* `firmware` is imported only by `host`, `boardkit` and the tooling around
  the code (`tests`, `bench`, `hardware`, `docs` scripts), never by
  `engine_lite`;
* so nothing in `engine_lite`, `firmware` or `boardkit` imports `host`;
* inside `host`, the commands are the top floor: only `host/cli.py` and the
  commands themselves import `host.commands` (a lower layer that needs a
  command's code means that code belongs in the layer);
* no module imports another module's private name (`from m import _x`): a
  name shared by two modules is public, or lives where both can reach it.

Every `.py` file is parsed with `ast`: imports at module level AND inside
functions (the board code imports lazily), relative imports resolved, and
`importlib.import_module("...")` / `__import__("...")` with a literal name.
A broken wall fails with the file, the line and the import.
"""

import ast
from pathlib import Path

import pytest

from tests.kit.mpy_harness import REPO

SKIP_DIRS = {".git", ".venv", "__pycache__", ".pytest_cache", ".hypothesis", ".mypy_cache"}
# what `make firmware` and a wheel build write, at the root only: host/build/ is source
BUILT_DIRS = {"build", "dist"}

# Top-level packages of the project and which of them each may import.
PROJECT = ("engine_lite", "firmware", "boardkit", "host", "tests", "bench", "hardware", "docs")
MAY_IMPORT = {
    "engine_lite": {"engine_lite"},
    "firmware": {"engine_lite", "firmware"},
    "boardkit": {"engine_lite", "firmware", "boardkit"},
}
# Who may import a package (a package not named here: anyone in the project).
IMPORTED_BY = {
    "firmware": {"firmware", "boardkit", "host", "tests", "bench", "hardware", "docs"},
}


def python_files(root):
    """Every .py file of the tree under `root`, as paths relative to it."""
    out = []
    for path in sorted(Path(root).rglob("*.py")):
        rel = path.relative_to(root)
        if len(rel.parts) > 1 and rel.parts[0] in BUILT_DIRS:
            continue
        if not any(part in SKIP_DIRS or part.endswith(".egg-info") for part in rel.parts[:-1]):
            out.append(rel)
    return out


def _package_of(rel):
    """The package a file's relative imports start from (a package's
    __init__.py is in the package itself), as a list of names."""
    return list(rel.parts[:-1])


def imports_of(root, rel, names=False):
    """(line, dotted module name) of every import in file `rel`, at any depth.
    names=True: (line, module, [names imported from it]) instead (empty for
    `import m` and a dynamic import)."""
    tree = ast.parse((Path(root) / rel).read_text(), str(rel))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name, []) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = _package_of(rel)
                base = base[: len(base) - (node.level - 1)] if node.level > 1 else base
                name = ".".join(base + ([node.module] if node.module else []))
            else:
                name = node.module
            found.append((node.lineno, name, [a.name for a in node.names]))
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
            f = node.func
            called = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
            if called in ("import_module", "__import__"):
                found.append((node.lineno, node.args[0].value, []))
    return found if names else [(line, name) for line, name, _ in found]


def violations(root):
    """One line per import that crosses a wall: 'file:line: X imports Y (why)'."""
    root = Path(root)
    tops = set(PROJECT) | {p.name for p in root.iterdir() if p.is_dir() and p.name not in SKIP_DIRS | BUILT_DIRS and not p.name.startswith(".")}
    out = []
    for rel in python_files(root):
        importer = rel.parts[0] if len(rel.parts) > 1 else None
        for line, name in imports_of(root, rel):
            target = name.split(".")[0]
            if target not in tops:
                continue  # the standard library, MicroPython builtins, third-party
            where = "%s:%d: %s imports %s" % (rel.as_posix(), line, importer or "the repository root", name)
            allowed = MAY_IMPORT.get(importer)
            if allowed is not None and target not in allowed:
                out.append("%s (%s may import only %s)" % (where, importer, " and ".join(sorted(allowed))))
            elif target in IMPORTED_BY and importer not in IMPORTED_BY[target]:
                out.append("%s (only %s import %s)" % (where, ", ".join(sorted(IMPORTED_BY[target] - {target})), target))
    return out


def module_of(rel):
    """The dotted module a file is ("host/sync/db.py" -> "host.sync.db")."""
    parts = list(rel.parts)
    parts[-1] = parts[-1][: -len(".py")]
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_private(name):
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def host_violations(root):
    """One line per import inside the project that breaks a floor of the
    house: a host module below the commands importing host.commands, or any
    module importing another module's private name."""
    root = Path(root)
    out = []
    for rel in python_files(root):
        me = module_of(rel)
        for line, name, imported in imports_of(root, rel, names=True):
            if not name:
                continue
            where = "%s:%d: %s imports" % (rel.as_posix(), line, me or rel.as_posix())
            if (name == "host.commands" or name.startswith("host.commands.")) and me.startswith("host.") and not (
                    me == "host.cli" or me.startswith("host.commands.") or me == "host.commands"):
                out.append("%s %s (only host/cli.py and the commands import host.commands)" % (where, name))
            if name.split(".")[0] not in PROJECT and not (root / name.split(".")[0]).is_dir():
                continue  # the standard library, third-party
            private = [n for n in imported if _is_private(n)] + [p for p in name.split(".")[1:] if _is_private(p)]
            if private and name != me:
                out.append("%s %s from %s (a private name of another module)" % (where, ", ".join(private), name))
    return out


@pytest.mark.slow
def test_the_tree_keeps_its_import_boundaries():
    files = python_files(REPO)
    assert len([f for f in files if f.parts[0] in ("engine_lite", "firmware")]) >= 20, "the board code was not found"
    bad = violations(REPO)
    assert not bad, "imports across the house's walls:\n" + "\n".join(bad)


def test_commands_are_imported_only_by_the_cli_and_no_private_name_crosses_a_module():
    assert any(f.parts[:2] == ("host", "commands") for f in python_files(REPO)), "the commands were not found"
    bad = host_violations(REPO)
    assert not bad, "imports that break the host's floors or take a private name:\n" + "\n".join(bad)


SYNTHETIC = {
    # allowed
    "engine_lite/__init__.py": "import binascii\nfrom engine_lite import tables\nfrom . import rules\n",
    "engine_lite/tables.py": "try:\n    from micropython import const\nexcept ImportError:\n    pass\n",
    "engine_lite/rules.py": "from .tables import X\n",
    "firmware/__init__.py": "",
    "firmware/app.py": "import machine\nfrom engine_lite import Game\nfrom firmware import ring\nfrom . import ring as r2\n",
    "firmware/ring.py": "",
    "host/__init__.py": "",
    "host/cli.py": "from firmware import codec\nimport engine_lite\n",
    "tests/test_x.py": "import firmware.app\nimport host.cli\n",
    "hardware/generate.py": "from firmware import ring\n",
    # each breaks one wall
    "engine_lite/bad_lazy.py": "def f():\n    from firmware import link\n",
    "engine_lite/bad_host.py": "import host.cli\n",
    "engine_lite/bad_dynamic.py": "import importlib\nm = importlib.import_module('firmware.app')\n",
    "firmware/bad_host.py": "def g():\n    import host.sync.link\n",
    "firmware/bad_relative.py": "from ..host import cli\n",
    "firmware/bad_tests.py": "from tests import helpers\n",
    "firmware/bad_kit.py": "def h():\n    from boardkit import memfs\n",
    "boardkit/__init__.py": "",
    "boardkit/memfs.py": "",
    "boardkit/script.py": "from firmware.buttons import BUTTONS\nfrom engine_lite.vocab import HOLD_MS\n",
    "boardkit/bad_host.py": "import host.errors\n",
    "tools/bad_tool.py": "import firmware.app\n",
}


def write_tree(root, files):
    """Write {relative path: text} under `root`, folders made."""
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


def test_each_broken_wall_is_named_with_its_file_line_and_import(tmp_path):
    write_tree(tmp_path, SYNTHETIC)
    bad = violations(tmp_path)
    assert sorted(line.split(" (")[0] for line in bad) == [
        "boardkit/bad_host.py:1: boardkit imports host.errors",
        "engine_lite/bad_dynamic.py:2: engine_lite imports firmware.app",
        "engine_lite/bad_host.py:1: engine_lite imports host.cli",
        "engine_lite/bad_lazy.py:2: engine_lite imports firmware",
        "firmware/bad_host.py:2: firmware imports host.sync.link",
        "firmware/bad_kit.py:2: firmware imports boardkit",
        "firmware/bad_relative.py:1: firmware imports host",
        "firmware/bad_tests.py:1: firmware imports tests",
        "tools/bad_tool.py:1: tools imports firmware.app",
    ]
    assert any("(engine_lite may import only engine_lite)" in line for line in bad)
    assert any("(boardkit may import only boardkit and engine_lite and firmware)" in line for line in bad)
    assert any("(only bench, boardkit, docs, hardware, host, tests import firmware)" in line for line in bad)

HOST_SYNTHETIC = {
    # allowed
    "host/__init__.py": "",
    "host/cli.py": "import importlib\nimportlib.import_module('host.commands.sync')\nfrom host.commands import sim\n",
    "host/commands/__init__.py": "",
    "host/commands/sync.py": "from host.commands.doctor import version_note\nfrom . import options\nimport os._x\n",
    "host/commands/doctor.py": "def _own():\n    pass\n",
    "host/sync/db.py": "from host.sync import link\nfrom host.sync.link import __version__, peer_error\n",
    "host/sync/link.py": "",
    "tests/test_x.py": "from host.commands import flash\n",
    # each breaks one rule
    "host/sync/bad_up.py": "def f():\n    from host.commands.sync import Follower\n",
    "host/board_sim/bad_dynamic.py": "import importlib\nm = importlib.import_module('host.commands.sim')\n",
    "host/dashboard/bad_relative.py": "from ..commands import serve\n",
    "host/sync/bad_private.py": "from host.sync.link import peer_error, _one_line\n",
    "tests/bad_private.py": "from host.commands.doctor import _own\n",
    "bench/bad_private_module.py": "import host.sync._hidden\n",
}


def test_each_broken_floor_and_each_private_import_is_named(tmp_path):
    write_tree(tmp_path, HOST_SYNTHETIC)
    bad = host_violations(tmp_path)
    assert sorted(line.split(" (")[0] for line in bad) == [
        "bench/bad_private_module.py:1: bench.bad_private_module imports _hidden from host.sync._hidden",
        "host/board_sim/bad_dynamic.py:2: host.board_sim.bad_dynamic imports host.commands.sim",
        "host/dashboard/bad_relative.py:1: host.dashboard.bad_relative imports host.commands",
        "host/sync/bad_private.py:1: host.sync.bad_private imports _one_line from host.sync.link",
        "host/sync/bad_up.py:2: host.sync.bad_up imports host.commands.sync",
        "tests/bad_private.py:1: tests.bad_private imports _own from host.commands.doctor",
    ]

"""host/build/manifest.py, the one list of what goes on a board, is exactly
the import closure of firmware/main.py on each runtime.

The build copies the manifest's files and never parses the firmware
(host/build/bundle.py), so this is where the closure is found: every
`.py` the entry needs, by parsing imports with `ast` (module-level AND lazy,
function-level ones, relative ones resolved; `from pkg import name` counts
as importing pkg.name when that is a module). A lazy import that the board
never executes is left out only if HOST_ONLY names it (with the reason), or
if it is the other runtime's hardware backend (the module the other
runtime's list has and this one's has not); a module-level import of either
fails, since it would break the import on the board. Imports of modules the
runtime provides (`machine`, `board`, ...) are checked against
RUNTIME_MODULES: an import of anything else (say `dataclasses`) fails here
instead of on the board.
"""

import ast
from pathlib import Path

import pytest

from host.build import bundle
from tests.kit.mpy_harness import REPO

PACKAGES = ("engine_lite", "firmware")  # the packages that go on a board
ENTRY = "firmware.main"

# Lazy imports of board code that no board runs, and why (both runtimes).
HOST_ONLY = {
    "engine_lite.table_score": "engine_lite.score scores a whole table on the host; the board never does",
    "engine_lite.stamp": "nonce/at/uptime as JSON; the board writes them as bytes (firmware.hw.stamp)",
    "engine_lite.readout": "state dicts and decoded events: the board sends compact records, the host decodes them",
}

# Modules each runtime provides (built in, or shipped by the bundle under lib/).
_COMMON = {"micropython", "time", "json", "binascii", "sys", "os", "gc", "select", "struct", "io", "errno",
           "array", "collections", "math", "random", "re", "hashlib"}
RUNTIME_MODULES = {
    "micropython": _COMMON | {"machine", "neopixel", "rp2", "vfs", "uctypes", "asyncio", "framebuf",
                              "network", "socket"},  # the last two: the Pico W's port (its image alone imports them)
    "circuitpython": _COMMON | {"board", "digitalio", "neopixel", "supervisor", "usb_cdc", "storage",
                                "microcontroller", "busio", "keypad", "rp2pio", "adafruit_pixelbuf", "neopixel_write", "rtc"},
}
# A frozen firmware image's own facts (host/build/uf2.py): firmware/hw.py
# image() imports it where it exists and reads files where it does not.
for _mods in RUNTIME_MODULES.values():
    _mods.add("bk_image")
# Only CPython code paths import these (lazily, from code no board runs).
CPYTHON_MODULES = {"threading", "queue", "pathlib", "typing", "dataclasses", "subprocess", "serial", "uuid"}


class ClosureError(Exception):
    """The firmware imports what the board cannot have (one line)."""


def module_path(name, root=REPO):
    """'firmware.ring' -> 'firmware/ring.py' (or '.../__init__.py'), or None if not a board module."""
    if name.split(".")[0] not in PACKAGES:
        return None
    base = Path(root, *name.split("."))
    for p in (base.with_suffix(".py"), base / "__init__.py"):
        if p.is_file():
            return p.relative_to(root).as_posix()
    return None


def imports_of(relpath, root=REPO):
    """[(module name, lazy, line)] imported by one board file; lazy = inside a
    function (runs only if it is called); module level includes try/if."""
    tree = ast.parse(Path(root, relpath).read_text(), relpath)
    me = relpath[: -len(".py")].replace("/", ".")
    package = me.rsplit(".", 1)[0] if not relpath.endswith("__init__.py") else me[: -len(".__init__")]
    out = []

    def visit(node, lazy):
        for child in ast.iter_child_nodes(node):
            inner = lazy or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            if isinstance(child, ast.Import):
                for a in child.names:
                    out.append((a.name, lazy, child.lineno))
            elif isinstance(child, ast.ImportFrom):
                mod = child.module or ""
                if child.level:
                    parts = package.split(".")
                    parts = parts[: len(parts) - (child.level - 1)]
                    mod = ".".join(parts + ([mod] if mod else []))
                names = [mod] if mod else []
                for a in child.names:
                    sub = mod + "." + a.name if mod else a.name
                    if module_path(sub, root):
                        names.append(sub)
                for n in names:
                    out.append((n, lazy, child.lineno))
            visit(child, inner)

    visit(tree, False)
    return out


def closure(runtime, left_out, root=REPO, entry=ENTRY):
    """The board modules `entry` needs on `runtime`: (sorted relative .py
    paths, {left-out module reached lazily: why}). ClosureError for an import
    of an unknown module, a missing entry, or a module-level import of a
    left-out module."""
    provided = RUNTIME_MODULES[runtime]
    elsewhere = set().union(*RUNTIME_MODULES.values()) | CPYTHON_MODULES
    if module_path(entry, root) is None:
        raise ClosureError("%s not found: the board entry (%s) is missing" % (entry, entry.replace(".", "/") + ".py"))
    seen, todo, reached = set(), [entry], {}
    while todo:
        parts = todo.pop().split(".")
        for i in range(1, len(parts) + 1):  # importing a.b.c imports a and a.b first
            rel = module_path(".".join(parts[:i]), root)
            if rel is None or rel in seen:
                continue
            seen.add(rel)
            for mod, lazy, line in imports_of(rel, root):
                where = "%s:%d" % (rel, line)
                top = mod.split(".")[0]
                if top in PACKAGES:
                    if mod in left_out:
                        if not lazy:
                            raise ClosureError("%s imports %s at module level, but the %s bundle leaves it out (%s)"
                                               % (where, mod, runtime, left_out[mod]))
                        reached[mod] = left_out[mod]
                        continue
                    if module_path(mod, root) is None:
                        raise ClosureError("%s imports %s: no such board module" % (where, mod))
                    todo.append(mod)
                elif top in provided:
                    continue
                elif lazy and top in elsewhere:
                    continue  # another runtime's (or CPython's) module, in code this runtime never runs
                else:
                    raise ClosureError("%s imports %s, which %s does not provide" % (where, mod, runtime))
    return sorted(seen), reached


def _module(rel):
    return rel[: -len(".py")].replace("/", ".").replace(".__init__", "")


def left_out(runtime):
    """What `runtime`'s bundle may leave out: HOST_ONLY, and the other
    runtimes' backends (what their lists hold and this one's does not)."""
    mine = set(bundle.shipped(runtime))
    out = dict(HOST_ONLY)
    for other in bundle.RUNTIMES:
        for rel in set(bundle.shipped(other)) - mine:
            out[_module(rel)] = "the %s bundle's module (firmware.hw.make_hw picks by runtime)" % other
    return out


@pytest.mark.parametrize("runtime", bundle.RUNTIMES)
def test_the_manifest_is_exactly_the_closure_of_the_entry(runtime):
    mods, _ = closure(runtime, left_out(runtime))
    listed = bundle.shipped(runtime)
    missing, extra = sorted(set(mods) - set(listed)), sorted(set(listed) - set(mods))
    assert not missing and not extra, (
        "host/build/manifest.py (%s) misses %s and lists %s, which nothing imports" % (runtime, missing, extra))


def test_the_pico_w_set_is_exactly_the_closure_of_its_entry():
    """The manifest's `wifi` option (the Pico W's image): its entry,
    firmware/pico_w.py, reaches the Pico's modules, its own, and the state
    dicts its page shows (engine_lite.readout, which the Pico leaves out)."""
    left = {k: v for k, v in left_out("micropython").items() if k != "engine_lite.readout"}
    mods, _ = closure("micropython", left, entry="firmware.pico_w")
    listed = bundle.shipped("micropython", wifi=True)
    assert sorted(set(mods)) == listed
    assert set(listed) - set(bundle.shipped("micropython")) == {
        "engine_lite/readout.py", "firmware/pico_w.py", "firmware/table_page.py", "firmware/table_server.py", "firmware/wifi.py"}


@pytest.mark.parametrize("runtime", bundle.RUNTIMES)
def test_what_each_bundle_leaves_out_is_reached_only_lazily_and_named(runtime):
    """Every left-out module is really imported by board code (lazily), so
    HOST_ONLY cannot go stale; the two bundles differ only in the backend."""
    out = left_out(runtime)
    _, reached = closure(runtime, out)
    assert set(reached) <= set(out)
    named, rest = set(reached), set(out) - set(reached)  # not reached itself: imported by a left-out module, in turn (hw_cp brings keys_cp and journal_cp, journal_cp its reader)
    while rest:
        found = {mod for mod in rest if any(mod in (REPO / module_path(m)).read_text() for m in named if module_path(m))}
        assert found, sorted(rest)
        named, rest = named | found, rest - found
    for mod in HOST_ONLY:
        assert module_path(mod) and module_path(mod) not in bundle.shipped(runtime)
    other = [rt for rt in bundle.RUNTIMES if rt != runtime][0]
    assert set(bundle.shipped(runtime)) ^ set(bundle.shipped(other)) == {"firmware/hw_mp.py", "firmware/hw_cp.py", "firmware/keys_cp.py", "firmware/journal_cp.py", "firmware/journal_read_cp.py"}


def _freeze(**given):
    """Run the manifest with the functions MicroPython's build gives one;
    (includes, packages) it asked for."""
    seen = {"include": [], "package": []}
    env = {
        "options": bundle._Options(**given),
        "metadata": lambda **kw: None,
        "include": lambda path, **kw: seen["include"].append(path),
        "package": lambda path, files=None, base_path=".", opt=None: seen["package"].append((path, files, base_path, opt)),
    }
    exec(compile(bundle.MANIFEST.read_text(), str(bundle.MANIFEST), "exec"), env)
    return seen["include"], seen["package"]


def test_the_manifest_is_what_micropython_freezes():
    """With no option given, as a hand-written FROZEN_MANIFEST includes it:
    no port's manifest (so it freezes on any port: whoever freezes it
    includes the port's own, host/build/uf2.py does), the packages at -O3 as
    the bundle's mpy-cross, from the repository (paths relative to the file)."""
    includes, packages = _freeze()
    assert includes == []
    frozen = set()
    for path, files, base_path, opt in packages:
        assert opt == 3 and bundle.OPT == "-O3"
        assert (bundle.MANIFEST.parent / base_path).resolve() == REPO.resolve()
        frozen |= {"%s/%s" % (path, f) for f in files}
    assert sorted(frozen) == bundle.shipped("micropython")


def test_the_manifest_freezes_from_the_base_it_is_given(tmp_path):
    """`make uf2` points `base` at its stamped copy of the sources."""
    _, packages = _freeze(base=str(tmp_path))
    assert {base_path for _, _, base_path, _ in packages} == {str(tmp_path)}


# ---------------------------------------------------------- the closure rules


def _tree_with(tmp_path, files):
    for rel, src in files.items():
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(src)
    return tmp_path


def test_closure_follows_lazy_and_relative_imports(tmp_path):
    root = _tree_with(tmp_path, {
        "engine_lite/__init__.py": "def score():\n    from engine_lite.table_score import s\n",
        "engine_lite/table_score.py": "import dataclasses\n",
        "firmware/__init__.py": "",
        "firmware/main.py": "import engine_lite\nfrom . import ring\ndef main():\n    from firmware.hw import make\n",
        "firmware/ring.py": "try:\n    from micropython import const\nexcept ImportError:\n    pass\n",
        "firmware/hw.py": "def make():\n    import machine\n    import board\n",
        "firmware/unused.py": "",
    })
    mods, reached = closure("micropython", HOST_ONLY, root=root)
    assert mods == ["engine_lite/__init__.py", "firmware/__init__.py", "firmware/hw.py", "firmware/main.py", "firmware/ring.py"]
    assert reached == {"engine_lite.table_score": HOST_ONLY["engine_lite.table_score"]}


def test_closure_refuses_a_module_level_import_of_a_left_out_module(tmp_path):
    root = _tree_with(tmp_path, {
        "firmware/__init__.py": "",
        "firmware/main.py": "import firmware.hw_cp\n",
        "firmware/hw_cp.py": "",
    })
    with pytest.raises(ClosureError, match="hw_cp at module level"):
        closure("micropython", {"firmware.hw_cp": "the other backend"}, root=root)


@pytest.mark.parametrize("src, word", [("import dataclasses\n", "dataclasses"), ("def f():\n    import pathlib\n", "pathlib"),
                                       ("import board\n", "board"), ("from firmware import nothere\nimport firmware.nothere\n", "nothere")])
def test_closure_refuses_imports_the_board_cannot_satisfy(tmp_path, src, word):
    root = _tree_with(tmp_path, {"firmware/__init__.py": "", "firmware/main.py": src})
    if word == "pathlib":  # lazy CPython-only import: tolerated (code the board never runs)
        closure("micropython", {}, root=root)
        return
    with pytest.raises(ClosureError, match=word):
        closure("micropython", {}, root=root)


def test_missing_entry_is_a_clear_error(tmp_path):
    root = _tree_with(tmp_path, {"firmware/__init__.py": ""})
    with pytest.raises(ClosureError, match="firmware/main.py"):
        closure("micropython", {}, root=root)


# ---------------------------------------------------------- the manifest reader


def test_the_reader_takes_the_runtime_option_and_refuses_what_it_cannot_follow(tmp_path):
    root = _tree_with(tmp_path, {"firmware/__init__.py": "", "firmware/hw_mp.py": "", "firmware/hw_cp.py": ""})
    m = root / "host/build/manifest.py"
    m.parent.mkdir(parents=True)
    m.write_text('options.defaults(runtime="micropython")\nmetadata(description="x")\ninclude("$(PORT_DIR)/boards/manifest.py")\n'
                 'package("firmware", files=("__init__.py", "hw_mp.py" if options.runtime == "micropython" else "hw_cp.py"),'
                 ' base_path="../..", opt=3)\n')
    assert bundle.shipped("micropython", m, root) == ["firmware/__init__.py", "firmware/hw_mp.py"]
    assert bundle.shipped("circuitpython", m, root) == ["firmware/__init__.py", "firmware/hw_cp.py"]
    m.write_text('package("firmware", files=("__init__.py", "gone.py"), base_path="../..")\n')
    with pytest.raises(bundle.BundleError, match="lists firmware/gone.py, which is not there"):
        bundle.shipped("micropython", m, root)
    m.write_text('module("firmware/hw_mp.py")\n')
    with pytest.raises(bundle.BundleError, match="module"):
        bundle.shipped("micropython", m, root)
    m.write_text('package("firmware")\n')
    with pytest.raises(bundle.BundleError, match="must list its files"):
        bundle.shipped("micropython", m, root)
    with pytest.raises(bundle.BundleError, match="unknown runtime"):
        bundle.shipped("arduino", m, root)


def test_the_bundle_is_the_manifests_files_and_nothing_else(tmp_path):
    """A module the manifest leaves out is not built, whatever imports it:
    the list decides, this file's closure test keeps the list right."""
    root = _tree_with(tmp_path, {"firmware/__init__.py": "", "firmware/main.py": "import firmware.extra\n",
                                 "firmware/extra.py": "", "firmware/pinmap.json": '{"boards": {}}'})
    m = root / "host/build/manifest.py"
    m.parent.mkdir(parents=True)
    m.write_text('package("firmware", files=("__init__.py", "main.py"), base_path="../..")\n')
    files = bundle.build("micropython", tmp_path / "out", root=root, manifest=m, version="9")
    assert sorted(files) == ["firmware/__init__.mpy", "firmware/main.mpy", "firmware/pinmap.json", "main.py"]

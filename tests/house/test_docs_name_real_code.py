"""Docs and comments name only code that exists.

A reader who meets `Game.cost` in a comment goes looking for it; if no
class Game has a cost, the sentence sends them nowhere (it once did: the
cost lives on each title's state, StalkState.cost and OrchidsState.cost).
So every ``Class.attribute`` written in a tracked Markdown or Python file,
where Class is a class this repository defines, must name an attribute
that class (or one of its bases here) defines: a method, a class
attribute, or a ``self.x`` it assigns. A class with a base from outside
the repository (an Exception, a Textual App) may inherit anything, so it
is left alone. Every backticked path under one of the repository's own
folders must exist too (the layout in docs/architecture.md is what ``ls``
shows).
"""

import ast
import re

from tests.kit.tracked import ROOT, tracked_texts

THIS = "tests/house/test_docs_name_real_code.py"
OWN_DIRS = ("engine_lite/", "firmware/", "host/", "tests/", "bench/", "docs/", "hardware/")
NAMED = re.compile(r"\b([A-Z]\w*[a-z]\w*)\.([a-z_]\w*)\b")
PATH = re.compile(r"`((?:%s)[\w./-]*)`" % "|".join(re.escape(d) for d in OWN_DIRS))


def _classes(texts):
    """{class name: (attributes, base names)} over every tracked .py file."""
    found = {}
    for rel, text in texts:
        if not rel.endswith(".py"):
            continue
        try:
            tree = ast.parse(text)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if not isinstance(node, ast.ClassDef):
                continue
            attrs, bases = found.setdefault(node.name, (set(), set()))
            for n in ast.walk(node):
                if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    attrs.add(n.name)
                elif isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id in ("self", "cls"):
                    attrs.add(n.attr)
                elif isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                    attrs.add(n.id)
            for b in node.bases:
                bases.add(b.id if isinstance(b, ast.Name) else getattr(b, "attr", "?"))
    return found


def _defines(classes, name, attr, seen=()):
    attrs, bases = classes[name]
    if attr in attrs:
        return True
    for base in bases - {"object"}:
        if base not in classes or base in seen:  # from outside: it may define anything
            return True
        if _defines(classes, base, attr, seen + (name,)):
            return True
    return False


def unknown_names(texts):
    texts = list(texts)
    classes = _classes(texts)
    out = []
    for rel, text in texts:
        if not rel.endswith((".py", ".md")):
            continue
        for m in NAMED.finditer(text):
            name, attr = m.groups()
            if name in classes and not _defines(classes, name, attr):
                out.append("%s:%d: %s.%s" % (rel, text.count("\n", 0, m.start()) + 1, name, attr))
    return out


def test_every_class_attribute_named_in_docs_and_comments_exists():
    # this file is left out: it holds the examples the check must find
    found = unknown_names((rel, text) for rel, text in tracked_texts() if not rel.endswith(THIS))
    assert not found, "named but not defined:\n" + "\n".join(found)


def _exists(path):
    """A file or folder, or ``module/path.name``: the module (``.py``) exists
    and defines that name at its top level (a def, a class, an assignment)."""
    if (ROOT / path).exists():
        return True
    module, _, name = path.partition(".")
    source = ROOT / (module + ".py")
    if not source.is_file() and (ROOT / module).is_dir():
        source = ROOT / module / "__init__.py"
    if not source.is_file():
        return False
    if not name:
        return True
    top = name.split(".")[0]
    return bool(re.search(r"^(?:def|class)\s+%s\b|^%s\s*[:=]" % (top, top), source.read_text(), re.M))


def test_every_backticked_path_in_the_docs_exists():
    missing = []
    for rel, text in tracked_texts():
        if not rel.endswith(".md"):
            continue
        for m in PATH.finditer(text):
            path = m.group(1).rstrip(".")
            if "*" not in path and not _exists(path):
                missing.append("%s:%d: %s" % (rel, text.count("\n", 0, m.start()) + 1, path))
    assert not missing, "named but not in the repository:\n" + "\n".join(missing)


def test_the_check_finds_a_name_that_is_not_there():
    code = ("a.py", "class Game:\n    def legal(self):\n        self.log = 1\n")
    doc = ("d.md", "ask `Game.legal`, read `Game.log`, never `Game.cost`")
    assert unknown_names([code, doc]) == ["d.md:1: Game.cost"]


def test_a_class_with_a_base_from_outside_may_inherit_anything():
    code = ("a.py", "class Oops(ValueError):\n    pass\n")
    assert unknown_names([code, ("d.md", "`Oops.args`")]) == []


def test_a_module_path_with_a_name_must_define_it():
    assert _exists("tests/house/test_docs_name_real_code.unknown_names")
    assert _exists("tests/house/test_self_contained.pointers") and _exists("firmware/main")
    assert not _exists("tests/house/test_docs_name_real_code.no_such_name")
    assert not _exists("firmware/no_such_module.x")


def test_the_architecture_page_names_every_folder():
    """docs/architecture.md is the map a new maintainer reads beside `ls`:
    every tracked top-level folder, and every folder inside host/ and
    tests/, is named on it."""
    folders = set()
    for rel, _ in tracked_texts():
        parts = rel.split("/")
        if len(parts) > 1 and not parts[0].startswith("."):
            folders.add(parts[0] + "/")
            if parts[0] in ("host", "tests") and len(parts) > 2:
                folders.add("/".join(parts[:2]) + "/")
    page = (ROOT / "docs/architecture.md").read_text()
    missing = sorted(f for f in folders if f not in page)
    assert not missing, "folders docs/architecture.md does not name: %s" % ", ".join(missing)

"""The repository explains itself: nothing tracked points outside it.

A clone holds the code, the tests, the docs and the bench, and nothing
else: not the project's tracker and not notes kept beside the repository.
A comment that gives a tracker number or sends the reader to such a note
tells a reader of the clone nothing, so every tracked text file is read
here and each such pointer is named by file and line. Write the reason or
the fact itself instead; a budget points at docs/design.md, a rule at the
rulebook by title and section, an interpretation at docs/rulings.md.

Web addresses are left out before matching: a third-party project's issue
page cited as a source (github.com/OWNER/NAME/issues/N) is a real address
anyone can open. This file is the one left out: it holds the examples the
check must find.
"""

import re
from pathlib import Path

import pytest

from tests.kit.tracked import ROOT, tracked_texts

SELF = Path(__file__).resolve().relative_to(ROOT).as_posix()


def own_texts():
    """Every tracked text but this file's (it holds the examples the check must find)."""
    return ((rel, text) for rel, text in tracked_texts() if rel != SELF)


URL = re.compile(r"https?://\S+")
POINTERS = re.compile(
    "|".join(
        (
            r"\bissues?(?:\s+#?|#)\d+",  # a tracker number, also wrapped onto the next line
            r"(?:\(|\band\s|,\s|\bsee\s)#\d+\b",  # a bare tracker number: "(#14)", "see #3"
            r"\b(?:the|this|that)\s+issue\b",  # the tracker's entry by another name
            r"\b(?:issue|bug)\s+tracker\b",
            r"\bdesign[ -]notes?\b",  # the notes kept beside the repository
            r"\.\./shared\b|/work/shared\b|\bshared/rules\b",
        )
    ),
    re.IGNORECASE,
)
# Outside docs/ a bare "design.md" is not this repository's page (that is
# docs/design.md; inside docs/ the bare name is a relative link to it).
BARE_DESIGN = re.compile(r"(?<![\w/.-])design\.md\b")


def pointers(text, rel=""):
    """(line number, matched text) of each pointer outside the repository
    in the text of the tracked file rel."""
    text = URL.sub(lambda m: "u" * len(m.group()), text)  # same length, no newline: lines stay put
    found = list(POINTERS.finditer(text))
    if not rel.startswith("docs/"):
        found += BARE_DESIGN.finditer(text)
    found.sort(key=lambda m: m.start())
    return [(text.count("\n", 0, m.start()) + 1, " ".join(m.group().split())) for m in found]


@pytest.mark.slow
def test_no_tracked_file_points_at_the_tracker_or_at_notes_outside_the_repository():
    found = ["%s:%d: %r" % (rel, line, what) for rel, text in own_texts() for line, what in pointers(text, rel)]
    assert not found, "%d pointer(s) outside the repository; write the reason or fact itself:\n%s" % (
        len(found),
        "\n".join(found),
    )


def test_the_check_has_files_to_read():
    rels = {rel for rel, _ in own_texts()}
    assert {"README.md", "docs/design.md", "bench/__main__.py"} <= rels and SELF not in rels


@pytest.mark.parametrize(
    "text",
    [
        "budget 25 ms (issue 14)",
        "Issue 13's budgets",
        "see issues 12, 13, 14",
        "the code before issue\n    10 wrote it",
        "fixed in issue #7",
        "as asked (#14)",
        "The issue's bug: a board",
        "the design note's emulated RP2040",
        "design notes and rulings",
        "the rulebooks (`../shared/rules/`)",
        "on the bug tracker",
    ],
)
def test_a_pointer_outside_the_repository_is_found(text):
    assert pointers(text), text


@pytest.mark.parametrize(
    "text",
    [
        "a known bug (https://github.com/micropython/micropython/issues/16650)",
        "firmware fault: #1 setup_game RuntimeError: boom",
        "a shared victory; ties share the rank",
        "test_the_issue_table_on_the_real_app",
        "budget 25 ms (docs/design.md)",
        "the rulebook (Stalk Exchange, Setup 5)",
    ],
)
def test_legitimate_text_is_left_alone(text):
    assert not pointers(text), text


def test_design_md_is_the_repositorys_own_page_only_by_its_path():
    assert pointers("Gates for board code (design.md, rules)", "tests/test_x.py") == [(1, "design.md")]
    assert not pointers("budgets: docs/design.md", "tests/test_x.py")
    assert not pointers("[budgets](design.md)", "docs/ring.md")


def test_a_pointer_is_named_by_its_line():
    assert pointers("one\ntwo\nthree (issue 3)\n") == [(3, "issue 3")]
    assert pointers("https://example.org/a\nwrapped issue\n10 here") == [(2, "issue 10")]

"""What users of command-line tools expect of `bloomkeeper`: --version, a
description and one example in every subcommand's --help, shell completion."""

import os
import shutil
import subprocess
import sys

import pytest

from host import __version__, cli
from tests.kit.mpy_harness import REPO


def _subcommands():
    parser = cli.build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    return sub.choices


@pytest.mark.slow
def test_version():
    r = subprocess.run([sys.executable, "-m", "host.cli", "--version"], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stdout == "bloomkeeper %s\n" % __version__


@pytest.mark.parametrize("name", sorted(_subcommands()))
def test_every_subcommand_has_a_description_and_an_example(name):
    p = _subcommands()[name]
    assert p.description and len(p.description) > 40, name
    assert p.epilog and p.epilog.startswith("example: bloomkeeper %s" % name), name
    text = p.format_help()
    assert p.epilog in text


@pytest.mark.slow
def test_completion_scripts_know_every_subcommand():
    names = sorted(_subcommands())
    for shell in ("bash", "zsh"):
        r = subprocess.run([sys.executable, "-m", "host.cli", "completion", shell], cwd=REPO, capture_output=True,
                           text=True, timeout=60)
        assert r.returncode == 0, r.stderr
        for n in names:
            assert n in r.stdout
    if shutil.which("bash"):
        r = subprocess.run(["bash", "-n"], input=subprocess.run(
            [sys.executable, "-m", "host.cli", "completion", "bash"], cwd=REPO, capture_output=True, text=True, timeout=60).stdout,
            capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr  # a script bash can source


@pytest.mark.parametrize(
    "argv, said",
    [
        (["--verison"], "bloomkeeper: unknown option --verison (did you mean --version?)"),
        (["sync", "--prot", "x"], "bloomkeeper: sync: unknown option --prot (did you mean --port?)"),
        (["sim", "--runtme", "micropython"], "bloomkeeper: sim: unknown option --runtme (did you mean --runtime?)"),
        (["sync", "--port=x", "--zzzz"], "bloomkeeper: sync: unknown option --zzzz"),
        ([], "bloomkeeper: the following arguments are required: COMMAND"),  # nothing misspelt: argparse's own words
    ],
)
def test_a_misspelt_option_is_named_not_reported_as_a_missing_command(capsys, argv, said):
    with pytest.raises(SystemExit) as e:
        cli.main(argv)
    assert e.value.code == 2
    assert capsys.readouterr().err == said + "\n"


def test_every_page_a_message_can_name_is_there_in_a_clone(capsys):
    """`bloomkeeper docs` lists each page at a file that exists (the wheel's
    copy: tests/packaging/test_wheel.py), and prints it."""
    from host import pages

    assert cli.main(["docs"]) == 0
    listed = dict(line.split(None, 1) for line in capsys.readouterr().out.splitlines())
    assert sorted(listed) == sorted(pages.SOURCES)
    assert all(os.path.isfile(p) for p in listed.values())
    assert cli.main(["docs", "controls"]) == 0 and capsys.readouterr().out.startswith("#")
    with pytest.raises(SystemExit) as e:
        cli.main(["docs", "protocl"])
    assert e.value.code == 2 and "no page 'protocl'" in capsys.readouterr().err
    with pytest.raises(AssertionError):
        pages.ref("no-such-page")  # a message cannot name a page that is not there

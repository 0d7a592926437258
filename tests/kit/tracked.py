"""Every tracked text file of the checkout, for the checks that read the
whole repository (tests/house/test_self_contained.py, tests/house/test_docs_name_real_code.py)."""

import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def tracked_texts():
    """(path, text) of every tracked file that is text; binary files are skipped."""
    try:
        out = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z"], capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        pytest.skip("not a git checkout, so no tracked files to read: %s" % e)
    for rel in out.decode().split("\0"):
        path = ROOT / rel
        if not rel or not path.is_file():  # deleted in the work tree, not yet committed
            continue
        data = path.read_bytes()
        if b"\0" in data[:8192]:
            continue
        try:
            yield rel, data.decode("utf-8")
        except UnicodeDecodeError:
            continue

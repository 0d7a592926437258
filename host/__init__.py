"""Bloomkeeper host tool (CPython only): the `bloomkeeper` command, serial link host side, plays database, exports."""

# The one version of the whole distribution: pyproject.toml reads it from here
# (setuptools' dynamic version), `bloomkeeper --version` prints it, and
# host/build/bundle.py stamps it into the board bundle, so the board's hello
# (`fw`) names the release it was built from and `doctor` can compare them.
__version__ = "0.1.0"

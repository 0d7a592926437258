"""Hypothesis without wall-clock verdicts; no user config file.

Speed is measured in bench/, never asserted in tests: a property test must not
fail because the 2-core CI machine was busy. So the default profile drops the
per-example deadline and the "too slow" health check everywhere; each test's
own @settings still fixes its example count.
"""

from hypothesis import HealthCheck, settings

settings.register_profile("no_wall_clock", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("no_wall_clock")

# The user's own config file (host/config.py: default port, database, names)
# must not steer the tests: every test, and every `bloomkeeper` it starts,
# reads an empty one unless it names its own.
import os as _os
import tempfile as _tempfile

_CONFIG = _os.path.join(_tempfile.mkdtemp(prefix="bk-config-"), "config.toml")
open(_CONFIG, "w").close()
_os.environ["BLOOMKEEPER_CONFIG"] = _CONFIG

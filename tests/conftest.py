"""Hypothesis without wall-clock verdicts.

Speed is measured in bench/, never asserted in tests: a property test must not
fail because the 2-core CI machine was busy. So the default profile drops the
per-example deadline and the "too slow" health check everywhere; each test's
own @settings still fixes its example count.
"""

from hypothesis import HealthCheck, settings

settings.register_profile("no_wall_clock", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("no_wall_clock")

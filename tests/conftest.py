import os

from hypothesis import HealthCheck, settings

# BYTEPAIR_HYPOTHESIS_EXAMPLES scales every property test (CI keeps the default).
settings.register_profile(
    "bytepair",
    max_examples=int(os.environ.get("BYTEPAIR_HYPOTHESIS_EXAMPLES", "100")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("bytepair")

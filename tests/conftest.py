import os

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

# Hypothesis profiles: "ci" (default, bounded) and "slow" (HYPOTHESIS_PROFILE=slow, or the
# `@pytest.mark.slow` variants that use settings.get_profile("slow")).
# CI replays the same examples every run (a red CI is then a reproducible
# finding, not luck); the "slow" profile explores fresh random examples.
settings.register_profile(
    "ci",
    max_examples=25,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "slow", max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture
def rng():
    """A seeded generator, fresh for every test so tests do not share streams."""
    return np.random.default_rng(20241121)

import numpy as np
import pytest


@pytest.fixture
def rng():
    """A seeded generator, fresh for every test so tests do not share streams."""
    return np.random.default_rng(20241121)

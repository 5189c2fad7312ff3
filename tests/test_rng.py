"""One rule for a secure source: only the exact samplers take it; floating-point draws refuse it."""

import numpy as np
import pytest

from invariantdp import InvariantDPError, Invariants
from invariantdp._rng import ExactSource, as_generator, exact_source
from invariantdp.distributions import KNormNoise, sample_discrete_laplace_exact
from invariantdp.mechanisms import (
    conditional_release,
    knorm,
    lp_mechanism,
    projected_gaussian,
    semi_dp_gaussian,
)
from invariantdp.secure import SecureGenerator

TOTAL = Invariants(np.ones((1, 2)))
FLOAT_DRAWS = [
    lambda g: as_generator(g),
    lambda g: projected_gaussian([1.0, 2.0], TOTAL, mu=1.0, rng=g),
    lambda g: semi_dp_gaussian([[1, 2], [3, 4]], mu=1.0, rng=g),
    lambda g: knorm([1.0, 2.0], np.eye(2), epsilon=1.0, rng=g),
    lambda g: conditional_release([3, 4], "laplace", TOTAL, epsilon=1.0, draws=2, rng=g),
    lambda g: KNormNoise("l2", 3, 1.0).rvs(random_state=g),
]


@pytest.mark.parametrize("call", FLOAT_DRAWS)
def test_floating_point_draws_refuse_a_secure_source(call):
    with pytest.raises(InvariantDPError, match=r"`rng` is a SecureGenerator, the source of"):
        call(SecureGenerator())


def test_mechanisms_with_secure_name_the_flag():
    with pytest.raises(InvariantDPError, match="`rng` is a SecureGenerator but `secure=False`"):
        lp_mechanism([1.0, 2.0], 2, epsilon=1.0, rng=SecureGenerator())


def test_exact_samplers_take_either_source():
    g = SecureGenerator()
    assert isinstance(g, ExactSource) and exact_source(g) is g
    assert isinstance(exact_source(3), np.random.Generator)
    assert sample_discrete_laplace_exact(2.0, size=3, rng=g).shape == (3,)
    a = sample_discrete_laplace_exact(2.0, size=5, rng=4)
    assert np.array_equal(a, sample_discrete_laplace_exact(2.0, size=5, rng=4))

"""Exact privacy profiles of Laplace and discrete Laplace noise, against independent sums.

A guarantee ``(epsilon, delta)`` of Laplace-type noise below its pure
epsilon used to be checked against a lower bound of ``delta(epsilon)``, so
that discrete Laplace of scale 1 passed with (0.5, 0.2) although its exact
delta(0.5) is 0.2876.  The closed forms are checked here against a direct
sum (integral) of ``(p0 - e**eps p1)_+`` over the output space.
"""

import math

import numpy as np
import pytest
from scipy import integrate, stats

from invariantdp import InvariantDPError
from invariantdp.privacy import discrete_laplace_delta, laplace_delta

SCALES = [0.2, 0.7, 1.0, 2.5, 10.0]
SHIFTS = [1, 2, 3, 7]


def _epsilons(eps0):
    return [0.0, 0.1, 0.5, 1.0, 0.3 * eps0, 0.999 * eps0, eps0, 2.0 * eps0]


def _discrete_pmf(k, scale):
    a = math.exp(-1.0 / scale)
    return (1 - a) / (1 + a) * a ** np.abs(k)


@pytest.mark.parametrize("scale", SCALES)
@pytest.mark.parametrize("d", SHIFTS)
def test_discrete_laplace_delta_is_the_hockey_stick_sum(scale, d):
    k = np.arange(-4000, 4001)  # the tail beyond holds below 1e-17 of the mass
    p0, p1 = _discrete_pmf(k, scale), _discrete_pmf(k - d, scale)
    for eps in _epsilons(d / scale):
        direct = float(np.sum(np.maximum(p0 - math.exp(eps) * p1, 0.0)))
        got = discrete_laplace_delta(epsilon=eps, scale=scale, sensitivity=d)
        assert got == pytest.approx(direct, rel=1e-11, abs=1e-15), (eps, got, direct)


@pytest.mark.parametrize("scale", SCALES)
@pytest.mark.parametrize("d", SHIFTS)
def test_laplace_delta_is_the_hockey_stick_integral(scale, d):
    for eps in _epsilons(d / scale):

        def excess(y, eps=eps):
            p0 = stats.laplace.pdf(y, scale=scale)
            return max(p0 - math.exp(eps) * stats.laplace.pdf(y, loc=d, scale=scale), 0.0)

        # the integrand has kinks at 0, d and where the loss crosses epsilon
        cut = min(max((d - eps * scale) / 2, 0.0), d)
        pieces = [(-np.inf, 0.0), (0.0, cut), (cut, d), (d, np.inf)]
        direct = sum(integrate.quad(excess, lo, hi, epsabs=1e-14)[0] for lo, hi in pieces)
        got = laplace_delta(epsilon=eps, scale=scale, sensitivity=d)
        assert got == pytest.approx(direct, rel=1e-8, abs=1e-13), (eps, got, direct)


def test_the_issue_numbers():
    # discrete Laplace scale 1: delta(0.5) = (1 - e**-0.5) / (1 + e**-1); Laplace: delta(0)
    assert discrete_laplace_delta(epsilon=0.5, scale=1.0) == pytest.approx(
        -math.expm1(-0.5) / (1 + math.exp(-1)), rel=1e-15
    )
    assert round(discrete_laplace_delta(epsilon=0.5, scale=1.0), 4) == 0.2876
    assert round(laplace_delta(epsilon=0.0, scale=1.0), 4) == 0.3935


@pytest.mark.parametrize("scale", [0.5, 1.0, 3.0])
def test_a_one_coordinate_shift_is_the_worst_l1_vector(scale):
    """Splitting an l1 shift of 2 over two coordinates gives a smaller delta at every epsilon."""
    k = np.arange(-300, 301)
    p = _discrete_pmf(k, scale)
    q = _discrete_pmf(k - 1, scale)
    P0, P1 = np.outer(p, p), np.outer(q, q)
    for eps in np.linspace(0.0, 2.0 / scale, 9):
        split = float(np.sum(np.maximum(P0 - math.exp(eps) * P1, 0.0)))
        one = discrete_laplace_delta(epsilon=eps, scale=scale, sensitivity=2)
        assert split <= one + 1e-15, (eps, split, one)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"epsilon": -0.1, "scale": 1.0}, r"`epsilon` \(-0\.1\) must be finite and >= 0"),
        ({"epsilon": math.inf, "scale": 1.0}, r"`epsilon`"),
        ({"epsilon": 0.1, "scale": 0.0}, r"`scale` \(0\.0\) must be > 0"),
        ({"epsilon": 0.1, "scale": 1.0, "sensitivity": -1.0}, r"`sensitivity`"),
    ],
)
def test_profile_arguments_are_checked(kwargs, match):
    for f in (laplace_delta, discrete_laplace_delta):
        with pytest.raises(InvariantDPError, match=match):
            f(**kwargs)
    with pytest.raises(InvariantDPError, match=r"`sensitivity` \(1\.5\) must be a whole number"):
        discrete_laplace_delta(epsilon=0.1, scale=1.0, sensitivity=1.5)


def test_tiny_and_huge_scales_stay_in_range():
    assert laplace_delta(epsilon=1.0, scale=5e-324) == 1.0
    assert discrete_laplace_delta(epsilon=1.0, scale=5e-324) == 1.0
    assert laplace_delta(epsilon=0.0, scale=1e300) == pytest.approx(0.5e-300, rel=1e-12)
    assert 0.0 <= discrete_laplace_delta(epsilon=0.0, scale=1e300) < 1e-299

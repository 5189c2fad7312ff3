"""Gaussian DP at epsilon = 0 (issue 22, section 8): the conversions take what
gdp_to_epsilon returns.

delta_mu(0) = Phi(mu/2) - Phi(-mu/2) = erf(mu / (2 sqrt 2)) (Balle & Wang 2018,
Thm. 8 at epsilon = 0).
"""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import special, stats

from invariantdp import InvariantDPError
from invariantdp.privacy import (
    eps_delta_to_gdp,
    gdp_log_delta,
    gdp_to_eps_delta,
    gdp_to_epsilon,
)


@pytest.mark.parametrize("mu", [1e-8, 0.05, 1.0, 3.0, 12.0])
def test_epsilon_zero_is_accepted_where_gdp_to_epsilon_returns_it(mu):
    delta0 = 2 * stats.norm.cdf(mu / 2) - 1 if mu > 1e-3 else special.erf(mu / 2 / math.sqrt(2))
    delta = 0.5 * (1 + delta0)  # a delta above delta_mu(0)
    assert gdp_to_epsilon(mu, delta) == 0.0
    # the same calls with the epsilon the package returned
    d0 = gdp_to_eps_delta(mu, 0.0)
    assert d0 == pytest.approx(delta0, rel=1e-12)
    assert d0 <= delta  # (0, delta0)-DP, so (0, delta)-DP too
    assert gdp_log_delta(mu, 0.0) == pytest.approx(math.log(delta0), rel=1e-12, abs=1e-13)
    # epsilon 0 is the limit of small epsilon
    assert gdp_to_eps_delta(mu, 1e-300) == pytest.approx(d0, rel=1e-12)


@pytest.mark.parametrize("mu", [1e-8, 0.05, 1.0, 3.0, 12.0])
def test_the_round_trip_at_epsilon_zero(mu):
    d0 = gdp_to_eps_delta(mu, 0.0)
    # back to mu: the largest double whose delta at 0 is at most d0
    back = eps_delta_to_gdp(0.0, d0)
    assert back >= mu and gdp_to_eps_delta(back, 0.0) == d0
    assert gdp_to_eps_delta(math.nextafter(back, math.inf), 0.0) > d0
    assert gdp_to_epsilon(back, d0) == 0.0
    # mu again, to the conditioning of erf: ulp(delta) / (erf' ulp(mu)) doubles share d0
    slope = math.exp(-((mu / 2) ** 2) / 2) / math.sqrt(2 * math.pi)
    assert back - mu <= 2 * math.ulp(d0) / slope + 2 * math.ulp(mu)
    # the closed form mu = 2 sqrt2 erfinv(delta)
    assert back == pytest.approx(2 * math.sqrt(2) * special.erfinv(d0), rel=1e-9)


@given(st.floats(-12, math.log10(0.999)).map(lambda e: 10.0**e))
def test_eps_delta_to_gdp_at_zero_is_on_the_safe_side(delta):
    mu = eps_delta_to_gdp(0.0, delta)
    assert gdp_to_eps_delta(mu, 0.0) <= delta
    assert gdp_to_eps_delta(math.nextafter(mu, math.inf), 0.0) > delta


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: gdp_to_eps_delta(1.0, -1.0), r"`epsilon` \(-1.0\) must be 0 or in \[2.2250"),
        (lambda: gdp_to_eps_delta(1.0, 1e-310), r"`epsilon` \(1e-310\) must be 0 or in"),
        (lambda: eps_delta_to_gdp(float("inf"), 0.1), r"`epsilon` \(inf\) must be 0 or in"),
        (lambda: gdp_log_delta(1.0, float("nan")), r"`epsilon` \(nan\) must not be NaN"),
        (lambda: eps_delta_to_gdp(0.0, 0.0), r"`delta` \(0.0\) must be in \(0, 1\)"),
    ],
)
def test_other_epsilons_are_still_refused(call, match):
    with pytest.raises(InvariantDPError, match=match):
        call()

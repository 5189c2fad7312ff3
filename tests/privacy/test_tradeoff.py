import numpy as np
import pytest
from scipy.stats import norm

from invariantdp.privacy import eps_delta, gaussian, group
from invariantdp.privacy.tradeoff import TradeoffFunction

ALPHA = np.linspace(0.0, 1.0, 201)


@pytest.mark.parametrize("f", [eps_delta(1.0), eps_delta(0.5, 0.1), gaussian(0.7), gaussian(2.0)])
def test_is_a_tradeoff_function(f):
    y = f(ALPHA)
    assert np.all(y <= ALPHA + 1e-15)
    assert np.all(np.diff(y) >= -1e-15)
    second = y[2:] - 2 * y[1:-1] + y[:-2]
    assert np.all(second >= -1e-12)  # convex


def test_eps_delta_formula():
    e, d = 0.8, 0.05
    f = eps_delta(e, d)
    a = 0.6
    expected = max(0.0, 1 - d - np.exp(e) + np.exp(e) * a, np.exp(-e) * (a - d))
    assert f(a) == pytest.approx(expected)


def test_gaussian_is_the_normal_tradeoff():
    # type I error 1 - alpha for N(0,1) vs N(mu,1): reject when X > z_alpha
    mu, a = 1.0, 0.9
    assert gaussian(mu)(a) == pytest.approx(norm.cdf(norm.ppf(a) - mu))


def test_inverse():
    for f in [eps_delta(1.0, 0.02), gaussian(1.5)]:
        y = np.linspace(0.01, 0.95, 30)
        np.testing.assert_allclose(f(f.inverse(y)), y, atol=1e-12)
        # the generic bisection agrees with the closed form
        np.testing.assert_allclose(TradeoffFunction.inverse(f, y), f.inverse(y), atol=1e-12)


def test_group_privacy():
    np.testing.assert_allclose(group(gaussian(0.5), 3)(ALPHA), gaussian(1.5)(ALPHA), atol=1e-12)
    np.testing.assert_allclose(group(eps_delta(0.5), 4)(ALPHA), eps_delta(2.0)(ALPHA), atol=1e-12)
    f = eps_delta(0.5, 0.01)
    g = group(f, 3)
    np.testing.assert_allclose(g(ALPHA), f(f(f(ALPHA))), atol=1e-15)
    assert TradeoffFunction.from_dict(g.to_dict())(0.7) == pytest.approx(g(0.7))


@pytest.mark.parametrize(
    "call,match",
    [
        (lambda: eps_delta(0.0), r"`epsilon` \(0.0\) must be > 0"),
        (lambda: eps_delta(1.0, -0.1), r"`delta` \(-0.1\) must be in \[0, 1\)"),
        (lambda: gaussian(-1), r"`mu` \(-1.0\) must be > 0"),
        (lambda: group(gaussian(1.0), 0), r"`k` \(0\) must be >= 1"),
    ],
)
def test_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()

import warnings

import numpy as np
import pytest
from scipy.stats import norm

from invariantdp._validation import InvariantDPError
from invariantdp.privacy import eps_delta, gaussian_tradeoff, group
from invariantdp.privacy._tradeoff import MAX_GROUP_SIZE, TradeoffFunction

ALPHA = np.linspace(0.0, 1.0, 201)


@pytest.mark.parametrize(
    "f", [eps_delta(1.0), eps_delta(0.5, 0.1), gaussian_tradeoff(0.7), gaussian_tradeoff(2.0)]
)
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
    assert gaussian_tradeoff(mu)(a) == pytest.approx(norm.cdf(norm.ppf(a) - mu))


def test_inverse():
    for f in [eps_delta(1.0, 0.02), gaussian_tradeoff(1.5)]:
        y = np.linspace(0.01, 0.95, 30)
        np.testing.assert_allclose(f(f.inverse(y)), y, atol=1e-12)
        # the generic bisection agrees with the closed form
        np.testing.assert_allclose(TradeoffFunction.inverse(f, y), f.inverse(y), atol=1e-12)


def test_group_privacy():
    np.testing.assert_allclose(
        group(gaussian_tradeoff(0.5), 3)(ALPHA), gaussian_tradeoff(1.5)(ALPHA), atol=1e-12
    )
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
        (lambda: gaussian_tradeoff(-1), r"`mu` \(-1.0\) must be > 0"),
        (lambda: group(gaussian_tradeoff(1.0), 0), r"`k` \(0\) must be >= 1"),
    ],
)
def test_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()


# --- extreme inputs (issue 10, item 4c) ---------------------------------------------------


@pytest.mark.parametrize("f", [eps_delta(1.0), eps_delta(0.5, 0.1), eps_delta(3.0, 1e-3)])
def test_eps_delta_fixed_point_closed_form(f):
    c = f.fixed_point()
    assert c == pytest.approx((1 - f.delta) / (1 + np.exp(f.epsilon)), rel=1e-14)
    assert f(1 - c) == pytest.approx(c, abs=1e-15)
    assert TradeoffFunction.fixed_point(f) == pytest.approx(c, abs=1e-14)  # generic bisection


@pytest.mark.parametrize("mu", [0.3, 1.0, 4.0])
def test_gaussian_fixed_point_closed_form(mu):
    f = gaussian_tradeoff(mu)
    assert f.fixed_point() == pytest.approx(TradeoffFunction.fixed_point(f), abs=1e-14)


def test_huge_epsilon_and_mu():
    """eps_delta(1e300) warned (overflow, inf * 0) in inverse and fixed_point;
    gaussian_tradeoff(1e300) reported a fixed point of 7e-17 instead of 0."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        f = eps_delta(1e300, 0.1)
        assert f(0.5) == 0.0 and f(1.0) == pytest.approx(0.9)
        assert f.inverse(0.5) == 1.0 and f.fixed_point() == 0.0
        g = gaussian_tradeoff(1e300)
        assert g(0.5) == 0.0 and g.inverse(0.5) == 1.0 and g.fixed_point() == 0.0
    assert gaussian_tradeoff(1e-300).fixed_point() == 0.5


def test_tiny_epsilon_is_nontrivial():
    """f_{1e-13} differs from alpha by < 1e-12 everywhere but is a nontrivial tradeoff."""
    assert eps_delta(1e-13).is_nontrivial() and gaussian_tradeoff(1e-300).is_nontrivial()


def test_group_with_huge_k():
    """group(f, 10**10) looped 10**10 times; huge k overflowed k * mu."""
    assert group(gaussian_tradeoff(1e-300), 10**400).mu == pytest.approx(1e100, rel=1e-15)
    assert group(eps_delta(1e-300), 10**400).epsilon == pytest.approx(1e100, rel=1e-15)
    with pytest.raises(InvariantDPError, match=r"k \* mu exceeds the largest double"):
        group(gaussian_tradeoff(1.0), 10**400)
    with pytest.raises(InvariantDPError, match=r"k \* epsilon exceeds the largest double"):
        group(eps_delta(1e300), 10**10)
    with pytest.raises(InvariantDPError, match=rf"`k` \(10000000000\) must be <= {MAX_GROUP_SIZE}"):
        group(eps_delta(1.0, 0.1), 10**10)
    # the largest allowed k stops as soon as the iterates reach the fixed point 0
    g = group(eps_delta(1.0, 0.1), MAX_GROUP_SIZE)
    np.testing.assert_array_equal(g(ALPHA), 0.0)
    np.testing.assert_array_equal(g.inverse(np.array([0.5, 1.0])), [1.0, 1.0])


def test_gaussian_is_a_deprecated_alias_of_gaussian_tradeoff():
    from invariantdp import privacy

    with pytest.warns(DeprecationWarning, match="invariantdp.privacy.gaussian is deprecated"):
        f = privacy.gaussian(1.0)
    assert f(ALPHA).tolist() == gaussian_tradeoff(1.0)(ALPHA).tolist()
    assert "gaussian" not in privacy.__all__ and "gaussian_tradeoff" in privacy.__all__
    assert repr(f) == "gaussian_tradeoff(mu=1.0)"

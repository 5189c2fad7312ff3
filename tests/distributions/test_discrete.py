"""Discrete Laplace and discrete Gaussian: closed forms and exact samplers."""

from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from invariantdp.distributions import (
    discrete_gaussian,
    discrete_laplace,
    sample_discrete_gaussian_exact,
)
from invariantdp.distributions._discrete_laws import _upper_tail

LAPLACE_T = [0.25, 1.0, 3.5, 40.0]
GAUSS_SIGMA = [0.3, 1.0, 2.5, 17.0]


@pytest.mark.parametrize("t", LAPLACE_T)
def test_discrete_laplace_closed_forms(t):
    d = discrete_laplace(t)
    k = np.arange(-int(60 * t) - 20, int(60 * t) + 21)
    pmf = d.pmf(k)
    assert pmf.sum() == pytest.approx(1.0, abs=1e-12)
    np.testing.assert_allclose(np.cumsum(pmf)[:-1], d.cdf(k[:-1]), atol=1e-12)
    np.testing.assert_allclose(d.sf(k), 1.0 - d.cdf(k), atol=1e-12)
    p = np.exp(-1 / t)
    assert d.var() == pytest.approx(2 * p / (1 - p) ** 2, rel=1e-12)
    assert (pmf * k**2).sum() == pytest.approx(d.var(), rel=1e-9)
    u = np.linspace(0.001, 0.999, 37)
    q = d.ppf(u)
    assert np.all(d.cdf(q) >= u) and np.all(d.cdf(q - 1) < u)


@pytest.mark.parametrize("sigma", GAUSS_SIGMA)
def test_discrete_gaussian_closed_forms(sigma):
    d = discrete_gaussian(sigma)
    k = np.arange(-int(40 * sigma) - 5, int(40 * sigma) + 6)
    w = np.exp(-(k**2) / (2 * sigma**2))
    np.testing.assert_allclose(d.pmf(k), w / w.sum(), rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(np.cumsum(w / w.sum())[:-1], d.cdf(k[:-1]), atol=1e-13)
    np.testing.assert_allclose(d.sf(k), 1.0 - d.cdf(k), atol=1e-13)
    u = np.linspace(0.001, 0.999, 37)
    q = d.ppf(u)
    assert np.all(d.cdf(q) >= u) and np.all(d.cdf(q - 1) < u)


def test_euler_maclaurin_tail_matches_direct_sum():
    sigma = 1500.0
    m = np.array([0.0, 10.0, 1500.0, 4000.0])
    j = np.arange(int(45 * sigma))
    direct = np.array([np.exp(-((mm + j) ** 2) / (2 * sigma**2)).sum() for mm in m])
    np.testing.assert_allclose(_upper_tail(m, sigma), direct, rtol=1e-12)


@pytest.mark.parametrize("t", LAPLACE_T[:3])
def test_discrete_laplace_sampler_goodness_of_fit(t):
    d = discrete_laplace(t)
    x = d.rvs(size=40_000, random_state=np.random.default_rng(1))
    lo, hi = int(d.ppf(0.005)), int(d.ppf(0.995))
    obs = [np.sum(x <= lo)] + [np.sum(x == j) for j in range(lo + 1, hi)] + [np.sum(x >= hi)]
    p = np.concatenate([[d.cdf(lo)], d.pmf(np.arange(lo + 1, hi)), [d.sf(hi - 1)]])
    assert stats.chisquare(obs, p * x.size).pvalue > 1e-3


@pytest.mark.parametrize("sigma", GAUSS_SIGMA[:3])
def test_discrete_gaussian_sampler_goodness_of_fit(sigma):
    d = discrete_gaussian(sigma)
    x = d.rvs(size=40_000, random_state=np.random.default_rng(2))
    assert x.dtype.kind == "i"
    lo, hi = int(d.ppf(0.003)), int(d.ppf(0.997))
    obs = [np.sum(x <= lo)] + [np.sum(x == j) for j in range(lo + 1, hi)] + [np.sum(x >= hi)]
    p = np.concatenate([[d.cdf(lo)], d.pmf(np.arange(lo + 1, hi)), [d.sf(hi - 1)]])
    assert stats.chisquare(obs, p * x.size).pvalue > 1e-3


def test_exact_rational_sampler_goodness_of_fit():
    sigma2 = 2.25
    x = sample_discrete_gaussian_exact(sigma2, size=3000, rng=3)
    d = discrete_gaussian(np.sqrt(sigma2))
    lo, hi = -4, 4
    obs = [np.sum(x <= lo)] + [np.sum(x == j) for j in range(lo + 1, hi)] + [np.sum(x >= hi)]
    p = np.concatenate([[d.cdf(lo)], d.pmf(np.arange(lo + 1, hi)), [d.sf(hi - 1)]])
    assert stats.chisquare(obs, p * x.size).pvalue > 1e-3
    # the same seed gives the same draws (of the same size: the draws are vectorised)
    np.testing.assert_array_equal(x, sample_discrete_gaussian_exact(sigma2, size=3000, rng=3))


def test_invalid_shapes_give_nan_and_exact_sampler_raises():
    assert np.isnan(discrete_laplace.pmf(0, -1.0))
    assert np.isnan(discrete_gaussian.cdf(0, 0.0))
    with pytest.raises(ValueError, match="`sigma2`"):
        sample_discrete_gaussian_exact(-1.0)


# ---------------------------------------------------------------------------
# exact integer-arithmetic samplers, variance, scale limits, lattice laws
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("num, den", [(0, 1), (1, 3), (1, 1), (7, 4), (25, 10)])
def test_bernoulli_exp_has_probability_exp_minus_gamma(num, den):
    from invariantdp.distributions._exact_samplers import _bernoulli_exp

    gen = np.random.default_rng(num * 100 + den)
    n = 20_000
    hits = sum(_bernoulli_exp(num, den, gen) for _ in range(n))
    p = np.exp(-num / den)
    if p == 1.0:
        assert hits == n
    else:
        assert stats.binomtest(hits, n, p).pvalue > 1e-3


def test_exact_discrete_laplace_with_rational_scale_fits():
    from fractions import Fraction

    from invariantdp.distributions import sample_discrete_laplace_exact

    t = Fraction(7, 3)  # Lap_Z(7/3): CKS Algorithm 2 with t = 7, s = 3
    x = sample_discrete_laplace_exact(t, size=30_000, rng=np.random.default_rng(5))
    d = discrete_laplace(7 / 3)
    lo, hi = -8, 8
    obs = [np.sum(x <= lo)] + [np.sum(x == j) for j in range(lo + 1, hi)] + [np.sum(x >= hi)]
    p = np.concatenate([[d.cdf(lo)], d.pmf(np.arange(lo + 1, hi)), [d.sf(hi - 1)]])
    assert stats.chisquare(obs, p * x.size).pvalue > 1e-3


def test_exact_samplers_are_capped(monkeypatch):
    from invariantdp.distributions import _constant

    class AllOnes:  # every threshold test fails: Y = -1, whose acceptance test fails forever
        def bytes(self, n):
            return b"\xff" * n

    monkeypatch.setattr(_constant, "MAX_ROUNDS", 7)
    plan = _constant.GaussianPlan(Fraction(9, 4), 2, 80)
    with pytest.raises(ValueError, match="rejected every trial of 7 rounds in a row"):
        plan.draw(AllOnes(), 3)


@pytest.mark.parametrize("sigma", [0.2, 0.7, 1.0, 1.99, 2.0, 3.3, 17.0])
def test_discrete_gaussian_variance_closed_form(sigma):
    k = np.arange(-int(60 * sigma) - 5, int(60 * sigma) + 6)
    w = np.exp(-(k**2) / (2 * sigma**2))
    assert discrete_gaussian.var(sigma) == pytest.approx((k**2 * w).sum() / w.sum(), rel=1e-12)


def test_discrete_gaussian_variance_at_large_sigma_has_no_warning():
    # used to sum numerically: "expect(): sum did not converge" (a RuntimeWarning, an error here)
    assert discrete_gaussian.std(1.7e7) == pytest.approx(1.7e7, rel=1e-15)


def test_numpy_samplers_refuse_scales_they_cannot_draw():
    with pytest.raises(ValueError, match=r"must be <= 2\*\*46"):
        discrete_laplace.rvs(1e19, size=10, random_state=1)  # numpy's geometric saturates
    with pytest.raises(ValueError, match=r"must be <= 2\*\*46"):
        discrete_gaussian.rvs(1e20, size=10, random_state=1)
    x = discrete_laplace.rvs(2.0**46, size=2000, random_state=1)
    assert np.count_nonzero(x) > 1990  # not saturated: P(X = 0) ~ 2**-47
    assert np.all(np.abs(x) < 2**53)


def test_lattice_law():
    from invariantdp.distributions._discrete_laws import LatticeLaw

    base = discrete_gaussian(2.5)
    law = LatticeLaw(base, 0.125)
    k = np.arange(-20, 21)
    np.testing.assert_array_equal(law.pmf(0.125 * k), base.pmf(k))
    assert law.pmf(0.0625) == 0.0
    np.testing.assert_array_equal(law.cdf(0.125 * k + 0.06), base.cdf(k))
    np.testing.assert_allclose(law.sf(0.125 * k), 1.0 - law.cdf(0.125 * k), atol=1e-15)
    u = np.array([0.01, 0.3, 0.5, 0.97])
    np.testing.assert_array_equal(law.ppf(u), 0.125 * base.ppf(u))
    assert law.std() == pytest.approx(0.125 * base.std())
    assert law.mean() == 0.0
    draws = law.rvs(size=100, random_state=1)
    assert np.all(draws / 0.125 == np.round(draws / 0.125))


@pytest.mark.parametrize("value", [2**1100, Fraction(10**400, 3), 1e300])
def test_exact_samplers_refuse_scales_beyond_int64_by_name(value):
    from invariantdp.distributions import sample_discrete_laplace_exact

    with pytest.raises(ValueError, match=r"`scale` \(.*\) must be <= 2\*\*56"):
        sample_discrete_laplace_exact(value, size=2, rng=0)
    with pytest.raises(ValueError, match=r"`sigma2` \(.*\) must be <= 2\*\*104"):
        sample_discrete_gaussian_exact(value, size=2, rng=0)


@pytest.mark.parametrize("sigma", [0.2, 0.9, 2.0, 6.5])
def test_the_characteristic_function_is_the_law_s_own(sigma):
    # E cos(theta X) summed term by term over the pmf the law gives, at |theta| <= pi
    from invariantdp.distributions import discrete_gaussian_log_cf

    k = np.arange(-int(40 * sigma) - 5, int(40 * sigma) + 6)
    pmf = discrete_gaussian.pmf(k, sigma)
    theta = np.linspace(-np.pi, np.pi, 13)
    direct = np.cos(np.outer(theta, k)) @ pmf
    assert np.exp(discrete_gaussian_log_cf(theta, sigma)) == pytest.approx(direct, abs=1e-13)

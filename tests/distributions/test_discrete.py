"""Discrete Laplace and discrete Gaussian: closed forms and exact samplers."""

import numpy as np
import pytest
from scipy import stats

from invariantdp.distributions import (
    discrete_gaussian,
    discrete_laplace,
    sample_discrete_gaussian_exact,
)
from invariantdp.distributions.discrete import _upper_tail

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
    # the same seed gives the same draws
    np.testing.assert_array_equal(x[:50], sample_discrete_gaussian_exact(sigma2, size=50, rng=3))


def test_invalid_shapes_give_nan_and_exact_sampler_raises():
    assert np.isnan(discrete_laplace.pmf(0, -1.0))
    assert np.isnan(discrete_gaussian.cdf(0, 0.0))
    with pytest.raises(ValueError, match="`sigma2`"):
        sample_discrete_gaussian_exact(-1.0)

import numpy as np
import pytest
from scipy import integrate, stats

from invariantdp.distributions import tulap, tulap_from_privacy, tulap_params

PARAMS = [
    (np.exp(-1.0), 0.0),
    (0.3, 0.05),
    (0.9, 0.0),
    (0.05, 0.2),
    (np.exp(-0.01), 0.001),
]


def _cdf_by_definition(x, b, n_terms=4000):
    """P(G1 - G2 + U <= x) summed over the discrete Laplace G1 - G2."""
    k = np.arange(-n_terms, n_terms + 1)
    pk = (1 - b) / (1 + b) * b ** np.abs(k)
    return np.sum(pk * np.clip(x - k + 0.5, 0.0, 1.0))


@pytest.mark.parametrize("b", [0.3, np.exp(-1.0), 0.8])
def test_cdf_matches_definition(b):
    for x in np.linspace(-7.3, 7.3, 37):
        assert tulap.cdf(x, b, 0.0) == pytest.approx(_cdf_by_definition(x, b), abs=1e-13)


@pytest.mark.parametrize("b,q", PARAMS)
def test_generic_distribution_properties(b, q):
    u = np.linspace(1e-6, 1 - 1e-6, 401)
    x = tulap.ppf(u, b, q)
    np.testing.assert_allclose(tulap.cdf(x, b, q), u, atol=1e-12)
    np.testing.assert_allclose(tulap.isf(u, b, q), tulap.ppf(1 - u, b, q), atol=1e-9)
    grid = np.linspace(-12, 12, 301)
    np.testing.assert_allclose(tulap.sf(grid, b, q), 1 - tulap.cdf(grid, b, q), atol=1e-14)
    # symmetric about the median
    np.testing.assert_allclose(tulap.cdf(-grid, b, q), tulap.sf(grid, b, q), atol=1e-14)
    lo, hi = tulap.support(b, q)
    lo, hi = max(lo, tulap.ppf(1e-12, b, q)), min(hi, tulap.ppf(1 - 1e-12, b, q))
    # integrate the piecewise-constant density piece by piece
    knots = np.concatenate([[lo], np.arange(np.ceil(lo - 0.5), hi) + 0.5, [hi]])
    knots = np.unique(np.clip(knots, lo, hi))
    total = sum(
        integrate.quad(tulap.pdf, a, c, args=(b, q))[0]
        for a, c in zip(knots[:-1], knots[1:], strict=True)
    )
    assert total == pytest.approx(1.0, abs=2e-9)
    inside = grid[(grid > lo) & (grid < hi)]
    np.testing.assert_allclose(
        tulap.logpdf(inside, b, q), np.log(tulap.pdf(inside, b, q)), rtol=1e-12
    )


@pytest.mark.parametrize("b,q", PARAMS)
def test_sampler_matches_cdf(b, q, rng):
    sample = tulap.rvs(b, q, size=20000, random_state=rng)
    assert stats.kstest(sample, lambda x: tulap.cdf(x, b, q)).pvalue > 1e-3
    lo, hi = tulap.support(b, q)
    assert np.all((sample >= lo) & (sample <= hi))


def test_untruncated_moments(rng):
    b = 0.6
    sample = tulap.rvs(b, 0.0, size=200_000, random_state=rng)
    var = tulap.var(b, 0.0)
    assert var == pytest.approx(2 * b / (1 - b) ** 2 + 1 / 12)
    se = np.sqrt(stats.kurtosis(sample, fisher=False) - 1) * var / np.sqrt(sample.size)
    assert abs(sample.var() - var) < 4 * se


def test_log_tails_are_finite():
    b = np.exp(-1.0)
    assert np.isfinite(tulap.logcdf(-1e4, b, 0.0))
    assert tulap.logcdf(-1e4, b, 0.0) == pytest.approx(
        -1e4 - np.log1p(b) + np.log(b + 0.5 * (1 - b))
    )
    assert tulap.logsf(1e4, b, 0.0) == pytest.approx(tulap.logcdf(-1e4, b, 0.0))
    assert tulap.ppf(1e-300, b, 0.0) == pytest.approx(-689.3, abs=1.0)


def test_closed_form_reference_value():
    # binomialDP: ptulap(0.5, m = 0, b = 0.3, q = 0.05) = 0.7834008
    assert tulap.cdf(0.5, 0.3, 0.05) == pytest.approx(0.7834008, abs=5e-8)


def test_loc_is_the_median_and_broadcasting():
    assert tulap.median(0.4, 0.1, loc=3.25) == pytest.approx(3.25)
    out = tulap.cdf(np.zeros((3, 1)), np.array([0.2, 0.5]), 0.0)
    assert out.shape == (3, 2)
    np.testing.assert_allclose(out, 0.5)


def test_invalid_shapes_give_nan():
    assert np.isnan(tulap.cdf(0.0, 1.5, 0.0))
    assert np.isnan(tulap.cdf(0.0, 0.5, 1.0))


def test_from_privacy_parameters():
    b, q = tulap_params(1.0, 0.01)
    assert b == pytest.approx(np.exp(-1))
    assert q == pytest.approx(2 * 0.01 * b / (1 - b + 2 * 0.01 * b))
    frozen = tulap_from_privacy(1.0, 0.01)
    assert frozen.cdf(0.7) == pytest.approx(tulap.cdf(0.7, b, q))
    with pytest.raises(ValueError, match=r"`epsilon` \(-1.0\) must be > 0"):
        tulap_from_privacy(-1.0)
    with pytest.raises(ValueError, match=r"`delta` \(1.0\) must be in \[0, 1\)"):
        tulap_from_privacy(1.0, 1.0)


def test_sampling_is_reproducible():
    a = tulap.rvs(0.4, 0.05, size=50, random_state=np.random.default_rng(3))
    c = tulap.rvs(0.4, 0.05, size=50, random_state=np.random.default_rng(3))
    np.testing.assert_array_equal(a, c)

"""PrivatizedPoisson and PrivatizedLogLinear: coverage and tests on privatized counts."""

import numpy as np
import pytest
import statsmodels.api as sm
from scipy import stats

from invariantdp.inference import PrivatizedLogLinear, PrivatizedPoisson
from invariantdp.invariants import totals
from invariantdp.mechanisms import laplace_mechanism, projected_gaussian, semi_dp_gaussian

BETA = np.array([4.0, 0.5])
SIGMA = 15.0


def _coverage(n_rep, seed):
    """95% Wald coverage of the slope: PrivatizedPoisson and the naive Poisson GLM."""
    rng = np.random.default_rng(seed)
    n = 60
    labels = np.repeat(np.arange(6), 10)  # 60 counties in 6 states, state totals invariant
    X = np.column_stack([np.ones(n), rng.normal(size=n)])
    inv = totals(labels)
    hit_p = hit_n = 0
    for child in rng.spawn(n_rep):
        s = child.poisson(np.exp(X @ BETA)).astype(float)
        rel = projected_gaussian(s, inv, mu=1 / SIGMA, rng=child)
        lo, hi = PrivatizedPoisson(rel.value, X, rel).fit(disp=0).conf_int()[1]
        hit_p += lo <= BETA[1] <= hi
        lo, hi = (
            sm.GLM(np.maximum(rel.value, 0), X, family=sm.families.Poisson()).fit().conf_int()[1]
        )
        hit_n += lo <= BETA[1] <= hi
    return hit_p / n_rep, hit_n / n_rep


def test_coverage_fast():
    cov_p, cov_n = _coverage(100, seed=11)
    # 100 replicates: binomial sd 2.2 points; the naive fit ignores the noise
    assert 0.90 <= cov_p <= 0.99
    assert cov_n < 0.85


@pytest.mark.slow
def test_coverage_slow():
    cov_p, cov_n = _coverage(1000, seed=12)
    assert 0.93 <= cov_p <= 0.97
    assert cov_n < 0.85


def test_fit_results_and_errors(rng):
    X = np.column_stack([np.ones(30), rng.normal(size=30)])
    s = rng.poisson(np.exp(3.5 + 0.3 * X[:, 1])).astype(float)
    rel = projected_gaussian(s, totals(np.repeat([0, 1, 2], 10)), mu=0.2, rng=rng)
    res = PrivatizedPoisson(rel.value, X, rel).fit(disp=0)
    assert res.params.shape == (2,) and np.all(res.bse > 0)
    assert res.conf_int().shape == (2, 2)
    assert "PrivatizedPoisson" in str(res.summary())
    # the analytic score vanishes at the optimum
    np.testing.assert_allclose(res.model.score(res.params), 0.0, atol=1e-4)
    with pytest.raises(ValueError, match="`exog` must have shape"):
        PrivatizedPoisson(rel.value, X[:10], rel)
    with pytest.raises(ValueError, match="`release` must be a projected-Gaussian"):
        PrivatizedPoisson(rel.value, X, laplace_mechanism(s, epsilon=1.0, rng=1))


def test_poisson_takes_the_counts_from_the_release(rng):
    X = np.column_stack([np.ones(30), rng.normal(size=30)])
    s = rng.poisson(np.exp(3.5 + 0.3 * X[:, 1])).astype(float)
    rel = projected_gaussian(s, totals(np.repeat([0, 1, 2], 10)), mu=0.2, rng=rng)
    old = PrivatizedPoisson(rel.value, X, rel).fit(disp=0).params
    np.testing.assert_array_equal(PrivatizedPoisson(rel, X).fit(disp=0).params, old)
    np.testing.assert_array_equal(PrivatizedPoisson(None, X, rel).fit(disp=0).params, old)
    with pytest.raises(ValueError, match="`y` is a Release: give the release once"):
        PrivatizedPoisson(rel, X, rel)
    with pytest.raises(ValueError, match="`release` is required unless `y` is the Release"):
        PrivatizedPoisson(rel.value, X)


def test_loglinear_independence_test_level_and_power():
    rng = np.random.default_rng(5)
    p_null = []
    for child in rng.spawn(300):
        t = child.multinomial(400, np.outer([0.3, 0.7], [0.2, 0.3, 0.5]).ravel()).reshape(2, 3)
        rel = semi_dp_gaussian(t, mu=0.5, rng=child)
        p_null.append(PrivatizedLogLinear(rel).test_independence().pvalue)
    p_null = np.array(p_null)
    assert abs(np.mean(p_null < 0.05) - 0.05) < 0.04
    assert stats.kstest(p_null, "uniform").pvalue > 1e-3
    rel = semi_dp_gaussian([[60, 20, 30], [25, 55, 31]], mu=0.5, rng=3)
    model = PrivatizedLogLinear(rel)
    assert model.test_independence().pvalue < 1e-4
    assert model.test_independence("lr").pvalue < 1e-4
    res = model.fit(disp=0)
    assert res.params.shape == (2,)
    # the fitted table keeps the released margins
    mu = model.mean(res.params)
    np.testing.assert_allclose(mu.sum(axis=1), rel.value.sum(axis=1))
    with pytest.raises(ValueError, match="`method`"):
        model.test_independence("wald")

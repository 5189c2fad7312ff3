"""PrivatizedPoisson and PrivatizedLogLinear: coverage and tests on privatized counts."""

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from scipy import stats

from invariantdp import Release
from invariantdp.inference import PrivatizedLogLinear, PrivatizedPoisson
from invariantdp.invariants import totals
from invariantdp.mechanisms import (
    conditional_release,
    discrete_gaussian_mechanism,
    gaussian_mechanism,
    laplace_mechanism,
    projected_gaussian,
    semi_dp_gaussian,
)

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
    with pytest.raises(ValueError, match="`release` must have Gaussian-type noise"):
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


# --- every Gaussian-type release (issue 22) ------------------------------------------------

N_CELLS = 40
X40 = np.column_stack([np.ones(N_CELLS), np.linspace(-1.5, 1.5, N_CELLS)])
BETA40 = np.array([3.0, 0.4])
STATE = totals(np.zeros(N_CELLS, dtype=int))


def _dg_with_total(s, child, sigma=1.0):
    """The README's release: discrete Gaussian counts and the exact state total beside them."""
    y = discrete_gaussian_mechanism(s, rho=1 / (2 * sigma**2), rng=child).value
    return Release.from_published(
        y,
        noise="discrete_gaussian",
        rho=1 / (2 * sigma**2),
        sensitivity=1.0,
        invariants=STATE.of(s),
    )


def _gaussian(s, child):
    return Release.from_published(s + child.normal(0.0, 4.0, s.size), noise="gaussian", sigma=4.0)


COV40 = 9.0 * STATE.projector() + 4.0 * np.outer(
    np.sin(np.arange(N_CELLS)), np.sin(np.arange(N_CELLS))
)
COV40 = STATE.project(STATE.project(COV40).T)  # correlated noise that keeps the total


def _correlated(s, child):
    e = child.multivariate_normal(np.zeros(N_CELLS), COV40, method="eigh")
    return Release.from_published(
        s + e, noise="correlated_gaussian", cov=COV40, invariants=STATE.of(s)
    )


RELEASES = {
    "discrete_gaussian_total": _dg_with_total,
    "discrete_gaussian_sigma8_total": lambda s, child: _dg_with_total(s, child, sigma=8.0),
    "gaussian": _gaussian,
    "correlated_gaussian": _correlated,
}


def _slope_coverage(make, n_rep, seed):
    rng = np.random.default_rng(seed)
    hit = 0
    method = None
    for child in rng.spawn(n_rep):
        s = child.poisson(np.exp(X40 @ BETA40))
        model = PrivatizedPoisson(make(s, child), X40)
        method = model.likelihood_method
        lo, hi = model.fit(disp=0).conf_int()[1]
        hit += lo <= BETA40[1] <= hi
    return hit / n_rep, method


def test_the_readme_release_fits():
    # issue 22: discrete Gaussian counts with an exact state total were refused
    counts = pd.Series([1203, 388, 97], index=pd.Index(["Ada", "Bay", "Cole"], name="county"))
    release = Release.from_published(
        counts,
        noise="discrete_gaussian",
        rho=0.5,
        sensitivity=1.0,
        invariants=totals([0, 0, 0]).with_values([1700]),
    )
    model = PrivatizedPoisson(release, np.ones((3, 1)))
    res = model.fit(disp=0)
    assert model.likelihood_method == "exact" and model.sigma == 1.0
    # one rate for three counties whose total is known exactly: log(1700 / 3), se 1 / sqrt(1700)
    assert res.params[0] == pytest.approx(np.log(1700 / 3), abs=2e-3)
    assert res.bse[0] == pytest.approx(1 / np.sqrt(1700), rel=0.02)


@pytest.mark.parametrize("name", list(RELEASES))
def test_every_gaussian_type_release_fits(name):
    rng = np.random.default_rng(31)
    s = rng.poisson(np.exp(X40 @ BETA40))
    model = PrivatizedPoisson(RELEASES[name](s, rng), X40)
    res = model.fit(disp=0)
    np.testing.assert_allclose(res.model.score(res.params), 0.0, atol=1e-4)
    assert np.all(np.abs(res.params - BETA40) < 4 * res.bse)
    assert model.likelihood_method == ("exact" if name == "discrete_gaussian_total" else "gaussian")


def test_a_congenial_discrete_gaussian_release_fits():
    rng = np.random.default_rng(32)
    X = X40[:12]
    s = rng.poisson(np.exp(X @ BETA40))
    rel = conditional_release(
        s,
        "discrete_gaussian",
        totals(np.zeros(12, dtype=int)),
        rho=0.5,
        draws=4,
        chains=1,
        rng=rng,
        warn=False,
    )
    model = PrivatizedPoisson(rel, X)
    assert model.likelihood_method == "exact" and model.observation.keeps_invariants
    res = model.fit(disp=0)
    assert np.all(np.abs(res.params - BETA40) < 4 * res.bse)


def test_wald_coverage_of_the_readme_release_fast():
    cover, method = _slope_coverage(RELEASES["discrete_gaussian_total"], 100, seed=41)
    print(f"95% Wald coverage, discrete Gaussian + state total ({method}): {cover:.3f}")
    assert 0.90 <= cover <= 0.99  # 100 replicates: binomial sd 2.2 points


@pytest.mark.slow
@pytest.mark.parametrize("name", list(RELEASES))
def test_wald_coverage_slow(name):
    cover, method = _slope_coverage(RELEASES[name], 1000, seed=42)
    print(f"95% Wald coverage of the slope, {name} ({method}): {cover:.3f}")
    assert 0.93 <= cover <= 0.97  # 1000 replicates: binomial sd 0.7 points


def test_a_secure_gaussian_release_fits():
    # the secure Gaussian mechanism's noise lives on a grid of about sigma / 2^20: Gaussian
    rng = np.random.default_rng(33)
    s = rng.poisson(np.exp(X40 @ BETA40)).astype(float)
    rel = gaussian_mechanism(s, mu=0.25, secure=True)
    assert rel.noise.family == "grid_gaussian"
    model = PrivatizedPoisson(rel, X40)
    assert model.sigma == pytest.approx(4.0, rel=1e-5)
    res = model.fit(disp=0)
    assert np.all(np.abs(res.params - BETA40) < 4 * res.bse)


# --- the analyst's path: a saturated fit, names of the response and the coefficients -----------


def _sex_age_release(counts, sigma, name="count"):
    idx = pd.MultiIndex.from_product(
        [["C1", "C2"], ["F", "M"], ["0-17", "18+"]], names=["county", "sex", "age"]
    )
    noisy = pd.Series(counts, index=idx, name=name)
    return noisy, Release.from_published(noisy, noise="discrete_gaussian", sigma=sigma)


def test_a_saturated_fit_is_the_log_counts_and_warns_nothing():
    import warnings

    # a GLM fitted to every cell exactly sees perfect prediction and no residual df
    noisy, rel = _sex_age_release([52, 148, 3, 151, 81, 120, 79, 118], sigma=0.2)
    cells = noisy.reset_index()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = PrivatizedPoisson.from_formula(
            "count ~ C(county) * C(sex) * C(age)", cells, release=rel
        ).fit(disp=0)
        text = str(res.summary())
    # noise of sd 0.2 on the integers is zero with probability 1 - 4e-6: the saturated fit
    # is the counts' own (cell means = counts)
    fitted = np.exp(res.model.exog @ np.asarray(res.params))
    np.testing.assert_allclose(fitted, np.asarray(noisy, dtype=float), rtol=1e-4)
    assert "Dep. Variable:                  count" in text


def test_the_response_is_named_as_the_release_records_its_values():
    noisy, rel = _sex_age_release([52, 148, 49, 151, 81, 120, 79, 118], sigma=1.0)
    X = pd.DataFrame({"const": 1.0, "adult": np.tile([0.0, 1.0], 4)})
    for model in (
        PrivatizedPoisson(rel, X),
        PrivatizedPoisson(rel, X.to_numpy()),
        PrivatizedPoisson.from_formula("count ~ C(age)", noisy.reset_index(), release=rel),
        PrivatizedLogLinear(rel, given="county"),
    ):
        assert model.endog_names == "count"
    _, unnamed = _sex_age_release([52, 148, 49, 151, 81, 120, 79, 118], sigma=1.0, name=None)
    assert PrivatizedPoisson(unnamed, X).endog_names == "y"

"""PrivatizedLogLinear on any Gaussian-type table release: independence and conditional
independence given a stratum (issue 22), with size, uniformity and power by simulation."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from invariantdp import Release
from invariantdp.inference import PrivatizedLogLinear
from invariantdp.invariants import totals
from invariantdp.mechanisms import discrete_gaussian_mechanism, semi_dp_gaussian

from .size_checks import check_size_and_power

SEX = ["F", "M"]
AGE = ["0-17", "18-64", "65+"]


def _strata_index(K):
    counties = [f"C{k:02d}" for k in range(1, K + 1)]
    return pd.MultiIndex.from_product([counties, SEX, AGE], names=["county", "sex", "age"])


def _county_sex_age(K, rng, log_or=0.0):
    """Cell means: county sizes and shares; sex x age odds ratios exp(log_or) in each county."""
    N = rng.uniform(300.0, 1500.0, K)
    female = rng.uniform(0.45, 0.55, K)
    age = rng.dirichlet([6.0, 14.0, 4.0], K)
    mu = N[:, None, None] * np.stack([female, 1 - female], 1)[:, :, None] * age[:, None, :]
    mu[:, 0, 0] *= np.exp(log_or)  # more girls than the margins imply
    return mu.reshape(-1)


def _census_release(s, child, K):
    """County x sex x age counts with discrete Gaussian noise (rho = 0.5) and the state total."""
    y = discrete_gaussian_mechanism(s, rho=0.5, rng=child).value
    return Release.from_published(
        pd.Series(y, index=_strata_index(K)),
        noise="discrete_gaussian",
        rho=0.5,
        sensitivity=1.0,
        invariants=totals(np.zeros(s.size, dtype=int)).with_values([s.sum()]),
    )


def test_the_sex_by_age_table_summed_over_counties_is_tested():
    # issue 22: "`release` must hold the table's one-way margins invariant"
    rng = np.random.default_rng(3)
    K = 12
    s = rng.poisson(_county_sex_age(K, rng))
    rel = _census_release(s, rng, K)
    table = rel.to_series().groupby(["sex", "age"]).sum().unstack()
    var = K * rel.noise.distribution().var()  # a sum of 12 independent discrete Gaussians
    summed = Release.from_published(
        table,
        noise="gaussian",
        variance=var,
        invariants=totals(np.zeros(6, dtype=int)).with_values([s.sum()]),
    )
    model = PrivatizedLogLinear(summed)
    assert not model.conditioned_on_margins and model.likelihood_method == "gaussian"
    test = model.test_independence()
    assert test.df == 2 and 0.0 <= test.pvalue <= 1.0
    assert list(model.exog_names[-2:]) == ["gamma[F,0-17]", "gamma[F,18-64]"]


def test_conditional_independence_names_and_the_stratum_axis():
    rng = np.random.default_rng(4)
    K = 3
    s = rng.poisson(_county_sex_age(K, rng))
    rel = _census_release(s, rng, K)
    model = PrivatizedLogLinear(rel, given="county")
    assert model.table_shape == (3, 2, 3) and model.given == "county"
    assert model.likelihood_method == "exact"
    assert model.exog_names[:4] == ["county[C01]", "sex[C01,F]", "age[C01,0-17]", "age[C01,18-64]"]
    assert model.exog_names[-1] == "gamma[C03,F,18-64]" and len(model.exog_names) == 18
    # by position, as a list, and from a 3-d array without labels: the same test
    lr = model.test_independence("lr")
    assert PrivatizedLogLinear(rel, given=[0]).test_independence("lr").statistic == pytest.approx(
        lr.statistic, rel=1e-9
    )
    cube = Release.from_published(
        np.asarray(rel.value).reshape(K, 2, 3),
        noise="discrete_gaussian",
        sigma=1.0,
        invariants=totals(np.zeros((K, 2, 3), dtype=int)).with_values([s.sum()]),
    )
    assert PrivatizedLogLinear(cube, given=0).test_independence("lr").statistic == pytest.approx(
        lr.statistic, rel=1e-9
    )
    assert lr.df == 6 and "given county" in str(lr.summary())
    # the LR test is the fit's compare_lr_test against the independence model
    full = model.fit(disp=0)
    null = model._independence_model().fit(disp=0)
    assert full.compare_lr_test(null).statistic == pytest.approx(lr.statistic, rel=1e-5)


def test_exact_statistics_at_tiny_noise_are_pearson_and_the_deviance():
    table = pd.DataFrame(
        [[60, 20, 31], [25, 55, 40]],
        index=pd.Index(SEX, name="sex"),
        columns=pd.Index(["yes", "no", "maybe"], name="answer"),
    )
    model = PrivatizedLogLinear(Release.from_published(table, noise="discrete_gaussian", sigma=0.1))
    assert model.likelihood_method == "exact"
    pearson = stats.chi2_contingency(table, correction=False).statistic
    g2 = stats.chi2_contingency(table, correction=False, lambda_="log-likelihood").statistic
    assert model.test_independence("pearson").statistic == pytest.approx(pearson, rel=1e-6)
    assert model.test_independence("lr").statistic == pytest.approx(g2, rel=1e-6)


def test_refusals():
    rng = np.random.default_rng(5)
    s = rng.poisson(_county_sex_age(2, rng))
    rel = _census_release(s, rng, 2)
    with pytest.raises(ValueError, match=r"two axes besides `given`.*'county', 'sex', 'age'"):
        PrivatizedLogLinear(rel)
    with pytest.raises(ValueError, match=r"`given` \('state'\) must name an axis"):
        PrivatizedLogLinear(rel, given="state")
    margins = semi_dp_gaussian([[60, 20], [25, 55]], mu=0.5, rng=3)
    with pytest.raises(ValueError, match=r"`likelihood` \('exact'\) does not apply"):
        PrivatizedLogLinear(margins, likelihood="exact")
    incomplete = Release.from_published(
        pd.Series([5, 6, 7], index=pd.MultiIndex.from_tuples([("a", "x"), ("a", "y"), ("b", "x")])),
        noise="discrete_gaussian",
        sigma=1.0,
    )
    with pytest.raises(ValueError, match="must hold a complete table"):
        PrivatizedLogLinear(incomplete)


def _size_and_power(n_rep, seed, K=3):
    rng = np.random.default_rng(seed)
    mu0 = _county_sex_age(K, rng)
    mu1 = _county_sex_age(K, np.random.default_rng(seed), log_or=0.4)
    p = {"lr": [], "pearson": []}
    power = {"lr": 0, "pearson": 0}
    for i, child in enumerate(rng.spawn(n_rep)):
        model = PrivatizedLogLinear(_census_release(child.poisson(mu0), child, K), given="county")
        for method in p:
            p[method].append(model.test_independence(method).pvalue)
        if i < n_rep // 4:
            alt = PrivatizedLogLinear(_census_release(child.poisson(mu1), child, K), given="county")
            for method in p:
                power[method] += alt.test_independence(method).pvalue < 0.05
    return {m: np.array(v) for m, v in p.items()}, {m: v / (n_rep // 4) for m, v in power.items()}


def test_conditional_independence_size_uniformity_and_power():
    # 3 counties x sex x age, discrete Gaussian rho = 0.5 and the state total (exact likelihood)
    p, power = _size_and_power(200, seed=11)
    check_size_and_power("sex x age given county (power at odds ratio 1.49)", p, power, 200, 0.6)


@pytest.mark.slow
def test_conditional_independence_size_uniformity_and_power_slow():
    p, power = _size_and_power(1000, seed=12)
    check_size_and_power("sex x age given county (power at odds ratio 1.49)", p, power, 1000, 0.6)


def _two_counties(counts, sigma):
    idx = pd.MultiIndex.from_product(
        [["C1", "C2"], ["F", "M"], ["0-17", "18+"]], names=["county", "sex", "age"]
    )
    noisy = pd.Series(counts, index=idx, name="count")
    return Release.from_published(noisy, noise="discrete_gaussian", sigma=sigma)


def test_params_are_labelled_like_the_poisson_models():
    rel = _two_counties([52, 148, 49, 151, 81, 120, 79, 118], sigma=1.0)
    res = PrivatizedLogLinear(rel, given="county").fit(disp=0)
    assert isinstance(res.params, pd.Series) and isinstance(res.bse, pd.Series)
    assert list(res.params.index[-2:]) == ["gamma[C1,F,0-17]", "gamma[C2,F,0-17]"]
    given_margins = PrivatizedLogLinear(semi_dp_gaussian([[60, 20], [25, 55]], mu=0.5, rng=3))
    assert list(given_margins.fit(disp=0).params.index) == ["gamma[0,0]"]


def test_log_odds_ratios_are_woolfs_as_the_noise_vanishes():
    counts = np.array([52, 148, 49, 151, 81, 120, 79, 118], dtype=float)
    rel = _two_counties(counts, sigma=0.2)  # zero noise with probability 1 - 4e-6 per cell
    lor = PrivatizedLogLinear(rel, given="county").fit(disp=0).log_odds_ratios(0.9)
    assert list(lor.index.names) == ["county", "sex", "age"]
    assert list(lor.index) == [("C1", "F", "0-17"), ("C2", "F", "0-17")]
    t = counts.reshape(2, 2, 2)
    woolf = np.log(t[:, 0, 0] * t[:, 1, 1] / (t[:, 0, 1] * t[:, 1, 0]))
    woolf_se = np.sqrt((1.0 / t).sum(axis=(1, 2)))
    np.testing.assert_allclose(lor["log_odds_ratio"], woolf, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(lor["se"], woolf_se, rtol=1e-3)
    z = stats.norm.ppf(0.95)
    np.testing.assert_allclose(lor["ci_upper"] - lor["ci_lower"], 2 * z * lor["se"], rtol=1e-12)
    with pytest.raises(ValueError, match="confidence_level"):
        PrivatizedLogLinear(rel, given="county").fit(disp=0).log_odds_ratios(1.5)

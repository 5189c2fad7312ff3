"""PrivatizedNegativeBinomial: NB2 regression of released counts.  Its likelihood reduces to
statsmodels' NegativeBinomial as the noise vanishes, its score is the derivative of its
log-likelihood, and its Wald intervals cover (by simulation)."""

import re

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from scipy import stats
from statsmodels.tools.numdiff import approx_fprime

from invariantdp import Release
from invariantdp.exceptions import InvariantDPError
from invariantdp.inference import PrivatizedNegativeBinomial, PrivatizedPoisson
from invariantdp.invariants import totals
from invariantdp.mechanisms import discrete_gaussian_mechanism, projected_gaussian

ALPHA = 0.3


def _nb_counts(rng, n=80, beta=(3.0, 0.5), alpha=ALPHA):
    X = np.column_stack([np.ones(n), rng.normal(size=n)])
    lam = np.exp(X @ np.asarray(beta))
    return X, rng.negative_binomial(1 / alpha, 1 / (1 + alpha * lam))


def test_the_likelihood_reduces_to_statsmodels_negative_binomial_as_the_noise_vanishes(rng):
    X, s = _nb_counts(rng, n=120, beta=(2.5, 0.5))
    # discrete Gaussian noise of sd 0.2: zero with probability 1 - 4e-6 per cell
    noisy = discrete_gaussian_mechanism(s, rho=12.5, rng=rng).value
    rel = Release.from_published(noisy, noise="discrete_gaussian", sigma=0.2)
    model = PrivatizedNegativeBinomial(rel, X)
    assert model.likelihood_method == "exact"
    res = model.fit(disp=0)
    ref = sm.NegativeBinomial(np.asarray(noisy, float), X, loglike_method="nb2").fit(
        disp=0, method="newton", maxiter=100
    )
    np.testing.assert_allclose(res.params, ref.params, rtol=1e-4)
    np.testing.assert_allclose(res.bse, ref.bse, rtol=1e-3)
    # the noise's probability of 0 at every cell, log p_e(0) = -2 e^{-12.5} + ..., is all
    # that separates the log-likelihoods
    assert res.llf == pytest.approx(ref.llf, abs=1e-3)


@pytest.mark.parametrize("kind", ["discrete_gaussian", "projected_gaussian"])
def test_the_score_is_the_gradient_of_the_log_likelihood(rng, kind):
    X, s = _nb_counts(rng, n=30)
    labels = np.repeat([0, 1, 2], 10)
    if kind == "exact":
        noisy = discrete_gaussian_mechanism(s, rho=0.5, rng=rng).value
        rel = Release.from_published(
            noisy,
            noise="discrete_gaussian",
            rho=0.5,
            sensitivity=1.0,
            invariants=totals(labels).of(s),
        )
    else:
        rel = projected_gaussian(s.astype(float), totals(labels), mu=0.3, rng=rng)
    model = PrivatizedNegativeBinomial(rel, X)
    assert model.likelihood_method == "exact"
    for params in ([3.0, 0.5, 0.3], [2.8, 0.6, 0.15], [3.1, 0.4, 0.6]):
        params = np.array(params)
        numeric = approx_fprime(params, model.loglike, centered=True)
        np.testing.assert_allclose(model.score(params), numeric, rtol=1e-5, atol=1e-5)


def test_the_exact_likelihood_of_a_projected_release_is_the_sum_over_the_fibre():
    """Three cells with their total exact: the NB2 probabilities times the Gaussian density
    on the affine space, summed by brute force over every split of the total."""
    from scipy import stats

    s = np.array([4, 9, 6])
    rel = projected_gaussian(s.astype(float), totals([0, 0, 0]), mu=0.8, rng=4)
    sigma = PrivatizedNegativeBinomial(rel, np.ones((3, 1))).sigma
    y = np.asarray(rel.value, float)
    X = np.column_stack([np.ones(3), [-1.0, 0.0, 1.0]])
    model = PrivatizedNegativeBinomial(rel, X)
    assert model.likelihood_method == "exact"

    def brute(params):
        lam, alpha = np.exp(X @ params[:2]), params[2]
        total = 0.0
        for a in range(20):
            for b in range(20 - a):
                split = np.array([a, b, 19 - a - b])
                pmf = stats.nbinom.pmf(split, 1 / alpha, 1 / (1 + alpha * lam)).prod()
                total += pmf * np.exp(-np.sum((y - split) ** 2) / (2 * sigma**2))
        return np.log(total)

    p1, p2 = np.array([1.8, 0.3, 0.2]), np.array([2.0, 0.1, 0.5])
    assert model.loglike(p1) - model.loglike(p2) == pytest.approx(brute(p1) - brute(p2), abs=1e-9)


def test_interface_of_the_poisson_model(rng):
    X, s = _nb_counts(rng, n=60)
    frame = pd.DataFrame({"x": X[:, 1], "region": np.repeat(["N", "S"], 30)})
    labels = np.repeat([0, 1], 30)
    rel = projected_gaussian(s.astype(float), totals(labels), mu=0.3, rng=rng)
    frame["count"] = rel.value
    full = PrivatizedNegativeBinomial.from_formula("count ~ x + C(region)", frame, release=rel)
    res = full.fit(disp=0)
    assert list(res.params.index) == ["Intercept", "C(region)[T.S]", "x", "alpha"]
    assert re.search(r"Dep\. Variable:\s+count\s", str(res.summary()))
    restricted = PrivatizedNegativeBinomial.from_formula("count ~ x", frame, release=rel).fit(
        disp=0
    )
    lr, p, df = res.compare_lr_test(restricted)
    assert df == 1 and lr >= 0 and 0 <= p <= 1
    wald = res.wald_test("C(region)[T.S] = 0", scalar=True)
    assert wald.df_denom is None or np.isfinite(wald.statistic)
    poisson = PrivatizedPoisson.from_formula("count ~ x", frame, release=rel).fit(disp=0)
    with pytest.raises(InvariantDPError, match="same likelihood"):
        res.compare_lr_test(poisson)
    with pytest.raises(InvariantDPError, match=r"PrivatizedNegativeBinomial\(release, exog\)"):
        PrivatizedNegativeBinomial(rel, X, release=rel)


def test_the_dispersion_interval_is_wald_on_the_log_scale(rng):
    X, s = _nb_counts(rng, n=60)
    rel = projected_gaussian(s.astype(float), totals(np.repeat([0, 1], 30)), mu=0.3, rng=rng)
    res = PrivatizedNegativeBinomial(rel, X).fit(disp=0)
    z = stats.norm.ppf(0.95)
    ci = np.asarray(res.conf_int(0.1))
    a, se = res.params[-1], res.bse[-1]
    np.testing.assert_allclose(ci[-1], a * np.exp([-z * se / a, z * se / a]), rtol=1e-12)
    assert 0 < ci[-1, 0] < a < ci[-1, 1]
    # wider above than below: the law of the estimate is skewed to the right
    assert ci[-1, 1] - a > a - ci[-1, 0]
    coef = np.column_stack([res.params[:-1] - z * res.bse[:-1], res.params[:-1] + z * res.bse[:-1]])
    np.testing.assert_allclose(ci[:-1], coef, rtol=1e-12)
    # pandas results name the rows and give the same numbers
    frame = pd.DataFrame(X, columns=["const", "x"])
    named = PrivatizedNegativeBinomial(rel, frame).fit(disp=0).conf_int(0.1)
    assert list(named.index) == ["const", "x", "alpha"]
    np.testing.assert_allclose(named.to_numpy(), ci, rtol=1e-6)


def test_the_dispersion_interval_takes_cols_and_the_t_quantile(rng):
    X, s = _nb_counts(rng, n=60)
    rel = projected_gaussian(s.astype(float), totals(np.repeat([0, 1], 30)), mu=0.3, rng=rng)
    res = PrivatizedNegativeBinomial(rel, X).fit(disp=0)
    full = np.asarray(res.conf_int(0.1))
    # rows by position, the dispersion's log-scale row only where it is asked for
    np.testing.assert_array_equal(res.conf_int(0.1, cols=[2]), full[[2]])
    np.testing.assert_array_equal(res.conf_int(0.1, cols=[1, 0]), full[[1, 0]])
    np.testing.assert_array_equal(res.conf_int(cols=np.array([0, 2])), res.conf_int()[[0, 2]])
    frame = pd.DataFrame(X, columns=["const", "x"])
    named = PrivatizedNegativeBinomial(rel, frame).fit(disp=0)
    picked = named.conf_int(0.1, cols=[1, 2])
    assert list(picked.index) == ["x", "alpha"]
    np.testing.assert_allclose(picked.to_numpy(), named.conf_int(0.1).iloc[1:].to_numpy())
    with pytest.raises(TypeError, match=r"`cols` \(\['x'\]\) must be a sequence of integer"):
        res.conf_int(cols=["x"])
    with pytest.raises(InvariantDPError, match=r"`cols` \(\[3\]\) must hold positions in \[0, 3\)"):
        named.conf_int(cols=[3])
    # with use_t every row takes Student's t with df_resid, the dispersion's on the log scale
    res.use_t = True
    q = stats.t.ppf(0.95, res.df_resid)
    ci = np.asarray(res.conf_int(0.1))
    a, se = res.params[-1], res.bse[-1]
    np.testing.assert_allclose(ci[-1], a * np.exp([-q * se / a, q * se / a]), rtol=1e-12)
    np.testing.assert_allclose(ci[0], res.params[0] + np.array([-q, q]) * res.bse[0], rtol=1e-12)


def test_a_dispersion_at_the_boundary_gives_its_limit_without_overflow(rng):
    X, s = _nb_counts(rng, n=60)
    rel = projected_gaussian(s.astype(float), totals(np.repeat([0, 1], 30)), mu=0.3, rng=rng)
    res = PrivatizedNegativeBinomial(rel, X).fit(disp=0)
    se = float(res.bse[-1])
    for tiny, want in ((1e-300, [0.0, np.inf]), (0.0, [0.0, np.inf])):
        res.params[-1] = tiny  # the standard error comes from the covariance, unchanged
        assert float(res.bse[-1]) == se
        np.testing.assert_array_equal(res.conf_int()[-1], want)  # numpy warnings are errors
    # a small estimate whose interval is finite: the log-scale formula itself
    res.params[-1] = se
    z = stats.norm.ppf(0.975)
    np.testing.assert_allclose(res.conf_int(cols=[2])[0], se * np.exp([-z, z]), rtol=1e-12)


def _misses(n_rep, seed, noise):
    """Per release: the slope's interval covers; alpha lies below its interval; above it.

    60 county counts, six state totals exact.
    """
    rng = np.random.default_rng(seed)
    n = 60
    X = np.column_stack([np.ones(n), rng.normal(size=n)])
    lam = np.exp(3.0 + 0.5 * X[:, 1])
    labels = np.repeat(np.arange(6), 10)
    hits = []
    for child in rng.spawn(n_rep):
        s = child.negative_binomial(1 / ALPHA, 1 / (1 + ALPHA * lam))
        if noise == "discrete_gaussian":
            noisy = discrete_gaussian_mechanism(s, rho=0.5, rng=child).value
            rel = Release.from_published(
                noisy,
                noise="discrete_gaussian",
                rho=0.5,
                sensitivity=1.0,
                invariants=totals(labels).of(s),
            )
        else:
            rel = projected_gaussian(s.astype(float), totals(labels), mu=0.2, rng=child)
        ci = np.asarray(PrivatizedNegativeBinomial(rel, X).fit(disp=0).conf_int())
        hits.append([ci[1, 0] <= 0.5 <= ci[1, 1], ALPHA < ci[2, 0], ALPHA > ci[2, 1]])
    return np.array(hits, dtype=float)


def _coverage(n_rep, seed, noise):
    """Coverage of the slope's and of alpha's intervals (:func:`_misses`)."""
    m = _misses(n_rep, seed, noise)
    return m[:, 0].mean(), 1.0 - m[:, 1:].sum(axis=1).mean()


def test_coverage_of_the_slope_and_the_dispersion_fast():
    # 40 releases: a 0.95 coverage has Monte Carlo standard error 0.034, and each side of a
    # central interval misses with probability 0.025 (se 0.025).  The symmetric interval of
    # alpha missed above 7 times of these 40 (the estimate is skewed right, biased down)
    m = _misses(40, 3, "projected_gaussian")
    assert abs(m[:, 0].mean() - 0.95) < 3 * np.sqrt(0.95 * 0.05 / 40)
    side = 0.025 + 3 * np.sqrt(0.025 * 0.975 / 40)
    below, above = m[:, 1].mean(), m[:, 2].mean()
    assert below <= side and above <= side, (below, above)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("noise", "seed"), [("discrete_gaussian", 2029), ("projected_gaussian", 2030)]
)
def test_coverage_over_200_releases(noise, seed):
    # discrete Gaussian noise of rho = 0.5 per cell (the Census's) with the state totals
    # published beside it, or projected Gaussian noise of sd 5 keeping them; the exact
    # likelihood either way.  The likelihood is the release's (the score has mean 0 and
    # variance the expected information over 1,500 releases), and the slope's Wald
    # interval covered 0.941 over 1,800 releases under projected noise (MC se 0.006;
    # Poisson counts under the same noise: 0.95 over 500); the first 200 of the stream 2029
    # covered 0.905, the next 600 0.945.  The dispersion's log-scale interval covered
    # 0.92-0.94 over three streams of 200 (its symmetric Wald interval 0.89; statsmodels'
    # NegativeBinomial on the counts themselves 0.903).  The MC se of 200 releases: 0.015.
    slope, alpha = _coverage(200, seed, noise)
    assert 0.93 <= slope <= 0.97, slope
    assert abs(alpha - 0.95) < 3 * np.sqrt(0.95 * 0.05 / 200), alpha

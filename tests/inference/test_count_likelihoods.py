"""The likelihoods of Poisson counts through a Gaussian-type release, and the switch.

Checked against brute-force sums over the fibre, an untilted full convolution,
finite differences, the projected-Gaussian likelihood of the L2 projection
(Gao, Gong & Yu, Theorem 22) and, across sigma, against each other.
"""

import dataclasses
import itertools

import numpy as np
import pytest
from scipy import special, stats

from invariantdp import Invariants, Release
from invariantdp.distributions import discrete_gaussian
from invariantdp.inference import PrivatizedPoisson, projected_gaussian_marginal_loglik
from invariantdp.inference._count_likelihoods import (
    EXACT_SIGMA_MAX,
    ExactDiscreteGaussianLikelihood,
    GaussianCountLikelihood,
    count_likelihood,
    exact_unavailable,
)
from invariantdp.inference._release_observation import observe_release
from invariantdp.invariants import nested_totals, one_way_margins, totals
from invariantdp.mechanisms import (
    conditional_release,
    discrete_gaussian_mechanism,
    l2_postprocess,
    projected_gaussian,
)
from invariantdp.release import NoiseLaw


def _dg(y, sigma, invariants=None):
    return Release.from_published(
        np.asarray(y), noise="discrete_gaussian", sigma=sigma, invariants=invariants
    )


def _brute(y, lam, sigma, constraints, hi=14):
    """sum over s >= 0 with the constraints of prod Pois(s; lam) p_e(y - s)."""
    dg = discrete_gaussian(sigma)
    total = 0.0
    for s in itertools.product(range(hi), repeat=len(y)):
        s = np.array(s)
        if all(s[c].sum() == t for c, t in constraints):
            total += np.prod(stats.poisson.pmf(s, lam)) * np.prod(dg.pmf(np.asarray(y) - s))
    return np.log(total)


LAM = np.array([2.5, 1.7, 3.3, 1.2, 0.8])
Y = np.array([3, 1, 4, 0, 2])


def test_exact_equals_the_sum_over_the_fibre_of_totals():
    rel = _dg(Y, 0.7, totals([0, 0, 0, 1, 1]).with_values([9, 2]))
    lik = ExactDiscreteGaussianLikelihood(observe_release(rel))
    want = _brute(Y, LAM, 0.7, [([0, 1, 2], 9), ([3, 4], 2)])
    assert lik.loglike(LAM) == pytest.approx(want, rel=1e-12)


def test_exact_equals_the_sum_over_the_fibre_of_nested_totals_and_of_none():
    # state total 11 over two counties of 7 and 4
    inv = nested_totals([[0, 0, 0, 0, 0], [0, 0, 0, 1, 1]]).with_values([11, 7, 4])
    lik = ExactDiscreteGaussianLikelihood(observe_release(_dg(Y, 0.6, inv)))
    want = _brute(Y, LAM, 0.6, [([0, 1, 2], 7), ([3, 4], 4)])
    assert lik.loglike(LAM) == pytest.approx(want, rel=1e-12)
    # one cell outside every invariant is summed on its own
    inv = Invariants(np.array([[1.0, 1.0, 1.0, 0.0, 0.0]]), values=[8])
    lik = ExactDiscreteGaussianLikelihood(observe_release(_dg(Y, 0.6, inv)))
    dg = discrete_gaussian(0.6)
    free = sum(
        np.log(sum(stats.poisson.pmf(s, LAM[i]) * dg.pmf(Y[i] - s) for s in range(60)))
        for i in (3, 4)
    )
    assert lik.loglike(LAM) == pytest.approx(_brute(Y[:3], LAM[:3], 0.6, [([0, 1, 2], 8)]) + free)
    lik = ExactDiscreteGaussianLikelihood(observe_release(_dg(Y, 0.6)))
    free = sum(
        np.log(sum(stats.poisson.pmf(s, LAM[i]) * dg.pmf(Y[i] - s) for s in range(60)))
        for i in range(5)
    )
    assert lik.loglike(LAM) == pytest.approx(free, rel=1e-12)


def test_exact_likelihood_of_a_congenial_release_differs_by_a_constant():
    # conditioned on the total, the release's likelihood is the same sum (Gong & Meng, Eq. 2.3):
    # ratios of likelihoods at two means agree with the brute force
    rel = conditional_release(
        np.array([3, 2, 4]),
        "discrete_gaussian",
        totals([0, 0, 0]),
        rho=1.0,
        draws=4,
        chains=1,
        rng=3,
        warn=False,
    )
    assert rel.metadata["congenial"]
    obs = observe_release(rel)
    assert obs.keeps_invariants
    lik = ExactDiscreteGaussianLikelihood(obs)
    y = np.asarray(rel.value)
    lam2 = np.array([4.0, 2.0, 2.5])
    cons = [([0, 1, 2], int(y.sum()))]
    sigma = obs.discrete_gaussian_sigma
    want = _brute(y, LAM[:3], sigma, cons) - _brute(y, lam2, sigma, cons)
    assert lik.loglike(LAM[:3]) - lik.loglike(lam2) == pytest.approx(want, rel=1e-10)


def test_exact_matches_a_full_untilted_convolution_at_sigma_3():
    # independent: every weight of every cell, no tilt, no trim, in log space
    rng = np.random.default_rng(4)
    lam = rng.uniform(3.0, 40.0, 12)
    s = rng.poisson(lam)
    sigma = 3.0
    y = discrete_gaussian_mechanism(s, rho=1 / (2 * sigma**2), rng=5).value
    lik = ExactDiscreteGaussianLikelihood(observe_release(_dg(y, sigma, totals([0] * 12).of(s))))
    dg = discrete_gaussian(sigma)
    grid = np.arange(0, 200)
    logZ = np.array([0.0])
    for i in range(12):
        w = stats.poisson.logpmf(grid, lam[i]) + dg.logpmf(y[i] - grid)
        out = np.full(logZ.size + grid.size - 1, -np.inf)
        for k, wk in enumerate(w):
            out[k : k + logZ.size] = np.logaddexp(out[k : k + logZ.size], logZ + wk)
        logZ = out
    assert lik.loglike(lam) == pytest.approx(logZ[s.sum()], rel=1e-11)


@pytest.mark.parametrize("kind", ["exact", "gaussian_case_b", "gaussian_kept", "correlated"])
def test_gradient_matches_finite_differences(kind):
    rng = np.random.default_rng(8)
    lam = rng.uniform(2.0, 30.0, 6)
    s = rng.poisson(lam)
    inv = totals([0, 0, 0, 1, 1, 1]).of(s)
    if kind == "exact":
        lik = ExactDiscreteGaussianLikelihood(
            observe_release(_dg(s + np.array([1, 0, -1, 2, 0, 0]), 0.8, inv))
        )
    elif kind == "gaussian_case_b":
        lik = GaussianCountLikelihood(
            observe_release(_dg(s + np.array([1, 0, -1, 2, 0, 0]), 2.0, inv))
        )
    elif kind == "gaussian_kept":
        lik = GaussianCountLikelihood(
            observe_release(projected_gaussian(s.astype(float), inv, mu=0.4, rng=1))
        )
    else:
        A = rng.normal(size=(6, 6))
        cov = A @ A.T + np.eye(6)
        rel = Release.from_published(
            s + rng.normal(size=6), noise="correlated_gaussian", cov=cov, invariants=inv
        )
        lik = GaussianCountLikelihood(observe_release(rel))
    _, grad = lik.poisson(lam)
    eps = 1e-5
    num = [(lik.loglike(lam + eps * e) - lik.loglike(lam - eps * e)) / (2 * eps) for e in np.eye(6)]
    np.testing.assert_allclose(grad, num, rtol=1e-6, atol=1e-8)


def test_gaussian_given_published_totals_is_the_projected_likelihood_of_the_l2_projection():
    # independent spherical noise with exact totals beside it: conditioning on the totals is
    # the projected Gaussian likelihood of the L2 projection of the release (GGY Theorem 22),
    # up to a constant in lambda
    rng = np.random.default_rng(2)
    s = rng.poisson(50.0, 8).astype(float)
    inv = totals([0, 0, 0, 1, 1, 1, 1, 1]).of(s)
    sigma = 3.0
    y = s + rng.normal(0.0, sigma, 8)
    rel = Release.from_published(y, noise="gaussian", sigma=sigma, invariants=inv)
    lik = GaussianCountLikelihood(observe_release(rel))
    ystar = l2_postprocess(y, inv)
    lam1, lam2 = rng.uniform(40, 60, 8), rng.uniform(40, 60, 8)

    def projected(lam):
        return projected_gaussian_marginal_loglik(ystar, lam, lam, inv, sigma=sigma)

    assert lik.loglike(lam1) - lik.loglike(lam2) == pytest.approx(
        projected(lam1) - projected(lam2), rel=1e-9
    )


def test_the_switch_and_its_refusals():
    s = np.array([30, 40, 50, 60])
    for sigma, method in ((1.0, "exact"), (EXACT_SIGMA_MAX, "exact"), (6.0, "gaussian")):
        obs = observe_release(_dg(s, sigma, totals([0] * 4).of(s)))
        assert count_likelihood(obs).method == method
        assert count_likelihood(obs, "gaussian").method == "gaussian"
    obs = observe_release(_dg(s.reshape(2, 2), 1.0, one_way_margins((2, 2)).of(s.reshape(2, 2))))
    assert "margins" in exact_unavailable(obs) and count_likelihood(obs).method == "gaussian"
    with pytest.raises(ValueError, match=r"`likelihood` \('exact'\) does not apply: .*margins"):
        count_likelihood(obs, "exact")
    obs = observe_release(Release.from_published(s.astype(float), noise="gaussian", sigma=1.0))
    with pytest.raises(ValueError, match="not integer discrete Gaussian"):
        count_likelihood(obs, "exact")
    with pytest.raises(ValueError, match=r"`likelihood` \('best'\) must be one of 'auto'"):
        count_likelihood(obs, "best")


def test_a_total_far_from_the_released_counts_is_refused():
    with pytest.raises(ValueError, match="inconsistent with its invariants"):
        ExactDiscreteGaussianLikelihood(
            observe_release(_dg([10, 10], 0.5, totals([0, 0]).with_values([60])))
        )


def _compare(sigma, base, reps, seed):
    """|exact - Gaussian| MLE of a slope in standard errors, over releases with a total."""
    rng = np.random.default_rng(seed)
    n = 40
    X = np.column_stack([np.ones(n), rng.normal(size=n)])
    out = []
    for child in rng.spawn(reps):
        s = child.poisson(np.exp(base + 0.5 * X[:, 1]))
        y = discrete_gaussian_mechanism(s, rho=1 / (2 * sigma**2), rng=child).value
        rel = _dg(y, sigma, totals(np.zeros(n, dtype=int)).of(s))
        fe = PrivatizedPoisson(rel, X, likelihood="exact").fit(disp=0)
        fg = PrivatizedPoisson(rel, X, likelihood="gaussian").fit(disp=0)
        out.append(np.abs(fe.params - fg.params) / fe.bse)
    return np.array(out)


def test_the_two_likelihoods_agree_above_the_switch_and_not_below():
    # counts of mean ~3-10: the Gaussian likelihood misses their skewness at small sigma,
    # not once the noise dominates (module notes of _count_likelihoods)
    below = _compare(0.5, 1.5, 8, seed=21)
    above = _compare(EXACT_SIGMA_MAX, 1.5, 8, seed=21)
    print(f"mean |exact - gaussian| / se: sigma 0.5 {below.mean():.3f}, sigma 5 {above.mean():.3f}")
    assert below.mean() > 0.1
    assert above.mean() < 0.05 and above.max() < 0.15


def test_observe_release_refusals():
    s = np.array([3.0, 4.0, 5.0])
    with pytest.raises(ValueError, match="Gaussian-type noise .* its noise family is 'laplace'"):
        observe_release(Release.from_published(s, noise="laplace", scale=1.0))
    rel = Release.from_published(
        [3.0],
        noise="gaussian",
        sigma=1.0,
        query=[[1.0, 0.0, 0.0, 0.0]],
        invariants=one_way_margins((2, 2)).with_values([5, 5, 4, 6]),
    )
    with pytest.raises(ValueError, match="must release the cells themselves"):
        observe_release(rel)
    rel = dataclasses.replace(
        Release.from_published(s, noise="gaussian", sigma=1.0), invariants=totals([0, 0, 0])
    )
    with pytest.raises(ValueError, match="invariants without values"):
        observe_release(rel)
    rel = conditional_release(
        np.array([3, 2, 4]),
        "discrete_gaussian",
        totals([0, 0, 0]),
        "nonnegative",
        rho=1.0,
        draws=20,
        chains=1,
        rng=3,
        warn=False,
    )
    with pytest.raises(ValueError, match="conditioned on inequalities"):
        observe_release(rel)
    with pytest.raises(TypeError, match="`release` must be an invariantdp.Release"):
        observe_release(s)
    coarse = Release.from_published(s, noise=NoiseLaw("grid_gaussian", {"grid": 1.0, "sigma": 0.5}))
    with pytest.raises(ValueError, match=r"sigma \(0.5\) below its grid \(1\)"):
        observe_release(coarse)


def test_the_noise_covariance_of_each_structure():
    s = np.array([30.0, 40.0, 50.0])
    inv = totals([0, 0, 0]).of(s)
    obs = observe_release(_dg(s.astype(int), 1.0, inv))
    # independent discrete Gaussian: its exact variance (just below sigma^2)
    var = float(np.sum(np.arange(-40, 41) ** 2 * special.softmax(-(np.arange(-40, 41) ** 2) / 2.0)))
    np.testing.assert_allclose(obs.noise_cov(), var * np.eye(3), rtol=1e-12)
    obs = observe_release(projected_gaussian(s, inv, mu=0.5, rng=1))
    np.testing.assert_allclose(obs.noise_cov(), 4.0 * inv.projector(), rtol=1e-12)
    cov = np.array([[2.0, -1.0, -1.0], [-1.0, 2.0, -1.0], [-1.0, -1.0, 2.0]])  # in ker C
    rel = Release.from_published(s, noise="correlated_gaussian", cov=cov, invariants=inv)
    obs = observe_release(rel)
    assert obs.keeps_invariants and obs.noise.structure == "correlated"
    np.testing.assert_allclose(obs.noise_cov(), cov)

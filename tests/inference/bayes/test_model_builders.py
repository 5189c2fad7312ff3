"""Wiring and exactness of the PyMC models (few draws; the calibration is in the slow suite)."""

import dataclasses
import functools
import importlib.util
import itertools
import json
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

pm = pytest.importorskip("pymc")
az = pytest.importorskip("arviz")

from scipy import special, stats  # noqa: E402

from invariantdp import mechanisms  # noqa: E402
from invariantdp.distributions._discrete_laws import discrete_laplace  # noqa: E402
from invariantdp.inference.bayes import (  # noqa: E402
    LatticeMoves,
    ProjectedGaussianLikelihood,
    affine_counts,
    binomial_model,
    contingency_table_model,
    fibre_point,
    fit,
    mechanism_likelihood,
    poisson_regression_model,
)
from invariantdp.invariants import Invariants, one_way_margins, totals  # noqa: E402
from invariantdp.mechanisms import _subspace_mechanisms as subspace  # noqa: E402
from invariantdp.release import Release  # noqa: E402


def _with_invariants(release, inv):
    return dataclasses.replace(release, invariants=inv)


# --- conjugate Gaussian: analytic posterior -----------------------------------


def test_conjugate_gaussian_scalar():
    m0, tau, sigma = 2.0, 3.0, 1.5
    r = mechanisms.gaussian_mechanism(np.array([4.0]), mu=1 / sigma, rng=7)
    y = float(r.value[0])
    with pm.Model():
        x = pm.Normal("x", m0, tau, shape=1)
        mechanism_likelihood("y", r, x)
        idata = pm.sample(1000, tune=500, chains=2, cores=1, random_seed=1, progressbar=False)
    prec = 1 / tau**2 + 1 / sigma**2
    mean, var = (m0 / tau**2 + y / sigma**2) / prec, 1 / prec
    draws = idata.posterior["x"].values.reshape(-1)
    ess = float(az.ess(idata, var_names=["x"])["x"].values.min())
    assert abs(draws.mean() - mean) < 4 * np.sqrt(var / ess)
    # variance: SE of the sample variance ~ var * sqrt(2 / ess)
    assert abs(draws.var() - var) < 4 * var * np.sqrt(2 / ess)


def test_conjugate_projected_gaussian():
    inv = totals([0, 0, 0, 1, 1])
    x_true = np.array([10.0, 12.0, 9.0, 20.0, 25.0])
    sigma, tau = 2.0, 4.0
    m = np.array([11.0, 11.0, 11.0, 22.0, 22.0])
    r = subspace.projected_gaussian(x_true, inv, mu=1 / sigma, rng=3)
    Q = inv.null_space_basis()
    x0 = x_true - inv.project(x_true)  # a point of the affine space (here the group means)
    with pm.Model():
        z = pm.Normal("z", Q.T @ (m - x0), tau)
        x = pm.Deterministic("x", affine_counts(inv, x0, z))
        ProjectedGaussianLikelihood("y", x, sigma=sigma, invariants=inv, observed=r.value)
        idata = pm.sample(1000, tune=500, chains=2, cores=1, random_seed=3, progressbar=False)
    prec = 1 / tau**2 + 1 / sigma**2
    z_post = (Q.T @ (m - x0) / tau**2 + Q.T @ (r.value - x0) / sigma**2) / prec
    mean = x0 + Q @ z_post
    var = np.diag(inv.projector()) / prec
    draws = idata.posterior["x"].values.reshape(-1, 5)
    ess = az.ess(idata, var_names=["z"])["z"].values.min()
    assert np.all(np.abs(draws.mean(0) - mean) < 4 * np.sqrt(var / ess))
    assert np.all(np.abs(draws.var(0) - var) < 4 * var * np.sqrt(2 / ess))
    np.testing.assert_allclose(inv.apply(draws[0]), r.invariants.values)


# --- the exact lattice sampler against enumeration of the fibre ---------------


def _dirichlet_multinomial_logpmf(s, alpha):
    N, A = s.sum(), alpha.sum()
    return (
        special.gammaln(N + 1)
        + special.gammaln(A)
        - special.gammaln(N + A)
        + np.sum(special.gammaln(s + alpha) - special.gammaln(alpha) - special.gammaln(s + 1))
    )


def _compositions(total, parts):
    for cut in itertools.combinations(range(total + parts - 1), parts - 1):
        b = (-1,) + cut + (total + parts - 1,)
        yield [b[i + 1] - b[i] - 1 for i in range(parts)]


def test_exact_sampler_matches_enumeration():
    # 2 x 3 table, invariants: grand total and the first row's total
    x = np.array([[3, 1, 2], [2, 4, 0]])
    C = np.array([[1.0] * 6, [1.0, 1.0, 1.0, 0, 0, 0]])
    inv = Invariants(C, shape=(2, 3)).of(x)
    r = _with_invariants(mechanisms.discrete_laplace_mechanism(x, epsilon=0.7, rng=11), inv)
    model = contingency_table_model(r, prior=1.0)
    idata = fit(model, draws=1500, tune=300, chains=2, rng=5)
    alpha = np.ones(6)
    t = r.noise.params["scale"]
    y = r.value.reshape(-1)
    states, logw = [], []
    for top in _compositions(6, 3):
        for bottom in _compositions(6, 3):
            s = np.array(top + bottom)
            states.append(s)
            logw.append(
                _dirichlet_multinomial_logpmf(s, alpha) + discrete_laplace.logpmf(y - s, t).sum()
            )
    states = np.array(states)
    w = np.exp(np.array(logw) - special.logsumexp(logw))
    exact_mean = w @ states
    draws = idata.posterior["counts"].values.reshape(-1, 6)
    assert np.all(draws.sum(1) == 12) and np.all(draws[:, :3].sum(1) == 6)
    ess = az.ess(idata, var_names=["counts"])["counts"].values.reshape(-1)
    sd = np.sqrt(w @ states**2 - exact_mean**2)
    assert np.all(np.abs(draws.mean(0) - exact_mean) < 4 * sd / np.sqrt(ess))
    # the cell probabilities follow Dirichlet(alpha + s) averaged over s
    p_mean = idata.posterior["cell_probs"].values.reshape(-1, 6).mean(0)
    np.testing.assert_allclose(p_mean, (alpha + exact_mean) / (alpha.sum() + 12), atol=0.02)


def test_binomial_marginal_matches_quadrature():
    r = mechanisms.tulap_mechanism(13, epsilon=1.0, rng=3)
    n = 30
    model = binomial_model(r, n=n, prior=(2.0, 3.0))
    idata = fit(model, draws=1000, tune=500, chains=2, rng=1)
    theta = np.linspace(1e-6, 1 - 1e-6, 4001)
    x = np.arange(n + 1)
    noise = r.noise.distribution().logpdf(float(r.value) - x)
    lik = special.logsumexp(stats.binom.logpmf(x[None, :], n, theta[:, None]) + noise, axis=1)
    logpost = lik + stats.beta.logpdf(theta, 2, 3)
    w = np.exp(logpost - logpost.max())
    w /= w.sum()
    mean = w @ theta
    sd = np.sqrt(w @ theta**2 - mean**2)
    draws = idata.posterior["theta"].values.reshape(-1)
    ess = float(az.ess(idata)["theta"])
    assert abs(draws.mean() - mean) < 4 * sd / np.sqrt(ess)


# --- rank-1 invariants (a grand total): an exact grid posterior ---------------

GT_EXOG = np.array([[1.0, -1.0], [1.0, 0.0], [1.0, 1.0]])
GT_OFFSET = np.full(3, np.log(15.0))
GT_COUNTS = np.array([10, 14, 21])
GT_TOTAL = int(GT_COUNTS.sum())
GT_SIGMA = 2.0
GT_PRIOR_SIGMA = 1.0


def _grand_total_release(seed):
    """Three counts released by the projected Gaussian mechanism under their grand total."""
    return subspace.projected_gaussian(GT_COUNTS, totals([0, 0, 0]), mu=1 / GT_SIGMA, rng=seed)


@functools.cache
def _grid_posterior_of_release(seed):
    r = _grand_total_release(seed)
    return _grid_posterior(np.asarray(r.value, float), GT_TOTAL)


def _grid_posterior(y, total, n_grid=121):
    """Exact posterior of the Poisson regression on the integer fibre, without PyMC.

    ``p(beta, s | y) ∝ N(beta; 0, prior) prod_i Pois(s_i; exp(x_i' beta + o_i))
    exp(-||y - s||^2 / (2 sigma^2))`` for ``s >= 0`` with ``sum s = total``
    (the projected Gaussian density on the fibre, ``y - s`` in ``ker C``):
    summed over every point of the fibre and integrated over a grid of
    ``beta`` (a coarse pass locates the posterior, the fine grid spans 8 sd).
    Returns the grid axes, the grid masses and the posterior mean of ``s``.
    """
    states = np.array(list(_compositions(total, len(y))), dtype=float)
    log_h = (
        -special.gammaln(states + 1).sum(1)
        - ((y - states) ** 2).sum(1) / (2 * GT_SIGMA**2)
        + states @ GT_OFFSET
    )
    A = states @ GT_EXOG

    def masses(axes):
        B = np.stack([g.ravel() for g in np.meshgrid(*axes, indexing="ij")], 1)
        chunks = []
        for i in range(0, len(B), 4000):
            b = B[i : i + 4000]
            rate = np.exp(b @ GT_EXOG.T + GT_OFFSET).sum(1)
            prior = stats.norm.logpdf(b, 0, GT_PRIOR_SIGMA).sum(1)
            chunks.append(log_h[:, None] + A @ b.T + (prior - rate)[None, :])
        lp = np.concatenate([special.logsumexp(c, axis=0) for c in chunks])
        top = lp.max()
        w = np.exp(lp - top)
        z = w.sum()
        state_mass = sum(np.exp(c - top).sum(1) for c in chunks) / z
        return (w / z).reshape([a.size for a in axes]), state_mass @ states

    coarse = [np.linspace(-4, 4, 81)] * 2
    w, _ = masses(coarse)
    axes = []
    for j in range(2):
        m = w.sum(1 - j)
        mean = m @ coarse[j]
        sd = np.sqrt(m @ coarse[j] ** 2 - mean**2)
        axes.append(np.linspace(mean - 8 * sd, mean + 8 * sd, n_grid))
    w, count_mean = masses(axes)
    return axes, w, count_mean


@functools.cache
def _grand_total_model(latent):
    r = _grand_total_release(4)
    model = poisson_regression_model(
        r, GT_EXOG, prior_sigma=GT_PRIOR_SIGMA, offset=GT_OFFSET, latent=latent
    )
    return model, model.compile_logp(), model.compile_dlogp()


@given(
    beta=st.tuples(st.floats(-1, 1), st.floats(-1, 1)),
    first=st.integers(0, GT_TOTAL),
    second=st.integers(0, GT_TOTAL),
)
def test_grand_total_model_logp_finite_on_fibre(beta, first, second):
    # Regression: with a grand-total invariant the projected Gaussian likelihood was
    # -inf wherever the rounding residual of y - s was negative, so NUTS failed with
    # "Bad initial energy" (exact latent) or diverged (relaxed latent).
    second = min(second, GT_TOTAL - first)
    counts = np.array([first, second, GT_TOTAL - first - second])
    model, logp, dlogp = _grand_total_model("exact")
    point = {"beta": np.array(beta), "counts": counts}
    assert np.isfinite(logp(point)) and np.all(np.isfinite(dlogp(point)))
    if counts.min() < 1:  # the relaxed density has its wall at 0: stay off it
        return
    model, logp, dlogp = _grand_total_model("relaxed")
    # the relaxed counts are s(z) = s(z0) + Q_N (z - z0): solve for z (Q_N orthonormal)
    z0 = model.initial_point()["counts_coords"]
    base = np.asarray(model["counts"].eval({model["counts_coords"]: z0}))
    z = z0 + totals([0, 0, 0]).null_space_basis().T @ (counts - base)
    point = {"beta": np.array(beta), "counts_coords": z}
    assert np.isfinite(logp(point)) and np.all(np.isfinite(dlogp(point)))


@pytest.mark.parametrize("latent", ["exact", "relaxed"])
def test_grand_total_posterior_matches_grid(latent):
    r = _grand_total_release(4)
    model = poisson_regression_model(
        r, GT_EXOG, prior_sigma=GT_PRIOR_SIGMA, offset=GT_OFFSET, latent=latent
    )
    idata = fit(model, draws=1000, tune=500, chains=2, rng=1)
    assert int(idata.sample_stats["diverging"].sum()) == 0
    axes, w, count_mean = _grid_posterior_of_release(4)
    draws = idata.posterior["beta"].values.reshape(-1, 2)
    for j in range(2):
        grid, h = axes[j], axes[j][1] - axes[j][0]
        mass = w.sum(1 - j)
        mean = mass @ grid
        sd = np.sqrt(mass @ grid**2 - mean**2)
        ess = float(az.ess(idata, var_names=["beta"])["beta"].values[j])
        assert abs(draws[:, j].mean() - mean) < 4 * sd / np.sqrt(ess)
        # quantiles: standard error sqrt(p (1 - p) / ess) / density at the quantile
        cdf = np.cumsum(mass)
        for p in (0.1, 0.5, 0.9):
            q = np.interp(p, cdf, grid + h / 2)
            density = np.interp(q, grid, mass / h)
            ess_q = az.ess(idata, var_names=["beta"], method="quantile", prob=p)
            ess_q = float(ess_q["beta"].values[j])
            se = np.sqrt(p * (1 - p) / ess_q) / density
            assert abs(np.quantile(draws[:, j], p) - q) < 4 * se
    counts = idata.posterior["counts"].values.reshape(-1, 3)
    assert np.allclose(counts.sum(1), GT_TOTAL)
    ess = az.ess(idata, var_names=["counts"])["counts"].values
    assert np.all(np.abs(counts.mean(0) - count_mean) < 4 * counts.std(0) / np.sqrt(ess))


# --- fit: no warnings from PyMC, reproducible from `rng` ----------------------

#: PyTensor's notice that it found no BLAS to link (a property of the installation,
#: emitted once per process at the first compilation), not of `fit`
_BLAS_NOTICE = "PyTensor could not link to a BLAS installation"


def _fit_quietly(model, rng):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        idata = fit(model, draws=30, tune=30, chains=2, rng=rng)
    relevant = [
        f"{w.category.__name__}: {w.message}"
        for w in caught
        if issubclass(w.category, UserWarning | FutureWarning)
        and _BLAS_NOTICE not in str(w.message)
    ]
    assert relevant == []
    return idata


@pytest.mark.parametrize("latent", ["exact", "relaxed"])
def test_fit_warns_nothing_and_same_rng_same_draws(latent):
    r = subspace.projected_gaussian(
        np.array([[40, 25], [30, 55]]), one_way_margins((2, 2)), mu=0.5, rng=1
    )
    first = _fit_quietly(contingency_table_model(r, latent=latent), 7)
    again = _fit_quietly(contingency_table_model(r, latent=latent), np.random.default_rng(7))
    other = _fit_quietly(contingency_table_model(r, latent=latent), np.random.SeedSequence(8))
    for name in ("counts", "cell_probs"):
        a = first.posterior[name].values
        np.testing.assert_array_equal(again.posterior[name].values, a)
        assert not np.array_equal(other.posterior[name].values, a)
        assert not np.array_equal(a[0], a[1])  # each chain has its own stream


# --- wiring -------------------------------------------------------------------


def test_contingency_wiring_2x2():
    r = subspace.projected_gaussian(
        np.array([[12, 5], [4, 9]]), one_way_margins((2, 2)), mu=0.5, rng=1
    )
    model = contingency_table_model(r)
    assert {"cell_probs", "counts", "odds_ratio", "release"} <= set(model.named_vars)
    idata = fit(model, draws=60, tune=60, chains=1, rng=2)
    s = idata.posterior["counts"].values.reshape(-1, 4)
    assert np.all(one_way_margins((2, 2)).apply(s[5]) == r.invariants.values)
    assert "lattice_accept" in idata.sample_stats
    assert Release.from_json(idata.posterior.attrs["release"]) == r
    assert Release.from_json(idata.posterior.attrs["release"]).simulation == r.simulation
    np.testing.assert_array_equal(idata.constant_data["release_value"].values, r.value)
    np.testing.assert_array_equal(idata.constant_data["invariant_values"].values, [17, 13, 16, 14])
    # the same seed gives the same draws
    again = fit(contingency_table_model(r), draws=60, tune=60, chains=1, rng=2)
    np.testing.assert_array_equal(
        again.posterior["counts"].values, idata.posterior["counts"].values
    )


def test_contingency_relaxed_and_user_modified():
    x = np.array([[40, 25], [30, 55]])
    r = subspace.projected_gaussian(x, one_way_margins((2, 2)), mu=0.5, rng=2)
    model = contingency_table_model(r, latent="relaxed")
    idata = fit(model, draws=60, tune=60, chains=1, rng=1)
    s = idata.posterior["counts"].values.reshape(-1, 4)
    np.testing.assert_allclose(one_way_margins((2, 2)).apply(s[-1]), r.invariants.values)
    # a user-added term: fit falls back to NUTS for the probabilities
    model = contingency_table_model(r)
    with model:
        pm.Potential("extra", 0.0 * model["cell_probs"].sum())
    idata = fit(model, draws=30, tune=30, chains=1, rng=1, fast=False)
    assert "step_size" in idata.sample_stats


@pytest.mark.parametrize("mech", ["projected_gaussian", "projected_laplace"])
def test_poisson_wiring(mech):
    X = np.column_stack([np.ones(8), np.linspace(-1, 1, 8)])
    s = np.array([30, 42, 35, 51, 60, 48, 70, 66])
    inv = totals([0, 0, 0, 0, 1, 1, 1, 1])
    if mech == "projected_gaussian":
        r = subspace.projected_gaussian(s, inv, mu=0.5, rng=3)
    else:
        r = subspace.projected_laplace(s, inv, epsilon=0.5, rng=3)
    model = poisson_regression_model(r, X, exog_names=["const", "x"])
    assert ("row_space_noise" in model.named_vars) == (mech == "projected_laplace")
    idata = fit(model, draws=40, tune=40, chains=1, rng=4)
    draws = idata.posterior["counts"].values.reshape(-1, 8)
    assert np.all(inv.apply(draws[-1]) == r.invariants.values)
    assert list(idata.posterior["beta"].coords["coef"].values) == ["const", "x"]


def test_lattice_moves_and_fibre_point(rng):
    mv = LatticeMoves(Invariants(np.array([[1.0, 1, 1, 1], [1.0, 1, 0, 0]])), fixed_total=False)
    cells, deltas, sizes = mv.propose_batch(rng, 500, max_step=3)
    for c, d, m in zip(cells, deltas, sizes, strict=True):
        v = np.zeros(4, dtype=int)
        v[c[:m]] += d[:m]
        assert v.sum() == 0 and v[:2].sum() == 0 and np.any(v)
    inv = totals([0, 0, 1, 1]).of([3, 4, 5, 6])
    # the nearest point in l1 is unique here ((1, 10) in the second group is 0.2 farther)
    p = fibre_point([2.6, 3.1, -1.0, 9.6], inv)
    assert p.tolist() == [3, 4, 0, 11]
    # with a tie ((0, 11) and (1, 10) are both 2.8 away) any nearest point is right
    p = fibre_point([2.6, 3.1, -1.0, 9.2], inv)
    assert p[:2].tolist() == [3, 4] and p[2:].tolist() in ([0, 11], [1, 10])
    with pytest.raises(ValueError, match="fibre is empty"):
        fibre_point([1.0, 1.0], Invariants(np.array([[1.0, 1.0]]), [-3.0]))


def test_bad_input():
    r = mechanisms.laplace_mechanism(np.array([1.0, 2.0]), epsilon=1.0, rng=0)
    with pytest.raises(TypeError, match=r"`random_seed` \(\[1, 2\]\) is not an argument of fit"):
        fit(
            binomial_model(mechanisms.tulap_mechanism(3, epsilon=1.0, rng=0), n=5),
            random_seed=[1, 2],
        )
    with pytest.raises(ValueError, match=r"`total` must be given"):
        contingency_table_model(r)
    with pytest.raises(ValueError, match=r"`latent` \('gibbs'\) must be one of"):
        contingency_table_model(r, total=3, latent="gibbs")
    with pytest.raises(ValueError, match=r"`exog` must have shape \(2, k\)"):
        poisson_regression_model(r, np.ones((3, 1)))
    with pytest.raises(TypeError, match="`release` must be a Release"):
        binomial_model(json.dumps({}), n=3)
    with pytest.raises(ValueError, match=r"`n` \(0\) must be >= 1"):
        binomial_model(mechanisms.tulap_mechanism(3, epsilon=1.0, rng=0), n=0)


def test_external_nuts_samplers_are_passed_through_or_refused_clearly():
    r = subspace.projected_gaussian(
        np.array([[40, 25], [30, 55]]), one_way_margins((2, 2)), mu=0.5, rng=2
    )
    with pytest.raises(ValueError, match=r"`nuts_sampler` \('stan'\) must be one of"):
        fit(contingency_table_model(r, latent="relaxed"), nuts_sampler="stan")
    with pytest.raises(ValueError, match="exact latent counts that need the lattice step"):
        fit(contingency_table_model(r), nuts_sampler="nutpie")
    if importlib.util.find_spec("numpyro") is None:
        with pytest.raises(ValueError, match="pip install numpyro"):
            fit(contingency_table_model(r, latent="relaxed"), nuts_sampler="numpyro")


@pytest.mark.slow
def test_nutpie_samples_a_relaxed_model_like_pymc_nuts():
    pytest.importorskip("nutpie")
    x = np.array([[40, 25], [30, 55]])
    r = subspace.projected_gaussian(x, one_way_margins((2, 2)), mu=0.5, rng=2)
    draws = {}
    for sampler in ("pymc", "nutpie"):
        idata = fit(
            contingency_table_model(r, latent="relaxed"),
            draws=1000,
            tune=500,
            chains=2,
            rng=3,
            nuts_sampler=sampler,
        )
        draws[sampler] = idata.posterior["cell_probs"].values.reshape(-1, 4)
        np.testing.assert_array_equal(idata.constant_data["release_value"].values, r.value)
    # the two posterior means agree within Monte Carlo error (2000 draws each, ESS >> 100)
    a, b = draws["pymc"], draws["nutpie"]
    se = np.sqrt(a.var(axis=0) / 200 + b.var(axis=0) / 200)
    assert np.all(np.abs(a.mean(axis=0) - b.mean(axis=0)) < 4 * se)


# --- layout (issue 11): the same import paths -------------------------------


def test_models_module_keeps_its_names():
    """bayes/models.py was split; `fit` and the model builders are imported from it."""
    from invariantdp.inference import bayes
    from invariantdp.inference.bayes import _model_builders as module

    assert {"binomial_model", "contingency_table_model", "fit", "poisson_regression_model"} <= set(
        module.__all__
    )
    assert module.fit is fit is bayes.fit
    for builder in (binomial_model, contingency_table_model, poisson_regression_model):
        assert getattr(module, builder.__name__) is builder

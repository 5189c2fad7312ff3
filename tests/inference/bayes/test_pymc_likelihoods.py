"""Mechanism likelihoods as PyMC distributions: densities match their own laws."""

import functools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

pm = pytest.importorskip("pymc")

import pytensor.tensor as pt  # noqa: E402
from scipy import stats  # noqa: E402

from invariantdp import mechanisms  # noqa: E402
from invariantdp.distributions import (  # noqa: E402
    SubspaceNoise,
    tulap,
)
from invariantdp.distributions._discrete_laws import discrete_gaussian, discrete_laplace  # noqa: E402
from invariantdp.distributions._tulap_forms import tulap_logcdf, tulap_logpdf  # noqa: E402
from invariantdp.inference._invariant_likelihoods import projected_gaussian_logpdf  # noqa: E402
from invariantdp.inference.bayes import (  # noqa: E402
    DiscreteGaussianLikelihood,
    DiscreteLaplaceLikelihood,
    GaussianLikelihood,
    LaplaceLikelihood,
    ProjectedGaussianLikelihood,
    TulapLikelihood,
    likelihood_class,
    mechanism_likelihood,
    release_noise,
)
from invariantdp.invariants import Invariants, one_way_margins, totals  # noqa: E402
from invariantdp.mechanisms import _subspace_mechanisms as subspace  # noqa: E402
from invariantdp.mechanisms import conditional_release  # noqa: E402

TOL = 1e-10


def _close(a, b):
    a, b = np.asarray(a, float), np.asarray(b, float)
    assert np.array_equal(np.isfinite(a), np.isfinite(b))
    m = np.isfinite(b)
    assert np.max(np.abs(a[m] - b[m]), initial=0.0) < TOL


@pytest.mark.parametrize(("b", "q", "scale"), [(0.5, 0.0, 1.0), (0.8, 0.15, 2.5), (0.2, 0.4, 1.0)])
def test_tulap_logp_logcdf(rng, b, q, scale):
    mu = rng.normal(0, 3, 200)
    x = mu + rng.normal(0, 4 * scale, 200)
    d = TulapLikelihood.dist(mu, b=b, q=q, scale=scale)
    _close(pm.logp(d, x).eval(), tulap.logpdf(x, b, q, loc=mu, scale=scale))
    _close(pm.logcdf(d, x).eval(), tulap.logcdf(x, b, q, loc=mu, scale=scale))


def test_laplace_gaussian(rng):
    mu = rng.normal(0, 3, 200)
    x = mu + rng.normal(0, 8, 200)
    d = LaplaceLikelihood.dist(mu, scale=1.7)
    _close(pm.logp(d, x).eval(), stats.laplace.logpdf(x, mu, 1.7))
    _close(pm.logcdf(d, x).eval(), stats.laplace.logcdf(x, mu, 1.7))
    d = GaussianLikelihood.dist(mu, sigma=0.9)
    _close(pm.logp(d, x).eval(), stats.norm.logpdf(x, mu, 0.9))
    _close(pm.logcdf(d, x).eval(), stats.norm.logcdf(x, mu, 0.9))


def test_discrete(rng):
    mu = rng.integers(-20, 20, 200)
    k = mu + rng.integers(-15, 16, 200)
    d = DiscreteLaplaceLikelihood.dist(mu, scale=2.0)
    _close(pm.logp(d, k).eval(), discrete_laplace.logpmf(k - mu, 2.0))
    _close(pm.logcdf(d, k).eval(), discrete_laplace.logcdf(k - mu, 2.0))
    d = DiscreteGaussianLikelihood.dist(mu, sigma=3.3)
    _close(pm.logp(d, k).eval(), discrete_gaussian.logpmf(k - mu, 3.3))


@pytest.mark.parametrize(
    "inv",
    [
        totals([0, 0, 0, 1, 1, 2, 2, 2]),
        one_way_margins((2, 4)),
        Invariants(np.array([[1.0, 2.0, 0.0, 1.0, 0.0], [0.0, 1.0, 1.0, 0.0, 3.0]])),
    ],
)
def test_projected_gaussian_matches_likelihood_module(rng, inv):
    n = inv.n_cells
    sigma = 1.7
    noise = SubspaceNoise("gaussian", "projected", sigma, inv)
    for _ in range(10):
        x = rng.normal(50, 10, n)
        y = x + noise.rvs(random_state=rng).reshape(-1)
        d = ProjectedGaussianLikelihood.dist(x, sigma=sigma, invariants=inv)
        got = float(pm.logp(d, y).eval())
        assert abs(got - projected_gaussian_logpdf(y, x, inv, sigma=sigma)) < TOL
        assert abs(got - noise.logpdf(y - x)) < TOL
        off = y + 0.1 * rng.normal(size=n)
        assert pm.logp(d, off).eval() == -np.inf
        assert projected_gaussian_logpdf(off, x, inv, sigma=sigma) == -np.inf


#: rank-1 invariants: the grand total, and one weighted total
RANK_ONE_ROWS = {
    "total-of-2": (1.0, 1.0),
    "total-of-7": (1.0,) * 7,
    "weighted": (1.0, 2.0, 0.0, 3.0, 1.0),
}


@functools.cache
def _rank_one_logp(key, sigma):
    """Compiled (optimised, as PyMC samples it) ``(value, mu) -> logp`` for a rank-1 invariant."""
    inv = Invariants(np.array([RANK_ONE_ROWS[key]]))
    value, mu = pt.vector("value"), pt.vector("mu")
    logp = pm.logp(ProjectedGaussianLikelihood.dist(mu, sigma=sigma, invariants=inv), value)
    return inv, pm.compile([value, mu], logp)


@pytest.mark.parametrize("key", sorted(RANK_ONE_ROWS))
@given(
    scale=st.sampled_from([1e-2, 1.0, 1e2, 1e5]),
    sigma=st.sampled_from([0.3, 2.0, 50.0]),
    seed=st.integers(0, 2**32 - 1),
)
def test_projected_gaussian_rank_one_finite_on_space(key, scale, sigma, seed):
    # Regression: with one invariant, sqrt(sum(r**2)) was rewritten by PyTensor into
    # switch(r >= 0, r, nan), so every release whose rounding residual r in the row
    # space was negative (about half of them) had log density -inf.
    inv, f = _rank_one_logp(key, sigma)
    gen = np.random.default_rng(seed)
    noise = SubspaceNoise("gaussian", "projected", sigma, inv)
    for _ in range(8):
        x = scale * gen.normal(size=inv.n_cells)
        y = x + noise.rvs(random_state=gen).reshape(-1)
        got = float(f(y, x))
        assert np.isfinite(got)
        assert abs(got - projected_gaussian_logpdf(y, x, inv, sigma=sigma)) < 1e-8 * max(
            1.0, abs(got)
        )
        # off the space by far more than the tolerance, on either side
        row = np.asarray(RANK_ONE_ROWS[key]) / np.linalg.norm(RANK_ONE_ROWS[key])
        step = 1e-3 * (sigma + np.abs(y).max() + np.abs(x).max())
        assert float(f(y + step * row, x)) == -np.inf
        assert float(f(y - step * row, x)) == -np.inf


def test_projected_gaussian_draws_hold_invariants(rng):
    inv = totals([0, 0, 1, 1, 1])
    x = np.array([3.0, 4.0, 5.0, 6.0, 7.0])
    draws = pm.draw(
        ProjectedGaussianLikelihood.dist(x, sigma=2.0, invariants=inv), draws=500, random_seed=1
    )
    np.testing.assert_allclose(inv.apply(draws.T.reshape(5, -1).T[0]), [7.0, 18.0])
    cov = np.cov(draws.T)
    np.testing.assert_allclose(cov, 4.0 * inv.projector(), atol=0.5)


def test_random_draws_follow_law(rng):
    d = TulapLikelihood.dist(0.0, b=0.6, q=0.1, size=4000)
    draws = pm.draw(d, random_seed=2)
    assert stats.kstest(draws, tulap(0.6, 0.1).cdf).pvalue > 1e-3
    d = DiscreteLaplaceLikelihood.dist(5, scale=2.0, size=4000)
    draws = pm.draw(d, random_seed=3)
    assert abs(draws.mean() - 5) < 0.2 and draws.dtype.kind == "i"


def test_from_release(rng):
    x = np.array([10, 20, 30, 40])
    cases = [
        (mechanisms.tulap_mechanism(x, epsilon=1.0, delta=0.01, rng=1), "tulap"),
        (mechanisms.laplace_mechanism(x, epsilon=1.0, rng=1), "laplace"),
        (mechanisms.gaussian_mechanism(x, mu=1.0, rng=1), "gaussian"),
        (mechanisms.discrete_laplace_mechanism(x, epsilon=1.0, rng=1), "discrete_laplace"),
        (mechanisms.discrete_gaussian_mechanism(x, mu=1.0, rng=1), "discrete_gaussian"),
        (subspace.projected_gaussian(x, totals([0, 0, 1, 1]), mu=1.0, rng=1), "projected_gaussian"),
    ]
    for r, kind in cases:
        spec = release_noise(r)
        assert spec.structure == ("projected" if kind == "projected_gaussian" else "independent")
        assert spec.integer == kind.startswith("discrete")
        assert likelihood_class(spec) is {
            "tulap": TulapLikelihood,
            "laplace": LaplaceLikelihood,
            "discrete_laplace": DiscreteLaplaceLikelihood,
            "discrete_gaussian": DiscreteGaussianLikelihood,
        }.get(kind, GaussianLikelihood)
        with pm.Model() as m:
            s = pm.Flat("s", shape=4, initval=x.astype(float))
            mechanism_likelihood("y", r, s)
        got = m.compile_logp()({"s": x.astype(float)})
        dist = r.noise.distribution()
        if kind == "projected_gaussian":
            want = dist.logpdf(r.value - x)
        elif kind.startswith("discrete"):
            want = np.sum(dist.logpmf(r.value - x))
        else:
            want = np.sum(dist.logpdf(r.value - x))
        assert abs(got - want) < TOL


def test_congenial_gaussian_is_projected():
    inv = totals([0, 0, 0])
    cr = conditional_release(
        np.array([5.0, 6.0, 7.0]), "gaussian", inv, mu=1.0, rng=0, warn=False, draws=50
    )
    spec = release_noise(cr)
    assert spec.structure == "projected" and dict(spec.params) == {"sigma": 1.0}


def test_bad_input():
    with pytest.raises(ValueError, match=r"`b` \(1.5\) must be in \[0, 1\)"):
        TulapLikelihood.dist(0.0, b=1.5)
    with pytest.raises(ValueError, match=r"`scale` \(-1.0\) must be > 0"):
        LaplaceLikelihood.dist(0.0, scale=-1.0)
    with pytest.raises(TypeError, match="LaplaceLikelihood needs the keyword argument `scale`"):
        LaplaceLikelihood.dist(0.0)
    with pytest.raises(TypeError, match="missing 1 required keyword-only argument: 'b'"):
        TulapLikelihood.dist(0.0, q=0.1)
    with pytest.raises(TypeError, match="`invariants` must be an Invariants"):
        ProjectedGaussianLikelihood.dist(np.zeros(2), sigma=1.0, invariants=np.ones((1, 2)))
    with pytest.raises(TypeError, match="`release` must be a Release"):
        release_noise({"value": 1})


# --- layout (issue 11): the same import paths -------------------------------


def test_distributions_module_keeps_its_names():
    """bayes/distributions.py was split; its names are still imported from it."""
    from invariantdp.inference.bayes import _pymc_likelihoods as module

    assert {"mechanism_likelihood", "release_noise"} <= set(module.__all__)
    assert module.mechanism_likelihood is mechanism_likelihood
    assert module.release_noise is release_noise


# --- names (issue 11): the classes are likelihoods; the old names warn -------

RENAMED = {
    "Tulap": TulapLikelihood,
    "Laplace": LaplaceLikelihood,
    "Gaussian": GaussianLikelihood,
    "DiscreteLaplace": DiscreteLaplaceLikelihood,
    "DiscreteGaussian": DiscreteGaussianLikelihood,
    "ProjectedGaussian": ProjectedGaussianLikelihood,
}


@pytest.mark.parametrize("old", sorted(RENAMED))
def test_old_likelihood_names_warn_and_give_the_same_class(old):
    from invariantdp.inference import bayes

    new = RENAMED[old]
    with pytest.warns(DeprecationWarning, match=f"bayes.{old} is deprecated.*{new.__name__}"):
        cls = getattr(bayes, old)
    assert cls is new
    assert old not in bayes.__all__ and new.__name__ in bayes.__all__
    # the defining modules keep the old binding, without a warning, for the package itself
    from invariantdp.inference.bayes import _projected, _scalar

    assert getattr(_scalar if old != "ProjectedGaussian" else _projected, old) is new


def test_unknown_attribute_of_bayes_is_an_attribute_error():
    from invariantdp.inference import bayes

    with pytest.raises(AttributeError, match="no attribute 'Tulapp'"):
        bayes.Tulapp  # noqa: B018


# --- one Tulap log-cdf (issue 11): numpy and PyTensor evaluate the same forms ---


@pytest.mark.parametrize(
    ("log_b", "q"),
    [
        (np.log(0.5), 0.0),
        (np.log(0.8), 0.15),
        (np.log(0.2), 0.4),
        (-1e-3, 0.7),  # q > 1/2: the centred form of the truncated cdf
        (-40.0, 0.0),
        (-np.inf, 0.0),  # b = 0, the uniform limit
        (-np.inf, 0.3),
    ],
)
def test_tulap_forms_agree_in_numpy_and_pytensor(log_b, q):
    qc = 1.0 - q
    x = np.concatenate(
        [np.linspace(-60.0, 60.0, 481), [-1e4, -700.3, -0.5, 0.5, 0.49, -0.49, 700.3, 1e4]]
    )
    z = pt.dvector("z")
    got_cdf = tulap_logcdf(z, log_b, q, qc, xp=pt).eval({z: x})
    got_pdf = tulap_logpdf(z, log_b, qc, xp=pt).eval({z: x})
    with np.errstate(divide="ignore"):
        want_cdf = tulap_logcdf(x, log_b, q, qc)
        want_pdf = tulap_logpdf(x, log_b, qc)
    for got, want in ((got_cdf, want_cdf), (got_pdf, want_pdf)):
        assert np.array_equal(np.isfinite(got), np.isfinite(want))
        assert np.array_equal(got == -np.inf, want == -np.inf)
        m = np.isfinite(want)
        np.testing.assert_allclose(got[m], want[m], rtol=1e-12, atol=1e-12)
    # the far lower tail is finite and linear in log b (not -inf) wherever b > 0
    if np.isfinite(log_b) and q == 0.0:
        assert np.isfinite(got_cdf[x == -1e4]).all()


@pytest.mark.parametrize("q", [0.0, 0.2])
def test_tulap_likelihood_at_b_zero_is_the_uniform_law(q):
    """b = 0 (epsilon -> inf): y - mu uniform on [-(1-q)/2, (1-q)/2], in closed form."""
    mu = 2.0
    half = 0.5 * (1.0 - q)
    y = np.array([mu - 0.6, mu - half + 1e-3, mu - 0.1, mu, mu + 0.2, mu + half - 1e-3, mu + 0.7])
    d = TulapLikelihood.dist(mu, b=0.0, q=q)
    logp = pm.logp(d, y).eval()
    logcdf = pm.logcdf(d, y).eval()
    inside = np.abs(y - mu) <= half
    with np.errstate(divide="ignore"):
        want_logp = np.where(inside, -np.log(1.0 - q), -np.inf)
        want_logcdf = np.log(np.clip((y - mu + half) / (1.0 - q), 0.0, 1.0))
    np.testing.assert_array_equal(logp, want_logp)
    assert np.array_equal(np.isfinite(logcdf), np.isfinite(want_logcdf))
    m = np.isfinite(want_logcdf)
    np.testing.assert_allclose(logcdf[m], want_logcdf[m], rtol=1e-12, atol=1e-12)
    draws = pm.draw(TulapLikelihood.dist(mu, b=0.0, q=q, size=2000), random_seed=5)
    assert np.all(np.abs(draws - mu) <= half)
    assert stats.kstest(draws - mu, stats.uniform(-half, 2 * half).cdf).pvalue > 1e-3

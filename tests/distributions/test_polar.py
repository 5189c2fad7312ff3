"""The polar sampler of K = Hull(S) (issue 13): its bounds, its law, its limits."""

import math

import numpy as np
import pytest
from scipy import stats

from invariantdp import InvariantDPError
from invariantdp.distributions import KNormNoise
from invariantdp.distributions import _polar_sampler as polar
from invariantdp.distributions._polar_sampler import MAX_POLAR_DIM, LPHullNorm
from invariantdp.sensitivity import HullNorm, contingency_sensitivity_space, hull_norm


def _directions(n, s, seed):
    g = np.random.default_rng(seed)
    t = g.standard_normal((n, s))
    return t / np.linalg.norm(t, axis=1, keepdims=True)


# --- the norm and its lower bounds ----------------------------------------------------


@pytest.mark.parametrize("r,c", [(3, 3), (3, 4), (4, 3), (2, 5)])
def test_lp_norm_is_the_facet_norm(r, c):
    S = contingency_sensitivity_space(r, c)
    K, L = HullNorm.from_space(S), LPHullNorm(S)
    assert L.contingency_shape == (r, c) and L.dim == K.dim and L.radius == pytest.approx(2.0)
    v = _directions(40, K.dim, 0) @ K.basis.T * 3.0
    np.testing.assert_allclose(L(v), K(v), rtol=1e-9)
    np.testing.assert_allclose(L(S), 1.0, rtol=1e-9)  # Prop. 30
    assert np.isinf(L(np.ones(r * c)))  # off the span


@pytest.mark.parametrize("r,c", [(3, 3), (3, 4), (2, 6)])
def test_ferrers_bound_is_the_norm_where_all_facets_are_ferrers(r, c):
    # the facets of 3 x 3, 3 x 4 (Qhull) and 2 x c (the l1 ball) are all Ferrers matrices:
    # the bound must reproduce the norm exactly, and the cut bound stay below it
    S = contingency_sensitivity_space(r, c)
    K, L = HullNorm.from_space(S), LPHullNorm(S)
    t = _directions(2000, L.dim, 1)
    exact = K.norm_of_coordinates(t @ K.basis.T @ L.basis)
    ferrers, cut = L._second_bound(t), L._first_bound(t)
    np.testing.assert_allclose(ferrers, exact, rtol=1e-12)
    assert np.all(cut <= ferrers + 1e-12)
    if (r, c) != (2, 6):
        assert np.mean(cut < exact - 1e-9) > 0.1  # the cut bound alone is not the norm


@pytest.mark.parametrize("r,c", [(4, 4), (4, 5), (5, 5)])
def test_bounds_are_lower_bounds_of_the_lp_norm(r, c):
    L = LPHullNorm(contingency_sensitivity_space(r, c))
    t = _directions(60, L.dim, 2)
    exact = L.norm_of_coordinates(t)
    ferrers, cut = L._second_bound(t), L._first_bound(t)
    assert np.all(cut <= ferrers + 1e-12) and np.all(ferrers <= exact * (1 + 1e-9))
    assert np.mean(ferrers >= exact * (1 - 1e-9)) > 0.5  # tight on most directions


def test_the_generic_bound_is_a_lower_bound():
    g = np.random.default_rng(3)
    S = g.standard_normal((30, 7))
    L = LPHullNorm(S)
    assert L.contingency_shape is None and L._second_bound(np.ones((1, 7))) is None
    t = _directions(50, 7, 4)
    assert np.all(L._first_bound(t) <= L.norm_of_coordinates(t) * (1 + 1e-9))
    np.testing.assert_allclose(L(S[:5]), hull_norm(S[:5], S, method="lp"), rtol=1e-9)


# --- the law: facet hits of the direction, Gamma K-norm of the noise ------------------


def _facet_probabilities(K: HullNorm):
    """Facets of K and the volume fraction of the cone over each (from the triangulation)."""
    a, b = K.equations[:, :-1], -K.equations[:, -1]
    simplices = K.points[K.simplices]  # (k, s, s)
    facet = np.argmax((simplices.mean(axis=1) @ a.T) / b, axis=1)
    w = np.diff(np.concatenate([[0.0], K.simplex_cdf]))
    return a, b, np.bincount(facet, weights=w, minlength=len(b))


def _facet_chi2_pvalues(K: HullNorm, u: np.ndarray) -> tuple[float, float]:
    """Chi-square p-values of the facet hits of ``u``: per facet, and pooled by orbit.

    Facets in one orbit of the symmetries of the table have equal cones; the
    pooled test (a few cells) has power against laws that keep the symmetry.
    """
    a, b, p = _facet_probabilities(K)
    hits = np.bincount(np.argmax((u @ a.T) / b, axis=1), minlength=len(b))
    _, orbit = np.unique(np.round(p, 9), return_inverse=True)
    pooled = np.bincount(orbit, weights=hits), np.bincount(orbit, weights=p)
    return (
        stats.chisquare(hits, p * len(u)).pvalue,
        stats.chisquare(pooled[0], pooled[1] * len(u)).pvalue,
    )


@pytest.mark.parametrize(
    "r,c,rotate,n",
    [(3, 3, False, 3000), (3, 3, True, 1500), (3, 4, False, 4000)],
)
def test_direction_is_uniform_on_the_boundary(r, c, rotate, n):
    # the cone over a facet holds a fraction vol(cone) / vol(K) of the uniform law on K;
    # rotate=True hides the contingency structure (generic bound, no Ferrers step)
    S = contingency_sensitivity_space(r, c)
    K = HullNorm.from_space(S)
    Q = np.linalg.qr(np.random.default_rng(5).standard_normal((r * c, r * c)))[0]
    L = LPHullNorm(S @ Q.T if rotate else S)
    assert (L.contingency_shape is None) == rotate
    u = L.sample_uniform(n, rng=6) @ L.basis.T @ (Q if rotate else np.eye(r * c)) @ K.basis
    assert K.equations.shape[0] == {(3, 3): 30, (3, 4): 114}[r, c]
    assert min(_facet_chi2_pvalues(K, u)) > 1e-3
    # the same test sees a wrong law: directions uniform on the sphere
    wrong = _directions(n, K.dim, 7)
    wrong /= K.norm_of_coordinates(wrong)[:, None]
    assert _facet_chi2_pvalues(K, wrong)[1] < 1e-6


@pytest.mark.slow
def test_direction_is_uniform_on_the_boundary_4x4():
    # 4 x 4 has half-integral facets (192 of 866) that the Ferrers bound misses: the
    # linear programme decides there; Qhull builds the reference in ~5-12 s
    S = contingency_sensitivity_space(4, 4)
    K = HullNorm.from_space(S)
    L = LPHullNorm.from_space(S)
    u = L.sample_uniform(6000, rng=13) @ L.basis.T @ K.basis
    assert min(_facet_chi2_pvalues(K, u)) > 1e-3


def _gamma_ks(r, c, n, seed, scale=1.5):
    law = KNormNoise("polytope", r * c, scale, contingency_sensitivity_space(r, c))
    assert isinstance(law.hull, LPHullNorm)
    v = law.rvs(size=n, random_state=seed)
    norms = law.norm(v)  # one linear programme per draw
    s = law.intrinsic_dim
    good = stats.kstest(norms, stats.gamma(s, scale=scale).cdf).pvalue
    wrong = stats.kstest(norms, stats.gamma(s + 1, scale=scale).cdf).pvalue
    return good, wrong, v


@pytest.mark.parametrize("r,c,n", [(3, 6, 1500), (4, 5, 800)])
def test_knorm_of_the_noise_is_gamma(r, c, n):
    # density exp(-||v||_K / scale) on an s-dimensional span: ||V||_K ~ Gamma(s, scale)
    # (V = R U with R ~ Gamma(s + 1, scale) and ||U||_K ~ Beta(s, 1))
    good, wrong, v = _gamma_ks(r, c, n, seed=8)
    assert good > 1e-3
    assert wrong < 1e-6  # the test has power against a shape off by one
    T = v.reshape(-1, r, c)  # the margins are kept
    np.testing.assert_allclose(T.sum(axis=1), 0.0, atol=1e-9)
    np.testing.assert_allclose(T.sum(axis=2), 0.0, atol=1e-9)


@pytest.mark.slow
def test_knorm_of_the_noise_is_gamma_5x5():
    good, wrong, _ = _gamma_ks(5, 5, 250, seed=9)
    assert good > 1e-3 and wrong < 1e-3


def test_second_moment_matches_the_triangulation_sampler():
    # E[U U^T] of the uniform law on K (3 x 4): polar draws against the exact
    # second moment of the triangulation (KNormNoise.cov)
    S = contingency_sensitivity_space(3, 4)
    law = KNormNoise("polytope", 12, 1.0, S)
    s = law.intrinsic_dim
    exact = law.cov() / ((s + 1.0) * (s + 2.0))  # E[U U^T] in ambient coordinates
    L = LPHullNorm.from_space(S)
    u = L.sample_uniform(3000, rng=10) @ L.basis.T
    emp = u.T @ u / len(u)
    d = np.diag(exact)
    se = np.sqrt((d[:, None] * d[None, :] + exact**2) / len(u))
    assert np.all(np.abs(emp - exact) < 5 * se + 1e-12)


# --- reproducibility, limits, caps -----------------------------------------------------


def test_draws_are_reproducible_and_inside_k():
    L = LPHullNorm.from_space(contingency_sensitivity_space(3, 6))
    a, b = L.sample_uniform(5, rng=11), L.sample_uniform(5, rng=11)
    np.testing.assert_array_equal(a, b)
    assert np.all(L.norm_of_coordinates(a) <= 1.0 + 1e-9)
    assert L.sample_uniform(rng=1).shape == (L.dim,)


@pytest.mark.parametrize("r,c", [(5, 6), (6, 5), (2, 18), (6, 6)])
def test_contingency_spaces_above_the_limit_are_refused_before_drawing(r, c, work):
    assert (r - 1) * (c - 1) > MAX_POLAR_DIM
    L = LPHullNorm(contingency_sensitivity_space(r, c))
    work.refused_at_once(
        lambda g: L.sample_uniform(1, rng=g), rf"{r} x {c} table.*<= {MAX_POLAR_DIM} only"
    )


def test_every_call_is_capped(monkeypatch):
    # a point set the polar sampler cannot serve fast: the caps stop it with the reason
    g = np.random.default_rng(12)
    S = g.standard_normal((40, 14))
    monkeypatch.setattr(LPHullNorm, "MAX_DIRECTIONS", 3000)
    monkeypatch.setattr(LPHullNorm, "MAX_LPS", 10)
    L = LPHullNorm(S)
    with pytest.raises(
        InvariantDPError, match=r"stopped after \d+ directions.*0 of the 2 draws.*MAX_DIRECTIONS"
    ):
        L.sample_uniform(2, rng=0)
    # the 3 x 3 space rotated (generic bound): about two linear programmes per draw
    monkeypatch.setattr(LPHullNorm, "MAX_DIRECTIONS", 10**7)
    monkeypatch.setattr(LPHullNorm, "MAX_LPS", 1)
    Q = np.linalg.qr(g.standard_normal((9, 9)))[0]
    L = LPHullNorm(contingency_sensitivity_space(3, 3) @ Q.T)
    with pytest.raises(InvariantDPError, match=r"(\d+) linear programmes.*MAX_LPS = 1"):
        L.sample_uniform(50, rng=0)


def test_uncertified_lp_values_raise(monkeypatch):
    L = LPHullNorm(contingency_sensitivity_space(3, 3))
    monkeypatch.setattr(polar, "_LP_GAP", -1.0)  # no gap is small enough
    with pytest.raises(InvariantDPError, match="did not certify"):
        L.norm_of_coordinates(np.ones(L.dim))


def test_method_and_size_are_checked():
    L = LPHullNorm(contingency_sensitivity_space(2, 3))
    with pytest.raises(InvariantDPError, match=r"`method` \('triangulation'\) must be 'polar'"):
        L.sample_uniform(1, rng=0, method="triangulation")
    with pytest.raises(InvariantDPError, match=r"`size`.*GiB"):
        L.sample_uniform(10**10, rng=0)
    with pytest.raises(InvariantDPError, match="nonzero"):
        LPHullNorm(np.zeros((2, 3)))


def test_volume_is_unknown_but_the_unnormalised_density_is_available():
    S = contingency_sensitivity_space(3, 6)
    law = KNormNoise("polytope", 18, 2.0, S)
    v = law.rvs(size=3, random_state=0)
    np.testing.assert_allclose(law.logpdf(v, normalized=False), -law.norm(v) / 2.0)
    for call in (law.unit_ball_volume, law.cov, lambda: law.logpdf(v)):
        with pytest.raises(InvariantDPError, match=r"needs vol\(K\).*normalized=False"):
            call()
    # within the facet limits the normalised density is unchanged
    small = KNormNoise("polytope", 9, 2.0, contingency_sensitivity_space(3, 3))
    w = small.rvs(size=2, random_state=0)
    const = math.lgamma(5) + math.log(small.unit_ball_volume()) + 4 * math.log(2.0)
    np.testing.assert_allclose(small.logpdf(w), small.logpdf(w, normalized=False) - const)


def test_one_dimensional_space_gives_the_laplace_law():
    # 2 x 2: the sphere is {-1, +1} and K = [-2, 2] along (1, -1, -1, 1) / 2, so the noise
    # coordinate is Laplace with scale 2 * scale (Gamma(2) times a uniform)
    law = KNormNoise("polytope", 4, 1.0, contingency_sensitivity_space(2, 2))
    v = law.rvs(size=1500, random_state=14, method="polar")
    x = v @ np.array([1.0, -1.0, -1.0, 1.0]) / 2
    assert stats.kstest(x, stats.laplace(scale=2.0).cdf).pvalue > 1e-3
    assert stats.kstest(x, stats.laplace(scale=2.4).cdf).pvalue < 1e-3

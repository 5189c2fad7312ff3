"""K-norm mechanism: exact sampler, its law, and the work a release does."""

import numpy as np
import pytest

from invariantdp import InvariantDPError, Release, sensitivity
from invariantdp.distributions import KNormNoise
from invariantdp.distributions._knorm_law import knorm_from_params
from invariantdp.distributions._polar_sampler import LPHullNorm
from invariantdp.mechanisms import knorm, semi_dp_knorm
from invariantdp.sensitivity import HullNorm, contingency_sensitivity_space, hull_norm

from ._simulation import simulation_unless_seeded

ALL_TABLES = [(r, c) for r in range(2, 11) for c in range(2, 11) if (r - 1) * (c - 1) <= 9]


@pytest.mark.parametrize("r,c", [(2, 2), (3, 3), (2, 4)])
def test_radial_law(r, c):
    # ||V||_K ~ Gamma(s, scale): density of the K-norm mechanism in s dimensions
    S = contingency_sensitivity_space(r, c)
    law = KNormNoise("polytope", r * c, 2.0, S)
    v = law.rvs(size=20_000, random_state=1)
    s = law.intrinsic_dim
    norms = law.norm(v)
    assert abs(norms.mean() - 2.0 * s) < 4 * 2.0 * np.sqrt(s) / np.sqrt(norms.size)
    # the noise lives in span(S): the margins are untouched
    T = v.reshape(-1, r, c)
    np.testing.assert_allclose(T.sum(axis=1), 0.0, atol=1e-9)
    np.testing.assert_allclose(T.sum(axis=2), 0.0, atol=1e-9)


def test_covariance_matches_exact_formula():
    law = KNormNoise("polytope", 9, 1.0, contingency_sensitivity_space(3, 3))
    v = law.rvs(size=60_000, random_state=2)
    emp, exact = np.cov(v.T), law.cov()
    se = np.sqrt((np.diag(exact)[:, None] * np.diag(exact)[None, :] + exact**2) / v.shape[0])
    assert np.all(np.abs(emp - exact) < 5 * se + 1e-12)


def test_triangulation_and_rejection_samplers_agree():
    S = contingency_sensitivity_space(2, 3)
    a = KNormNoise("polytope", 6, 1.0, S).rvs(size=20_000, random_state=3)
    b = KNormNoise("polytope", 6, 1.0, S).rvs(size=20_000, random_state=4, method="rejection")
    diff = (a**2).mean(0) - (b**2).mean(0)
    se = np.sqrt(((a**2).var(0) + (b**2).var(0)) / 20_000)
    assert np.all(np.abs(diff) < 4.5 * se)


def test_logpdf_is_the_laplace_density_in_one_dimension():
    law = KNormNoise("polytope", 4, 0.5, contingency_sensitivity_space(2, 2))
    u = np.array([1.0, -1.0, -1.0, 1.0]) / 2  # unit vector; ||2u||_K = 1
    t = np.array([-3.0, 0.1, 2.0])
    # coordinate along u is Laplace with scale 2 * 0.5
    expected = -np.abs(t) / 1.0 - np.log(2.0)
    np.testing.assert_allclose(law.logpdf(t[:, None] * u), expected, rtol=1e-12)
    assert law.logpdf(np.ones(4)) == -np.inf


def test_knorm_any_polytope_and_round_trip():
    V = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [1.0, 1.0, 1.0]])
    r = knorm([1.0, 2.0, 3.0], V, epsilon=0.5, sensitivity=2.0, rng=5)
    assert r == knorm([1.0, 2.0, 3.0], V, epsilon=0.5, sensitivity=2.0, rng=5)
    back = Release.from_json(r.to_json())
    assert back == r
    law = back.noise.distribution()
    assert law.scale == 4.0 and law.intrinsic_dim == 3
    with pytest.raises(InvariantDPError, match="`vertices` must have shape"):
        knorm([1.0, 2.0], V, epsilon=1.0)
    with pytest.raises(InvariantDPError, match=r"`epsilon` \(0.0\) must be > 0"):
        knorm([1.0, 2.0, 3.0], V, epsilon=0.0)


def _releases_reuse_the_hull(r, c, work, monkeypatch, calls=20):
    """After the first release of an r x c table, a release builds nothing and draws
    ``s + 3`` numbers (its radius, its simplex, ``s + 1`` exponentials); the releases per
    second are in benchmarks/bench_mechanisms.py."""
    table = np.arange(1, r * c + 1).reshape(r, c) * 3
    semi_dp_knorm(table, epsilon=1.0, rng=0)  # builds and caches the hull
    monkeypatch.setattr(sensitivity, "ConvexHull", work.no_qhull)
    s = (r - 1) * (c - 1)
    gen = work.CountingGenerator(1)
    for _ in range(calls):
        rel = semi_dp_knorm(table, epsilon=1.0, rng=gen)
    assert rel.metadata["method"] == "triangulation"
    assert gen.drawn == calls * (s + 3 if s > 1 else 2)


@pytest.mark.parametrize("r,c", [(3, 3), (2, 6), (3, 4)])
def test_small_tables_reuse_the_hull(r, c, work, monkeypatch):
    _releases_reuse_the_hull(r, c, work, monkeypatch)


@pytest.mark.parametrize("r,c", [(3, 6), (4, 5), (5, 5)])
def test_one_release_beyond_nine_dimensions_needs_no_set_up(r, c, work, monkeypatch):
    # issue 13: the polar sampler, no Qhull; about one linear programme per draw (the
    # Ferrers bound screens the rest); its time per release is in benchmarks/
    monkeypatch.setattr(sensitivity, "ConvexHull", work.no_qhull)
    table = np.arange(1, r * c + 1).reshape(r, c) * 3
    gen = np.random.default_rng(2)
    L = LPHullNorm.from_space(contingency_sensitivity_space(r, c))
    for _ in range(3):
        rel = semi_dp_knorm(table, epsilon=1.0, rng=gen)
        assert rel.metadata["method"] == "polar"
        assert L.last_call["draws"] == 1 and L.last_call["linear_programmes"] <= 10


@pytest.mark.slow
@pytest.mark.parametrize("r,c", ALL_TABLES)
def test_every_table_up_to_nine_dimensions_reuses_its_hull(r, c, work, monkeypatch):
    _releases_reuse_the_hull(r, c, work, monkeypatch)
    K = HullNorm.from_space(contingency_sensitivity_space(r, c))
    assert K.dim == (r - 1) * (c - 1)


# --- no call may hang; simulation only (issue 10, items 2 and 4) ----------------------


@pytest.mark.parametrize("r,c", [(3, 6), (2, 11), (4, 5)])
def test_polytopes_beyond_the_facet_limits_use_the_polar_sampler(r, c, work, monkeypatch):
    # 3 x 6 and 4 x 5 ran for more than 150 s in Qhull; the facets are still refused at
    # once, and "auto" (the default) draws without them
    S = contingency_sensitivity_space(r, c)
    x = np.full(r * c, 5.0)
    for method in ("triangulation", "rejection"):
        work.refused_at_once(
            lambda g, method=method: knorm(x, S, epsilon=1.0, rng=g, method=method),
            rf"`method` \('{method}'\) needs the facets.*dimension {(r - 1) * (c - 1)}"
            ".*method='polar'",
        )
    monkeypatch.setattr(sensitivity, "ConvexHull", work.no_qhull)
    rel = knorm(x, S, epsilon=1.0, rng=0)
    assert rel.metadata["method"] == "polar"
    assert rel == knorm(x, S, epsilon=1.0, rng=0, method="polar")
    T = rel.value.reshape(r, c)
    np.testing.assert_allclose(T.sum(axis=0), 5.0 * r)
    np.testing.assert_allclose(T.sum(axis=1), 5.0 * c)
    # a published release naming such a space is loaded without building a hull
    law = {"norm": "polytope", "dim": r * c, "scale": 1.0, "space": {"r": r, "c": c}}
    noise = knorm_from_params(law)
    assert noise.intrinsic_dim == (r - 1) * (c - 1)
    v = rel.value - x
    assert noise.norm(v) == pytest.approx(float(hull_norm(v, S, method="lp")), rel=1e-9)


@pytest.mark.parametrize("r,c", [(5, 6), (2, 19), (6, 6)])
def test_polytopes_beyond_the_polar_limit_are_refused_at_once(r, c, work):
    S = contingency_sensitivity_space(r, c)
    x = np.full(r * c, 5.0)
    msg = rf"{r} x {c} table \(dimension \(r-1\)\(c-1\) = {(r - 1) * (c - 1)}\).*<= 16 only"
    work.refused_at_once(lambda g: knorm(x, S, epsilon=1.0, rng=g), msg)
    law = {"norm": "polytope", "dim": r * c, "scale": 1.0, "space": {"r": r, "c": c}}
    work.refused_at_once(lambda g: knorm_from_params(law).rvs(random_state=g), msg)


@pytest.mark.parametrize("norm", ["l1", "l2", "linf", "polytope"])
def test_huge_sizes_are_refused_before_allocating(norm, work):
    S = contingency_sensitivity_space(2, 3) if norm == "polytope" else None
    law = KNormNoise(norm, 6, 1.0, S)
    work.refused_at_once(lambda g: law.rvs(size=10**9, random_state=g), r"`size`.*GiB")


def test_secure_is_refused_with_the_secure_alternatives():
    S = contingency_sensitivity_space(2, 2)
    with pytest.raises(
        InvariantDPError,
        match=r"`secure=True`: knorm has no exact sampler.*discrete_laplace_mechanism\(x, \.\.\., "
        r"secure=True\).*discrete_gaussian_mechanism.*odds_ratio_release",
    ):
        knorm([1.0, 2.0, 3.0, 4.0], S, epsilon=1.0, secure=True)


@pytest.mark.parametrize("rng", [None, 3])
def test_knorm_release_is_a_simulation(rng):
    with simulation_unless_seeded(rng, "knorm"):
        r = knorm([1.0, 2.0, 3.0, 4.0], contingency_sensitivity_space(2, 2), epsilon=1.0, rng=rng)
    assert r.simulation and r.metadata["randomness"] == "simulation"
    assert r.metadata["method"] == "triangulation"
    assert Release.from_json(r.to_json()).simulation


def test_the_hull_of_a_polytope_is_decided_once(monkeypatch):
    import invariantdp.distributions._knorm_law as knorm_module

    calls = []
    real = knorm_module.facets_within_limits
    monkeypatch.setattr(knorm_module, "facets_within_limits", lambda V: calls.append(1) or real(V))
    V = contingency_sensitivity_space(2, 3) * 1.25  # vertices no other test caches
    a, b = KNormNoise("polytope", 6, 1.0, V), KNormNoise("polytope", 6, 2.0, V.copy())
    assert a.hull is b.hull and len(calls) == 1


def test_semi_dp_decides_the_sampler_by_the_rule_of_the_law():
    # semi_dp_knorm decides from (r - 1)(c - 1) <= MAX_HULL_DIM before enumerating S_Semi;
    # KNormNoise decides from the enumerated S_Semi: the two agree on every table it takes
    from invariantdp.sensitivity import MAX_HULL_DIM, facets_within_limits

    for r in range(2, 18):
        for c in range(r, 18):
            s = (r - 1) * (c - 1)
            if s <= 16:
                S = contingency_sensitivity_space(r, c)
                assert facets_within_limits(S) == (s <= MAX_HULL_DIM), (r, c)

"""Sensitivity spaces (Prop. 32), sensitivities, spans and the hull norm (Lemma 29)."""

import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.spatial import ConvexHull

from invariantdp import InvariantDPError
from invariantdp import sensitivity as sens
from invariantdp.invariants import one_way_margins
from invariantdp.sensitivity import (
    HullNorm,
    contingency_sensitivity_space,
    hull_norm,
    project_onto_span,
    sensitivity,
    span_basis,
    span_projector,
)

SIZES = [(2, 2), (2, 3), (3, 2), (3, 3), (2, 5), (4, 3), (5, 5), (7, 6)]


@pytest.mark.parametrize("r,c", SIZES)
def test_sensitivities_are_4_2_1(r, c):
    S = contingency_sensitivity_space(r, c)
    assert sensitivity(S, 1) == 4.0
    assert sensitivity(S, 2) == 2.0
    assert sensitivity(S, np.inf) == sensitivity(S, "inf") == 1.0


@pytest.mark.parametrize("r,c", SIZES)
def test_space_preserves_margins_and_spans_interactions(r, c):
    S = contingency_sensitivity_space(r, c)
    assert S.shape == (r * (r - 1) * c * (c - 1) // 2, r * c)
    T = S.reshape(-1, r, c)
    np.testing.assert_array_equal(T.sum(axis=1), 0)
    np.testing.assert_array_equal(T.sum(axis=2), 0)
    assert span_basis(S).shape[1] == (r - 1) * (c - 1)
    # the span of S_Semi is the null space of the one-way margins
    np.testing.assert_allclose(span_projector(S), one_way_margins((r, c)).projector(), atol=1e-12)


def test_example_7_and_8():
    S = contingency_sensitivity_space(2, 2, include_zero=True)
    assert {tuple(v) for v in S} == {(1, -1, -1, 1), (-1, 1, 1, -1), (0, 0, 0, 0)}
    expected = np.array([[1, -1, -1, 1], [-1, 1, 1, -1], [-1, 1, 1, -1], [1, -1, -1, 1]]) / 4
    np.testing.assert_allclose(span_projector(S), expected, atol=1e-15)
    np.testing.assert_allclose(project_onto_span([1.0, 0, 0, 0], S), expected[0], atol=1e-15)


@pytest.mark.parametrize("r,c", [(2, 2), (2, 3), (3, 3), (3, 4)])
def test_hull_norm_is_a_norm_with_unit_sensitivity(r, c, rng):
    S = contingency_sensitivity_space(r, c)
    K = HullNorm.from_space(S)
    # Prop. 30: every element of S has K-norm exactly 1
    np.testing.assert_allclose(K(S), 1.0, atol=1e-9)
    B = span_basis(S)
    u, v = rng.normal(size=(2, 50, B.shape[1])) @ B.T
    nu, nv, nuv = K(u), K(v), K(u + v)
    assert np.all(nuv <= nu + nv + 1e-9)
    np.testing.assert_allclose(K(-2.5 * u), 2.5 * nu, rtol=1e-9)
    np.testing.assert_allclose(K(u), K(-u), rtol=1e-9)
    # off the span the gauge is infinite
    assert np.isinf(K(np.ones(r * c)))


def test_lp_and_facet_norms_agree(rng):
    S = contingency_sensitivity_space(3, 3)
    v = rng.normal(size=(6, 9)) @ span_projector(S)
    np.testing.assert_allclose(hull_norm(v, S, method="lp"), hull_norm(v, S), rtol=1e-7)


def test_hull_norm_of_any_symmetric_set():
    # the hull of +-e1, +-e2 is the l1 ball; of the square's corners the linf ball
    diamond = np.array([[1.0, 0.0], [0.0, 1.0]])
    square = np.array([[1.0, 1.0], [1.0, -1.0]])
    v = np.array([[0.3, -0.5], [2.0, 1.0]])
    np.testing.assert_allclose(hull_norm(v, diamond), np.abs(v).sum(1))
    np.testing.assert_allclose(hull_norm(v, square), np.abs(v).max(1))
    assert HullNorm(square).volume == pytest.approx(4.0)


@pytest.mark.parametrize("r,c", [(2, 2), (3, 3), (2, 4)])
def test_uniform_sampling_in_K(r, c):
    K = HullNorm.from_space(contingency_sensitivity_space(r, c))
    s, m = K.dim, 40_000
    y = K.sample_uniform(m, rng=1)
    norms = K.norm_of_coordinates(y)
    assert norms.max() <= 1.0 + 1e-12
    # ||U||_K has cdf t^s: mean s/(s+1), variance s/((s+2)(s+1)^2)
    se = np.sqrt(s / ((s + 2) * (s + 1) ** 2) / m)
    assert abs(norms.mean() - s / (s + 1)) < 4 * se
    # the paper's cube rejection sampler (Algorithm 3) draws the same law
    z = K.sample_uniform(m, rng=2, method="rejection")
    m2 = (y**2).mean(0) - (z**2).mean(0)
    se2 = np.sqrt(((y**2).var(0) + (z**2).var(0)) / m)
    assert np.all(np.abs(m2) < 4.5 * se2)


def test_bad_arguments():
    with pytest.raises(InvariantDPError, match="`r` \\(1\\) must be >= 2"):
        contingency_sensitivity_space(1, 3)
    with pytest.raises(InvariantDPError, match="`p` \\(0.5\\) must be >= 1"):
        sensitivity([[1.0, -1.0]], 0.5)
    with pytest.raises(InvariantDPError, match="`space`"):
        sensitivity([1.0, -1.0], 2)
    with pytest.raises(InvariantDPError, match="finite"):
        sensitivity([[np.nan, 1.0]], 2)
    with pytest.raises(InvariantDPError, match="`method`"):
        hull_norm([1.0, -1.0], [[1.0, -1.0]], method="mcmc")


# --- size limits: no call may hang or ask for terabytes (issue 10, item 4) ---------


def _no_basis(*args, **kwargs):
    raise AssertionError("the span basis was computed")


@pytest.mark.parametrize("r,c", [(3, 6), (6, 3), (2, 11), (4, 5), (5, 5), (10, 10)])
def test_hull_beyond_dimension_9_is_refused_at_once(r, c, work, monkeypatch):
    # 3 x 6 and 4 x 5 ran for more than 150 s (uninterruptible) before the guard; now
    # refused before Qhull and before the basis (a random projection bounds the dimension)
    monkeypatch.setattr(sens, "span_basis", _no_basis)
    S = contingency_sensitivity_space(r, c)
    for call in (
        lambda g: HullNorm(S),
        lambda g: HullNorm.from_space(S),
        lambda g: hull_norm(S[0], S, method="facets"),
    ):
        work.refused_at_once(call, r"dimension at least 10.*up to dimension 9.*method='lp'")


def test_hull_norm_auto_falls_back_to_the_lp_beyond_the_limits(monkeypatch, work):
    S = contingency_sensitivity_space(2, 11)  # dimension 10: the facets are refused
    monkeypatch.setattr(sens, "ConvexHull", work.no_qhull)  # never tried
    got = hull_norm(np.vstack([2.5 * S[0], -0.5 * S[7]]), S)
    np.testing.assert_allclose(got, [2.5, 0.5], rtol=1e-9)


@given(
    dim=st.integers(4, 9),
    extra=st.integers(0, 5),
    seed=st.integers(0, 2**32 - 1),
)
def test_hull_with_too_many_vertices_is_refused_at_once(dim, extra, seed, work):
    # points on the sphere are the costliest hulls measured: 102 of them in 9-d take 9 s,
    # 2 million in 2-d 19 s; past MAX_HULL_POINTS the hull is refused before Qhull runs
    # and before the basis (the rank decides)
    g = np.random.default_rng(seed)
    pairs = sens.MAX_HULL_POINTS[dim] // 2 + 1
    Y = g.standard_normal((pairs, dim))
    Y /= np.linalg.norm(Y, axis=1, keepdims=True)
    Q = np.linalg.qr(g.standard_normal((dim + extra, dim)))[0]  # embed in d >= s coordinates
    S = Y @ Q.T
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(sens, "span_basis", _no_basis)
        work.refused_at_once(
            lambda g: HullNorm(S),
            rf"{2 * pairs} vertices in dimension {dim}.*at most",
            max_bytes=8 * S.nbytes + 2**20,  # the symmetrized points, their SVD
        )


def test_hull_within_the_limits_is_built():
    g = np.random.default_rng(3)
    Y = g.standard_normal((20, 9))
    Y /= np.linalg.norm(Y, axis=1, keepdims=True)  # on the sphere: every point is a vertex
    K = HullNorm(Y)
    assert K.dim == 9 and len(K.points) == 40
    np.testing.assert_allclose(K(Y), 1.0, atol=1e-9)  # every vertex lies on the boundary


@given(r=st.integers(2, 10**6), c=st.integers(2, 10**6))
def test_contingency_space_refuses_more_than_the_memory_limit(r, c, work):
    m = r * (r - 1) * c * (c - 1)
    need = 24.0 * m * r * c
    if need <= sens.MAX_BYTES:
        assert r * c <= 24 * 24  # the limit is a table of about 20 x 20
        return
    # 1000 x 1000 used to ask for 7 TiB: refused before any allocation
    work.refused_at_once(
        lambda g: contingency_sensitivity_space(r, c),
        rf"{r} x {c} table.*GiB.*2 GiB limit",
        max_bytes=2**20,
    )


def test_contingency_space_1000_by_1000_is_refused(work):
    work.refused_at_once(
        lambda g: contingency_sensitivity_space(1000, 1000), "GiB", max_bytes=2**20
    )


def test_projector_refuses_more_than_the_memory_limit(work):
    S = np.zeros((1, 20_000))  # a 20000 x 20000 projector is 3.2 GB
    S[0, :2] = [1.0, -1.0]
    work.refused_at_once(
        lambda g: span_projector(S), "20000 x 20000 projector.*GiB", max_bytes=4 * S.nbytes
    )
    np.testing.assert_allclose(project_onto_span(S[0], S), S[0])  # the way around it


def test_uniform_sampling_refuses_huge_sizes_and_hopeless_rejection(work):
    S = contingency_sensitivity_space(3, 4)
    K = HullNorm.from_space(S)
    work.refused_at_once(lambda g: K.sample_uniform(10**10, rng=g), r"`size`.*GiB")
    # the acceptance rate of the cube sampler, vol(K) / prod(2 c_i) in the coordinates of
    # span_basis, from Qhull's own volume of the hull (not the sampler's triangulation)
    Y = S @ span_basis(S)
    hull = ConvexHull(Y)
    cube = np.abs(Y).max(axis=0)
    rate = hull.volume / np.prod(2 * cube)
    # and by Monte Carlo: the fraction of uniform points of the cube inside the hull
    n = 200_000
    u = np.random.default_rng(5).uniform(-1.0, 1.0, (n, K.dim)) * cube
    eq = np.unique(hull.equations.round(12), axis=0)  # one row per facet, not per simplex
    assert len(eq) == 114
    inside = np.all(u @ eq[:, :-1].T + eq[:, -1] <= 1e-12, axis=1)
    assert abs(inside.mean() - rate) < 4 * np.sqrt(rate * (1 - rate) / n)
    # dimension 6, 114 facets: a million draws is hopeless by rejection; refused at once
    msg = work.refused_at_once(
        lambda g: K.sample_uniform(10**6, rng=g, method="rejection"),
        r"accepts a fraction .*method='triangulation'",
    )
    printed = float(re.search(r"accepts a fraction ([0-9.e+-]+) ", msg).group(1))
    assert printed == pytest.approx(rate, rel=5e-3)  # three significant digits
    assert "114 facets" in msg
    with pytest.raises(InvariantDPError, match="`size` \\(-1\\) must be >= 0"):
        K.sample_uniform(-1, rng=0)


def test_blockwise_evaluation_gives_the_same_numbers(monkeypatch):
    # the norm and the sampler work in blocks of rows to bound memory; the block size
    # must not change a single bit of the result
    K = HullNorm(contingency_sensitivity_space(3, 3))
    y = np.random.default_rng(0).normal(size=(257, K.dim))
    a, b = K.equations[:, :-1], K.equations[:, -1]
    direct = np.maximum(np.max((y @ a.T) / (-b), axis=-1), 0.0)
    draws = K.sample_uniform(257, rng=5)
    monkeypatch.setattr(sens, "_BLOCK_ELEMENTS", 7 * len(b))
    np.testing.assert_array_equal(K.norm_of_coordinates(y), direct)
    assert K.norm_of_coordinates(y[0]).shape == ()
    np.testing.assert_array_equal(K.sample_uniform(257, rng=5), draws)
    monkeypatch.setattr(sens, "_BLOCK_ELEMENTS", 1)
    np.testing.assert_array_equal(K.sample_uniform(257, rng=5), draws)

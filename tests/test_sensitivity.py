"""Sensitivity spaces (Prop. 32), sensitivities, spans and the hull norm (Lemma 29)."""

import numpy as np
import pytest

from invariantdp import InvariantDPError
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

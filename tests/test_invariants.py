"""Invariants: structured O(n) projections against dense linear algebra."""

import json
import time

import numpy as np
import pytest
from scipy import sparse

from invariantdp import InvariantDPError
from invariantdp.invariants import (
    Invariants,
    nested_totals,
    null_space_projector,
    one_way_margins,
    totals,
)


def _dense(inv):
    C = inv.matrix.toarray() if sparse.issparse(inv.matrix) else inv.matrix
    return C


def _reference_projector(C):
    return np.eye(C.shape[1]) - np.linalg.pinv(C) @ C


CASES = {
    "margins-2x2": one_way_margins((2, 2)),
    "margins-3x5": one_way_margins((3, 5)),
    "margins-2x3x4": one_way_margins((2, 3, 4)),
    "totals": totals([3, 3, 1, 1, 1, 7, 3]),
    "totals-2d": totals(np.array([[0, 0, 1], [1, 2, 2]])),
    "nested": nested_totals([[0, 0, 0, 0, 1, 1, 1], [0, 0, 1, 1, 0, 0, 5]]),
    "nested-3": nested_totals([[0] * 6 + [1] * 6, [0, 0, 0, 1, 1, 1] * 2, [0, 1, 1, 0, 0, 1] * 2]),
    "general": Invariants(np.array([[1.0, 2.0, 0.0, -1.0, 0.0], [0.0, 1.0, 1.0, 1.0, 3.0]])),
    "general-rank-deficient": Invariants(np.array([[1.0, 1.0, 0.0, 0.0], [2.0, 2.0, 0.0, 0.0]])),
}


@pytest.mark.parametrize("name", CASES)
def test_projection_matches_dense_pseudoinverse(name):
    inv = CASES[name]
    C = _dense(inv)
    P = inv.projector()
    np.testing.assert_allclose(P, _reference_projector(C), atol=1e-12)
    assert inv.rank == np.linalg.matrix_rank(C)
    np.testing.assert_allclose(C @ P, 0.0, atol=1e-12)


@pytest.mark.parametrize("name", CASES)
def test_null_space_basis_is_orthonormal_and_consistent(name, rng):
    inv = CASES[name]
    Q = inv.null_space_basis()
    s = inv.n_cells - inv.rank
    assert Q.shape == (inv.n_cells, s)
    np.testing.assert_allclose(Q.T @ Q, np.eye(s), atol=1e-12)
    np.testing.assert_allclose(Q @ Q.T, inv.projector(), atol=1e-12)
    V = rng.normal(size=(4, inv.n_cells))
    np.testing.assert_allclose(inv.null_space_coordinates(V), V @ Q, atol=1e-12)
    W = rng.normal(size=(4, s))
    np.testing.assert_allclose(inv.null_space_apply(W), W @ Q.T, atol=1e-12)


def test_example_8_projector():
    P = one_way_margins((2, 2)).projector()
    expected = np.array([[1, -1, -1, 1], [-1, 1, 1, -1], [-1, 1, 1, -1], [1, -1, -1, 1]]) / 4
    np.testing.assert_allclose(P, expected, atol=1e-15)


def test_one_way_margins_row_order_kept():
    inv = one_way_margins((2, 3))
    np.testing.assert_array_equal(inv.apply(np.arange(6).reshape(2, 3)), [3, 12, 3, 5, 7])


def test_nested_totals_apply_and_paths():
    state = np.array([0, 0, 0, 1, 1, 1])
    county = np.array([1, 1, 2, 1, 1, 1])  # county 1 of state 0 and of state 1 differ
    inv = nested_totals([state, county])
    x = np.arange(1.0, 7.0)
    np.testing.assert_array_equal(inv.apply(x), _dense(inv) @ x)
    np.testing.assert_array_equal(inv.apply(x), [6, 15, 3, 3, 15])
    assert inv.rank == 3
    assert inv.names[2:] == ("level[1][0/1]", "level[1][0/2]", "level[1][1/1]")


@pytest.mark.parametrize("name", CASES)
def test_round_trip_through_json(name, rng):
    inv = CASES[name].of(rng.integers(0, 50, size=CASES[name].shape))
    back = Invariants.from_dict(json.loads(json.dumps(inv.to_dict())))
    assert back == inv
    assert back.kind == inv.kind
    v = rng.normal(size=inv.n_cells)
    np.testing.assert_allclose(back.project(v), inv.project(v), atol=1e-12)


def test_structured_projection_is_linear_time():
    n = 1_000_000
    state = np.repeat(np.arange(50), n // 50)
    county = np.tile(np.repeat(np.arange(40), n // 50 // 40), 50)
    inv = nested_totals([state, county])
    v = np.random.default_rng(0).normal(size=n)
    t0 = time.perf_counter()
    out = inv.project(v)
    assert time.perf_counter() - t0 < 2.0
    np.testing.assert_allclose(inv.apply(out), 0.0, atol=1e-8)
    with pytest.raises(InvariantDPError, match="n x n"):
        inv.projector()


def test_double_centring_for_large_two_way_table(rng):
    inv = one_way_margins((300, 400))
    v = rng.normal(size=(300, 400))
    out = inv.project(v)
    expected = v - v.mean(1, keepdims=True) - v.mean(0, keepdims=True) + v.mean()
    np.testing.assert_allclose(out, expected, atol=1e-12)


def test_null_space_projector_operator(rng):
    inv = totals([0, 0, 1, 1, 1])
    P = null_space_projector(inv)
    v = rng.normal(size=5)
    np.testing.assert_allclose(P @ v, inv.project(v))
    np.testing.assert_allclose(P.matmat(np.eye(5)), inv.projector())
    with pytest.raises(TypeError, match="invariants"):
        null_space_projector(np.eye(3))


def test_check_names_the_argument():
    inv = totals([0, 0, 1]).of([1, 2, 3])
    inv.check([2, 1, 3])
    with pytest.raises(InvariantDPError, match=r"`y` does not satisfy the invariants"):
        inv.check([2, 2, 3], name="y")


def test_bad_inputs():
    with pytest.raises(InvariantDPError, match="levels\\[1\\]"):
        nested_totals([[0, 0, 1], [0, 1]])
    with pytest.raises(InvariantDPError, match="labels"):
        totals([0.5, 1.0])
    with pytest.raises(InvariantDPError, match="`x` must have shape"):
        totals([0, 0, 1]).apply([1, 2])
    with pytest.raises(InvariantDPError, match="finite"):
        totals([0, 0, 1]).apply([1, np.nan, 2])

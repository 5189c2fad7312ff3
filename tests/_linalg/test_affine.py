"""The projection onto {x : A x = a} and the least-norm solution, against their definitions."""

import numpy as np
import pytest

from invariantdp._linalg import AffineSubspace


@pytest.mark.parametrize("k, n, rank", [(1, 4, 1), (3, 7, 3), (5, 6, 2), (4, 4, 4)])
def test_projection_is_the_nearest_point_of_the_subspace(k, n, rank):
    rng = np.random.default_rng(k * 10 + n)
    A = rng.normal(size=(k, rank)) @ rng.normal(size=(rank, n))  # rank-deficient when rank < k
    a = A @ rng.normal(size=n)  # consistent values
    s = AffineSubspace(A, a)
    assert s.rank == rank
    V = rng.normal(size=(9, n)) * 5.0
    P = s.project(V)
    assert P @ A.T == pytest.approx(np.tile(a, (9, 1)), abs=1e-10)  # on the subspace
    # v - P(v) is orthogonal to the subspace's directions, the null space of A
    null = np.linalg.svd(A)[2][rank:]
    assert (V - P) @ null.T == pytest.approx(0.0, abs=1e-10)
    # the least-norm point: in the row space of A, and numpy's least squares solution
    assert s.point == pytest.approx(np.linalg.lstsq(A, a, rcond=None)[0], abs=1e-10)
    assert s.project(s.point) == pytest.approx(s.point, abs=1e-12)
    assert s.project(V[0]) == pytest.approx(P[0], abs=1e-12)  # one vector as rows


def test_no_constraint_leaves_every_point_in_place():
    s = AffineSubspace(np.zeros((2, 3)), [0.0, 0.0])
    v = np.array([1.0, -2.0, 3.0])
    assert s.rank == 0 and np.array_equal(s.project(v), v)


def test_values_must_match_the_rows():
    with pytest.raises(ValueError, match="`values` has 1 entries; the matrix has 2 rows"):
        AffineSubspace(np.eye(2), [1.0])

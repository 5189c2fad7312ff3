"""The dense-factor algebra (_gls/_dense_factors.py): block operators equal their dense matrices."""

import numpy as np
import pytest

from invariantdp._gls import FactorAlgebra

from .kkt import query_matrix

SHAPE = (4, 2, 3, 2)
GROUPS = {0: np.array([[1, 0, 0, 0], [0, 1, 1, 0]])}  # level 3 in no group


def projector(fa, t):
    """The dense matrix of ``P_T`` on the scalar attributes times the identity on the dense ones."""
    basis = fa.eig.basis(t)
    p = np.kron(basis @ basis.T, np.eye(fa.m))  # block layout: scalar cells x dense cells
    perm = np.arange(fa.k).reshape(fa.shape).transpose(*fa._perm).reshape(-1)
    out = np.empty_like(p)
    out[np.ix_(perm, perm)] = p
    return out


@pytest.mark.parametrize("dense", [(0,), (0, 3), (0, 1, 2, 3)])
def test_block_operators_equal_their_dense_matrices(rng, dense):
    fa = FactorAlgebra(SHAPE, dense)
    mats = rng.normal(size=(fa.n_spaces, fa.m, fa.m))
    dense_op = sum(projector(fa, t) @ block(fa, mats[t]) for t in range(fa.n_spaces))
    x = rng.normal(size=(3, fa.k))
    got = fa.from_block(fa.apply(fa.to_block(x), mats)).reshape(3, -1)
    assert np.allclose(got, x @ dense_op.T, atol=1e-12)
    per_unit = rng.normal(size=(3, fa.n_spaces, fa.m, fa.m))
    got = fa.from_block(fa.apply(fa.to_block(x), per_unit)).reshape(3, -1)
    for i in range(3):
        op = sum(projector(fa, t) @ block(fa, per_unit[i, t]) for t in range(fa.n_spaces))
        assert np.allclose(got[i], op @ x[i], atol=1e-12)


def block(fa, mat):
    """``I kron mat`` in the detailed C order."""
    b = np.kron(np.eye(int(np.prod(fa.sshape))), mat)
    perm = np.arange(fa.k).reshape(fa.shape).transpose(*fa._perm).reshape(-1)
    out = np.empty_like(b)
    out[np.ix_(perm, perm)] = b
    return out


@pytest.mark.parametrize(
    "attrs, recodes",
    [((), {}), ((0,), GROUPS), ((0, 2), GROUPS), ((0, 1, 2, 3), GROUPS), ((1, 3), {}), ((3,), {})],
)
def test_query_information_and_projection_in_blocks(rng, attrs, recodes):
    fa = FactorAlgebra(SHAPE, (0, 3))
    q = query_matrix(SHAPE, attrs, recodes)
    c, a = fa.query_info(attrs, recodes)
    info = sum(c[t] * projector(fa, t) @ block(fa, a) for t in range(fa.n_spaces))
    assert np.allclose(info, q.T @ q, atol=1e-12)
    pis = fa.query_projection(attrs, recodes)
    proj = sum(projector(fa, t) @ block(fa, pis[t]) for t in range(fa.n_spaces))
    assert np.allclose(proj, np.linalg.pinv(q) @ q, atol=1e-12)
    x, y = rng.normal(size=(2, fa.k)), rng.normal(size=(2, q.shape[0]))
    assert np.allclose(fa.marginal(x, attrs, recodes), x @ q.T)
    assert np.allclose(fa.spread(y, attrs, recodes).reshape(2, -1), y @ q)
    assert np.allclose(fa.cell_sizes(attrs, recodes), q.sum(axis=1))


def test_block_layout_round_trip_and_zero_coordinates(rng):
    fa = FactorAlgebra(SHAPE, (0, 1))
    x = rng.normal(size=(2, *SHAPE))
    assert np.array_equal(fa.from_block(fa.to_block(x)), x)
    mask = np.array([[True, False], [False, True]])  # group 0, group 1 of attribute 0
    z = fa.zero_coords((0,), GROUPS, mask)
    assert z.shape == (2, 8)
    assert z[0].reshape(4, 2)[:, 0].tolist() == [True, False, False, False]
    assert z[1].reshape(4, 2).all(axis=1).tolist() == [False, True, True, False]


def test_apply_in_place_is_refused_with_rows_and_into_a_strided_out():
    fa = FactorAlgebra((3, 2, 4), dense=(0,))
    x = fa.to_block(np.random.default_rng(1).normal(size=(5, 24)))
    mats = np.broadcast_to(np.eye(3), (5, fa.n_spaces, 3, 3))
    want = fa.apply(x, mats)
    same = x.copy()
    assert np.allclose(fa.apply(same, mats, out=same), want)  # in place, without rows
    with pytest.raises(ValueError, match="without `rows`"):
        fa.apply(same, mats, rows=np.arange(5)[::-1], out=same)
    strided = np.zeros((5, 3, 2, 4)).transpose(0, 2, 3, 1)  # x's shape, not C-contiguous
    assert strided.shape == x.shape
    with pytest.raises(ValueError, match="C-contiguous"):
        fa.apply(x, mats, out=strided)

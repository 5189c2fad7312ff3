"""Issue 13: grouped invariants build their matrix ``C`` only when ``matrix`` is read.

A release, ``apply``, ``project``, ``rank``, equality and pickling work from
the group codes; ``inv.matrix`` is still the canonical read-only CSR matrix
(the one :func:`group_matrix` builds from the same codes) whenever asked for.
"""

import copy
import pickle

import numpy as np
import pytest
from scipy import sparse

from invariantdp import InvariantDPError
from invariantdp.invariants import Invariants, nested_totals, one_way_margins, totals
from invariantdp.invariants._structure import group_matrix
from invariantdp.mechanisms import projected_gaussian

STATE = np.array([0, 0, 0, 0, 1, 1, 1, 1, 1])
COUNTY = np.array([4, 4, 5, 5, 4, 4, 4, 6, 6])
TRACT = np.array([1, 2, 1, 1, 1, 1, 3, 1, 2])


def _make(kind):
    if kind == "totals":
        return totals(COUNTY.reshape(3, 3))
    return nested_totals([STATE, COUNTY, TRACT])


def _eager(inv):
    """The matrix built eagerly from the same codes, as before issue 13."""
    codes = inv.structure["codes"]
    if inv.kind == "totals":
        return group_matrix(np.asarray(codes).reshape(-1), inv.rank)
    codes = [np.asarray(c).reshape(-1) for c in codes]
    return group_matrix(codes, [int(c.max()) + 1 for c in codes])


def _assert_lazy(*invs):
    for inv in invs:
        assert inv._matrix is None  # not built


def _assert_canonical(inv):
    C = inv.matrix
    assert sparse.issparse(C) and C.format == "csr" and C.has_canonical_format
    assert not C.data.flags.writeable and not C.indices.flags.writeable
    assert C.shape == (inv.n_invariants, inv.n_cells)
    assert (C != _eager(inv)).nnz == 0


@pytest.mark.parametrize("kind", ["totals", "nested_totals"])
def test_release_and_o_n_paths_never_build_the_matrix(kind, rng):
    inv = _make(kind)
    x = rng.integers(0, 50, size=inv.shape).astype(float)
    assert inv.n_invariants == _eager(inv).shape[0] and inv.n_cells == x.size
    r = projected_gaussian(x, inv, mu=1.0, rng=1)
    fixed = r.invariants
    fixed.check(r.value)
    np.testing.assert_allclose(inv.apply(r.value), inv.apply(x))
    v = rng.normal(size=inv.n_cells)
    inv.project(v), inv.projector_diagonal(), inv.null_space_apply(np.ones(inv.n_cells - inv.rank))
    inv.null_space_coordinates(v), inv.structure_dict(), repr(inv)
    other = _make(kind)
    assert inv == other and inv.same_map(fixed) and fixed == pickle.loads(pickle.dumps(fixed))
    assert not inv.same_map(totals(np.arange(inv.n_cells).reshape(inv.shape) % 2))
    back = Invariants.from_dict(fixed.to_dict())
    assert back == fixed
    _assert_lazy(inv, other, fixed, back, copy.deepcopy(fixed), fixed.without_values())
    # asked for, the matrix is the one built eagerly, and shared by the copies made before
    _assert_canonical(fixed)
    assert fixed.matrix is inv.matrix is fixed.without_values().matrix
    assert fixed.matrix is fixed.matrix


@pytest.mark.parametrize("kind", ["totals", "nested_totals"])
def test_pickle_and_deepcopy_before_and_after_building(kind, rng):
    inv = _make(kind).of(rng.integers(0, 9, size=_make(kind).shape))
    for other in (pickle.loads(pickle.dumps(inv)), copy.deepcopy(inv)):
        _assert_lazy(other)
        assert other == inv
        _assert_canonical(other)
    _assert_lazy(inv)
    C = inv.matrix
    for other in (pickle.loads(pickle.dumps(inv)), copy.deepcopy(inv)):
        assert other._matrix is not None and other == inv
        _assert_canonical(other)
        # the unpickled matrix is still the structure's own: accepted without re-verification
        again = Invariants(other.matrix, other.values, other.shape, other.names, other.structure)
        assert again.matrix is other.matrix and again.structure is other.structure
    assert inv.matrix is C


@pytest.mark.parametrize("kind", ["totals", "nested_totals"])
def test_explicit_matrices_with_a_lazy_structure(kind):
    inv = _make(kind)
    # a copy of the right matrix is verified and then shares the structure's matrix
    same = Invariants(_eager(inv), None, inv.shape, inv.names, inv.structure)
    assert same == inv and same.matrix is same.structure.matrix_ref.matrix
    _assert_canonical(same)
    wrong = _eager(inv).tolil()
    wrong[0, 0] = 0.0 if wrong[0, 0] else 1.0
    with pytest.raises(InvariantDPError, match="not the matrix"):
        Invariants(wrong.tocsr(), None, inv.shape, None, inv.structure)
    with pytest.raises(TypeError, match="`matrix` must be array-like"):  # not trusted
        Invariants(None, None, inv.shape, None, _make(kind).structure)
    # the structure's own matrix, once built, is trusted as before
    fresh = _make(kind)
    again = Invariants(fresh.matrix, None, fresh.shape, fresh.names, fresh.structure)
    assert again.matrix is fresh.matrix and again.structure is fresh.structure


def test_equality_across_kinds_and_with_general_matrices():
    tot = totals(COUNTY)
    one_level = nested_totals([COUNTY])
    assert tot.same_map(one_level) and tot != one_level  # same C, different kinds
    general = Invariants(_eager(tot), None, tot.shape)
    assert tot.same_map(general) and general.same_map(tot)
    assert not tot.same_map(totals(STATE)) and not tot.same_map(one_way_margins((3, 3)))
    assert nested_totals([STATE, COUNTY]) != nested_totals([STATE, TRACT])

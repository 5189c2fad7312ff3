"""The shared fibre / lattice algebra (_linalg._fibres, _kernel_lattice): exact kernels."""

import itertools
from math import gcd

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from invariantdp import InvariantDPError
from invariantdp._linalg._fibres import cell_classes, enumerate_fibre, kernel_moves
from invariantdp._linalg._kernel_lattice import (
    MAX_DENOMINATOR,
    all_circuits,
    fundamental_circuits,
    int_kernel_basis,
    kernel_circuit,
    primitive_integer,
)
from invariantdp.invariants import one_way_margins


def _exact_product(M, v):
    """``M @ v`` in Python integers (no rounding, no overflow)."""
    return np.asarray(M, dtype=np.int64).astype(object) @ np.asarray(v).astype(np.int64).astype(
        object
    )


def _primitive(v) -> bool:
    g = 0
    for x in np.asarray(v, dtype=np.int64).tolist():
        g = gcd(g, abs(x))
    return g == 1


def _nullity(M) -> int:
    return M.shape[1] - (np.linalg.matrix_rank(M) if M.shape[0] else 0)


# small integer entries, sometimes a large one: subdeterminants above 10**6 are then common
_entry = st.one_of(st.integers(-3, 3), st.integers(-3, 3), st.integers(10**6, 10**7))


@st.composite
def integer_matrices(draw, max_rows=3, max_cols=6, entries=_entry):
    k = draw(st.integers(1, max_rows))
    m = draw(st.integers(2, max_cols))
    rows = draw(st.lists(st.lists(entries, min_size=m, max_size=m), min_size=k, max_size=k))
    return np.array(rows, dtype=float)


@given(M=integer_matrices())
def test_fundamental_circuits_are_exact_primitive_kernel_vectors(M):
    try:
        circuits = fundamental_circuits(M, integer=True)
    except InvariantDPError as exc:  # exact or refused, never rounded
        assert "beyond 2**53" in str(exc)
        assert _huge_circuit(M)
        return
    assert len(circuits) == _nullity(M)
    for v in circuits:
        assert np.all(v == np.round(v)) and np.any(v)
        assert not np.any(_exact_product(M, v))  # exactly in the kernel
        assert _primitive(v)
        assert _nullity(M[:, np.flatnonzero(v)]) == 1  # minimal support: a circuit


def _huge_circuit(M) -> bool:
    """Some circuit of ``M`` has an entry beyond 2**53 (cofactors in exact integers)."""
    k, m = M.shape
    ints = np.asarray(M, dtype=np.int64).astype(object)
    for size in range(1, min(k, m) + 1):
        for rows in itertools.combinations(range(k), size):
            for cols in itertools.combinations(range(m), size):
                sub = ints[np.ix_(rows, cols)]
                if abs(_det(sub.tolist())) > 2**53:
                    return True
    return False


def _det(rows) -> int:
    """Determinant of a small integer matrix by cofactor expansion (exact)."""
    if len(rows) == 1:
        return rows[0][0]
    return sum(
        (-1) ** j * rows[0][j] * _det([r[:j] + r[j + 1 :] for r in rows[1:]])
        for j in range(len(rows))
    )


def test_circuits_too_large_for_float64_are_refused():
    M = np.array(
        [
            [0.0, 0, 1_000_000, 1],
            [0, 1, 1_000_084, 6_347_533],
            [1_002_274, 1_000_000, 1_764_453, 1_000_001],
        ]
    )
    with pytest.raises(InvariantDPError, match=r"beyond 2\*\*53"):
        fundamental_circuits(M, integer=True)


def test_fundamental_circuits_with_large_subdeterminants():
    # 1000003 / 1 has no fraction with denominator <= 10**6 within float precision: the old
    # limit_denominator(10**6) snap returned (1000000, -1), which is not in the kernel
    M = np.array([[1.0, 1_000_003.0]])
    (v,) = fundamental_circuits(M, integer=True)
    assert v.tolist() == [1_000_003.0, -1.0]


@given(M=integer_matrices(entries=st.integers(-2, 2)))
def test_int_kernel_basis_spans_the_integer_kernel(M):
    basis = int_kernel_basis(M)
    assert len(basis) == _nullity(M)
    for v in basis:
        assert np.all(v == np.round(v)) and not np.any(_exact_product(M, v))
    if basis:
        B = np.stack(basis, axis=1)
        # every integer kernel vector (here: the circuits) is an integer combination
        for v in fundamental_circuits(M, integer=True):
            c, *_ = np.linalg.lstsq(B, v, rcond=None)
            np.testing.assert_allclose(B @ c, v, atol=1e-9)
            np.testing.assert_allclose(c, np.round(c), atol=1e-9)


def test_all_circuits_of_two_way_margins_are_the_cycles_of_k33():
    # one-way margins of a 3 x 3 table: the incidence matrix of K_{3,3}, whose circuits are
    # its 9 four-cycles and 6 six-cycles, with entries +-1 (Diaconis & Sturmfels 1998)
    A = one_way_margins((3, 3)).matrix
    A = A.toarray() if hasattr(A, "toarray") else np.asarray(A)
    C = all_circuits(A)
    sizes = sorted(np.count_nonzero(C, axis=1).tolist())
    assert sizes == [4] * 9 + [6] * 6
    assert set(np.unique(C).tolist()) == {-1, 0, 1}
    assert not np.any(_exact_product(A, C.T))
    supports = {tuple(np.flatnonzero(c)) for c in C}
    assert len(supports) == len(C)  # one per +- pair


@given(M=integer_matrices(max_cols=5))
def test_all_circuits_are_exact_minimal_and_distinct(M):
    try:
        C = all_circuits(M)
    except InvariantDPError as exc:  # exact or refused, never rounded
        assert "beyond 2**53" in str(exc) and _huge_circuit(M)
        return
    for v in C:
        assert not np.any(_exact_product(M, v)) and _primitive(v)
        assert _nullity(M[:, np.flatnonzero(v)]) == 1
    assert len({tuple(np.flatnonzero(v)) for v in C}) == len(C)
    assert (len(C) > 0) == (_nullity(M) > 0)


def test_all_circuits_refuses_too_many_classes():
    with pytest.raises(InvariantDPError, match="at most 3"):
        all_circuits(np.ones((1, 5)), max_columns=3)


@given(
    w=st.lists(st.integers(-40, 40), min_size=1, max_size=6).filter(any),
    scale=st.floats(1e-3, 1e3),
    sign=st.sampled_from([1.0, -1.0]),
)
def test_primitive_integer_recovers_the_integer_ray(w, scale, sign):
    w = np.array(w)
    g = 0
    for x in w.tolist():
        g = gcd(g, abs(x))
    w = w // g
    assume(np.abs(w[w != 0]).min() <= MAX_DENOMINATOR)
    out = primitive_integer(sign * scale * w.astype(float))
    assert out is not None and out.tolist() == (int(sign) * w).tolist()


@pytest.mark.parametrize("x", [np.sqrt(2.0), np.pi, np.e, 1 / np.sqrt(3.0)])
def test_primitive_integer_refuses_irrational_ratios(x):
    # limit_denominator(10**6) (the old congenial tolerance) reads every float as a fraction
    assert primitive_integer(np.array([1.0, x])) is None


def test_kernel_circuit_of_a_non_integer_matrix():
    # a rational non-integer matrix: the float path with the one tolerance
    M = np.array([[0.5, 0.25, 0.0]])
    assert kernel_circuit(M, [0, 1], orient=[-1.0, 2.0]).tolist() == [-1, 2, 0]
    assert kernel_circuit(np.array([[1.0, np.sqrt(2.0)]]), [0, 1], orient=[1.0, 1.0]) is None
    with pytest.raises(InvariantDPError, match="non-rational"):
        fundamental_circuits(np.array([[1.0, np.sqrt(2.0)]]), integer=True)


@given(M=integer_matrices(max_rows=3, max_cols=8, entries=st.integers(0, 1)))
def test_cell_classes_group_identical_columns(M):
    cls = cell_classes(M)
    assert sorted(np.concatenate(cls.members).tolist()) == list(range(M.shape[1]))
    for k, members in enumerate(cls.members):
        assert np.all(cls.codes[members] == k)
        np.testing.assert_array_equal(M[:, members], np.repeat(cls.matrix[:, [k]], len(members), 1))
    assert np.unique(cls.matrix, axis=1).shape[1] == len(cls.members)  # classes differ


@given(M=integer_matrices(max_rows=3, max_cols=7, entries=st.integers(0, 1)), integer=st.booleans())
def test_kernel_moves_are_class_level_kernel_vectors_in_disjoint_groups(M, integer):
    mv = kernel_moves(M, integer=integer)
    Abar = cell_classes(M).matrix
    for v in mv.class_moves:
        np.testing.assert_allclose(Abar @ v, 0.0, atol=1e-9)
        if integer:
            assert np.all(v == np.round(v))
    assert sorted(i for g in mv.groups for i in g) == list(range(len(mv.class_moves)))
    for g in mv.groups:
        supports = [set(np.flatnonzero(mv.class_moves[i]).tolist()) for i in g]
        assert sum(map(len, supports)) == len(set().union(*supports))
    # exchanges inside classes plus class-level moves span the kernel of M
    assert mv.n_directions >= _nullity(M)


@st.composite
def bounded_fibres(draw):
    K = draw(st.integers(1, 4))
    r = draw(st.integers(1, K))
    A = np.array(
        draw(st.lists(st.lists(st.integers(0, 2), min_size=K, max_size=K), min_size=r, max_size=r)),
        dtype=float,
    )
    assume(np.linalg.matrix_rank(A) == r)
    lo = np.array(draw(st.lists(st.integers(-2, 2), min_size=K, max_size=K)), dtype=float)
    width = np.array(draw(st.lists(st.integers(0, 3), min_size=K, max_size=K)), dtype=float)
    point = lo + np.array([draw(st.integers(0, int(w))) for w in width])
    return A, A @ point, lo, lo + width


@given(case=bounded_fibres())
def test_enumerate_fibre_matches_brute_force(case):
    A, a, lo, hi = case
    T = enumerate_fibre(A, a, lo, hi)
    box = itertools.product(*[range(int(l), int(h) + 1) for l, h in zip(lo, hi, strict=True)])
    expected = sorted(t for t in box if np.array_equal(A @ np.array(t, dtype=float), a))
    assert sorted(tuple(map(int, t)) for t in T) == expected


def test_enumerate_fibre_refuses_large_boxes():
    A = np.array([[1.0, 1.0, 1.0]])
    lo, hi = np.zeros(3), np.full(3, 99.0)
    assert enumerate_fibre(A, np.array([99.0]), lo, hi, max_box=100) is None
    assert enumerate_fibre(A, np.array([99.0]), lo, hi, max_points=10) is None
    assert len(enumerate_fibre(A, np.array([99.0]), lo, hi)) == 100 * 101 // 2

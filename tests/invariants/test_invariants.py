"""Invariants: structured O(n) projections against dense linear algebra."""

import json

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
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


def test_structured_projection_is_linear_time(work):
    n = 1_000_000
    state = np.repeat(np.arange(50), n // 50)
    county = np.tile(np.repeat(np.arange(40), n // 50 // 40), 50)
    inv = nested_totals([state, county])
    v = np.random.default_rng(0).normal(size=n)
    # vectorised over the 2,000 groups, in a few arrays of n: no dense C (2,050 x n), no
    # SVD, no Python loop over groups or cells
    with work.python_calls() as calls, work.peak_memory() as mem:
        out = inv.project(v)
    assert calls.calls < 500
    assert mem.peak < 8 * v.nbytes
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


# ---------------------------------------------------------------------------
# nothing cached can be changed from outside (issue 10, section 3)
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", CASES)
def test_cached_arrays_are_read_only(name, rng):
    inv = CASES[name].of(rng.integers(0, 50, size=CASES[name].shape))
    v = rng.normal(size=inv.n_cells)
    expected = inv.project(v)
    C = inv.matrix
    storage = [C.data, C.indices, C.indptr] if sparse.issparse(C) else [C]
    for arr in [*storage, inv.values]:
        with pytest.raises(ValueError, match="read-only"):
            arr[0] = 99
    assert inv.rank >= 1  # fills the caches
    for _, value in inv._derived.items():
        for arr in value if isinstance(value, tuple) else (value,):
            if isinstance(arr, np.ndarray):
                assert not arr.flags.writeable
    basis = inv.null_space_basis()
    basis[...] = 0.0  # a copy: the cache is untouched
    Q = inv.null_space_basis()
    np.testing.assert_allclose(Q @ Q.T, inv.projector(), atol=1e-12)
    d = inv.to_dict()
    if "structure" in d and "labels" in d["structure"]:
        d["structure"]["labels"][0] = 12345
    d["values"][0] = -1.0
    again = Invariants.from_dict(inv.to_dict())
    assert again == inv
    np.testing.assert_allclose(inv.project(v), expected)


def test_structure_is_frozen_and_shared_margins_stay_intact():
    from invariantdp.mechanisms import semi_dp_gaussian

    t = np.array([[10, 4, 6], [3, 8, 9]])
    r = semi_dp_gaussian(t, mu=1.0, rng=0)
    with pytest.raises(ValueError):
        r.invariants.matrix[0, 0] = 100  # before: changed every later release of this shape
    with pytest.raises(TypeError):
        r.invariants.structure["kind"] = "totals"
    assert semi_dp_gaussian(t, mu=1.0, rng=0).invariants.apply(t).tolist() == [20, 20, 13, 12, 15]


def test_matrix_and_labels_are_copied_from_the_caller():
    C = sparse.csr_array(np.array([[1.0, 1.0, 0.0], [0.0, 0.0, 1.0]]))
    inv = Invariants(C)
    C.data[0] = 7.0
    assert inv.apply([1.0, 1.0, 1.0]).tolist() == [2.0, 1.0]
    labels = np.array([0, 0, 1])
    tot = totals(labels)
    labels[0] = 1
    assert tot.to_dict()["structure"]["labels"] == [0, 0, 1]
    assert tot.apply([1.0, 2.0, 3.0]).tolist() == [3.0, 3.0]


def test_structure_must_describe_the_matrix():
    # before: any matrix with structure={"kind": "one_way_margins"} was projected as margins
    with pytest.raises(InvariantDPError, match="not the matrix of the `structure`"):
        Invariants(np.eye(4), None, (2, 2), None, {"kind": "one_way_margins"})
    m = one_way_margins((2, 2))
    ok = Invariants(np.array(m.matrix), None, (2, 2), m.names, {"kind": "one_way_margins"})
    assert ok.kind == "one_way_margins" and ok == m
    with pytest.raises(InvariantDPError, match="not the matrix"):
        Invariants(m.matrix, None, (4,), None, m.structure)
    tot = totals([0, 0, 1])
    with pytest.raises(InvariantDPError, match="not the matrix"):
        Invariants(np.ones((2, 3)), None, (3,), None, tot.structure)
    same = Invariants(tot.matrix, None, tot.shape, tot.names, tot.structure)
    assert same.matrix is tot.matrix  # the verified structure is shared, not rebuilt


@pytest.mark.parametrize("shape", [(2.5, 2), ("2", "2"), (2, 0), (), 4])
def test_shape_is_not_coerced(shape):
    with pytest.raises((TypeError, InvariantDPError), match="`shape`"):
        Invariants(np.ones((1, 4)), shape=shape)


def test_float_labels_beyond_2_53_are_refused():
    with pytest.raises(InvariantDPError, match=r"2\*\*53"):
        totals(np.array([2.0**60, 1.0]))
    assert totals(np.array([2.0**52, 1.0])).n_invariants == 2


def test_check_tolerance_is_relative_to_the_summed_magnitudes():
    inv = totals([0, 0, 0]).of([0.0, 0.0, 0.0])
    inv.check([1e12, -1e12 + 1e-4, -1e-4])  # rounding in a sum of huge terms
    with pytest.raises(InvariantDPError, match="does not satisfy"):
        inv.check([1e12, -1e12 + 1e4, 0.0])  # 1e4 is above 1e-9 of 2e12
    with pytest.raises(InvariantDPError, match="does not satisfy"):
        inv.check([1e-6, 0.0, 0.0])  # small data are not lost in an absolute tolerance


# ---------------------------------------------------------------------------
# documents
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "mutate, match",
    [
        (lambda d: d.pop("shape"), "missing the required key"),
        (lambda d: d.update(shape=[2, 2.5]), r"`invariants\.shape\[1\]`"),
        (lambda d: d.update(shape=[2**31, 2**31]), r"`invariants\.shape`.*cells"),
        (lambda d: d.update(values=[4.0, 6.0, 5.0]), r"`invariants\.values`.*4 entries"),
        (lambda d: d.update(values=[4.0, 6.0, 5.0, 6.0]), "not the margins of any table"),
        (lambda d: d.update(values=[4.0, 6.0, "5", 5.0]), r"`invariants\.values\[2\]`"),
        (lambda d: d.update(names=[1, 2, 3, 4]), r"`invariants\.names\[0\]`"),
        (lambda d: d.update(extra=1), "unknown key"),
        (lambda d: d["structure"].update(kind="tables"), r"`invariants\.structure\.kind`"),
        (lambda d: d.update(matrix={"sparse": False, "data": [[1.0] * 4] * 4}), "structured"),
    ],
)
def test_from_dict_validates_margins_documents(mutate, match):
    d = one_way_margins((2, 2)).of([[3, 1], [2, 4]]).to_dict()
    mutate(d)
    with pytest.raises(InvariantDPError, match=match):
        Invariants.from_dict(d)


def test_from_dict_validates_general_documents():
    gen = Invariants(sparse.csr_array(np.array([[1.0, 1.0, 0.0], [0.0, 1.0, 1.0]]))).of([1, 2, 3])
    d = gen.to_dict()
    d["matrix"]["col"][0] = 3
    with pytest.raises(InvariantDPError, match=r"`invariants\.matrix\.col`.*\[0, 3\)"):
        Invariants.from_dict(d)
    d = gen.to_dict()
    d["matrix"]["data"][0] = float("nan")
    with pytest.raises(InvariantDPError, match=r"`invariants\.matrix\.data\[0\]`"):
        Invariants.from_dict(d)
    d = gen.to_dict()
    d["matrix"]["shape"] = [2**40, 3]
    with pytest.raises(InvariantDPError, match=r"`invariants\.matrix\.shape\[0\]`"):
        Invariants.from_dict(d)
    dense = Invariants(np.array([[1.0, 1.0, 0.0], [2.0, 2.0, 0.0]])).of([1, 2, 3])
    d = dense.to_dict()
    d["values"] = [3.0, 7.0]  # the second row is twice the first: 7 != 6 is inconsistent
    with pytest.raises(InvariantDPError, match="not consistent"):
        Invariants.from_dict(d)
    d["matrix"]["data"][1] = [2.0, 2.0]
    with pytest.raises(InvariantDPError, match=r"`invariants\.matrix\.data\[1\]`.*3 entries"):
        Invariants.from_dict(d)
    for bad in ([], "x", None, 3):
        with pytest.raises(InvariantDPError, match="must be a JSON object"):
            Invariants.from_dict(bad)


def test_from_dict_validates_nested_documents():
    inv = nested_totals([[0, 0, 0, 1], [0, 1, 1, 0]]).of([1, 2, 3, 4])
    d = inv.to_dict()
    d["values"][2] += 1  # county total no longer adds up to its state
    with pytest.raises(InvariantDPError, match="not consistent: level"):
        Invariants.from_dict(d)
    d = inv.to_dict()
    d["structure"]["levels"][0] = [0, 0, "a", 1]
    with pytest.raises(InvariantDPError, match="mix integer and string"):
        Invariants.from_dict(d)
    d = inv.to_dict()
    d["structure"]["levels"] = []
    with pytest.raises(InvariantDPError, match=r"`invariants\.structure\.levels`"):
        Invariants.from_dict(d)


@pytest.mark.parametrize("name", ["margins-2x3x4", "totals-2d", "nested", "general"])
def test_pickled_and_copied_invariants_keep_working(name, rng):
    import copy
    import pickle

    inv = CASES[name].of(rng.integers(0, 50, size=CASES[name].shape))
    v = rng.normal(size=inv.n_cells)
    for other in (pickle.loads(pickle.dumps(inv)), copy.deepcopy(inv)):
        assert other == inv
        again = Invariants(other.matrix, other.values, other.shape, other.names, other.structure)
        assert again.kind == inv.kind
        np.testing.assert_allclose(again.project(v), inv.project(v), atol=1e-12)


def test_json_text_is_strict_and_bounded():
    inv = one_way_margins((2, 2)).of([[3, 1], [2, 4]])
    assert Invariants.from_json(inv.to_json()) == inv
    text = inv.to_json()
    for bad, match in [
        (text.replace("4.0", "NaN", 1), "strict JSON"),
        (text.replace("4.0", "1e999", 1), r"`invariants\.values\[0\]` \(inf\)"),
        ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
        ('{"matrix": 1, "matrix": 2}', "twice"),
    ]:
        with pytest.raises(InvariantDPError, match=match):
            Invariants.from_json(bad)
    with pytest.raises(InvariantDPError, match="at most 10 are allowed"):
        Invariants.from_json(text, max_bytes=10)


# ---------------------------------------------------------------------------
# the public structure accessors (issue 11): consumers never reach into _cache
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", CASES)
def test_dense_matrix_is_read_only_and_equals_the_matrix(name):
    inv = CASES[name]
    D = inv.dense_matrix()
    assert isinstance(D, np.ndarray) and D.dtype == float and D.shape == inv.matrix.shape
    np.testing.assert_array_equal(D, _dense(inv))
    with pytest.raises(ValueError, match="read-only"):
        D[0, 0] = 100.0
    np.testing.assert_array_equal(inv.dense_matrix(), _dense(inv))  # nothing shared changed


def test_dense_matrix_refuses_huge_sparse_matrices():
    big = Invariants(sparse.csr_array((5_000, 5_000)))
    with pytest.raises(InvariantDPError, match=r"25000000 entries.*at most 20000000"):
        big.dense_matrix()


@given(st.lists(st.integers(0, 4), min_size=1, max_size=30))
def test_group_codes_and_projector_diagonal_match_the_dense_projector(labels):
    inv = totals(labels)
    codes, g = inv.group_codes()
    assert not codes.flags.writeable
    assert g == len(set(labels)) == inv.rank
    # cells share a code exactly when they share a label, codes in label order
    assert codes.tolist() == np.unique(labels, return_inverse=True)[1].tolist()
    np.testing.assert_allclose(inv.projector_diagonal(), np.diag(inv.projector()), atol=1e-12)


@pytest.mark.parametrize("name", CASES)
def test_projector_diagonal_for_every_kind(name):
    inv = CASES[name]
    np.testing.assert_allclose(inv.projector_diagonal(), np.diag(inv.projector()), atol=1e-12)


def test_group_codes_are_refused_without_groups():
    with pytest.raises(InvariantDPError, match="one_way_margins"):
        one_way_margins((2, 2)).group_codes()


@pytest.mark.parametrize("name", CASES)
def test_without_values_shares_the_cached_structure(name, rng):
    inv = CASES[name].of(rng.integers(0, 9, size=CASES[name].shape))
    rank = inv.rank  # fills the caches
    bare = inv.without_values()
    assert bare.values is None and bare.names == inv.names and bare.matrix is inv.matrix
    assert bare.rank == rank and bare == CASES[name]
    v = rng.normal(size=inv.n_cells)
    np.testing.assert_array_equal(bare.project(v), inv.project(v))
    assert bare.same_map(inv) and inv.same_map(CASES[name])
    assert not inv.same_map(totals(np.arange(inv.n_cells) % 2))


def test_as_rows_names_the_argument():
    inv = one_way_margins((2, 3))
    assert inv.as_rows(np.zeros((2, 3))).shape == (1, 6)
    assert inv.as_rows(np.zeros((4, 2, 3))).shape == (4, 6)
    with pytest.raises(InvariantDPError, match="`w` must have shape"):
        inv.as_rows(np.zeros(5), name="w")


def test_public_import_paths_and_old_pickles_keep_working():
    import pickle

    import invariantdp.invariants as package

    inv = totals([0, 0, 1]).of([1, 2, 3])
    assert pickle.loads(pickle.dumps(inv)) == inv
    # pickles from before the package split name the structure factory here
    assert callable(package._make_structure)
    assert set(package.__all__) >= {"Invariants", "totals", "nested_totals", "one_way_margins"}


@pytest.mark.parametrize("seed", range(8))
def test_nested_and_group_totals_match_a_direct_indicator_construction(seed):
    # the O(n) constructors (hashing, one shared cell order) against np.unique + COO
    from scipy import sparse

    rng = np.random.default_rng(seed)
    m = int(rng.integers(1, 300))
    state = np.array(["ca", "ny", "tx"])[rng.integers(0, 3, m)]
    county = rng.integers(0, 4, m) * 10 + np.searchsorted(["ca", "ny", "tx"], state)
    tract = county * 10 + rng.integers(0, 3, m)

    def indicator(*levels):
        # groups of a level are its paths from the root, in lexicographic order
        paths = np.column_stack([np.unique(lev, return_inverse=True)[1] for lev in levels])
        u, k = np.unique(paths, axis=0, return_inverse=True)
        ind = sparse.coo_array((np.ones(m), (k.ravel(), np.arange(m))), shape=(len(u), m))
        return ind.toarray()

    nested = nested_totals([state, county, tract]).matrix
    assert nested.has_canonical_format
    expect = np.vstack(
        [indicator(state), indicator(state, county), indicator(state, county, tract)]
    )
    np.testing.assert_array_equal(nested.toarray(), expect)
    np.testing.assert_array_equal(totals(tract).matrix.toarray(), indicator(tract))
    # FIPS-style codes reused under every parent (not a refinement: paths are hashed),
    # and codes too far apart to count (hashed labels)
    county_local = rng.integers(0, 4, m)
    tract_local = rng.integers(0, 3, m) * 10**12
    reused = nested_totals([state, county_local, tract_local]).matrix
    expect = np.vstack(
        [
            indicator(state),
            indicator(state, county_local),
            indicator(state, county_local, tract_local),
        ]
    )
    np.testing.assert_array_equal(reused.toarray(), expect)


def test_nested_names_follow_the_paths_whether_labels_refine_or_repeat():
    # county 1 exists in both states: its groups are the paths (state, county)
    state = np.array([2, 2, 1, 1, 2])
    county = np.array([1, 7, 1, 3, 1])
    inv = nested_totals([state, county])
    assert inv.names == (
        "level[0][1]",
        "level[0][2]",
        "level[1][0/1]",
        "level[1][0/3]",
        "level[1][1/1]",
        "level[1][1/7]",
    )
    # refining codes (each county in one state) give the same names as hashing would
    county = np.array([21, 27, 11, 13, 21])
    assert nested_totals([state, county]).names[2:] == (
        "level[1][0/11]",
        "level[1][0/13]",
        "level[1][1/21]",
        "level[1][1/27]",
    )


def test_consistency_of_values_near_the_float_limit_is_decided_without_overflow():
    """Found by the slow hypothesis suite: ``norm([1e308, 3, 3, 3])`` overflowed."""
    C = np.array([[1.0, 0, 1, 0], [0, 1, 0, 1], [1, 1, 0, 0], [0, 0, 1, 1]])  # rank 3
    doc = Invariants(C, [1e308, 3.0, 3.0, 3.0], (4,)).to_dict()
    with pytest.raises(InvariantDPError, match="not consistent"):
        Invariants.from_dict(doc)
    doc["values"] = [1e300] * 4  # consistent: read without error
    assert Invariants.from_dict(doc).values[0] == 1e300


def test_with_values_sets_published_values_and_checks_them():
    inv = one_way_margins((2, 3))
    got = inv.with_values([40, 60, 30, 30, 40])
    assert got == inv.of(np.array([[10, 10, 20], [20, 20, 20]]))
    with pytest.raises(InvariantDPError, match="not the margins"):
        inv.with_values([40, 60, 30, 30, 41])
    with pytest.raises(InvariantDPError, match="must hold 5 numbers, got 4"):
        inv.with_values([40, 60, 30, 30])
    nested = nested_totals([["a", "a", "b"], [0, 1, 2]])
    with pytest.raises(InvariantDPError, match="not consistent"):
        nested.with_values([5, 1, 1, 2, 1])


def test_repr_is_one_short_line_at_any_size():
    n = 20_000
    inv = nested_totals([np.repeat(np.arange(4), n // 4), np.arange(n) // 10]).of(np.ones(n))
    text = repr(inv)
    assert len(text) < 300 and "\n" not in text and "nested_totals" in text


def test_cached_label_arrays_stand_for_their_lists():
    """The structure document keeps label arrays (no million-entry lists) but reads as lists."""
    import pickle

    from invariantdp.mechanisms import projected_gaussian

    state = np.array([1, 1, 2, 2, 2])
    county = np.array([10, 11, 20, 20, 21])
    r = projected_gaussian(np.arange(5.0), nested_totals([state, county]), mu=1.0, rng=0)
    levels = r.noise.params["invariants"]["structure"]["levels"]
    assert levels[0] == [1, 1, 2, 2, 2] and levels[1] == [10, 11, 20, 20, 21]
    assert levels[0] != [1, 1, 2, 2, 3] and levels[1] != ["10", "11", "20", "20", "21"]
    with pytest.raises(ValueError, match="read-only"):
        np.asarray(levels[0])[0] = 7
    doc = json.loads(r.to_json())
    assert doc["noise"]["params"]["invariants"]["structure"]["levels"][1] == [10, 11, 20, 20, 21]
    back = type(r).from_json(r.to_json())
    assert back.noise.params == r.noise.params == pickle.loads(pickle.dumps(r)).noise.params


def test_narrow_integer_labels_are_coded_without_wrapping():
    labels = np.array([-100, 100, 5, -100], dtype=np.int8)  # range 200 > int8 max
    inv = totals(labels)
    assert inv.names == ("total[-100]", "total[5]", "total[100]")
    np.testing.assert_array_equal(inv.apply([1.0, 2.0, 3.0, 4.0]), [5.0, 3.0, 2.0])


def test_bool_labels_survive_json():
    inv = totals(np.array([True, False, True]))
    assert Invariants.from_json(inv.to_json()) == inv

"""The dense-factor passes (_gls/_block_passes.py) equal a dense constrained GLS.

Recoded measurements and invariants, structural zeros of whole slices and of
products of level sets (the 2020 persons file's ``hhgq_total_ub`` and
``nurse_nva_0``) on random small hierarchies: estimates, standard errors and
the covariances between units agree with the KKT solve of ``kkt.py`` to 1e-8
relative, and the invariants and zeros hold in every output.
"""

import numpy as np
import pytest

from invariantdp._gls import (
    Equality,
    Linear,
    Measurement,
    Problem,
    Zeros,
    block_path_refusal,
    solve_blocks,
)
from invariantdp.exceptions import InvariantDPError

from .kkt import DenseGLS, query_matrix
from .problems import random_level_set_problem, random_recoded_problem


def close(a, b, rtol=1e-8):
    a, b = np.asarray(a, float), np.asarray(b, float)
    return np.all(np.abs(a - b) <= rtol * max(np.max(np.abs(b), initial=0.0), 1.0))


def inst_groups(n0):
    """The recode of attribute 0 the random problems use: {0}, {1, .., n0 - 2}, {n0 - 1}."""
    g = np.zeros((3, n0), dtype=np.int64)
    g[0, 0] = g[2, n0 - 1] = 1
    g[1, 1 : n0 - 1] = 1
    return g


def checked_queries(shape):
    d = len(shape)
    return [
        ((), {}),
        ((0,), {}),
        ((0,), {0: inst_groups(shape[0])}),
        ((1, 2), {}),
        ((0, 1), {0: inst_groups(shape[0])}),
        (tuple(range(d)), {}),
    ]


CASES = [
    # (shape, fan, roots)
    ((4, 2, 3), (3, 2, 2), 1),
    ((5, 2, 2, 2), (2, 2, 2), 1),
    ((3, 2, 3), (2, 3, 2), 1),
    ((4, 2, 2), (3, 2), 2),
]


@pytest.mark.parametrize("case", range(len(CASES)))
@pytest.mark.parametrize("seed", [0, 1])
def test_units_and_pairs_of_units_equal_the_dense_constrained_gls(case, seed):
    shape, fan, roots = CASES[case]
    rng = np.random.default_rng(100 * case + seed)
    prob, _ = random_recoded_problem(rng, shape, fan, roots)
    sol, ref = solve_blocks(prob), DenseGLS(prob)
    assert sol.fa.dense == (0, 1) and sol.fa.m == shape[0] * shape[1]
    for lev, n in enumerate(prob.sizes):
        units = np.arange(n)
        assert ref.unidentified.shape[1] == 0
        for attrs, rec in checked_queries(shape):
            est = sol.estimates(lev, attrs, rec)
            var = sol.query_variances(lev, attrs, rec)
            r_est, r_cov = ref.slice(lev, units, attrs, rec)  # every unit, unit-major
            assert close(est.reshape(-1), r_est)
            assert close(var.reshape(-1), np.diag(r_cov))  # squared standard errors
            assert close(sol.slice_cov(lev, units, attrs, rec), r_cov)  # pairs of units


@pytest.mark.parametrize("seed", range(10))
def test_random_schemas_recodes_and_level_set_zeros(seed):
    # hypothesis-style: a random schema, a random recode, zeros that are unions of
    # products of level sets (plain or recoded), at random units of a random tree
    rng = np.random.default_rng(500 + seed)
    prob, _ = random_level_set_problem(rng)
    sol, ref = solve_blocks(prob), DenseGLS(prob)
    assert ref.unidentified.shape[1] == 0
    d = len(prob.shape)
    queries = [((), {}), *(((a,), {}) for a in range(d)), (tuple(range(d)), {})]
    queries += [(it.attrs, it.recodes) for it in prob.equalities[1:]]
    for lev, n in enumerate(prob.sizes):
        units = np.arange(n)
        for attrs, rec in queries:
            r_est, r_cov = ref.slice(lev, units, attrs, rec)
            assert close(sol.estimates(lev, attrs, rec).reshape(-1), r_est)
            assert close(sol.query_variances(lev, attrs, rec).reshape(-1), np.diag(r_cov))
            assert close(sol.slice_cov(lev, units, attrs, rec), r_cov)
        zero = sol.histograms(lev).reshape(n, -1)[ref_zero_cells(prob, lev)]
        assert np.all(zero == 0.0)


def ref_zero_cells(prob, lev):
    """``(units, k)`` bool: the detailed cells a level's zeros fix."""
    out = np.zeros((prob.sizes[lev], int(np.prod(prob.shape))), dtype=bool)
    for z in prob.at(prob.zeros, lev):
        q = query_matrix(prob.shape, z.attrs, z.recodes)
        out[z.units] |= (z.mask.astype(float) @ q) > 0
    return out


@pytest.mark.parametrize("case", range(len(CASES)))
def test_sums_over_sets_of_units_equal_the_dense_gls(case):
    shape, fan, roots = CASES[case]
    rng = np.random.default_rng(300 + case)
    prob, _ = random_recoded_problem(rng, shape, fan, roots)
    sol, ref = solve_blocks(prob), DenseGLS(prob)
    checked = 0
    for lev in range(1, len(prob.sizes)):
        subsets = [np.flatnonzero(rng.random(prob.sizes[lev]) < 0.5) for _ in range(3)]
        for units in [*subsets, np.arange(prob.sizes[lev])]:
            if not units.size:
                continue
            for attrs, rec in checked_queries(shape):
                est, cov = sol.sum_cov(lev, units, attrs, rec)
                r_est, r_cov, ident = ref.query(lev, units, attrs, rec)
                assert ident.all()
                assert close(est, r_est) and close(cov, r_cov)
                checked += 1
    assert checked >= 12


@pytest.mark.parametrize("case", range(len(CASES)))
def test_sums_over_many_groups_and_selections_equal_the_dense_gls(case):
    # group_sum_blocks: every group of a crosswalk in one recursion; selection_variances:
    # any weights over a query's cells, from the blocks alone
    shape, fan, roots = CASES[case]
    rng = np.random.default_rng(600 + case)
    prob, _ = random_recoded_problem(rng, shape, fan, roots)
    sol, ref = solve_blocks(prob), DenseGLS(prob)
    for lev in range(len(prob.sizes)):
        chosen = np.flatnonzero(rng.random(prob.sizes[lev]) < 0.8)
        if not chosen.size:
            continue
        codes = rng.integers(0, 3, chosen.size)
        blocks = sol.group_sum_blocks(lev, chosen, codes, 3)
        for attrs, rec in checked_queries(shape):
            c = int(np.prod([rec[a].shape[0] if a in rec else shape[a] for a in attrs]))
            weights = rng.normal(size=(2, c))
            var = sol.selection_variances(blocks, attrs, rec, weights)
            unit_var = sol.selection_variances(sol.F[lev][chosen], attrs, rec, weights)
            for g in range(3):
                units = chosen[codes == g]
                if not units.size:
                    assert np.all(var[g] == 0)
                    continue
                _, r_cov, _ = ref.query(lev, units, attrs, rec)
                want = np.diag(weights @ r_cov @ weights.T)
                assert close(var[g], want)
            for i, u in enumerate(chosen[:3]):
                _, r_cov, _ = ref.query(lev, [u], attrs, rec)
                assert close(unit_var[i], np.diag(weights @ r_cov @ weights.T))


@pytest.mark.parametrize("case", range(len(CASES)))
def test_query_slice_cov_is_slice_cov_without_the_pairs_blocks(case):
    # the chains projected on the query first: the same covariance over any units
    shape, fan, roots = CASES[case]
    rng = np.random.default_rng(900 + case)
    prob, _ = random_recoded_problem(rng, shape, fan, roots)
    sol = solve_blocks(prob)
    for lev in range(len(prob.sizes)):
        units = np.flatnonzero(rng.random(prob.sizes[lev]) < 0.7)
        if not units.size:
            continue
        for attrs, rec in checked_queries(shape):
            want = sol.slice_cov(lev, units, attrs, rec)
            assert close(sol.query_slice_cov(lev, units, attrs, rec), want)


def test_invariants_and_structural_zeros_hold_in_every_output():
    rng = np.random.default_rng(7)
    prob, hist = random_recoded_problem(rng, (4, 2, 3), (3, 3, 2), 1)
    sol = solve_blocks(prob)
    for e in prob.equalities:
        got = sol.estimates(e.level, e.attrs, e.recodes)[e.units]
        assert np.allclose(got, e.values, rtol=0, atol=1e-9 * (1 + np.abs(e.values).max()))
        var = sol.query_variances(e.level, e.attrs, e.recodes, e.units)
        assert np.all(var == 0.0)  # exactly: rounding of an exact 0 is not an error
    shape = prob.shape
    for z in prob.zeros:
        cells = (z.mask.astype(float) @ query_matrix(shape, z.attrs, z.recodes)) > 0
        x = sol.histograms(z.level).reshape(sol.problem.sizes[z.level], -1)[z.units]
        assert np.all(x[cells] == 0.0)  # exactly, not to rounding
        var = sol.query_variances(z.level, tuple(range(len(shape))), {}, z.units)
        assert np.all(var[cells] == 0.0)


def test_tiny_variances_are_kept_only_rounding_of_exact_zeros_is_dropped():
    # the rounding test is relative: measurement variances scaled by 1e-20 scale every
    # variance by 1e-20, and the zeros (invariants, structural zeros) stay where they were
    from dataclasses import replace

    rng = np.random.default_rng(7)
    prob, _ = random_recoded_problem(rng, (4, 2, 3), (3, 3, 2), 1)
    tiny = replace(
        prob, measurements=[replace(m, variance=m.variance * 1e-20) for m in prob.measurements]
    )
    sol, sol_t = solve_blocks(prob), solve_blocks(tiny)
    for lev in range(len(prob.sizes)):
        for attrs in ((), (0,), (1, 2), (0, 1, 2)):
            var = sol.query_variances(lev, attrs)
            var_t = sol_t.query_variances(lev, attrs)
            assert np.array_equal(var == 0.0, var_t == 0.0)
            np.testing.assert_allclose(var_t, 1e-20 * var, rtol=1e-6, atol=0)


def _free_cells_gls(prob, free, total):
    """GLS of two leaves under one parent over their non-zero cells, with the parent's total fixed.

    Written directly (measurement rows restricted to the free cells, the
    total as the one constraint), independently of both engines: the
    reference for the 2,016-cell schema, where a dense KKT over every cell
    would cost minutes.
    """
    cols = [np.flatnonzero(f) for f in free]
    n = sum(c.size for c in cols)
    offs = np.cumsum([0, *[c.size for c in cols]])
    rows, y, w = [], [], []
    for m in prob.measurements:
        q = query_matrix(prob.shape, m.attrs, m.recodes)
        for i, u in enumerate(m.units):
            a = np.zeros((q.shape[0], n))
            for leaf in range(2) if m.level == 0 else [u]:
                a[:, offs[leaf] : offs[leaf + 1]] = q[:, cols[leaf]]
            rows.append(a)
            y.append(m.values[i])
            w.append(np.full(q.shape[0], 1.0 / m.variance[i]))
    a, y, w = np.vstack(rows), np.concatenate(y), np.concatenate(w)
    c = np.ones((1, n))
    kbasis = np.linalg.svd(c)[2][1:].T  # the null space of the total
    x0 = np.full(n, total / n)
    info = kbasis.T @ (a.T * w) @ a @ kbasis
    cov = kbasis @ np.linalg.solve(info, kbasis.T)
    x = x0 + cov @ (a.T @ (w * (y - a @ x0)))
    lift = np.zeros((3, 2016, n))  # parent, leaf 0, leaf 1: detailed cells from free cells
    for leaf in range(2):
        lift[1 + leaf, cols[leaf], np.arange(offs[leaf], offs[leaf + 1])] = 1.0
    lift[0] = lift[1] + lift[2]
    return x, cov, lift


@pytest.mark.slow
def test_the_pl94_schema_on_a_few_units():
    # hhgq 8 x votingage 2 x hispanic 2 x cenrace 63 with the Bureau's recodes: one parent,
    # two blocks, absent GQ types and nursing x under 18 at zero
    rng = np.random.default_rng(3)
    shape = (8, 2, 2, 63)
    inst = np.zeros((3, 8), dtype=np.int64)
    inst[0, 0], inst[1, 1:5], inst[2, 5:] = 1, 1, 1
    nurse = np.zeros((1, 8), dtype=np.int64)
    nurse[0, 3] = 1
    nonvoting = np.array([[1, 0]])
    absent = np.array([[False, True, True, False, True, False, True, True]] * 2)
    absent[1, 3] = True
    free = np.ones((2, *shape), dtype=bool)
    free[:, 3, 0] = False
    free[absent] = False
    truth = rng.poisson(2, size=(2, *shape)).astype(float) * free
    hist = [truth.sum(axis=0, keepdims=True).reshape(1, -1), truth.reshape(2, -1)]
    queries = [
        ((), {}), ((3,), {}), ((2,), {}), ((1,), {}), ((0,), {0: inst}), ((0,), {}),
        ((2, 3), {}), ((1, 3), {}), ((1, 2), {}), ((1, 2, 3), {}), ((0, 1, 2, 3), {}),
    ]  # fmt: skip
    meas = []
    for lev, units in ((0, np.array([0])), (1, np.arange(2))):
        for attrs, rec in queries:
            if lev == 0 and not attrs:
                continue  # the total is an invariant at the top
            ans = hist[lev][units] @ query_matrix(shape, attrs, rec).T
            var = np.full(units.size, rng.uniform(1, 30))
            noisy = ans + rng.normal(size=ans.shape) * np.sqrt(var)[:, None]
            meas.append(Measurement(lev, attrs, units, noisy, var, recodes=rec))
    total = float(hist[0].sum())
    eqs = [Equality(0, (), np.array([0]), np.array([[total]]))]
    zeros = [
        Zeros(1, (0,), np.arange(2), absent),
        Zeros(0, (0,), np.array([0]), absent.all(axis=0, keepdims=True)),
        Zeros(1, (0, 1), np.arange(2), np.ones((2, 1), bool), {0: nurse, 1: nonvoting}),
        Zeros(0, (0, 1), np.array([0]), np.ones((1, 1), bool), {0: nurse, 1: nonvoting}),
    ]
    prob = Problem(shape, [np.array([-1]), np.zeros(2, dtype=np.int64)], meas, eqs, zeros)
    sol = solve_blocks(prob)
    assert sol.fa.m == 16 and sol.fa.n_spaces == 4  # 16 x 16 blocks, four of them
    x, cov, lift = _free_cells_gls(prob, free.reshape(2, -1), total)
    for attrs, rec in [((), {}), ((0,), {0: inst}), ((1,), {}), ((0, 1, 2, 3), {})]:
        q = query_matrix(shape, attrs, rec)
        for lev, units in ((0, [0]), (1, [0, 1])):
            rows = np.vstack([q @ lift[lev + u] for u in units])
            assert close(sol.estimates(lev, attrs, rec).reshape(-1), rows @ x)
            assert close(sol.slice_cov(lev, np.array(units), attrs, rec), rows @ cov @ rows.T)


def test_problems_off_the_block_path_are_refused_by_name():
    prob = Problem(
        (2, 2),
        [np.array([-1])],
        [Measurement(0, (0, 1), np.array([0]), np.ones((1, 4)), np.array([1.0]))],
        linear=[Linear(0, 0, np.array([[1.0, -1.0, 0.0, 0.0]]), np.array([0.0]))],
    )
    assert "linear constraints" in block_path_refusal(prob)
    with pytest.raises(InvariantDPError, match="dense-factor path does not apply: it has linear"):
        solve_blocks(prob)


def test_an_unmeasured_direction_is_refused_not_guessed():
    # two leaves measured only by their totals: their contrasts are not identified
    prob = Problem(
        (2, 3),
        [np.array([-1]), np.zeros(2, dtype=np.int64)],
        [
            Measurement(0, (0, 1), np.array([0]), np.ones((1, 6)), np.array([1.0])),
            Measurement(1, (), np.arange(2), np.ones((2, 1)), np.ones(2)),
        ],
        zeros=[Zeros(1, (0,), np.array([0]), np.array([[True, False]]))],
    )
    with pytest.raises(InvariantDPError, match="of level 1 has directions that no measurement"):
        solve_blocks(prob)


def test_contradicting_invariants_and_zeros_are_refused_naming_the_unit():
    # the children's zeros make the whole first slice exactly 0; the parent's recoded
    # invariant says it holds 5
    groups = {0: np.array([[1, 0, 0], [0, 1, 1]])}
    meas = [Measurement(1, (0, 1), np.arange(2), np.ones((2, 6)), np.ones(2))]
    zeros = [Zeros(1, (0,), np.arange(2), np.array([[True, False, False]] * 2))]
    parents = [np.array([-1]), np.zeros(2, dtype=np.int64)]
    bad = [Equality(0, (0,), np.array([0]), np.array([[5.0, 7.0]]), recodes=groups)]
    names = {0: ("County", np.array(["01001"])), 1: ("Tract", np.array(["a", "b"]))}
    with pytest.raises(InvariantDPError, match="unit 01001 of level County contradict the exact"):
        solve_blocks(Problem((3, 2), parents, meas, bad, zeros), names)
    # a unit whose own zero contradicts its own invariant
    own = [Equality(1, (0,), np.array([1]), np.array([[2.0, 0.0, 0.0]]))]
    with pytest.raises(InvariantDPError, match="of unit b of level Tract"):
        solve_blocks(Problem((3, 2), parents, meas, own, zeros), names)


@pytest.mark.parametrize("case", range(len(CASES)))
def test_the_passes_by_chunks_of_units_equal_the_passes_whole(case, monkeypatch):
    # the operators, gains, final covariances and crosswalk sums work a chunk of units at
    # a time: chunks of one or two units must give what one chunk gives, and the dense GLS
    import invariantdp._gls._dense_factors as factors

    shape, fan, roots = CASES[case]
    rng = np.random.default_rng(1200 + case)
    prob, _ = random_recoded_problem(rng, shape, fan, roots)
    whole = solve_blocks(prob)
    last = len(prob.sizes) - 1
    chosen = np.flatnonzero(rng.random(prob.sizes[last]) < 0.8)
    codes = rng.integers(0, 3, chosen.size)
    want_groups = whole.group_sum_blocks(last, chosen, codes, 3)
    k = int(np.prod(shape))
    for cells in (1, k + 1):  # one unit per chunk (histograms and blocks); about two
        monkeypatch.setattr(factors, "CHUNK_CELLS", cells)
        sol = solve_blocks(prob)
        for lev in range(len(prob.sizes)):
            assert np.allclose(sol.x[lev], whole.x[lev], rtol=1e-12, atol=1e-9)
            assert np.allclose(sol.F[lev], whole.F[lev], rtol=1e-12, atol=1e-9)
            if lev:
                assert np.allclose(sol.G[lev], whole.G[lev], rtol=1e-12, atol=1e-12)
        got = sol.group_sum_blocks(last, chosen, codes, 3)
        assert np.allclose(got, want_groups, rtol=1e-12, atol=1e-9)
    ref = DenseGLS(prob)
    r_est, _ = ref.slice(last, np.arange(prob.sizes[last]), tuple(range(len(shape))), {})
    assert close(sol.histograms(last).reshape(-1), r_est)


def test_final_covariances_are_computed_when_first_asked_for():
    rng = np.random.default_rng(77)
    prob, _ = random_recoded_problem(rng, (4, 2, 3), (3, 2, 2), 1)
    sol = solve_blocks(prob)
    last = len(prob.sizes) - 1
    assert not sol.F.computed(last)  # not computed by the solve
    f = sol.F[last]
    assert sol.F.computed(last) and sol.F[last] is f  # computed once, then kept
    assert f.shape == sol.V[last].shape and np.allclose(f, np.swapaxes(f, -1, -2))
    assert [a.shape for a in sol.F] == [v.shape for v in sol.V]
    assert all(a is b for a, b in zip(reversed(sol.F), sol.F[::-1], strict=True))
    # no reference cycle: a dropped solution is freed at once, not by the cyclic collector
    import gc
    import weakref

    gc.disable()
    try:
        ref = weakref.ref(solve_blocks(prob))
        assert ref() is None
    finally:
        gc.enable()

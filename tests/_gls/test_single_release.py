"""The GLS of one release (_gls/_single_release.py): invariant rows sorted in linear time, and the
estimates of cells, queries and rows read from one solution."""

import numpy as np
import pytest
from scipy import sparse

from invariantdp._gls import (
    estimate_release,
    marginal_constraints,
    query_estimates,
    rows_estimates,
    solve_release,
)
from invariantdp.exceptions import InvariantDPError

from .kkt import DenseGLS, query_matrix


def test_sparse_rows_in_any_order_with_agreeing_duplicates_are_whole_margins(rng):
    shape = (3, 2, 4)
    truth = rng.poisson(5, 24).astype(float)
    county = query_matrix(shape, (0,))
    sex_age = query_matrix(shape, (1, 2))
    mat = np.vstack([county[::-1], np.ones((1, 24)), sex_age, county[:1]])
    margins, rest, values = marginal_constraints(shape, sparse.csr_array(mat), mat @ truth)
    assert [a for a, _ in margins] == [(), (0,), (1, 2)]
    assert margins[1][1] == pytest.approx(county @ truth)
    assert margins[2][1] == pytest.approx(sex_age @ truth)
    assert rest.shape == (0, 24) and values.size == 0


def test_part_of_a_query_and_weighted_rows_stay_general(rng):
    shape = (3, 4)
    county = query_matrix(shape, (0,))
    mat = np.vstack([county[:2], 2 * np.ones((1, 12))])
    margins, rest, _ = marginal_constraints(shape, mat, mat @ np.arange(12.0))
    assert margins == [] and rest == pytest.approx(mat)


def test_duplicated_rows_that_disagree_are_refused():
    shape = (2, 2)
    mat = np.vstack([query_matrix(shape, (0,)), query_matrix(shape, (0,))[:1]])
    with pytest.raises(InvariantDPError, match="two different values"):
        marginal_constraints(shape, mat, [3.0, 4.0, 5.0])


def test_sorting_a_census_size_table_builds_no_cells_by_cells_matrix(work):
    shape = (3000, 2, 23)  # counties x sex x age: 138,000 cells
    k = int(np.prod(shape))
    county = sparse.kron(sparse.eye_array(3000), sparse.csr_array(np.ones((1, 46))))
    mat = sparse.vstack([sparse.csr_array(np.ones((1, k))), county]).tocsr()
    with work.peak_memory() as mem:
        margins, rest, _ = marginal_constraints(shape, mat, np.ones(3001))
    assert [a for a, _ in margins] == [(), (0,)] and rest.shape == (0, k)
    assert mem.peak < 64 * 2**20


@pytest.mark.parametrize("general", [False, True], ids=["margins", "low-rank"])
def test_cells_queries_and_rows_read_from_one_solution_match_the_dense_gls(rng, general):
    shape = (4, 2, 3)
    truth = rng.poisson(8, 24).astype(float)
    y = truth + rng.normal(size=24)
    margins = [((), [truth.sum()]), ((0,), truth.reshape(shape).sum(axis=(1, 2)))]
    mat = rng.normal(size=(1, 24)) if general else None
    rhs = None if mat is None else mat @ truth
    sol = solve_release(shape, y, 1.5, margins, mat, rhs)
    ref = DenseGLS(sol.problem)
    x, cov = ref.unit(0, 0)
    est, var = query_estimates(sol, (0, 1, 2))
    assert est == pytest.approx(x, abs=1e-9) and var == pytest.approx(np.diag(cov), abs=1e-9)
    q = query_matrix(shape, (1, 2))
    est, var = query_estimates(sol, (1, 2))
    assert est == pytest.approx(q @ x, abs=1e-9)
    assert var == pytest.approx(np.diag(q @ cov @ q.T), abs=1e-9)
    rows = rng.normal(size=(3, 24))
    est, rcov = rows_estimates(sol, rows)
    assert est == pytest.approx(rows @ x, abs=1e-9)
    assert rcov == pytest.approx(rows @ cov @ rows.T, abs=1e-9)
    est_all, cov_all, _ = estimate_release(shape, y, 1.5, margins, mat, rhs)
    assert est_all == pytest.approx(x, abs=1e-9) and cov_all == pytest.approx(cov, abs=1e-9)

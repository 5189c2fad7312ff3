r"""The GLS of one labelled release: a single unit, the detailed query, exact invariants.

The internal entry point for :func:`invariantdp.estimate`: the same
implementation as :func:`invariantdp.census.gls`, on a one-unit hierarchy.
A release of ``k`` noisy cells (variance ``sigma^2``, one value or one per
cell) on a product schema ``shape`` (its label levels; a one-attribute schema
of ``k`` cells when the labels are not a full product), with invariants:

* whole marginal queries (a total, nested totals such as county totals in a
  county x sex x age table, one-way margins) stay in the fast algebra;
* any other equality ``C h = c`` takes the low-rank path.

:func:`marginal_constraints` sorts the rows of an invariant matrix
(``invariantdp.Invariants.matrix``, dense or sparse) into the two kinds in
time linear in its non-zeros; :func:`solve_release` runs the passes, and
:func:`query_estimates` (every cell of a marginal query, the cells themselves
included) and :func:`rows_estimates` (any linear combinations) read the
estimates and their variances from the solution.  :func:`estimate_release`
does both at once (``inf`` marks combinations the data do not identify).

References
----------
Gong & Meng, Section 3 (conditioning on the invariants); Cumings-Menon &
Zhuravlev (2024), arXiv:2404.13164 (the GLS passes).
"""

from __future__ import annotations

import numpy as np
from scipy import sparse

from ..exceptions import InvariantDPError
from ._eigenspaces import EigenAlgebra
from ._problem import Equality, Linear, Measurement, Problem
from ._tree_passes import Solution, solve
from ._variances import query_variances, rows_cov, unit_law

__all__ = [
    "estimate_release",
    "marginal_constraints",
    "query_estimates",
    "release_problem",
    "rows_estimates",
    "solve_release",
]

#: duplicated invariant rows whose values differ by more than this (relative) contradict
_AGREE = 1e-9


def _query_cells(shape, rows, cols, n_rows):
    """Per row of a 0/1 matrix given by its non-zeros: ``(attrs mask, cell)`` or ``(-1, -1)``.

    A row is cell ``j`` of the marginal query ``Q_S`` when its support is every
    detailed cell whose levels on ``S`` are those of ``j``: one level on each
    attribute of ``S``, every level on the others, and as many cells as that.
    Attributes of one level count as kept.
    """
    d = len(shape)
    levels = np.unravel_index(cols, shape)
    nnz = np.bincount(rows, minlength=n_rows)
    distinct = np.zeros((n_rows, d), dtype=np.int64)
    for a in range(d):
        pairs = np.unique(rows * shape[a] + levels[a])
        distinct[:, a] = np.bincount(pairs // shape[a], minlength=n_rows)
    n = np.asarray(shape, dtype=np.int64)
    kept = distinct == 1
    spread = np.where(kept, 1, n[None, :])
    ok = (nnz > 0) & np.all(kept | (distinct == n[None, :]), axis=1)
    ok &= nnz == np.prod(spread, axis=1)
    mask = (kept * (1 << np.arange(d))[None, :]).sum(axis=1)
    first = np.full(n_rows, -1, dtype=np.int64)
    order = np.argsort(rows, kind="stable")
    starts = np.searchsorted(rows[order], np.arange(n_rows))
    has = starts < rows.size
    first[has] = cols[order[starts[has]]]
    # the cell of Q_S: the first support cell's levels on S, in the C order of S
    lv = np.stack(np.unravel_index(np.maximum(first, 0), shape), axis=1)
    cell = np.zeros(n_rows, dtype=np.int64)
    for a in range(d):
        sel = kept[:, a]
        cell = np.where(sel, cell * n[a] + lv[:, a], cell)
    return np.where(ok, mask, -1), np.where(ok, cell, -1)


def marginal_constraints(shape, matrix, values):
    """Split constraint rows into whole marginal queries and the rest.

    Returns ``(margins, rest_matrix, rest_values)``: ``margins`` is a list of
    ``(attrs, answers)`` (by increasing bit mask of ``attrs``) for every
    marginal query all of whose cells are rows of ``matrix`` (dense or
    sparse; any order, duplicates allowed if they agree); the other rows are
    returned as they are, dense.  The work is linear in the non-zeros.
    """
    alg = EigenAlgebra(shape)
    vals = np.asarray(values, dtype=float).reshape(-1)
    mat = sparse.csr_array(matrix) if sparse.issparse(matrix) else None
    if mat is None:
        dense = np.atleast_2d(np.asarray(matrix, dtype=float))
        mat = sparse.csr_array(dense)
    if mat.shape != (vals.size, alg.k):
        raise InvariantDPError(
            f"`matrix` must have {alg.k} columns and one row per value; got {mat.shape} and "
            f"{vals.size} values."
        )
    coo = mat.tocoo()
    keep = coo.data != 0
    rows, cols, data = coo.row[keep], coo.col[keep], coo.data[keep]
    ones = np.bincount(rows, weights=(data != 1).astype(float), minlength=vals.size) == 0
    smask, cell = _query_cells(alg.shape, rows, cols, vals.size)
    smask = np.where(ones, smask, -1)
    used = np.zeros(vals.size, dtype=bool)
    margins = []
    for t in np.unique(smask[smask >= 0]):
        attrs = tuple(a for a in range(alg.d) if t >> a & 1)
        n_cells = int(np.prod([alg.shape[a] for a in attrs], dtype=np.int64))
        idx = np.flatnonzero(smask == t)
        answers = np.full(n_cells, np.nan)
        answers[cell[idx]] = vals[idx]
        if np.isnan(answers).any():
            continue  # only some cells of the query: they stay general rows
        spread = np.abs(vals[idx] - answers[cell[idx]])
        if np.any(spread > _AGREE * (1.0 + np.abs(vals[idx]))):
            raise InvariantDPError(
                "`values` give one invariant two different values (duplicated rows of "
                "`matrix` disagree): no histogram satisfies both."
            )
        margins.append((attrs, answers))
        used[idx] = True
    rest = np.flatnonzero(~used)
    return margins, mat[rest].toarray(), vals[rest]


def release_problem(shape, values, variance, margins=(), matrix=None, rhs=None) -> Problem:
    """The one-unit :class:`~._problem.Problem` of a release of ``prod(shape)`` noisy cells."""
    alg = EigenAlgebra(shape)
    vals = np.asarray(values, dtype=float).reshape(1, alg.k)
    var = np.asarray(variance, dtype=float)
    var = var.reshape(1) if var.size == 1 else var.reshape(1, alg.k)
    meas = [Measurement(0, tuple(range(alg.d)), np.array([0]), vals, var)]
    eqs = [
        Equality(0, tuple(attrs), np.array([0]), np.asarray(ans, dtype=float).reshape(1, -1))
        for attrs, ans in margins
    ]
    lin = []
    if matrix is not None and np.size(matrix):
        lin.append(Linear(0, 0, np.atleast_2d(matrix), np.asarray(rhs, dtype=float).reshape(-1)))
    return Problem(alg.shape, [np.array([-1])], meas, eqs, [], lin)


def solve_release(shape, values, variance, margins=(), matrix=None, rhs=None) -> Solution:
    """The GLS :class:`~._tree_passes.Solution` of a release (see :func:`release_problem`)."""
    return solve(release_problem(shape, values, variance, margins, matrix, rhs))


def query_estimates(sol: Solution, attrs) -> tuple[np.ndarray, np.ndarray]:
    """Estimates and variances of every cell of the marginal query ``attrs`` (C order).

    ``attrs`` of every attribute gives the cells themselves; no ``cells x k``
    matrix is formed on the scalar path.
    """
    attrs = tuple(int(a) for a in attrs)
    est = sol.alg.marginal(sol.x[0][:1], attrs)[0]
    var = query_variances(sol, 0, attrs)[0]
    return np.where(np.isfinite(var), est, np.nan), var


def rows_estimates(sol: Solution, rows) -> tuple[np.ndarray, np.ndarray]:
    """Estimates and covariance of ``rows @ cells`` (``inf`` rows/columns: not identified)."""
    rows = np.atleast_2d(np.asarray(rows, dtype=float))
    m, law = unit_law(sol, 0, 0)
    cov = rows_cov(sol, m, law, rows)
    est = rows @ sol.x[0][0].reshape(-1)
    return np.where(np.isfinite(np.diag(cov)), est, np.nan), cov


def estimate_release(shape, values, variance, margins=(), matrix=None, rhs=None, rows=None):
    """GLS estimate and covariance of a release's cells (or of ``rows @ cells``).

    Parameters
    ----------
    shape : tuple of int
        The product schema of the cells (C order).
    values : array_like
        The ``prod(shape)`` noisy cells.
    variance : float or array_like
        The noise variance, one value or one per cell.
    margins : sequence of (attrs, answers)
        Exact marginal queries (attribute indices, their answers in C order).
    matrix, rhs : array_like, optional
        Other exact equalities ``matrix @ cells = rhs``.
    rows : array_like, optional
        Linear combinations wanted (default: the cells).

    Returns
    -------
    estimate : numpy.ndarray
        ``rows @ cells`` estimated (NaN where not identified).
    cov : numpy.ndarray
        Their covariance (``inf`` on rows and columns not identified).
    solution : Solution
        The passes' arrays, for further queries.
    """
    sol = solve_release(shape, values, variance, margins, matrix, rhs)
    rows = np.eye(sol.alg.k) if rows is None else rows
    est, cov = rows_estimates(sol, rows)
    return est, cov, sol

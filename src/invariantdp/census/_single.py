r"""The GLS of one labelled release: a single unit, the detailed query, exact invariants.

The internal entry point for :func:`invariantdp.estimate` (issue 22): the same
implementation as :func:`invariantdp.census.gls`, on a one-unit hierarchy.
A release of ``k`` noisy cells (variance ``sigma^2``, one value or one per
cell) on a product schema ``shape`` (its label levels; a one-attribute schema
of ``k`` cells when the labels are not a full product), with invariants:

* whole marginal queries (a total, nested totals such as county totals in a
  county x sex x age table, one-way margins) stay in the fast algebra;
* any other equality ``C h = c`` takes the low-rank path.

:func:`marginal_constraints` sorts the rows of an invariant matrix
(``invariantdp.Invariants.matrix``) into the two kinds; :func:`estimate_release`
returns the estimate and covariance of the cells or of any linear
combinations of them (``inf`` on the rows and columns of combinations the
data do not identify).

References
----------
Issue 22, Section 1 ("Estimates with intervals for cells and sums"); Gong &
Meng, Section 3 (conditioning on the invariants).
"""

from __future__ import annotations

import numpy as np

from ..exceptions import InvariantDPError
from ._eigen import EigenAlgebra
from ._gls import Solution, solve
from ._problem import Equality, Linear, Measurement, Problem
from ._solution import rows_cov, unit_law

__all__ = ["estimate_release", "marginal_constraints", "release_problem"]


def marginal_constraints(shape, matrix, values):
    """Split constraint rows into whole marginal queries and the rest.

    Returns ``(margins, rest_matrix, rest_values)``: ``margins`` is a list of
    ``(attrs, answers)`` for every marginal query all of whose cells are rows
    of ``matrix`` (any order, any duplicates); the other rows are returned as
    they are.
    """
    alg = EigenAlgebra(shape)
    mat = np.atleast_2d(np.asarray(matrix, dtype=float))
    vals = np.asarray(values, dtype=float).reshape(-1)
    if mat.shape != (vals.size, alg.k):
        raise InvariantDPError(
            f"`matrix` must have {alg.k} columns and one row per value; got {mat.shape} and "
            f"{vals.size} values."
        )
    used = np.zeros(vals.size, dtype=bool)
    lookup = {row.tobytes(): i for i, row in enumerate(mat) if np.all((row == 0) | (row == 1))}
    margins = []
    for t in range(alg.n_spaces):
        attrs = tuple(a for a in range(alg.d) if t >> a & 1)
        rows = alg.query_rows(attrs)
        hit = [lookup.get(r.tobytes()) for r in rows]
        if all(h is not None for h in hit):
            margins.append((attrs, vals[hit]))
            used[hit] = True
    return margins, mat[~used], vals[~used]


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
    prob = release_problem(shape, values, variance, margins, matrix, rhs)
    sol: Solution = solve(prob)
    k = sol.alg.k
    rows = np.eye(k) if rows is None else np.atleast_2d(np.asarray(rows, dtype=float))
    m, law = unit_law(sol, 0, 0)
    cov = rows_cov(sol, m, law, rows)
    est = rows @ sol.x[0][0].reshape(-1)
    return np.where(np.isfinite(np.diag(cov)), est, np.nan), cov, sol

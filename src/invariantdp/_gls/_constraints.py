r"""Structural zeros and constraints: where they sit and what they change in the passes.

The constraints of a problem (:mod:`._problem`) are of three kinds: whole
marginal queries known exactly (:class:`~._problem.Equality`, which pin
eigenspaces and stay in the commuting algebra, see
:func:`~._unit_information.own_info`), structural zeros
(:class:`~._problem.Zeros`, query cells fixed at 0) and any other equality
(:class:`~._problem.Linear`).  The last two, and noise variances that differ
between the cells of one query, leave the algebra: this module collects them
per unit (:func:`constraints_of`), derives which units they affect (the units
themselves and their ancestors) and the subspace ``U`` they span
(:func:`constraint_structure`, the basis of the low-rank path of
:mod:`._low_rank`), and gives query cells made only of structural zeros their
exact variance 0 (:func:`exact_zeros`).  The passes set the estimate of a
structural zero to exactly 0 (:mod:`._tree_passes`).

References
----------
Cumings-Menon & Zhuravlev (2024), "Least squares estimation for hierarchical
data", arXiv:2404.13164 (constraints in the two passes).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ._dense_factors import query_rows
from ._eigenspace_rules import segment_starts
from ._eigenspaces import EigenAlgebra
from ._low_rank import correction_basis
from ._problem import Problem

__all__ = [
    "Constraints",
    "constraint_structure",
    "constraints_of",
    "exact_zeros",
    "per_cell_rows",
]


@dataclass
class Constraints:
    """A level's constraints that leave the commuting algebra, keyed by unit index."""

    zero_cells: dict = field(default_factory=dict)
    linear: dict = field(default_factory=dict)
    dense_units: set = field(default_factory=set)

    @property
    def units(self) -> set:
        return set(self.zero_cells) | set(self.linear) | self.dense_units


def per_cell_rows(var: np.ndarray) -> np.ndarray:
    """Rows of a per-cell variance array that differ between cells."""
    if var.ndim == 1:
        return np.zeros(var.shape[0], dtype=bool)
    return np.any(var != var[:, :1], axis=1)


def constraints_of(alg: EigenAlgebra, prob: Problem, level: int) -> Constraints:
    """Structural zeros (as detailed cells), other equalities and per-cell noise of a level."""
    out = Constraints()
    for z in prob.at(prob.zeros, level):
        rows = query_rows(alg.shape, z.attrs, z.recodes).astype(bool)
        for i, u in enumerate(z.units):
            cells = np.flatnonzero(rows[z.mask[i]].any(axis=0))
            if cells.size:
                prev = out.zero_cells.get(int(u), np.zeros(0, dtype=np.int64))
                out.zero_cells[int(u)] = np.union1d(prev, cells)
    for c in prob.at(prob.linear, level):
        out.linear.setdefault(int(c.unit), []).append((c.matrix, c.values))
    for e in prob.at(prob.equalities, level):
        if e.recodes:  # a recoded invariant: its rows, outside the scalar algebra
            rows = query_rows(alg.shape, e.attrs, e.recodes)
            for i, u in enumerate(e.units):
                out.linear.setdefault(int(u), []).append((rows, e.values[i]))
    for m in prob.at(prob.measurements, level):
        if m.recodes:  # a recoded query's information is dense on the whole space
            out.dense_units.update(int(u) for u in m.units)
            continue
        out.dense_units.update(int(u) for u in m.units[per_cell_rows(m.variance)])
    return out


def constraint_structure(prob: Problem, alg: EigenAlgebra, constraints: list):
    """Children segments, affected units and the correction basis of a problem."""
    n_lev = len(prob.sizes)
    starts = [None] + [
        segment_starts(prob.parents[lev], prob.sizes[lev - 1]) for lev in range(1, n_lev)
    ]
    affected = [np.zeros(n, dtype=bool) for n in prob.sizes]
    vectors, full = [], False
    for lev, con in enumerate(constraints):
        affected[lev][sorted(con.units)] = True
        full = full or bool(con.dense_units)
        cells = set()
        for c in con.zero_cells.values():
            cells.update(int(i) for i in c)
        if cells:
            vectors.append(np.eye(alg.k)[sorted(cells)])
        for rows in con.linear.values():
            vectors.extend(mat for mat, _ in rows)
    for lev in range(n_lev - 1, 0, -1):
        affected[lev - 1][prob.parents[lev][affected[lev]]] = True
    basis = None
    if any(a.any() for a in affected):
        vec = np.vstack(vectors) if vectors else np.zeros((0, alg.k))
        basis = correction_basis(alg, vec, full)
    return starts, affected, basis


def exact_zeros(sol, level, units, attrs, var):
    """Query cells made only of a unit's structural zeros have variance exactly 0."""
    zeros = sol.zero_cells[level] if sol.zero_cells else {}
    if not zeros:
        return var
    rows = sol.alg.query_rows(attrs).astype(bool)
    for i, u in enumerate(units):
        cells = zeros.get(int(u))
        if cells is not None:
            inside = np.zeros(sol.alg.k, dtype=bool)
            inside[cells] = True
            var[i, ~(rows & ~inside[None, :]).any(axis=1)] = 0.0
    return var

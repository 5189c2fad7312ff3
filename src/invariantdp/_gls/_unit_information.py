r"""What each unit's own measurements and constraints say about its histogram.

For a level: the information on each eigenspace,
:math:`\lambda_{u,T} = \sum_{q : T \subseteq S_q} w_{u,q} \prod_{a \notin S_q} n_a`,
the information vector :math:`\eta_u = \sum_q w_{u,q} Q_q^\top y_{u,q}`, the
eigenspaces pinned by equality invariants and the values they pin them to,
and, for the units whose constraints leave the commuting algebra (structural
zeros, other equalities, noise variances that differ between the cells of
one query), those constraints as rows over the detailed cells
(:func:`~._constraints.constraints_of`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..exceptions import InvariantDPError
from ._constraints import Constraints, constraints_of, per_cell_rows
from ._dense_factors import query_rows
from ._eigenspaces import EigenAlgebra
from ._problem import Problem

__all__ = ["OwnInfo", "own_info"]

#: invariants of a unit that disagree by more than this (relative) are refused
_CONSISTENCY = 1e-8


@dataclass
class OwnInfo:
    """One level's own information; ``pin`` is None when nothing is pinned."""

    lam: np.ndarray
    eta: np.ndarray
    pinned: np.ndarray
    pin: np.ndarray | None
    constraints: Constraints
    dense_info: dict = field(default_factory=dict)

    @property
    def zero_cells(self) -> dict:
        return self.constraints.zero_cells

    @property
    def linear(self) -> dict:
        return self.constraints.linear

    @property
    def general(self) -> set:
        """Units whose own constraints leave the commuting algebra."""
        return self.constraints.units


def _rows(units: np.ndarray, n: int):
    """``units`` as an index: a slice when it is every unit once, in order (the usual case)."""
    if units.size == n and (n == 0 or (units[0] == 0 and np.all(np.diff(units) == 1))):
        return slice(None)
    return units


def own_info(alg: EigenAlgebra, prob: Problem, level: int) -> OwnInfo:
    """The :class:`OwnInfo` of ``level``."""
    n = prob.sizes[level]
    lam = np.zeros((n, alg.n_spaces))
    eta = np.zeros((n, *alg.shape))
    pinned = np.zeros((n, alg.n_spaces), dtype=bool)
    out = OwnInfo(lam, eta, pinned, None, constraints_of(alg, prob, level))
    for m in prob.at(prob.measurements, level):
        if m.recodes:  # outside the scalar algebra: dense information (general path)
            _recoded_information(alg, m, eta, out.dense_info)
            continue
        loc = _rows(m.units, n)
        y, var = m.values, m.variance
        per_cell = per_cell_rows(var)
        w = 1.0 / (var if var.ndim == 1 else var[:, 0])
        gain = w[:, None] * (alg.query_mask(m.attrs) * alg.query_factor(m.attrs))
        if per_cell.any():
            gain[per_cell] = 0.0  # in the dense information below instead
        lam[loc] += gain
        wy = y * (w[:, None] if var.ndim == 1 else 1.0 / var)
        if isinstance(loc, slice):
            eta += alg.spread(wy, m.attrs)
        else:
            eta[loc] += alg.spread(wy, m.attrs)
        for i in np.flatnonzero(per_cell):
            rows = alg.query_rows(m.attrs)
            u = int(m.units[i])
            out.dense_info[u] = out.dense_info.get(u, 0.0) + (rows.T / var[i]) @ rows
    for e in prob.at(prob.equalities, level):
        if e.recodes:
            continue  # a linear constraint (see constraints_of)
        if out.pin is None:
            out.pin = np.zeros((n, *alg.shape))
        pin, loc = out.pin, _rows(e.units, n)
        target = alg.spread(e.values, e.attrs) / alg.query_factor(e.attrs)
        mask = alg.query_mask(e.attrs)
        old = pinned[loc] & mask
        if np.any(old):
            diff = alg.apply(target - pin[loc], old.astype(float))
            scale = 1.0 + np.abs(e.values).max(axis=1)
            bad = np.abs(diff).reshape(scale.size, -1).max(axis=1) > _CONSISTENCY * scale
            if np.any(bad):
                u = int(np.arange(n)[loc][np.argmax(bad)])
                raise InvariantDPError(
                    f"the equality invariants of unit {u} of level {level} are inconsistent: "
                    "two of them give different totals for the same cells."
                )
        new = mask & ~pinned[loc]
        pin[loc] += alg.apply(target, new.astype(float))
        pinned[loc] |= mask
    return out


def _recoded_information(alg, m, eta, dense_info) -> None:
    """A recoded query's information ``Q^T W Q`` and vector ``Q^T W y``, unit by unit."""
    rows = query_rows(alg.shape, m.attrs, m.recodes)
    var = m.variance if m.variance.ndim == 2 else m.variance[:, None]
    var = np.broadcast_to(var, m.values.shape)
    for i, u in enumerate(m.units):
        u = int(u)
        dense_info[u] = dense_info.get(u, 0.0) + (rows.T / var[i]) @ rows
        eta[u] += (rows.T @ (m.values[i] / var[i])).reshape(alg.shape)

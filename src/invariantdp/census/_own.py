r"""What each unit's own measurements and constraints say about its histogram.

For a level: the information on each eigenspace,
:math:`\lambda_{u,T} = \sum_{q : T \subseteq S_q} w_{u,q} \prod_{a \notin S_q} n_a`,
the information vector :math:`\eta_u = \sum_q w_{u,q} Q_q^\top y_{u,q}`, the
eigenspaces pinned by equality invariants and the values they pin them to,
and, for the units whose constraints leave the commuting algebra (structural
zeros, other equalities, noise variances that differ between the cells of
one query), those constraints as rows over the detailed cells.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..exceptions import InvariantDPError
from ._eigen import EigenAlgebra
from ._problem import Problem

__all__ = ["OwnInfo", "own_info"]

#: invariants of a unit that disagree by more than this (relative) are refused
_CONSISTENCY = 1e-8


@dataclass
class OwnInfo:
    """One level's own information; the dicts are keyed by unit index."""

    lam: np.ndarray
    eta: np.ndarray
    pinned: np.ndarray
    pin: np.ndarray
    zero_cells: dict = field(default_factory=dict)
    linear: dict = field(default_factory=dict)
    dense_info: dict = field(default_factory=dict)

    @property
    def general(self) -> set:
        """Units whose own constraints leave the commuting algebra."""
        return set(self.zero_cells) | set(self.linear) | set(self.dense_info)


def _per_cell(var: np.ndarray) -> np.ndarray:
    """Rows of a per-cell variance array that differ between cells."""
    if var.ndim == 1:
        return np.zeros(var.shape[0], dtype=bool)
    return np.any(var != var[:, :1], axis=1)


def own_info(alg: EigenAlgebra, prob: Problem, level: int, units=None) -> OwnInfo:
    """The :class:`OwnInfo` of ``level`` (restricted to the index array ``units`` if given).

    With ``units`` (sorted global indices of a contiguous block), the result is
    indexed by position in the block: the subtree tasks of the Dask scheduler.
    """
    n = prob.sizes[level] if units is None else units.size
    offset = 0 if units is None else int(units[0]) if units.size else 0
    lam = np.zeros((n, alg.n_spaces))
    eta = np.zeros((n, *alg.shape))
    pinned = np.zeros((n, alg.n_spaces), dtype=bool)
    pin = np.zeros((n, *alg.shape))
    out = OwnInfo(lam, eta, pinned, pin)

    def local(idx):
        loc = idx - offset
        keep = (loc >= 0) & (loc < n)
        return loc[keep], keep

    for m in prob.at(prob.measurements, level):
        loc, keep = local(m.units)
        if not loc.size:
            continue
        y, var = m.values[keep], m.variance[keep]
        per_cell = _per_cell(var)
        w = 1.0 / (var if var.ndim == 1 else var[:, 0])
        uniform = ~per_cell
        lam[loc[uniform]] += w[uniform, None] * (
            alg.query_mask(m.attrs) * alg.query_factor(m.attrs)
        )
        wy = y * (w[:, None] if var.ndim == 1 else 1.0 / var)
        eta[loc] += alg.spread(wy, m.attrs)
        rows = alg.query_rows(m.attrs)
        for i in np.flatnonzero(per_cell):
            add = (rows.T / var[i]) @ rows
            u = int(loc[i])
            out.dense_info[u] = out.dense_info.get(u, 0.0) + add
    for e in prob.at(prob.equalities, level):
        loc, keep = local(e.units)
        if not loc.size:
            continue
        target = alg.spread(e.values[keep], e.attrs) / alg.query_factor(e.attrs)
        mask = alg.query_mask(e.attrs)
        old = pinned[loc] & mask
        if np.any(old):
            diff = alg.apply(target - pin[loc], old.astype(float))
            scale = 1.0 + np.abs(e.values[keep]).max(axis=1)
            bad = np.abs(diff).reshape(loc.size, -1).max(axis=1) > _CONSISTENCY * scale
            if np.any(bad):
                u = int(loc[np.argmax(bad)]) + offset
                raise InvariantDPError(
                    f"the equality invariants of unit {u} of level {level} are inconsistent: "
                    "two of them give different totals for the same cells."
                )
        new = mask & ~pinned[loc]
        pin[loc] += alg.apply(target, new.astype(float))
        pinned[loc] |= mask
    for z in prob.at(prob.zeros, level):
        loc, keep = local(z.units)
        rows = alg.query_rows(z.attrs).astype(bool)
        for i, u in zip(np.flatnonzero(keep), loc, strict=True):
            cells = np.flatnonzero(rows[z.mask[i]].any(axis=0))
            if cells.size:
                prev = out.zero_cells.get(int(u), np.zeros(0, dtype=np.int64))
                out.zero_cells[int(u)] = np.union1d(prev, cells)
    for c in prob.at(prob.linear, level):
        u = c.unit - offset
        if 0 <= u < n:
            out.linear.setdefault(int(u), []).append((c.matrix, c.values))
    return out

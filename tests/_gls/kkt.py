"""A dense constrained GLS, written independently of the tree passes: the tests' reference.

Unknowns: the stacked histograms of the leaves (units without children).
Each measurement is a row block ``(a_u kron Q_S)`` with weight ``1/variance``;
equality invariants, structural zeros (every detailed cell of the unit inside
a zero query cell) and linear constraints are exact rows.  The estimate
solves the KKT system through the null space of the constraint rows:
``X = X0 + K (K^T A^T W A K)^{-1} K^T A^T W (y - A X0)``, covariance
``K (K^T A^T W A K)^{-1} K^T``.  Directions of ``K`` that no measurement
reaches are returned as ``unidentified`` (estimability checks).
"""

from __future__ import annotations

import numpy as np
import scipy.linalg as sla


def query_matrix(shape, attrs, recodes=None):
    """The 0/1 matrix of a query; ``recodes[a]`` (groups x levels) replaces the identity."""
    recodes = recodes or {}
    mats = [
        np.asarray(recodes[a], float)
        if a in recodes
        else np.eye(n)
        if a in attrs
        else np.ones((1, n))
        for a, n in enumerate(shape)
    ]
    out = np.ones((1, 1))
    for m in mats:
        out = np.kron(out, m)
    return out


def leaf_indicators(parents, sizes):
    """``ind[level]``: (units x leaves) 0/1 matrix of the leaves below each unit."""
    n_lev = len(sizes)
    children = [np.zeros(sizes[lev], dtype=int) for lev in range(n_lev)]
    for lev in range(1, n_lev):
        np.add.at(children[lev - 1], parents[lev], 1)
    leaves = [(lev, u) for lev in range(n_lev) for u in range(sizes[lev]) if children[lev][u] == 0]
    index = {leaf: i for i, leaf in enumerate(leaves)}
    ind = [None] * n_lev
    for lev in range(n_lev - 1, -1, -1):
        mat = np.zeros((sizes[lev], len(leaves)))
        for u in range(sizes[lev]):
            if (lev, u) in index:
                mat[u, index[(lev, u)]] = 1.0
        if lev + 1 < n_lev:
            np.add.at(mat, parents[lev + 1], ind[lev + 1])
        ind[lev] = mat
    return ind, len(leaves)


class DenseGLS:
    """The reference solution of a :class:`invariantdp._gls.Problem`."""

    def __init__(self, prob):
        shape = prob.shape
        k = int(np.prod(shape))
        self.k = k
        self.shape = shape
        self.ind, n_leaves = leaf_indicators(prob.parents, prob.sizes)
        n = n_leaves * k
        a_rows, y, w, c_rows, c_vals = [], [], [], [], []

        def lift(level, unit, mat):
            return np.kron(self.ind[level][unit][None, :], mat)

        for m in prob.measurements:
            q = query_matrix(shape, m.attrs, m.recodes)
            for i, u in enumerate(m.units):
                a_rows.append(lift(m.level, u, q))
                y.append(m.values[i])
                var = np.broadcast_to(m.variance[i], (q.shape[0],))
                w.append(1.0 / var)
        for e in prob.equalities:
            q = query_matrix(shape, e.attrs, e.recodes)
            for i, u in enumerate(e.units):
                c_rows.append(lift(e.level, u, q))
                c_vals.append(e.values[i])
        for z in prob.zeros:
            q = query_matrix(shape, z.attrs, z.recodes)
            for i, u in enumerate(z.units):
                cells = np.flatnonzero(q[z.mask[i]].sum(axis=0) > 0)
                if cells.size:
                    c_rows.append(lift(z.level, u, np.eye(k)[cells]))
                    c_vals.append(np.zeros(cells.size))
        for c in prob.linear:
            c_rows.append(lift(c.level, c.unit, c.matrix))
            c_vals.append(c.values)
        a = np.vstack(a_rows) if a_rows else np.zeros((0, n))
        y = np.concatenate(y) if y else np.zeros(0)
        w = np.concatenate(w) if w else np.zeros(0)
        if c_rows:
            c = np.vstack(c_rows)
            cv = np.concatenate(c_vals)
            x0 = np.linalg.lstsq(c, cv, rcond=None)[0]
            basis = sla.null_space(c, rcond=1e-12)
        else:
            x0 = np.zeros(n)
            basis = np.eye(n)
        info = basis.T @ (a.T * w) @ a @ basis
        ev, vec = np.linalg.eigh(info)
        pos = ev > 1e-10 * max(ev.max(initial=0.0), 1e-300)
        kp = basis @ vec[:, pos]
        self.unidentified = basis @ vec[:, ~pos]
        self.cov = (kp / ev[pos]) @ kp.T
        self.x = x0 + kp @ ((kp.T @ (a.T @ (w * (y - a @ x0)))) / ev[pos])

    def _lift(self, level, unit, mat):
        return np.kron(self.ind[level][unit][None, :], mat)

    def unit(self, level, unit):
        """``(estimate, covariance)`` of a unit's detailed histogram."""
        lift = self._lift(level, unit, np.eye(self.k))
        return lift @ self.x, lift @ self.cov @ lift.T

    def query(self, level, units, attrs, recodes=None):
        """``(estimate, covariance, identified)`` of query ``attrs`` summed over ``units``."""
        q = query_matrix(self.shape, attrs, recodes)
        row = sum(self._lift(level, u, q) for u in np.atleast_1d(units))
        identified = np.linalg.norm(row @ self.unidentified, axis=1) < 1e-8
        return row @ self.x, row @ self.cov @ row.T, identified

    def slice(self, level, units, attrs, recodes=None):
        """``(estimates, covariance)`` of a query's cells over ``units``, unit-major."""
        q = query_matrix(self.shape, attrs, recodes)
        rows = np.vstack([self._lift(level, u, q) for u in units])
        return rows @ self.x, rows @ self.cov @ rows.T

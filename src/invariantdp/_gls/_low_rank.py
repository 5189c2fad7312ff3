r"""The low-rank path: units whose constraints leave the commuting algebra.

A structural zero, an equality that is not a whole marginal query, or noise
variances that differ between the cells of one query make a unit's
information a non-scalar operator on the eigenspaces.  All such constraint
rows (over the detailed cells) span, together with their projections on every
:math:`E_T`, one subspace ``U`` invariant under the whole commuting algebra
(:func:`correction_basis`; its orthonormal basis ``B`` is built per
eigenspace, each column labelled with its ``T``).  On :math:`U^\perp` every
unit stays in the scalar algebra; on ``U`` the affected units carry a dense
generalised Gaussian (:mod:`._generalized_gaussian`) of dimension ``M = dim U``.  When
``M`` reaches ``k`` this is the dense fallback (a dense solve per affected
unit, the Bureau's approach); otherwise it is a rank-``M`` correction.

Which units are affected: those with such constraints and their ancestors
(bottom-up), and in the top-down pass the children of every affected unit
(their gains and final covariances on ``U``).

References
----------
Cumings-Menon & Zhuravlev (2024), arXiv:2404.13164 (equality constraints in
the passes); Rao, C. R. (1973), *Linear Statistical Inference*, Sec. 4i
(singular dispersion matrices).
"""

from __future__ import annotations

import numpy as np

from ._eigenspaces import EigenAlgebra
from ._generalized_gaussian import GGauss, gsum, image, orth, posterior

__all__ = ["Basis", "correction_basis", "dense_bottom_up", "dense_top_down", "restrict"]


class Basis:
    """An orthonormal basis ``B`` (``k x M``) of ``U``, with the eigenspace label of each column."""

    def __init__(self, mat: np.ndarray, labels: np.ndarray, k: int):
        self.mat = mat
        self.labels = labels
        self.k = k

    @property
    def dim(self) -> int:
        return self.mat.shape[1]

    @property
    def dense(self) -> bool:
        return self.dim == self.k

    def coords(self, x: np.ndarray) -> np.ndarray:
        """``B^T x`` for flattened histograms (last axis ``k``)."""
        return x.reshape(*x.shape[:-1], self.k) @ self.mat if x.ndim > 1 else self.mat.T @ x

    def diag(self, coef: np.ndarray) -> np.ndarray:
        """A scalar-algebra operator with eigen-coefficients ``coef``, in ``U`` coordinates."""
        return np.diag(coef[self.labels])


def correction_basis(alg: EigenAlgebra, vectors: np.ndarray, full: bool) -> Basis:
    """The basis of the smallest algebra-invariant subspace holding ``vectors`` (rows).

    ``full`` (a unit with per-cell noise variances) gives the whole space.
    """
    mats, labels = [], []
    flat = np.asarray(vectors, dtype=float).reshape(-1, alg.k)
    for t in range(alg.n_spaces):
        if full:
            b = alg.basis(t)
        elif flat.shape[0]:
            proj = alg.apply(flat.reshape(-1, *alg.shape), np.eye(alg.n_spaces)[t])
            b = orth(proj.reshape(-1, alg.k).T, scale=float(np.abs(flat).max()))
            if b.shape[1] >= alg.dims[t]:
                b = alg.basis(t)  # the whole eigenspace: its exact Kronecker basis
        else:
            b = np.zeros((alg.k, 0))
        mats.append(b)
        labels.append(np.full(b.shape[1], t, dtype=np.int64))
    return Basis(np.hstack(mats), np.concatenate(labels), alg.k)


def restrict(basis: Basis, z: np.ndarray, v: np.ndarray, sub: GGauss | None) -> GGauss:
    """A unit's subtree law on ``U``: its dense law if it has one, else its scalars."""
    if sub is not None:
        return sub
    return GGauss.diagonal(basis.coords(z.reshape(-1)), v[basis.labels])


def dense_bottom_up(basis, own, unit, children: list, where: str) -> GGauss:
    """The subtree law on ``U`` of an affected unit: children's sum combined with its own data.

    ``children`` holds the children's laws on ``U`` (none for a leaf).
    """
    m = basis.dim
    lam = own.lam[unit][basis.labels]
    pin_cols = own.pinned[unit][basis.labels]
    info = np.diag(np.where(pin_cols, 0.0, lam))
    if unit in own.dense_info:
        info = info + basis.mat.T @ own.dense_info[unit] @ basis.mat
    eta = basis.coords(own.eta[unit].reshape(-1))
    rows = [np.eye(m)[pin_cols]]
    pinned_to = basis.coords(own.pin[unit].reshape(-1)) if own.pin is not None else np.zeros(m)
    vals = [pinned_to[pin_cols]]
    if unit in own.zero_cells:
        cells = own.zero_cells[unit]
        rows.append(basis.mat[cells])
        vals.append(np.zeros(cells.size))
    for mat, val in own.linear.get(unit, []):
        rows.append(mat @ basis.mat)
        vals.append(val)
    obs = [gsum(children)] if children else []
    return posterior(
        m,
        obs,
        info,
        eta,
        np.vstack(rows),
        np.concatenate(vals),
        what=f"the constraints of {where} and the exact values below it",
    )


def dense_top_down(parent_final: GGauss, x_parent_u: np.ndarray, laws: list[GGauss], where: str):
    r"""Children of an affected unit: ``[(x_U, G, Omega, F)]`` on ``U``.

    Each child's law given ``h_p = v`` combines its subtree law with "``v``
    minus the siblings' subtree laws"; the mean at ``v = x_p`` is its final
    estimate, the Jacobian in ``v`` its gain ``G``, the covariance
    :math:`\Omega` its conditional covariance, and
    :math:`F = G F_p G^\top + \Omega` its final covariance.
    """
    m = x_parent_u.size
    c = len(laws)
    exact_zero = GGauss(np.zeros(m), np.zeros((m, m)), np.zeros((m, 0)))
    pre, suf = [exact_zero], [exact_zero]
    for g in laws[:-1]:
        pre.append(gsum([pre[-1], g]))
    for g in laws[:0:-1]:
        suf.append(gsum([suf[-1], g]))
    suf = suf[::-1]
    out = []
    for i in range(c):
        rest = gsum([pre[i], suf[i]])
        own_obs = GGauss(
            np.column_stack([laws[i].mean, np.zeros((m, m))]), laws[i].cov, laws[i].null
        )
        rest_obs = GGauss(np.column_stack([x_parent_u - rest.mean, np.eye(m)]), rest.cov, rest.null)
        post = posterior(
            m, [own_obs, rest_obs], what=f"the exact values of the children of {where}"
        )
        x_u, gain = post.mean[:, 0], post.mean[:, 1:]
        omega = GGauss(np.zeros(m), post.cov, post.null)
        final = gsum([image(GGauss(np.zeros(m), parent_final.cov, parent_final.null), gain), omega])
        final.mean = x_u
        out.append((x_u, gain, omega, final))
    return out

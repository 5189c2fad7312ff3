r"""Generalised Gaussian laws: covariances with exact (zero) and unidentified (infinite) directions.

A :class:`GGauss` on :math:`\mathbb R^m` is the limit, as :math:`t \to \infty`,
of :math:`N(z, V + t N N^\top)`: ``N`` (orthonormal columns) spans the
directions about which nothing is known, and ``V`` (positive semi-definite,
``V N = 0``) is the covariance on the rest, singular where a linear function is
known exactly (an equality invariant).  Subtree posteriors of the GLS tree
passes, their sums and their conditionings are all of this form; this module
holds the three operations the dense (low-rank) path of :mod:`._tree_passes` needs:

* :func:`gsum` -- the law of a sum of independent variables;
* :func:`image` -- the law of ``A h``;
* :func:`posterior` -- the law of ``h`` given independent generalised-Gaussian
  observations of it, finite information ``(J, eta)`` and exact linear
  constraints ``C h = c``.

Means may carry several columns (right-hand sides): everything is linear in
them, which gives the gains of the top-down pass as Jacobians.

Numerical rank.  Exact zeros and infinities are decided by eigen- and singular
values below ``RTOL`` times the largest: information (or variance) ratios up
to about ``1e11`` are resolved, far beyond the range of census noise
variances.  What is left of a direction that a projection or a constraint
removed is rounding, not a tiny variance or information: below ``RTOL``
(covariance entries, :func:`_clean`) or ``ROUNDING`` (information left on
the constraints' null space) of the operator it came from, it is 0.

References
----------
Rao, C. R. (1973), *Linear Statistical Inference*, Sec. 4i (least squares with
singular dispersion matrices).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..exceptions import InvariantDPError

__all__ = ["RTOL", "GGauss", "gsum", "image", "orth", "posterior"]

#: relative threshold of the numerical rank decisions
RTOL = 1e-11
#: below this fraction of an operator's largest entry a result computed from it is rounding
ROUNDING = 1e-13


@dataclass
class GGauss:
    """``N(mean, cov + inf * null null^T)``; ``mean`` is ``(m,)`` or ``(m, p)``."""

    mean: np.ndarray
    cov: np.ndarray
    null: np.ndarray

    @property
    def dim(self) -> int:
        return self.cov.shape[0]

    @classmethod
    def diagonal(cls, mean, var) -> GGauss:
        """Independent coordinates with variances ``var`` in ``[0, inf]``."""
        var = np.asarray(var, dtype=float)
        inf = np.isinf(var)
        null = np.eye(var.size)[:, inf]
        return cls(np.asarray(mean, dtype=float), np.diag(np.where(inf, 0.0, var)), null)

    def variance_of(self, rows) -> np.ndarray:
        """``r^T cov r`` for each row ``r`` of ``rows``; ``inf`` where ``r`` meets ``null``."""
        rows = np.atleast_2d(rows)
        var = np.einsum("ij,jk,ik->i", rows, self.cov, rows)
        if self.null.shape[1]:
            hit = np.linalg.norm(rows @ self.null, axis=1)
            scale = np.maximum(np.linalg.norm(rows, axis=1), 1e-300)
            var = np.where(hit > np.sqrt(RTOL) * scale, np.inf, var)
        return var

    def cov_of(self, rows) -> np.ndarray:
        """``R cov R^T``, with ``inf`` on the rows (and columns) that meet ``null``."""
        rows = np.atleast_2d(rows)
        out = rows @ self.cov @ rows.T
        if self.null.shape[1]:
            hit = np.linalg.norm(rows @ self.null, axis=1)
            bad = hit > np.sqrt(RTOL) * np.maximum(np.linalg.norm(rows, axis=1), 1e-300)
            out[bad, :] = np.inf
            out[:, bad] = np.inf
        return out


def orth(a: np.ndarray, scale: float = 1.0) -> np.ndarray:
    """An orthonormal basis of the column space of ``a``.

    Singular values below ``RTOL * scale`` are rounding: ``scale`` is the
    size of the operator that produced ``a`` (1 for stacked orthonormal
    bases), not of ``a`` itself, so that a map which sends every unidentified
    direction to (numerically) zero yields no unidentified direction.
    """
    if a.size == 0 or a.shape[1] == 0:
        return np.zeros((a.shape[0], 0))
    u, s, _ = np.linalg.svd(a, full_matrices=False)
    return u[:, s > RTOL * scale * max(a.shape)]


def _complement(null: np.ndarray, m: int) -> np.ndarray:
    """An orthonormal basis of the orthogonal complement of ``span(null)``."""
    if null.shape[1] == 0:
        return np.eye(m)
    q, _ = np.linalg.qr(null, mode="complete")
    return q[:, null.shape[1] :]


def _clean(cov: np.ndarray, null: np.ndarray) -> np.ndarray:
    """``cov`` projected off ``null`` and symmetrised; rounding of the projection set to 0.

    What the projection leaves of a direction that ``null`` removes is
    rounding (about ``1e-16`` of the removed variance): kept, it would be
    taken for a tiny positive variance, i.e. a huge information, by
    :func:`_as_observation`, and would make every finite information look
    like none (a rank decision relative to the largest).  Entries below
    ``RTOL`` times the largest entry before the projection are exactly 0.
    """
    scale = float(np.abs(cov).max(initial=0.0))
    if null.shape[1]:
        p = np.eye(cov.shape[0]) - null @ null.T
        cov = p @ cov @ p
    cov = 0.5 * (cov + cov.T)
    cov[np.abs(cov) <= RTOL * scale] = 0.0
    return cov


def gsum(laws: list[GGauss]) -> GGauss:
    """The law of the sum of independent generalised Gaussians (same coordinates)."""
    mean = sum(g.mean for g in laws)
    null = orth(np.hstack([g.null for g in laws]))
    cov = _clean(sum(g.cov for g in laws), null)
    return GGauss(mean, cov, null)


def image(g: GGauss, a: np.ndarray) -> GGauss:
    """The law of ``a @ h`` for ``h ~ g``."""
    null = orth(a @ g.null, scale=max(float(np.linalg.norm(a, 2)) if a.size else 0.0, 1e-300))
    return GGauss(a @ g.mean, _clean(a @ g.cov @ a.T, null), null)


def _as_observation(g: GGauss):
    """Information, information vector, constraint rows and values of an observation ``g``."""
    m = g.dim
    q = _complement(g.null, m)
    mu, w = np.linalg.eigh(q.T @ g.cov @ q)
    big = mu.max() if mu.size else 0.0
    zero = mu <= RTOL * big if big > 0 else np.ones(mu.size, dtype=bool)
    qz, qp = q @ w[:, zero], q @ w[:, ~zero]
    info = (qp / mu[~zero]) @ qp.T
    return info, info @ g.mean, qz.T, qz.T @ g.mean


def posterior(
    m: int,
    observations=(),
    info=None,
    eta=None,
    constraints=None,
    values=None,
    check_columns=1,
    what="the equality constraints",
) -> GGauss:
    r"""The law of ``h`` given observations, information and exact constraints.

    Maximises :math:`-\tfrac12 h^\top \Lambda h + h^\top \eta` over
    :math:`\{h : E h = e\}`, where the observations (each ``y = h + e``,
    ``e ~ g`` independent) contribute their finite information and their exact
    directions as constraints.  The solution is parametrised as
    ``h = h0 + K t`` (``K`` an orthonormal basis of ``null(E)``); directions
    of ``K`` without information are returned as ``null`` (not identified).

    Parameters
    ----------
    m : int
        Dimension of ``h``.
    observations : sequence of GGauss
    info : (m, m) array, optional
        Finite information (positive semi-definite).
    eta : (m,) or (m, p) array, optional
    constraints : (r, m) array, optional
        Rows of exact constraints ``C h = c``.
    values : (r,) or (r, p) array, optional
    check_columns : int
        The first ``check_columns`` right-hand sides are data: their
        constraints must be consistent (others are Jacobian columns).
    what : str
        Names the constraints in the error raised when they are inconsistent.

    Returns
    -------
    GGauss
        With ``mean`` of the shape of the right-hand sides.
    """
    lam = np.zeros((m, m)) if info is None else np.array(info, dtype=float)
    vec = None if eta is None else np.array(eta, dtype=float)
    rows = [np.zeros((0, m))] if constraints is None else [np.atleast_2d(constraints)]
    vals = [] if values is None else [np.asarray(values, dtype=float)]
    for g in observations:
        i, e, r, v = _as_observation(g)
        lam += i
        vec = e if vec is None else vec + e
        rows.append(r)
        vals.append(v)
    rhs_shape = vec.shape[1:] if vec is not None else (vals[0].shape[1:] if vals else ())
    if vec is None:
        vec = np.zeros((m, *rhs_shape))
    e_mat = np.vstack(rows)
    e_val = np.concatenate([v.reshape(v.shape[0], *rhs_shape) for v in vals]) if vals else None
    if e_mat.shape[0]:
        u, s, vt = np.linalg.svd(e_mat, full_matrices=True)
        rank = int(np.sum(s > RTOL * s[0] * max(e_mat.shape))) if s.size and s[0] > 0 else 0
        coef = (u[:, :rank].T @ e_val) / (s[:rank].reshape(rank, *(1,) * len(rhs_shape)))
        h0 = vt[:rank].T @ coef
        resid = e_mat @ h0 - e_val
        data = resid if not rhs_shape else resid[..., :check_columns]
        given = e_val if not rhs_shape else e_val[..., :check_columns]
        if data.size and np.max(np.abs(data)) > 1e-7 * (1.0 + np.max(np.abs(given))):
            raise InvariantDPError(
                f"{what} are inconsistent: no histogram satisfies them all (largest violation "
                f"{float(np.max(np.abs(data))):.3g})."
            )
        k_basis = vt[rank:].T
    else:
        h0 = np.zeros((m, *rhs_shape))
        k_basis = np.eye(m)
    a = k_basis.T @ lam @ k_basis
    a = 0.5 * (a + a.T)
    ev, y = np.linalg.eigh(a) if a.size else (np.zeros(0), np.zeros((0, 0)))
    big = ev.max() if ev.size else 0.0
    # the information left on ker E can be rounding only (every direction measured is
    # constrained): judged against the whole information, not against itself
    floor = ROUNDING * float(np.abs(lam).max(initial=0.0))
    pos = ev > max(RTOL * big, floor) if big > 0 else np.zeros(ev.size, dtype=bool)
    kp = k_basis @ y[:, pos]
    b = kp.T @ (vec - lam @ h0)
    scaled = b / ev[pos].reshape(-1, *(1,) * len(rhs_shape))
    mean = h0 + kp @ scaled
    null = k_basis @ y[:, ~pos]
    cov = (kp / ev[pos]) @ kp.T
    return GGauss(mean, _clean(cov, np.zeros((m, 0))), null)

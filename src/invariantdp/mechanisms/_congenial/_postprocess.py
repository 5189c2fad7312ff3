r"""Section 4 of Gong & Meng (2020): optimisation-based post-processing, for comparison.

Instead of conditioning the mechanism on :math:`S^*`, post-processing maps an
unconstrained noisy release :math:`m` to a point of :math:`S^*`:
:func:`l2_postprocess` (orthogonal or non-negative L2 projection) and
:func:`l1_postprocess` (L1 minimisation), whose error laws and privacy
levels Example 4.1 compares with the congenial release
(:func:`l1_privacy_level`).  These functions draw no noise.

References
----------
Gong & Meng (2020), Sec. 3 (NNL2), Sec. 4 (Eq. 4.1, Example 4.1, Table 2)
and Appendix A.
"""

from __future__ import annotations

import numpy as np
from scipy import optimize

from ..._linalg import AffineSubspace
from ..._validation import InvariantDPError, check_finite_array, check_positive
from ._targets import (
    as_inequalities,
    cell_bounds,
    check_invariants,
    dense_invariants,
    independent_rows,
)

__all__ = ["l1_postprocess", "l1_privacy_level", "l2_postprocess"]


def _releases_and_invariants(m, invariants):
    """``(m, n, A, a)``: the releases (cells last) and independent rows of the invariants."""
    m = check_finite_array("m", m)
    if m.ndim == 0:
        raise InvariantDPError("`m` must have at least one dimension.")
    n = m.shape[-1]
    check_invariants(invariants)
    if invariants.values is None:
        raise InvariantDPError("`invariants` must carry values to post-process onto.")
    C = dense_invariants(invariants)
    if C.shape[1] != n:
        raise InvariantDPError(
            f"`m` has {n} cells per release but `invariants` act on {C.shape[1]}."
        )
    A, a = independent_rows(C, np.asarray(invariants.values, dtype=float))
    return m, n, A, a


def l2_postprocess(m, invariants, inequalities=None) -> np.ndarray:
    r"""Post-process noisy releases by L2 projection onto :math:`S^*` (Gong & Meng, Eq. 4.1).

    Returns :math:`\arg\min_{s \in S^*} \|m - s\|_2` for every row of ``m``:
    the orthogonal projection onto :math:`\{A s = a\}`, or, with inequalities,
    the non-negative (NNL2) projection of Section 3 / Figure 1.  In Example
    4.1 (two Laplace(2/epsilon) bins, fixed total) the first cell's error is
    the average of two Laplace variables, law (4.7), variance
    :math:`4/\epsilon^2` -- twice that of the congenial release (Table 2).
    Table 2 prints the mean as :math:`(\bar s, \bar s)`; the projection is in
    fact unbiased, :math:`E = (s_1, s_2)` (checked in the tests).

    Parameters
    ----------
    m : array_like, shape (..., n)
        Unconstrained noisy releases (flattened cells last).
    invariants : Invariants
        With values.
    inequalities : None, "nonnegative", LinearInequalities or (B, b)

    Returns
    -------
    numpy.ndarray, shape of ``m``

    References
    ----------
    Gong & Meng (2020), Sec. 3 (NNL2), Sec. 4 and Appendix A.

    Examples
    --------
    >>> import numpy as np
    >>> from invariantdp import Invariants
    >>> l2_postprocess([42.0, 61.0], Invariants(np.ones((1, 2)), [100.0])).round(9)
    array([40.5, 59.5])
    """
    m, n, A, a = _releases_and_invariants(m, invariants)
    flat = m.reshape(-1, n)
    ineq = as_inequalities(inequalities, n)
    proj = AffineSubspace(A, a).project(flat)
    if ineq is None:
        return proj.reshape(m.shape)
    if np.all(np.count_nonzero(ineq.matrix, axis=1) == 1):
        lb, ub, _ = cell_bounds(ineq)
        out = _bounded_projection(flat, A, a, lb, ub)
    else:
        out = np.array([_slsqp_projection(row, A, a, ineq.matrix, ineq.lower) for row in flat])
    return out.reshape(m.shape)


def _bounded_projection(M, A, a, lb, ub, tol=1e-10, max_iter=200):
    """argmin ||s - m|| s.t. A s = a, lb <= s <= ub by semismooth Newton on the dual."""
    n_rows, r = M.shape[0], A.shape[0]
    lam = np.zeros((n_rows, r))
    scale = 1.0 + np.abs(a).max()

    def resid(lam):
        s = np.clip(M + lam @ A, lb, ub)
        return s, s @ A.T - a

    s, F = resid(lam)
    for _ in range(max_iter):
        err = np.abs(F).max(axis=1)
        todo = err > tol * scale
        if not np.any(todo):
            break
        act = ((M + lam @ A > lb) & (M + lam @ A < ub)).astype(float)
        J = np.einsum("ik,nk,jk->nij", A, act, A) + 1e-12 * np.eye(r)
        try:
            step = -np.linalg.solve(J, F[..., None])[..., 0]
        except np.linalg.LinAlgError:
            step = -np.linalg.lstsq(J.sum(0), F.T, rcond=None)[0].T
        t = np.ones(n_rows)
        base = (F * F).sum(1)
        for _ls in range(30):
            s_new, F_new = resid(lam + t[:, None] * step)
            better = (F_new * F_new).sum(1) <= (1 - 1e-4 * t) * base
            if np.all(better | ~todo):
                break
            t = np.where(better | ~todo, t, t / 2)
        lam = np.where(todo[:, None], lam + t[:, None] * step, lam)
        s, F = resid(lam)
    if np.abs(F).max() > 1e-6 * scale:
        raise InvariantDPError(
            "`inequalities` are infeasible together with the invariants for some release "
            "(projection did not converge)."
        )
    return s


def _slsqp_projection(m, A, a, B, b):
    res = optimize.minimize(
        lambda s: 0.5 * np.sum((s - m) ** 2),
        x0=m,
        jac=lambda s: s - m,
        constraints=[
            {"type": "eq", "fun": lambda s: A @ s - a, "jac": lambda s: A},
            {"type": "ineq", "fun": lambda s: B @ s - b, "jac": lambda s: B},
        ],
        method="SLSQP",
        options={"ftol": 1e-12, "maxiter": 500},
    )
    if not res.success:
        raise InvariantDPError(f"`inequalities`: the projection failed ({res.message}).")
    return res.x


def l1_postprocess(m, invariants, *, beta=None) -> np.ndarray:
    r"""Post-process noisy releases by L1 minimisation onto :math:`\{A s = a\}` (Eq. 4.1).

    The L1 minimiser is not unique.  With ``beta`` (two cells and a fixed
    total, Example 4.1) the solution is the paper's convex combination
    :math:`\tilde s_1 = \beta m_1 + (1-\beta)(n - m_2)`, whose error
    :math:`\beta u_1 + (1-\beta) u_2` has density (A.1) and variance
    :math:`(\beta^2 + (1-\beta)^2)\, 8/\epsilon^2 \in [4/\epsilon^2, 8/\epsilon^2]`
    (Table 2); its privacy level is :func:`l1_privacy_level`.  Without
    ``beta`` a vertex solution of the linear program is returned.

    Parameters
    ----------
    m : array_like, shape (..., n)
    invariants : Invariants
        With values.
    beta : float in [0, 1], optional

    Returns
    -------
    numpy.ndarray
        The post-processed releases, of the shape of ``m``, satisfying the
        invariants.

    References
    ----------
    Gong & Meng (2020), Eq. 4.1, Example 4.1, Table 2 and Appendix A.

    Examples
    --------
    >>> import numpy as np
    >>> from invariantdp import Invariants
    >>> l1_postprocess([42.0, 61.0], Invariants(np.ones((1, 2)), [100.0]), beta=0.75)
    array([41.25, 58.75])
    """
    m, n, A, a = _releases_and_invariants(m, invariants)
    if beta is not None:
        beta = float(beta)
        if not 0.0 <= beta <= 1.0:
            raise InvariantDPError(f"`beta` ({beta}) must be in [0, 1].")
        if n != 2 or A.shape[0] != 1 or A[0, 0] == 0 or A[0, 0] != A[0, 1]:
            raise InvariantDPError(
                "`beta` applies to two cells with a fixed total (Example 4.1); "
                f"got {n} cells and {A.shape[0]} invariant(s)."
            )
        total = a[0] / A[0, 0]
        s1 = beta * m[..., 0] + (1.0 - beta) * (total - m[..., 1])
        return np.stack([s1, total - s1], axis=-1)
    flat = m.reshape(-1, n)
    out = np.empty_like(flat)
    r = A.shape[0]
    # variables (s, e): min sum e, e >= s - m, e >= m - s, A s = a
    I = np.eye(n)
    A_ub = np.block([[I, -I], [-I, -I]])
    A_eq = np.hstack([A, np.zeros((r, n))])
    cost = np.concatenate([np.zeros(n), np.ones(n)])
    for i, row in enumerate(flat):
        res = optimize.linprog(
            cost,
            A_ub=A_ub,
            b_ub=np.concatenate([row, -row]),
            A_eq=A_eq,
            b_eq=a,
            bounds=[(None, None)] * n + [(0, None)] * n,
            method="highs",
        )
        out[i] = res.x[:n]
    return out.reshape(m.shape)


def l1_privacy_level(epsilon, beta) -> float:
    r"""Privacy level :math:`\epsilon / (2\max\{\beta, 1-\beta\})` of L1 post-processing.

    For Example 4.1 (two bins, Laplace(2/epsilon) noise on each, fixed total)
    the convex-combination L1 solution with weight ``beta`` is exactly
    :math:`\epsilon/(2\max\{\beta, 1-\beta\})`-DP and no better (Gong & Meng,
    Appendix A, Theorem A.1); at ``beta = 1/2`` this is the L2 projection,
    :math:`\epsilon`-DP.

    Parameters
    ----------
    epsilon : float
        ``epsilon > 0`` of the unconstrained release (Laplace(2/epsilon) per bin).
    beta : float in [0, 1]
        Weight of the convex combination (see :func:`l1_postprocess`).

    Returns
    -------
    float

    References
    ----------
    Gong & Meng (2020), Example 4.1 and Appendix A, Theorem A.1.

    Examples
    --------
    >>> round(l1_privacy_level(1.0, 0.75), 12)
    0.666666666667
    """
    epsilon = check_positive("epsilon", epsilon)
    beta = float(beta)
    if not 0.0 <= beta <= 1.0:
        raise InvariantDPError(f"`beta` ({beta}) must be in [0, 1].")
    return epsilon / (2.0 * max(beta, 1.0 - beta))

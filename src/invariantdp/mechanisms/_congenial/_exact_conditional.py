r"""Exact i.i.d. draws of :math:`M(x) \mid M(x) \in S^*` where the target allows them.

* Integer noise (double geometric, discrete Gaussian) with a 0/1 invariant
  matrix and cells bounded below: the class-total dynamic programme of
  :func:`run_exact_dp` (e.g. the 2 x 23 table of Gong & Meng, Section 3).
* Spherical Gaussian noise with equality invariants only: the projected
  Gaussian (Gao, Gong & Yu, Theorem 22: conditioning equals projection).
* A one-dimensional fibre (e.g. Example 4.1): the exact conditional along
  the line (:mod:`.._linesampler`).

References
----------
Gong & Meng (2020), Eq. 2.3 and Section 3; Gao, Gong & Yu, Theorem 22.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import optimize

from ..._linalg import (
    BOX_MAX,
    FIBRE_MAX,
    cell_classes,
    enumerate_fibre,
    int_kernel_basis,
    null_space_basis,
)
from .._linesampler import sample_gauss_line, sample_laplace_line
from ._mcmc import line_update
from ._targets import Target

__all__: list[str] = []

_DP_MAX = 50_000_000  # entries of all dynamic-programming tables together
_CLASSES_MAX = 100  # classes of identical columns (two LPs each bound their totals)


@dataclass
class ExactPlan:
    """Precomputed class-total sampler (see :func:`exact_plan`)."""

    classes: list[np.ndarray]  # cells of each constrained class
    lb: list[np.ndarray]  # integer lower bound of each cell of the class
    lp: list[list[np.ndarray]]  # per class, per cell: log p_i(lb_i + y - x_i), y = 0..Y_i
    logZ: list[np.ndarray]  # per class (n_c, t_max + 1): prefix log partition functions
    totals: np.ndarray  # (n_points, K) class totals minus their lower bounds
    logw: np.ndarray  # (n_points,) log prod_c Z_c(T_c)
    free: np.ndarray  # cells in no invariant: independent truncated noise


def _logsumexp_rows(M: np.ndarray) -> np.ndarray:
    m = M.max(axis=1)
    fin = np.isfinite(m)
    m0 = np.where(fin, m, 0.0)
    with np.errstate(divide="ignore"):
        out = m0 + np.log(np.exp(M - m0[:, None]).sum(axis=1))
    return np.where(fin, out, -np.inf)


def _toeplitz_logits(prev: np.ndarray, lp: np.ndarray) -> np.ndarray:
    """``M[t, y] = lp[y] + prev[t - y]`` (``-inf`` for ``y > t``)."""
    T, Y = prev.size, lp.size
    j = np.arange(T)[:, None] - np.arange(Y)[None, :]
    return np.where(j >= 0, prev[np.maximum(j, 0)], -np.inf) + lp[None, :]


def _class_partition(lp: list[np.ndarray], t_max: int) -> np.ndarray:
    r"""Prefix log partition functions of one class, shape ``(n_c, t_max + 1)``.

    Row ``k`` is :math:`\log Z^{(k)}(t) = \log \sum_{y_0 + \dots + y_k = t}
    \prod_{i \le k} p_i(y_i)`, computed by log-space convolution.
    """
    out = np.full((len(lp), t_max + 1), -np.inf)
    out[0, : lp[0].size] = lp[0]
    for k in range(1, len(lp)):
        out[k] = _logsumexp_rows(_toeplitz_logits(out[k - 1], lp[k]))
    return out


def exact_plan(target: Target) -> tuple[ExactPlan | None, str]:
    r"""Plan exact i.i.d. sampling of integer noise given 0/1 invariants and cell bounds.

    Returns ``(plan, "")`` or ``(None, reason)`` when the method does not apply.
    See :func:`run_exact_dp` for the method.
    """
    if not target.integer:
        return None, "the noise is not integer-valued"
    if target.Bc.shape[0]:
        return None, "inequalities other than per-cell bounds are present"
    A, a = target.A, target.a
    if A.shape[0] == 0 or not np.all((A == 0) | (A == 1)):
        return None, "the invariant matrix does not have 0/1 entries"
    classes_all = cell_classes(A).members
    zero = [c for c in classes_all if not np.any(A[:, c[0]])]
    classes = [c for c in classes_all if np.any(A[:, c[0]])]
    free = zero[0] if zero else np.zeros(0, dtype=np.int64)
    cells = np.concatenate(classes)
    if not np.all(np.isfinite(target.lb[cells])):
        return None, "cells in the invariants need finite lower bounds (e.g. non-negativity)"
    lb = np.ceil(target.lb - 1e-9)
    ub = np.floor(target.ub + 1e-9)
    Abar = np.stack([A[:, c[0]] for c in classes], axis=1)
    L = np.array([lb[c].sum() for c in classes])
    U = np.array([ub[c].sum() for c in classes])
    K = len(classes)
    if K > _CLASSES_MAX:
        return None, f"there are {K} classes of identical columns (more than {_CLASSES_MAX})"
    # bounds on the class totals over the polytope {Abar T = a, L <= T <= U}
    bounds = list(zip(L, np.where(np.isfinite(U), U, None), strict=True))
    lo, hi = np.empty(K), np.empty(K)
    for k in range(K):
        for sign, store in ((1.0, lo), (-1.0, hi)):
            cost = np.zeros(K)
            cost[k] = sign
            res = optimize.linprog(cost, A_eq=Abar, b_eq=a, bounds=bounds, method="highs")
            if res.status != 0:
                return None, "the class totals are unbounded or the LP failed"
            store[k] = res.x[k]
    lo, hi = np.ceil(lo - 1e-7), np.floor(hi + 1e-7)
    t_max = (hi - L).astype(np.int64)
    ymax = [np.minimum(ub[c] - lb[c], t_max[k]).astype(np.int64) for k, c in enumerate(classes)]
    cost = sum(int(t_max[k] + 1) * int(np.sum(ymax[k] + 1)) for k in range(K))
    if cost > _DP_MAX:
        return None, f"the dynamic programme would need {cost} table entries"
    totals = enumerate_fibre(Abar, a, lo, hi)
    if totals is None:
        return None, (
            f"the class-total fibre is too large to enumerate (more than {FIBRE_MAX} points, "
            f"or a search box of more than {BOX_MAX})"
        )
    lp = [
        [
            target.cell_logp(lb[i] + np.arange(ymax[k][j] + 1) - target.s_star[i])
            for j, i in enumerate(c)
        ]
        for k, c in enumerate(classes)
    ]
    logZ = [_class_partition(lp[k], int(t_max[k])) for k in range(K)]
    off = (totals - L).astype(np.int64)
    logw = sum(logZ[k][-1][off[:, k]] for k in range(K))
    return ExactPlan(classes, [lb[c] for c in classes], lp, logZ, off, logw, free), ""


def _categorical(logw: np.ndarray, n: int, gen) -> np.ndarray:
    cdf = np.cumsum(np.exp(logw - logw.max()))
    idx = np.searchsorted(cdf, gen.random(n) * cdf[-1], side="right")
    return np.minimum(idx, logw.size - 1)


def _backward_class(lp, logZ, t, gen) -> np.ndarray:
    """Cell offsets ``y`` (n_c, n) of one class given its total offsets ``t`` (n,).

    Backward sampling along the DP: the last cell given the running total
    ``t`` has :math:`P(y_k = y) = p_k(y) Z^{(k-1)}(t - y) / Z^{(k)}(t)`.  The
    conditional cdfs of all totals are stacked row by row with offsets ``2t``
    so one ``searchsorted`` serves every draw.
    """
    n, n_c = t.size, len(lp)
    y = np.empty((n_c, n), dtype=np.int64)
    t = t.copy()
    for k in range(n_c - 1, 0, -1):
        M = _toeplitz_logits(logZ[k - 1], lp[k])
        T1, Y1 = M.shape
        norm = logZ[k]
        P = np.exp(M - np.where(np.isfinite(norm), norm, 0.0)[:, None])
        cdf = np.cumsum(P, axis=1)
        last = cdf[:, -1:]
        cdf = np.where(last > 0, cdf / np.where(last > 0, last, 1.0), 1.0)
        top = (Y1 - 1) - np.argmax(P[:, ::-1] > 0, axis=1)  # last y of positive mass
        flat = (cdf + 2.0 * np.arange(T1)[:, None]).ravel()
        pos = np.searchsorted(flat, gen.random(n) + 2.0 * t, side="right")
        yk = np.minimum(pos - t * Y1, top[t])
        y[k] = yk
        t -= yk
    y[0] = t
    return y


def run_exact_dp(target: Target, plan: ExactPlan, n: int, gen) -> np.ndarray:
    r"""Exact i.i.d. draws of :math:`M(x) \mid M(x) \in S^*` for integer noise.

    Applies to integer-valued additive noise with independent cells,
    :math:`p(s) = \prod_i p_i(s_i - s^*_i)` (double geometric, Eq. 1.3, or
    discrete Gaussian), equality invariants :math:`A s = a` whose matrix has
    0/1 entries, and per-cell bounds :math:`\ell_i \le s_i \le u_i` with
    finite :math:`\ell_i` for the cells in some invariant (non-negativity in
    Section 3; :math:`u_i` optional).  Method (:func:`exact_plan` prepares
    steps 1-3):

    1. Group the cells into classes :math:`c` of identical columns of
       :math:`A`.  The constraints bind only the class totals
       :math:`T_c = \sum_{i \in c} s_i`: :math:`A s = \bar A T` with
       :math:`\bar A` the distinct columns, so the target factorises as
       :math:`P(T) \propto \prod_c Z_c(T_c)` on
       :math:`\{T : \bar A T = a\}` and, given :math:`T`, the classes are
       independent with :math:`P(s_c \mid T_c) \propto \prod_{i \in c}
       p_i(s_i - s^*_i)` on :math:`\{\sum_{i \in c} s_i = T_c\}`.
    2. For each class, compute the partition functions
       :math:`Z_c(t) = \sum_{y \ge 0,\, \sum y_i = t}\prod_{i \in c}
       p_i(\ell_i + y_i - s^*_i)` (:math:`y_i \le u_i - \ell_i`) for every
       :math:`t` up to the largest feasible class total by sequential
       log-space convolutions (vectorised Toeplitz log-sum-exp), keeping the
       prefix tables :math:`Z^{(k)}` of the first :math:`k` cells.
    3. Bound every :math:`T_c` by linear programming over
       :math:`\{\bar A T = a,\ \sum_c \ell \le T \le \sum_c u\}`, pick
       free coordinates completing a basis of :math:`\bar A` (those with the
       smallest ranges), scan their box in vectorised chunks and solve for the
       others, keeping integral in-range solutions: the class-total fibre
       (at most a million points, else the Gibbs sampler is used).
    4. Draw :math:`T` with probability proportional to
       :math:`\prod_c Z_c(T_c)`, then within each class the cells given
       :math:`T_c` by backward sampling along the DP,
       :math:`P(y_k = y \mid t) = p_k(y) Z^{(k-1)}(t - y) / Z^{(k)}(t)`,
       vectorised across all draws (inverse cdf by one ``searchsorted``).
       Cells in no invariant are independent truncated noise
       (:mod:`.._linesampler`).

    Draws are independent and exact (up to floating point), so the
    effective sample size is the number of draws.

    References
    ----------
    Gong & Meng (2020), Eq. 2.3 (the target), Section 3 (the 2 x 23 table
    with its equality invariants and non-negativity, where Algorithm 1 accepts
    about 1.7 % of proposals).
    """
    pick = _categorical(plan.logw, n, gen)
    T = plan.totals[pick]
    blocks, cols = [], []
    for k, cells in enumerate(plan.classes):
        y = _backward_class(plan.lp[k], plan.logZ[k], T[:, k], gen)
        blocks.append(y + plan.lb[k][:, None])
        cols.append(cells)
    if plan.free.size:
        f = plan.free
        lo = np.broadcast_to(np.ceil(target.lb[f] - 1e-9), (n, f.size))
        hi = np.broadcast_to(np.floor(target.ub[f] + 1e-9), (n, f.size))
        xs = np.broadcast_to(target.s_star[f], (n, f.size))
        if target.laplace_type:
            v = sample_laplace_line(
                xs[..., None], np.full((n, f.size, 1), target.rate), lo, hi, integer=True, gen=gen
            )
        else:
            v = sample_gauss_line(
                xs, np.full((n, f.size), target.sigma), lo, hi, integer=True, gen=gen
            )
        blocks.append(v.T)
        cols.append(f)
    order = np.concatenate(cols)
    S_T = np.empty((target.d, n))
    S_T[order] = np.concatenate(blocks, axis=0)
    return S_T.T


def run_exact(target, n, gen, invariants, plan=None):
    """``n`` exact i.i.d. draws, shape (n, d) (see the module docstring for when)."""
    d = target.d
    if target.spherical_gaussian and target.unconstrained:
        # Theorem 22 (Gao, Gong & Yu): conditioning = projection for spherical Gaussians
        e = gen.normal(0.0, target.sigma, (n, d))
        return target.s_star + invariants.project(e)
    if plan is not None:
        return run_exact_dp(target, plan, n, gen)
    if target.integer:
        v = int_kernel_basis(target.A)[0]
    else:
        v = null_space_basis(target.A)[:, 0]  # canonical: LAPACK's sign and rotation vary
    sx = np.append(target.s_star, 0.0)
    lbx = np.append(target.lb, -np.inf)
    ubx = np.append(target.ub, np.inf)
    supp = np.flatnonzero(v)
    S = np.tile(sx, (n, 1))
    idx = np.broadcast_to(supp, (n, 1, supp.size)).copy()
    coef = np.broadcast_to(v[supp], idx.shape).copy()
    line_update(S, target, sx, lbx, ubx, idx, coef, gen)
    return S[:, :d]

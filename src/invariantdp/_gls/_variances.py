r"""Variances of marginal queries from a :class:`~._tree_passes.Solution`: per unit and for sums.

A covariance here is a pair: scalars ``m`` (one per eigenspace, right on
:math:`U^\perp`) and, when the low-rank path is involved, a generalised
Gaussian on ``U``.  A query cell's variance is
:math:`\sum_T m_T (\|P_T r\|^2 - \|B_T^\top r\|^2) + r_U^\top W r_U` for
its indicator ``r``; infinite (not estimable) when ``r`` has a component on
an eigenspace or direction that nothing identifies.

Sums of units of one level (a city from its blocks) use the covariances
between units, which the tree gives through their common ancestors.  The
recursion carries, for the sum ``R_a`` of the chosen units below node ``a``,
its regression on ``h_a`` given the data, :math:`E[R_a | h_a] = \hat R_a +
K_a (h_a - x_a)`, and its residual covariance ``D_a``:

.. math:: K_a = \sum_c K_c G_c, \qquad
          D_a = \sum_c D_c + \operatorname{Var}\Big(\sum_c K_c h_c \,\Big|\, h_a\Big),

so that :math:`\operatorname{Var}(R) = D_r + K_r F_r K_r^\top` at the root;
linear in the number of units above the chosen level.

References
----------
Cumings-Menon & Zhuravlev (2024), arXiv:2404.13164 (variances of linear
functions of the hierarchical GLS estimator).
"""

from __future__ import annotations

import numpy as np

from ._constraints import exact_zeros
from ._eigenspace_rules import mul0, segment_max, segment_min, segment_starts, segment_sum
from ._generalized_gaussian import RTOL, GGauss, gsum, image, posterior
from ._low_rank import restrict

__all__ = [
    "group_sum_laws",
    "laws_variances",
    "query_cov",
    "query_variances",
    "query_weights",
    "row_weights",
    "rows_cov",
    "rows_variances",
    "sum_law",
    "unit_law",
    "variance_from",
]


def _weights(sol, attrs, with_u: bool):
    """``W[j, T] = ||P_T r_j||^2 - ||B_T^T r_j||^2`` (cells x 2^d) and ``R B``."""
    alg, basis = sol.alg, sol.basis
    c = alg.cell_weight(attrs)
    n_cells = int(np.prod([alg.shape[a] for a in attrs], dtype=np.int64))
    if not with_u:  # the same weights for every cell: no cells x k matrix
        return np.broadcast_to(c, (n_cells, c.size)), None
    # the detailed query is the identity: its rows times the basis are the basis
    rb = basis.mat.copy() if n_cells == alg.k else alg.query_rows(attrs) @ basis.mat
    outside = np.broadcast_to(~alg.query_mask(attrs)[basis.labels], rb.shape)
    rb = _clean_rb(rb, outside)
    return _off_basis(np.broadcast_to(c, (n_cells, c.size)), rb, basis.labels), rb


def _clean_rb(rb: np.ndarray, outside: np.ndarray) -> np.ndarray:
    """``R B`` with exact zeros where a row has no component (``outside``) and below rounding.

    Rounding there (entries near 1e-16) would meet the infinite variances of
    eigenspaces the rows never touch, and ``0 * inf`` must stay 0.
    """
    rb[outside] = 0.0
    rb[np.abs(rb) < 1e-13 * max(1.0, float(np.abs(rb).max(initial=0.0)))] = 0.0
    return rb


def _off_basis(w: np.ndarray, rb: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """``W[j, T] - ||B_T^T r_j||^2``: the rows' weights on ``U^perp``, rounding set to 0."""
    used = np.zeros(w.shape)
    np.add.at(used.T, labels, (rb**2).T)
    resid = w - used
    return np.where(resid > 1e-9 * np.maximum(w, 1.0), resid, 0.0)


def query_weights(sol, attrs):
    """``(W, (W on U^perp, R B) or None)`` of query ``attrs``: for laws without and with ``U``.

    Computed once, they serve every law of a query (:func:`variance_from`'s
    ``weights``), as the groups of a crosswalk need.
    """
    full, _ = _weights(sol, attrs, False)
    return full, (None if sol.basis is None else _weights(sol, attrs, True))


def _fast_part(w: np.ndarray, m: np.ndarray) -> np.ndarray:
    """``sum_T w[.., T] m[.., T]`` with ``0 * inf = 0`` (``w``: cells x 2^d, ``m``: n x 2^d)."""
    return mul0(w[None, :, :], m[:, None, :]).sum(axis=-1)


def _unit_laws(sol, level: int, units: np.ndarray):
    """Groups ``(anchor law, units, Gamma on U, Omega~ on U)`` of anchored units."""
    labels = sol.basis.labels
    groups = {}
    for u in units:
        a_lev, a_unit = sol.anchor[level][u]
        if a_lev >= 0:
            groups.setdefault((int(a_lev), int(a_unit)), []).append(int(u))
    for (a_lev, a_unit), members in groups.items():
        members = np.array(members)
        yield (
            sol.Fd[a_lev][a_unit],
            members,
            sol.Gam[level][members][:, labels],
            sol.Omt[level][members][:, labels],
        )


def _anchored_part(sol, level, units, anchored, w_perp, rb, out) -> None:
    """Put the variances of the anchored units (a dense law on ``U``) into ``out``."""
    pos = {int(u): i for i, u in enumerate(units)}
    for law, members, gam, omt in _unit_laws(sol, level, units[anchored]):
        idx = np.array([pos[int(u)] for u in members])
        part = _fast_part(w_perp, sol.F[level][members])
        part += mul0(rb[None, :, :] ** 2, omt[:, None, :]).sum(axis=-1)
        rbg = rb[None, :, :] * gam[:, None, :]
        part += np.einsum("ncm,mk,nck->nc", rbg, law.cov, rbg)
        if law.null.shape[1]:
            hit = np.linalg.norm(rbg @ law.null, axis=-1)
            scale = np.maximum(np.linalg.norm(rb, axis=-1), 1e-300)[None, :]
            part = np.where(hit > np.sqrt(RTOL) * scale, np.inf, part)
        out[idx] = part


def query_variances(sol, level: int, attrs, units=None) -> np.ndarray:
    """Variance of every cell of query ``attrs`` for units of ``level`` (``(n, cells)``)."""
    units = np.arange(sol.problem.sizes[level]) if units is None else np.asarray(units)
    anchored = (
        np.zeros(units.size, dtype=bool) if sol.basis is None else sol.anchor[level][units, 0] >= 0
    )
    w_full, _ = _weights(sol, attrs, False)
    out = _fast_part(w_full, sol.F[level][units])
    if not anchored.any():
        return exact_zeros(sol, level, units, attrs, out)
    w_perp, rb = _weights(sol, attrs, True)
    _anchored_part(sol, level, units, anchored, w_perp, rb, out)
    return exact_zeros(sol, level, units, attrs, out)


def rows_variances(sol, level: int, rows: np.ndarray, units=None) -> np.ndarray:
    """Variance of ``rows @ h_u`` (``rows``: ``(s, k)`` over the cells) for units of ``level``.

    As :func:`query_variances`, for any rows: ``(n, s)``, ``inf`` where a row
    reaches a direction that nothing identifies.
    """
    units = np.arange(sol.problem.sizes[level]) if units is None else np.asarray(units)
    rows = np.asarray(rows, dtype=float)
    anchored = (
        np.zeros(units.size, dtype=bool) if sol.basis is None else sol.anchor[level][units, 0] >= 0
    )
    w_full, with_u = row_weights(sol, rows)
    out = _fast_part(w_full, sol.F[level][units])
    if not anchored.any():
        return out
    w_perp, rb = with_u
    _anchored_part(sol, level, units, anchored, w_perp, rb, out)
    return out


def unit_law(sol, level: int, unit: int):
    """``(m, law on U or None)``: the final covariance of one unit."""
    m = sol.F[level][unit]
    if sol.basis is None or sol.anchor[level][unit, 0] < 0:
        return m, None
    ((law, _, gam, omt),) = _unit_laws(sol, level, np.array([unit]))
    zero = np.zeros(law.dim)
    parts = [GGauss.diagonal(zero, omt[0]), image(GGauss(zero, law.cov, law.null), np.diag(gam[0]))]
    return m, gsum(parts)


def row_weights(sol, rows: np.ndarray):
    """``(W, (W on U^perp, R B) or None)`` (as :func:`query_weights`) of any rows over the cells.

    One projection of the rows on each eigenspace serves both; ``R B`` is
    exactly 0 where a row has no component on a basis vector's eigenspace.
    """
    alg, basis = sol.alg, sol.basis
    rows = np.asarray(rows, dtype=float)
    hist = rows.reshape(-1, *alg.shape)
    w = np.stack(
        [
            np.einsum("jk,jk->j", alg.project(hist, t).reshape(rows.shape[0], -1), rows)
            for t in range(alg.n_spaces)
        ],
        axis=1,
    )
    w = np.where(w > 1e-12 * max(1.0, float(np.abs(w).max(initial=0.0))), w, 0.0)
    if basis is None:
        return w, None
    rb = _clean_rb(rows @ basis.mat, w[:, basis.labels] == 0)
    return w, (_off_basis(w, rb, basis.labels), rb)


def rows_cov(sol, m: np.ndarray, law, rows: np.ndarray, weights=None) -> np.ndarray:
    """``R Cov R^T`` of any rows over the ``k`` cells; ``inf`` rows/columns: not estimable.

    ``weights``: :func:`row_weights` of ``rows`` (computed here if omitted).
    """
    alg = sol.alg
    full, with_u = weights if weights is not None else row_weights(sol, rows)
    w, rb = with_u if law is not None else (full, None)
    finite = np.where(np.isinf(m), 0.0, m)
    cov = rows @ alg.apply(rows.reshape(-1, *alg.shape), finite).reshape(rows.shape[0], -1).T
    if law is not None:
        cov = cov - (rb * finite[sol.basis.labels]) @ rb.T + law.cov_of(rb)
    bad = (w * np.isinf(m)[None, :]).sum(axis=1) > 0
    cov[bad, :] = np.inf
    cov[:, bad] = np.inf
    return cov


def variance_from(sol, m: np.ndarray, law, attrs, full: bool = False, weights=None):
    """Cell variances (or, with ``full``, the covariance matrix) of query ``attrs``.

    ``weights``: :func:`query_weights` of ``attrs`` (computed here if omitted).
    """
    full_w, with_u = weights if weights is not None else query_weights(sol, attrs)
    w, rb = with_u if law is not None else (full_w, None)
    if not full:
        var = _fast_part(w, m[None, :])[0]
        return var if law is None else var + law.variance_of(rb)
    return rows_cov(sol, m, law, sol.alg.query_rows(attrs), weights=(full_w, with_u))


def laws_variances(sol, laws, attrs) -> np.ndarray:
    """Cell variances of query ``attrs`` under each of ``laws`` (``[(m, law or None)]``).

    ``(len(laws), cells)``: the scalar part of every law at once, the part on
    ``U`` for the laws that have one, all with the query's weights computed
    once (the groups of a crosswalk share them).
    """
    weights = query_weights(sol, attrs)
    m = np.array([law[0] for law in laws], dtype=float).reshape(len(laws), -1)
    out = _fast_part(weights[0], m)
    for g, (m_g, law) in enumerate(laws):
        if law is not None:
            out[g] = variance_from(sol, m_g, law, attrs, weights=weights)
    return out


def query_cov(sol, level: int, unit: int, attrs) -> np.ndarray:
    """The covariance matrix of query ``attrs`` at one unit."""
    m, law = unit_law(sol, level, unit)
    return variance_from(sol, m, law, attrs, full=True)


def _fast_up(k, d, v, starts):
    """The scalar rule of the sum recursion from children ``(K, D)`` to parents."""
    pidx = np.repeat(np.arange(starts.size - 1), np.diff(starts))
    inf = np.isinf(v)
    big_s = segment_sum(v, starts)
    n_inf = segment_sum(inf.astype(float), starts)
    kv = segment_sum(np.where(inf, 0.0, k * np.where(inf, 0.0, v)), starts)
    with np.errstate(divide="ignore", invalid="ignore"):
        kbar = np.where((big_s > 0) & np.isfinite(big_s), kv / big_s, 0.0)
    lo = segment_min(np.where(inf, k, np.inf), starts)
    hi = segment_max(np.where(inf, k, -np.inf), starts)
    has_inf = n_inf > 0
    same = lo == hi
    kbar = np.where(has_inf, np.where(same, lo, 0.0), kbar)
    dev = np.where(inf, 0.0, mul0(np.where(inf, 0.0, v), (k - kbar[pidx]) ** 2))
    dp = segment_sum(d, starts) + segment_sum(dev, starts)
    return kbar, np.where(has_inf & ~same, np.inf, dp)


def _dense_up(sol, lev, p, k, d, kd, dd, cache=None):
    """The sum recursion at an affected parent: ``K_p`` and ``D_p`` on ``U``.

    ``cache`` (a dict; ``k`` and ``d`` then a group's :class:`_Members`)
    keeps the terms of children outside the group (``K = 0``, ``D = 0``),
    the same for every group that reaches the parent: computed once per
    child, not once per group.
    """
    basis = sol.basis
    m = basis.dim
    eye, zero = np.eye(m), np.zeros((m, m))
    parts, d_parts = [], []
    for j in range(sol.starts[lev][p], sol.starts[lev][p + 1]):
        idle = cache is not None and not k.has(j)
        if idle and (lev, j) in cache:
            part, d_part = cache[(lev, j)]
        else:
            law = restrict(basis, np.zeros(sol.alg.k), sol.v[lev][j], sol.sub[lev].get(j))
            kj = kd.get(j, basis.diag(k[j]))
            part = image(GGauss(np.zeros(m), law.cov, law.null), np.vstack([kj, eye]))
            d_part = dd.get(j, GGauss.diagonal(np.zeros(m), d[j][basis.labels]))
            if idle:
                cache[(lev, j)] = (part, d_part)
        parts.append(part)
        d_parts.append(d_part)
    joint = gsum(parts)
    joint.mean = np.zeros((2 * m, m))
    post = posterior(
        2 * m, [joint], constraints=np.hstack([zero, eye]), values=eye, check_columns=0
    )
    cond = image(GGauss(np.zeros(2 * m), post.cov, post.null), np.hstack([eye, zero]))
    return post.mean[:m], gsum([*d_parts, cond])


def sum_law(sol, level: int, units):
    """``(m, law on U or None)``: the covariance of the sum of ``h_u`` over ``units``."""
    n = sol.problem.sizes[level]
    k = np.zeros((n, sol.alg.n_spaces))
    k[np.asarray(units)] = 1.0
    d = np.zeros_like(k)
    kd, dd = {}, {}
    for lev in range(level, 0, -1):
        starts = sol.starts[lev]
        new_k, new_d = _fast_up(k, d, sol.v[lev], starts)
        new_kd, new_dd = {}, {}
        if sol.basis is not None:
            for p in np.flatnonzero(sol.affected[lev - 1]):
                if sol.affected[lev][sol.starts[lev][p] : sol.starts[lev][p + 1]].any():
                    new_kd[int(p)], new_dd[int(p)] = _dense_up(sol, lev, int(p), k, d, kd, dd)
        k, d, kd, dd = new_k, new_d, new_kd, new_dd
    total = d + mul0(k**2, sol.F[0])
    m = total.sum(axis=0)
    roots = np.flatnonzero(np.any(k != 0, axis=1) | np.any(d != 0, axis=1))
    if sol.basis is None or not any(int(r) in sol.Fd[0] for r in roots):
        return m, None
    laws = []
    for r in roots.tolist():
        laws += _root_laws(sol, r, r, k, d, kd, dd, total)
    return m, gsum(laws)


def _root_laws(sol, root, key, k, d, kd, dd, total) -> list:
    """The laws a root unit adds to a sum: its own error through ``k`` and ``d`` (row ``key``).

    A root with a generalised-Gaussian covariance (``sol.Fd[0]``) gives the
    law of ``d`` and the image of its law under ``k``; any other root, the
    diagonal law of its ``total`` variances.
    """
    basis = sol.basis
    zero = np.zeros(basis.dim)
    if root not in sol.Fd[0]:
        return [GGauss.diagonal(zero, total[key][basis.labels])]
    f = sol.Fd[0][root]
    kr = kd.get(key, basis.diag(k[key]))
    dr = dd.get(key, GGauss.diagonal(zero, d[key][basis.labels]))
    return [dr, image(GGauss(zero, f.cov, f.null), kr)]


class _Members:
    """A level's rows for one group: the group's pairs' rows, zeros for the other units."""

    def __init__(self, rows: np.ndarray, where: dict):
        self.rows, self.where = rows, where
        self.zero = np.zeros(rows.shape[1:])

    def __getitem__(self, unit):
        i = self.where.get(int(unit))
        return self.zero if i is None else self.rows[i]

    def has(self, unit) -> bool:
        """Whether ``unit`` is one of the group's (else its rows are zeros)."""
        return int(unit) in self.where


def group_sum_laws(sol, level: int, units, codes, n_groups: int) -> list:
    """:func:`sum_law` of every group at once: ``[(m, law on U or None)]``, one per group.

    ``units`` of ``level`` belong to groups ``codes`` (``0..n_groups-1``).
    The recursion of :func:`sum_law` runs on the pairs (unit, group) that
    have a chosen unit below them: a chosen unit is in one pair per level,
    so the cost is linear in the chosen units (plus, on the low-rank path,
    the children of the affected parents a group reaches).  A parent's
    children outside the group enter through its family's sums: the sum
    of all its children's variances and the number of them not identified.
    """
    ns = sol.alg.n_spaces
    unit = np.asarray(units, dtype=np.int64)
    grp = np.asarray(codes, dtype=np.int64)
    k, d = np.ones((unit.size, ns)), np.zeros((unit.size, ns))
    kd, dd = {}, {}
    idle_terms = {}  # children outside a group: one term each, whichever group reaches them
    for lev in range(level, 0, -1):
        st, v_all = sol.starts[lev], sol.v[lev]
        inf_all = np.isinf(v_all)
        key, inv = np.unique(sol.problem.parents[lev][unit] * n_groups + grp, return_inverse=True)
        inv = inv.reshape(-1)
        p_unit, p_grp = key // n_groups, key % n_groups
        order = np.argsort(inv, kind="stable")
        pst = segment_starts(inv[order], key.size)
        # the whole family of each parent: members of the group and the others alike
        big_s = segment_sum(v_all, st)[p_unit]
        s_fin = segment_sum(np.where(inf_all, 0.0, v_all), st)[p_unit]
        n_inf = segment_sum(inf_all.astype(float), st)[p_unit]
        ko, do = k[order], d[order]
        inf = inf_all[unit[order]]
        v_fin = np.where(inf, 0.0, v_all[unit[order]])
        kv = segment_sum(np.where(inf, 0.0, ko * v_fin), pst)
        with np.errstate(divide="ignore", invalid="ignore"):
            kbar = np.where((big_s > 0) & np.isfinite(big_s), kv / big_s, 0.0)
        # the unidentified children's k: the members' and, if another child is one, 0
        lo = segment_min(np.where(inf, ko, np.inf), pst)
        hi = segment_max(np.where(inf, ko, -np.inf), pst)
        others = n_inf > segment_sum(inf.astype(float), pst)
        lo = np.where(others, np.minimum(lo, 0.0), lo)
        hi = np.where(others, np.maximum(hi, 0.0), hi)
        has_inf, same = n_inf > 0, lo == hi
        kbar = np.where(has_inf, np.where(same, lo, 0.0), kbar)
        dev = segment_sum(mul0(v_fin, (ko - kbar[inv[order]]) ** 2), pst)
        dev += mul0(np.maximum(s_fin - segment_sum(v_fin, pst), 0.0), kbar**2)
        new_d = np.where(has_inf & ~same, np.inf, segment_sum(do, pst) + dev)
        new_kd, new_dd = {}, {}
        if sol.basis is not None:
            reach = sol.affected[lev - 1][p_unit]
            for pair in np.flatnonzero(reach).tolist():
                p = int(p_unit[pair])
                if not sol.affected[lev][st[p] : st[p + 1]].any():
                    continue
                mem = order[pst[pair] : pst[pair + 1]]
                where = {int(unit[i]): int(i) for i in mem}
                kd_j = {u: kd[i] for u, i in where.items() if i in kd}
                dd_j = {u: dd[i] for u, i in where.items() if i in dd}
                new_kd[pair], new_dd[pair] = _dense_up(
                    sol, lev, p, _Members(k, where), _Members(d, where), kd_j, dd_j, idle_terms
                )
        unit, grp, k, d, kd, dd = p_unit, p_grp, kbar, new_d, new_kd, new_dd
    total = d + mul0(k**2, sol.F[0][unit])
    m = np.zeros((n_groups, ns))
    np.add.at(m, grp, total)
    out = [(m[g], None) for g in range(n_groups)]
    if sol.basis is None:
        return out
    live = np.any(k != 0, axis=1) | np.any(d != 0, axis=1)
    dense_roots = np.isin(unit, np.fromiter(sol.Fd[0], dtype=np.int64, count=len(sol.Fd[0])))
    # the live pairs by group: one segment per group, each read once
    pairs = np.flatnonzero(live)
    pairs = pairs[np.argsort(grp[pairs], kind="stable")]
    bounds = segment_starts(grp[pairs], n_groups)
    for g in np.unique(grp[live & dense_roots]).tolist():
        laws = []
        for pair in pairs[bounds[g] : bounds[g + 1]].tolist():
            laws += _root_laws(sol, int(unit[pair]), pair, k, d, kd, dd, total)
        out[g] = (m[g], gsum(laws))
    return out

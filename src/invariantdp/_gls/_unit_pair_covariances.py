r"""Covariances between units of one level: a query over many units as one Gaussian vector.

:func:`slice_cov` gives the joint covariance of a marginal query's cells over
a set of units of one level (the tracts of a state, their ``sex`` margin),
from the arrays of the two passes.  Two units ``u, v`` are correlated through
their deepest common ancestor ``a`` and its children ``c`` (above ``u``) and
``c'`` (above ``v``): with ``g_u`` the product of the gains from ``u`` up to
and including ``c`` and :math:`\Gamma_u` the product below ``c``,

.. math:: \operatorname{Cov}(h_u, h_v) = g_u F_a g_v^\top
          + \Gamma_u \operatorname{Cov}(h_c, h_{c'} \mid h_a)\, \Gamma_v^\top,

where siblings given their parent have
:math:`\operatorname{Cov}(h_c, h_{c'} \mid h_a) = -V_c S^{-1} V_{c'}` (with
the exact limits of :mod:`._eigenspace_rules` when a variance is 0 or infinite).  On
:math:`U^\perp` (and everywhere without a low-rank path) every factor is a
scalar per eigenspace.  On ``U`` each unit hangs from its *anchor* (the
nearest unit above it with a dense law): units sharing an anchor ``A`` have
:math:`\Gamma_u F_A \Gamma_v` plus the scalar rule below ``A``; units with
different anchors meet at an affected ancestor ``a`` whose children are all
anchors, through the chains of dense gains :math:`G^d` from each anchor up,
:math:`Z_u^{(a)} F_a Z_v^{(a)\top} + Z_u^{(c)} W_{cc'} Z_v^{(c')\top}`, with
:math:`W_{cc'} = -G^d_c V_{c'}` the siblings' conditional covariance (the
limit of :math:`-V_c S^{-1} V_{c'}`; a joint posterior when both subtree
laws have unidentified directions).

Cells of infinite variance (not estimable) get ``inf`` rows and columns;
cells made only of structural zeros get exact zeros.  Every entry is checked
against the dense constrained GLS in the tests.

References
----------
Cumings-Menon & Zhuravlev (2024), arXiv:2404.13164 (covariances of the
hierarchical GLS estimator).
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import block_diag

from ._eigenspace_rules import mul0, segment_sum
from ._generalized_gaussian import GGauss, _as_observation, gsum, posterior
from ._low_rank import restrict
from ._variances import _weights, query_variances

__all__ = ["slice_cov"]


def _ancestors(sol, level: int, units: np.ndarray) -> list:
    """``anc[l]``: each unit's ancestor at level ``l`` (``anc[level]`` the units)."""
    anc = [None] * (level + 1)
    anc[level] = units
    for lev in range(level, 0, -1):
        anc[lev - 1] = sol.problem.parents[lev][anc[lev]]
    return anc


def _lca_levels(anc: list) -> np.ndarray:
    """``lca[i, j]``: the level of the deepest common ancestor (-1: different roots)."""
    n = anc[-1].size
    lca = np.full((n, n), -1, dtype=np.int16)
    for lev, a in enumerate(anc):
        lca[a[:, None] == a[None, :]] = lev
    return lca


def _sibling_cross(v_c, v_d, s, n_inf):
    """``Cov(h_c, h_d | h_parent)`` of two distinct siblings on each eigenspace.

    ``-V_c V_d / S``; 0 when ``S`` is 0; with one child of infinite variance
    (the parent minus its siblings) ``-V`` of the other; 0 where a child is
    not identified (its cells are marked not estimable).
    """
    c_inf, d_inf = np.isinf(v_c), np.isinf(v_d)
    regular = np.isfinite(s) & (s > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(regular, -np.where(c_inf, 0.0, v_c) * np.where(d_inf, 0.0, v_d) / s, 0.0)
    lone = np.isinf(s) & (n_inf == 1)
    out = np.where(lone & c_inf & ~d_inf, -np.where(d_inf, 0.0, v_d), out)
    return np.where(lone & d_inf & ~c_inf, -np.where(c_inf, 0.0, v_c), out)


class _Scalars:
    """The scalar factors of every pair of units, per level of their common ancestor."""

    def __init__(self, sol, level: int, anc: list):
        self.level, self.anc = level, anc
        n, ns = anc[-1].size, sol.alg.n_spaces
        # prod[l]: gains from the unit up to its ancestor at level l + 1 (NaN: not identified)
        prod = [None] * (level + 1)
        prod[level] = np.ones((n, ns))
        for lev in range(level, 0, -1):
            g = sol.G[lev][anc[lev]]
            prod[lev - 1] = prod[lev] * np.where(np.isnan(g), 0.0, g)
        self.prod = prod
        self.v, self.s, self.n_inf = [], [], []
        for lev in range(level):
            st = sol.starts[lev + 1]
            vc = sol.v[lev + 1]
            self.v.append(vc[anc[lev + 1]])
            self.s.append(segment_sum(vc, st)[anc[lev]])
            self.n_inf.append(segment_sum(np.isinf(vc).astype(float), st)[anc[lev]])

    def pairs(self, lca: np.ndarray, top: list, t: int) -> np.ndarray:
        """``M[i, j]`` on eigenspace ``t``, with ``top[l]`` the law of the common ancestor."""
        n = lca.shape[0]
        out = np.zeros((n, n))
        for lev in range(self.level):
            mask = lca == lev
            if not mask.any():
                continue
            g = self.prod[lev][:, t]
            below = self.prod[lev + 1][:, t]
            f_a = top[lev][self.anc[lev], t]
            cross = _sibling_cross(
                self.v[lev][:, t][:, None],
                self.v[lev][:, t][None, :],
                self.s[lev][:, t][:, None],
                self.n_inf[lev][:, t][:, None],
            )
            term = mul0(np.outer(g, g), f_a[:, None]) + np.outer(below, below) * cross
            out[mask] = term[mask]
        out[np.diag_indices(n)] = top[self.level][self.anc[self.level], t]
        return out


def _eigen_blocks(sol, rows: np.ndarray, attrs) -> list:
    """``Q_S P_T Q_S^T`` for every eigenspace (exact zeros where ``T`` is not inside ``S``)."""
    alg = sol.alg
    inside = alg.query_mask(attrs)
    hist = rows.reshape(-1, *alg.shape)
    out = []
    for t in range(alg.n_spaces):
        if not inside[t]:
            out.append(None)
            continue
        out.append(alg.project(hist, t).reshape(rows.shape[0], -1) @ rows.T)
    return out


def _add(out: np.ndarray, m: np.ndarray, block: np.ndarray) -> None:
    """``out[i, :, j, :] += m[i, j] * block`` (non-finite ``m`` counts as 0: marked later)."""
    m = np.where(np.isfinite(m), m, 0.0)
    out += m[:, None, :, None] * block[None, :, None, :]


def _law(sol, lev: int, unit: int) -> GGauss:
    """A unit's subtree law on ``U`` (covariance only: the mean is not needed)."""
    return restrict(sol.basis, np.zeros(sol.alg.k), sol.v[lev][unit], sol.sub[lev].get(unit))


def _sibling_dense(sol, lev: int, c: int, d: int) -> np.ndarray:
    """``Cov(h_c, h_d | h_parent)`` on ``U`` for distinct siblings ``c, d`` of level ``lev``.

    ``-G_c V_d`` (the limit of :math:`-V_c S^{-1} V_d`, right on the directions
    each identifies) when ``d``'s subtree law has no unidentified direction,
    its transpose the other way round; otherwise the joint posterior of the
    pair given their sum with the other siblings'.
    """
    law_c, law_d = _law(sol, lev, c), _law(sol, lev, d)
    if not law_d.null.shape[1]:
        return -sol.Gd[lev][c] @ law_d.cov
    if not law_c.null.shape[1]:
        return (-sol.Gd[lev][d] @ law_c.cov).T
    m = sol.basis.dim
    p = int(sol.problem.parents[lev][c])
    st = sol.starts[lev]
    others = [_law(sol, lev, j) for j in range(st[p], st[p + 1]) if j not in (c, d)]
    rest = gsum(others) if others else GGauss(np.zeros(m), np.zeros((m, m)), np.zeros((m, 0)))
    info, eta, rows, vals = _as_observation(GGauss(np.zeros(m), rest.cov, rest.null))
    pair = np.hstack([np.eye(m), np.eye(m)])  # the pair's sum is observed through the rest
    prior = GGauss(
        np.zeros(2 * m), block_diag(law_c.cov, law_d.cov), block_diag(law_c.null, law_d.null)
    )
    post = posterior(
        2 * m, [prior], pair.T @ info @ pair, pair.T @ eta, rows @ pair, vals, check_columns=0
    )
    return post.cov[:m, m:]


def _chains(sol, level: int, anc: list, y: np.ndarray, a_lev: np.ndarray, anchored) -> dict:
    """``Z[l][i]``: unit ``i``'s rows on ``U`` carried up to its ancestor at level ``l``.

    Defined for levels at or above the unit's anchor: ``Z`` at the anchor is
    ``y`` (the rows times the scalar gains from the anchor), and each step up
    multiplies by the dense gain of the unit passed.
    """
    out = {}
    cur = np.zeros_like(y)
    live = np.zeros(y.shape[0], dtype=bool)
    for lev in range(level, -1, -1):
        start = anchored & (a_lev == lev)
        cur[start] = y[start]
        live |= start
        out[lev] = cur.copy()
        if lev == 0:
            break
        idx = np.flatnonzero(live)
        nodes = anc[lev][idx]
        for node in np.unique(nodes):
            sel = idx[nodes == node]
            cur[sel] = cur[sel] @ sol.Gd[lev][int(node)]
    return out


def _dense_part(sol, level, anc, lca, rb, out) -> None:
    """The covariances on ``U`` of anchored units (see the module docstring)."""
    units = anc[level]
    anchor = sol.anchor[level][units]
    anchored = anchor[:, 0] >= 0
    if not anchored.any():
        return
    labels = sol.basis.labels
    y = rb[None, :, :] * sol.Gam[level][units][:, labels][:, None, :]
    key = anchor[:, 0].astype(np.int64) * (1 + int(anchor[:, 1].max())) + anchor[:, 1]
    for k in np.unique(key[anchored]):
        members = np.flatnonzero(anchored & (key == k))
        a_lev, a_unit = (int(v) for v in anchor[members[0]])
        ym = y[members]
        block = np.einsum("icm,mn,jdn->icjd", ym, sol.Fd[a_lev][a_unit].cov, ym)
        out[np.ix_(members, range(rb.shape[0]), members, range(rb.shape[0]))] += block
    differ = anchored[:, None] & anchored[None, :] & (key[:, None] != key[None, :]) & (lca >= 0)
    if not differ.any():
        return
    z = _chains(sol, level, anc, y, anchor[:, 0], anchored)
    cells = range(rb.shape[0])
    for lev in range(level):
        pairs = differ & (lca == lev)
        if not pairs.any():
            continue
        involved = np.flatnonzero(pairs.any(axis=1))
        for a in np.unique(anc[lev][involved]):
            members = involved[anc[lev][involved] == a]
            za = z[lev][members]
            blocks = np.einsum("icm,mn,jdn->icjd", za, sol.Fd[lev][int(a)].cov, za)
            kids = anc[lev + 1][members]
            off = kids[:, None] != kids[None, :]
            blocks *= off[:, None, :, None]
            uniq = np.unique(kids)
            for i, c in enumerate(uniq):
                for d in uniq[i + 1 :]:
                    w = _sibling_dense(sol, lev + 1, int(c), int(d))
                    rc, rd = np.flatnonzero(kids == c), np.flatnonzero(kids == d)
                    part = np.einsum(
                        "icm,mn,jdn->icjd", z[lev + 1][members[rc]], w, z[lev + 1][members[rd]]
                    )
                    blocks[np.ix_(rc, cells, rd, cells)] += part
                    blocks[np.ix_(rd, cells, rc, cells)] += part.transpose(2, 3, 0, 1)
            out[np.ix_(members, cells, members, cells)] += blocks


def slice_cov(sol, level: int, units: np.ndarray, attrs) -> np.ndarray:
    """The covariance of query ``attrs`` over ``units`` of ``level``, unit-major.

    Shape ``(n c, n c)`` for ``n`` units and ``c`` query cells; ``inf`` rows
    and columns for cells that are not estimable, exact zeros for cells of
    structural zeros.
    """
    units = np.asarray(units, dtype=np.int64)
    alg = sol.alg
    rows = alg.query_rows(attrs)
    n, c = units.size, rows.shape[0]
    anc = _ancestors(sol, level, units)
    lca = _lca_levels(anc)
    scalars = _Scalars(sol, level, anc)
    blocks = _eigen_blocks(sol, rows, attrs)
    out = np.zeros((n, c, n, c))
    for t, e in enumerate(blocks):
        if e is not None:
            _add(out, scalars.pairs(lca, sol.F, t), e)
    if sol.basis is not None:
        _, rb = _weights(sol, attrs, True)
        anchor = sol.anchor[level][units]
        anchored = anchor[:, 0] >= 0
        both = anchored[:, None] & anchored[None, :]
        same = both & (anchor[:, None, 0] == anchor[None, :, 0])
        same &= anchor[:, None, 1] == anchor[None, :, 1]
        labels = sol.basis.labels
        for t, e in enumerate(blocks):
            cols = rb[:, labels == t]
            if e is None or not cols.size:
                continue
            # on U the scalar rule holds only below a shared anchor (Omega~ at the anchor)
            m_u = np.where(same, scalars.pairs(lca, sol.Omt, t), 0.0)
            m_full = np.where(both, scalars.pairs(lca, sol.F, t), 0.0)
            _add(out, m_u - np.where(np.isfinite(m_full), m_full, 0.0), cols @ cols.T)
        _dense_part(sol, level, anc, lca, rb, out)
    cov = out.reshape(n * c, n * c)
    cov = 0.5 * (cov + cov.T)
    var = query_variances(sol, level, attrs, units).reshape(-1)
    exact = var == 0
    cov[exact, :] = 0.0
    cov[:, exact] = 0.0
    bad = ~np.isfinite(var)
    cov[bad, :] = np.inf
    cov[:, bad] = np.inf
    return cov

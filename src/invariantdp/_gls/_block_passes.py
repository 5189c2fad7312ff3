r"""The tree passes when recodes and level-set zeros keep some attributes as dense factors.

The same two passes as :mod:`._tree_passes` (Cumings-Menon & Zhuravlev's
bottom-up and top-down), in the algebra of :mod:`._dense_factors`: every
covariance, information and gain of a unit is one ``m x m`` matrix per
eigenspace of the scalar attributes (16 x 16 for P.L. 94-171, four of them),
acting alike on every copy of the eigenspace.  Exact constraints (equality
invariants of any query, recoded or not, and structural zeros of whole slices
or of products of level sets such as nursing facilities x under 18) are
projections in the same blocks, so a unit costs ``O(k m)`` whatever its
constraints: never a ``k``-dimensional solve.

Bottom-up, a unit with information :math:`\Lambda` (its own measurements plus
:math:`S^+`, the children's summed covariance) and constraint projectors
summing to :math:`M` (its invariants and zeros, plus the directions its
children know exactly, the null space of ``S``), with ``K`` the complement of
the range of ``M``, has

.. math:: V = K (K^\top \Lambda K)^{-1} K^\top, \qquad
          z = V \eta + (I - V \Lambda) h_0, \qquad h_0 = M^+ b,

``b`` the sum of the constraints' targets (a constraint :math:`\Pi h = h^*`
with :math:`\Pi` a projector; :math:`h_0` satisfies them all when they agree).
A unit without children depends only on its own pattern of measured queries,
variances, invariants and zeros: its blocks are factorised once per distinct
pattern and shared.  Top-down, :math:`G_i = V_i S^+`, :math:`x_i = z_i + G_i
(x_p - s)`, :math:`F_i = G_i F_p G_i^\top + V_i - G_i V_i`.

Two units ``u, v`` of one level below distinct children ``c, c'`` of their
deepest common ancestor ``a`` have
:math:`\operatorname{Cov}(h_u, h_v) = \Gamma_u (G_c F_a G_{c'}^\top - G_c V_{c'})
\Gamma_v^\top`, :math:`\Gamma` the products of the gains below ``c`` and ``c'``.

This path needs every unit's subtree to identify its histogram (true of
files that measure the detailed query at the finest level, as the 2020
release does); a problem where some direction is not identified, or with
:class:`~._problem.Linear` constraints or per-cell variances, takes the
general path of :func:`~._tree_passes.solve`.

References
----------
Cumings-Menon & Zhuravlev (2024), "Least squares estimation for hierarchical
data", arXiv:2404.13164 (the two passes); Rao (1973), *Linear Statistical
Inference*, Sec. 4i (least squares under exact linear constraints).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy import sparse

from ..exceptions import InvariantDPError
from ._dense_factors import FactorAlgebra, dense_attributes, row_chunks, sum_broadcast
from ._eigenspace_rules import segment_starts, segment_sum
from ._generalized_gaussian import ROUNDING, RTOL
from ._problem import Problem
from ._tree_passes import _where

__all__ = ["BlockSolution", "block_path_refusal", "solve_blocks"]

#: a sum of constraint projectors: eigenvalues below this (relative) are not constrained
_PROJ_TOL = 1e-9
#: a variance below this fraction of its Cauchy-Schwarz bound is rounding of an exact 0
_CANCEL = 1e-10
#: invariants that disagree with the estimate by more than this (relative) contradict
_CONSISTENCY = 1e-7


def _sym(a):
    return 0.5 * (a + np.swapaxes(a, -1, -2))


def _runs_sum(x, first):
    """Sums of the runs of rows of ``x`` that start at ``first`` (increasing, from 0)."""
    starts = np.append(first, x.shape[0])
    return _children_sum(x, starts)


def _children_sum(x, starts):
    """:func:`segment_sum` of every unit's children, as one sparse (parents x children) product.

    Many times faster than ``np.add.reduceat`` on the long rows of the block
    layout; it needs ``starts`` to cover every child (it does in a tree).
    """
    n, n_par = x.shape[0], starts.size - 1
    if n == 0 or starts[0] != 0 or starts[-1] != n:
        return segment_sum(x, starts)
    mat = sparse.csr_array((np.ones(n), np.arange(n), starts), shape=(n_par, n))
    # a transposed view (the block layout of detailed histograms) is summed as it lies
    order = (0, *(1 + np.argsort(x.strides[1:], kind="stable")[::-1]))
    xt = x.transpose(order)
    if not xt.flags.c_contiguous:
        xt, order = x, tuple(range(x.ndim))
    out = np.asarray(mat @ xt.reshape(n, -1)).reshape(n_par, *xt.shape[1:])
    return out.transpose(np.argsort(order))


def _gathered_sum(x, rows, starts):
    """``_children_sum(x[rows], starts)`` with the rows gathered a chunk at a time.

    A chunk's children belong to a run of consecutive parents (``starts``
    increasing), whose sums it adds to: linear in the rows, never a gathered
    copy of them all.
    """
    n, n_par = rows.size, starts.size - 1
    out = np.zeros((n_par, *x.shape[1:]))
    for sl in row_chunks(x.shape[1:], n):
        lo, hi = sl.start, sl.stop
        p0 = int(np.searchsorted(starts, lo, side="right")) - 1
        p1 = int(np.searchsorted(starts, hi, side="left"))
        sub = np.clip(starts[p0 : p1 + 1], lo, hi) - lo
        out[p0:p1] += _children_sum(x[rows[lo:hi]], sub)
    return out


def _outer(q, w):
    """``q diag(w) q^T`` for stacks of eigenvector matrices ``q`` and weights ``w``."""
    return (q * w[..., None, :]) @ np.swapaxes(q, -1, -2)


def _spreads(qd, blocks):
    """``sum_m |q_gm| sqrt(max F_tmm)`` per unit, eigenspace and query row: ``(n, 2^|C|, G)``.

    By Cauchy-Schwarz ``|q' F_t q|`` is at most the square of it: the scale
    against which a variance's rounding is measured.  The largest variance of
    the unit, not of the cell's own coordinates: those of an exactly known
    direction are themselves rounding.
    """
    diag = np.diagonal(blocks, axis1=-2, axis2=-1)
    top = np.sqrt(np.maximum(diag.max(axis=(-1, -2)), 0.0))
    out = np.abs(qd).sum(axis=1)[None, None, :] * top[:, None, None]
    return np.broadcast_to(out, (*blocks.shape[:2], qd.shape[0]))


def _cancelled(var, bound):
    """``var`` floored at 0, and 0 where it is rounding of its Cauchy-Schwarz ``bound``.

    A combination the invariants fix exactly (a US total, the sum of the
    counties of an exact state total) has variance 0 in exact arithmetic; in
    floating point its terms cancel to about 1e-16 of ``bound`` times the
    number of terms, and would otherwise show as a standard error of 1e-7.
    """
    return np.where(var > _CANCEL * bound, var, 0.0)


def _children_obs(big_s):
    """``(S^+, projector on null(S))``: the children's information and exact directions."""
    ev, q = np.linalg.eigh(_sym(big_s))
    top = ev.max(axis=-1, keepdims=True)
    pos = ev > RTOL * np.maximum(top, 0.0)
    pos &= top > 0
    with np.errstate(divide="ignore"):
        inv = np.where(pos, 1.0 / np.where(pos, ev, 1.0), 0.0)
    return _outer(q, inv), _outer(q, (~pos).astype(float))


def _posterior(lam, mc, dims):
    """``(M^+, V, unidentified)`` of stacks ``(.., m, m)``: information ``lam``, constraints ``mc``.

    ``unidentified[..]`` is True where a direction free of the constraints has
    no information (ignored on eigenspaces of dimension 0, ``dims``).
    """
    m = lam.shape[-1]
    ev, q = np.linalg.eigh(_sym(mc))
    top = np.maximum(ev.max(axis=-1, keepdims=True), 1.0)
    exact = ev > _PROJ_TOL * top
    with np.errstate(divide="ignore"):
        mpinv = _outer(q, np.where(exact, 1.0 / np.where(exact, ev, 1.0), 0.0))
    pe = _outer(q, exact.astype(float))
    pk = np.eye(m) - pe
    a = _sym(pk @ lam @ pk)
    # the exact directions get eigenvalue -c, far below every free one (all >= 0)
    c = np.abs(a).max(axis=(-1, -2)) + 1.0
    ev2, q2 = np.linalg.eigh(a - c[..., None, None] * pe)
    free = ev2 > -0.5 * c[..., None]
    big = np.where(free, ev2, 0.0).max(axis=-1, keepdims=True)
    floor = ROUNDING * np.abs(lam).max(axis=(-1, -2))[..., None]
    pos = free & (ev2 > np.maximum(RTOL * big, floor)) & (big > 0)
    with np.errstate(divide="ignore"):
        v = _outer(q2, np.where(pos, 1.0 / np.where(pos, ev2, 1.0), 0.0))
    unident = (free & ~pos).any(axis=-1) & (dims > 0)
    return mpinv, _sym(v), unident


@dataclass
class _Own:
    """A level's own blocks: information, constraint projectors and targets, zeros."""

    lam: np.ndarray  # per distinct pattern: (patterns, 2^|C|, m, m)
    eta: np.ndarray  # per unit, block layout
    mc: np.ndarray  # per distinct pattern: (patterns, 2^|C|, m, m)
    b: np.ndarray | None  # per unit, block layout; None: no invariant at this level
    zero: np.ndarray  # (units, m) bool
    key: np.ndarray  # (units,): each unit's pattern (weights, invariants, zeros)


def _own(fa: FactorAlgebra, prob: Problem, level: int) -> _Own:
    """A level's own blocks, the matrices once per distinct pattern of its units."""
    n, ns, m = prob.sizes[level], fa.n_spaces, fa.m
    meas, eqs = prob.at(prob.measurements, level), prob.at(prob.equalities, level)
    w = np.zeros((n, len(meas)))
    spreads, targets = {}, {}  # per set of units: the spreads to sum (detailed layout)
    scaled = {}  # per set of units: one detailed query's (values, weights), summed lazily
    bases = np.zeros((len(meas), ns, m, m))
    for i, it in enumerate(meas):
        var = it.variance
        if var.ndim == 2 and np.any(var != var[:, :1]):
            raise InvariantDPError(
                "the dense-factor path needs one noise variance per unit and query; "
                "per-cell variances take the general path."
            )
        wi = 1.0 / (var if var.ndim == 1 else var[:, 0])
        w[it.units, i] = wi
        c, a = fa.query_info(it.attrs, it.recodes)
        bases[i] = c[:, None, None] * a
        group, key = _parts(spreads, it.units), _units_key(it.units)
        if len(it.attrs) == fa.d and not it.recodes and key not in scaled:
            scaled[key] = (it.values, wi)  # the largest spread: multiplied into the sum
        else:
            group.append(fa.spread(it.values * wi[:, None], it.attrs, it.recodes, False))
    pins = np.zeros((n, len(eqs)))
    projs = np.zeros((len(eqs), ns, m, m))
    for j, it in enumerate(eqs):
        pins[it.units, j] = 1.0
        projs[j] = fa.query_projection(it.attrs, it.recodes)
        target = it.values / fa.cell_sizes(it.attrs, it.recodes)[None, :]
        _parts(targets, it.units).append(fa.spread(target, it.attrs, it.recodes, False))
    zero = np.zeros((n, m), dtype=bool)
    for it in prob.at(prob.zeros, level):
        zero[it.units] |= fa.zero_coords(it.attrs, it.recodes, it.mask)
    key = np.hstack([w, pins, zero.astype(float)])
    ukey, inv = _unique_rows(key) if n else (key, np.zeros(0, int))
    nk = ukey.shape[0]
    lam_u = np.einsum("ui,itab->utab", ukey[:, : len(meas)], bases)
    mc_u = np.einsum("uj,jtab->utab", ukey[:, len(meas) : len(meas) + len(eqs)], projs)
    zdiag = np.zeros((nk, m, m))
    zdiag[:, np.arange(m), np.arange(m)] = ukey[:, len(meas) + len(eqs) :]
    mc_u += zdiag[:, None, :, :]
    b = _level_sum(fa, n, targets) if eqs else None
    return _Own(lam_u, _level_sum(fa, n, spreads, scaled), mc_u, b, zero, inv)


def _unique_rows(key):
    """``(distinct rows, each row's index among them)`` of a float array ``(n, c)``.

    Rows compared as bytes (one sort of ``n`` opaque items, several times
    faster than ``np.unique(axis=0)``); the order of the distinct rows is
    not that of their values.  The keys hold no -0.0 and no NaN.
    """
    key = np.ascontiguousarray(key, dtype=float)
    flat = key.view(np.dtype((np.void, key.dtype.itemsize * key.shape[1]))).reshape(-1)
    _, first, inv = np.unique(flat, return_index=True, return_inverse=True)
    return key[first], inv.reshape(-1)


def _units_key(units: np.ndarray) -> tuple:
    """A set of units as a dict key (queries of one level share their units)."""
    return units.size, units.tobytes()


def _parts(groups: dict, units: np.ndarray) -> list:
    """The list of parts of ``groups`` for this set of units."""
    return groups.setdefault(_units_key(units), (units, []))[1]


def _level_sum(fa: FactorAlgebra, n: int, groups: dict, scaled=None) -> np.ndarray:
    """``(n, *sshape, m)``: per set of units the sum of its parts, in the block layout.

    The parts of a set are summed smallest first into the larger ones they
    broadcast into, so the level's histograms are written a few times, not once per query.
    ``scaled`` (keyed as ``groups``) holds a set's detailed ``(values, weights)``,
    multiplied straight into the sum (:meth:`FactorAlgebra.block_sum`).
    """
    scaled = scaled or {}
    out = None
    # the largest set first: it is written into the level's array, the others added to it
    for key, (units, parts) in sorted(groups.items(), key=lambda g: -g[1][0].size):
        roots = sum_broadcast(parts)
        lazy = scaled.get(key)
        if out is None and _every_row(units, n):
            out = fa.block_sum(roots, n, scaled=lazy)
        elif out is None and np.all(np.diff(units) > 0):
            out = fa.block_sum(roots, n, rows=units, scaled=lazy)
        else:
            if out is None:
                out = np.zeros((n, *fa.sshape, fa.m))
            _add_rows(out, units, fa.block_sum(roots, units.size, scaled=lazy))
    return np.zeros((n, *fa.sshape, fa.m)) if out is None else out


def _every_row(units, n) -> bool:
    return units.size == n and (n == 0 or (units[0] == 0 and np.all(np.diff(units) == 1)))


def _add_rows(out, units, part):
    """``out[units] += part`` (broadcast), in place when ``units`` is every row in order."""
    if _every_row(units, out.shape[0]):
        out += part
    else:
        out[units] += part


@dataclass
class BlockSolution:
    """The arrays of the two passes in the dense-factor algebra, per level.

    ``z, x`` subtree and final estimates (block layout); ``V, F`` subtree and
    final covariances and ``G`` gains, ``(units, 2^|C|, m, m)``; ``zero`` the
    dense coordinates of each unit's structural zeros.  :func:`solve_blocks`
    keeps ``z`` of the first level only: below it, each level's ``x`` is
    written over its ``z`` (a state's blocks are the largest arrays).  ``F``
    is a :class:`FinalCovariances`: a level's is computed when first asked for.
    """

    problem: Problem
    fa: FactorAlgebra
    starts: list
    zero: list = field(default_factory=list)
    z: list = field(default_factory=list)
    V: list = field(default_factory=list)
    x: list = field(default_factory=list)
    F: list = field(default_factory=list)
    G: list = field(default_factory=list)
    sinv: list = field(default_factory=list)
    #: levels whose ``z`` a caller lent (summaries given as leaves): never written over
    lent: set = field(default_factory=set)

    @property
    def n_levels(self) -> int:
        return len(self.problem.sizes)

    def histograms(self, level: int) -> np.ndarray:
        """Final estimates of the detailed histograms, ``(units, *shape)``."""
        return self.fa.from_block(self.x[level])

    def estimates(self, level: int, attrs, recodes=None) -> np.ndarray:
        """``Q x_u`` for every unit of ``level``, ``(units, cells)``."""
        return self.fa.block_marginal(self.x[level], tuple(attrs), dict(recodes or {}))

    def _exact_cells(self, level, qd, units):
        """Query cells (dense part) made only of structural zeros: ``(n, G_D)``."""
        z = self.zero[level][units]
        return ((qd > 0).astype(float) @ (~z).T.astype(float)).T == 0

    def query_variances(self, level: int, attrs, recodes=None, units=None) -> np.ndarray:
        """Variance of every cell of a query for units of ``level``, ``(n, cells)``."""
        fa, attrs, recodes = self.fa, tuple(attrs), dict(recodes or {})
        units = np.arange(self.problem.sizes[level]) if units is None else np.asarray(units)
        qd = fa.dense_rows(attrs, recodes)
        s = fa._scalar_attrs(attrs)
        wt = fa.eig.cell_weight(s) if fa.scalar else np.array([1.0, 0.0])
        f = self.F[level][units]
        dense = np.einsum("gm,ntmk,gk->ntg", qd, f, qd)
        var_d = np.einsum("t,ntg->ng", wt, dense)
        bound = np.einsum("t,ntg->ng", wt, _spreads(qd, f) ** 2)
        var_d = np.where(self._exact_cells(level, qd, units), 0.0, _cancelled(var_d, bound))
        n_c = int(np.prod([fa.shape[a] for a in attrs if a in fa.scalar], dtype=np.int64))
        pairs = np.repeat(var_d[:, None, :], n_c, axis=1).reshape(units.size, -1)
        out = np.empty_like(pairs)
        out[:, fa.cell_order(attrs, recodes)] = pairs
        return out

    def _ancestry(self, level: int, units):
        """``(ancestors per level, deepest common level of each pair)`` of ``units``."""
        anc = [None] * (level + 1)
        anc[level] = units
        for lev in range(level, 0, -1):
            anc[lev - 1] = self.problem.parents[lev][anc[lev]]
        lca = np.full((units.size, units.size), -1)
        for lev, a in enumerate(anc):
            lca[a[:, None] == a[None, :]] = lev
        return anc, lca

    def pair_blocks(self, level: int, units) -> np.ndarray:
        """``Cov(h_u, h_v)`` blocks for units of one level, ``(n, n, 2^|C|, m, m)``."""
        units = np.asarray(units, dtype=np.int64)
        n = units.size
        anc, lca = self._ancestry(level, units)
        ns, m = self.fa.n_spaces, self.fa.m
        up = [None] * (level + 1)  # gains from the unit up to its ancestor at level l + 1
        up[level] = np.broadcast_to(np.eye(m), (n, ns, m, m))
        for lev in range(level, 0, -1):
            up[lev - 1] = up[lev] @ self.G[lev][anc[lev]]
        out = np.zeros((n, n, ns, m, m))
        for lev in range(level):
            mask = lca == lev
            if not mask.any():
                continue
            f_a = self.F[lev][anc[lev]]
            top = np.einsum("itab,itbc,jtdc->ijtad", up[lev], f_a, up[lev])
            g_c = self.G[lev + 1][anc[lev + 1]]
            v_c = self.V[lev + 1][anc[lev + 1]]
            gv = np.einsum("itab,jtbc->ijtac", g_c, v_c)
            below = np.einsum("itab,ijtbc,jtdc->ijtad", up[lev + 1], gv, up[lev + 1])
            out[mask] = (top - below)[mask]
        f = self.F[level][units]
        out[np.arange(n), np.arange(n)] = f
        return out

    def _query_cov(self, pairs, exact_d, attrs, recodes) -> np.ndarray:
        """A query's covariance from blocks ``pairs`` ``(n, n, 2^|C|, m, m)``, unit-major.

        ``exact_d`` ``(n, G_D)`` marks the dense query cells made only of
        structural zeros (exact zeros in the result).
        """
        fa = self.fa
        qd = fa.dense_rows(attrs, recodes)
        n, g = pairs.shape[0], qd.shape[0]
        order = fa.cell_order(attrs, recodes)
        c = order.size
        out = np.zeros((n, c, n, c))
        for t, bt in enumerate(fa.scalar_blocks(attrs)):
            if bt is None:
                continue
            dense = np.einsum("gm,ijmk,hk->ijgh", qd, pairs[:, :, t], qd)
            kron = np.einsum("ab,ijgh->iagjbh", bt, dense).reshape(n, c, n, c)
            out[:, order[:, None], :, order[None, :]] += kron.transpose(1, 3, 0, 2)
        cov = _sym(out.reshape(n * c, n * c))
        exact = np.repeat(exact_d[:, None, :], c // g, axis=1)
        ex = np.empty((n, c), dtype=bool)
        ex[:, order] = exact.reshape(n, c)
        ex = ex.reshape(-1)
        cov[ex, :] = 0.0
        cov[:, ex] = 0.0
        return cov

    def slice_cov(self, level: int, units, attrs, recodes=None) -> np.ndarray:
        """Covariance of a query's cells over ``units`` of ``level``, unit-major ``(n c, n c)``."""
        attrs, recodes = tuple(attrs), dict(recodes or {})
        units = np.asarray(units, dtype=np.int64)
        exact = self._exact_cells(level, self.fa.dense_rows(attrs, recodes), units)
        return self._query_cov(self.pair_blocks(level, units), exact, attrs, recodes)

    def sum_blocks(self, level: int, units) -> np.ndarray:
        r"""``Var(sum of h_u over units)`` as blocks ``(2^|C|, m, m)``; linear in the units above.

        The chosen units' sum below each node ``a`` regresses on ``h_a`` with
        :math:`K_a = \sum_c K_c G_c` and residual covariance
        :math:`D_a = \sum_c D_c + \sum_c K_c V_c K_c^\top - B S_a^+ B^\top`,
        :math:`B = \sum_c K_c V_c` (children given their parent); at the roots
        :math:`\operatorname{Var} = \sum_r D_r + K_r F_r K_r^\top`.  Only the
        chosen units and their ancestors have a nonzero ``K``: the recursion
        runs over them alone, so its cost is linear in the chosen units (``K = I``
        on them: their ``K V = K V K^T = V`` and ``K G = G`` need no product).
        """
        idx = np.unique(np.asarray(units, dtype=np.int64))
        k = None  # None: the identity on the chosen units
        d = None
        for lev in range(level, 0, -1):
            if k is None:
                kv = self.V[lev][idx]
                dk = kv.copy()
                kg = self.G[lev][idx]
            else:
                kv = k @ self.V[lev][idx]
                dk = d + kv @ np.swapaxes(k, -1, -2)
                kg = k @ self.G[lev][idx]
            par = self.problem.parents[lev][idx]
            first = np.flatnonzero(np.r_[True, par[1:] != par[:-1]])
            b, d, k = (_runs_sum(a, first) for a in (kv, dk, kg))
            idx = par[first]
            sinv = self.sinv[lev - 1]
            if sinv is not None:
                d -= b @ sinv[idx] @ np.swapaxes(b, -1, -2)
        if k is None:  # the roots themselves
            total = self.F[0][idx]
        else:
            total = d + k @ self.F[0][idx] @ np.swapaxes(k, -1, -2)
        return _sym(total.sum(axis=0))

    def sum_cov(self, level: int, units, attrs, recodes=None):
        """``(estimate, covariance)`` of a query's cells summed over ``units`` of ``level``."""
        attrs, recodes = tuple(attrs), dict(recodes or {})
        units = np.asarray(units, dtype=np.int64)
        total = self.x[level][units].sum(axis=0, keepdims=True)  # the query is linear
        est = self.fa.marginal(self.fa.from_block(total), attrs, recodes)[0]
        exact = self._exact_cells(level, self.fa.dense_rows(attrs, recodes), units)
        pairs = self.sum_blocks(level, units)[None, None]
        return est, self._query_cov(pairs, exact.all(axis=0, keepdims=True), attrs, recodes)

    # -- what the estimates read from the passes: selections, group sums, paths --------

    def exact_query_cells(self, level: int, units, attrs, recodes=None) -> np.ndarray:
        """Query cells made only of structural zeros (variance exactly 0), ``(n, cells)``."""
        fa, attrs, recodes = self.fa, tuple(attrs), dict(recodes or {})
        units = np.asarray(units, dtype=np.int64)
        qd = fa.dense_rows(attrs, recodes)
        order = fa.cell_order(attrs, recodes)
        exact = self._exact_cells(level, qd, units)
        pairs = np.repeat(exact[:, None, :], order.size // qd.shape[0], axis=1)
        out = np.empty((units.size, order.size), dtype=bool)
        out[:, order] = pairs.reshape(units.size, order.size)
        return out

    def selection_forms(self, attrs, recodes, rows) -> np.ndarray:
        r"""``W_T = R_C^\top B_T R_C`` per row of weights over a query's cells.

        With ``Q = Q_C \otimes Q_D`` and a covariance :math:`\sum_T P_T
        \otimes F_T`, a combination ``r`` of the query's cells has variance
        :math:`\sum_T \langle Q_D F_T Q_D^\top, W_T \rangle`, where ``R_C``
        holds ``r`` as a (scalar cells x dense cells) matrix and ``B_T`` is
        :meth:`FactorAlgebra.scalar_blocks`.  ``rows``: ``(s, cells)``;
        returns ``(s, 2^|C|, G_D, G_D)``, independent of the units.
        """
        fa, attrs, recodes = self.fa, tuple(attrs), dict(recodes or {})
        g = fa.dense_rows(attrs, recodes).shape[0]
        order = fa.cell_order(attrs, recodes)
        rows = np.asarray(rows, dtype=float)
        r = rows[:, order].reshape(rows.shape[0], order.size // g, g)
        out = np.zeros((rows.shape[0], fa.n_spaces, g, g))
        for t, bt in enumerate(fa.scalar_blocks(attrs)):
            if bt is not None:
                out[:, t] = np.einsum("sag,ab,sbh->sgh", r, bt, r)
        return out

    def selection_variances(self, blocks, attrs, recodes, rows) -> np.ndarray:
        """Variances of ``rows`` (weights over a query's cells) under covariance ``blocks``.

        ``blocks`` ``(n, 2^|C|, m, m)`` (a level's ``F``, or :meth:`group_sum_blocks`);
        returns ``(n, s)``, linear in ``n``.
        """
        attrs, recodes = tuple(attrs), dict(recodes or {})
        qd = self.fa.dense_rows(attrs, recodes)
        dense = np.einsum("gm,ntmk,hk->ntgh", qd, blocks, qd)
        forms = self.selection_forms(attrs, recodes, rows)
        spread = _spreads(qd, blocks)
        bound = np.einsum("ntg,stgh,nth->ns", spread, np.abs(forms), spread)
        return _cancelled(np.einsum("ntgh,stgh->ns", dense, forms), bound)

    def group_sum_blocks(self, level: int, units, codes, n_groups: int) -> np.ndarray:
        r"""``Var(sum of h_u over each group's units)`` as blocks ``(n_groups, 2^|C|, m, m)``.

        The recursion of :meth:`sum_blocks` for every group at once, on the
        pairs (unit, group) that have a chosen unit below them: a unit of
        the chosen level is in one pair, so every level holds at most as
        many pairs as chosen units and the cost is linear in them (a unit
        shared by several groups is in one pair per group).
        """
        units = np.asarray(units, dtype=np.int64)
        grp = np.asarray(codes, dtype=np.int64)
        ns, m = self.fa.n_spaces, self.fa.m
        k = d = None  # at the chosen level K is the identity and D is 0
        for lev in range(level, 0, -1):
            par = self.problem.parents[lev][units]
            key, inv = np.unique(par * n_groups + grp, return_inverse=True)
            inv = inv.reshape(-1)
            order = np.argsort(inv, kind="stable")
            st = segment_starts(inv[order], key.size)
            child = units[order]
            if k is None:  # the level's blocks, gathered a chunk at a time
                b = _gathered_sum(self.V[lev], child, st)
                d = b.copy()
                k = _gathered_sum(self.G[lev], child, st)
            else:
                ko = k[order]
                kv = ko @ self.V[lev][child]
                b = _children_sum(kv, st)
                d = _children_sum(d[order] + kv @ np.swapaxes(ko, -1, -2), st)
                k = _children_sum(ko @ self.G[lev][child], st)
            units, grp = key // n_groups, key % n_groups
            sinv = self.sinv[lev - 1]
            if sinv is not None:
                d -= b @ sinv[units] @ np.swapaxes(b, -1, -2)
        if k is None:  # the chosen level is the roots'
            total = self.F[0][units]
        else:
            total = d + k @ self.F[0][units] @ np.swapaxes(k, -1, -2)
        out = np.zeros((n_groups, ns, m, m))
        np.add.at(out, grp, total)
        return _sym(out)

    def query_slice_cov(self, level: int, units, attrs, recodes=None) -> np.ndarray:
        """:meth:`slice_cov` projected on the query unit by unit, never ``m x m`` per pair.

        The chains of gains from each unit up are multiplied by the query's
        dense rows first (``G_D x m`` per unit), so the pairs hold only
        ``G_D x G_D`` blocks on the eigenspaces the query reaches: memory of
        the order of the result, ``(n c)^2``, where :meth:`slice_cov` holds
        ``n^2 2^|C| m^2`` numbers.
        """
        fa, attrs, recodes = self.fa, tuple(attrs), dict(recodes or {})
        units = np.asarray(units, dtype=np.int64)
        n = units.size
        qd = fa.dense_rows(attrs, recodes)
        g = qd.shape[0]
        anc, lca = self._ancestry(level, units)
        # proj[l]: the query's rows times the gains from the unit up to its ancestor at l + 1
        proj = [None] * (level + 1)
        proj[level] = np.broadcast_to(qd, (n, fa.n_spaces, g, fa.m))
        for lev in range(level, 0, -1):
            proj[lev - 1] = proj[lev] @ self.G[lev][anc[lev]]
        order = fa.cell_order(attrs, recodes)
        c = order.size
        out = np.zeros((n, c, n, c))
        for t, bt in enumerate(fa.scalar_blocks(attrs)):
            if bt is None:
                continue
            dense = np.zeros((n, n, g, g))
            for lev in range(level):
                mask = lca == lev
                if not mask.any():
                    continue
                x = proj[lev][:, t] @ self.F[lev][anc[lev], t]
                top = np.einsum("igm,jhm->ijgh", x, proj[lev][:, t])
                y = proj[lev + 1][:, t] @ self.G[lev + 1][anc[lev + 1], t]
                w = proj[lev + 1][:, t] @ self.V[lev + 1][anc[lev + 1], t]
                below = np.einsum("igm,jhm->ijgh", y, w)
                dense[mask] = (top - below)[mask]
            own = proj[level][:, t] @ self.F[level][units, t]
            dense[np.arange(n), np.arange(n)] = own @ np.swapaxes(proj[level][:, t], -1, -2)
            kron = np.einsum("ab,ijgh->iagjbh", bt, dense).reshape(n, c, n, c)
            out[:, order[:, None], :, order[None, :]] += kron.transpose(1, 3, 0, 2)
        cov = _sym(out.reshape(n * c, n * c))
        ex = self.exact_query_cells(level, units, attrs, recodes).reshape(-1)
        cov[ex, :] = 0.0
        cov[:, ex] = 0.0
        return cov

    def path(self, level: int) -> np.ndarray:
        """Per unit: ``"dense-factor"`` (every unit: ``2^|C|`` blocks of ``m x m``)."""
        return np.full(self.problem.sizes[level], "dense-factor", dtype=object)

    def zero_cells(self, level: int, units) -> dict:
        """``{unit: detailed cells (flat, C order) that are structural zeros}`` of ``units``."""
        units = np.asarray(units, dtype=np.int64)
        zero = self.zero[level][units]
        has = np.flatnonzero(zero.any(axis=1))
        if not has.size:
            return {}
        inner = int(np.prod(self.fa.sshape, dtype=np.int64))
        block = np.broadcast_to(zero[has][:, None, :], (has.size, inner, self.fa.m))
        flat = self.fa.from_block(block.reshape(has.size, *self.fa.sshape, self.fa.m))
        flat = flat.reshape(has.size, -1)
        return {int(units[i]): np.flatnonzero(flat[j]) for j, i in enumerate(has.tolist())}


def block_path_refusal(problem: Problem) -> str | None:
    """Why a problem cannot take the dense-factor path (None: it can)."""
    if problem.linear:
        return "it has linear constraints that are not queries"
    for it in problem.measurements:
        if it.variance.ndim == 2 and np.any(it.variance != it.variance[:, :1]):
            return "a query has noise variances that differ between its cells"
    return None


def _bottom_up(fa, own, starts, child, level, names=None):
    """``(z, V, S^+)`` of a level from its own blocks and its children's ``(z, V)``."""
    n, ns = own.key.size, fa.n_spaces
    lam_u, mc_u = own.lam, own.mc
    kids = np.zeros(n, dtype=bool) if child is None else starts[1:] > starts[:-1]
    z = np.zeros((n, *fa.sshape, fa.m))
    v = np.zeros((n, ns, fa.m, fa.m))
    sinv = None
    leaves = np.flatnonzero(~kids)
    if leaves.size:
        keys, inv = np.unique(own.key[leaves], return_inverse=True)
        inv = inv.reshape(-1)
        mpinv, vk, bad = _posterior(lam_u[keys], mc_u[keys], fa.dims)
        _identified(bad, level, leaves[np.argmax(bad.any(axis=1)[inv])] if bad.any() else 0, names)
        every = leaves.size == n
        eta = own.eta if every else own.eta[leaves]
        # one transform per pattern, shared by every unit that has it; written over eta,
        # which the level's own blocks or the gather just made and nothing reads again
        z_l = fa.apply(eta, None, index=inv, moebius=fa.moebius(vk), out=eta)
        if own.b is not None:  # zeros alone have target 0: only invariants move h0
            pinned = np.flatnonzero(np.abs(own.b[leaves]).reshape(leaves.size, -1).max(axis=1) > 0)
            h0 = fa.apply(own.b[leaves[pinned]], mpinv[inv[pinned]])
            z_l[pinned] += h0 - fa.apply(h0, vk[inv[pinned]] @ lam_u[keys][inv[pinned]])
        if every:
            z, v = z_l, vk[inv]
        else:
            z[leaves] = z_l
            v[leaves] = vk[inv]
    inner = np.flatnonzero(kids)
    if inner.size:
        zc, vc = child
        s = _children_sum(zc, starts)[inner]
        big_s = _children_sum(vc, starts)[inner]
        sinv_in, pnull = _children_obs(big_s)
        sinv = np.zeros((n, ns, fa.m, fa.m))
        sinv[inner] = sinv_in
        lam = lam_u[own.key[inner]] + sinv_in
        mc = mc_u[own.key[inner]] + pnull
        b = fa.apply(s, pnull)
        if own.b is not None:
            b += own.b[inner]
        eta = own.eta[inner] + fa.apply(s, sinv_in)
        mpinv, vi, bad = _posterior(lam, mc, fa.dims)
        _identified(bad, level, inner[np.argmax(bad.any(axis=1))] if bad.any() else 0, names)
        h0 = fa.apply(b, mpinv)
        z[inner] = fa.apply(eta, vi) + h0 - fa.apply(h0, vi @ lam)
        v[inner] = vi
        _check_children(fa, z[inner], s, pnull, inner, level, names)
    return z, v, sinv


def _identified(bad, level, unit, names=None):
    if bad.any():
        raise InvariantDPError(
            f"{_where(level, int(unit), names)} has directions that no measurement identifies; "
            "the dense-factor path needs every unit identified (the general path reports "
            "such cells as not estimable)."
        )


def _check_children(fa, z, s, pnull, units, level, names=None):
    """The exact values of a unit's children must agree with its own invariants and zeros."""
    diff = fa.apply(z - s, pnull)
    scale = 1.0 + np.abs(s).reshape(s.shape[0], -1).sum(axis=1)
    bad = np.abs(diff).reshape(s.shape[0], -1).max(axis=1) > _CONSISTENCY * scale
    if np.any(bad):
        where = _where(level, int(units[np.argmax(bad)]), names)
        raise InvariantDPError(
            f"the invariants or structural zeros of {where} contradict the exact values of its "
            "children: no histogram satisfies both."
        )


def _check_own(fa, prob, level, z, zero, names=None):
    """Each invariant holds and each structural zero is 0 (up to rounding), else refuse."""
    eqs = prob.at(prob.equalities, level)
    hist = fa.from_block(z) if eqs else None
    for it in eqs:
        got = fa.marginal(hist[it.units], it.attrs, it.recodes)
        scale = 1.0 + np.abs(it.values).sum(axis=1)
        bad = np.abs(got - it.values).max(axis=1, initial=0.0) > _CONSISTENCY * scale
        if np.any(bad):
            raise InvariantDPError(
                "the equality invariants and structural zeros of "
                f"{_where(level, int(it.units[np.argmax(bad)]), names)} are inconsistent: no "
                "histogram satisfies them all."
            )
    if not zero.any():
        return
    n, k = z.shape[0], int(np.prod(z.shape[1:], dtype=np.int64))
    flat = z.reshape(n, k // fa.m, fa.m)
    # the largest |z| on each dense coordinate, kept where it is a structural zero
    top = np.maximum(flat.max(axis=1, initial=-np.inf), -flat.min(axis=1, initial=np.inf))
    left = np.where(zero, top, 0.0).max(axis=1, initial=0.0)
    # the scale 1 + sum |z| is at least 1: only units with more left than that can fail
    maybe = np.flatnonzero(left > _CONSISTENCY)
    scale = 1.0 + np.abs(z[maybe]).reshape(maybe.size, k).sum(axis=1)
    bad = maybe[left[maybe] > _CONSISTENCY * scale]
    if bad.size:
        raise InvariantDPError(
            "the structural zeros of "
            f"{_where(level, int(bad[0]), names)} contradict its "
            "invariants: no histogram satisfies both."
        )
    _zero_out(fa, z, zero)


def _zero_out(fa, x, zero):
    """``x`` (block layout) set to exactly 0 on each unit's structural zeros, in place."""
    np.copyto(x, 0.0, where=zero.reshape(zero.shape[0], *(1,) * len(fa.sshape), fa.m))


def empty_solution(problem: Problem, fa: FactorAlgebra) -> BlockSolution:
    """A :class:`BlockSolution` of ``problem`` with its segments and empty passes."""
    n_lev = len(problem.sizes)
    starts = [None] + [
        segment_starts(problem.parents[lev], problem.sizes[lev - 1]) for lev in range(1, n_lev)
    ]
    sol = BlockSolution(problem, fa, starts)
    sol.z, sol.V, sol.sinv, sol.zero = ([None] * n_lev for _ in range(4))
    return sol


def solve_blocks(problem: Problem, names=None) -> BlockSolution:
    """The two passes in the dense-factor algebra (see the module docstring).

    Parameters
    ----------
    problem : Problem
        With recoded queries and structural zeros on any attributes; no
        :class:`~._problem.Linear` constraint and one noise variance per unit
        and query.
    names : dict, optional
        ``{level: (level name, geocodes)}`` for error messages.

    Returns
    -------
    BlockSolution

    Examples
    --------
    >>> from invariantdp._gls import Equality, Measurement, Problem, Zeros
    >>> groups = {0: np.array([[1, 0, 0], [0, 1, 1]])}   # attribute 0: {0}, {1, 2}
    >>> prob = Problem(
    ...     (3, 2), [np.array([-1]), np.array([0, 0])],
    ...     measurements=[Measurement(1, (0, 1), np.arange(2),
    ...                               np.array([[4.0, 1, 2, 3, 0, 1], [5, 2, 0, 1, 1, 2]]),
    ...                               np.ones(2))],
    ...     equalities=[Equality(0, (0,), np.array([0]), np.array([[9.0, 9.0]]),
    ...                          recodes=groups)],
    ...     zeros=[Zeros(1, (0,), np.array([0]), np.array([[False, False, True]]))])
    >>> sol = solve_blocks(prob)
    >>> sol.estimates(0, (0,), groups).round(9).tolist()   # the invariant, exactly
    [[9.0, 9.0]]
    >>> float(sol.estimates(1, (0,))[0, 2])                  # the structural zero
    0.0
    """
    why = block_path_refusal(problem)
    if why is not None:
        raise InvariantDPError(f"the dense-factor path does not apply: {why}.")
    fa = FactorAlgebra(problem.shape, dense_attributes(problem))
    n_lev = len(problem.sizes)
    sol = empty_solution(problem, fa)
    child = None
    for lev in range(n_lev - 1, -1, -1):
        own = _own(fa, problem, lev)
        st = sol.starts[lev + 1] if lev + 1 < n_lev else None
        z, v, sinv = _bottom_up(fa, own, st, child, lev, names)
        _check_own(fa, problem, lev, z, own.zero, names)
        sol.z[lev], sol.V[lev], sol.sinv[lev], sol.zero[lev] = z, v, sinv, own.zero
        child = (z, v)
    _top_down(sol, consume=True)
    return sol


def _top_down(sol: BlockSolution, consume: bool = False) -> None:
    """The top-down pass, in place; with ``consume``, each level's ``z`` below the first
    becomes its ``x`` (and ``z`` is set to None).

    The final covariances ``F`` of the levels below the first are computed
    when first asked for (:class:`FinalCovariances`).
    """
    fa, n_lev = sol.fa, sol.n_levels
    sol.x, sol.G = [None] * n_lev, [None] * n_lev
    sol.F = FinalCovariances(sol)
    sol.x[0] = sol.z[0].copy()
    sol.F.set_first(sol.V[0].copy())
    sol.G[0] = np.full_like(sol.V[0], np.nan)
    for lev in range(1, n_lev):
        st = sol.starts[lev]
        pidx = sol.problem.parents[lev]  # sorted: the children of each parent in a run
        d = sol.x[lev - 1] - _children_sum(sol.z[lev], st)
        g = _gains(sol.V[lev], sol.sinv[lev - 1], pidx)
        if consume and lev not in sol.lent:  # x = z + G (x_p - s) written over z: no copy
            x = fa.apply(d, g, rows=pidx, add_to=sol.z[lev])
            sol.z[lev] = None
        else:
            x = fa.apply(d, g, rows=pidx, add_to=sol.z[lev].copy())
        _zero_out(fa, x, sol.zero[lev])
        sol.x[lev], sol.G[lev] = x, g


def _gains(vc, sinv, pidx):
    """``G = V S^+_p`` of a level's units, a chunk at a time (parents gathered per chunk)."""
    g = np.empty_like(vc)
    for sl in row_chunks(vc.shape[1:], vc.shape[0]):
        if sinv is None:
            g[sl] = 0.0
        else:
            np.matmul(vc[sl], sinv[pidx[sl]], out=g[sl])
    return g


def _final_covariances(vc, g, fp, pidx):
    """``F = G F_p G^T + V - G V`` (symmetrised) of a level's units, a chunk at a time."""
    f = np.empty_like(vc)
    for sl in row_chunks(vc.shape[1:], vc.shape[0]):
        v, gi = vc[sl], g[sl]
        fi = (gi @ fp[pidx[sl]]) @ np.swapaxes(gi, -1, -2)
        fi += v
        fi -= gi @ v
        np.add(fi, np.swapaxes(fi, -1, -2), out=f[sl])
        f[sl] *= 0.5
    return f


class FinalCovariances(Sequence):
    """``F`` per level of a :class:`BlockSolution`, each computed when first asked for.

    ``F_i = G_i F_p G_i^T + V_i - G_i V_i`` needs the level above's; the
    finest level's is as large as its ``V`` and ``G`` together and only
    its own units' variances use it (a crosswalk's sums use ``V``, ``G``
    and the roots' ``F``), so a solve that is asked for tract totals never
    computes the blocks'.  A sequence otherwise: ``F[level]`` as before.
    It holds the solution's lists of ``V``, ``G`` and parents, not the
    solution (no reference cycle: a solution is freed as soon as it is dropped).
    """

    def __init__(self, sol: BlockSolution):
        self._f = [None] * sol.n_levels
        self._v, self._g, self._parents = sol.V, sol.G, sol.problem.parents

    def set_first(self, f0) -> None:
        self._f[0] = f0

    def computed(self, level: int) -> bool:
        """Whether ``F[level]`` is held already."""
        return self._f[level] is not None

    def __len__(self) -> int:
        return len(self._f)

    def __getitem__(self, level):
        if isinstance(level, slice):
            return [self[i] for i in range(*level.indices(len(self)))]
        level = range(len(self))[level]
        if self._f[level] is None:
            above = self[level - 1]
            pidx = self._parents[level]
            self._f[level] = _final_covariances(self._v[level], self._g[level], above, pidx)
        return self._f[level]

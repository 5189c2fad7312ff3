r"""Generalised least squares on a hierarchy: the bottom-up and top-down passes.

:func:`solve` is the one implementation of the constrained GLS of the package
(:func:`invariantdp.census.gls` calls it on noisy measurement
files; a single labelled release is the one-unit case).  The unknowns are the
finest histograms; a unit's histogram is the sum of its children's.

Bottom-up (finest level first), each unit's *subtree estimate* ``z_u`` and its
covariance ``V_u`` use the measurements of its subtree only: the children's
estimates sum to ``s`` with covariance :math:`S = \sum_i V_i`, and
:math:`V_u = (S^{-1} + J_u)^{-1}`, :math:`z_u = V_u (S^{-1} s + \eta_u)`
under the unit's exact constraints.

Top-down (roots first), each child is conditioned on its parent's final
estimate: :math:`x_i = z_i + G_i (x_p - s)` with :math:`G_i = V_i S^{-1}`, and
:math:`F_i = G_i F_p G_i^\top + \Omega_i`,
:math:`\Omega_i = V_i - V_i S^{-1} V_i` (the law of :math:`h_i` given
:math:`h_p`; siblings given the parent have covariance
:math:`-V_i S^{-1} V_j`).  Both passes are linear in the number of units.

On a product schema with marginal queries every operator is a scalar on each
of the ``2^d`` eigenspaces (:mod:`._eigenspaces`, rules in :mod:`._eigenspace_rules`), so a
unit costs O(k 2^d) by axis means, vectorised over a level.  Units whose
constraints leave that algebra take the low-rank path of :mod:`._low_rank` on the
subspace ``U`` those constraints span.

Final covariances are stored compactly: each unit has its scalars ``F`` (right
on :math:`U^\perp`) and, when a unit above it carries a dense law on ``U``
(its *anchor*), the product ``Gamma`` of the scalar gains from that anchor and
the accumulated conditional variances ``Omega~``: on ``U`` its covariance is
:math:`\mathrm{diag}(\tilde\Omega) + \Gamma F_a \Gamma`.

References
----------
Cumings-Menon & Zhuravlev (2024), "Least squares estimation for hierarchical
data", arXiv:2404.13164 (the two passes); Subspace DP paper, Theorem 22 and
Congenial DP paper, Section 3 (conditioning on invariants, not projecting).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..exceptions import InvariantDPError
from ._constraints import constraint_structure
from ._eigenspace_rules import chain, combine, gains, segment_sum
from ._eigenspaces import EigenAlgebra
from ._low_rank import dense_bottom_up, dense_top_down, restrict
from ._problem import Problem
from ._unit_information import own_info

__all__ = ["MAX_ESTIMATE", "Solution", "hold_invariants", "solve"]

#: estimates at or beyond this magnitude do not carry counts to the unit in float64
MAX_ESTIMATE = 2.0**52
#: an invariant holds when ``|C x - c| <= _REL (1 + |c|) + _ULPS eps max|C| sum|x_u|``
_REL, _ULPS = 1e-9, 64.0


@dataclass
class Solution:
    """Every array of the two passes, per level (see the module docstring).

    ``z, v`` subtree estimates and variances (``z`` is None below level 1 after
    a Dask run: nothing after the passes needs it); ``x, F`` final estimates and
    variances; ``G, Om`` scalar gains and conditional variances given the
    parent; ``anchor`` (level, unit) of the nearest unit above with a dense
    final law (``-1``: none), ``Gam, Omt`` the chain to it (None without a
    low-rank path); ``sub``, ``Fd``,
    ``Gd``, ``Omd`` the dense laws on ``U`` by unit; ``affected`` the units of
    the low-rank path.
    """

    problem: Problem
    alg: EigenAlgebra
    basis: object
    starts: list
    affected: list
    zero_cells: list = field(default_factory=list)
    z: list = field(default_factory=list)
    v: list = field(default_factory=list)
    sub: list = field(default_factory=list)
    x: list = field(default_factory=list)
    F: list = field(default_factory=list)
    G: list = field(default_factory=list)
    Om: list = field(default_factory=list)
    anchor: list = field(default_factory=list)
    Gam: list = field(default_factory=list)
    Omt: list = field(default_factory=list)
    Fd: list = field(default_factory=list)
    Gd: list = field(default_factory=list)
    Omd: list = field(default_factory=list)

    @property
    def n_levels(self) -> int:
        return len(self.problem.sizes)

    def path(self, level: int) -> np.ndarray:
        """Per unit: ``"fast"``, ``"low-rank"`` (a rank-M correction) or ``"dense"``."""
        out = np.full(self.problem.sizes[level], "fast", dtype=object)
        if self.basis is not None:
            touched = self.affected[level] | (self.anchor[level][:, 0] == level)
            out[touched] = "dense" if self.basis.dense else "low-rank"
        return out


def _where(level: int, unit: int, names) -> str:
    """A unit in messages: its geocode and level name when ``names`` has them."""
    if names and level in names:
        name, codes = names[level]
        return f"unit {codes[unit]} of level {name}"
    return f"unit {unit} of level {level}"


def bottom_up_level(alg, own, basis, affected, starts, child, level, names=None):
    """One level of the bottom-up pass: ``(z, v, sub)`` from the children's ``(z, v, sub)``."""
    n = own.lam.shape[0]
    if child is None:
        s = np.zeros((n, *alg.shape))
        big_s = np.full((n, alg.n_spaces), np.inf)
    else:
        zc, vc, _ = child
        s = segment_sum(zc, starts)
        big_s = segment_sum(vc, starts)
        big_s[starts[1:] == starts[:-1]] = np.inf  # no children: nothing known from below
    var, alpha, beta = combine(big_s, own.lam, own.pinned)
    gamma = np.where(own.pinned, 1.0 - alpha, 0.0)
    z = alg.apply(own.eta, beta)
    if child is not None:
        z += alg.apply(s, alpha)
    if own.pinned.any():
        z += alg.apply(own.pin, gamma)
        # one refinement step: the sums above round the pinned spaces when the other
        # spaces carry much larger values
        z += alg.apply(own.pin - z, own.pinned.astype(float))
    if own.pin is not None:
        _check_pins(alg, own, s, big_s, level, names)
    sub = {}
    for u in np.flatnonzero(affected):
        kids = []
        if child is not None:
            zc, vc, subc = child
            kids = [
                restrict(basis, zc[j], vc[j], subc.get(j)) for j in range(starts[u], starts[u + 1])
            ]
        law = dense_bottom_up(basis, own, int(u), kids, _where(level, int(u), names))
        flat = z[u].reshape(-1)
        flat = flat + basis.mat @ (law.mean - basis.coords(flat))
        flat[own.zero_cells.get(int(u), [])] = 0.0  # exactly, not to rounding
        z[u] = flat.reshape(alg.shape)
        sub[int(u)] = law
    return z, var, sub


def _check_pins(alg, own, s, big_s, level, names):
    """Invariants of a unit must agree with the exact sum of its children's."""
    both = own.pinned & (big_s == 0)
    if not np.any(both):
        return
    rows = np.flatnonzero(both.any(axis=1))
    diff = alg.apply(s[rows] - own.pin[rows], both[rows].astype(float))
    scale = 1.0 + np.abs(own.pin[rows]).reshape(rows.size, -1).sum(axis=1)
    # the children's sum carries the rounding of their own (possibly huge) estimates
    size = np.abs(s[rows]).reshape(rows.size, -1).sum(axis=1)
    tol = 1e-8 * scale + _ULPS * np.finfo(float).eps * size
    bad = np.abs(diff).reshape(rows.size, -1).max(axis=1) > tol
    if np.any(bad):
        u = int(rows[np.argmax(bad)])
        raise InvariantDPError(
            f"the invariants of {_where(level, u, names)} contradict the exact values of its "
            "children: no histogram satisfies both."
        )


def top_down_level(alg, basis, child, starts, parent, level, names=None, zero_cells=None):
    """One level of the top-down pass: the children's final quantities from the parent's.

    ``child`` is ``(z, v, sub, affected)`` of the level; ``parent`` a dict of
    the parent level's ``x, F, anchor, Gam, Omt, Fd, affected`` and ``s``
    (the children's sum of subtree estimates).
    """
    zc, vc, subc, _ = child
    zero_cells = zero_cells or {}
    n_p = starts.size - 1
    pidx = np.repeat(np.arange(n_p), np.diff(starts))
    big_s = segment_sum(vc, starts)
    inf = np.isinf(vc)
    n_inf = segment_sum(inf.astype(float), starts)
    rest = segment_sum(np.where(inf, 0.0, vc), starts)
    g, om = gains(vc, big_s[pidx], n_inf[pidx], rest[pidx])
    d = parent["x"] - parent["s"]
    # children that are not identified share what their siblings leave of the parent
    # equally: any split is an estimate, and this one keeps the children summing to it
    with np.errstate(divide="ignore"):
        share = np.where(np.isnan(g), 1.0 / n_inf[pidx], g)
    x = alg.apply(d, share, rows=pidx)
    x += zc
    out = {
        "x": x,
        "F": chain(g, om, parent["F"][pidx]),
        "G": g,
        "Om": om,
        "anchor": parent["anchor"][pidx].copy(),
        # the chains to the anchors matter only where the low-rank path exists
        "Gam": None if basis is None else np.where(np.isnan(g), 0, g) * parent["Gam"][pidx],
        "Omt": None if basis is None else chain(g, om, parent["Omt"][pidx]),
        "Fd": {},
        "Gd": {},
        "Omd": {},
    }
    if basis is None:
        return out
    for p in np.flatnonzero(parent["affected"]):
        kids = range(starts[p], starts[p + 1])
        if not any(child[3][j] for j in kids):
            continue
        laws = [restrict(basis, zc[j], vc[j], subc.get(j)) for j in kids]
        x_pu = basis.coords(parent["x"][p].reshape(-1))
        results = dense_top_down(parent["Fd"][int(p)], x_pu, laws, _where(level - 1, int(p), names))
        _share_unidentified(x_pu, results)
        for j, (x_u, gain, omega, final) in zip(kids, results, strict=True):
            flat = x[j].reshape(-1)
            flat = flat + basis.mat @ (x_u - basis.coords(flat))
            flat[zero_cells.get(j, [])] = 0.0  # exactly, not to rounding
            x[j] = flat.reshape(alg.shape)
            out["anchor"][j] = (level, j)
            out["Gam"][j] = 1.0
            out["Omt"][j] = 0.0
            out["Fd"][j], out["Gd"][j], out["Omd"][j] = final, gain, omega
    return out


def _share_unidentified(x_parent_u, results) -> None:
    """Make the children's estimates on ``U`` sum to the parent's.

    Directions in which a child is not identified given its parent carry an
    arbitrary value; the gap between the parent and the children's sum lies in
    those directions, and is split there (least norm), so that every
    identified function of several units (a sum of siblings) is estimated right.
    """
    nulls = [omega.null for _, _, omega, _ in results]
    if not any(n.shape[1] for n in nulls):
        return
    gap = x_parent_u - sum(r[0] for r in results)
    t = np.linalg.lstsq(np.hstack(nulls), gap, rcond=None)[0]
    at = 0
    for (x_u, _, _, final), n in zip(results, nulls, strict=True):
        x_u += n @ t[at : at + n.shape[1]]
        final.mean = x_u
        at += n.shape[1]


def solve(problem: Problem, names=None) -> Solution:
    """Run the two passes on ``problem`` (serially; :mod:`._dask_passes` splits them into tasks).

    Parameters
    ----------
    problem : Problem
    names : dict, optional
        ``{level: (level name, geocodes)}`` for error messages.

    Returns
    -------
    Solution
    """
    alg = EigenAlgebra(problem.shape)
    owns = [own_info(alg, problem, lev) for lev in range(len(problem.sizes))]
    starts, affected, basis = constraint_structure(problem, alg, [o.constraints for o in owns])
    sol = Solution(problem, alg, basis, starts, affected, [o.zero_cells for o in owns])
    up = upward(alg, owns, basis, affected, starts, names)
    sol.z, sol.v, sol.sub = (list(t) for t in zip(*up, strict=True))
    downward(sol, names)
    hold_invariants(sol, names)
    return sol


def upward(alg, owns, basis, affected, starts, names, child=None, base=0):
    """Bottom-up over the levels of ``owns`` (finest first); ``[(z, v, sub)]`` per level.

    ``child`` is the ``(z, v, sub)`` of the level below the finest of ``owns``
    (the subtree results of the Dask tasks), or None; ``starts[l + 1]`` holds
    the children segments of ``owns[l]``'s units, and ``base`` is the level
    number of ``owns[0]`` (for messages).
    """
    out = [None] * len(owns)
    for lev in range(len(owns) - 1, -1, -1):
        st = starts[lev + 1] if lev + 1 < len(starts) else None
        out[lev] = bottom_up_level(
            alg, owns[lev], basis, affected[lev], st, child, base + lev, names
        )
        child = out[lev]
    return out


def root_level(sol: Solution, level: int = 0) -> dict:
    """Final quantities of the roots: their subtree estimates."""
    n = sol.problem.sizes[level]
    anchor = np.full((n, 2), -1, dtype=np.int64)
    fd = {}
    for u, law in sol.sub[level].items():
        anchor[u] = (level, u)
        fd[u] = law
    ns = sol.alg.n_spaces
    return {
        "x": sol.z[level].copy(),
        "F": sol.v[level].copy(),
        "G": np.full((n, ns), np.nan),
        "Om": sol.v[level].copy(),
        "anchor": anchor,
        "Gam": None if sol.basis is None else np.ones((n, ns)),
        "Omt": None if sol.basis is None else np.zeros((n, ns)),
        "Fd": fd,
        "Gd": {},
        "Omd": {},
    }


def _store(sol: Solution, level: int, res: dict) -> None:
    for key in ("x", "F", "G", "Om", "anchor", "Gam", "Omt", "Fd", "Gd", "Omd"):
        getattr(sol, key)[level] = res[key]


def downward(sol: Solution, names, stop: int | None = None) -> None:
    """Top-down from the roots to level ``stop`` (default: the finest)."""
    n_lev = sol.n_levels
    for key in ("x", "F", "G", "Om", "anchor", "Gam", "Omt", "Fd", "Gd", "Omd"):
        if len(getattr(sol, key)) < n_lev:
            setattr(sol, key, [None] * n_lev)
    _store(sol, 0, root_level(sol))
    for lev in range(1, n_lev if stop is None else stop + 1):
        st = sol.starts[lev]
        parent = {
            "x": sol.x[lev - 1],
            "F": sol.F[lev - 1],
            "anchor": sol.anchor[lev - 1],
            "Gam": sol.Gam[lev - 1],
            "Omt": sol.Omt[lev - 1],
            "Fd": sol.Fd[lev - 1],
            "affected": sol.affected[lev - 1],
            "s": segment_sum(sol.z[lev], st),
        }
        child = (sol.z[lev], sol.v[lev], sol.sub[lev], sol.affected[lev])
        res = top_down_level(sol.alg, sol.basis, child, st, parent, lev, names, sol.zero_cells[lev])
        _store(sol, lev, res)


def _rounding(x) -> np.ndarray:
    """What rounding alone may leave of a sum of a unit's cells: ``_ULPS eps sum |x_u|``.

    The whole unit's size, not the summed cells': the eigen-projections mix a
    unit's cells, so a cell near 0 carries the rounding of its large neighbours.
    """
    size = np.abs(x).reshape(x.shape[0], -1).sum(axis=1)
    return _ULPS * np.finfo(float).eps * size


def _refuse(sol, level, unit, names, what, got, want):
    raise InvariantDPError(
        f"the GLS estimates of {_where(level, unit, names)} break {what} ({got:.17g} where it "
        f"is {want:.17g}) beyond rounding: the noisy values are too far apart in size for "
        "float64 to hold the invariants; check the measurements."
    )


def hold_invariants(sol: Solution, names=None) -> None:
    r"""Make the final estimates keep the invariants to rounding, or refuse.

    The passes combine estimates whose sizes can differ by many orders (a
    noisy value of ``1e15`` beside an invariant total of 20); the means and
    sums of the eigen-algebra then round the pinned directions.  One
    refinement step on the units of the scalar path: bottom-up, the
    eigenspaces a unit's subtree fixes exactly (subtree variance 0) are set to
    its children's sum, and each equality invariant's residual
    ``c - Q_S x_u`` is put back as ``Q_S^\top r / (\prod_{a \notin S} n_a)``
    (the least-norm correction); top-down, a parent's gap to its children's
    sum is re-shared by the children's gains (equally where they are all
    exact: the gap is then rounding).  Then every
    equality, linear constraint and parent = sum of children is checked:
    ``|C x - c| <= 1e-9 (1 + |c|) + 64 eps max|C| sum |x_u|`` (the rounding
    of the unit's estimates themselves; ``x_u`` all cells of the unit, or of
    the parent and its children), and every estimate must stay below
    :data:`MAX_ESTIMATE` (``2**52``: beyond it float64 does not carry a count
    to the unit, so no invariant can hold to rounding).

    Raises
    ------
    InvariantDPError
        Naming the unit, the invariant and the value found, where the
        estimates cannot keep an invariant.
    """
    alg = sol.alg
    # bottom-up: what the subtree fixes exactly is its children's sum, then its own invariants
    for lev in range(sol.n_levels - 1, -1, -1):
        x = sol.x[lev]
        if lev + 1 < sol.n_levels:
            st = sol.starts[lev + 1]
            clean = _clean(sol, lev + 1) & ~sol.affected[lev] & (np.diff(st) > 0)
            exact = (sol.v[lev] == 0) & clean[:, None]
            if exact.any():
                x += alg.apply(segment_sum(sol.x[lev + 1], st) - x, exact.astype(float))
        _own_equalities(sol, lev)
    # top-down: each parent's gap to its children's sum, shared by the children's gains
    for lev in range(1, sol.n_levels):
        x, st = sol.x[lev], sol.starts[lev]
        pidx = np.repeat(np.arange(st.size - 1), np.diff(st))
        g = sol.G[lev]
        n_free = segment_sum(np.isnan(g).astype(float), st)
        with np.errstate(divide="ignore", invalid="ignore"):
            share = np.where(np.isnan(g), 1.0 / n_free[pidx], g)
        # where the children are known exactly the gap is their rounding: shared equally
        kids = np.diff(st).astype(float)[pidx][:, None]
        share = np.where(segment_sum(share, st)[pidx] > 0, share, 1.0 / kids)
        gap = sol.x[lev - 1] - segment_sum(x, st)
        gap[~_clean(sol, lev)] = 0.0
        x += alg.apply(gap, share, rows=pidx)
    for lev in range(sol.n_levels):
        _check_level(sol, lev, names)


def _clean(sol: Solution, lev: int) -> np.ndarray:
    """Parents (at ``lev - 1``) none of whose children take the low-rank path."""
    return segment_sum(sol.affected[lev].astype(float), sol.starts[lev]) == 0


def _own_equalities(sol: Solution, lev: int) -> None:
    """Put each equality's residual back on the scalar-path units it pins (least norm)."""
    prob, alg, x = sol.problem, sol.alg, sol.x[lev]
    for e in prob.at(prob.equalities, lev):
        keep = ~sol.affected[lev][e.units]
        units = e.units[keep]
        if units.size:
            r = e.values[keep] - alg.marginal(x[units], e.attrs)
            x[units] += alg.spread(r, e.attrs) / alg.query_factor(e.attrs)


def _check_level(sol: Solution, lev: int, names) -> None:
    """Refuse estimates of ``lev`` that break an invariant beyond rounding (see above)."""
    prob, alg, x = sol.problem, sol.alg, sol.x[lev]
    big = np.abs(x).reshape(x.shape[0], -1).max(axis=1, initial=0.0) >= MAX_ESTIMATE
    if np.any(big):
        u = int(np.argmax(big))
        raise InvariantDPError(
            f"the GLS estimates of {_where(lev, u, names)} reach "
            f"{float(np.abs(x[u]).max()):.3g}, beyond 2**52 where float64 no longer carries a "
            "count to the unit: the invariants cannot be held to rounding (a noisy value of "
            "that size is no count; check the measurements)."
        )
    for e in prob.at(prob.equalities, lev):
        if not e.units.size:
            continue
        got = alg.marginal(x[e.units], e.attrs)
        tol = _REL * (1 + np.abs(e.values)) + _rounding(x[e.units])[:, None]
        bad = np.abs(got - e.values) > tol
        if np.any(bad):
            i, j = np.unravel_index(int(np.argmax(bad)), bad.shape)
            _refuse(
                sol, lev, int(e.units[i]), names, "an equality invariant", got[i, j], e.values[i, j]
            )
    for c in prob.at(prob.linear, lev):
        flat = x[c.unit].reshape(-1)
        got = c.matrix @ flat
        tol = _REL * (1 + np.abs(c.values)) + _rounding(x[c.unit : c.unit + 1]) * np.abs(
            c.matrix
        ).max(axis=1)
        bad = np.abs(got - c.values) > tol
        if np.any(bad):
            j = int(np.argmax(bad))
            _refuse(sol, lev, int(c.unit), names, "a linear invariant", got[j], c.values[j])
    if lev > 0:
        st = sol.starts[lev]
        has = st[1:] > st[:-1]
        total = segment_sum(x, st)[has]
        parent = sol.x[lev - 1][has]
        size = segment_sum(_rounding(x), st)[has] + _rounding(parent)
        tol = _REL * (1 + np.abs(parent)) + size.reshape(-1, *[1] * (parent.ndim - 1))
        bad = (np.abs(total - parent) > tol).reshape(parent.shape[0], -1).any(axis=1)
        if np.any(bad):
            p = int(np.flatnonzero(has)[np.argmax(bad)])
            _refuse(
                sol,
                lev - 1,
                p,
                names,
                "the sum of its children's estimates",
                float(np.sum(segment_sum(x, st)[p])),
                float(np.sum(sol.x[lev - 1][p])),
            )

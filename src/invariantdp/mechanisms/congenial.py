r"""Congenial privacy: additive mechanisms conditioned on their invariants.

Gong & Meng (2020) impose mandated disclosure on a differentially private
release by *conditioning* rather than by post-processing: the released
:math:`M^*(x)` has the law of :math:`M(x) \mid M(x) \in S^*`,

.. math:: S^* = \{ s : A s = a,\; B s \ge b \},

where :math:`A s = a` are the invariants (published exactly) and
:math:`B s \ge b` logical constraints such as non-negative counts (their
Eq. 2.3, Theorem 2.1).  For an additive mechanism with independent
coordinates the target is

.. math:: p^*(s) \propto \prod_i p_i(s_i - s^*_i)\, \mathbf 1(s \in S^*).

Samplers for it:

``"exact"``
    independent draws from the target itself.  Integer noise (double
    geometric, discrete Gaussian) with a 0/1 invariant matrix and bounded-below
    cells (non-negativity, optional upper bounds) -- e.g. the 2 x 23 table of
    Section 3 -- by a dynamic programme over classes of identical columns of
    :math:`A` (see :func:`_run_exact_dp`); closed forms otherwise: spherical
    Gaussian noise with equality invariants only is the projected Gaussian
    (Gao, Gong & Yu, Theorem 22); a one-dimensional fibre (e.g. Example 4.1,
    two Laplace bins with a fixed total, where
    :math:`m_1 - s_1 \sim \mathrm{Lap}(1/\epsilon)`) is sampled exactly
    along its line.
``"mis"``
    the paper's Metropolized independent sampler (Algorithm 1) with its
    proposal index set :math:`\mathcal I` and tuning parameter
    :math:`\tilde\epsilon`: the baseline.
``"gibbs"``
    heat-bath updates along kernel moves of :math:`A` -- exchanges
    :math:`e_i - e_j` between cells with identical columns of :math:`A`,
    and lifts of an integer lattice basis of the kernel of the collapsed
    matrix (for integer noise a chain on the integer fibre
    :math:`\{s \in \mathbb Z^d : A s = a\}`).  Each update draws the exact
    one-dimensional conditional along the move (a Metropolis-Hastings step
    whose proposal is the conditional itself, so its acceptance is 1);
    disjoint moves are updated together and chains are vectorised.

The post-processing alternatives of Section 4, :func:`l2_postprocess` and
:func:`l1_postprocess`, are here for comparison (they draw no noise).

Every sampler draws from a numpy ``Generator`` in floating point (the exact
sampler too: its probabilities are floats), so a conditional release is a
**simulation, not for publication** (Mironov 2012 for float noise; a seed
makes it reproducible), and ``secure=True`` is refused.  For a release to
publish, use ``discrete_laplace`` / ``discrete_gaussian(x, ..., secure=True)``
(exact integer noise, not conditioned on the invariants).

References
----------
R. Gong and X.-L. Meng (2020), *Congenial differential privacy under
mandated disclosure*, FODS '20, Sec. 2-4 and Appendices A-C.
J. Gao, R. Gong and F.-Y. Yu, *Subspace differential privacy*, Sec. 4,
Theorem 22 and Appendix D.
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field
from fractions import Fraction
from math import gcd

import numpy as np
from scipy import linalg, optimize, sparse

from .._results import format_table
from .._rng import as_generator
from .._validation import (
    InvariantDPError,
    check_counts,
    check_finite_array,
    check_positive,
    check_positive_int,
)
from ..distributions.discrete import _draw_discrete_laplace, discrete_gaussian
from ..exceptions import ConvergenceWarning  # re-exported: the same class, package-wide
from ..invariants import Invariants
from ..release import NoiseLaw, PrivacyGuarantee, Release
from ._base import randomness_note, refuse_secure
from ._linesampler import sample_gauss_line, sample_laplace_line

__all__ = [
    "ConditionalRelease",
    "ConvergenceWarning",
    "LinearInequalities",
    "SamplerDiagnostics",
    "conditional_release",
    "l1_postprocess",
    "l1_privacy_level",
    "l2_postprocess",
]

_FAMILIES = {
    # name: (integer-valued, laplace-type)
    "double_geometric": (True, True),
    "discrete_gaussian": (True, False),
    "laplace": (False, True),
    "gaussian": (False, False),
}
_SAMPLERS = ("auto", "exact", "gibbs", "mis")


# ---------------------------------------------------------------------------
# inequalities
# ---------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class LinearInequalities:
    """Linear inequalities ``B @ s.ravel() >= lower`` on a release.

    Parameters
    ----------
    matrix : array_like, shape (m, n)
        ``B``.
    lower : array_like, shape (m,)
        ``b``.

    Examples
    --------
    >>> LinearInequalities.nonnegative(3).lower
    array([0., 0., 0.])
    """

    matrix: np.ndarray
    lower: np.ndarray

    def __post_init__(self):
        B = self.matrix.toarray() if sparse.issparse(self.matrix) else self.matrix
        B = check_finite_array("inequalities.matrix", B)
        if B.ndim != 2:
            raise InvariantDPError(f"`inequalities.matrix` must be 2-D, got {B.ndim} dimension(s).")
        b = check_finite_array("inequalities.lower", self.lower)
        if b.shape != (B.shape[0],):
            raise InvariantDPError(
                f"`inequalities.lower` must have shape ({B.shape[0]},), got {b.shape}."
            )
        object.__setattr__(self, "matrix", B)
        object.__setattr__(self, "lower", b)

    @classmethod
    def nonnegative(cls, n: int) -> LinearInequalities:
        """``s >= 0`` for ``n`` cells (counts)."""
        n = check_positive_int("n", n)
        return cls(np.eye(n), np.zeros(n))

    def to_dict(self) -> dict:
        return {"matrix": self.matrix.tolist(), "lower": self.lower.tolist()}


def _as_inequalities(inequalities, n: int) -> LinearInequalities | None:
    if inequalities is None:
        return None
    if isinstance(inequalities, str):
        if inequalities != "nonnegative":
            raise InvariantDPError(
                f"`inequalities` ({inequalities!r}) must be 'nonnegative', a "
                "LinearInequalities or a pair (B, b)."
            )
        return LinearInequalities.nonnegative(n)
    if isinstance(inequalities, LinearInequalities):
        ineq = inequalities
    elif isinstance(inequalities, tuple | list) and len(inequalities) == 2:
        ineq = LinearInequalities(*inequalities)
    else:
        raise TypeError(
            "`inequalities` must be None, 'nonnegative', a LinearInequalities or a pair "
            f"(B, b), got {type(inequalities).__name__}."
        )
    if ineq.matrix.shape[1] != n:
        raise InvariantDPError(
            f"`inequalities` act on {ineq.matrix.shape[1]} cells but the data have {n}."
        )
    return ineq


# ---------------------------------------------------------------------------
# the target M(x) | M(x) in S*
# ---------------------------------------------------------------------------


@dataclass
class _Target:
    family: str
    integer: bool
    laplace_type: bool
    rate: float  # laplace-type: log p(u) = -rate |u|
    sigma: float  # gaussian-type: log p(u) = -u^2 / (2 sigma^2)
    s_star: np.ndarray
    A: np.ndarray  # independent rows
    a: np.ndarray
    lb: np.ndarray  # cell bounds from single-cell inequality rows
    ub: np.ndarray
    Bc: np.ndarray  # coupled inequality rows (two or more cells)
    bc: np.ndarray

    @property
    def d(self) -> int:
        return self.s_star.size

    def logp(self, s: np.ndarray) -> np.ndarray:
        """Unnormalised log target of rows of ``s`` (without the constraints)."""
        u = s - self.s_star
        if self.laplace_type:
            return -self.rate * np.abs(u).sum(axis=-1)
        return -0.5 * (u * u).sum(axis=-1) / self.sigma**2

    def feasible(self, s: np.ndarray, tol: float = 1e-9) -> np.ndarray:
        ok = np.all((s >= self.lb - tol) & (s <= self.ub + tol), axis=-1)
        if self.Bc.shape[0]:
            ok &= np.all(s @ self.Bc.T >= self.bc - tol, axis=-1)
        return ok


def _noise_parameters(mechanism, epsilon, mu, rho, sensitivity):
    if mechanism not in _FAMILIES:
        raise InvariantDPError(
            f"`mechanism` ({mechanism!r}) must be one of {', '.join(map(repr, _FAMILIES))}."
        )
    integer, laplace_type = _FAMILIES[mechanism]
    sensitivity = check_positive("sensitivity", sensitivity)
    if laplace_type:
        if epsilon is None:
            raise InvariantDPError(f"`epsilon` is required for the {mechanism} mechanism.")
        epsilon = check_positive("epsilon", epsilon)
        return integer, laplace_type, epsilon / sensitivity, np.nan, {"epsilon": epsilon}
    if mechanism == "gaussian":
        if mu is None:
            raise InvariantDPError("`mu` (Gaussian DP) is required for the gaussian mechanism.")
        mu = check_positive("mu", mu)
        return integer, laplace_type, np.nan, sensitivity / mu, {"mu": mu}
    if rho is None:
        raise InvariantDPError("`rho` (zCDP) is required for the discrete_gaussian mechanism.")
    rho = check_positive("rho", rho)
    return integer, laplace_type, np.nan, sensitivity / np.sqrt(2.0 * rho), {"rho": rho}


def _independent_rows(A: np.ndarray, a: np.ndarray):
    if A.shape[0] == 0:
        return A, a
    _, R, piv = linalg.qr(A.T, mode="economic", pivoting=True)
    tol = max(A.shape) * np.finfo(float).eps * max(abs(R[0, 0]), 1.0)
    r = int(np.sum(np.abs(np.diag(R)) > tol))
    keep = np.sort(piv[:r])
    return A[keep], a[keep]


def _build_target(x, mechanism, invariants, inequalities, epsilon, mu, rho, sensitivity):
    if not isinstance(invariants, Invariants):
        raise TypeError(
            f"`invariants` must be an invariantdp.Invariants, got {type(invariants).__name__}."
        )
    integer, laplace_type, rate, sigma, privacy = _noise_parameters(
        mechanism, epsilon, mu, rho, sensitivity
    )
    if integer:
        x_arr = check_counts("x", x) if np.all(np.asarray(x) >= 0) else None
        if x_arr is None:
            x_arr = check_finite_array("x", x)
            if not np.all(x_arr == np.round(x_arr)):
                raise InvariantDPError(f"`x` must hold integers for the {mechanism} mechanism.")
    else:
        x_arr = check_finite_array("x", x)
    shape = invariants.shape
    if x_arr.shape != shape:
        raise InvariantDPError(
            f"`x` must have the shape of the invariants' data {shape}, got {x_arr.shape}."
        )
    s_star = x_arr.astype(float).reshape(-1)
    C = invariants.matrix
    C = C.toarray() if sparse.issparse(C) else np.asarray(C, dtype=float)
    if invariants.values is None:
        values = C @ s_star
    else:
        invariants.check(x_arr, name="x")
        values = np.asarray(invariants.values, dtype=float)
    if integer and not np.all(C == np.round(C)):
        raise InvariantDPError(
            "`invariants` must have an integer-valued matrix for integer-valued noise "
            f"({mechanism})."
        )
    A, a = _independent_rows(C, values)
    if A.shape[0] >= s_star.size:
        raise InvariantDPError(
            f"`invariants` determine all {s_star.size} cells (rank {A.shape[0]}); nothing is "
            "left to privatize."
        )
    ineq = _as_inequalities(inequalities, s_star.size)
    d = s_star.size
    lb, ub = np.full(d, -np.inf), np.full(d, np.inf)
    Bc, bc = np.zeros((0, d)), np.zeros(0)
    if ineq is not None:
        B, b = ineq.matrix, ineq.lower
        nnz = np.count_nonzero(B, axis=1)
        if np.any(nnz == 0):
            bad = np.flatnonzero((nnz == 0) & (b > 0))
            if bad.size:
                raise InvariantDPError(
                    f"`inequalities` are infeasible: row {bad[0]} reads 0 >= {b[bad[0]]:g}."
                )
        single = nnz == 1
        for i in np.flatnonzero(single):
            k = int(np.flatnonzero(B[i])[0])
            coef = B[i, k]
            if coef > 0:
                lb[k] = max(lb[k], b[i] / coef)
            else:
                ub[k] = min(ub[k], b[i] / coef)
        Bc, bc = B[nnz >= 2], b[nnz >= 2]
        _check_feasible(s_star, A, a, ineq, lb, ub, Bc, bc)
    target = _Target(
        family=mechanism,
        integer=integer,
        laplace_type=laplace_type,
        rate=rate,
        sigma=sigma,
        s_star=s_star,
        A=A,
        a=a,
        lb=lb,
        ub=ub,
        Bc=Bc,
        bc=bc,
    )
    return target, privacy, ineq, C, values


def _check_feasible(s_star, A, a, ineq, lb, ub, Bc, bc):
    tol = 1e-9 * np.maximum(1.0, np.abs(s_star))
    viol_cell = (s_star < lb - tol) | (s_star > ub + tol)
    viol_rows = (Bc @ s_star < bc - 1e-9 * np.maximum(1.0, np.abs(bc))) if Bc.size else []
    if not (np.any(viol_cell) or np.any(viol_rows)):
        return
    # is S* empty, or is it only the confidential data that violates it?
    res = optimize.linprog(
        np.zeros(s_star.size),
        A_ub=-ineq.matrix,
        b_ub=-ineq.lower,
        A_eq=A if A.size else None,
        b_eq=a if A.size else None,
        bounds=[(None, None)] * s_star.size,
        method="highs",
    )
    if res.status == 2:
        raise InvariantDPError(
            "`inequalities` are infeasible together with the invariants: the set "
            "{A s = a, B s >= b} is empty."
        )
    where = (
        f"cell {int(np.flatnonzero(viol_cell)[0])}"
        if np.any(viol_cell)
        else f"coupled row {int(np.flatnonzero(viol_rows)[0])}"
    )
    raise InvariantDPError(
        f"`x` violates `inequalities` ({where}); the confidential data must lie in S*."
    )


# ---------------------------------------------------------------------------
# kernel moves
# ---------------------------------------------------------------------------


def _int_kernel_basis(M: np.ndarray) -> list[np.ndarray]:
    """A basis of the integer lattice ``{z in Z^K : M z = 0}`` (exact, Python ints)."""
    rows, K = M.shape
    cols = [[int(round(M[i, j])) for i in range(rows)] for j in range(K)]
    U = [[int(i == j) for i in range(K)] for j in range(K)]  # U[j] = column j of U
    p = 0
    for i in range(rows):
        while True:
            nz = [j for j in range(p, K) if cols[j][i] != 0]
            if len(nz) <= 1:
                break
            jmin = min(nz, key=lambda j: abs(cols[j][i]))
            for j in nz:
                if j == jmin:
                    continue
                f = cols[j][i] // cols[jmin][i]
                cols[j] = [u - f * v for u, v in zip(cols[j], cols[jmin], strict=True)]
                U[j] = [u - f * v for u, v in zip(U[j], U[jmin], strict=True)]
        nz = [j for j in range(p, K) if cols[j][i] != 0]
        if nz:
            j = nz[0]
            cols[p], cols[j] = cols[j], cols[p]
            U[p], U[j] = U[j], U[p]
            p += 1
    basis = [np.array(U[j], dtype=float) for j in range(p, K)]
    # size reduction (pairwise Gauss reduction) for short moves
    changed = True
    while changed:
        changed = False
        for i in range(len(basis)):
            for j in range(len(basis)):
                if i == j:
                    continue
                nj = basis[j] @ basis[j]
                f = np.round((basis[i] @ basis[j]) / nj)
                if f != 0:
                    cand = basis[i] - f * basis[j]
                    if cand @ cand < basis[i] @ basis[i]:
                        basis[i] = cand
                        changed = True
    return basis


def _circuits(M: np.ndarray, integer: bool) -> list[np.ndarray]:
    """One kernel vector per non-basic column (primitive integer when ``integer``)."""
    rows, K = M.shape
    _, R, piv = linalg.qr(M, mode="economic", pivoting=True)
    tol = max(M.shape) * np.finfo(float).eps * max(abs(R[0, 0]), 1.0)
    r = int(np.sum(np.abs(np.diag(R)) > tol))
    basic = piv[:r]
    out = []
    for j in piv[r:]:
        y, *_ = linalg.lstsq(M[:, basic], M[:, j])
        v = np.zeros(K)
        v[j] = 1.0
        v[basic] = -y
        v[np.abs(v) < 1e-12] = 0.0
        if integer:
            den = 1
            for val in v[v != 0]:
                q = Fraction(float(val)).limit_denominator(10**6).denominator
                den = den * q // gcd(den, q)
            v = np.round(v * den)
            g = 0
            for val in v[v != 0]:
                g = gcd(g, int(abs(val)))
            v = v / max(g, 1)
        out.append(v)
    return out


@dataclass
class _Moves:
    classes: list[np.ndarray]  # cells with identical columns of A (size >= 2 used)
    class_of: np.ndarray
    class_moves: list[np.ndarray]  # integer (or real) vectors over classes
    groups: list[list[int]]  # class-disjoint groups of class moves

    @property
    def n_directions(self) -> int:
        return sum(len(c) - 1 for c in self.classes) + len(self.class_moves)


def _kernel_moves(A: np.ndarray, integer: bool) -> _Moves:
    d = A.shape[1]
    _, inverse = np.unique(np.round(A.T, 12), axis=0, return_inverse=True)
    inverse = np.asarray(inverse).reshape(-1)
    K = int(inverse.max()) + 1
    classes = [np.flatnonzero(inverse == k) for k in range(K)]
    Abar = np.stack([A[:, c[0]] for c in classes], axis=1)
    if integer:
        cand = _int_kernel_basis(Abar) + _circuits(Abar, True)
    else:
        cand = _circuits(Abar, False)
    moves: list[np.ndarray] = []
    for v in cand:
        if not np.any(v):
            continue
        if any(np.array_equal(v, w) or np.array_equal(v, -w) for w in moves):
            continue
        moves.append(v)
    groups: list[list[int]] = []
    used: list[set] = []
    for i, v in enumerate(moves):
        supp = set(np.flatnonzero(v).tolist())
        for g, u in zip(groups, used, strict=True):
            if not (supp & u):
                g.append(i)
                u |= supp
                break
        else:
            groups.append([i])
            used.append(set(supp))
    del d
    return _Moves(classes, inverse, moves, groups)


# ---------------------------------------------------------------------------
# samplers
# ---------------------------------------------------------------------------


def _line_update(S, target: _Target, sx, lbx, ubx, idx, coef, gen) -> np.ndarray:
    """Heat-bath update of every chain along the lines ``idx``/``coef``.

    ``S`` is the (C, d+1) state with a dummy last column; ``idx`` and ``coef``
    have shape (C, N, K) (padding: index d, coefficient 0).  Lines within a
    batch touch disjoint cells.  Returns the moved fraction.
    """
    C, N, K = idx.shape
    flat = idx.reshape(C, N * K)
    sv = np.take_along_axis(S, flat, axis=1).reshape(C, N, K)
    r = sv - sx[idx]
    nz = coef != 0
    safe = np.where(nz, coef, 1.0)
    with np.errstate(invalid="ignore"):
        t1 = (lbx[idx] - sv) / safe
        t2 = (ubx[idx] - sv) / safe
        pos = coef > 0
        tlo = np.where(nz, np.where(pos, t1, t2), -np.inf)
        thi = np.where(nz, np.where(pos, t2, t1), np.inf)
    lo = tlo.max(axis=-1)
    hi = thi.min(axis=-1)
    if target.Bc.shape[0]:
        Bcx = np.concatenate([target.Bc, np.zeros((target.Bc.shape[0], 1))], axis=1)
        g = np.einsum("mcnk,cnk->cnm", Bcx[:, idx], coef)
        slack = (S[:, :-1] @ target.Bc.T - target.bc)[:, None, :]
        with np.errstate(divide="ignore", invalid="ignore"):
            q = -slack / g
        lo = np.maximum(lo, np.where(g > 1e-12, q, -np.inf).max(axis=-1))
        hi = np.minimum(hi, np.where(g < -1e-12, q, np.inf).min(axis=-1))
    if target.integer:
        lo = np.ceil(lo - 1e-9)
        hi = np.floor(hi + 1e-9)
    hi = np.maximum(hi, lo)  # guards rounding; the current point t = 0 is feasible
    if target.laplace_type:
        c = np.where(nz, -r / safe, 0.0)
        w = np.where(nz, target.rate * np.abs(coef), 0.0)
        t = sample_laplace_line(c, w, lo, hi, integer=target.integer, gen=gen)
    else:
        a2 = np.sum(coef * coef, axis=-1)
        b1 = np.sum(coef * r, axis=-1)
        t = sample_gauss_line(
            -b1 / a2, target.sigma / np.sqrt(a2), lo, hi, integer=target.integer, gen=gen
        )
    delta = t[..., None] * coef
    rows = np.repeat(np.arange(C), N * K)
    S[rows, flat.reshape(-1)] += delta.reshape(-1)
    S[:, -1] = 0.0
    return float(np.mean(t != 0))


def _gibbs_sweep(S, target, moves: _Moves, sx, lbx, ubx, gen, C) -> tuple[float, int]:
    d = target.d
    moved, n_updates = 0.0, 0
    batches = []
    # 1. exchanges e_i - e_j inside classes: a random perfect matching per chain
    pair_idx = []
    for cells in moves.classes:
        m = cells.size
        if m < 2:
            continue
        keys = gen.random((C, m))
        perm = cells[np.argsort(keys, axis=1)]
        h = m // 2
        pair_idx.append(np.stack([perm[:, :h], perm[:, h : 2 * h]], axis=-1))
    if pair_idx:
        idx = np.concatenate(pair_idx, axis=1)
        coef = np.broadcast_to(np.array([1.0, -1.0]), idx.shape).copy()
        batches.append((idx, coef))
    # 2. lifts of the class-level lattice moves with random representatives
    for group in moves.groups:
        perms = {}
        lifts_idx, lifts_coef = [], []
        for i in group:
            v = moves.class_moves[i]
            supp = np.flatnonzero(v)
            L = min(moves.classes[k].size for k in supp)
            for k in supp:
                if k not in perms:
                    cells = moves.classes[k]
                    perms[k] = cells[np.argsort(gen.random((C, cells.size)), axis=1)]
            idx = np.stack([perms[k][:, :L] for k in supp], axis=-1)  # (C, L, |supp|)
            coef = np.broadcast_to(v[supp], idx.shape).copy()
            lifts_idx.append(idx)
            lifts_coef.append(coef)
        kmax = max(i.shape[-1] for i in lifts_idx)
        pad = [
            (
                np.pad(i, ((0, 0), (0, 0), (0, kmax - i.shape[-1])), constant_values=d),
                np.pad(c, ((0, 0), (0, 0), (0, kmax - c.shape[-1]))),
            )
            for i, c in zip(lifts_idx, lifts_coef, strict=True)
        ]
        batches.append(
            (np.concatenate([p[0] for p in pad], axis=1), np.concatenate([p[1] for p in pad], 1))
        )
    for idx, coef in batches:
        if target.Bc.shape[0]:
            # coupled inequality rows: lines must be updated one at a time
            for n in range(idx.shape[1]):
                moved += _line_update(
                    S, target, sx, lbx, ubx, idx[:, n : n + 1], coef[:, n : n + 1], gen
                )
                n_updates += 1
        else:
            moved += _line_update(S, target, sx, lbx, ubx, idx, coef, gen) * idx.shape[1]
            n_updates += idx.shape[1]
    return moved, n_updates


def _run_gibbs(target, n_chains, n_tune, n_draws, thin, gen, moves=None):
    moves = _kernel_moves(target.A, target.integer) if moves is None else moves
    d = target.d
    sx = np.append(target.s_star, 0.0)
    lbx = np.append(target.lb, -np.inf)
    ubx = np.append(target.ub, np.inf)
    S = np.tile(sx, (n_chains, 1))
    out = np.empty((n_chains, n_draws, d))
    moved = updates = 0.0
    for it in range(n_tune + n_draws * thin):
        m, u = _gibbs_sweep(S, target, moves, sx, lbx, ubx, gen, n_chains)
        if it >= n_tune:
            moved += m
            updates += u
            k = it - n_tune
            if (k + 1) % thin == 0:
                out[:, k // thin] = S[:, :d]
    return out, moved / max(updates, 1.0)


def _mis_setup(target: _Target, proposal_index):
    d = target.d
    r = target.A.shape[0]
    if proposal_index is None:
        _, R, piv = linalg.qr(target.A, mode="economic", pivoting=True)
        comp = np.sort(piv[:r])
        index = np.setdiff1d(np.arange(d), comp)
    else:
        index = np.asarray(proposal_index)
        if index.ndim != 1 or index.dtype.kind not in "iu":
            raise TypeError("`proposal_index` must be a 1-D array of integer cell indices.")
        if index.size and (index.min() < 0 or index.max() >= d):
            raise InvariantDPError(f"`proposal_index` entries must be in [0, {d}).")
        index = np.unique(index)
        if index.size != d - r:
            raise InvariantDPError(
                f"`proposal_index` must have d - rank(A) = {d - r} distinct entries, got "
                f"{index.size}."
            )
        comp = np.setdiff1d(np.arange(d), index)
    A_c = target.A[:, comp]
    if np.linalg.matrix_rank(A_c) < r:
        raise InvariantDPError(
            "`proposal_index` leaves a complement whose columns of the invariant matrix are "
            "singular; rank(A[:, complement]) must equal rank(A)."
        )
    return index, comp, np.linalg.inv(A_c)


def _run_mis(target, n_chains, n_tune, n_draws, thin, gen, proposal_index, prop_param):
    d = target.d
    index, comp, Ac_inv = _mis_setup(target, proposal_index)
    A_i = target.A[:, index]
    n_total = n_tune + n_draws * thin
    out = np.empty((n_chains, n_draws, d))
    accepted = 0
    chunk = 4096
    for c in range(n_chains):
        cur = target.s_star.copy()
        cur_w = target.logp(cur[None])[0] - _proposal_logq(target, cur[index], index, prop_param)
        k = 0
        for start in range(0, n_total, chunk):
            m = min(chunk, n_total - start)
            prop = np.empty((m, d))
            noise = _proposal_rvs(target, prop_param, (m, index.size), gen)
            prop[:, index] = target.s_star[index] + noise
            prop[:, comp] = (target.a - prop[:, index] @ A_i.T) @ Ac_inv.T
            logp = target.logp(prop)
            if target.integer:
                rc = np.round(prop[:, comp])
                ok = np.all(np.abs(rc - prop[:, comp]) < 1e-7, axis=1)
                prop[:, comp] = rc
                logp = np.where(ok, logp, -np.inf)
            logp = np.where(target.feasible(prop), logp, -np.inf)
            w = logp - _proposal_logq(target, prop[:, index], index, prop_param)
            logu = np.log(gen.random(m)).tolist()
            wl = w.tolist()
            take = np.empty(m, dtype=np.int64)
            last = -1
            for i in range(m):
                if logu[i] < wl[i] - cur_w:
                    cur_w = wl[i]
                    last = i
                take[i] = last
            has = take >= 0
            states = np.where(has[:, None], prop[np.maximum(take, 0)], cur)
            accepted += int(np.count_nonzero(np.diff(np.concatenate([[-1], take])) != 0))
            cur = states[-1].copy()
            it = np.arange(start, start + m)
            keep = (it >= n_tune) & ((it - n_tune + 1) % thin == 0)
            nk = int(keep.sum())
            out[c, k : k + nk] = states[keep]
            k += nk
    return out, accepted / (n_chains * n_total)


def _proposal_rvs(target, param, size, gen):
    if target.laplace_type:
        if target.integer:  # double geometric with rate `param` = discrete Laplace of scale 1/rate
            return _draw_discrete_laplace(gen, 1.0 / param, size).astype(float)
        return gen.laplace(0.0, 1.0 / param, size)
    if target.integer:
        return discrete_gaussian.rvs(param, size=size, random_state=gen).astype(float)
    return gen.normal(0.0, param, size)


def _proposal_logq(target, s_i, index, param):
    u = s_i - target.s_star[index]
    if target.laplace_type:
        return -param * np.abs(u).sum(axis=-1)
    return -0.5 * (u * u).sum(axis=-1) / param**2


def _run_exact(target, n_draws, gen, invariants, plan=None):
    d = target.d
    if not target.laplace_type and not target.integer and _no_inequalities(target):
        # Theorem 22 (Gao, Gong & Yu): conditioning = projection for spherical Gaussians
        e = gen.normal(0.0, target.sigma, (n_draws, d))
        return target.s_star + invariants.project(e)
    if plan is not None:
        return _run_exact_dp(target, plan, n_draws, gen)
    if target.integer:
        v = _int_kernel_basis(target.A)[0]
    else:
        v = linalg.null_space(target.A)[:, 0]
    sx = np.append(target.s_star, 0.0)
    lbx = np.append(target.lb, -np.inf)
    ubx = np.append(target.ub, np.inf)
    supp = np.flatnonzero(v)
    S = np.tile(sx, (n_draws, 1))
    idx = np.broadcast_to(supp, (n_draws, 1, supp.size)).copy()
    coef = np.broadcast_to(v[supp], idx.shape).copy()
    _line_update(S, target, sx, lbx, ubx, idx, coef, gen)
    return S[:, :d]


def _no_inequalities(target) -> bool:
    return (
        not np.any(np.isfinite(target.lb))
        and not np.any(np.isfinite(target.ub))
        and target.Bc.shape[0] == 0
    )


# ---------------------------------------------------------------------------
# exact sampling: integer noise, 0/1 invariants, bounded cells (class-total DP)
# ---------------------------------------------------------------------------

_FIBRE_MAX = 1_000_000  # class-total fibre points enumerated at most
_BOX_MAX = 5_000_000  # points of the free-coordinate box scanned to enumerate it
_DP_MAX = 50_000_000  # entries of all dynamic-programming tables together
_CHUNK = 1 << 18
_CLASSES_MAX = 100  # classes of identical columns (two LPs each bound their totals)


@dataclass
class _ExactPlan:
    """Precomputed class-total sampler (see :func:`_exact_plan`)."""

    classes: list[np.ndarray]  # cells of each constrained class
    lb: list[np.ndarray]  # integer lower bound of each cell of the class
    lp: list[list[np.ndarray]]  # per class, per cell: log p_i(lb_i + y - x_i), y = 0..Y_i
    logZ: list[np.ndarray]  # per class (n_c, t_max + 1): prefix log partition functions
    totals: np.ndarray  # (n_points, K) class totals minus their lower bounds
    logw: np.ndarray  # (n_points,) log prod_c Z_c(T_c)
    free: np.ndarray  # cells in no invariant: independent truncated noise


def _cell_logp(target: _Target, u: np.ndarray) -> np.ndarray:
    if target.laplace_type:
        return -target.rate * np.abs(u)
    return -0.5 * (u * u) / target.sigma**2


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
    """Prefix log partition functions of one class, shape ``(n_c, t_max + 1)``.

    Row ``k`` is :math:`\\log Z^{(k)}(t) = \\log \\sum_{y_0 + \\dots + y_k = t}
    \\prod_{i \\le k} p_i(y_i)`, computed by log-space convolution.
    """
    out = np.full((len(lp), t_max + 1), -np.inf)
    out[0, : lp[0].size] = lp[0]
    for k in range(1, len(lp)):
        out[k] = _logsumexp_rows(_toeplitz_logits(out[k - 1], lp[k]))
    return out


def _classes_of(A: np.ndarray) -> tuple[list[np.ndarray], np.ndarray]:
    _, inverse = np.unique(A.T, axis=0, return_inverse=True)
    inverse = np.asarray(inverse).reshape(-1)
    classes = [np.flatnonzero(inverse == k) for k in range(int(inverse.max()) + 1)]
    return classes, inverse


def _exact_plan(target: _Target) -> tuple[_ExactPlan | None, str]:
    r"""Plan exact i.i.d. sampling of integer noise given 0/1 invariants and cell bounds.

    Returns ``(plan, "")`` or ``(None, reason)`` when the method does not apply.
    See :func:`_run_exact_dp` for the method.
    """
    if not target.integer:
        return None, "the noise is not integer-valued"
    if target.Bc.shape[0]:
        return None, "inequalities other than per-cell bounds are present"
    A, a = target.A, target.a
    if A.shape[0] == 0 or not np.all((A == 0) | (A == 1)):
        return None, "the invariant matrix does not have 0/1 entries"
    classes_all, _ = _classes_of(A)
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
    totals = _enumerate_fibre(Abar, a, lo, hi)
    if totals is None:
        return None, (
            f"the class-total fibre is too large to enumerate (more than {_FIBRE_MAX} points, "
            f"or a search box of more than {_BOX_MAX})"
        )
    lp = [
        [
            _cell_logp(target, lb[i] + np.arange(ymax[k][j] + 1) - target.s_star[i])
            for j, i in enumerate(c)
        ]
        for k, c in enumerate(classes)
    ]
    logZ = [_class_partition(lp[k], int(t_max[k])) for k in range(K)]
    off = (totals - L).astype(np.int64)
    logw = sum(logZ[k][-1][off[:, k]] for k in range(K))
    return _ExactPlan(classes, [lb[c] for c in classes], lp, logZ, off, logw, free), ""


def _enumerate_fibre(Abar, a, lo, hi) -> np.ndarray | None:
    """All integer ``T`` with ``Abar T = a`` and ``lo <= T <= hi`` (None if too many).

    Free coordinates are the classes with the smallest ranges that complete a
    basis (greedy on descending range); the box of their values is scanned in
    vectorised chunks and the basic coordinates solved for.
    """
    r, K = Abar.shape
    order = np.argsort(-(hi - lo), kind="stable")
    basic: list[int] = []
    for k in order:
        if np.linalg.matrix_rank(Abar[:, basic + [k]]) > len(basic):
            basic.append(int(k))
        if len(basic) == r:
            break
    basic_arr = np.array(sorted(basic))
    free = np.setdiff1d(np.arange(K), basic_arr)
    inv = np.linalg.inv(Abar[:, basic_arr])
    sizes = (hi[free] - lo[free] + 1).astype(np.int64)
    if np.any(sizes <= 0):
        return np.zeros((0, K))
    box = int(np.prod(sizes.astype(object))) if free.size else 1
    if box > _BOX_MAX:
        return None
    out, n_found = [], 0
    for start in range(0, box, _CHUNK):
        flat = np.arange(start, min(start + _CHUNK, box))
        TF = (
            np.stack(np.unravel_index(flat, tuple(sizes)), axis=1) + lo[free]
            if free.size
            else np.zeros((flat.size, 0))
        )
        TB = (a[None, :] - TF @ Abar[:, free].T) @ inv.T
        TBr = np.round(TB)
        ok = np.all(np.abs(TB - TBr) < 1e-6, axis=1)
        ok &= np.all((TBr >= lo[basic_arr]) & (TBr <= hi[basic_arr]), axis=1)
        T = np.empty((int(ok.sum()), K))
        T[:, free] = TF[ok]
        T[:, basic_arr] = TBr[ok]
        out.append(T)
        n_found += T.shape[0]
        if n_found > _FIBRE_MAX:
            return None
    return np.concatenate(out) if out else np.zeros((0, K))


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


def _run_exact_dp(target: _Target, plan: _ExactPlan, n: int, gen) -> np.ndarray:
    r"""Exact i.i.d. draws of :math:`M(x) \mid M(x) \in S^*` for integer noise.

    Applies to integer-valued additive noise with independent cells,
    :math:`p(s) = \prod_i p_i(s_i - s^*_i)` (double geometric, Eq. 1.3, or
    discrete Gaussian), equality invariants :math:`A s = a` whose matrix has
    0/1 entries, and per-cell bounds :math:`\ell_i \le s_i \le u_i` with
    finite :math:`\ell_i` for the cells in some invariant (non-negativity in
    Section 3; :math:`u_i` optional).  Method (:func:`_exact_plan` prepares
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
       (:mod:`._linesampler`).

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


# ---------------------------------------------------------------------------
# diagnostics and results
# ---------------------------------------------------------------------------


def _arviz_stat(fn, draws: np.ndarray) -> np.ndarray:
    """Per-coordinate ArviZ statistic of draws (chain, draw, d); nan when constant."""
    import arviz as az

    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        ds = az.convert_to_dataset({"s": draws})
        res = fn(ds)
        out = np.asarray(res["s"].values, dtype=float).reshape(-1)
    const = np.ptp(draws.reshape(-1, draws.shape[-1]), axis=0) == 0
    out[const] = np.nan
    return out


@dataclass(frozen=True)
class SamplerDiagnostics:
    """Markov chain diagnostics returned with the draws.

    Attributes
    ----------
    sampler : str
        ``"mis"``, ``"gibbs"`` or ``"exact"``.
    n_chains, n_draws, n_tune, thin : int
    acceptance_rate : float
        Accepted proposals (MIS), line updates that moved (Gibbs), or 1 (exact).
    ess : numpy.ndarray
        Bulk effective sample size of each cell (ArviZ ``ess``, all chains);
        nan for cells that never moved.
    rhat : numpy.ndarray
        Rank-normalised split R-hat of each cell (ArviZ ``rhat``).
    elapsed : float
        Wall-clock seconds of sampling.
    """

    sampler: str
    n_chains: int
    n_draws: int
    n_tune: int
    thin: int
    acceptance_rate: float
    ess: np.ndarray
    rhat: np.ndarray
    elapsed: float

    @property
    def ess_min(self) -> float:
        return float(np.nanmin(self.ess)) if np.any(np.isfinite(self.ess)) else float("nan")

    @property
    def rhat_max(self) -> float:
        return float(np.nanmax(self.rhat)) if np.any(np.isfinite(self.rhat)) else float("nan")

    @property
    def ess_per_second(self) -> float:
        """Smallest per-cell ESS divided by the sampling time."""
        return self.ess_min / self.elapsed if self.elapsed > 0 else float("inf")

    @property
    def ok(self) -> bool:
        """R-hat below 1.01 and every ESS at least 100 (Vehtari et al. 2021)."""
        return bool(self.rhat_max < 1.01 and self.ess_min >= 100)

    def summary(self) -> str:
        return format_table(
            f"Sampler diagnostics ({self.sampler})",
            [
                ("chains x draws", f"{self.n_chains} x {self.n_draws}"),
                ("tuning draws", self.n_tune),
                ("thinning", self.thin),
                ("acceptance rate", self.acceptance_rate),
                ("min bulk ESS", self.ess_min),
                ("max R-hat", self.rhat_max),
                ("seconds", self.elapsed),
                ("min ESS per second", self.ess_per_second),
            ],
        )


def _diagnose(sampler, draws, accept, elapsed, n_tune, thin) -> SamplerDiagnostics:
    import arviz as az

    C, n, _ = draws.shape
    ess = _arviz_stat(az.ess, draws)
    rhat = _arviz_stat(az.rhat, draws) if C > 1 else np.full(draws.shape[-1], np.nan)
    return SamplerDiagnostics(sampler, C, n, n_tune, thin, float(accept), ess, rhat, elapsed)


@dataclass(frozen=True, eq=False)
class ConditionalRelease:
    """A congenial release with the draws and diagnostics that produced it.

    Attributes
    ----------
    release : Release
        The published release: one draw of :math:`M(x) \\mid M(x) \\in S^*`
        (the last state of the first chain), its invariants, noise law and
        guarantee.
    draws : numpy.ndarray, shape (n_chains, n_draws, d)
        All retained draws of the flattened release.
    diagnostics : SamplerDiagnostics or None
        Acceptance, ESS and R-hat.  For exact i.i.d. draws the acceptance is 1
        and the ArviZ ESS is close to the number of draws.
    method : str
        The sampler used.
    """

    release: Release
    draws: np.ndarray
    diagnostics: SamplerDiagnostics | None
    method: str
    inequalities: LinearInequalities | None = field(default=None, repr=False)

    @property
    def value(self) -> np.ndarray:
        return self.release.value

    def summary(self) -> str:
        text = self.release.summary()
        if self.diagnostics is not None:
            text += "\n" + self.diagnostics.summary()
        else:
            text += f"\nexact i.i.d. draws: {self.draws.shape[1]}"
        return text

    def __repr__(self) -> str:
        diag = "" if self.diagnostics is None else f", ess_min={self.diagnostics.ess_min:.0f}"
        return (
            f"ConditionalRelease(method={self.method!r}, draws={self.draws.shape}{diag}, "
            f"value={np.array2string(self.value, threshold=6)})"
        )


# ---------------------------------------------------------------------------
# the public mechanism
# ---------------------------------------------------------------------------


def conditional_release(
    x,
    mechanism,
    invariants,
    inequalities=None,
    *,
    epsilon=None,
    mu=None,
    rho=None,
    sensitivity=1.0,
    sampler="auto",
    n_draws=1000,
    n_chains=4,
    n_tune=200,
    thin=1,
    proposal_index=None,
    proposal_epsilon=None,
    proposal_sigma=None,
    warn=True,
    rng=None,
    secure=False,
) -> ConditionalRelease:
    r"""Release :math:`M(x) \mid M(x) \in S^*` for an additive mechanism (congenial privacy).

    Parameters
    ----------
    x : array_like
        Confidential query :math:`s^*`, of the shape of ``invariants``
        (integer counts for the integer-valued mechanisms).
    mechanism : {"double_geometric", "discrete_gaussian", "laplace", "gaussian"}
        The unconstrained additive mechanism :math:`M` (Definitions 1.1-1.2;
        Lemma 13 of Gao et al.), independent noise on every cell.
    invariants : Invariants
        Equality invariants :math:`A s = a`; values default to those of ``x``
        and, when given, must be satisfied by ``x``.
    inequalities : None, "nonnegative", LinearInequalities or (B, b)
        Inequality invariants :math:`B s \ge b`.
    epsilon : float
        Laplace / double geometric: noise rate ``epsilon / sensitivity`` per
        cell (:math:`a = e^{-\epsilon/\nabla}` in Eq. 1.3).
    mu : float
        Gaussian: :math:`\mu`-GDP of the unconstrained mechanism,
        ``sigma = sensitivity / mu``.
    rho : float
        Discrete Gaussian: :math:`\rho`-zCDP, ``sigma = sensitivity / sqrt(2 rho)``.
    sensitivity : float
        Per-cell sensitivity :math:`\nabla(s)` (l1 for Laplace-type, l2 for
        Gaussian-type noise).
    sampler : {"auto", "exact", "gibbs", "mis"}
        ``"auto"`` is ``"exact"`` where exact i.i.d. sampling applies (integer
        noise with 0/1 invariants and cells bounded below, with a class-total
        fibre of at most a million points; a one-dimensional fibre; spherical
        Gaussian noise with equalities only), else ``"gibbs"`` (general
        inequalities, non-0/1 invariants, fibres too large to enumerate).
    n_draws, n_chains, n_tune, thin : int
        Retained draws per chain, chains, discarded tuning draws, thinning.
        Exact sampling returns ``n_chains * n_draws`` i.i.d. draws (``n_tune``
        and ``thin`` are ignored), arranged as ``n_chains`` chains so that the
        ArviZ ESS and R-hat reported with them can be compared with MCMC.
    proposal_index : array_like of int, optional
        MIS only: the proposal index set :math:`\mathcal I` (0-based), of size
        ``d - rank(A)`` with ``A[:, complement]`` non-singular.  Default: the
        complement is chosen by pivoted QR.
    proposal_epsilon, proposal_sigma : float, optional
        MIS only: the tuning parameter :math:`\tilde\epsilon` of the proposal
        (Laplace-type) or its standard deviation (Gaussian-type); default
        the mechanism's own.
    warn : bool
        Emit a :class:`~invariantdp.exceptions.ConvergenceWarning` when
        R-hat > 1.01 or ESS < 100.
    rng : None, int, SeedSequence or numpy.random.Generator
    secure : bool, optional
        Must be False: every sampler here works in floating point from a
        numpy ``Generator``, so the release is a simulation, not for
        publication (module notes); ``secure=True`` raises and names the
        secure mechanisms.

    Returns
    -------
    ConditionalRelease
        ``.release`` (a :class:`~invariantdp.Release`; its
        ``metadata["randomness"]`` is ``"simulation"`` and
        ``metadata["method"]`` the sampler used), ``.draws``,
        ``.diagnostics``.

    Notes
    -----
    Privacy (Theorem 2.1): if :math:`M` is :math:`\epsilon`-DP, the conditional
    mechanism is :math:`(1+\gamma)\epsilon`-DP on invariant-conforming
    neighbours for some :math:`\gamma \in [-1, 1]`; the guarantee recorded is
    the safe :math:`2\epsilon` (:math:`\gamma = 1`).  For the Gaussian
    mechanism with equality invariants only, conditioning equals projection
    (Gao et al., Theorem 22) and the release is :math:`\mu`-GDP induced
    subspace DP (their Corollary 14).  MCMC output is only approximately a
    draw of the target; check ``diagnostics``.

    References
    ----------
    Gong & Meng (2020), Eq. 2.3, Theorem 2.1, Algorithm 1, Example 4.1;
    Gao, Gong & Yu, Theorem 22.

    Examples
    --------
    >>> import numpy as np
    >>> from invariantdp import Invariants
    >>> from invariantdp.mechanisms import conditional_release
    >>> total = Invariants(np.ones((1, 2)))
    >>> res = conditional_release([30, 70], "laplace", total, epsilon=1.0, sensitivity=2.0,
    ...                           n_draws=5, rng=1)
    >>> res.method, round(float(res.value.sum()), 9)
    ('exact', 100.0)
    """
    refuse_secure(
        "conditional_release",
        secure,
        alternatives="discrete_laplace(x, ..., secure=True) or discrete_gaussian(x, ..., "
        "secure=True) (exact integer noise, not conditioned on the invariants)",
    )
    if sampler not in _SAMPLERS:
        raise InvariantDPError(
            f"`sampler` ({sampler!r}) must be one of {', '.join(map(repr, _SAMPLERS))}."
        )
    n_draws = check_positive_int("n_draws", n_draws)
    n_chains = check_positive_int("n_chains", n_chains)
    n_tune = check_positive_int("n_tune", n_tune, minimum=0)
    thin = check_positive_int("thin", thin)
    target, privacy, ineq, C, values = _build_target(
        x, mechanism, invariants, inequalities, epsilon, mu, rho, sensitivity
    )
    gen = as_generator(rng)
    d, r = target.d, target.A.shape[0]
    t0 = time.perf_counter()
    plan, why = None, "the noise is not integer-valued"
    if sampler in ("auto", "exact") and target.integer:
        plan, why = _exact_plan(target)
    exact_ok = (
        plan is not None
        or (d - r == 1)
        or (not target.laplace_type and not target.integer and _no_inequalities(target))
    )
    if sampler == "auto":
        sampler = "exact" if exact_ok else "gibbs"
    elif sampler == "exact" and not exact_ok:
        raise InvariantDPError(
            "`sampler` ('exact') needs integer noise with 0/1 invariants and bounded cells "
            f"(here {why}), a one-dimensional fibre (here d - rank(A) = {d - r}) or "
            "Gaussian noise with equality invariants only."
        )
    if sampler == "exact":
        draws = _run_exact(target, n_draws * n_chains, gen, invariants, plan)
        draws = draws.reshape(n_chains, n_draws, d)
    elif sampler == "gibbs":
        draws, accept = _run_gibbs(target, n_chains, n_tune, n_draws, thin, gen)
    else:
        if target.laplace_type:
            param = (
                target.rate
                if proposal_epsilon is None
                else check_positive("proposal_epsilon", proposal_epsilon) / sensitivity
            )
        else:
            param = (
                target.sigma
                if proposal_sigma is None
                else check_positive("proposal_sigma", proposal_sigma)
            )
        draws, accept = _run_mis(
            target, n_chains, n_tune, n_draws, thin, gen, proposal_index, param
        )
    elapsed = time.perf_counter() - t0
    if sampler == "exact":
        diagnostics = _diagnose(sampler, draws, 1.0, elapsed, 0, 1)
    else:
        diagnostics = _diagnose(sampler, draws, accept, elapsed, n_tune, thin)
        if warn and not diagnostics.ok:
            warnings.warn(
                f"the {sampler} chains may not have converged: max R-hat "
                f"{diagnostics.rhat_max:.3f} (want < 1.01), min ESS {diagnostics.ess_min:.0f} "
                "(want >= 100); increase n_draws/n_tune"
                + (" or use sampler='gibbs'." if sampler == "mis" else "."),
                ConvergenceWarning,
                stacklevel=2,
            )
    value = draws[0, -1].reshape(invariants.shape)
    if target.integer:
        value = np.round(value).astype(np.int64)
    release = _make_release(
        value, mechanism, target, privacy, invariants, C, values, ineq, sampler, sensitivity
    )
    return ConditionalRelease(release, draws, diagnostics, sampler, ineq)


def _make_release(
    value, mechanism, target, privacy, invariants, C, values, ineq, sampler, sensitivity
):
    if target.laplace_type:
        eps0 = privacy["epsilon"]
        if target.integer:
            # Gong & Meng's double geometric law is the discrete Laplace of scale 1 / rate
            noise = NoiseLaw("discrete_laplace", {"scale": 1.0 / target.rate})
        else:
            noise = NoiseLaw("laplace", {"scale": 1.0 / target.rate})
        guarantee = PrivacyGuarantee(
            definition="epsilon-DP",
            params={"epsilon": 2.0 * eps0, "epsilon_unconstrained": eps0, "gamma": 1.0},
            adjacency="invariant-conforming neighbours (Gong & Meng, Theorem 2.1, gamma = 1)",
            dataspace="data sets whose query satisfies the released invariants",
        )
    else:
        family = "discrete_gaussian" if target.integer else "gaussian"
        key = "sigma" if target.integer else "scale"
        noise = NoiseLaw(family, {key: float(target.sigma)})
        if family == "gaussian" and _no_inequalities(target):
            guarantee = PrivacyGuarantee(
                definition="GDP",
                params=dict(privacy),
                adjacency="induced subspace DP: neighbours conforming to the invariants "
                "(Gao, Gong & Yu, Theorem 22 and Corollary 14)",
                dataspace="data sets whose query satisfies the released invariants",
            )
        else:
            key = "mu" if "mu" in privacy else "rho"
            guarantee = PrivacyGuarantee(
                definition="GDP" if key == "mu" else "zCDP",
                params=dict(privacy),
                adjacency="guarantee of the unconstrained mechanism; conditioning on "
                "inequalities may change it (Gong & Meng, Theorem 2.1)",
                dataspace="data sets whose query satisfies the released invariants",
            )
    metadata = {
        "congenial": True,
        "conditioned_on": "A s = a" + ("" if ineq is None else " and B s >= b"),
        "method": sampler,
        "sensitivity": float(sensitivity),
        "noise_per_cell": "independent, before conditioning",
        # every sampler draws from a numpy Generator: never secure
        **randomness_note(False),
    }
    if ineq is not None:
        metadata["inequalities"] = ineq.to_dict()
    inv = Invariants(invariants.matrix, values, invariants.shape, invariants.names)
    return Release(
        value=value,
        mechanism=f"conditional_{mechanism}",
        noise=noise,
        guarantee=guarantee,
        invariants=inv,
        query=None,
        data_shape=invariants.shape,
        metadata=metadata,
    )


# ---------------------------------------------------------------------------
# Section 4: optimisation-based post-processing, for comparison
# ---------------------------------------------------------------------------


def _dense_invariants(invariants, n):
    if not isinstance(invariants, Invariants):
        raise TypeError(
            f"`invariants` must be an invariantdp.Invariants, got {type(invariants).__name__}."
        )
    if invariants.values is None:
        raise InvariantDPError("`invariants` must carry values to post-process onto.")
    C = invariants.matrix
    C = C.toarray() if sparse.issparse(C) else np.asarray(C, dtype=float)
    if C.shape[1] != n:
        raise InvariantDPError(
            f"`m` has {n} cells per release but `invariants` act on {C.shape[1]}."
        )
    return C, np.asarray(invariants.values, dtype=float)


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
    >>> l2_postprocess([42.0, 61.0], Invariants(np.ones((1, 2)), [100.0]))
    array([40.5, 59.5])
    """
    m = check_finite_array("m", m)
    if m.ndim == 0:
        raise InvariantDPError("`m` must have at least one dimension.")
    n = m.shape[-1]
    C, c = _dense_invariants(invariants, n)
    A, a = _independent_rows(C, c)
    flat = m.reshape(-1, n)
    ineq = _as_inequalities(inequalities, n)
    pinv = np.linalg.pinv(A)
    proj = flat - (flat @ A.T - a) @ pinv.T
    if ineq is None:
        return proj.reshape(m.shape)
    B, b = ineq.matrix, ineq.lower
    nnz = np.count_nonzero(B, axis=1)
    if np.all(nnz == 1):
        lb, ub = np.full(n, -np.inf), np.full(n, np.inf)
        for i in range(B.shape[0]):
            k = int(np.flatnonzero(B[i])[0])
            if B[i, k] > 0:
                lb[k] = max(lb[k], b[i] / B[i, k])
            else:
                ub[k] = min(ub[k], b[i] / B[i, k])
        out = _bounded_projection(flat, A, a, lb, ub)
    else:
        out = np.array([_slsqp_projection(row, A, a, B, b) for row in flat])
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

    Examples
    --------
    >>> import numpy as np
    >>> from invariantdp import Invariants
    >>> l1_postprocess([42.0, 61.0], Invariants(np.ones((1, 2)), [100.0]), beta=0.75)
    array([41.25, 58.75])
    """
    m = check_finite_array("m", m)
    if m.ndim == 0:
        raise InvariantDPError("`m` must have at least one dimension.")
    n = m.shape[-1]
    C, c = _dense_invariants(invariants, n)
    A, a = _independent_rows(C, c)
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

r"""Markov chain samplers of :math:`M(x) \mid M(x) \in S^*`: Gibbs and MIS.

``"gibbs"``
    heat-bath updates along kernel moves of :math:`A`
    (:func:`invariantdp._linalg._fibres.kernel_moves`): exchanges :math:`e_i - e_j`
    between cells with identical columns of :math:`A`, and lifts of an
    integer lattice basis of the kernel of the collapsed matrix.  Each
    update draws the exact one-dimensional conditional along the move
    (:mod:`.._linesampler`), so its acceptance is 1; disjoint moves are
    updated together and chains are vectorised.
``"mis"``
    the Metropolized independent sampler of Gong & Meng (Algorithm 1) with
    its proposal index set :math:`\mathcal I` and tuning parameter
    :math:`\tilde\epsilon`.

References
----------
Gong & Meng (2020), Algorithm 1 and Appendix C.
"""

from __future__ import annotations

import numpy as np

from ..._linalg import KernelMoves, kernel_moves, pivoted_columns
from ..._progress import progress_bar
from ..._validation import InvariantDPError
from ...distributions import discrete_gaussian, discrete_laplace
from .._linesampler import sample_gauss_line, sample_laplace_line
from ._targets import Target

__all__: list[str] = []


def line_update(S, target: Target, sx, lbx, ubx, idx, coef, gen) -> np.ndarray:
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


def _gibbs_sweep(S, target, moves: KernelMoves, sx, lbx, ubx, gen, C) -> tuple[float, int]:
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
                moved += line_update(
                    S, target, sx, lbx, ubx, idx[:, n : n + 1], coef[:, n : n + 1], gen
                )
                n_updates += 1
        else:
            moved += line_update(S, target, sx, lbx, ubx, idx, coef, gen) * idx.shape[1]
            n_updates += idx.shape[1]
    return moved, n_updates


def run_gibbs(target, chains, tune, draws, thin, gen, moves=None, progress=False):
    """``chains`` vectorised Gibbs chains from ``s*``: draws (chains, draws, d), move rate."""
    moves = kernel_moves(target.A, integer=target.integer) if moves is None else moves
    d = target.d
    sx = np.append(target.s_star, 0.0)
    lbx = np.append(target.lb, -np.inf)
    ubx = np.append(target.ub, np.inf)
    S = np.tile(sx, (chains, 1))
    out = np.empty((chains, draws, d))
    moved = updates = 0.0
    n_total = tune + draws * thin
    with progress_bar(n_total, progress, desc="conditional_release", unit="sweep") as bar:
        for it in range(n_total):
            m, u = _gibbs_sweep(S, target, moves, sx, lbx, ubx, gen, chains)
            if it >= tune:
                moved += m
                updates += u
                k = it - tune
                if (k + 1) % thin == 0:
                    out[:, k // thin] = S[:, :d]
            bar.update(1)
    return out, moved / max(updates, 1.0)


def _mis_setup(target: Target, proposal_index):
    d = target.d
    r = target.A.shape[0]
    if proposal_index is None:
        # pivoted-QR columns with ties broken by index: LAPACK breaks them by rounding,
        # which differs between BLAS builds
        comp = np.sort(pivoted_columns(target.A))
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


def run_mis(target, chains, tune, draws, thin, gen, proposal_index, prop_param, progress=False):
    """Algorithm 1 (MIS) from ``s*``: draws (chains, draws, d) and the acceptance rate.

    Proposals are drawn in chunks; the accept/reject recursion runs on
    Python floats, since each step depends on the last accepted weight.
    """
    d = target.d
    index, comp, Ac_inv = _mis_setup(target, proposal_index)
    A_i = target.A[:, index]
    n_total = tune + draws * thin
    out = np.empty((chains, draws, d))
    accepted = 0
    chunk = 4096
    bar = progress_bar(chains * n_total, progress, desc="conditional_release", unit="step")
    for c in range(chains):
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
            keep = (it >= tune) & ((it - tune + 1) % thin == 0)
            nk = int(keep.sum())
            out[c, k : k + nk] = states[keep]
            k += nk
            bar.update(m)
    bar.close()
    return out, accepted / (chains * n_total)


def _proposal_rvs(target, param, size, gen):
    if target.laplace_type:
        if target.integer:  # double geometric with rate `param` = discrete Laplace of scale 1/rate
            return discrete_laplace.rvs(1.0 / param, size=size, random_state=gen).astype(float)
        return gen.laplace(0.0, 1.0 / param, size)
    if target.integer:
        return discrete_gaussian.rvs(param, size=size, random_state=gen).astype(float)
    return gen.normal(0.0, param, size)


def _proposal_logq(target, s_i, index, param):
    u = s_i - target.s_star[index]
    if target.laplace_type:
        return -param * np.abs(u).sum(axis=-1)
    return -0.5 * (u * u).sum(axis=-1) / param**2

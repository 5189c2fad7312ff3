"""Dask scheduling of the GLS passes: subtrees below the second level are independent tasks.

The tree passes touch a unit only through its parent and children, so the
subtrees hanging from the units of level 1 (the counties of a state) are
independent in each pass.  The levels above them are small and run in the
driver.  Each task gets contiguous blocks of every level below (units are
sorted by geocode, so a subtree is contiguous), runs the same level functions
as the serial path on them, and returns its arrays, which are concatenated:
the result is identical to the serial one.

References
----------
Issue 19 ("Performance and scale"); Dask documentation, ``dask.delayed``.
"""

from __future__ import annotations

import os
from dataclasses import replace

import numpy as np

from ..exceptions import InvariantDPError
from ._eigen import EigenAlgebra
from ._fast import segment_sum
from ._gls import Solution, _structure, downward, top_down_level, upward
from ._own import own_info

__all__ = ["check_scheduler", "run_tasks", "solve_dask"]


def check_scheduler(scheduler) -> None:
    """Refuse anything but None, ``"dask"`` or a dask.distributed Client, before any work."""
    if scheduler is None or scheduler == "dask":
        return
    if hasattr(scheduler, "compute") and hasattr(scheduler, "gather"):
        return
    raise InvariantDPError(
        f"`scheduler` ({scheduler!r}) must be None, 'dask' or a dask.distributed Client."
    )


def run_tasks(fn, jobs: list, scheduler) -> list:
    """``[fn(*job) for job in jobs]`` as Dask tasks (``"dask"``: the default scheduler)."""
    check_scheduler(scheduler)
    try:
        import dask
    except ImportError as exc:  # pragma: no cover - dask is in the census extra
        raise ImportError(
            "`scheduler='dask'` needs dask: pip install 'invariantdp[census]'."
        ) from exc
    tasks = [dask.delayed(fn, pure=False)(*job) for job in jobs]
    if scheduler == "dask":
        return list(dask.compute(*tasks))
    return list(scheduler.gather(scheduler.compute(tasks)))


def _workers(scheduler) -> int:
    if scheduler != "dask":
        return max(len(scheduler.scheduler_info().get("workers", {})), 1)
    try:
        from distributed import default_client

        return max(len(default_client().scheduler_info()["workers"]), 1)
    except (ImportError, ValueError):
        return os.cpu_count() or 1


def _blocks(starts: list, split: int, first: int, last: int, n_levels: int) -> list:
    """``[lo, hi)`` per level >= ``split`` of the subtrees of split units ``first..last-1``."""
    lo, hi = [first], [last]
    for lev in range(split + 1, n_levels):
        lo.append(int(starts[lev][lo[-1]]))
        hi.append(int(starts[lev][hi[-1]]))
    return list(zip(lo, hi, strict=True))


def _slice_dict(d: dict, lo: int, hi: int) -> dict:
    return {u - lo: v for u, v in d.items() if lo <= u < hi}


def _slice_own(own, lo: int, hi: int):
    return replace(
        own,
        lam=own.lam[lo:hi],
        eta=own.eta[lo:hi],
        pinned=own.pinned[lo:hi],
        pin=own.pin[lo:hi],
        zero_cells=_slice_dict(own.zero_cells, lo, hi),
        linear=_slice_dict(own.linear, lo, hi),
        dense_info=_slice_dict(own.dense_info, lo, hi),
    )


def _local_starts(starts: list, blocks: list, split: int) -> list:
    """Children segments of a block's levels, rebased: entry ``i`` for block level ``i``."""
    out = [None]
    for i in range(1, len(blocks)):
        lo, hi = blocks[i - 1]
        st = starts[split + i][lo : hi + 1]
        out.append(st - st[0])
    return out


def _block_names(names, blocks: list, split: int):
    if not names:
        return None
    return {
        split + i: (names[split + i][0], names[split + i][1][lo:hi])
        for i, (lo, hi) in enumerate(blocks)
    }


def _up_task(shape, owns, basis, affected, starts, names, split):
    return upward(EigenAlgebra(shape), owns, basis, affected, starts, names, base=split)


def _down_task(shape, basis, top: dict, children: list, starts: list, names, split, zeros):
    alg = EigenAlgebra(shape)
    out, parent = [], top
    for i, child in enumerate(children):
        st = starts[i + 1]
        parent["s"] = segment_sum(child[0], st)
        res = top_down_level(alg, basis, child, st, parent, split + 1 + i, names, zeros[i])
        out.append(res)
        parent = {k: res[k] for k in ("x", "F", "anchor", "Gam", "Omt", "Fd")}
        parent["affected"] = child[3]
    return out


def solve_dask(problem, scheduler, names) -> Solution:
    """:func:`._gls.solve` with the subtrees below level 1 as Dask tasks."""
    check_scheduler(scheduler)
    alg = EigenAlgebra(problem.shape)
    n_lev = len(problem.sizes)
    owns = [own_info(alg, problem, lev) for lev in range(n_lev)]
    starts, affected, basis = _structure(problem, alg, owns)
    sol = Solution(problem, alg, basis, starts, affected, [o.zero_cells for o in owns])
    split = 1
    if n_lev <= split + 1 or problem.sizes[split] == 0:
        up = upward(alg, owns, basis, affected, starts, names)
        sol.z, sol.v, sol.sub = (list(t) for t in zip(*up, strict=True))
        downward(sol, names)
        return sol
    n_split = problem.sizes[split]
    n_tasks = min(n_split, 4 * _workers(scheduler))
    edges = np.linspace(0, n_split, n_tasks + 1).round().astype(int)
    batches = [
        _blocks(starts, split, int(a), int(b), n_lev)
        for a, b in zip(edges[:-1], edges[1:], strict=True)
        if b > a
    ]
    jobs = []
    for blocks in batches:
        b_owns = [_slice_own(owns[split + i], lo, hi) for i, (lo, hi) in enumerate(blocks)]
        b_aff = [affected[split + i][lo:hi] for i, (lo, hi) in enumerate(blocks)]
        b_starts = _local_starts(starts, blocks, split)
        jobs.append(
            (
                problem.shape,
                b_owns,
                basis,
                b_aff,
                b_starts,
                _block_names(names, blocks, split),
                split,
            )
        )
    parts = run_tasks(_up_task, jobs, scheduler)
    sol.z, sol.v, sol.sub = [None] * n_lev, [None] * n_lev, [None] * n_lev
    for i in range(n_lev - split):
        lev = split + i
        sol.z[lev] = np.concatenate([p[i][0] for p in parts])
        sol.v[lev] = np.concatenate([p[i][1] for p in parts])
        sol.sub[lev] = {}
        for blocks, p in zip(batches, parts, strict=True):
            sol.sub[lev].update({u + blocks[i][0]: law for u, law in p[i][2].items()})
    below = (sol.z[split], sol.v[split], sol.sub[split])
    top = upward(alg, owns[:split], basis, affected[:split], starts, names, child=below)
    for lev in range(split):
        sol.z[lev], sol.v[lev], sol.sub[lev] = top[lev]
    downward(sol, names, stop=split)
    _down_split(sol, names, split, batches, scheduler)
    return sol


def _down_split(sol: Solution, names, split: int, batches: list, scheduler) -> None:
    """The top-down pass below level ``split``, one task per batch of subtrees."""
    n_lev = sol.n_levels
    jobs = []
    for blocks in batches:
        lo, hi = blocks[0]
        anchor = sol.anchor[split][lo:hi].copy()
        anchor[anchor[:, 0] >= split, 1] -= lo  # local to the task, rebased below
        top = {
            "x": sol.x[split][lo:hi],
            "F": sol.F[split][lo:hi],
            "anchor": anchor,
            "Gam": sol.Gam[split][lo:hi],
            "Omt": sol.Omt[split][lo:hi],
            "Fd": _slice_dict(sol.Fd[split], lo, hi),
            "affected": sol.affected[split][lo:hi],
        }
        children = []
        for i, (clo, chi) in enumerate(blocks[1:]):
            lev = split + 1 + i
            children.append(
                (
                    sol.z[lev][clo:chi],
                    sol.v[lev][clo:chi],
                    _slice_dict(sol.sub[lev], clo, chi),
                    sol.affected[lev][clo:chi],
                )
            )
        local = _local_starts(sol.starts, blocks, split)
        zeros = [
            _slice_dict(sol.zero_cells[split + 1 + i], clo, chi)
            for i, (clo, chi) in enumerate(blocks[1:])
        ]
        b_names = _block_names(names, blocks, split)
        jobs.append((sol.alg.shape, sol.basis, top, children, local, b_names, split, zeros))
    parts = run_tasks(_down_task, jobs, scheduler)
    for i in range(n_lev - split - 1):
        lev = split + 1 + i
        for key in ("x", "F", "G", "Om", "Gam", "Omt"):
            getattr(sol, key)[lev] = np.concatenate([p[i][key] for p in parts])
        anchors = []
        for blocks, p in zip(batches, parts, strict=True):
            a = p[i]["anchor"].copy()
            mine = a[:, 0] >= split
            a[mine, 1] += np.array([blocks[lv - split][0] for lv in a[mine, 0]], dtype=np.int64)
            anchors.append(a)
        sol.anchor[lev] = np.concatenate(anchors)
        for key in ("Fd", "Gd", "Omd"):
            merged = {}
            for blocks, p in zip(batches, parts, strict=True):
                merged.update({u + blocks[i + 1][0]: v for u, v in p[i][key].items()})
            getattr(sol, key)[lev] = merged

"""Dask scheduling of the GLS passes: subtrees below the second level are independent tasks.

The tree passes touch a unit only through its parent and children, so the
subtrees hanging from the units of level 1 (the counties of a state) are
independent in each pass; the levels above them are small and run in the
driver.  Units are sorted by geocode, so a batch of subtrees is a contiguous
block of every level below: each task gets the measurements of its block
(:meth:`Problem.subtree`), computes its units' own information and runs the
same level functions as the serial path.  With a ``dask.distributed`` client
the bottom-up results stay on the workers (futures) until the top-down tasks
of the same blocks use them; only the arrays of the final solution come back.
The result is identical to the serial one.

References
----------
Dask documentation, ``Client.submit`` and ``Client.scatter``.
"""

from __future__ import annotations

import os

import numpy as np

from .._dask_tasks import client_of, run_tasks
from ._constraints import constraint_structure, constraints_of
from ._eigenspace_rules import segment_starts, segment_sum
from ._eigenspaces import EigenAlgebra
from ._tree_passes import Solution, downward, hold_invariants, top_down_level, upward
from ._unit_information import own_info

__all__ = ["solve_dask"]

_KEYS = ("x", "F", "G", "Om", "Gam", "Omt")


def _n_workers(client) -> int:
    if client is None:
        return os.cpu_count() or 1
    return max(len(client.scheduler_info().get("workers", {})), 1)


def _blocks(starts: list, split: int, first: int, last: int, n_levels: int) -> list:
    """``(lo, hi)`` per level >= ``split`` of the subtrees of split units ``first..last-1``."""
    lo, hi = [first], [last]
    for lev in range(split + 1, n_levels):
        lo.append(int(starts[lev][lo[-1]]))
        hi.append(int(starts[lev][hi[-1]]))
    return list(zip(lo, hi, strict=True))


def _slice_dict(d: dict, lo: int, hi: int) -> dict:
    return {u - lo: v for u, v in d.items() if lo <= u < hi}


def _block_names(names, blocks: list, split: int):
    if not names:
        return None
    return {
        split + i: (names[split + i][0], names[split + i][1][lo:hi])
        for i, (lo, hi) in enumerate(blocks)
    }


def _up_task(sub, basis, affected, names, split):
    """Bottom-up over a block of subtrees; returns the per-level results and zero cells."""
    alg = EigenAlgebra(sub.shape)
    owns = [own_info(alg, sub, lev) for lev in range(len(sub.sizes))]
    starts = [None] + [
        segment_starts(sub.parents[lev], sub.sizes[lev - 1]) for lev in range(1, len(sub.sizes))
    ]
    levels = upward(alg, owns, basis, affected, starts, names, base=split)
    return {"levels": levels, "zeros": [o.zero_cells for o in owns], "starts": starts}


def _top_of(result):
    return result["levels"][0]


def _down_task(result, basis, top: dict, affected, names, split):
    """Top-down over a block of subtrees from its split units' final quantities."""
    levels, zeros, starts = result["levels"], result["zeros"], result["starts"]
    alg = EigenAlgebra(top["x"].shape[1:])
    out, parent = [], dict(top)
    for i in range(1, len(levels)):
        z, v, sub = levels[i]
        parent["s"] = segment_sum(z, starts[i])
        child = (z, v, sub, affected[i])
        res = top_down_level(alg, basis, child, starts[i], parent, split + i, names, zeros[i])
        res["v"], res["sub"] = v, sub  # z stays on the worker: nothing after the passes uses it
        out.append(res)
        parent = {k: res[k] for k in ("x", "F", "anchor", "Gam", "Omt", "Fd")}
        parent["affected"] = affected[i]
    return out


def solve_dask(problem, client, names) -> Solution:
    """:func:`._tree_passes.solve` with the subtrees below level 1 as Dask tasks.

    ``client``: a dask.distributed Client, or None for the running client if
    any, else dask's local threads.
    """
    alg = EigenAlgebra(problem.shape)
    n_lev = len(problem.sizes)
    cons = [constraints_of(alg, problem, lev) for lev in range(n_lev)]
    starts, affected, basis = constraint_structure(problem, alg, cons)
    sol = Solution(problem, alg, basis, starts, affected, [c.zero_cells for c in cons])
    split = 1
    if n_lev <= split + 1 or problem.sizes[split] == 0:
        owns = [own_info(alg, problem, lev) for lev in range(n_lev)]
        up = upward(alg, owns, basis, affected, starts, names)
        sol.z, sol.v, sol.sub = (list(t) for t in zip(*up, strict=True))
        downward(sol, names)
        hold_invariants(sol, names)
        return sol
    client = client_of(client)
    n_split = problem.sizes[split]
    edges = np.linspace(0, n_split, min(n_split, 4 * _n_workers(client)) + 1).round().astype(int)
    batches = [
        _blocks(starts, split, int(a), int(b), n_lev)
        for a, b in zip(edges[:-1], edges[1:], strict=True)
        if b > a
    ]
    aff = [[affected[split + i][lo:hi] for i, (lo, hi) in enumerate(b)] for b in batches]
    subs = [problem.subtree(split, b) for b in batches]
    if client is not None:  # the measurements go to the workers once, not inside the graph
        subs = client.scatter(subs)
    up_jobs = [
        (sub, basis, a, _block_names(names, b, split), split)
        for sub, b, a in zip(subs, batches, aff, strict=True)
    ]
    handles = _submit(client, _up_task, up_jobs)
    tops = _gather(client, [_submit(client, _top_of, [(h,)])[0] for h in handles])
    sol.z, sol.v, sol.sub = [None] * n_lev, [None] * n_lev, [None] * n_lev
    sol.z[split] = np.concatenate([t[0] for t in tops])
    sol.v[split] = np.concatenate([t[1] for t in tops])
    sol.sub[split] = {}
    for b, t in zip(batches, tops, strict=True):
        sol.sub[split].update({u + b[0][0]: law for u, law in t[2].items()})
    owns = [own_info(alg, problem, lev) for lev in range(split)]
    below = (sol.z[split], sol.v[split], sol.sub[split])
    for lev, res in enumerate(
        upward(alg, owns, basis, affected[:split], starts, names, child=below)
    ):
        sol.z[lev], sol.v[lev], sol.sub[lev] = res
    downward(sol, names, stop=split)
    down_jobs = []
    for b, a, h in zip(batches, aff, handles, strict=True):
        lo, hi = b[0]
        anchor = sol.anchor[split][lo:hi].copy()
        anchor[anchor[:, 0] >= split, 1] -= lo  # local to the task, rebased below
        top = dict(
            x=sol.x[split][lo:hi],
            F=sol.F[split][lo:hi],
            anchor=anchor,
            Gam=None if basis is None else sol.Gam[split][lo:hi],
            Omt=None if basis is None else sol.Omt[split][lo:hi],
            Fd=_slice_dict(sol.Fd[split], lo, hi),
            affected=sol.affected[split][lo:hi],
        )
        down_jobs.append((h, basis, top, a, _block_names(names, b, split), split))
    parts = _gather(client, _submit(client, _down_task, down_jobs))
    _assemble(sol, parts, batches, split)
    hold_invariants(sol, names)
    return sol


def _submit(client, fn, jobs):
    if client is None:  # dask's local scheduler: run now, keep the values
        return run_tasks(fn, jobs, None)
    return [client.submit(fn, *job, pure=False) for job in jobs]


def _gather(client, handles):
    return handles if client is None else client.gather(handles)


def _assemble(sol: Solution, parts: list, batches: list, split: int) -> None:
    """Concatenate the blocks' top-down results into the solution, unit indices rebased."""
    for i in range(sol.n_levels - split - 1):
        lev = split + 1 + i
        for key in (*_KEYS, "v"):
            blocks = [p[i][key] for p in parts]
            getattr(sol, key)[lev] = None if blocks[0] is None else np.concatenate(blocks)
        anchors = []
        for blocks, p in zip(batches, parts, strict=True):
            a = p[i]["anchor"].copy()
            mine = a[:, 0] >= split
            a[mine, 1] += np.array([blocks[lv - split][0] for lv in a[mine, 0]], dtype=np.int64)
            anchors.append(a)
        sol.anchor[lev] = np.concatenate(anchors)
        for key in ("Fd", "Gd", "Omd", "sub"):
            merged = {}
            for blocks, p in zip(batches, parts, strict=True):
                merged.update({u + blocks[i + 1][0]: v for u, v in p[i][key].items()})
            getattr(sol, key)[lev] = merged

"""GLS under the 2020 persons file's real constraint structure: cost per unit, as ratios.

A synthetic county of the P.L. 94-171 persons schema (hhgq 8 x votingage 2 x
hispanic 2 x cenrace 63 = 2,016 cells) down to blocks, measured as in the 2020
production strategy (at every level: total (not at the top), cenrace,
hispanic, votingage, hhinstlevels (a recode of hhgq), hhgq, hispanic *
cenrace, votingage * cenrace, votingage * hispanic, votingage * hispanic *
cenrace, detailed; 1/sigma^2 = rho x level share x query share), with the
Bureau's constraints: the top total invariant, at every block the absent GQ
types as structural zeros of their whole hhgq slice (summed upward: a unit
lacks a type when all its blocks do) and ``nurse_nva_0`` (nursing facilities
x under 18 at 0) at every unit.  Most blocks have no group quarters, a few
have one or two types: a few dozen distinct patterns.

Timed, in one run (fastest of five interleaved rounds; the machine is shared):

1. ``solve_blocks`` on the file with its real constraints (the dense-factor
   path: four 16 x 16 blocks per unit);
2. the same file with its constraints removed (``hhinstlevels`` still
   measured: the same path with an 8 x 8 factor);
3. the plain fast path, ``solve``, on the file without constraints and
   without the recoded query (the scalar eigen-algebra of the package's own files).

Targets: (1) / (2) <= 2 and (1) / (3) <= 2 per unit.

Run: ``.venv/bin/python benchmarks/bench_block_passes.py [--blocks N]``.
"""

from __future__ import annotations

import argparse
import resource
import time

import numpy as np

from invariantdp._gls import Equality, Measurement, Problem, Zeros, solve, solve_blocks
from invariantdp.census import PL94, PL94_2020_STRATEGY

#: the 2020 persons strategy (rho per level and query); this county uses its last four levels
STRATEGY = PL94_2020_STRATEGY.persons
LEVELS = ("County", "Tract", "Block_Group", "Block")


def tree(blocks: int):
    """``parents`` of a county: tracts of 3 block groups, block groups of ~25 blocks."""
    n_bg = max(blocks // 25, 1)
    n_tr = max(n_bg // 3, 1)
    tr = np.sort(np.arange(n_bg) % n_tr)
    bg = np.sort(np.arange(blocks) % n_bg)
    return [np.array([-1]), np.zeros(n_tr, dtype=np.int64), tr, bg]


def absent_types(rng, parents):
    """Absent GQ types per unit: most blocks have none, a few one or two types; then upward."""
    n_blocks = parents[-1].size
    present = np.zeros((n_blocks, 8), dtype=bool)
    present[:, 0] = True  # households
    has = rng.random(n_blocks) < 0.08
    for i in np.flatnonzero(has):
        present[i, rng.choice(np.arange(1, 8), size=rng.integers(1, 3), replace=False)] = True
    out = [None] * len(parents)
    out[-1] = ~present
    for lev in range(len(parents) - 1, 0, -1):
        n = parents[lev - 1].size
        pres = np.zeros((n, 8), dtype=bool)
        np.logical_or.at(pres, parents[lev], ~out[lev])
        out[lev - 1] = ~pres
    return out


def problem(blocks: int, constraints: bool, recoded: bool, seed: int = 5) -> Problem:
    rng = np.random.default_rng(seed)
    parents = tree(blocks)
    sizes = [p.size for p in parents]
    meas = []
    for lev, n in enumerate(sizes):
        for q, rho in STRATEGY[LEVELS[lev]].items():
            if (q == "total" and lev == 0) or (q == "hhinstlevels" and not recoded):
                continue
            attrs, rec = PL94.query_spec(q)
            cells = int(np.prod([rec[a].shape[0] if a in rec else PL94.shape[a] for a in attrs]))
            var = 1.0 / float(rho)
            vals = rng.normal(0.5, np.sqrt(var), size=(n, cells))
            meas.append(Measurement(lev, attrs, np.arange(n), vals, np.full(n, var), recodes=rec))
    eqs, zeros = [], []
    if constraints:
        eqs.append(Equality(0, (), np.array([0]), np.array([[float(30 * blocks)]])))
        absent = absent_types(rng, parents)
        attrs, rec = PL94.query_spec("gqNursingTotal * nonvoting")
        for lev, n in enumerate(sizes):
            units = np.flatnonzero(absent[lev].any(axis=1))
            if units.size:
                zeros.append(Zeros(lev, (0,), units, absent[lev][units]))
            zeros.append(Zeros(lev, attrs, np.arange(n), np.ones((n, 1), bool), recodes=rec))
    return Problem(PL94.shape, parents, meas, eqs, zeros)


def clock(fns: dict, rounds: int = 5) -> dict:
    """The fastest of ``rounds`` runs of each function, interleaved (the load varies)."""
    best = dict.fromkeys(fns, np.inf)
    for _ in range(rounds):
        for name, fn in fns.items():
            t0 = time.perf_counter()
            fn()
            best[name] = min(best[name], time.perf_counter() - t0)
    return best


def main(blocks: int) -> None:
    real = problem(blocks, constraints=True, recoded=True)
    bare = problem(blocks, constraints=False, recoded=True)
    plain = problem(blocks, constraints=False, recoded=False)
    n_units = sum(real.sizes)
    sol = solve_blocks(real)
    t = clock(
        {
            "real": lambda: solve_blocks(real),
            "bare": lambda: solve_blocks(bare),
            "plain": lambda: solve(plain),
        }
    )
    t_real, t_bare, t_plain = t["real"], t["bare"], t["plain"]
    patterns = len(np.unique(np.vstack([z.mask for z in real.zeros if z.attrs == (0,)]), axis=0))
    print(
        f"P.L. 94-171 county: {' / '.join(str(n) for n in real.sizes)} units, "
        f"{PL94.k} cells; dense factors {sol.fa.dense} (m = {sol.fa.m}, "
        f"{sol.fa.n_spaces} blocks per unit); {patterns} absent-type patterns"
    )
    rows = [
        ("real constraints (solve_blocks)", t_real),
        ("constraints removed (solve_blocks)", t_bare),
        ("plain file, fast path (solve)", t_plain),
    ]
    for name, t in rows:
        print(f"  {name:<38} {t:7.3f} s  {1e3 * t / n_units:7.3f} ms per unit")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    print(f"  peak RSS {peak:,.0f} MB ({1024 * peak / n_units:,.0f} kB per unit)")
    print(f"  real / constraints removed: {t_real / t_bare:5.2f} x (target <= 2)")
    print(f"  real / plain fast path:     {t_real / t_plain:5.2f} x (target <= 2)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--blocks", type=int, default=1500)
    main(parser.parse_args().blocks)

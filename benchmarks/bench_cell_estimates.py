"""``invariantdp.estimate`` on a county x sex x age table, against its baselines.

Two parts, each printed as ratios to a baseline measured in the same run
(issue 22, "Estimates with intervals for cells and sums"):

1. 3,000 counties x 2 sexes x 3 ages (18,000 cells), discrete Gaussian noise
   (sigma = 1) and an exact state total: ``estimate`` of the cells and of the
   county sums against the GLS alone (the census passes and the variances,
   no interval): the ratio is the price of the exact discrete intervals.
   Also with every county total exact.
2. 300 counties (1,800 cells): ``estimate`` of the cells against a dense
   constrained GLS (the KKT system through the null space of the
   invariants, as the textbook writes it).

Timings are the fastest of three runs (the machines running this are shared).

Run: ``.venv/bin/python benchmarks/bench_cell_estimates.py``.
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd
import scipy.linalg as sla

from invariantdp import Release, estimate
from invariantdp._gls import marginal_constraints, query_estimates, solve_release
from invariantdp.distributions import discrete_gaussian
from invariantdp.invariants import grand_total, group_totals


def _best(fn, runs=3):
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def _release(n_counties, rng, county_totals=False):
    idx = pd.MultiIndex.from_product(
        [[f"C{i:04d}" for i in range(n_counties)], ["F", "M"], ["0-17", "18-64", "65+"]],
        names=["county", "sex", "age"],
    )
    truth = pd.Series(rng.poisson(30, len(idx)), index=idx)
    noisy = truth + discrete_gaussian.rvs(1.0, size=len(idx), random_state=rng)
    inv = (
        group_totals(truth, "county").of(truth.to_numpy())
        if county_totals
        else grand_total(truth, int(truth.sum()))
    )
    return Release.from_published(noisy, noise="discrete_gaussian", sigma=1.0, invariants=inv)


def _gls_only(r, shape):
    inv = r.invariants
    margins, mat, rhs = marginal_constraints(shape, inv.matrix, inv.values)
    sol = solve_release(shape, r.value, discrete_gaussian.var(1.0), margins, mat, rhs)
    query_estimates(sol, (0, 1, 2))
    query_estimates(sol, (0,))


def _dense_kkt(r):
    c = r.invariants.dense_matrix()
    y = np.asarray(r.value, dtype=float)
    x0 = np.linalg.lstsq(c, r.invariants.values, rcond=None)[0]
    k = sla.null_space(c)
    x = x0 + k @ (k.T @ (y - x0))
    cov = k @ k.T
    return x, np.sqrt(np.diag(cov))


def main():
    rng = np.random.default_rng(22)
    print("1. 18,000 cells, discrete Gaussian sigma = 1")
    for county_totals in (False, True):
        r = _release(3000, rng, county_totals)
        base = _best(lambda r=r: _gls_only(r, (3000, 2, 3)))
        cells = _best(lambda r=r: estimate(r))
        sums = _best(lambda r=r: estimate(r, sums="county"))
        what = "county totals" if county_totals else "state total"
        print(
            f"   {what:14s}: GLS alone {base:.3f} s; estimate(cells) {cells / base:.2f}x, "
            f"estimate(sums='county') {sums / base:.2f}x"
        )
    print("2. 1,800 cells, state total: against the dense constrained GLS")
    r = _release(300, rng)
    dense = _best(lambda: _dense_kkt(r))
    ours = _best(lambda: estimate(r))
    print(f"   dense KKT {dense:.3f} s; estimate {ours:.3f} s: {dense / ours:.1f}x faster")


if __name__ == "__main__":
    main()

"""Crosswalk sums of GLS estimates: thousands of areas, as ratios to the per-unit estimates.

A state of 160 counties of 25 tracts (4,000 tracts; a 2 x 3 schema; the
state and counties measured in full, the tracts by age and total), once
with no structural zero (the scalar passes only) and once with one tract's
cell fixed at 0 (the low-rank correction then reaches every county through
the state).  Timed, the fastest of three runs (the machines are shared):

* baseline: ``estimate("age", "Tract")``, every tract's estimates;
* ``estimate("age", "Tract", groups=...)``: the tracts summed into 4,000
  areas (one tract each: the recursion, the laws and the variances of
  4,000 groups), and the same with ``cells=`` (a union of two age cells).

Each line prints the seconds and the ratio to the baseline of that
problem.  Before the weights of a query were computed once for all groups
and a parent's terms outside a group once per child, the same run gave
0.35x and 1.6x the baseline without the zero (now 0.03x and 0.35x) and
3.4x and 3.6x with it (now 0.27x and 0.29x).

Run: ``.venv/bin/python benchmarks/bench_crosswalk.py``.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd
from _timing import clock

from invariantdp.census import Geography, Schema, gls, measure
from invariantdp.census._measurements import QueryTable

SCHEMA = Schema({"sex": ["F", "M"], "age": ["0-17", "18-64", "65+"]})
GEO = Geography({"State": 2, "County": 5, "Tract": 11})
COUNTIES, TRACTS = 160, 25


def state(zero: bool):
    rng = np.random.default_rng(1)
    codes = [f"01{c:03d}{t:06d}" for c in range(COUNTIES) for t in range(TRACTS)]
    cells = pd.MultiIndex.from_product(
        [codes, SCHEMA.labels("sex"), SCHEMA.labels("age")], names=["geocode", "sex", "age"]
    )
    counts = cells.to_frame(index=False)
    counts["count"] = rng.poisson(6, len(counts))
    workload = {
        "State": {"detailed": 1.0},
        "County": {"detailed": 1.0},
        "Tract": {"age": 1.0, "total": 1.0},
    }
    nm = measure(counts, SCHEMA, GEO, workload, secure=False, rng=9, units=codes)
    if zero:
        mask = np.zeros((1, SCHEMA.k), dtype=bool)
        mask[0, -1] = True
        nm = replace(nm, zeros={("Tract", "detailed"): QueryTable(np.array([0]), mask)})
    return nm, codes


def main() -> None:
    adults = {"adults": {"age": ["18-64", "65+"]}}
    for zero in (False, True):
        nm, codes = state(zero)
        est = gls(nm)
        walk = pd.Series(np.arange(len(codes)), index=codes)
        t_base, _ = clock(lambda est=est: est.estimate("age", "Tract"), 3)
        t_sum, by = clock(lambda est=est, walk=walk: est.estimate("age", "Tract", groups=walk), 3)
        t_sel, _ = clock(
            lambda est=est, walk=walk: est.estimate("age", "Tract", groups=walk, cells=adults), 3
        )
        assert len(by) == 3 * len(codes) and np.isfinite(by["std_error"]).all()
        paths = est.paths().set_index("level").loc["Tract"]
        what = "one structural zero (low-rank path)" if zero else "no structural zero"
        print(f"{len(codes):,} tracts into {len(codes):,} areas, {what}; tract paths:")
        print("  " + ", ".join(f"{k} {int(v):,}" for k, v in paths.items()))
        for name, t in (
            ("per-tract estimates (baseline)", t_base),
            ("crosswalk sums", t_sum),
            ("crosswalk sums of a cell selection", t_sel),
        ):
            print(f"  {name:<36} {t:8.3f} s   {t / t_base:8.2f} x baseline")


if __name__ == "__main__":
    main()

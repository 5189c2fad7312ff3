"""A state persons file in the 2020 release layout: read, GLS, tract and block-group estimates.

The file comes from the tests' independent generator of the Bureau's layout
(``tests/census/nmf_layout.py``: every level from US to Block, the 11
queries of the persons strategy with their recodes, the facility bounds,
the structural zeros they imply and the nursing x under-18 zeros).  Timed:
``read_nmf(folder)``; ``gls``; totals and voting-age population (the
``votingage`` query's second cell, a ``cells=`` selection) of every tract and
block group, and of 10 voting districts from a block crosswalk keyed by
tabulation block code.  Baseline: a
``pyarrow.dataset`` read of the same files, in the same run.

Targets: read <= 3x the baseline, gls + estimates <= 5x, the whole < 60 s
(at 25,000 blocks).

Run: ``python benchmarks/bench_census_release.py [counties tracts groups blocks]``
(per parent; default 2 5 4 10: 400 blocks).
"""

from __future__ import annotations

import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import pyarrow.dataset as ds

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from census.nmf_layout import write_release
from invariantdp.census import gls, read_nmf


def arrow_read(folder: Path) -> int:
    """Read every level's DPQuery and Constraint tables with pyarrow.dataset; rows read."""
    rows = 0
    for part in sorted(folder.glob("*.parquet/*")):
        rows += ds.dataset(part, format="parquet", partitioning="hive").to_table().num_rows
    return rows


def main(counties=2, tracts=5, groups=4, blocks=10) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        write_release(
            root,
            np.random.default_rng(0),
            counties=counties,
            tracts=tracts,
            groups=groups,
            blocks=blocks,
        )
        folder = root / "US_Person_PL_PROD"
        t0 = time.perf_counter()
        rows = arrow_read(folder)
        t_base = time.perf_counter() - t0
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            nm = read_nmf(folder)
        t_read = time.perf_counter() - t0
        t0 = time.perf_counter()
        est = gls(nm)
        t_gls = time.perf_counter() - t0
        vap = {"vap": {"votingage": ["18 and over"]}}
        t0 = time.perf_counter()
        for level in ("Tract", "Block_Group"):
            est.estimate("total", level)
            est.estimate("votingage", level, cells=vap)
        t_est = time.perf_counter() - t0
        # 10 voting districts of consecutive blocks, keyed by tabulation block code
        blocks = nm.geocodes("Block")
        districts = {b[-16:]: f"VTD {10 * i // blocks.size}" for i, b in enumerate(blocks)}
        t0 = time.perf_counter()
        est.estimate("total", "Block", groups=districts)
        est.estimate("votingage", "Block", groups=districts, cells=vap)
        t_walk = time.perf_counter() - t0
        t_est += t_walk
    n_blocks = len(nm.geocodes("Block"))
    print(f"persons file: {n_blocks} blocks, {rows} rows (target size 25,000 blocks)")
    print(f"pyarrow.dataset read (baseline): {t_base:.2f} s")
    print(f"read_nmf: {t_read:.2f} s = {t_read / t_base:.1f}x baseline (target <= 3x)")
    print(
        f"gls: {t_gls:.2f} s; estimates: {t_est:.2f} s (of which 10 voting districts' "
        f"totals and VAP from a crosswalk: {t_walk:.2f} s)"
    )
    print(
        f"gls + estimates = {(t_gls + t_est) / t_base:.1f}x baseline (target <= 5x); "
        f"whole {t_read + t_gls + t_est:.1f} s (target < 60 s at 25,000 blocks)"
    )


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:5]))

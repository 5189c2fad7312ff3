"""A multi-state persons file in the 2020 release layout, solved in parts: one machine and Dask.

The file comes from the tests' independent generator of the Bureau's layout
(``tests/census/nmf_layout.py``: US to Block, the 11 persons queries with
their recodes, the facility bounds and the structural zeros they imply),
with 4 states.  Measured, in one run:

1. The file: bytes per block on disk.
2. In memory: ``gls(read_nmf(folder))``; time per block, and the peak of
   memory allocated (``tracemalloc``, a separate run) per block.
3. In parts on one machine: ``gls(NMFParts.open(folder))`` (each state's
   files split by county and each county solved alone, in both passes);
   time per block, peak memory, and the estimates against the in-memory
   solve (target: equal to 1e-12 of each level's largest estimate).
4. On Dask: the same with ``scheduler="dask"`` on a local cluster of 2
   single-threaded worker processes against 1 (each state a task that
   reads its own files on its worker).  Target >= 1.6x; results identical
   to the serial solve in parts; three runs each with the machine's load
   average; CPU seconds of the driver and the workers (independent of the
   load: with ``d`` driver and ``w`` worker seconds, two workers can give at
   most ``(d + w) / (d + w / 2)``); bytes pickled between the driver and the
   tasks.

Totals and voting-age population (the ``votingage`` query) of every unit of
every level are kept.

Run: ``python benchmarks/bench_census_release_dask.py [counties tracts groups blocks]``
(per parent, for each of the 4 states; default 3 5 4 8: 480 blocks a state).
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
import tracemalloc
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from census.nmf_layout import LEVELS, write_release
from invariantdp.census import NMFParts, gls, read_nmf

STATES = ("001", "002", "004", "005")
QUERIES = ["total", "votingage"]


def quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return fn(*args, **kwargs)


def best_of(fn, runs=3):
    times, out = [], None
    for _ in range(runs):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return min(times), out


def peak_bytes(fn) -> int:
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def frames(est):
    return {(lev, q): est.estimate(q, lev) for lev in LEVELS for q in QUERIES}


def _cpu_seconds() -> float:
    """This process's CPU time (run on the workers by ``Client.run``)."""
    return time.process_time()


def part_dask(folder: Path, serial: dict, runs: int = 3) -> None:
    from dask.distributed import Client, LocalCluster

    parts = NMFParts.open(folder)
    times, driver_cpu, worker_cpu = {}, {}, {}
    for n in (1, 2):
        t0 = time.perf_counter()
        cluster = LocalCluster(
            n_workers=n, threads_per_worker=1, processes=True, dashboard_address=None
        )
        with cluster, Client(cluster) as client:
            quiet(gls, parts, queries=QUERIES, scheduler="dask", client=client)  # warm up
            startup = time.perf_counter() - t0
            load = os.getloadavg()[0]
            times[n], driver_cpu[n], worker_cpu[n] = [], [], []
            for _ in range(runs):
                w0, d0 = client.run(_cpu_seconds), time.process_time()
                t1 = time.perf_counter()
                est = quiet(gls, parts, queries=QUERIES, scheduler="dask", client=client)
                times[n].append(time.perf_counter() - t1)
                driver_cpu[n].append(time.process_time() - d0)
                w1 = client.run(_cpu_seconds)
                worker_cpu[n].append(sum(w1[k] - w0[k] for k in w0))
            got = frames(est)
            same = all(
                np.array_equal(got[key][col].to_numpy(), serial[key][col].to_numpy())
                for key in serial
                for col in ("estimate", "std_error")
            )
            moved = dict(est.transfer)
        shown = ", ".join(f"{t:.2f}" for t in times[n])
        print(
            f"  dask, {n} worker(s): {shown} s (start-up {startup:.1f} s; load average "
            f"{load:.1f} -> {os.getloadavg()[0]:.1f}); identical to serial: {same}"
        )
        print(
            f"    bytes driver -> workers {moved['to_workers']:,}, workers -> driver "
            f"{moved['from_workers']:,} per run (pickled task arguments and results)"
        )
    best = min(times[1]) / min(times[2])
    median = np.median(times[1]) / np.median(times[2])
    print(f"  2 workers vs 1: {best:.2f}x best, {median:.2f}x median (target >= 1.6)")
    drv, wrk = float(np.median(driver_cpu[1])), float(np.median(worker_cpu[1]))
    drv2, wrk2 = float(np.median(driver_cpu[2])), float(np.median(worker_cpu[2]))
    print(
        f"  CPU per run with one worker: driver {drv:.2f} s + worker {wrk:.2f} s -> at most "
        f"{(drv + wrk) / (drv + wrk / 2):.2f}x with two (target >= 1.6); with two workers: "
        f"driver {drv2:.2f} s + workers {wrk2:.2f} s"
    )


def main(counties=3, tracts=5, groups=4, blocks=8) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        t0 = time.perf_counter()
        truth = write_release(
            root,
            np.random.default_rng(0),
            states=STATES,
            counties=counties,
            tracts=tracts,
            groups=groups,
            blocks=blocks,
        )
        n_blocks = len(truth["units"]["Block"])
        per_county = n_blocks // len(truth["units"]["County"])
        folder = root / "US_Person_PL_PROD"
        disk = sum(p.stat().st_size for p in folder.rglob("*.parquet"))
        print(
            f"{len(STATES)} states, {len(truth['units']['County'])} counties, {n_blocks:,} "
            f"blocks (about {per_county} a county); written in {time.perf_counter() - t0:.1f} s"
        )
        print(f"  on disk: {disk / 2**20:.1f} MB, {disk / n_blocks / 1024:.1f} kB per block")

        t_whole, whole = best_of(lambda: quiet(gls, quiet(read_nmf, folder)))
        m_whole = peak_bytes(lambda: quiet(gls, quiet(read_nmf, folder)))
        print(
            f"  in memory, read_nmf + gls: {t_whole:.2f} s, {1e3 * t_whole / n_blocks:.2f} ms per "
            f"block; peak {m_whole / 2**20:.0f} MB, {m_whole / n_blocks / 1024:.0f} kB per block"
        )

        def in_parts():
            return quiet(gls, NMFParts.open(folder), queries=QUERIES)

        t_parts, est = best_of(in_parts)
        m_parts = peak_bytes(in_parts)
        print(
            f"  in parts, one machine: {t_parts:.2f} s, {1e3 * t_parts / n_blocks:.2f} ms per "
            f"block ({t_parts / t_whole:.1f}x in memory: each state's files read, split by "
            f"county and read again in each pass); peak {m_parts / 2**20:.0f} MB "
            f"({m_parts / m_whole:.2f} of in memory), {m_parts / per_county / 1024:.0f} kB per "
            "block of a county"
        )
        serial = frames(est)
        population = whole.estimate("total", "US")["estimate"].iloc[0]
        worst = max(
            np.abs(df[col].to_numpy() - whole.estimate(q, lev)[col].to_numpy()).max()
            for (lev, q), df in serial.items()
            for col in ("estimate", "std_error")
        )
        own = abs(population - truth["hists"]["US"].sum())  # the exact invariant, in memory
        print(
            f"  largest difference from the solve in memory: {worst / population:.1e} of the "
            f"population (target <= 1e-12; the solve in memory meets the US total invariant to "
            f"{own / population:.1e} of it)"
        )
        print("Dask (4 states, one task each):")
        part_dask(folder, serial)


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:5]))

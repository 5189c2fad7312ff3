"""Scaling of :func:`invariantdp.simulate.simulate` from one Dask worker to two.

A power study of the DP UMP binomial test (Awan & Slavkovic 2018): settings
n x epsilon x p, each replicate draws a Tulap release and computes the exact
p-value.  The same study runs on a local Dask cluster of one worker and of two
(single-threaded processes), and serially in this process; the script prints
the wall times, the speed-up of two workers over one (target >= 1.6 on a
2-core machine) and checks that all three tables are identical.  The clusters
are started (and their workers warmed by a first small study) before the
clock starts: starting a cluster is a fixed cost of a few seconds, printed
separately.

Run: ``.venv/bin/python benchmarks/bench_simulate.py [--replicates 400]``.
"""

from __future__ import annotations

import argparse
import time

import pandas as pd

from invariantdp import ump_binomial_test
from invariantdp.distributions import tulap, tulap_params
from invariantdp.simulate import simulate

SETTINGS = {"n": [30, 300, 3000], "epsilon": [0.5, 1.0, 2.0], "p": [0.3, 0.4]}


def run(rng, n, epsilon, p):
    b, q = tulap_params(epsilon)
    z = rng.binomial(n, p) + tulap(b, q).rvs(random_state=rng)
    res = ump_binomial_test(z, n, 0.3, epsilon=epsilon, alternative="greater")
    return {"pvalue": res.pvalue}


def timed(**kwargs) -> tuple[float, pd.DataFrame]:
    t0 = time.perf_counter()
    res = simulate(run, SETTINGS, seed=1, progress=False, **kwargs)
    return time.perf_counter() - t0, res.frame


def on_cluster(n_workers: int, common: dict) -> tuple[float, float, pd.DataFrame]:
    """(start-up seconds, study seconds, table) on a fresh local cluster."""
    from dask.distributed import Client, LocalCluster

    t0 = time.perf_counter()
    cluster = LocalCluster(
        n_workers=n_workers, threads_per_worker=1, processes=True, dashboard_address=None
    )
    with cluster, Client(cluster) as client:
        simulate(
            run,
            {"n": [10], "epsilon": [1.0], "p": [0.3]},
            replicates=n_workers * 4,
            seed=0,
            batch_size=1,
            scheduler="dask",
            client=client,
            progress=False,
        )
        startup = time.perf_counter() - t0
        seconds, table = timed(scheduler="dask", client=client, **common)
    return startup, seconds, table


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicates", type=int, default=1000)
    args = parser.parse_args(argv)
    common = {"replicates": args.replicates, "batch_size": max(1, args.replicates // 8)}
    serial_s, serial = timed(**common)
    one_up, one_s, one = on_cluster(1, common)
    two_up, two_s, two = on_cluster(2, common)
    runs = len(serial)
    print(f"{runs} runs in {len(SETTINGS['n']) * 6} settings")
    print(f"{'scheduler':<16} {'seconds':>8} {'runs/s':>9} {'start-up s':>11}")
    rows = (
        ("serial", serial_s, 0.0),
        ("dask, 1 worker", one_s, one_up),
        ("dask, 2 workers", two_s, two_up),
    )
    for name, s, up in rows:
        print(f"{name:<16} {s:8.2f} {runs / s:9.0f} {up:11.2f}")
    print(f"speed-up of 2 workers over 1: {one_s / two_s:.2f}x (target >= 1.6)")
    same = serial.equals(one) and serial.equals(two)
    print(f"tables identical across schedulers: {same}")
    if not same:
        raise SystemExit("the schedulers gave different tables")


if __name__ == "__main__":
    main()

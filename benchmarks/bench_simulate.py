"""Costs of :func:`invariantdp.simulate.simulate`: the progress bar, and Dask against serial.

1. **Progress bar.**  A study of 7,200 fast runs (24 settings x 300
   replicates of one normal draw) with the bar on and off; the bar is
   rendered to a file standing in for the terminal.  The ratio on/off is the
   cost of the bar (it counts runs and reaches tqdm at most every 0.2 s).
2. **Dask against serial.**  A power study of the DP UMP binomial test (Awan
   & Slavkovic 2018; settings n x epsilon x p, a Tulap release and an exact
   p-value per run) at two sizes, run serially, on a fresh local cluster of
   two workers (its start and stop included: what ``scheduler="dask",
   n_workers=2`` costs), and on a running cluster of one and two workers
   with the default batching (a pilot sets the batch size) and with one run
   per task (no batching, the worst case of the per-task overhead).  Every
   time is printed as a ratio to the serial time of the same study in the
   same run, and every table is checked equal to the serial one.

Run: ``.venv/bin/python benchmarks/bench_simulate.py [--replicates 60]``
(replicates per setting of the smaller Dask study; the larger has ten times
as many).
"""

from __future__ import annotations

import argparse
import os
import tempfile

import pandas as pd
from _timing import clock

from invariantdp import ump_binomial_test
from invariantdp.distributions import tulap, tulap_params
from invariantdp.simulate import simulate

SETTINGS = {"n": [30, 300, 3000], "epsilon": [0.5, 1.0], "p": [0.3]}
FAST = {"a": list(range(6)), "b": list(range(4))}


def run(rng, n, epsilon, p):
    b, q = tulap_params(epsilon)
    z = rng.binomial(n, p) + tulap(b, q).rvs(random_state=rng)
    res = ump_binomial_test(z, n, 0.3, epsilon=epsilon, alternative="greater")
    return {"pvalue": res.pvalue}


def fast(rng, a, b):
    return {"x": float(rng.normal())}


def bench_progress() -> None:
    import sys

    study = dict(replicates=300, seed=1)
    off, _ = clock(lambda: simulate(fast, FAST, progress=False, **study), 7)
    with tempfile.TemporaryFile("w") as sink:
        stderr, sys.stderr = sys.stderr, sink
        try:
            on, _ = clock(lambda: simulate(fast, FAST, progress=True, **study), 7)
        finally:
            sys.stderr = stderr
    runs = 24 * 300
    print(f"progress bar: {runs} fast runs, {off * 1e6 / runs:.1f} us per run without the bar")
    print(f"  bar on / bar off: {on / off:.2f}")
    # one update per run: tqdm's own update against the throttled bar's
    from tqdm import tqdm

    from invariantdp._progress import progress_bar

    with tempfile.TemporaryFile("w") as sink:
        raw = tqdm(total=runs, file=sink)
        raw_s, _ = clock(lambda: [raw.update(1) for _ in range(runs)], 1)
        raw.close()
        stderr, sys.stderr = sys.stderr, sink
        try:
            bar = progress_bar(runs, True, desc="bench")
            ours_s, _ = clock(lambda: [bar.update(1) for _ in range(runs)], 1)
            bar.close()
        finally:
            sys.stderr = stderr
    print(
        f"  one update per run: tqdm {raw_s * 1e6 / runs:.2f} us, "
        f"throttled bar {ours_s * 1e6 / runs:.2f} us (tqdm sees {bar.pushes} updates)"
    )


def bench_dask(replicates: int) -> None:
    from dask.distributed import Client, LocalCluster

    study = dict(replicates=replicates, seed=1, progress=False)
    serial_s, serial = clock(lambda: simulate(run, SETTINGS, **study).frame, 1)
    runs = len(serial)
    rows = [("serial", serial_s, serial)]

    def fresh():
        return simulate(run, SETTINGS, scheduler="dask", n_workers=2, **study).frame

    rows.append(("dask, fresh local cluster of 2", *clock(fresh, 1)))
    for workers in (1, 2):
        cluster = LocalCluster(
            n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None
        )
        with cluster, Client(cluster) as client:
            # warm the workers (imports) before the clock starts
            simulate(run, SETTINGS, replicates=2, seed=0, scheduler="dask", client=client)
            for label, batch in (("default batches", None), ("one run per task", 1)):

                def on_client(batch=batch, client=client):
                    return simulate(
                        run, SETTINGS, scheduler="dask", client=client, batch_size=batch, **study
                    ).frame

                rows.append((f"dask, {workers} running, {label}", *clock(on_client, 1)))
    print(f"\nDask against serial: {runs} runs in {runs // replicates} settings")
    print(f"{'scheduler':<40} {'seconds':>8} {'/ serial':>9}")
    for name, seconds, _ in rows:
        print(f"{name:<40} {seconds:8.2f} {seconds / serial_s:9.2f}")
    same = all(pd.DataFrame.equals(serial, table) for _, _, table in rows)
    print(f"tables identical across schedulers and batch sizes: {same}")
    if not same:
        raise SystemExit("the schedulers gave different tables")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicates", type=int, default=60)
    args = parser.parse_args(argv)
    print(f"{os.cpu_count()} cores")
    bench_progress()
    bench_dask(args.replicates)
    bench_dask(10 * args.replicates)


if __name__ == "__main__":
    main()

"""Speed of the Permutation Algorithm (swapping) against numpy's permutation.

Two cases, each timed against ``numpy.random.Generator.permutation(n)`` in
the same run (the ratio is swap time / permutation time, best of
``--repeat``; every call of :func:`invariantdp.mechanisms.permutation_swap`
is a first call, nothing is cached between calls):

1. *small dtypes* -- n = 1e5, 1e6, 1e7 household records (state x county x
   size x tenure, 3,000 counties nested in 50 states, swap key state x
   household size, swap rate 5%), columns in int8 to int32;
2. *census* (issue 21) -- n = 1e7 households as read from a CSV (every
   column int64): ``block`` (200,000 distinct codes) swapped within
   ``hh_size`` (1-7), ``tenure`` held, swap rate 5%.  The release lists the
   200,000 block levels and 2.8 million cells (target: within 3x).

Each time covers selection, exact uniform derangements within every
stratum, the swapped DataFrame and its Release (table, invariants, levels).

Run: ``.venv/bin/python benchmarks/bench_swapping.py [--max-exp 7] [--repeat 3]``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

from invariantdp.mechanisms import permutation_swap


def households(n: int, rng: np.random.Generator) -> pd.DataFrame:
    state = rng.integers(0, 50, n).astype(np.int16)
    return pd.DataFrame(
        {
            "state": state,
            "county": (state.astype(np.int32) * 100 + rng.integers(0, 60, n)).astype(np.int32),
            "size": rng.integers(1, 8, n).astype(np.int8),
            "tenure": rng.integers(0, 2, n).astype(np.int8),
        }
    )


def census_households(n: int, rng: np.random.Generator, blocks: int = 200_000) -> pd.DataFrame:
    """int64 columns, as ``pandas.read_csv`` gives them for integer codes."""
    return pd.DataFrame(
        {
            "block": rng.integers(0, blocks, n),
            "hh_size": rng.integers(1, 8, n),
            "tenure": rng.integers(0, 2, n),
        }
    )


def best_of(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def _row(label: str, n: int, t_swap: float, t_perm: float) -> None:
    print(
        f"{label:>12} {n:>10.0e} {t_swap:>8.3f} {n / t_swap:>12.3e} {t_perm:>8.3f} "
        f"{t_swap / t_perm:>7.1f}"
    )


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-exp", type=int, default=7)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--swap-rate", type=float, default=0.05)
    parser.add_argument("--skip-census", action="store_true")
    args = parser.parse_args(argv)
    rng = np.random.default_rng(0)
    head = f"{'case':>12} {'records':>10} {'swap s':>8} {'records/s':>12} {'perm s':>8}"
    print(f"{head} {'ratio':>7}")
    for exp in range(5, args.max_exp + 1):
        n = 10**exp
        df = households(n, rng)
        gen = np.random.default_rng(1)

        def swap(df=df, gen=gen):
            permutation_swap(
                df, swap="county", match=["state", "size"], swap_rate=args.swap_rate, rng=gen
            )

        t_swap = best_of(swap, args.repeat)
        t_perm = best_of(lambda gen=gen, n=n: gen.permutation(n), args.repeat)
        _row("small dtypes", n, t_swap, t_perm)
    if args.skip_census:
        return
    n = 10**args.max_exp
    df = census_households(n, rng)
    gen = np.random.default_rng(2)

    def census(df=df, gen=gen):
        permutation_swap(df, swap="block", match="hh_size", swap_rate=args.swap_rate, rng=gen)

    t_swap = best_of(census, args.repeat)
    t_perm = best_of(lambda: gen.permutation(n), args.repeat)
    _row("census", n, t_swap, t_perm)


if __name__ == "__main__":
    main()

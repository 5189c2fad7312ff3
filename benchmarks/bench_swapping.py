"""Speed of the Permutation Algorithm (swapping) against numpy's permutation.

For n = 1e5, 1e6, 1e7 household records (state x county x size x tenure,
counties nested in 50 states, swap key state x household size, swap rate 5%)
it times :func:`invariantdp.mechanisms.permutation_swap` -- selection, exact
uniform derangements within every stratum, the swapped DataFrame and its
Release -- and ``numpy.random.Generator.permutation(n)`` in the same run, and
prints records per second and the time ratio.

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


def best_of(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-exp", type=int, default=7)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--swap-rate", type=float, default=0.05)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(0)
    print(f"{'records':>10} {'swap s':>8} {'records/s':>12} {'perm s':>8} {'ratio':>7}")
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
        print(
            f"{n:>10.0e} {t_swap:>8.3f} {n / t_swap:>12.3e} {t_perm:>8.3f} {t_swap / t_perm:>7.1f}"
        )


if __name__ == "__main__":
    main()

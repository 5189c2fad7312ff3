"""Speed of the semi-DP UMPU odds-ratio p-value and of the Tulap sampler.

Figures are ratios to baselines measured in the same run:

* p-value time / ``scipy.stats.fisher_exact(alternative="greater")`` time on
  the same tables, n = 1e2 .. 1e8 (targets: <= 3x at n = 1e6, < 1 s at 1e8);
* Tulap ``rvs`` throughput / ``numpy`` Laplace throughput (target >= 1/3).

Run: ``python benchmarks/bench_umpu.py``.
"""

from __future__ import annotations

import time

import numpy as np
from scipy import stats

import invariantdp as idp
from invariantdp.distributions import tulap


def best_time(func, repeat=7, number=None):
    """Best per-call time over ``repeat`` rounds (the timeit convention)."""
    if number is None:
        t0 = time.perf_counter()
        func()
        one = max(time.perf_counter() - t0, 1e-6)
        number = max(1, int(0.2 / one))
    best = np.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            func()
        best = min(best, (time.perf_counter() - t0) / number)
    return best


def table_of_size(n: int) -> np.ndarray:
    """A balanced table with a moderate association (p-values away from 0 and 1)."""
    a = n // 4
    d = max(1, int(np.sqrt(n) / 10))
    return np.array([[a + d, a - d], [a - d, n - 3 * a + d]])


def bench_pvalue():
    print("UMPU odds-ratio p-value vs scipy.stats.fisher_exact (same table, epsilon = 1)")
    print(f"{'n':>10} {'umpu [ms]':>10} {'fisher [ms]':>12} {'ratio':>7}")
    for n in (10**2, 10**4, 10**6, 10**8):
        t = table_of_size(n)
        margins = (t[0].sum(), t[1].sum(), t[:, 0].sum(), t[:, 1].sum())
        u = t[0, 0] + 0.37
        t_umpu = best_time(lambda u=u, m=margins: idp.umpu_odds_ratio_test(u, m, epsilon=1.0))
        t_fisher = best_time(lambda t=t: stats.fisher_exact(t, alternative="greater"))
        print(f"{n:>10.0e} {1e3 * t_umpu:>10.3f} {1e3 * t_fisher:>12.3f} {t_umpu / t_fisher:>7.2f}")


def bench_rvs(size=10**7):
    rng = np.random.default_rng(0)
    t_lap = best_time(lambda: rng.laplace(size=size), repeat=3, number=1)
    t_tul = best_time(
        lambda: tulap.rvs(np.exp(-1.0), 0.0, size=size, random_state=rng), repeat=3, number=1
    )
    t_tq = best_time(
        lambda: tulap.rvs(np.exp(-1.0), 0.05, size=size, random_state=rng), repeat=3, number=1
    )
    print(f"\nTulap rvs throughput vs numpy Laplace ({size:.0e} draws)")
    print(f"  numpy laplace     {size / t_lap / 1e6:8.1f} M/s")
    print(f"  tulap (q = 0)     {size / t_tul / 1e6:8.1f} M/s   ratio {t_lap / t_tul:.2f}")
    print(f"  tulap (q = 0.05)  {size / t_tq / 1e6:8.1f} M/s   ratio {t_lap / t_tq:.2f}")


if __name__ == "__main__":
    bench_pvalue()
    bench_rvs()

"""Speed of the mechanisms, as ratios to baselines measured in the same run.

1. Projected Gaussian release (Gao, Gong & Yu, Cor. 14) with nested-total
   invariants (state > county > tract of every block; 1e5 tracts at 1e7
   cells) at n = 1e4 .. 1e7 cells: the structured O(n) projection versus
   * raw ``numpy`` sampling of n standard normals (best of 3): warm (the
     structure built; target within 3x at 1e7) and on the first call
     (``nested_totals`` from the label arrays, then the release; issue 21
     target within 5x at 1e7).  The first call is timed once as the run
     reaches it (``cold``: the process also grows by the arrays it makes,
     which the kernel must hand over, at times compacting memory for huge
     pages) and as the best of 3 more first calls, each building the
     structure anew (``first``);
   * the same release with the invariants given as a dense matrix, projected
     by the SVD of C (run where the dense k x n matrix fits).
2. Semi-DP K-norm mechanism (Cho & Awan, Algorithms 2-3) draws per second
   by table size: the exact triangulation sampler versus the paper's cube
   rejection sampler (Algorithm 3), and the hull set-up time.
3. The polar K-norm sampler (issue 13) beyond the facet enumeration,
   (r-1)(c-1) = 10 .. 16: time per release, directions proposed and linear
   programmes solved per draw, as a ratio to the warm 4 x 4 triangulation
   release (the largest the facets allow) measured in the same run; and the
   polar sampler on 3 x 3 and 4 x 4, where both run.

Run: ``.venv/bin/python benchmarks/bench_mechanisms.py [--max-n 1e7]``
"""

from __future__ import annotations

import argparse
import os
import time

# one BLAS thread: on a shared machine oversubscribed BLAS threads make the
# dense SVD baseline 20x slower than it is (set before numpy is imported)
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np

from invariantdp.distributions import KNormNoise, LPHullNorm
from invariantdp.invariants import Invariants, nested_totals
from invariantdp.mechanisms import projected_gaussian, semi_dp_knorm
from invariantdp.sensitivity import HullNorm, contingency_sensitivity_space


def _best(fn, reps=3):
    best = np.inf
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def _hierarchy(n, rng):
    """Blocks in tracts (~100 blocks), counties (~20 tracts) and 50 states."""
    tract = np.sort(rng.integers(0, max(n // 100, 1), size=n))
    county = tract // 20
    state = county * 50 // (county.max() + 1)
    return [state, county, tract]


def bench_projected_gaussian(max_n: float) -> None:
    print("Projected Gaussian release with nested totals (state > county > tract)")
    print(
        f"{'n':>10} {'rank':>7} {'cold s':>7} {'ratio':>6} {'first s':>8} {'ratio':>6} "
        f"{'release s':>10} {'numpy normal s':>15} {'ratio':>7} "
        f"{'dense-SVD s':>12} {'SVD setup s':>12} {'speed-up':>9}"
    )
    rng = np.random.default_rng(0)
    n = 10_000
    while n <= max_n:
        levels = _hierarchy(n, rng)
        x = rng.integers(0, 1000, size=n).astype(float)

        def first(levels=levels, x=x):  # the group structure is built from the labels
            projected_gaussian(x, nested_totals(levels), mu=1.0, rng=1)

        t0 = time.perf_counter()
        first()
        t_cold = time.perf_counter() - t0
        t_first = _best(first)
        inv = nested_totals(levels)
        gen = np.random.default_rng(2)
        t_rel = _best(lambda inv=inv, x=x, gen=gen: projected_gaussian(x, inv, mu=1.0, rng=gen))
        t_raw = _best(lambda gen=gen, n=n: gen.standard_normal(n))
        k = inv.n_invariants
        dense_s = setup_s = speed = float("nan")
        if k * n <= 2e7:
            dense = Invariants(inv.matrix.toarray(), None, inv.shape)
            t0 = time.perf_counter()
            projected_gaussian(x, dense, mu=1.0, rng=1)  # includes the SVD of C
            setup_s = time.perf_counter() - t0
            dense_s = _best(
                lambda dense=dense, x=x, gen=gen: projected_gaussian(x, dense, mu=1.0, rng=gen)
            )
            speed = dense_s / t_rel
        print(
            f"{n:>10.0e} {inv.rank:>7} {t_cold:>7.3f} {t_cold / t_raw:>6.1f} {t_first:>8.3f} "
            f"{t_first / t_raw:>6.1f} {t_rel:>10.4f} {t_raw:>15.4f} {t_rel / t_raw:>7.2f} "
            f"{dense_s:>12.4f} {setup_s:>12.3f} {speed:>9.1f}"
        )
        n *= 10


def _cube_rate(K: HullNorm) -> float:
    return K.volume / float(np.prod(2.0 * K.cube))


def bench_knorm() -> None:
    print("\nSemi-DP K-norm mechanism, r x c tables with (r-1)(c-1) <= 9")
    print(
        f"{'table':>7} {'s':>3} {'simplices':>10} {'hull s':>8} {'release/s':>10} "
        f"{'draws/s':>10} {'cube accept':>12} {'cube draws/s':>13} {'ratio':>8}"
    )
    for r, c in [(2, 2), (2, 3), (3, 3), (2, 5), (3, 4), (2, 8), (3, 5), (4, 4), (2, 10)]:
        S = contingency_sensitivity_space(r, c)
        t0 = time.perf_counter()
        K = HullNorm.from_space(S)
        hull_s = time.perf_counter() - t0
        table = np.arange(1, r * c + 1).reshape(r, c) * 5
        gen = np.random.default_rng(0)
        calls = 200
        t0 = time.perf_counter()
        for _ in range(calls):
            semi_dp_knorm(table, epsilon=1.0, rng=gen)
        per_release = calls / (time.perf_counter() - t0)
        law = KNormNoise("polytope", r * c, 1.0, S)
        m = 20_000
        t_tri = _best(lambda law=law, gen=gen, m=m: law.rvs(size=m, random_state=gen))
        acc = _cube_rate(K)
        m_rej = 2000
        t_rej = _best(
            lambda law=law, gen=gen, m_rej=m_rej: law.rvs(
                size=m_rej, random_state=gen, method="rejection"
            ),
            reps=1,
        )
        tri_rate, rej_rate = m / t_tri, m_rej / t_rej
        n_simp = 2 if K.simplices is None else len(K.simplices)
        print(
            f"{r}x{c:<5} {K.dim:>3} {n_simp:>10} {hull_s:>8.2f} {per_release:>10.0f} "
            f"{tri_rate:>10.0f} {acc:>12.2e} {rej_rate:>13.0f} {tri_rate / rej_rate:>8.1f}"
        )


def _per_release(table, calls, **kw) -> float:
    gen = np.random.default_rng(0)
    t0 = time.perf_counter()
    for _ in range(calls):
        semi_dp_knorm(table, epsilon=1.0, rng=gen, **kw)
    return (time.perf_counter() - t0) / calls


def bench_knorm_polar() -> None:
    print("\nPolar K-norm sampler (issue 13), (r-1)(c-1) up to 16; ratio to a warm 4x4")
    print("triangulation release; directions and linear programmes per draw")
    semi_dp_knorm(np.ones((4, 4), dtype=int), epsilon=1.0, rng=0)  # builds the hull
    base = _per_release(np.arange(1, 17).reshape(4, 4), 200)
    print(f"  baseline: 4x4 triangulation release {base * 1e3:.2f} ms")
    print(
        f"{'table':>7} {'s':>3} {'method':>14} {'release ms':>11} {'ratio':>7} "
        f"{'dirs/draw':>10} {'LPs/draw':>9}"
    )
    cases = [(3, 3, "triangulation"), (3, 3, "polar"), (4, 4, "triangulation")]
    cases += [(4, 4, "polar"), (3, 6, "auto"), (2, 11, "auto"), (4, 5, "auto")]
    cases += [(3, 9, "auto"), (2, 17, "auto"), (5, 5, "auto")]
    for r, c, method in cases:
        table = np.arange(1, r * c + 1).reshape(r, c) * 5
        s = (r - 1) * (c - 1)
        calls = 200 if s <= 12 else 30
        per = _per_release(table, calls, method=method)
        dirs = lps = float("nan")
        if method != "triangulation":
            L = LPHullNorm.from_space(contingency_sensitivity_space(r, c))
            L.sample_uniform(calls, rng=1)
            dirs = L.last_call["directions"] / calls
            lps = L.last_call["linear_programmes"] / calls
        print(
            f"{r}x{c:<5} {s:>3} {method:>14} {per * 1e3:>11.2f} {per / base:>7.1f} "
            f"{dirs:>10.3g} {lps:>9.2f}"
        )


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-n", type=float, default=1e7)
    parser.add_argument("--skip-knorm", action="store_true")
    parser.add_argument(
        "--polar-only", action="store_true", help="only the polar K-norm sampler (issue 13)"
    )
    args = parser.parse_args(argv)
    if args.polar_only:
        bench_knorm_polar()
        return
    bench_projected_gaussian(args.max_n)
    if not args.skip_knorm:
        bench_knorm()
        bench_knorm_polar()


if __name__ == "__main__":
    main()

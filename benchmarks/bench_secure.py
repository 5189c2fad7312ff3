"""Secure draws per second, as ratios to baselines measured in the same run.

A secure release draws its noise from the operating system's CSPRNG with
constant work (issue 20): every cell runs the same fixed sequence of
vectorised integer operations on a fixed number of random words, whatever
noise it draws, so that the run time says nothing about the noise.  This
benchmark reports, per mechanism, secure cells per second in two regimes:

* ``vector``: one release of ``n`` cells (throughput, ``cells/s``);
* ``scalar``: one release per call of a single cell (latency, ``calls/s``),
  the regime of the timing attack.

Each figure is also given as a ratio to two baselines measured in the same
run: ``secrets.randbits(64)`` calls per second (``/randbits``: how many
64-bit CSPRNG reads one secure cell costs) and a simulated release of the
same mechanism (``secure=False``, numpy: ``/sim``).  Run it before and after
a change of the samplers to compare them.

Last, the cost of reading confidential data given as a Python list of ``n``
zeros whose first entry is 0, ``2**64 - 1`` or ``2**64`` (numpy's dtype
inference would build ``int64``, ``uint64`` or an object array), as ratios to
the list of zeros: one dtype policy makes the three cost the same (ratios
near 1), and ``time / np.asarray`` compares with ``np.asarray`` of the zeros.

Run: ``.venv/bin/python benchmarks/bench_secure.py [--n 20000] [--calls 2000]``
"""

from __future__ import annotations

import argparse
import secrets
import time

import numpy as np
import pandas as pd

from invariantdp._validation import read_confidential
from invariantdp.mechanisms import (
    discrete_gaussian_mechanism,
    discrete_laplace_mechanism,
    gaussian_mechanism,
    laplace_mechanism,
    odds_ratio_release,
    permutation_swap,
    tulap_mechanism,
)


def _rate(fn, units: int, min_time: float = 0.5) -> float:
    """Units per second of ``fn`` (best of repeated runs filling at least ``min_time``)."""
    best = np.inf
    spent = 0.0
    while spent < min_time:
        t0 = time.perf_counter()
        fn()
        dt = time.perf_counter() - t0
        best = min(best, dt)
        spent += dt
    return units / best


def _randbits_rate() -> float:
    k = 20_000

    def draw():
        for _ in range(k):
            secrets.randbits(64)

    return _rate(draw, k)


def _swap_frame(n: int) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    return pd.DataFrame(
        {
            "county": rng.integers(0, 10, n),
            "size": rng.integers(1, 6, n),
            "owned": rng.integers(0, 2, n),
        }
    )


def _cases(n: int):
    zeros_i = np.zeros(n, dtype=np.int64)
    zeros_f = np.zeros(n)
    frame = _swap_frame(n)
    # name: (vector release of n cells, scalar release of one cell, simulation of n cells)
    return {
        "discrete_laplace eps=1": (
            lambda: discrete_laplace_mechanism(zeros_i, epsilon=1.0, secure=True),
            lambda: discrete_laplace_mechanism(0, epsilon=1.0, secure=True),
            lambda: discrete_laplace_mechanism(zeros_i, epsilon=1.0, rng=1),
        ),
        "discrete_laplace eps=0.01": (
            lambda: discrete_laplace_mechanism(zeros_i, epsilon=0.01, secure=True),
            lambda: discrete_laplace_mechanism(0, epsilon=0.01, secure=True),
            lambda: discrete_laplace_mechanism(zeros_i, epsilon=0.01, rng=1),
        ),
        "discrete_gaussian rho=0.5": (
            lambda: discrete_gaussian_mechanism(zeros_i, rho=0.5, secure=True),
            lambda: discrete_gaussian_mechanism(0, rho=0.5, secure=True),
            lambda: discrete_gaussian_mechanism(zeros_i, rho=0.5, rng=1),
        ),
        "discrete_gaussian rho=1e-4": (
            lambda: discrete_gaussian_mechanism(zeros_i, rho=1e-4, secure=True),
            lambda: discrete_gaussian_mechanism(0, rho=1e-4, secure=True),
            lambda: discrete_gaussian_mechanism(zeros_i, rho=1e-4, rng=1),
        ),
        "tulap eps=1": (
            lambda: tulap_mechanism(zeros_f, epsilon=1.0, secure=True),
            lambda: tulap_mechanism(0.0, epsilon=1.0, secure=True),
            lambda: tulap_mechanism(zeros_f, epsilon=1.0, rng=1),
        ),
        "tulap eps=1 delta=0.01": (
            lambda: tulap_mechanism(zeros_f, epsilon=1.0, delta=0.01, secure=True),
            lambda: tulap_mechanism(0.0, epsilon=1.0, delta=0.01, secure=True),
            lambda: tulap_mechanism(zeros_f, epsilon=1.0, delta=0.01, rng=1),
        ),
        "laplace (grid) eps=1": (
            lambda: laplace_mechanism(zeros_f, epsilon=1.0, secure=True),
            lambda: laplace_mechanism(0.0, epsilon=1.0, secure=True),
            lambda: laplace_mechanism(zeros_f, epsilon=1.0, rng=1),
        ),
        "gaussian (grid) mu=1": (
            lambda: gaussian_mechanism(zeros_f, mu=1.0, secure=True),
            lambda: gaussian_mechanism(0.0, mu=1.0, secure=True),
            lambda: gaussian_mechanism(zeros_f, mu=1.0, rng=1),
        ),
        "odds_ratio_release eps=1": (
            None,
            lambda: odds_ratio_release([[12, 5], [4, 9]], epsilon=1.0, secure=True),
            None,
        ),
        "permutation_swap p=0.1": (
            lambda: permutation_swap(
                frame, swap="county", match="size", swap_rate=0.1, secure=True
            ),
            None,
            lambda: permutation_swap(frame, swap="county", match="size", swap_rate=0.1, rng=1),
        ),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=20_000, help="cells of a vector release")
    parser.add_argument("--calls", type=int, default=2000, help="scalar releases per timing")
    args = parser.parse_args()
    n, calls = args.n, args.calls
    base = _randbits_rate()
    print(f"baseline: secrets.randbits(64) {base:,.0f} calls/s")
    print(
        f"{'mechanism':<28} {'vector cells/s':>15} {'/randbits':>10} {'/sim':>8} "
        f"{'scalar calls/s':>15} {'/randbits':>10}"
    )
    for name, (vector, scalar, sim) in _cases(n).items():
        v = _rate(vector, n) if vector is not None else float("nan")
        s = _rate(sim, n) if sim is not None else float("nan")

        def many(scalar=scalar):
            for _ in range(calls):
                scalar()

        c = _rate(many, calls) if scalar is not None else float("nan")
        print(
            f"{name:<28} {v:>15,.0f} {v / base:>10.4f} {v / s:>8.4f} {c:>15,.0f} {c / base:>10.4f}"
        )
    _reading(n)


def _reading(n: int) -> None:
    """Reading a confidential list costs the same whatever its values."""
    lists = {first: [first] + [0] * (n - 1) for first in (0, 2**64 - 1, 2**64)}
    zeros = lists[0]
    base = _rate(lambda: read_confidential("x", zeros), n)
    numpy = _rate(lambda: np.asarray(zeros), n)
    print(f"reading a confidential list of {n:,} entries ({base:,.0f} entries/s):")
    for first, data in lists.items():
        r = _rate(lambda data=data: read_confidential("x", data), n)
        ratios = f"time / zeros {base / r:6.3f}   time / np.asarray {numpy / r:8.2f}"
        print(f"  first entry {first:<22} {ratios}")


if __name__ == "__main__":
    main()

"""The timing helper of the benchmark scripts (each runs alone: ``python benchmarks/x.py``)."""

from __future__ import annotations

import time


def clock(fn, repeat: int = 1):
    """``(seconds, result)``: the fastest of ``repeat`` runs (the machine may be shared)."""
    best, out = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out

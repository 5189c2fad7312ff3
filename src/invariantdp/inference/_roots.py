"""Root finding for monotone functions that float rounding can make flat."""

from __future__ import annotations

import numpy as np
from scipy import optimize

__all__ = ["bracketed_root"]


def bracketed_root(g, lo: float, hi: float, decreasing: bool) -> float:
    """Root of a monotone ``g`` seeded with ``[lo, hi]``.

    For tiny epsilon the noise quantile is so large (~log(1/alpha)/epsilon)
    that ``lo`` and ``hi`` round to within a few ulps and the float rounding
    of ``g`` can hide the sign change; the bracket then grows by ulps,
    doubling, until ``g`` changes sign.  The root is then resolved to the
    float spacing at its magnitude, which is all a double can hold.
    """
    sign = 1.0 if decreasing else -1.0  # sign * g >= 0 at lo, <= 0 at hi
    g_lo, g_hi = g(lo), g(hi)
    step = max(np.spacing(abs(lo)), np.spacing(abs(hi)), 1.0)
    for _ in range(1100):
        if sign * g_lo >= 0.0 >= sign * g_hi:
            break
        if sign * g_lo < 0.0:
            lo -= step
            g_lo = g(lo)
        if sign * g_hi > 0.0:
            hi += step
            g_hi = g(hi)
        step *= 2.0
    if g_lo == 0.0:
        return float(lo)
    if g_hi == 0.0:
        return float(hi)
    return optimize.brentq(g, lo, hi, xtol=1e-13, rtol=4 * np.finfo(float).eps, maxiter=500)

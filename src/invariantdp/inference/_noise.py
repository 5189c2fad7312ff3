"""The noise a DP test assumes, read through its noise family.

A test of a :class:`~invariantdp.Release` reads the noise through the
release's family (:meth:`NoiseFamily.tails
<invariantdp.families.NoiseFamily.tails>`), and a test given ``epsilon``,
``delta`` or ``noise`` builds the same view from them (the Tulap family's,
or any symmetric law's): a :class:`~invariantdp.families.NoiseTails`.  Here
are that resolution, the p-value sums over a lattice law (:func:`log_tail`)
and the checks the tests share.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
from scipy import optimize

from .._validation import InvariantDPError
from ..families import NoiseTails, noise_tails, tulap_tails
from ._logconcave_sums import log_expectation

__all__ = [
    "check_estimable",
    "log_point_tail",
    "log_tail",
    "release_tails",
    "resolve_noise",
    "solve_monotone",
    "warn_if_impossible",
]


def solve_monotone(g, increasing: bool, *, limit: float = np.inf, xtol: float = 1e-12) -> float:
    """Root of a monotone function ``g`` on the real line, or an infinite end.

    ``g`` must accept ``-inf`` and ``inf`` (its limits).  When ``g`` does not
    change sign the root is the end where ``g`` would cross (``-inf`` or
    ``inf``).  The bracket grows by doubling from ``[-1, 1]`` up to ``limit``.
    """
    sign = 1.0 if increasing else -1.0
    if g(-sign * np.inf) >= 0.0:
        return -sign * np.inf
    if g(sign * np.inf) <= 0.0:
        return sign * np.inf
    lo, hi = -1.0, 1.0
    g_lo, g_hi = g(lo), g(hi)
    while sign * g_lo > 0.0 and lo > -limit:
        lo = max(2.0 * lo, -limit)
        g_lo = g(lo)
    while sign * g_hi < 0.0 and hi < limit:
        hi = min(2.0 * hi, limit)
        g_hi = g(hi)
    if np.sign(g_lo) == np.sign(g_hi):  # crossing beyond the limit
        return lo if sign * g_lo > 0.0 else hi
    return optimize.brentq(g, lo, hi, xtol=xtol, rtol=xtol)


#: the median-unbiased estimate needs the p-value to vary at least this much
_MIN_PVALUE_RANGE = 1e-6


def check_estimable(p_low: float, p_high: float, noise: NoiseTails) -> None:
    """Refuse a median-unbiased estimate the p-value cannot resolve.

    ``p_low``, ``p_high`` are the "greater" p-values at the two ends of the
    parameter space.  For tiny epsilon both are ~1/2 and differ by ~epsilon
    times the range of the statistic; below 1e-6 the crossing of 1/2 is lost
    in the rounding of p-values near 1/2 and no estimate is returned.  (Ends
    both clearly above or below 1/2 give the estimate 0 or inf.)
    """
    spread = abs(p_high - p_low)
    near_half = (
        min(p_low, p_high) - _MIN_PVALUE_RANGE <= 0.5 <= max(p_low, p_high) + _MIN_PVALUE_RANGE
    )
    if near_half and not spread >= _MIN_PVALUE_RANGE:
        raise InvariantDPError(
            f"the p-value varies by only {spread:.2g} over the whole parameter space with "
            f"{noise.description} noise: the median-unbiased estimate (where it crosses 1/2) "
            "is not resolvable in double precision at this privacy level."
        )


def release_tails(release, epsilon, delta, noise, test: str) -> NoiseTails:
    """The test view of the noise recorded in ``release``, read through its family.

    A Release carries its noise law: a second one given by ``epsilon``,
    ``delta`` or ``noise`` is refused rather than silently preferred.
    """
    if epsilon is not None or noise is not None or delta not in (0, 0.0):
        raise InvariantDPError(
            "a Release carries its own noise law: do not also give `epsilon`, `delta` or `noise`."
        )
    family = release.noise.spec
    if family.tails_factory is None:
        raise InvariantDPError(
            f"the {test} needs Tulap (canonical) noise, or a noise family with a test view "
            f"(NoiseFamily.tails); the Release has {release.noise.family!r}."
        )
    return family.tails(release.noise.params, release.guarantee.params)


def resolve_noise(epsilon, delta, noise) -> NoiseTails:
    """The test view of the noise given by ``epsilon``/``delta`` or an explicit ``noise``.

    ``epsilon``/``delta`` give the Tulap CND of ``f_{epsilon,delta}``
    (:func:`~invariantdp.families._tulap_family.tulap_tails`); ``noise`` is
    viewed by :func:`~invariantdp.families.noise_tails`.
    """
    if noise is None:
        if epsilon is None:
            raise InvariantDPError("give `epsilon` (and `delta`), a `noise` law, or a Release.")
        return tulap_tails(epsilon, delta)
    if epsilon is not None:
        raise InvariantDPError("give either `epsilon`/`delta` or `noise`, not both.")
    return noise_tails(noise)


def log_tail(noise: NoiseTails, dist, u: float, side: str) -> float:
    """``log E F(H - u)`` ("greater") or ``log E F(u - H)`` ("less"), ``H ~ dist``.

    The p-value of the DP tests (Cho & Awan Eq. 6; Awan & Slavkovic 2018)
    as an expectation over a log-concave lattice law (see ``_lattice``).
    """
    sign = 1.0 if side == "greater" else -1.0
    return log_expectation(
        dist,
        lambda h: noise.logcdf_lattice(h, u, sign),
        lambda h: noise.cdf_lattice(h, u, sign),
        noise.cut(u, sign),
    )


def log_point_tail(noise: NoiseTails, h: float, u: float, side: str) -> float:
    """:func:`log_tail` for a law that puts all its mass on ``h``."""
    x = h - u if side == "greater" else u - h
    return float(noise.logcdf(np.array([x]))[0])


#: a released statistic this improbable given its support is most likely a wrong input
FAR_LOG_PROBABILITY = math.log(1e-12)


def warn_if_impossible(u: float, low: float, high: float, noise: NoiseTails, what: str) -> None:
    """Warn when the released ``u`` lies where the noise almost surely cannot take it.

    ``[low, high]`` is the support of the confidential statistic; the noise
    would have to exceed the distance to it, which has probability below
    1e-12 (``noise.logcdf`` of minus the distance: the noise is symmetric).
    The test's answer is then p = 0 or 1 and an infinite interval, exactly as
    the model says, but a wrong input (a count on another scale, the
    confidential value of another table) is the likelier explanation.
    """
    gap = max(low - u, u - high, 0.0)
    if gap > 0 and float(noise.logcdf(-gap)) < FAR_LOG_PROBABILITY:
        side = "below the smallest" if u < low else "above the largest"
        warnings.warn(
            f"the released statistic ({u:.6g}) is {gap:.6g} {side} possible {what} "
            f"([{low:g}, {high:g}]); noise that large has probability below 1e-12, so check "
            "the statistic and its margins or n: the test answers as if it were possible.",
            UserWarning,
            # the caller of the test, past the test and its renamed_keywords wrapper
            stacklevel=4,
        )

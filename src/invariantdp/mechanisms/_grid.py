r"""Exact arithmetic of the secure paths: sensitivities, grids and the zCDP calibration.

``laplace_mechanism`` / ``gaussian_mechanism`` with ``secure=True`` add exact
integer noise on a power-of-two grid ``gamma`` to the data rounded to that
grid (:mod:`invariantdp.mechanisms._additive`); the discrete mechanisms add it
to integer data (:mod:`invariantdp.mechanisms._integer_noise`).  Both need the
sensitivity as an exact rational (:func:`exact_norm`), the integer
sensitivity of the rounded data (:func:`grid_l1_sensitivity`,
:func:`grid_l2_sensitivity_sq`), the grid (:func:`grid_for`; the data are
clamped and rounded to it by :func:`._side_channels.secure_grid_index`), bounds on
the noise in grid units, and the largest
``rho`` whose zCDP implies a target (epsilon, delta) (:func:`zcdp_for`,
Canonne, Kamath & Steinke 2020, Corollary 13), and the exact noise of both
with constant work per cell (:func:`exact_laplace_noise`,
:func:`exact_gaussian_noise`).

References
----------
Canonne, Kamath & Steinke (2020), Algorithms 2-3, Theorem 4, Corollary 13;
Mironov (2012); Ghosh, Roughgarden & Sundararajan (2012).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from .._bounded_cache import bounded_cache
from .._validation import check_positive
from ..distributions import (
    GRID_RANGE,
    check_noise_scale,
    gaussian_plan,
    laplace_plan,
)
from ..exceptions import InvariantDPError
from ..privacy import zcdp_log_delta

__all__ = [
    "GRID_RULE",
    "MAX_EXACT_DATA",
    "changed_coordinates",
    "check_grid_noise",
    "exact_gaussian_noise",
    "exact_laplace_noise",
    "exact_norm",
    "grid_for",
    "grid_l1_sensitivity",
    "grid_l2_sensitivity_sq",
    "no_grid",
    "space_support",
    "sqrt_up",
    "zcdp_for",
    "zcdp_reference_epsilon",
]

#: data added to integer noise must satisfy |x| < 2**52, so that x + noise is exact
MAX_EXACT_DATA = 2.0**52
#: the rule of the secure grid mechanisms, recorded in their metadata
GRID_RULE = (
    "x clamped to |x| <= (2**52 - 1) * grid, then rounded to the nearest multiple of grid "
    "(ties to even)"
)
#: the default grid is 2**-20 of the noise scale (and of the per-coordinate
#: sensitivity), but never finer than 2**-40 of the noise scale
_GRID_BITS = 20
_GRID_FLOOR_BITS = 40


def _space(sensitivity) -> np.ndarray | None:
    return None if np.ndim(sensitivity) == 0 else np.asarray(sensitivity, dtype=float)


def exact_norm(sensitivity, p: int) -> Fraction:
    """The sensitivity as an exact rational: ``Delta_1``, or ``Delta_2**2`` for ``p = 2``.

    A number is taken at its exact binary value; for a space, the largest
    row norm is summed in exact arithmetic (a float sum may round down).
    """
    S = _space(sensitivity)
    if S is None:
        value = Fraction(float(sensitivity))
        return value if p == 1 else value * value
    if np.all(S == np.rint(S)) and np.abs(S).max() <= 2**20 and S.shape[1] <= 2**20:
        ints = np.abs(S).astype(np.int64)  # sums below 2**60: exact in int64
        return Fraction(int(np.max(np.sum(ints if p == 1 else ints * ints, axis=1))))
    rows = (
        sum((Fraction(float(v)) if p == 1 else Fraction(float(v)) ** 2 for v in np.abs(row)), 0)
        for row in S
    )
    return max(rows)


def changed_coordinates(sensitivity, d: int) -> int:
    """How many coordinates neighbours may differ in: ``d``, or the largest row support."""
    S = _space(sensitivity)
    return d if S is None else int(np.max(np.count_nonzero(S, axis=1)))


def space_support(sensitivity, d: int) -> dict:
    """``{"coordinates_changed": k}`` for a sensitivity space (its largest row support), else
    ``{}``: what a document records so that its guarantee can be checked against its noise."""
    return (
        {}
        if _space(sensitivity) is None
        else {"coordinates_changed": changed_coordinates(sensitivity, d)}
    )


def sqrt_up(x: Fraction) -> Fraction:
    """A rational upper bound on ``sqrt(x)``, within ``2**-64``."""
    return Fraction(math.isqrt(math.floor(x * 4**64)) + 1, 2**64)


def grid_l1_sensitivity(delta1: Fraction, gamma: float, m: int) -> int:
    """Integer l1 sensitivity of ``round(x / gamma)`` when ``x`` has l1 sensitivity ``delta1``.

    Rounding moves each coordinate by at most ``gamma / 2``, so neighbours'
    rounded values differ by at most ``|x_i - x'_i| / gamma + 1`` grid steps
    in each of the at most ``m`` coordinates that change: an integer vector
    of l1 norm at most ``delta1 / gamma + m``, hence ``floor(delta1 / gamma) + m``.
    """
    return math.floor(delta1 / Fraction(gamma)) + m


def grid_l2_sensitivity_sq(delta2_sq: Fraction, gamma: float, m: int) -> int:
    """Integer bound on the squared l2 sensitivity of ``round(x / gamma)``.

    As for l1, the rounded difference ``e`` has ``|e_i| <= |D_i| + 1`` on at
    most ``m`` coordinates (``D = (x - x') / gamma``), so
    ``||e||_2 <= ||D||_2 + sqrt(m)``; ``||e||_2**2`` is an integer, at most
    ``floor((Delta_2 / gamma + sqrt(m))**2)``, evaluated with rational upper
    bounds of the square roots.
    """
    d2 = delta2_sq / Fraction(gamma) ** 2
    return math.floor(d2 + 2 * sqrt_up(d2) * sqrt_up(Fraction(m)) + m)


def _pow2_floor(v: float) -> float:
    """The largest power of two ``<= v`` (``v`` positive and finite)."""
    return math.ldexp(0.5, math.frexp(v)[1])


def _check_grid(grid) -> float:
    g = check_positive("grid", grid)
    if math.frexp(g)[0] != 0.5:
        raise InvariantDPError(
            f"`grid` ({g!r}) must be a power of two (e.g. 2**-10), so that grid multiples "
            "of the data and noise are exact doubles."
        )
    if not GRID_RANGE[0] <= g <= GRID_RANGE[1]:
        raise InvariantDPError(f"`grid` ({g!r}) must be in [2**-960, 2**960].")
    return g


def grid_for(grid, scale: float, per_coordinate: float) -> float:
    """The grid ``gamma``: the user's, or ``2**-20`` of the noise scale and sensitivity.

    The default never depends on the data: it is the largest power of two
    below ``2**-20 min(scale, per_coordinate)`` (``per_coordinate`` is the
    sensitivity over the number of coordinates that may change, which keeps
    the rounding's share of the calibrated sensitivity below ``2**-20``),
    but at least ``2**-40`` of the scale, so that the noise in grid units
    stays below ``2**46``.
    """
    if grid is not None:
        return _check_grid(grid)
    fine = _pow2_floor(min(scale, per_coordinate)) * 2.0**-_GRID_BITS
    gamma = max(fine, _pow2_floor(scale) * 2.0**-_GRID_FLOOR_BITS)
    if not GRID_RANGE[0] <= gamma <= GRID_RANGE[1]:
        raise InvariantDPError(
            f"the noise scale ({scale:.6g}) is outside the range of the exact grid sampler "
            "(its grid 2**-20 * scale must be in [2**-960, 2**960])."
        )
    return gamma


def check_grid_noise(scale: Fraction, what: str) -> None:
    check_noise_scale(
        scale,
        f"the noise {what} in grid units",
        " to be added exactly: the rounding term (the number of coordinates) over the "
        "privacy parameter is too large; lower the number of coordinates, give a "
        "sensitivity space, or raise the privacy parameter.",
    )


def zcdp_reference_epsilon(rho: float) -> float:
    """The epsilon of the (epsilon, 1e-10)-DP that rho-zCDP implies (Bun & Steinke 2016).

    Where a zCDP release keeps the run time's share of delta below ``2**-64``
    (:func:`invariantdp.distributions._constant.precision`).
    """
    return rho + 2.0 * math.sqrt(rho * math.log(1e10))


@bounded_cache(maxsize=256)
def zcdp_for(epsilon: float, delta: float) -> float:
    """The largest rho (to 1e-9) whose zCDP implies (epsilon, delta)-DP by CKS Cor. 13.

    Found by root finding on ``log rho``; the result is then checked with a
    margin of 1e-9 in ``log delta`` (far above the rounding error of the
    bound), lowering rho until the check passes, so the stated
    (epsilon, delta) holds.  Cached: releases repeat their parameters.
    """
    from scipy.optimize import brentq

    target = math.log(delta)
    L = -target
    # Bun & Steinke's rho (epsilon = rho + 2 sqrt(rho L)) is valid and CKS is tighter
    simple = epsilon**2 / (math.sqrt(L + epsilon) + math.sqrt(L)) ** 2

    def excess(log_rho):
        return zcdp_log_delta(math.exp(log_rho), epsilon) - target

    lo = math.log(simple)
    while excess(lo) > 0:
        lo -= 1.0
    hi = lo + 1.0
    while excess(hi) <= 0:
        hi += 1.0
    rho = math.exp(brentq(excess, lo, hi, xtol=1e-12))
    while zcdp_log_delta(rho, epsilon) > target - 1e-9:
        rho *= 1.0 - 1e-8
    return rho


def exact_laplace_noise(t: Fraction, shape: tuple, gen, epsilon: float):
    """``(noise, tv)``: exact ``Lap_Z(t)`` noise of ``shape`` with constant work per cell.

    ``tv`` bounds the probability that the run time depended on the noise
    (:mod:`invariantdp.distributions._constant`), for a release at ``epsilon``.
    """
    n = math.prod(shape)
    plan = laplace_plan(t, epsilon, n)
    noise, _tail = plan.draw(gen, n)
    return noise.reshape(shape), n * plan.tv_per_draw()


def exact_gaussian_noise(sigma2: Fraction, shape: tuple, gen, epsilon: float):
    """``(noise, tv)``: exact ``N_Z(0, sigma2)`` noise of ``shape`` with constant-work trials.

    ``epsilon`` is where the run time's share of delta is kept below
    ``2**-64`` (e.g. the epsilon of the (epsilon, 1e-10)-DP that the zCDP
    implies).
    """
    n = math.prod(shape)
    plan = gaussian_plan(sigma2, epsilon, n)
    return plan.draw(gen, n).reshape(shape), n * plan.tv_per_draw()


def no_grid(grid) -> None:
    """Refuse a ``grid`` given to a simulation (it is used only by the exact sampler)."""
    if grid is not None:
        raise InvariantDPError(
            f"`grid` ({grid!r}) is used only by the secure path (exact grid sampling), not by "
            "a simulation (`rng` given or `secure=False`)."
        )

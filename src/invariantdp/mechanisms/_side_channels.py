r"""What a secure release may reveal besides its value: nothing about the data.

A release for publication (``secure=True``) keeps three rules, so that
neighbouring data sets cannot be told apart by anything but the value:

1. **Refusals are decided on public parameters.**  Whether a call releases
   or raises depends on the privacy parameters, the sensitivity, the grid or
   lattice and the shape only, checked before the data are read
   (:func:`public_shape`); the data are then mapped into the mechanism's
   declared domain by a rule that does not depend on them:

   * integer data (discrete Laplace and Gaussian): clamped to
     ``|x| <= 2**52 - 1`` (:func:`secure_integers`); data that are not
     whole numbers are outside the declared domain and refused as a whole;
   * grid data (``laplace`` / ``gaussian``): clamped to
     ``|x| <= (2**52 - 1) * grid`` before rounding to the grid
     (:func:`secure_grid_index`);
   * tables of counts (:func:`~invariantdp.mechanisms.odds_ratio_release`):
     non-negative whole numbers (otherwise refused as a whole), each cell
     clamped to ``2**51 - 1`` (:func:`secure_table`), so that every margin
     is an exact double;
   * lattice data (Tulap): rounded to the lattice ``sensitivity * Z`` by
     ``k = floor(x / sensitivity + 1/2)`` computed exactly, and clamped to
     ``|k| <= 2**51 - 1`` (:func:`secure_lattice_index`); neighbours with
     ``|x - x'| <= sensitivity`` get ``|k - k'| <= 1`` for every real ``x``.

   Clamping and this rounding are 1-Lipschitz, so they never widen the
   sensitivity.  No message raised on a secure path shows a data value
   (:func:`~invariantdp._validation.read_confidential`).
2. **The run time carries (almost) no information**: the samplers do the
   same work for every draw (:mod:`invariantdp.distributions._constant`),
   except on an event of probability ``timing_tv``; the guarantee recorded
   is the one of the pair (value, run time): :func:`timed_guarantee_params`
   adds ``(1 + e**epsilon) timing_tv`` to delta, or records ``timing_tv``
   with a zCDP guarantee (whose tradeoff function then shifts by it).
3. **The guarantee says what neighbours are**: its params record the
   ``sensitivity`` and the ``norm`` it is for in a structured adjacency
   (:func:`query_adjacency`), whose words are rendered from them.

References
----------
Jin, McMurtry, Rubinstein & Ohrimenko (2022), "Are we there yet? Timing and
floating-point attacks on differential privacy systems", IEEE S&P; Mironov
(2012), ACM CCS.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from .._validation import NOT_SHOWN, confidential_shape, read_confidential
from ..distributions import float_up, timing_delta
from ..exceptions import InvariantDPError
from ..privacy import QueryAdjacency

__all__ = [
    "INTEGER_LIMIT",
    "LATTICE_LIMIT",
    "TABLE_RULE",
    "VACUOUS_DELTA",
    "public_shape",
    "query_adjacency",
    "secure_grid_index",
    "secure_integers",
    "secure_lattice_index",
    "secure_table",
    "timed_guarantee_params",
]

#: integer data are clamped to |x| <= 2**52 - 1: x + noise stays an exact double
INTEGER_LIMIT = 2**52 - 1
#: lattice indices are clamped to |k| <= 2**51 - 1: k + G stays an exact double
LATTICE_LIMIT = 2**51 - 1
#: the largest delta a guarantee records (1 - 2**-53): a guarantee this weak is vacuous
VACUOUS_DELTA = 1.0 - 2.0**-53


def public_shape(x) -> tuple[int, ...]:
    """The shape of the data (public), read without looking at their values.

    The nesting of a list is read as Python objects
    (:func:`~invariantdp._validation.confidential_shape`), never through
    numpy's dtype inference, whose cost depends on the values.
    """
    shape = confidential_shape("x", x)
    if 0 in shape:
        raise InvariantDPError("`x` must not be empty.")
    return shape


def secure_integers(x) -> np.ndarray:
    """Integer data clamped to ``|x| <= 2**52 - 1``; non-integers refused without a value."""
    xv = read_confidential("x", x)
    if not np.all(xv == np.round(xv)):
        raise InvariantDPError(
            "`x` must be integer-valued for integer noise (the declared domain of the "
            f"mechanism: the whole call is refused); {NOT_SHOWN}. Round the data first."
        )
    return np.clip(xv, -INTEGER_LIMIT, INTEGER_LIMIT)


#: the data rule of a secure table of counts, recorded in its release's metadata
TABLE_RULE = (
    "table of non-negative whole-number counts (otherwise the call is refused as a whole), "
    "each cell clamped to 2**51 - 1"
)


def secure_table(name: str, table, shape: tuple[int, ...]) -> np.ndarray:
    """Counts of a table clamped to ``0 <= x <= 2**51 - 1`` (int64); refusals show no value.

    The shape is checked first (public); counts that are not non-negative
    whole numbers are outside the declared domain and refuse the call as a
    whole.  Clamping is 1-Lipschitz per cell (it never widens a
    sensitivity) and keeps every margin, at most ``4 (2**51 - 1)``, an
    exact double: nothing is refused for being large, so whether a call
    releases does not depend on the size of the counts.

    Examples
    --------
    >>> secure_table("table", [[2**53, 1], [0, 3]], (2, 2)).tolist()
    [[2251799813685247, 1], [0, 3]]
    """
    got = confidential_shape(name, table)
    if got != tuple(shape):
        raise InvariantDPError(f"`{name}` must have shape {tuple(shape)}, got {got}.")
    xv = read_confidential(name, table)
    if not (np.all(xv == np.round(xv)) and np.all(xv >= 0)):
        raise InvariantDPError(
            f"`{name}` must hold non-negative whole-number counts (the declared domain: the "
            f"whole call is refused); {NOT_SHOWN}."
        )
    return np.minimum(xv, float(LATTICE_LIMIT)).astype(np.int64)


def secure_grid_index(x, gamma: float) -> np.ndarray:
    """``round(x / gamma)`` (ties to even) of the data clamped to ``|x| <= (2**52 - 1) gamma``.

    ``gamma`` is a power of two, so ``x / gamma`` is exact; data below
    ``gamma / 4`` in magnitude are read as 0 first (they round to 0), which
    keeps subnormal quotients, and the processor's slow path on them, away.
    """
    xv = read_confidential("x", x)
    bound = INTEGER_LIMIT * gamma  # exact: an integer times a power of two
    xv = np.clip(np.where(np.abs(xv) < 0.25 * gamma, 0.0, xv), -bound, bound)
    return np.rint(xv / gamma).astype(np.int64)


# ---------------------------------------------------------------------------
# exact floor(x / step + 1/2): error-free transformations of doubles (Dekker, Knuth)
# ---------------------------------------------------------------------------

_SPLIT = 134217729.0  # 2**27 + 1


def _split(a):
    t = _SPLIT * a
    hi = t - (t - a)
    return hi, a - hi


def _below(x, c, step):
    """Whether ``x < c * step`` exactly (``c`` a half-integer, ``|c| <= 2**52``).

    ``c * step = p + e`` exactly (Dekker's product) and ``x - p = s + t``
    exactly (Knuth's sum).  If ``t != 0``, ``x - p`` was not exact, so ``x``
    and ``p`` are more than a factor 2 apart (Sterbenz) and ``|t - e| < |s|``:
    the sign is that of ``s``; if ``t == 0`` it is the sign of ``s - e``.
    """
    p = c * step
    ch, cl = _split(c)
    sh, sl = _split(step)
    e = ((ch * sh - p) + ch * sl + cl * sh) + cl * sl
    s = x - p
    bb = s - x
    t = (x - (s - bb)) + (-p - bb)
    return np.where(t != 0, s < 0, s < e)


def secure_lattice_index(x, step: float) -> np.ndarray:
    """``k = floor(x / step + 1/2)`` exactly, clamped to ``|k| <= 2**51 - 1`` (int64).

    ``x / step + 1/2`` is non-decreasing in ``x`` and grows by exactly 1
    when ``x`` grows by ``step``, so data ``|x - x'| <= step`` apart get
    ``|k - k'| <= 1`` for every real ``x`` (a floating-point quotient would
    break this at half-integers).  The float estimate is within one of ``k``
    and corrected by two exact comparisons (:func:`_below`), the same
    vectorised operations for every entry.  ``step`` must be in
    ``[2**-900, 2**900]`` (no underflow or overflow in the products).
    """
    xv = read_confidential("x", x)
    bound = float(LATTICE_LIMIT) * step
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        xv = np.clip(np.where(np.abs(xv) < 0.25 * step, 0.0, xv), -bound, bound)
        k = np.floor(xv / step + 0.5)
        k = k - _below(xv, k - 0.5, step)
        k = k + ~_below(xv, k + 0.5, step)
    return np.clip(k, -LATTICE_LIMIT, LATTICE_LIMIT).astype(np.int64)


# ---------------------------------------------------------------------------
# the guarantee of (value, run time), and the neighbours it is for
# ---------------------------------------------------------------------------


def timed_guarantee_params(definition: str, params: dict, tv: Fraction | float):
    """``(definition, params)`` of the pair (value, run time) of a secure release.

    ``tv`` bounds the total variation between the pair and a release whose
    run time is independent of everything (the constant-work samplers'
    slow paths).  An epsilon-DP or (epsilon, delta)-DP guarantee becomes
    (epsilon, delta + (1 + e**epsilon) tv)-DP, delta rounded up to a double
    (and capped at :data:`VACUOUS_DELTA`);
    a zCDP guarantee keeps ``rho`` and records ``timing_tv``, which its
    tradeoff function accounts for.  ``timing_tv`` is recorded in every case.
    """
    tv_up = float_up(Fraction(tv))
    out = dict(params)
    if definition in ("epsilon-DP", "(epsilon, delta)-DP"):
        extra = Fraction(timing_delta(out["epsilon"], tv_up))
        total = float_up(Fraction(out.get("delta", 0.0)) + extra)
        out["delta"] = min(total, VACUOUS_DELTA)
        definition = "(epsilon, delta)-DP"
    elif definition != "zCDP":
        raise InvariantDPError(f"no timing account for a {definition} guarantee.")
    out["timing_tv"] = tv_up
    return definition, out


def query_adjacency(norm: str, sensitivity: float, space: bool = False) -> QueryAdjacency:
    """The neighbours of an additive mechanism: its norm and sensitivity (words rendered)."""
    return QueryAdjacency(norm, float(sensitivity), space=bool(space))

"""Reading confidential data on a secure path: refusals that never show a value.

:func:`check_finite_array` echoes the offending value, which is right for a
simulation but not for a release for publication: an error message lands in
logs, notebooks and tracebacks.  :func:`read_confidential` reads the data of
a ``secure=True`` release with the same type rules and messages that name
the argument and the rule only, and saturates integers of any size instead
of refusing them (the mechanisms clamp their data to a declared range, a
rule that does not depend on the data).
"""

from __future__ import annotations

import decimal
import numbers

import numpy as np

from ..exceptions import InvariantDPError

__all__ = ["NOT_SHOWN", "read_confidential"]

#: how a secure-path message refers to the data it refuses
NOT_SHOWN = "the data are confidential (secure=True) and not shown"
#: integers are saturated here; every mechanism clamps far below
_SATURATE = 2**62
_TINY = 2.2250738585072014e-308  # the smallest normal double


def _entry(v) -> float:
    """One entry of an object array as a float, saturating huge integers and reals."""
    if isinstance(v, bool | np.bool_) or not isinstance(v, numbers.Real | decimal.Decimal):
        raise TypeError
    if isinstance(v, numbers.Integral):
        return float(max(-_SATURATE, min(_SATURATE, int(v))))
    try:
        return float(v)
    except OverflowError:  # a Fraction or Decimal beyond the double range
        return float(np.copysign(np.finfo(float).max, float(v > 0) - 0.5))
    except (ValueError, ArithmeticError):
        return float("nan")


def read_confidential(name: str, value) -> np.ndarray:
    """The data of a secure release as a new float64 array; refusals never show a value.

    Refused (``TypeError``): what is not an array of real numbers (strings,
    booleans, dates, complex numbers, ragged nestings); refused
    (:class:`~invariantdp.exceptions.InvariantDPError`): an empty array and
    non-finite entries.  Integers of any size are saturated at ``2**62`` and
    subnormal doubles read as 0 (so that no arithmetic on them runs the
    processor's slow path); the mechanism then maps the data into its
    declared domain.  Every message names ``name`` and the rule, never a value.

    Examples
    --------
    >>> read_confidential("x", [3, 2**80])
    array([3.00000000e+00, 4.61168602e+18])
    >>> read_confidential("x", [1.0, float("nan")])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    invariantdp.exceptions.InvariantDPError: `x` must contain only finite values; the data are ...
    """
    try:
        raw = value if isinstance(value, np.ndarray) else np.asarray(value)
    except (TypeError, ValueError, OverflowError, RecursionError):
        raise TypeError(
            f"`{name}` must be array-like of real numbers (a regular, non-ragged nesting); "
            f"{NOT_SHOWN}."
        ) from None
    kind = raw.dtype.kind
    if kind not in "iufO":
        raise TypeError(
            f"`{name}` must hold real numbers, got dtype {raw.dtype} (strings, booleans, dates "
            f"and complex numbers are refused); {NOT_SHOWN}."
        )
    if raw.size == 0:
        raise InvariantDPError(f"`{name}` must not be empty.")
    if kind == "i":
        arr = np.clip(raw, -_SATURATE, _SATURATE).astype(float)
    elif kind == "u":
        arr = np.minimum(raw, np.uint64(_SATURATE)).astype(float)
    elif kind == "f":
        with np.errstate(over="ignore"):  # longdouble beyond the double range -> inf
            arr = np.array(raw, dtype=float, copy=True)
    else:
        try:
            arr = np.array([_entry(v) for v in raw.reshape(-1).tolist()], dtype=float)
        except TypeError:
            raise TypeError(f"`{name}` must hold real numbers only; {NOT_SHOWN}.") from None
        arr = arr.reshape(raw.shape)
    if not np.isfinite(arr).all():
        raise InvariantDPError(f"`{name}` must contain only finite values; {NOT_SHOWN}.")
    return np.where(np.abs(arr) < _TINY, 0.0, arr)

"""Reading confidential data on a secure path: refusals that never show a value.

:func:`check_finite_array` echoes the offending value, which is right for a
simulation but not for a release for publication: an error message lands in
logs, notebooks and tracebacks.  :func:`read_confidential` reads the data of
a ``secure=True`` release with the same type rules and messages that name
the argument and the rule only, and saturates integers of any size instead
of refusing them (the mechanisms clamp their data to a declared range, a
rule that does not depend on the data).

One dtype policy, fixed before the values are looked at: an input that
declares its dtype (a numpy array, or anything with ``__array__``, such as a
pandas object) is read in that dtype; anything else (lists, tuples, scalars)
is read entry by entry as Python objects, never through numpy's dtype
inference, which picks ``uint64`` for ``[2**64 - 1, 0]`` and an object array
for ``[2**64, 0]`` and so makes the cost of reading the data depend on them.
"""

from __future__ import annotations

import decimal
import numbers

import numpy as np

from ..exceptions import InvariantDPError

__all__ = ["NOT_SHOWN", "confidential_shape", "read_confidential"]

#: how a secure-path message refers to the data it refuses
NOT_SHOWN = "the data are confidential (secure=True) and not shown"
#: integers are saturated here; every mechanism clamps far below
_SATURATE = 2**62
_TINY = 2.2250738585072014e-308  # the smallest normal double


def _entry(v) -> tuple[float, bool]:
    """``(value, is a real)`` of one entry that is neither a Python int nor a float."""
    if isinstance(v, bool | np.bool_) or not isinstance(v, numbers.Real | decimal.Decimal):
        return float("nan"), False
    if isinstance(v, numbers.Integral):
        return float(max(-_SATURATE, min(_SATURATE, int(v)))), True
    try:
        return float(v), True
    except OverflowError:  # a Fraction or Decimal beyond the double range
        return float(np.copysign(np.finfo(float).max, float(v > 0) - 0.5)), True
    except (ValueError, ArithmeticError):
        return float("nan"), True


_TYPE_OF = np.frompyfunc(type, 1, 1)
_ENTRIES = np.frompyfunc(_entry, 1, 2)


def _object_entries(name: str, raw: np.ndarray) -> np.ndarray:
    """Floats of an object array by one rule per entry type, whatever the values.

    Python ints (saturated at ``2**62``) and floats, the entries of a list of
    numbers, are converted by vectorised casts; other entries (numpy
    scalars, ``Fraction``, ``Decimal``) one by one.  Every entry is read
    before anything is refused.
    """
    flat = raw.reshape(-1)
    types = _TYPE_OF(flat)
    ints, floats = np.equal(types, int), np.equal(types, float)  # exact types, not subclasses
    other = ~(ints | floats)
    out = np.empty(flat.size, dtype=float)
    out[ints] = np.minimum(np.maximum(flat[ints], -_SATURATE), _SATURATE).astype(float)
    out[floats] = flat[floats].astype(float)
    ok = True
    if other.any():
        values, real = _ENTRIES(flat[other])
        out[other] = values.astype(float)
        ok = bool(real.astype(bool).all())
    if not ok:
        raise TypeError(f"`{name}` must hold real numbers only; {NOT_SHOWN}.")
    return out.reshape(raw.shape)


def _as_array(name: str, value) -> np.ndarray:
    """The data as an array whose dtype was fixed before any value was read."""
    if isinstance(value, np.ndarray):
        return value
    try:
        if hasattr(value, "__array__"):  # the container declares its dtype (pandas, arrays)
            return np.asarray(value)
        # a list or a scalar: Python objects, read entry by entry (no dtype inference)
        return np.array(value, dtype=object)
    except (TypeError, ValueError, OverflowError, RecursionError):
        raise TypeError(
            f"`{name}` must be array-like of real numbers (a regular, non-ragged nesting); "
            f"{NOT_SHOWN}."
        ) from None


def confidential_shape(name: str, value) -> tuple[int, ...]:
    """The shape of the data (public), by the dtype policy of :func:`read_confidential`.

    ``np.shape`` of a list runs numpy's dtype inference over the values;
    this reads the nesting only.
    """
    return tuple(int(s) for s in _as_array(name, value).shape)


def read_confidential(name: str, value) -> np.ndarray:
    """The data of a secure release as a new float64 array; refusals never show a value.

    Refused (``TypeError``): what is not an array of real numbers (strings,
    booleans, dates, complex numbers, ragged nestings); refused
    (:class:`~invariantdp.exceptions.InvariantDPError`): an empty array and
    non-finite entries.  Integers of any size are saturated at ``2**62`` and
    subnormal doubles read as 0 (so that no arithmetic on them runs the
    processor's slow path); the mechanism then maps the data into its
    declared domain.  Every message names ``name`` and the rule, never a value.

    The dtype is fixed before the values are read: a numpy array (or an
    object with ``__array__``, such as a pandas DataFrame) in its own dtype,
    anything else (a list, a scalar) entry by entry as Python numbers, so
    that ``[2**64, 0]``, ``[2**64 - 1, 0]`` and ``[0, 0]`` are read by the
    same operations and saturated by the same rule.

    Examples
    --------
    >>> read_confidential("x", [3, 2**80])
    array([3.00000000e+00, 4.61168602e+18])
    >>> read_confidential("x", [1.0, float("nan")])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    invariantdp.exceptions.InvariantDPError: `x` must contain only finite values; the data are ...
    """
    raw = _as_array(name, value)
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
        arr = _object_entries(name, raw)
    if not np.isfinite(arr).all():
        raise InvariantDPError(f"`{name}` must contain only finite values; {NOT_SHOWN}.")
    return np.where(np.abs(arr) < _TINY, 0.0, arr)

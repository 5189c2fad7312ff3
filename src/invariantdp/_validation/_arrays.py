"""Checks of array arguments: finite real arrays and non-negative integer counts.

Both refuse, rather than round or wrap, what a float64 or int64 cannot hold
exactly: integers above ``2**53`` in magnitude, ``uint64`` values above
``2**63``, totals of counts above ``2**53``; strings, dates and complex
numbers are refused with ``TypeError`` rather than parsed or truncated.
"""

from __future__ import annotations

import decimal
import math
import numbers
from fractions import Fraction

import numpy as np

from ..exceptions import InvariantDPError
from ._format import format_value
from ._scalars import _FLOAT_MAX, EXACT_INT


def _hidden(value) -> str:
    return "confidential: not shown"


def _as_raw_array(name: str, value, shown=format_value) -> np.ndarray:
    if isinstance(value, np.ndarray):
        return value
    try:
        return np.asarray(value)
    except (TypeError, ValueError, OverflowError, RecursionError):
        raise TypeError(
            f"`{name}` must be array-like of numbers (a regular, non-ragged nesting), "
            f"got {type(value).__name__} ({shown(value)})."
        ) from None


def _is_real_scalar(v) -> bool:
    return (
        isinstance(v, numbers.Real | decimal.Decimal)
        and not isinstance(v, bool | np.bool_)
        and not isinstance(v, np.complexfloating)
    )


def _check_object_entries(name: str, raw: np.ndarray, value) -> np.ndarray:
    """Float array from an object array of reals, refusing what a float cannot hold exactly.

    Python ints above 2**53 and Fractions or Decimals whose float differs from
    them while being that large are rounded by a float cast; they are refused.
    """
    flat = raw.reshape(-1)
    out = np.empty(flat.size, dtype=float)
    for i, v in enumerate(flat):
        if not _is_real_scalar(v):
            raise TypeError(
                f"`{name}` must be array-like of real numbers, got an entry of type "
                f"{type(v).__name__} ({format_value(v)})."
            )
        try:
            with np.errstate(over="ignore"):
                f = float(v)
        except OverflowError:
            raise InvariantDPError(
                f"`{name}` has an entry ({format_value(v)}) beyond the float range "
                f"(magnitude at most {_FLOAT_MAX:.6g})."
            ) from None
        except (ValueError, TypeError, ArithmeticError):
            raise InvariantDPError(
                f"`{name}` has an entry ({format_value(v)}) that is not a real number."
            ) from None
        if (
            math.isfinite(f)
            and abs(f) >= EXACT_INT  # 2**53 + 1 rounds down to 2**53
            and not isinstance(v, float | np.floating)
            and Fraction(f) != Fraction(v)
        ):
            raise InvariantDPError(
                f"`{name}` has an entry ({format_value(v)}) of magnitude above 2**53 that a "
                "float cannot hold exactly; integer data must be at most 2**53 in magnitude."
            )
        out[i] = f
    return out.reshape(raw.shape)


def _python_entries(raw: np.ndarray, value) -> np.ndarray | None:
    """The Python objects behind a float array numpy built from a list, if they may be inexact.

    ``np.asarray([2**53 + 1, 0.5])`` is a float64 array holding ``2**53``: the
    int was rounded silently.  When a float array built from a non-array holds
    magnitudes of 2**53 or more, return the original entries (an object array
    of the same shape) so that they can be checked exactly; otherwise None.
    """
    if raw.dtype.kind != "f" or isinstance(value, np.ndarray) or raw.size == 0:
        return None
    finite = np.isfinite(raw)
    if not np.any(np.abs(raw[finite]) >= EXACT_INT):
        return None
    obj = np.empty(raw.shape, dtype=object)
    try:
        obj[...] = value
    except (TypeError, ValueError):
        return None
    return obj


def check_finite_array(name: str, value, *, dtype=float, allow_bool: bool = False) -> np.ndarray:
    """Return a new array of ``dtype`` (never a view of the input) with only finite entries.

    Strings, bytes, dates, complex numbers and non-numeric objects are
    refused with ``TypeError`` rather than parsed or truncated
    (``np.array(["7"], dtype=float)`` would silently coerce, a complex array
    would lose its imaginary part); booleans too unless ``allow_bool``.
    Integer entries above ``2**53`` in magnitude are refused: a float cannot
    hold them exactly.  Python ints, ``Fraction`` and ``Decimal`` entries are
    accepted under the same rule.
    """
    raw = _as_raw_array(name, value)
    kind = raw.dtype.kind
    if kind == "c":
        raise TypeError(
            f"`{name}` must hold real numbers, got complex values (dtype {raw.dtype}, "
            f"{format_value(value)}); pass the real part explicitly if that is what you mean."
        )
    if kind in "USVMm" or (kind == "b" and not allow_bool):
        raise TypeError(
            f"`{name}` must be array-like of numbers, got {type(value).__name__} "
            f"of dtype {raw.dtype} ({format_value(value)})."
        )
    if kind == "O":
        arr = _check_object_entries(name, raw, value).astype(dtype, copy=False)
    else:
        if kind in "iu" and raw.size:
            if raw.max() > EXACT_INT or (kind == "i" and raw.min() < -EXACT_INT):
                raise InvariantDPError(
                    f"`{name}` ({format_value(value)}) has integer entries above 2**53 in "
                    "magnitude, which a float cannot hold exactly; integer data must be at "
                    "most 2**53 (9007199254740992) in magnitude."
                )
        else:
            obj = _python_entries(raw, value)
            if obj is not None:
                _check_object_entries(name, obj, value)
        try:
            with np.errstate(over="ignore"):  # longdouble beyond the float range -> inf
                arr = np.array(raw, dtype=dtype, copy=True)
        except (TypeError, ValueError, OverflowError):
            raise TypeError(
                f"`{name}` must be array-like of numbers, got {type(value).__name__}."
            ) from None
    if arr.size and not np.all(np.isfinite(arr)):
        raise InvariantDPError(f"`{name}` ({format_value(value)}) must contain only finite values.")
    return arr


def _int_entries_of_object(name: str, raw: np.ndarray, value, shown=format_value) -> np.ndarray:
    """Python-int array (dtype object) of the whole-number entries of an object array."""
    out = np.empty(raw.shape, dtype=object)
    flat_in, flat_out = raw.reshape(-1), out.reshape(-1)
    for i, v in enumerate(flat_in):
        if isinstance(v, numbers.Integral) and not isinstance(v, bool | np.bool_):
            flat_out[i] = int(v)
            continue
        if _is_real_scalar(v):
            try:
                exact = Fraction(v)
            except (ValueError, OverflowError, TypeError):
                exact = None
            if exact is None:
                raise InvariantDPError(
                    f"`{name}` ({shown(value)}) must contain only finite counts."
                )
            if exact.denominator != 1:
                raise InvariantDPError(
                    f"`{name}` ({shown(value)}) must contain whole-number counts."
                )
            flat_out[i] = int(exact)
            continue
        raise TypeError(
            f"`{name}` must hold integer counts, got an entry of type {type(v).__name__} "
            f"({shown(v)})."
        )
    return out


def check_counts(
    name: str, value, *, shape: tuple[int, ...] | None = None, confidential: bool = False
) -> np.ndarray:
    """Return non-negative integer counts as an ``int64`` array.

    Floats are accepted only when they are whole numbers (``3.0``); anything
    else (``2.5``, ``-1``, NaN, inf) is rejected rather than rounded.  The
    supported range: every count and the total of all counts at most
    ``2**53`` (9007199254740992), so that the margins computed from them in
    floating point are exact.  Unsigned 64-bit counts are compared before any
    conversion, so ``2**64 - 1`` is refused rather than wrapped to ``-1``.
    ``confidential=True`` (the data of a secure release) keeps every value
    out of the messages: they state the rule only.
    """
    shown = _hidden if confidential else format_value
    raw = _as_raw_array(name, value, shown)
    kind = raw.dtype.kind
    if kind not in "iufO":
        raise TypeError(
            f"`{name}` must hold integer counts, got dtype {raw.dtype} ({shown(value)})."
        )
    if shape is not None and raw.shape != tuple(shape):
        raise InvariantDPError(f"`{name}` must have shape {tuple(shape)}, got {raw.shape}.")
    obj = _python_entries(raw, value)
    if obj is not None and np.all(np.isfinite(raw)):
        raw, kind = obj, "O"  # read the Python ints themselves, not their float roundings
    if kind == "O":
        raw = _int_entries_of_object(name, raw, value)
    elif kind == "f":
        if not np.all(np.isfinite(raw)):
            raise InvariantDPError(f"`{name}` ({shown(value)}) must contain only finite counts.")
        if not np.all(raw == np.round(raw)):
            raise InvariantDPError(f"`{name}` ({shown(value)}) must contain whole-number counts.")
    if raw.size == 0:
        return np.zeros(raw.shape, dtype=np.int64)
    if kind != "u" and raw.min() < 0:
        raise InvariantDPError(f"`{name}` ({shown(value)}) must contain non-negative counts.")
    top = raw.max()
    if top > EXACT_INT:
        raise InvariantDPError(
            f"`{name}` ({shown(value)}) has counts above 2**53 (9007199254740992); "
            "counts and their total must be at most 2**53, the range in which floating-point "
            "sums such as the margins are exact."
        )
    # every partial sum (a margin) is at most the total, so one bound covers them all
    if int(top) * raw.size > EXACT_INT:
        total = sum(int(v) for v in raw.reshape(-1).tolist())
        if total > EXACT_INT:
            raise InvariantDPError(
                f"`{name}` ({shown(value)}) has a total count "
                f"{'' if confidential else f'of {format_value(total)}, '}"
                "above 2**53 (9007199254740992); counts and their total must be at most "
                "2**53, the range in which floating-point sums such as the margins are exact."
            )
    return raw.astype(np.int64, copy=True)


def check_not_table(name: str, value, release_with: str) -> None:
    """Refuse a table given where one released number is expected, saying how to release it.

    ``release_with`` is the call that releases the table (under
    ``invariantdp.``).  The message never shows the entries: a table given
    here is confidential data.

    Examples
    --------
    >>> check_not_table("statistic", 14.3, "mechanisms.odds_ratio_release(table, epsilon=...)")
    >>> check_not_table("statistic", [[1, 2], [3, 4]], "x()")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    TypeError: `statistic` must be the released value (a number) or a Release, got a 2 x 2 ...
    """
    try:
        shape = np.shape(value)
    except (ValueError, TypeError):  # ragged nesting: not a table either
        return
    if len(shape) == 2:
        raise TypeError(
            f"`{name}` must be the released value (a number) or a Release, got a "
            f"{shape[0]} x {shape[1]} table: release the confidential table first with "
            f"`invariantdp.{release_with}` and test that Release."
        )

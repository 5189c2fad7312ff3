"""Argument checking shared by the public functions.

Every check raises before any work is done, with a message that names the
argument, echoes the value and states the rule, e.g.
``ValueError: `epsilon` (-1.0) must be > 0.``
"""

from __future__ import annotations

import numbers
import operator

import numpy as np

from .exceptions import InvariantDPError

__all__ = [
    "InvariantDPError",
    "check_alternative",
    "check_confidence_level",
    "check_counts",
    "check_delta",
    "check_epsilon",
    "check_finite_array",
    "check_in_open_unit",
    "check_positive",
    "check_positive_int",
    "check_real",
]


def _fmt(value) -> str:
    if isinstance(value, np.ndarray) and value.size > 8:
        return f"array of shape {value.shape}"
    return repr(value) if isinstance(value, str) else f"{value}"


def check_real(name: str, value) -> float:
    """Return ``value`` as a Python float, rejecting non-reals and bools."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real | np.number):
        raise TypeError(f"`{name}` must be a real number, got {type(value).__name__} ({value!r}).")
    value = float(value)
    if np.isnan(value):
        raise InvariantDPError(f"`{name}` ({value}) must not be NaN.")
    return value


def check_positive(name: str, value, *, allow_inf: bool = False) -> float:
    """Return ``value`` as a float after checking it is > 0 (and finite)."""
    value = check_real(name, value)
    if not value > 0:
        raise InvariantDPError(f"`{name}` ({value}) must be > 0.")
    if not allow_inf and not np.isfinite(value):
        raise InvariantDPError(f"`{name}` ({value}) must be finite.")
    return value


def check_epsilon(value, name: str = "epsilon") -> float:
    """Privacy-loss parameter: a finite real > 0."""
    return check_positive(name, value)


def check_delta(value, name: str = "delta") -> float:
    """Failure probability: a real in [0, 1)."""
    value = check_real(name, value)
    if not 0.0 <= value < 1.0:
        raise InvariantDPError(f"`{name}` ({value}) must be in [0, 1).")
    return value


def check_in_open_unit(name: str, value) -> float:
    """A real in the open interval (0, 1), e.g. a level ``alpha``."""
    value = check_real(name, value)
    if not 0.0 < value < 1.0:
        raise InvariantDPError(f"`{name}` ({value}) must be in (0, 1).")
    return value


def check_confidence_level(value) -> float:
    return check_in_open_unit("confidence_level", value)


def check_positive_int(name: str, value, *, minimum: int = 1) -> int:
    """An integer >= ``minimum`` (integral floats such as ``3.0`` are rejected)."""
    if isinstance(value, bool):
        raise TypeError(f"`{name}` must be an integer, got bool ({value!r}).")
    try:
        out = operator.index(value)
    except TypeError:
        raise TypeError(
            f"`{name}` must be an integer, got {type(value).__name__} ({value!r})."
        ) from None
    if out < minimum:
        raise InvariantDPError(f"`{name}` ({out}) must be >= {minimum}.")
    return out


_ALTERNATIVES = ("two-sided", "less", "greater")


def check_alternative(value) -> str:
    if value not in _ALTERNATIVES:
        raise InvariantDPError(
            f"`alternative` ({value!r}) must be one of {', '.join(map(repr, _ALTERNATIVES))}."
        )
    return value


def check_finite_array(name: str, value, *, dtype=float) -> np.ndarray:
    """Return a new array (never a view of the input) with only finite entries.

    Strings, bytes, dates and non-numeric objects are refused rather than
    parsed (``np.array(["7"], dtype=float)`` would silently coerce).
    """
    raw = value if isinstance(value, np.ndarray) else None
    if raw is None:
        try:
            raw = np.asarray(value)
        except (TypeError, ValueError):
            raw = None
    if raw is not None and (
        raw.dtype.kind in "USVMm"
        or (
            raw.dtype.kind == "O"
            and not all(
                isinstance(v, numbers.Real | np.number) and not isinstance(v, bool)
                for v in raw.reshape(-1)
            )
        )
    ):
        raise TypeError(
            f"`{name}` must be array-like of numbers, got {type(value).__name__} "
            f"of dtype {raw.dtype} ({_fmt(value)})."
        )
    try:
        arr = np.array(value, dtype=dtype, copy=True)
    except (TypeError, ValueError):
        raise TypeError(
            f"`{name}` must be array-like of numbers, got {type(value).__name__}."
        ) from None
    if arr.size and not np.all(np.isfinite(arr)):
        raise InvariantDPError(f"`{name}` ({_fmt(value)}) must contain only finite values.")
    return arr


def check_counts(name: str, value, *, shape: tuple[int, ...] | None = None) -> np.ndarray:
    """Return non-negative integer counts as an ``int64`` array.

    Floats are accepted only when they are whole numbers (``3.0``); anything
    else (``2.5``, ``-1``, NaN, inf) is rejected rather than rounded.
    """
    raw = np.asarray(value)
    if raw.dtype == bool or raw.dtype.kind not in "iuf":
        raise TypeError(
            f"`{name}` must hold integer counts, got dtype {raw.dtype} ({_fmt(value)})."
        )
    if shape is not None and raw.shape != tuple(shape):
        raise InvariantDPError(f"`{name}` must have shape {tuple(shape)}, got {raw.shape}.")
    if raw.dtype.kind == "f":
        if not np.all(np.isfinite(raw)):
            raise InvariantDPError(f"`{name}` ({_fmt(value)}) must contain only finite counts.")
        if not np.all(raw == np.round(raw)):
            raise InvariantDPError(f"`{name}` ({_fmt(value)}) must contain whole-number counts.")
        if np.any(np.abs(raw) > 2.0**53):
            raise InvariantDPError(
                f"`{name}` ({_fmt(value)}) has counts above 2**53, which floats cannot hold "
                "exactly; pass integers."
            )
    if np.any(raw < 0):
        raise InvariantDPError(f"`{name}` ({_fmt(value)}) must contain non-negative counts.")
    return raw.astype(np.int64, copy=True)

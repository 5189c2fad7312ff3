"""Checks shared by the accounting modules: results that are finite doubles, lists of parameters.

Every accounting function returns a finite double or raises
:class:`~invariantdp.exceptions.InvariantDPError`: an ``inf`` or a privacy
parameter rounded to 0 would misstate the privacy loss.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Iterable
from fractions import Fraction

import numpy as np

from .._validation import InvariantDPError, check_positive, check_real

FLOAT_MAX = sys.float_info.max
#: log(FLOAT_MAX): an exponent above it overflows
LOG_FLOAT_MAX = math.log(FLOAT_MAX)


def _too_large(name: str, what: str) -> InvariantDPError:
    return InvariantDPError(
        f"{what} exceeds the largest double ({FLOAT_MAX:.6g}): `{name}` cannot be returned."
    )


def finite(name: str, value: float, what: str) -> float:
    """``value`` if it is a finite double, else a clear error (never ``inf``)."""
    if not math.isfinite(value):
        raise _too_large(name, what)
    return value


def positive(name: str, value: float, what: str) -> float:
    """``value`` if it is > 0: a privacy parameter that underflows to 0 would claim no loss."""
    finite(name, value, what)
    if not value > 0.0:
        raise InvariantDPError(
            f"{what} is below the smallest positive double: `{name}` would round to 0, which "
            "would understate the privacy loss."
        )
    return value


def exact_product(k: int, x: float, name: str, what: str) -> float:
    """``k * x`` for an integer ``k`` of any size, correctly rounded (no int -> float overflow)."""
    try:
        return finite(name, float(k * Fraction(x)), what)
    except OverflowError:
        raise _too_large(name, what) from None


def fsum(name: str, values, what: str) -> float:
    """``math.fsum(values)``, refused where it overflows."""
    try:
        return finite(name, math.fsum(values), what)
    except OverflowError:
        raise _too_large(name, what) from None


def as_list(name: str, values) -> list:
    """``values`` (an iterable or array of numbers, not a string) as a non-empty list."""
    if isinstance(values, str) or not isinstance(values, Iterable):
        raise TypeError(f"`{name}` must be an iterable of numbers, got {type(values).__name__}.")
    out = (
        list(np.asarray(values, dtype=object).ravel())
        if isinstance(values, np.ndarray)
        else list(values)
    )
    if not out:
        raise InvariantDPError(f"`{name}` ({values!r}) must not be empty.")
    return out


def positive_list(name: str, values) -> list[float]:
    """``values`` as floats, each > 0 and named ``name[i]`` in errors."""
    return [
        check_positive(f"{name}[{i}]", check_real(f"{name}[{i}]", v))
        for i, v in enumerate(as_list(name, values))
    ]

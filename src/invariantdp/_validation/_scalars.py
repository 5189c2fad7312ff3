"""Checks of scalar arguments: reals, privacy parameters, levels, integers, choices.

Each returns the value as a Python ``float``, ``int`` or ``str`` after
checking it, or raises ``TypeError`` (wrong type) or
:class:`~invariantdp.exceptions.InvariantDPError` (wrong value) with a message
that names the argument, echoes the value and states the rule.
"""

from __future__ import annotations

import decimal
import math
import numbers
import operator

import numpy as np

from ..exceptions import InvariantDPError
from ._format import format_value

#: floats hold every integer of magnitude up to 2**53 exactly, and no range beyond
EXACT_INT = 2**53
_FLOAT_MAX = float(np.finfo(float).max)
_FLOAT_TINY = float(np.finfo(float).tiny)  # smallest positive normal float


def _to_float(name: str, value) -> float:
    """``float(value)`` for a real number, with type and range errors that name ``name``."""
    if (
        isinstance(value, bool | np.bool_)
        or not isinstance(value, numbers.Real | decimal.Decimal)
        or isinstance(value, np.complexfloating)
    ):
        raise TypeError(
            f"`{name}` must be a real number, got {type(value).__name__} ({format_value(value)})."
        )
    try:
        with np.errstate(over="ignore"):  # np.longdouble beyond the float range -> inf
            return float(value)
    except OverflowError:
        raise InvariantDPError(
            f"`{name}` ({format_value(value)}) is outside the range of floats: it must have "
            f"magnitude at most {_FLOAT_MAX:.6g}."
        ) from None
    except (ValueError, TypeError, ArithmeticError):  # Decimal('sNaN') and the like
        raise InvariantDPError(
            f"`{name}` ({format_value(value)}) must be a real number representable as a float."
        ) from None


def check_real(name: str, value, *, finite: bool = False) -> float:
    """Return ``value`` as a Python float, rejecting non-reals, bools and NaN.

    ``finite=True`` also rejects infinities.  Values beyond the float range
    (``2**1100``, ``Fraction(10**400)``) are refused, not overflowed.
    """
    value = _to_float(name, value)
    if math.isnan(value):
        raise InvariantDPError(f"`{name}` ({value}) must not be NaN.")
    if finite and not math.isfinite(value):
        raise InvariantDPError(f"`{name}` ({value}) must be finite.")
    return value


def check_positive(name: str, value, *, allow_inf: bool = False, maximum=None) -> float:
    """Return ``value`` as a float after checking it is > 0 (and finite, and <= ``maximum``)."""
    value = check_real(name, value)
    if not value > 0:
        raise InvariantDPError(f"`{name}` ({value}) must be > 0.")
    if not allow_inf and not math.isfinite(value):
        raise InvariantDPError(f"`{name}` ({value}) must be finite.")
    if maximum is not None and value > maximum:
        raise InvariantDPError(f"`{name}` ({value}) must be in (0, {maximum:g}].")
    return value


def check_epsilon(value, name: str = "epsilon", *, maximum=None) -> float:
    """Privacy-loss parameter: a finite real, at least the smallest normal float.

    The supported range is ``[2.2250738585072014e-308, maximum]``
    (``maximum`` defaults to the largest float): below it ``1 / epsilon``
    overflows, so every noise scale would be infinite.
    """
    top = _FLOAT_MAX if maximum is None else maximum
    supported = f"the supported range [{_FLOAT_TINY!r}, {top:g}]"
    try:
        value = check_positive(name, value, maximum=maximum)
    except InvariantDPError as exc:
        raise InvariantDPError(f"{exc} {name.capitalize()} must lie in {supported}.") from None
    if value < _FLOAT_TINY:
        raise InvariantDPError(
            f"`{name}` ({value}) must be in {supported}: below the smallest normal float, "
            f"1/{name} overflows."
        )
    return value


def check_delta(value, name: str = "delta") -> float:
    """A real in [0, 1): a failure probability ``delta``, or Tulap's ``b`` or ``q``."""
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
    """``confidence_level``: a real in the open interval (0, 1)."""
    return check_in_open_unit("confidence_level", value)


def check_positive_int(name: str, value, *, minimum: int = 1, maximum: int | None = None) -> int:
    """An integer in ``[minimum, maximum]`` (integral floats such as ``3.0`` are rejected)."""
    if isinstance(value, bool | np.bool_):
        raise TypeError(f"`{name}` must be an integer, got bool ({value!r}).")
    try:
        out = operator.index(value)
    except TypeError:
        raise TypeError(
            f"`{name}` must be an integer, got {type(value).__name__} ({format_value(value)})."
        ) from None
    if out < minimum:
        raise InvariantDPError(f"`{name}` ({format_value(out)}) must be >= {minimum}.")
    if maximum is not None and out > maximum:
        raise InvariantDPError(f"`{name}` ({format_value(out)}) must be <= {maximum}.")
    return out


_ALTERNATIVES = ("two-sided", "less", "greater")


def check_alternative(value) -> str:
    """``alternative``: one of ``"two-sided"``, ``"less"``, ``"greater"`` (as in scipy.stats)."""
    if not isinstance(value, str):
        raise TypeError(
            f"`alternative` must be one of {', '.join(map(repr, _ALTERNATIVES))}, got "
            f"{type(value).__name__} ({format_value(value)})."
        )
    if value not in _ALTERNATIVES:
        raise InvariantDPError(
            f"`alternative` ({format_value(value)}) must be one of "
            f"{', '.join(map(repr, _ALTERNATIVES))}."
        )
    return value

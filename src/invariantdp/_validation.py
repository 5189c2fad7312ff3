"""Argument checking shared by the public functions.

Every check raises before any work is done, with a message that names the
argument, echoes the value and states the rule, e.g.
``ValueError: `epsilon` (-1.0) must be > 0.``  Echoed values go through
:func:`format_value`, which bounds their length (a 1 MB string gives a short
message).

Supported ranges
----------------
* Reals: anything a Python float holds (``numbers.Real`` including
  ``Fraction``, numpy integer and floating scalars, ``decimal.Decimal``).
  A Python int or ``Fraction`` beyond the float range (``2**1100``) is
  refused with the range, never left to overflow downstream.  Complex
  numbers (Python or numpy) and bools are refused with ``TypeError``.
* Privacy parameters (:func:`check_epsilon`): finite, and at least the
  smallest normal float ``2.2250738585072014e-308`` so that ``1 / epsilon``
  is finite.
* Real arrays (:func:`check_finite_array`): integer entries (numpy or
  Python) must have magnitude at most ``2**53``, below which a float holds
  every integer exactly; larger ones would be rounded silently.
* Counts (:func:`check_counts`): non-negative integers whose *total* is at
  most ``2**53``, so that every margin computed from them in floating point
  (the invariants) is exact.  ``uint64`` values are compared before any cast
  (``2**64 - 1`` never wraps to ``-1``).

The second half of the module holds the checks of JSON documents
(:func:`doc_object` and friends): they report the path of the offending field
(``noise.params.b``) and are used by :meth:`invariantdp.Release.from_dict` and
:meth:`invariantdp.Invariants.from_dict`.
"""

from __future__ import annotations

import copy
import decimal
import json
import math
import numbers
import operator
import reprlib
from fractions import Fraction

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
    "format_value",
    "freeze",
    "parse_json_document",
    "thaw",
]

#: floats hold every integer of magnitude up to 2**53 exactly, and no range beyond
EXACT_INT = 2**53
#: default limit on the length of a JSON document read by :func:`parse_json_document`
MAX_JSON_CHARS = 2**28
_FLOAT_MAX = float(np.finfo(float).max)
_FLOAT_TINY = float(np.finfo(float).tiny)  # smallest positive normal float

# ---------------------------------------------------------------------------
# echoing values in messages
# ---------------------------------------------------------------------------

_ECHO_LIMIT = 80


def _fmt_int(v: int) -> str:
    if abs(v) < 10**30:
        return str(v)
    bits = abs(v).bit_length()
    # log10 from the top 53 bits: str() of a 5000-digit int raises in Python >= 3.11
    top = abs(v) >> max(bits - 53, 0)
    log10 = math.log10(top) + max(bits - 53, 0) * math.log10(2.0)
    mant, expo = 10 ** (log10 % 1), int(log10)
    sign = "-" if v < 0 else ""
    return f"{sign}{mant:.3f}e+{expo:02d} (an integer of {bits} bits)"


class _Repr(reprlib.Repr):
    def __init__(self):
        super().__init__()
        self.maxlevel, self.maxlist, self.maxtuple, self.maxdict = 3, 6, 6, 4
        self.maxstring, self.maxother, self.maxlong = 40, 40, 40

    def repr_int(self, x, level):
        return _fmt_int(x)


_REPR = _Repr()


def format_value(value, limit: int = _ECHO_LIMIT) -> str:
    """``value`` as echoed in an error message: at most about ``limit`` characters.

    Strings and bytes are cut with their length stated, arrays of more than 8
    entries are described by shape and dtype, integers beyond ``10**30`` are
    written in scientific notation with their bit length, containers are
    abbreviated (:mod:`reprlib`).  Never raises.

    Examples
    --------
    >>> format_value("abc" * 10**5, limit=30)
    "'abcabcabcabcab'... (300000 characters)"
    >>> format_value(2**1100)
    '1.358e+331 (an integer of 1101 bits)'
    >>> format_value(np.zeros((30, 40)))
    'array of shape (30, 40) and dtype float64'
    """
    try:
        if isinstance(value, bool | np.bool_) or value is None:
            text = repr(bool(value)) if value is not None else "None"
        elif isinstance(value, int | np.integer):
            text = _fmt_int(int(value))
        elif isinstance(value, float | np.floating):
            text = str(float(value)) if isinstance(value, np.floating) else repr(value)
        elif isinstance(value, str | bytes | bytearray):
            cut = max(limit - 16, 8)
            text = repr(value[:cut])
            if len(value) > cut:
                unit = "characters" if isinstance(value, str) else "bytes"
                text += f"... ({len(value)} {unit})"
            return text
        elif isinstance(value, np.ndarray):
            if value.size > 8:
                text = f"array of shape {value.shape} and dtype {value.dtype}"
            else:  # one line, exact integers (tolist gives Python scalars)
                text = _REPR.repr(value.tolist())
        else:
            text = _REPR.repr(value)
    except Exception:  # an echo must never fail: a broken __repr__ is not our error
        text = f"<{type(value).__name__} object>"
    if len(text) > limit:
        text = text[: limit - 3] + "..."
    return text


# ---------------------------------------------------------------------------
# scalars
# ---------------------------------------------------------------------------


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


# ---------------------------------------------------------------------------
# arrays
# ---------------------------------------------------------------------------


def _as_raw_array(name: str, value) -> np.ndarray:
    if isinstance(value, np.ndarray):
        return value
    try:
        return np.asarray(value)
    except (TypeError, ValueError, OverflowError, RecursionError):
        raise TypeError(
            f"`{name}` must be array-like of numbers (a regular, non-ragged nesting), "
            f"got {type(value).__name__} ({format_value(value)})."
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


def _int_entries_of_object(name: str, raw: np.ndarray, value) -> np.ndarray:
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
                    f"`{name}` ({format_value(value)}) must contain only finite counts."
                )
            if exact.denominator != 1:
                raise InvariantDPError(
                    f"`{name}` ({format_value(value)}) must contain whole-number counts."
                )
            flat_out[i] = int(exact)
            continue
        raise TypeError(
            f"`{name}` must hold integer counts, got an entry of type {type(v).__name__} "
            f"({format_value(v)})."
        )
    return out


def check_counts(name: str, value, *, shape: tuple[int, ...] | None = None) -> np.ndarray:
    """Return non-negative integer counts as an ``int64`` array.

    Floats are accepted only when they are whole numbers (``3.0``); anything
    else (``2.5``, ``-1``, NaN, inf) is rejected rather than rounded.  The
    supported range: every count and the total of all counts at most
    ``2**53`` (9007199254740992), so that the margins computed from them in
    floating point are exact.  Unsigned 64-bit counts are compared before any
    conversion, so ``2**64 - 1`` is refused rather than wrapped to ``-1``.
    """
    raw = _as_raw_array(name, value)
    kind = raw.dtype.kind
    if kind not in "iufO":
        raise TypeError(
            f"`{name}` must hold integer counts, got dtype {raw.dtype} ({format_value(value)})."
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
            raise InvariantDPError(
                f"`{name}` ({format_value(value)}) must contain only finite counts."
            )
        if not np.all(raw == np.round(raw)):
            raise InvariantDPError(
                f"`{name}` ({format_value(value)}) must contain whole-number counts."
            )
    if raw.size == 0:
        return np.zeros(raw.shape, dtype=np.int64)
    if kind != "u" and raw.min() < 0:
        raise InvariantDPError(
            f"`{name}` ({format_value(value)}) must contain non-negative counts."
        )
    top = raw.max()
    if top > EXACT_INT:
        raise InvariantDPError(
            f"`{name}` ({format_value(value)}) has counts above 2**53 (9007199254740992); "
            "counts and their total must be at most 2**53, the range in which floating-point "
            "sums such as the margins are exact."
        )
    # every partial sum (a margin) is at most the total, so one bound covers them all
    if int(top) * raw.size > EXACT_INT:
        total = sum(int(v) for v in raw.reshape(-1).tolist())
        if total > EXACT_INT:
            raise InvariantDPError(
                f"`{name}` ({format_value(value)}) has a total count of {format_value(total)}, "
                "above 2**53 (9007199254740992); counts and their total must be at most "
                "2**53, the range in which floating-point sums such as the margins are exact."
            )
    return raw.astype(np.int64, copy=True)


# ---------------------------------------------------------------------------
# immutable JSON-like containers (for data a release or a cache hands out)
# ---------------------------------------------------------------------------


def _read_only(*_args, **_kwargs):
    raise TypeError("this object is read-only: it belongs to a release or a shared cache.")


class FrozenDict(dict):
    """A ``dict`` that refuses mutation (JSON-serialisable, picklable, deep-copyable)."""

    __slots__ = ()
    __setitem__ = __delitem__ = __ior__ = _read_only
    clear = pop = popitem = setdefault = update = _read_only

    def __reduce__(self):
        return (type(self), (dict(self),))

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return type(self)(copy.deepcopy(dict(self), memo))


class FrozenList(list):
    """A ``list`` that refuses mutation (JSON-serialisable, picklable, deep-copyable)."""

    __slots__ = ()
    __setitem__ = __delitem__ = __iadd__ = __imul__ = _read_only
    append = extend = insert = pop = remove = clear = sort = reverse = _read_only

    def __reduce__(self):
        return (type(self), (list(self),))

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return type(self)(copy.deepcopy(list(self), memo))


def freeze(obj, _depth: int = 0):
    """A deep, immutable copy of a JSON-like object.

    Dicts become :class:`FrozenDict`, lists and tuples :class:`FrozenList`,
    arrays read-only copies, numpy scalars Python scalars; strings and
    numbers are kept.  Used for the parameters and metadata of a release and
    for cached structures, so that nothing handed out can be changed behind
    the owner's back.
    """
    if _depth > 100:
        raise InvariantDPError("a release field is nested more than 100 levels deep.")
    if isinstance(obj, FrozenDict | FrozenList):
        return obj
    if isinstance(obj, dict):
        return FrozenDict({k: freeze(v, _depth + 1) for k, v in obj.items()})
    if isinstance(obj, list | tuple):
        if _only_scalars(obj):  # the common long case (labels, data): one C-level copy
            return FrozenList(obj)
        return FrozenList(freeze(v, _depth + 1) for v in obj)
    if isinstance(obj, np.ndarray):
        out = np.array(obj, copy=True)
        out.setflags(write=False)
        return out
    if isinstance(obj, np.generic) and obj.dtype.kind in "biuf":
        return obj.item()
    return obj


def thaw(obj):
    """A plain, mutable deep copy of a :func:`freeze` result (dicts and lists)."""
    if isinstance(obj, dict):
        return {k: thaw(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return list(obj) if _only_scalars(obj) else [thaw(v) for v in obj]
    return obj


_SCALAR_TYPES = (str, int, float, type(None))


def _only_scalars(seq) -> bool:
    """True if every entry is a str, int, float, bool or None (checked by type set)."""
    return all(issubclass(t, _SCALAR_TYPES) for t in set(map(type, seq)))


# ---------------------------------------------------------------------------
# JSON documents: every error names the path of the field
# ---------------------------------------------------------------------------


def doc_path(path: str, key) -> str:
    """``path.key`` for a key, ``path[i]`` for an index."""
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else str(key)


def _type_name(v) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, str):
        return "string"
    if isinstance(v, dict):
        return "object"
    if isinstance(v, list | tuple):
        return "array"
    if isinstance(v, int | float):
        return "number"
    return type(v).__name__


def doc_error(path: str, value, rule: str) -> InvariantDPError:
    """The error for field ``path`` holding ``value`` that breaks ``rule``."""
    return InvariantDPError(f"`{path}` ({format_value(value)}) {rule}")


def doc_object(path: str, value, *, required=(), optional=(), extra: bool = False) -> dict:
    """Check a JSON object with the ``required`` keys, some ``optional`` ones and no others."""
    if not isinstance(value, dict):
        raise doc_error(path, value, f"must be a JSON object, got {_type_name(value)}.")
    for key in value:
        if not isinstance(key, str):
            raise doc_error(path, value, f"must have string keys, got {format_value(key)}.")
    missing = [k for k in required if k not in value]
    if missing:
        where = f"`{path}`" if path else "the document"
        raise InvariantDPError(
            f"{where} is missing the required key(s) {', '.join(map(repr, missing))}."
        )
    if not extra:
        allowed = set(required) | set(optional)
        unknown = [k for k in value if k not in allowed]
        if unknown:
            where = f"`{path}`" if path else "the document"
            raise InvariantDPError(
                f"{where} has unknown key(s) {format_value(unknown)}; the allowed keys are "
                f"{', '.join(map(repr, sorted(allowed)))}."
            )
    return value


def doc_str(path: str, value, *, choices=None, max_length: int | None = None) -> str:
    if not isinstance(value, str):
        raise doc_error(path, value, f"must be a string, got {_type_name(value)}.")
    if choices is not None and value not in choices:
        raise doc_error(path, value, f"must be one of {', '.join(map(repr, choices))}.")
    if max_length is not None and len(value) > max_length:
        raise doc_error(path, value, f"must have at most {max_length} characters.")
    return value


def doc_int(path: str, value, *, minimum=None, maximum=None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise doc_error(path, value, f"must be an integer, got {_type_name(value)}.")
    if minimum is not None and value < minimum:
        raise doc_error(path, value, f"must be >= {minimum}.")
    if maximum is not None and value > maximum:
        raise doc_error(path, value, f"must be <= {maximum}.")
    return int(value)


def doc_number(path: str, value, *, low=None, high=None, low_open=False, high_open=False) -> float:
    """A finite JSON number in the interval given by ``low``, ``high`` and their openness."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise doc_error(path, value, f"must be a number, got {_type_name(value)}.")
    if isinstance(value, int) and abs(value) > EXACT_INT:
        raise doc_error(
            path, value, "must be a number a float holds exactly (integers up to 2**53)."
        )
    out = float(value)
    if not math.isfinite(out):
        raise doc_error(path, value, "must be a finite number.")
    below = low is not None and (out <= low if low_open else out < low)
    above = high is not None and (out >= high if high_open else out > high)
    if below or above:
        left = "(" if low_open else "["
        right = ")" if high_open else "]"
        lo = "-inf" if low is None else f"{low:g}"
        hi = "inf" if high is None else f"{high:g}"
        if high is None:
            rule = f"must be {'>' if low_open else '>='} {lo}."
        else:
            rule = f"must be in {left}{lo}, {hi}{right}."
        raise doc_error(path, value, rule)
    return out


def doc_list(path: str, value, *, min_length: int = 0, max_length: int | None = None) -> list:
    if not isinstance(value, list | tuple):
        raise doc_error(path, value, f"must be a JSON array, got {_type_name(value)}.")
    if len(value) < min_length:
        raise doc_error(path, value, f"must have at least {min_length} entries.")
    if max_length is not None and len(value) > max_length:
        raise doc_error(path, value, f"must have at most {max_length} entries, got {len(value)}.")
    return value


def doc_shape(path: str, value, *, max_cells: int, max_ndim: int = 32, minimum: int = 0) -> tuple:
    """A list of at most ``max_ndim`` integers >= ``minimum``, product at most ``max_cells``."""
    doc_list(path, value, max_length=max_ndim)
    dims = tuple(doc_int(doc_path(path, i), s, minimum=minimum) for i, s in enumerate(value))
    cells = math.prod(dims)
    if cells > max_cells:
        raise doc_error(
            path, value, f"has {format_value(cells)} cells; at most {max_cells} are allowed."
        )
    return dims


def doc_numbers(path: str, value, *, integer: bool = False, length: int | None = None) -> list:
    """A flat list of finite JSON numbers (integers only if ``integer``).

    Integers in a float list must be at most 2**53 in magnitude (a float holds
    them exactly).  Checked by type set, so a long list costs one C-level pass.
    """
    doc_list(path, value)
    if length is not None and len(value) != length:
        raise doc_error(path, value, f"must have {length} entries, got {len(value)}.")
    types = set(map(type, value))
    for t in types:
        ok = (
            issubclass(t, int) and t is not bool
            if integer
            else ((issubclass(t, int) and t is not bool) or issubclass(t, float))
        )
        if not ok:
            i = next(j for j, v in enumerate(value) if type(v) is t)
            want = "an integer" if integer else "a number"
            raise doc_error(
                doc_path(path, i), value[i], f"must be {want}, got {_type_name(value[i])}."
            )
    if integer or not value:
        return value
    if any(issubclass(t, int) for t in types):  # ints in a float list: exact up to 2**53
        bad = [i for i, v in enumerate(value) if isinstance(v, int) and abs(v) > EXACT_INT]
        if bad:
            raise doc_error(
                doc_path(path, bad[0]),
                value[bad[0]],
                "must be a number a float holds exactly (integers up to 2**53 in magnitude).",
            )
    finite = np.isfinite(np.array(value, dtype=float))
    if not finite.all():
        i = int(np.argmin(finite))
        raise doc_error(doc_path(path, i), value[i], "must be a finite number.")
    return value


def doc_nested(path: str, value, shape: tuple) -> list:
    """Flatten a nested list of the exact ``shape`` (C order), checking every level.

    Iterative, so a deep nesting cannot exhaust the stack; the leaves are
    returned unchecked.
    """
    level = [value]
    paths = [path]
    for depth, size in enumerate(shape):
        nxt, nxt_paths = [], []
        for p, item in zip(paths, level, strict=True):
            if not isinstance(item, list | tuple):
                raise doc_error(
                    p,
                    item,
                    f"must be a JSON array (level {depth} of shape {list(shape)}), "
                    f"got {_type_name(item)}.",
                )
            if len(item) != size:
                raise doc_error(
                    p, item, f"must have {size} entries (shape {list(shape)}), got {len(item)}."
                )
            nxt.extend(item)
            if depth + 1 < len(shape):
                nxt_paths.extend(doc_path(p, i) for i in range(size))
        level = nxt
        paths = nxt_paths
    return level


def doc_json_value(path: str, value, *, max_depth: int, budget: list) -> None:
    """Check free-form JSON: objects with string keys, arrays, strings, finite numbers,
    booleans and null, nested at most ``max_depth`` deep.

    ``budget`` is a one-element list holding the number of nodes still
    allowed; it is decremented (iterative walk, no recursion).
    """
    stack = [(path, value, 0)]
    while stack:
        p, v, depth = stack.pop()
        budget[0] -= 1
        if budget[0] < 0:
            raise InvariantDPError(f"`{p}`: the document has too many entries.")
        if depth > max_depth:
            raise InvariantDPError(f"`{p}` is nested more than {max_depth} levels deep.")
        if v is None or isinstance(v, bool | str):
            continue
        if isinstance(v, int):
            continue
        if isinstance(v, float):
            if not math.isfinite(v):
                raise doc_error(p, v, "must be a finite number.")
            continue
        if isinstance(v, dict):
            for k, item in v.items():
                if not isinstance(k, str):
                    raise doc_error(p, v, f"must have string keys, got {format_value(k)}.")
                stack.append((doc_path(p, k), item, depth + 1))
            continue
        if isinstance(v, list | tuple):
            if len(v) > budget[0]:
                raise InvariantDPError(f"`{p}`: the document has too many entries.")
            stack.extend((doc_path(p, i), item, depth + 1) for i, item in enumerate(v))
            continue
        raise doc_error(p, v, f"must be a JSON value, got {type(v).__name__}.")


def _reject_constant(name):
    raise InvariantDPError(
        f"the document holds {name}, which strict JSON (RFC 8259) does not allow."
    )


def _unique_keys(pairs):
    out = dict(pairs)
    if len(out) != len(pairs):
        seen = set()
        dup = next(k for k, _ in pairs if k in seen or seen.add(k))
        raise InvariantDPError(f"the document gives the key {format_value(dup)} twice.")
    return out


def parse_json_document(text, max_bytes: int = MAX_JSON_CHARS):
    """Parse strict JSON (RFC 8259) of bounded size, with value errors only.

    Refused, as ``InvariantDPError``: text longer than ``max_bytes``
    characters (before parsing), the ``NaN``/``Infinity`` tokens, duplicate
    keys, nesting deep enough to exhaust the parser, integers of more than
    4300 digits and malformed text.  Numbers that overflow a float (``1e999``)
    parse as ``inf`` and are left to the schema, which refuses them with the
    path of their field.  A non-string ``text`` is a ``TypeError``.
    """
    if not isinstance(text, str | bytes | bytearray):
        raise TypeError(f"`text` must be a JSON string, got {type(text).__name__}.")
    if len(text) > max_bytes:
        raise InvariantDPError(
            f"the document has {len(text)} characters; at most {max_bytes} are allowed "
            "(`max_bytes`)."
        )
    try:
        return json.loads(text, parse_constant=_reject_constant, object_pairs_hook=_unique_keys)
    except InvariantDPError:
        raise
    except RecursionError:
        raise InvariantDPError("the document is nested too deeply to be read.") from None
    except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError, over-long integers
        raise InvariantDPError(
            f"the document is not valid JSON: {format_value(str(exc), 200)}"
        ) from None

"""Checks of JSON documents: every error names the path of the offending field.

The ``doc_*`` checks report the field as ``noise.params.b`` or
``invariants.values[3]`` and are used by :meth:`invariantdp.Release.from_dict`
and :meth:`invariantdp.Invariants.from_dict`; :func:`parse_json_document`
reads strict JSON (RFC 8259) of bounded size with value errors only.
"""

from __future__ import annotations

import json
import math

import numpy as np

from ..exceptions import InvariantDPError
from ._format import format_value
from ._scalars import EXACT_INT

#: default limit on the length of a JSON document read by :func:`parse_json_document`
MAX_JSON_CHARS = 2**28


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
    """A JSON string, one of ``choices`` if given, of at most ``max_length`` characters."""
    if not isinstance(value, str):
        raise doc_error(path, value, f"must be a string, got {_type_name(value)}.")
    if choices is not None and value not in choices:
        raise doc_error(path, value, f"must be one of {', '.join(map(repr, choices))}.")
    if max_length is not None and len(value) > max_length:
        raise doc_error(path, value, f"must have at most {max_length} characters.")
    return value


def doc_int(path: str, value, *, minimum=None, maximum=None) -> int:
    """A JSON integer (not a boolean, not an integral float) in ``[minimum, maximum]``."""
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


def doc_positive(path: str, value) -> float:
    """A finite JSON number ``> 0`` (a scale, a standard deviation, ``mu``, ``rho``)."""
    return doc_number(path, value, low=0.0, low_open=True)


def doc_probability(path: str, value, *, open_low: bool = False, open_high: bool = True) -> float:
    """A JSON number in the unit interval, ``[0, 1)`` by default (``delta``, ``b``, ``q``)."""
    return doc_number(path, value, low=0.0, high=1.0, low_open=open_low, high_open=open_high)


def doc_open_unit(path: str, value) -> float:
    """A JSON number in the open interval ``(0, 1)`` (a swap rate)."""
    return doc_probability(path, value, open_low=True, open_high=True)


def doc_list(path: str, value, *, min_length: int = 0, max_length: int | None = None) -> list:
    """A JSON array with between ``min_length`` and ``max_length`` entries."""
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

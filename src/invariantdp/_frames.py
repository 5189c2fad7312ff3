"""Microdata frames: argument checks for columns and codes of cross-classifications.

Shared by the swapping mechanism (:mod:`invariantdp.mechanisms._permutation_swap`) and
its privacy accounting (:mod:`invariantdp.privacy._swapping_epsilon`), which both take
a pandas or Dask DataFrame and names of its columns.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .exceptions import InvariantDPError

__all__ = [
    "CHUNK",
    "DENSE_SPACE",
    "as_columns",
    "check_columns",
    "check_frame",
    "dense_codes",
    "factorize",
    "first_positions",
    "group_codes",
    "narrowest",
    "remap",
]


def as_columns(value) -> list:
    """A column name or a sequence of names as a list (``None`` is no column)."""
    if value is None:
        return []
    if isinstance(value, str) or not isinstance(value, list | tuple | pd.Index | np.ndarray):
        return [value]
    return list(value)


def check_frame(data) -> str:
    """Return ``"pandas"`` or ``"dask"``; raise for anything else or an empty frame.

    Examples
    --------
    >>> import pandas as pd
    >>> check_frame(pd.DataFrame({"a": [1]}))
    'pandas'
    """
    if isinstance(data, pd.DataFrame):
        kind = "pandas"
    else:
        try:
            import dask.dataframe as dd
        except ImportError:  # pragma: no cover - depends on the install
            dd = None
        if dd is not None and isinstance(data, dd.DataFrame):
            kind = "dask"
        else:
            raise TypeError(
                f"`data` must be a pandas or Dask DataFrame, got {type(data).__name__}."
            )
    if len(data.columns) == 0:
        raise InvariantDPError("`data` must have at least one column, got none.")
    if not data.columns.is_unique:
        dup = data.columns[data.columns.duplicated()][0]
        raise InvariantDPError(f"`data` has the column {dup!r} more than once.")
    if kind == "pandas" and len(data) == 0:
        raise InvariantDPError("`data` must hold at least one record, got an empty DataFrame.")
    return kind


def check_columns(name: str, cols: list, data) -> list:
    """``cols`` if they are distinct columns of ``data``; the error names the argument ``name``."""
    if len(set(map(repr, cols))) != len(cols):
        raise InvariantDPError(f"`{name}` ({cols!r}) names a column more than once.")
    unknown = [c for c in cols if c not in data.columns]
    if unknown:
        raise InvariantDPError(
            f"`{name}` names unknown column(s) {unknown!r}; the columns of `data` are "
            f"{list(data.columns)!r}."
        )
    return cols


#: key spaces up to this size (or 4 keys per record) are coded by counting, not hashing
DENSE_SPACE = 2**22

#: records handled at a time by the chunked passes (their temporaries stay in the cache)
CHUNK = 1 << 16


def dense_codes(keys: np.ndarray, space: int, *, counts: bool = False, out=None) -> tuple:
    """``(codes, uniques, lookup)`` of integer keys in ``[0, space)`` by counting, O(n + space).

    The codes follow the sorted order of the keys, like ``pd.factorize(keys,
    sort=True)``; ``lookup[key]`` is the code of any key present.  Hashing
    ten million keys takes a second; counting them, a tenth of that.  With
    ``counts=True`` the number of keys of each code comes fourth (counted in
    the same pass).  ``out`` (an int64 array of the keys' size, ``keys``
    itself allowed) receives the codes instead of a new array.

    Examples
    --------
    >>> import numpy as np
    >>> codes, uniq, lookup = dense_codes(np.array([7, 2, 7, 5]), 8)
    >>> codes.tolist(), uniq.tolist(), int(lookup[5])
    ([2, 0, 2, 1], [2, 5, 7], 1)
    >>> dense_codes(np.array([7, 2, 7, 5]), 8, counts=True)[3].tolist()
    [1, 1, 2]
    """
    lookup, uniques, tally = _count_keys(keys, space, counts)
    codes = lookup[keys] if out is None else remap(lookup, keys, out)
    return (codes, uniques, lookup, tally) if counts else (codes, uniques, lookup)


def _count_keys(keys: np.ndarray, space: int, counts: bool) -> tuple:
    """``(lookup, uniques, counts or None)`` of integer keys in ``[0, space)``."""
    if counts:
        per_key = np.bincount(keys, minlength=space)
        present = per_key > 0
    else:
        present = np.zeros(space, dtype=bool)
        present[keys] = True
    lookup = np.cumsum(present, dtype=np.int64)
    lookup -= 1
    return lookup, np.flatnonzero(present), per_key[present] if counts else None


def narrowest(size: int) -> np.dtype:
    """The narrowest signed integer type that holds the codes ``0 .. size - 1``.

    Examples
    --------
    >>> narrowest(7), narrowest(200_000)
    (dtype('int8'), dtype('int32'))
    """
    for dtype in (np.int8, np.int16, np.int32):
        if size <= np.iinfo(dtype).max:
            return np.dtype(dtype)
    return np.dtype(np.int64)


def remap(lookup: np.ndarray, keys: np.ndarray, out: np.ndarray) -> np.ndarray:
    """``out[:] = lookup[keys]`` chunk by chunk, so ``out`` may be ``keys`` itself.

    Ten million codes then need no second array of ten million (and no
    memory the process has to be given afresh).

    Examples
    --------
    >>> import numpy as np
    >>> keys = np.array([3, 0, 3])
    >>> remap(np.array([5, 6, 7, 8]), keys, keys).tolist()
    [8, 5, 8]
    """
    for start in range(0, keys.size, CHUNK):
        part = slice(start, start + CHUNK)
        out[part] = lookup.take(keys[part])
    return out


def small_int_range(values, n: int):
    """``(keys, low, size)`` for integer values spanning at most DENSE_SPACE, else None.

    ``keys = values - low`` as int64 (shifting in a narrow dtype would wrap),
    ready for :func:`dense_codes`.  Values from ``low >= 0`` up are counted
    from 0 instead (``low`` is then 0) when that at most doubles ``size``:
    an int64 column (as read from a CSV) such as household sizes 1-7 is then
    ``keys`` itself, to be read, never written.
    """
    dtype = getattr(values, "dtype", None)
    if not isinstance(dtype, np.dtype) or dtype.kind not in "iu" or n == 0:
        return None  # pandas nullable and object columns go through hashing
    a = np.asarray(values)
    low, high = int(a.min()), int(a.max())
    if high - low + 1 > max(DENSE_SPACE, 4 * n) or high >= 2**63:  # int64 holds the keys
        return None
    if 0 <= low <= high - low + 1:
        low = 0
    keys = a.astype(np.int64, copy=False)
    if low:
        if keys is a:
            keys = keys - low
        else:
            keys -= low  # a copy of ours already
    return keys, low, high - low + 1


def factorize(values, *, narrow: bool = False) -> tuple[np.ndarray, int]:
    """Codes ``0..G-1`` of ``values`` in sorted order (first appearance if unorderable).

    Missing values are a category of their own.  Integer columns of a small
    range are coded by counting (:func:`dense_codes`), anything else by
    hashing (``pandas.factorize``); the codes are the same.  They are int64,
    or with ``narrow=True`` of the :func:`narrowest` type that holds them
    (written there directly when counted).
    """
    small = small_int_range(values, len(values))
    if small is not None:
        keys, _, size = small
        lookup, uniques, _ = _count_keys(keys, size, False)
        if narrow:
            out = np.empty(keys.size, dtype=narrowest(uniques.size))
        elif np.may_share_memory(keys, np.asarray(values)):
            out = np.empty(keys.size, dtype=np.int64)
        else:  # shifted keys are a new array of ours: the codes are written over them
            out = keys
        return remap(lookup, keys, out), uniques.size
    try:
        codes, uniques = pd.factorize(values, sort=True, use_na_sentinel=False)
    except TypeError:  # unorderable mixed values: order of first appearance
        codes, uniques = pd.factorize(values, sort=False, use_na_sentinel=False)
    dtype = narrowest(len(uniques)) if narrow else np.int64
    return codes.astype(dtype, copy=False), len(uniques)


def group_codes(df: pd.DataFrame, cols: list, *, narrow: bool = False) -> tuple[np.ndarray, int]:
    """Codes ``0..G-1`` of the cross-classification of ``cols`` (lexicographic order).

    With no column every record is in one group.  The codes are int64, or
    of the :func:`narrowest` type that holds them with ``narrow=True``.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"a": [2, 1, 2], "b": ["x", "y", "x"]})
    >>> codes, size = group_codes(df, ["a", "b"])
    >>> codes.tolist(), size
    ([1, 0, 1], 2)
    """
    n = len(df)
    if not cols:
        return np.zeros(n, dtype=narrowest(1) if narrow else np.int64), int(n > 0)
    if len(cols) == 1:
        return factorize(df[cols[0]], narrow=narrow)
    codes, size = factorize(df[cols[0]])
    for c in cols[1:]:
        cc, nc = factorize(df[c])
        if size * nc >= 2**62:
            codes, size = factorize(codes)
        codes = codes * nc + cc
        size = size * nc
    return factorize(codes, narrow=narrow)


def first_positions(codes: np.ndarray, size: int, *, read_all: bool = False) -> np.ndarray:
    """The position of the first record of each code ``0..size-1`` (each must occur).

    Reads the records in chunks that double in length and stops once every
    code has been seen: a few strata are found in the first chunk, 200,000
    blocks in a quarter of ten million records.  ``read_all=True`` reads
    every record (a run time that does not tell where the last code first
    appears).

    Examples
    --------
    >>> import numpy as np
    >>> first_positions(np.array([2, 0, 2, 1, 0]), 3).tolist()
    [1, 3, 0]
    """
    n = codes.size
    first = np.full(size, n, dtype=np.int64)
    start, step = 0, CHUNK
    while start < n:
        stop = min(n, start + step)
        np.minimum.at(first, codes[start:stop], np.arange(start, stop))  # the earliest wins
        if not read_all and not (first == n).any():
            break
        start, step = stop, 2 * step
    return first

"""Microdata frames: argument checks for columns and codes of cross-classifications.

Shared by the swapping mechanism (:mod:`invariantdp.mechanisms.swapping`) and
its privacy accounting (:mod:`invariantdp.privacy.swapping`), which both take
a pandas or Dask DataFrame and names of its columns.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .exceptions import InvariantDPError

__all__ = ["as_columns", "check_columns", "check_frame", "factorize", "group_codes"]


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


def factorize(values) -> tuple[np.ndarray, int]:
    """Codes ``0..G-1`` of ``values`` in sorted order (first appearance if unorderable).

    Missing values are a category of their own.
    """
    try:
        codes, uniques = pd.factorize(values, sort=True, use_na_sentinel=False)
    except TypeError:  # unorderable mixed values: order of first appearance
        codes, uniques = pd.factorize(values, sort=False, use_na_sentinel=False)
    return codes.astype(np.int64, copy=False), len(uniques)


def group_codes(df: pd.DataFrame, cols: list) -> tuple[np.ndarray, int]:
    """Codes ``0..G-1`` of the cross-classification of ``cols`` (lexicographic order).

    With no column every record is in one group.

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
        return np.zeros(n, dtype=np.int64), int(n > 0)
    codes, size = factorize(df[cols[0]])
    for c in cols[1:]:
        cc, nc = factorize(df[c])
        if size * nc >= 2**62:
            codes, size = factorize(codes)
        codes = codes * nc + cc
        size = size * nc
    if len(cols) > 1:
        codes, size = factorize(codes)
    return codes, size

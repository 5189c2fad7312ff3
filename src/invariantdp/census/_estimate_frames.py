"""The estimate frame of GLS estimates, and the checks of the units it reports.

One construction of the frame :meth:`GLSEstimate.estimate` and
:meth:`PartsEstimate.estimate` return, so that a file read whole and one
solved in parts give the same columns and ``attrs``; the intervals of a
solve in parts are Gaussian (it keeps no exact law of the errors).

References
----------
Cumings-Menon & Zhuravlev (2024), "Least squares estimation for hierarchical
data", arXiv:2404.13164 (the estimates and variances the frame reports).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from .._estimates import estimate_columns, negative_count
from .._validation import check_confidence_level, format_value
from ..exceptions import InvariantDPError

__all__ = ["UNIDENTIFIED", "check_geocodes", "estimate_frame"]

#: the note of a cell no measurement or invariant identifies
UNIDENTIFIED = "not estimable: no measurement or invariant identifies this cell"


def check_geocodes(geocodes) -> np.ndarray:
    """The geocodes to report, checked: a string or a list of distinct strings.

    A geocode is text: an integer is refused (its leading zeros, which
    geocodes keep, would be lost), as are an empty list and a unit listed
    twice.

    Returns
    -------
    numpy.ndarray
        The geocodes (object dtype), in the order given.

    Examples
    --------
    >>> check_geocodes("11").tolist()
    ['11']
    >>> check_geocodes(["12", "11"]).tolist()
    ['12', '11']
    """
    if isinstance(geocodes, str):
        geocodes = [geocodes]
    elif not hasattr(geocodes, "__iter__"):
        raise InvariantDPError(
            f"`geocodes` ({format_value(geocodes)}) must be a geocode or a list of geocodes."
        )
    codes = list(geocodes)
    if not codes:
        raise InvariantDPError("`geocodes` must name at least one unit.")
    for code in codes:
        if not isinstance(code, str):
            raise TypeError(
                f"`geocodes` holds {format_value(code)} ({type(code).__name__}): a geocode is a "
                "string (its leading zeros count), e.g. '01'."
            )
    seen = pd.Index(codes)
    if seen.has_duplicates:
        raise InvariantDPError(
            f"`geocodes` lists the unit {seen[seen.duplicated()][0]!r} twice: list each once."
        )
    return np.asarray(codes, dtype=object)


def estimate_frame(
    keys: dict,
    est,
    var,
    cells: pd.DataFrame,
    confidence_level,
    reasons,
    lattice=None,
    *,
    rows=None,
    clip=False,
):
    """The estimate frame of units' estimates ``est`` and variances ``var`` (units x cells).

    Parameters
    ----------
    keys : dict
        The key columns (``{"geocode": codes}``), one value per unit.
    est, var : numpy.ndarray
        Shape ``(units, cells)``; a cell whose variance is not finite is not
        estimable (its numbers NaN, its ``note`` the unit's ``reasons``).
    cells : pandas.DataFrame
        One row per cell, its label columns.
    confidence_level : float
        In (0, 1).
    reasons : sequence of str
        Per unit, why a cell without a finite variance is not estimable.
    lattice : callable, optional
        ``lattice(cl, var) -> (half, coverage, how)``: interval half-widths
        from the noise's exact law; default the Gaussian ``z * std_error``.
    rows : numpy.ndarray, optional
        The positions of the units to keep (default all).
    clip : bool
        Floor the estimates and interval ends at 0 (display only).

    Returns
    -------
    pandas.DataFrame
        The key columns, the cells' labels, then ``estimate``, ``std_error``,
        ``moe``, ``ci_lower``, ``ci_upper``, ``note``; ``attrs`` hold
        ``confidence_level``, per row ``interval`` (its method) and
        ``coverage``, ``negative`` (negative estimates) and ``clipped``.

    Examples
    --------
    >>> import numpy as np
    >>> import pandas as pd
    >>> df = estimate_frame({"geocode": ["11", "12"]}, np.array([[3.0], [-1.0]]),
    ...                     np.array([[4.0], [4.0]]), pd.DataFrame(index=[0]), 0.95, ["", ""])
    >>> df[["geocode", "estimate", "std_error"]].to_numpy().tolist()
    [['11', 3.0, 2.0], ['12', -1.0, 2.0]]
    >>> df.attrs["interval"], df.attrs["negative"]
    (['gaussian', 'gaussian'], 1)
    """
    cl = check_confidence_level(confidence_level)
    z = stats.norm.ppf(0.5 + cl / 2.0)
    est = np.asarray(est, dtype=float)
    var = np.asarray(var, dtype=float)
    ok = np.isfinite(var)
    se = np.where(ok, np.sqrt(np.where(ok, np.maximum(var, 0.0), 0.0)), np.nan)
    est = np.where(ok, est, np.nan)
    n, c = est.shape
    if lattice is None:
        half = z * se
        how = np.full((n, c), "gaussian", dtype=object)
        coverage = np.full((n, c), cl)
    else:
        half, coverage, how = lattice(cl, var)
        # rounding of the GLS (relative 1e-13) must not drop an integer sitting on an end
        half = half + 1e-10 * (1.0 + np.abs(np.where(ok, est, 0.0)) + half)
    half = np.where(ok, half, np.nan)
    note = np.where(ok, None, np.repeat(np.asarray(reasons, dtype=object), c).reshape(n, c))
    keys = {k: np.asarray(v, dtype=object) for k, v in keys.items()}
    if rows is not None:
        est, se, half, ok, note = est[rows], se[rows], half[rows], ok[rows], note[rows]
        how, coverage = np.asarray(how)[rows], np.asarray(coverage)[rows]
        keys = {k: v[rows] for k, v in keys.items()}
        n = len(rows)
    out = pd.DataFrame({k: np.repeat(v, c) for k, v in keys.items()})
    for name in cells.columns:
        out[name] = np.tile(cells[name].to_numpy(), n)
    cols = estimate_columns(est.ravel(), se.ravel(), half.ravel(), note.ravel(), clip=clip)
    for name, col in cols.items():
        out[name] = col
    out.attrs["confidence_level"] = cl
    out.attrs["interval"] = np.where(ok, how, "not estimable").reshape(-1).tolist()
    # plain lists: attrs travel into Parquet and JSON metadata
    out.attrs["coverage"] = np.where(ok, coverage, np.nan).reshape(-1).astype(float).tolist()
    out.attrs["negative"] = negative_count(est)
    out.attrs["clipped"] = clip
    return out

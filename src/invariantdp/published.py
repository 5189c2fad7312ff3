r"""From what an agency publishes to a :class:`~invariantdp.Release`.

An analyst does not run the mechanism: the agency publishes noisy values
(with their labels), the law of the noise (e.g. discrete Gaussian noise of a
stated variance, or a zCDP budget ``rho`` and the query's sensitivity) and
the invariants published exactly (totals, margins; readable constructors in
:mod:`invariantdp.invariants`: :func:`~invariantdp.invariants.grand_total`,
:func:`~invariantdp.invariants.group_totals`).  :func:`from_published`
(also :meth:`Release.from_published <invariantdp.Release.from_published>`)
builds the release every inference function of the package takes;
:func:`read_published` reads the long format agencies use (one row per
geography x query cell with its noisy count and its variance or ``rho``; the
rows published exactly, variance 0 or ``rho`` infinite, are the invariants).

The noise law is given in the agency's terms and converted exactly:

* ``discrete_gaussian`` and ``gaussian``: ``variance`` (``sigma**2``) or
  ``sigma``; or ``rho`` with the query's L2 ``sensitivity``, giving
  ``sigma**2 = sensitivity**2 / (2 rho)`` (Canonne, Kamath & Steinke 2020,
  Thm. 14; Bun & Steinke 2016, Prop. 1.6).  With the sensitivity the release
  records rho-zCDP, ``rho = sensitivity**2 / (2 sigma**2)``.
* ``discrete_laplace`` and ``laplace``: ``scale``; or ``epsilon`` with the
  query's L1 ``sensitivity``, giving ``scale = sensitivity / epsilon``.  With
  the sensitivity the release records epsilon-DP.
* ``projected_gaussian`` and ``extended_gaussian``: as the Gaussian, with the
  invariants the noise keeps (``invariants=``).
* ``tulap``: ``epsilon`` (and ``delta``), giving ``b, q`` of
  :func:`~invariantdp.distributions.tulap_params`; the release records
  (epsilon, delta)-DP.
* any family: its own parameters (e.g. ``b`` and ``q`` of the Tulap law), or
  a ready :class:`~invariantdp.release.NoiseLaw` as ``noise``.

Without the sensitivity, the noise law is still exact (every likelihood and
test uses only it) but no privacy guarantee can be stated: pass
``guarantee=`` to record one.

Examples
--------
>>> import pandas as pd
>>> from invariantdp import Release
>>> from invariantdp.invariants import totals
>>> counts = pd.Series([1203, 388, 97], index=pd.Index(["Ada", "Bay", "Cole"], name="county"))
>>> r = Release.from_published(
...     counts, noise="discrete_gaussian", rho=0.5, sensitivity=1.0,
...     invariants=totals([0, 0, 0]).of([1200, 390, 100]))
>>> r.noise.family, dict(r.noise.params), r.guarantee.describe()
('discrete_gaussian', {'sigma': 1.0}, 'zCDP (rho=0.5, sensitivity=1)')
>>> r.to_series()
county
Ada     1203
Bay      388
Cole      97
Name: value, dtype: int64
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import sparse

from ._frames import as_columns, check_columns
from ._validation import InvariantDPError, format_value
from .invariants import Invariants, totals
from .release import Release

__all__ = ["from_published", "read_published"]


def from_published(values, *, noise, invariants=None, **kwargs) -> Release:
    """A :class:`~invariantdp.Release` from published numbers: :meth:`Release.from_published`.

    The same function under its module's name; see
    :meth:`Release.from_published <invariantdp.Release.from_published>` for
    the parameters and the table above for the terms the noise is given in.

    Parameters
    ----------
    values : array_like
        The published noisy numbers.
    noise : str
        The noise family (e.g. ``"gaussian"``, ``"discrete_gaussian"``).
    invariants : Invariants, optional
        Statistics published exactly alongside.
    **kwargs
        The noise parameters in the terms of the table above (e.g.
        ``variance=``, ``rho=`` with ``sensitivity=``).

    Returns
    -------
    Release

    References
    ----------
    Canonne, Kamath & Steinke (2020), Thm. 14; Bun & Steinke (2016),
    Prop. 1.6; Gao, Gong & Yu (2022), Section 2 (invariants).

    Examples
    --------
    >>> r = from_published([10.5, 3.2], noise="gaussian", variance=4.0)
    >>> dict(r.noise.params), r.guarantee.definition
    ({'scale': 2.0}, 'unstated')
    """
    return Release.from_published(values, noise=noise, invariants=invariants, **kwargs)


def read_published(
    table,
    *,
    value_column: str,
    label_columns,
    noise: str,
    variance_column: str | None = None,
    rho_column: str | None = None,
    shape: str = "long",
    invariants: Invariants | None = None,
    total_label=None,
    **params,
) -> Release:
    """A :class:`~invariantdp.Release` from a long-format table of published counts.

    Agencies publish one row per cell (geography x query) with the noisy
    count and its noise variance (or zCDP ``rho``); the rows of one release
    share one noise law.  Rows published exactly -- variance 0, or ``rho``
    infinite -- are the invariants: each is the sum of the cells that match
    its labels, a label left empty (or equal to ``total_label``) standing
    for every level of its column (a state total leaves every label empty; a
    county total gives the county only).

    Parameters
    ----------
    table : pandas.DataFrame or str or path
        The table, or a CSV file to read with :func:`pandas.read_csv`.
    value_column : str
        Column of the noisy values (and of the exact values of invariant rows).
    label_columns : str or list of str
        Columns identifying a cell (e.g. ``["county", "sex"]``); unique per
        noisy row.
    noise : str
        The noise family (see :func:`from_published`).
    variance_column, rho_column : str, optional
        A column holding the noise variance, or the zCDP ``rho`` of every cell
        (with ``sensitivity=``); constant over the noisy rows.  Rows with
        variance 0 or ``rho = inf`` are invariant rows.
    shape : {"long", "table"}
        ``"long"``: a 1-D release on the noisy rows' labels (in the table's
        order); ``"table"``: every combination of the labels present once, in
        the product order of the levels (each in order of first appearance):
        with two label columns a 2-D release (rows x columns, e.g. a
        contingency table for
        :func:`~invariantdp.inference.umpu_odds_ratio_test`), with more a
        1-D release indexed by every combination (reshape it for an n-D
        table).
    invariants : Invariants, optional
        Published invariants acting on the cells in that order, when the
        table holds no invariant rows.
    total_label : optional
        A label that marks "every level" in invariant rows (e.g. ``"Total"``),
        besides an empty label.
    **params
        Further noise parameters (``sensitivity``, ``variance``, ``rho``, ...).

    Returns
    -------
    Release

    References
    ----------
    Canonne, Kamath & Steinke (2020), Thm. 14; Bun & Steinke (2016),
    Prop. 1.6 (the noise terms of published counts); Gao, Gong & Yu (2022),
    Definition 2 (linear invariants).

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.DataFrame({"county": ["Ada", "Ada", "Bay", "Bay"],
    ...                   "sex": ["F", "M", "F", "M"],
    ...                   "count": [51, 47, 20, 26], "variance": [4.0] * 4})
    >>> r = read_published(t, value_column="count", label_columns=["county", "sex"],
    ...                    noise="discrete_gaussian", variance_column="variance",
    ...                    shape="table")
    >>> r.to_frame()  # doctest: +NORMALIZE_WHITESPACE
    sex      F   M
    county
    Ada     51  47
    Bay     20  26

    With a state total and a county total published exactly (``rho = inf``):

    >>> t = pd.DataFrame({"county": ["Ada", "Ada", "Bay", "Bay", None, "Ada"],
    ...                   "sex": ["F", "M", "F", "M", None, "Total"],
    ...                   "count": [51, 47, 20, 26, 140, 97],
    ...                   "rho": [0.5] * 4 + [float("inf")] * 2})
    >>> r = read_published(t, value_column="count", label_columns=["county", "sex"],
    ...                    noise="discrete_gaussian", rho_column="rho", sensitivity=1.0,
    ...                    total_label="Total")
    >>> r.invariants.names, r.invariants.values.tolist()
    (('total', 'county=Ada'), [140.0, 97.0])
    """
    if not isinstance(table, pd.DataFrame):
        table = pd.read_csv(table)
    labels = as_columns(label_columns)
    if not labels:
        raise InvariantDPError("`label_columns` must name at least one column.")
    extra = [c for c in (variance_column, rho_column) if c is not None]
    check_columns("label_columns", labels, table)
    check_columns("value_column", [value_column], table)
    check_columns("variance_column/rho_column", extra, table)
    if shape not in ("long", "table"):
        raise InvariantDPError(f"`shape` ({shape!r}) must be 'long' or 'table'.")
    if pd.api.types.is_numeric_dtype(table[value_column]) is False:
        raise InvariantDPError(f"`value_column` ({value_column!r}) must hold numbers.")
    exact = _exact_rows(table, variance_column, rho_column)
    if exact.all():
        raise InvariantDPError("`table` has no noisy rows: every row is published exactly.")
    if exact.any() and invariants is not None:
        raise InvariantDPError(
            "`table` holds invariant rows (variance 0 or rho inf): pass them there or as "
            "`invariants`, not both."
        )
    exact_rows, table = table[exact], table[~exact]
    missing = table[labels].isna().any(axis=1)
    if missing.any():
        raise InvariantDPError(
            f"`label_columns` {labels} must be filled in every noisy row; row "
            f"{format_value(table.index[np.argmax(missing.to_numpy())])} has an empty label."
        )
    duplicated = table.duplicated(labels)
    if duplicated.any():
        dup = table.loc[duplicated, labels].iloc[0].tolist()
        raise InvariantDPError(
            f"`label_columns` {labels} must identify one row each; {dup} appears more than once."
        )
    for col, key in ((variance_column, "variance"), (rho_column, "rho")):
        if col is None:
            continue
        values = pd.unique(table[col])
        if len(values) != 1:
            raise InvariantDPError(
                f"`{col}` must hold one value for the whole release, got {len(values)} "
                f"({format_value(values[:5].tolist())}); select the rows of one query first."
            )
        params[key] = float(values[0])
    if shape == "table" and len(labels) > 1:
        levels = [pd.unique(table[c]) for c in labels]
        full = pd.MultiIndex.from_product(levels, names=labels)
        if len(full) != len(table):
            raise InvariantDPError(
                f"`shape='table'` needs every combination of {labels} once: {len(full)} "
                f"combinations, {len(table)} rows."
            )
        # positions of every row on the axes (levels in order of first appearance)
        codes = [pd.Index(lv).get_indexer(table[c]) for lv, c in zip(levels, labels, strict=True)]
        array = np.empty([len(lv) for lv in levels], dtype=table[value_column].dtype)
        array[tuple(codes)] = table[value_column].to_numpy()
        cells = full.to_frame(index=False)
        if len(labels) == 2:
            values = pd.DataFrame(
                array,
                index=pd.Index(levels[0], name=labels[0]),
                columns=pd.Index(levels[1], name=labels[1]),
            )
        else:
            values = pd.Series(array.ravel(), index=full)
    else:
        values = table.set_index(labels if len(labels) > 1 else labels[0])[value_column]
        cells = table[labels].reset_index(drop=True)
    if len(exact_rows):
        invariants = _row_invariants(
            exact_rows, cells, labels, value_column, total_label, np.shape(values)
        )
    return from_published(values, noise=noise, invariants=invariants, **params)


def _exact_rows(table, variance_column, rho_column) -> np.ndarray:
    """Rows published exactly: variance 0 or rho infinite."""
    exact = np.zeros(len(table), dtype=bool)
    if variance_column is not None and pd.api.types.is_numeric_dtype(table[variance_column]):
        exact |= (table[variance_column] == 0).to_numpy()
    if rho_column is not None and pd.api.types.is_numeric_dtype(table[rho_column]):
        rho = table[rho_column].to_numpy(dtype=float)
        exact |= np.isinf(rho) & (rho > 0)
    return exact


def _row_invariants(rows, cells, labels, value_column, total_label, shape) -> Invariants:
    """The invariants of the exact rows: each the sum of the cells matching its labels.

    ``cells`` holds the labels of the release's cells in C order, ``shape`` is
    the release's.  One kind of total covering every cell once (every county)
    gives the ``O(n)`` totals structure; anything else a sparse matrix.
    """
    fixed = rows[labels].notna()
    if total_label is not None:
        fixed &= rows[labels] != total_label
    n, k = len(rows), len(cells)
    for col in labels:
        given = rows.loc[fixed[col], col]
        unknown = ~given.isin(pd.unique(cells[col]))
        if unknown.any():
            bad = given[unknown].iloc[0]
            hint = (
                ""
                if total_label is not None
                else f"; if it marks a total, pass total_label={bad!r}"
            )
            raise InvariantDPError(
                f"`{col}` of an invariant row ({format_value(bad)}) is not a level of the noisy "
                f"rows{hint}."
            )
    pattern = fixed.to_numpy()
    row_ids, cell_ids = [], []
    for kind in np.unique(pattern, axis=0):
        members = np.flatnonzero((pattern == kind).all(axis=1))
        cols = [c for c, f in zip(labels, kind, strict=True) if f]
        if not cols:
            if members.size > 1:
                raise InvariantDPError("`table` has the grand total as an invariant row twice.")
            row_ids.append(np.full(k, members[0]))
            cell_ids.append(np.arange(k))
            continue
        keys = rows.iloc[members][cols]
        index = pd.MultiIndex.from_frame(keys) if len(cols) > 1 else pd.Index(keys.iloc[:, 0])
        if index.has_duplicates:
            raise InvariantDPError(
                f"`table` has the invariant row {format_value(index[index.duplicated()][0])} of "
                f"{cols} twice."
            )
        target = cells[cols]
        target = pd.MultiIndex.from_frame(target) if len(cols) > 1 else pd.Index(target.iloc[:, 0])
        hit = index.get_indexer(target)
        row_ids.append(members[hit[hit >= 0]])
        cell_ids.append(np.flatnonzero(hit >= 0))
    r, c = np.concatenate(row_ids), np.concatenate(cell_ids)
    counts = np.bincount(r, minlength=n)
    if np.any(counts == 0):
        bad = rows.iloc[int(np.argmin(counts))][labels].tolist()
        raise InvariantDPError(f"the invariant row {format_value(bad)} matches no noisy row.")
    exact = rows[value_column].to_numpy(dtype=float)
    if pattern.shape[0] and np.unique(pattern, axis=0).shape[0] == 1 and r.size == k:
        # one kind of total covering every cell once: a partition, O(n) structure
        labels_of_cells = np.empty(k, dtype=np.int64)
        labels_of_cells[c] = r
        return totals(labels_of_cells.reshape(shape)).with_values(exact)
    names = [
        ", ".join(f"{col}={v}" for col, v, f in zip(labels, vals, flags, strict=True) if f)
        or "total"
        for vals, flags in zip(rows[labels].itertuples(index=False), pattern, strict=True)
    ]
    matrix = sparse.csr_array((np.ones(r.size), (r, c)), shape=(n, k))
    return Invariants(matrix, exact, shape=shape, names=names)

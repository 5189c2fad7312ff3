r"""From what an agency publishes to a :class:`~invariantdp.Release`.

An analyst does not run the mechanism: the agency publishes noisy values
(with their labels), the law of the noise (e.g. discrete Gaussian noise of a
stated variance, or a zCDP budget ``rho`` and the query's sensitivity) and
the invariants published exactly (totals, margins).  :func:`from_published`
(also :meth:`Release.from_published <invariantdp.Release.from_published>`)
builds the release every inference function of the package takes;
:func:`read_published` reads the long format agencies use (one row per
geography x query cell with its noisy count and its variance or ``rho``).

The noise law is given in the agency's terms and converted exactly:

=======================  ============================================  =====================
family                   parameters accepted                           guarantee recorded
=======================  ============================================  =====================
``discrete_gaussian``,   ``variance`` (sigma^2) or ``sigma``; or       zCDP, ``rho =
``gaussian``             ``rho`` and ``sensitivity`` (L2):             sensitivity^2 /
                         ``sigma^2 = sensitivity^2 / (2 rho)`` (CKS    (2 sigma^2)``, when
                         2020, Thm. 14; Bun & Steinke 2016, Prop.      the sensitivity is
                         1.6)                                          given
``discrete_laplace``,    ``scale``; or ``epsilon`` and ``sensitivity``  epsilon-DP, ``epsilon
``laplace``              (L1): ``scale = sensitivity / epsilon``       = sensitivity /
                                                                       scale``
``tulap``                ``epsilon`` (and ``delta``): ``b, q`` of      (epsilon, delta)-DP
                         :func:`~invariantdp.distributions.tulap_params`
=======================  ============================================  =====================

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

from ._frames import as_columns, check_columns
from ._validation import InvariantDPError, check_finite_array, format_value
from .families import noise_family
from .invariants import Invariants
from .labels import labels_of
from .release import NoiseLaw, PrivacyGuarantee, Release

__all__ = ["from_published", "read_published"]


def _noise_and_guarantee(noise, params, invariants):
    """The NoiseLaw from the agency's terms, and the guarantee they imply (or None)."""
    if isinstance(noise, NoiseLaw):
        if params:
            raise InvariantDPError(
                f"`noise` is a NoiseLaw already; do not also pass {sorted(params)}."
            )
        noise.spec.validate(dict(noise.params), "noise.params")
        return noise, None
    if not isinstance(noise, str):
        raise TypeError(f"`noise` must be a family name or a NoiseLaw, got {type(noise).__name__}.")
    p, guarantee = noise_family(noise).published_params(params, invariants)
    return NoiseLaw(noise, p), guarantee


def from_published(
    values,
    *,
    noise,
    invariants: Invariants | None = None,
    guarantee: PrivacyGuarantee | None = None,
    query=None,
    data_shape=None,
    mechanism: str = "published",
    metadata: dict | None = None,
    **params,
) -> Release:
    """A :class:`~invariantdp.Release` from published noisy values, noise law and invariants.

    Parameters
    ----------
    values : array_like, pandas.Series or pandas.DataFrame
        The noisy values as published.  The index (and columns) of a pandas
        object are kept as the release's labels.
    noise : str or NoiseLaw
        The noise family (``"discrete_gaussian"``, ``"gaussian"``,
        ``"discrete_laplace"``, ``"laplace"``, ``"tulap"``, or any registered
        family with its own parameters) or a ready :class:`NoiseLaw`.
    invariants : Invariants, optional
        The statistics published exactly, with their values
        (``totals(...).of(true_totals)`` or an :class:`Invariants` with
        ``values``); they act on the cells of ``values`` (C order).
    guarantee : PrivacyGuarantee, optional
        The privacy guarantee, when the noise parameters do not imply one.
    query : array_like, shape (values.size, prod(data_shape)), optional
        The linear query of the confidential data that was released, when the
        values are not the data cells themselves (e.g. ``[[1, 0, 0, 0]]``: the
        cell x11 of a 2 x 2 table); the invariants then act on the data.
    data_shape : tuple of int, optional
        Shape of the confidential data (default: the shape of ``values``, or
        the invariants' shape when a ``query`` is given).
    mechanism : str
        Name recorded for the mechanism.
    metadata : dict, optional
        Provenance to record (source, table, vintage).
    **params
        The noise in the agency's terms (see the module docstring):
        ``variance``, ``sigma``, ``rho``, ``scale``, ``epsilon``, ``delta``,
        ``sensitivity``, or a family's own parameters.

    Returns
    -------
    Release
        With ``metadata["source"] = "published"``; ``query`` None (the
        identity) unless given.

    Raises
    ------
    InvariantDPError
        Before anything is built: parameters that do not determine the law,
        invariants without values or of another size, non-integer values for
        an integer family.

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
    labels = labels_of(values)
    given = np.asarray(values)
    value = check_finite_array("values", given)
    law, implied = _noise_and_guarantee(noise, dict(params), invariants)
    integer = law.spec.integer
    if integer and not np.all(value == np.round(value)):
        raise InvariantDPError(
            f"`values` must be integers for {law.family} noise; got {format_value(value)}."
        )
    if integer or given.dtype.kind in "iu":  # counts stay integers (exact below 2**53)
        value = value.astype(np.int64)
    if invariants is not None and not isinstance(invariants, Invariants):
        raise TypeError(f"`invariants` must be an Invariants, got {type(invariants).__name__}.")
    shape = value.shape
    if query is not None:
        query = check_finite_array("query", query)
        if data_shape is None:
            if invariants is None:
                raise InvariantDPError("a `query` needs `data_shape` (or invariants on the data).")
            data_shape = invariants.shape
        shape = tuple(int(v) for v in data_shape)
        if query.shape != (value.size, int(np.prod(shape))):
            raise InvariantDPError(
                f"`query` must have shape ({value.size}, {int(np.prod(shape))}): one row per "
                f"value, one column per data cell; got {query.shape}."
            )
    elif data_shape is not None and tuple(data_shape) != value.shape:
        raise InvariantDPError(
            f"`data_shape` {tuple(data_shape)} differs from the shape of `values` "
            f"{value.shape}; give the `query` that maps the data to the values."
        )
    if invariants is not None:
        if invariants.values is None:
            raise InvariantDPError(
                "`invariants` must carry the published values: use `invariants.of(...)` or "
                "Invariants(C, values)."
            )
        if invariants.n_cells != int(np.prod(shape)):
            raise InvariantDPError(
                f"`invariants` act on {invariants.n_cells} cells but the data have "
                f"{int(np.prod(shape))}; give the `query` when the values are not the cells."
            )
        if law.spec.keeps_invariants and query is None:
            try:
                invariants.check(value.reshape(-1), name="values", rtol=1e-8)
            except InvariantDPError as exc:
                raise InvariantDPError(
                    f"{exc} {law.family} noise keeps the invariants exactly, so the published "
                    "values must satisfy them."
                ) from None
    if guarantee is None:
        definition, gparams = implied or ("unstated", {})
        guarantee = PrivacyGuarantee(
            definition, gparams, "as stated by the publisher", None, "as published"
        )
    elif not isinstance(guarantee, PrivacyGuarantee):
        raise TypeError(f"`guarantee` must be a PrivacyGuarantee, got {type(guarantee).__name__}.")
    return Release(
        value=value,
        mechanism=mechanism,
        noise=law,
        guarantee=guarantee,
        invariants=invariants,
        query=query,
        data_shape=shape,
        metadata={
            "source": "published",
            **({"query": "identity"} if query is None else {}),
            **(metadata or {}),
        },
        labels=labels,
    )


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
    **params,
) -> Release:
    """A :class:`~invariantdp.Release` from a long-format table of published counts.

    Agencies publish one row per cell (geography x query) with the noisy
    count and its noise variance (or zCDP ``rho``); the rows of one release
    share one noise law.

    Parameters
    ----------
    table : pandas.DataFrame or str or path
        The table, or a CSV file to read with :func:`pandas.read_csv`.
    value_column : str
        Column of the noisy values.
    label_columns : str or list of str
        Columns identifying a cell (e.g. ``["county", "sex"]``); unique per row.
    noise : str
        The noise family (see :func:`from_published`).
    variance_column, rho_column : str, optional
        A column holding the noise variance, or the zCDP ``rho`` of every cell
        (with ``sensitivity=``); it must be constant over the rows.
    shape : {"long", "table"}
        ``"long"``: a 1-D release on the rows' labels (in the table's order);
        ``"table"``: an array with one axis per label column (every
        combination present once), e.g. a contingency table for
        :func:`~invariantdp.inference.umpu_odds_ratio_test`.
    invariants : Invariants, optional
        Published invariants acting on the cells in that order.
    **params
        Further noise parameters (``sensitivity``, ``variance``, ``rho``, ...).

    Returns
    -------
    Release

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
    if table.duplicated(labels).any():
        dup = table.loc[table.duplicated(labels), labels].iloc[0].tolist()
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
    if pd.api.types.is_numeric_dtype(table[value_column]) is False:
        raise InvariantDPError(f"`value_column` ({value_column!r}) must hold numbers.")
    series = table.set_index(labels if len(labels) > 1 else labels[0])[value_column]
    if shape == "table" and len(labels) > 1:
        levels = [pd.unique(table[c]) for c in labels]
        full = pd.MultiIndex.from_product(levels, names=labels)
        if len(full) != len(series):
            raise InvariantDPError(
                f"`shape='table'` needs every combination of {labels} once: {len(full)} "
                f"combinations, {len(series)} rows."
            )
        # positions of every row on the axes (levels in order of first appearance)
        codes = [pd.Index(lv).get_indexer(table[c]) for lv, c in zip(levels, labels, strict=True)]
        array = np.empty([len(lv) for lv in levels], dtype=table[value_column].dtype)
        array[tuple(codes)] = table[value_column].to_numpy()
        if len(labels) == 2:
            values = pd.DataFrame(
                array,
                index=pd.Index(levels[0], name=labels[0]),
                columns=pd.Index(levels[1], name=labels[1]),
            )
        else:
            values = pd.Series(array.ravel(), index=full)
    else:
        values = series
    return from_published(values, noise=noise, invariants=invariants, **params)

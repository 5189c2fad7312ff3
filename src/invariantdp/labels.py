"""Labels of a released value: the pandas index and columns, kept end to end.

A mechanism given a pandas ``Series`` (or ``DataFrame``) records its index
(and columns) in the :class:`~invariantdp.Release`, the JSON document carries
them, and :meth:`Release.to_series <invariantdp.Release.to_series>` /
:meth:`~invariantdp.Release.to_frame` give them back, so that a published
release still says which county is which.

A label is a JSON scalar (a string, an integer of magnitude at most 2**53, a
finite float or a boolean) or, for a ``MultiIndex``, a tuple of them; other
labels (timestamps, objects) are refused with the advice to convert them
(``index.astype(str)``): a label that would not come back unchanged from
JSON is never kept.

Examples
--------
>>> import pandas as pd
>>> from invariantdp.labels import labels_of, to_pandas
>>> s = pd.Series([3, 5], index=pd.Index(["Ada", "Bay"], name="county"))
>>> axes = labels_of(s)
>>> axes[0].name, axes[0].labels
('county', ('Ada', 'Bay'))
>>> to_pandas([3.5, 4.25], axes)
county
Ada    3.50
Bay    4.25
dtype: float64
"""

from __future__ import annotations

import itertools
import math
import numbers
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ._validation import (
    EXACT_INT,
    InvariantDPError,
    doc_error,
    doc_list,
    doc_object,
    doc_path,
    format_value,
)

__all__ = [
    "AxisLabels",
    "cell_names",
    "check_labels",
    "label_text",
    "labels_from_doc",
    "labels_of",
    "labels_to_doc",
    "to_pandas",
]


@dataclass(frozen=True)
class AxisLabels:
    """The labels of one axis of a released value.

    Attributes
    ----------
    name : str, int, tuple or None
        The axis name (``index.name``; a tuple of level names for a
        ``MultiIndex``).
    labels : tuple
        One label per position along the axis (tuples for a ``MultiIndex``).

    References
    ----------
    pandas API reference, ``pandas.Index`` and ``pandas.MultiIndex`` (what
    an axis mirrors); :mod:`invariantdp.release`, "The JSON document",
    field ``labels`` (its JSON form, optional, version 2).

    Examples
    --------
    >>> ax = AxisLabels("sex", ("F", "M"))
    >>> ax.to_index().tolist(), ax.to_index().name
    (['F', 'M'], 'sex')
    """

    name: object
    labels: tuple

    def to_index(self) -> pd.Index:
        """The axis as a pandas ``Index`` (a ``MultiIndex`` for tuple labels)."""
        if isinstance(self.name, tuple):
            return pd.MultiIndex.from_tuples(self.labels, names=list(self.name))
        return pd.Index(list(self.labels), name=self.name, tupleize_cols=False)


def _scalar(where: str, v):
    """``v`` as a Python JSON scalar, or an error saying how to convert it."""
    if isinstance(v, bool | np.bool_):
        return bool(v)
    if isinstance(v, str):
        return v
    if isinstance(v, numbers.Integral):
        if abs(int(v)) > EXACT_INT:
            raise InvariantDPError(f"{where} ({format_value(v)}) must be at most 2**53 in size.")
        return int(v)
    if isinstance(v, numbers.Real) and math.isfinite(float(v)):
        return float(v)
    raise InvariantDPError(
        f"{where} ({format_value(v)}, a {type(v).__name__}) must be a string, integer, finite "
        "float or boolean to survive JSON; convert the labels first, e.g. "
        "`index.astype(str)`."
    )


def _axis(where: str, index: pd.Index) -> AxisLabels:
    if isinstance(index, pd.MultiIndex):
        names = tuple(
            _scalar(f"{where} level name", n) if n is not None else None for n in index.names
        )
        labels = tuple(tuple(_scalar(f"{where} label", x) for x in t) for t in index)
        return AxisLabels(names, labels)
    name = None if index.name is None else _scalar(f"{where} name", index.name)
    return AxisLabels(name, tuple(_scalar(f"{where} label", x) for x in index))


def labels_of(data) -> tuple[AxisLabels, ...] | None:
    """The labels of a pandas ``Series`` / ``DataFrame`` (None for anything else).

    Positions alone (every axis a default, unnamed ``RangeIndex``) carry no
    labels and give None; otherwise every axis is kept.

    Parameters
    ----------
    data : object
        Typically the confidential data given to a mechanism.

    Returns
    -------
    tuple of AxisLabels or None
        One :class:`AxisLabels` per axis (index, then columns for a
        ``DataFrame``).

    Raises
    ------
    InvariantDPError
        If a label or axis name is not a JSON scalar (string, integer up to
        2**53, finite float or boolean).

    References
    ----------
    pandas API reference, ``Series.index``, ``DataFrame.columns`` and
    ``pandas.RangeIndex`` (the default index, which carries no labels);
    :mod:`invariantdp.release`, "The JSON document", field ``labels`` (the
    labels a JSON document can hold).

    Examples
    --------
    >>> import pandas as pd
    >>> labels_of(pd.Series([3, 5], index=pd.Index(["F", "M"], name="sex")))
    (AxisLabels(name='sex', labels=('F', 'M')),)
    >>> labels_of(pd.Series([3, 5])) is None
    True
    """
    if isinstance(data, pd.Series):
        axes = (data.index,)
    elif isinstance(data, pd.DataFrame):
        axes = (data.index, data.columns)
    else:
        return None
    if all(_is_default(ax) for ax in axes):
        return None
    return tuple(
        _axis(f"the {kind} of `x`", ax)
        for kind, ax in zip(("index", "columns"), axes, strict=False)
    )


def _is_default(index: pd.Index) -> bool:
    return (
        isinstance(index, pd.RangeIndex)
        and index.start == 0
        and index.step == 1
        and index.name is None
    )


def check_labels(labels, shape: tuple[int, ...]) -> tuple[AxisLabels, ...] | None:
    """``labels`` if they fit a value of ``shape`` (one axis per dimension, one label each).

    Parameters
    ----------
    labels : sequence of AxisLabels or None
    shape : tuple of int
        Shape of the value the labels describe.

    Returns
    -------
    tuple of AxisLabels or None
        ``labels`` as a tuple (None stays None).

    Raises
    ------
    TypeError
        If an entry is not an :class:`AxisLabels`.
    InvariantDPError
        If the number of axes or of labels along an axis does not match ``shape``.

    References
    ----------
    :mod:`invariantdp.release`, "The JSON document", field ``labels``: one
    axis per dimension of the value, exactly one label per entry along it.

    Examples
    --------
    >>> check_labels([AxisLabels("sex", ("F", "M"))], (2,))
    (AxisLabels(name='sex', labels=('F', 'M')),)
    """
    if labels is None:
        return None
    labels = tuple(labels)
    if not all(isinstance(a, AxisLabels) for a in labels):
        raise TypeError("`labels` must be a tuple of AxisLabels (see invariantdp.labels).")
    if len(labels) != len(shape):
        raise InvariantDPError(
            f"`labels` has {len(labels)} axes but the value has {len(shape)} dimensions."
        )
    for i, (ax, n) in enumerate(zip(labels, shape, strict=True)):
        if len(ax.labels) != n:
            raise InvariantDPError(
                f"`labels` axis {i} has {len(ax.labels)} labels but the value has {n} entries "
                "along it."
            )
    return labels


def to_pandas(value, labels: tuple[AxisLabels, ...] | None):
    """``value`` as a ``Series`` (1-D) or ``DataFrame`` (2-D) with ``labels``.

    A value of more dimensions becomes a ``Series`` on the product of its
    axes (C order, like ``value.ravel()``).

    Parameters
    ----------
    value : array_like
        The released value, at least 1-D.
    labels : tuple of AxisLabels or None
        One per axis of ``value``; None gives default integer indexes.

    Returns
    -------
    pandas.Series or pandas.DataFrame

    Raises
    ------
    InvariantDPError
        If ``value`` is a scalar.

    References
    ----------
    pandas API reference, ``pandas.Series``, ``pandas.DataFrame`` and
    ``pandas.MultiIndex.from_product`` (the index of a value of more
    dimensions, in the C order of ``numpy.ravel``).

    Examples
    --------
    >>> to_pandas([1.5, 2.5], (AxisLabels("sex", ("F", "M")),)).to_dict()
    {'F': 1.5, 'M': 2.5}
    """
    value = np.asarray(value)
    if value.ndim == 0:
        raise InvariantDPError("a scalar release has no axes to label; use `release.value`.")
    index = [None] * value.ndim if labels is None else [ax.to_index() for ax in labels]
    if value.ndim == 1:
        return pd.Series(value, index=index[0])
    if value.ndim == 2:
        return pd.DataFrame(value, index=index[0], columns=index[1])
    if labels is None:
        return pd.Series(value.ravel())
    product = pd.MultiIndex.from_product(index, names=[ix.name for ix in index])
    return pd.Series(value.ravel(), index=product)


def label_text(label) -> str:
    """A label as text: a multi-level label's levels joined by ``", "``, as cells' axes are.

    The one way the package writes a label (:func:`cell_names` joins a
    cell's labels on its axes the same way), so that a cell reads alike
    whether its levels come from a ``MultiIndex`` or from the axes of a table.

    Examples
    --------
    >>> label_text(("County 01", "Female", "0-17")), label_text("F"), label_text(3)
    ('County 01, Female, 0-17', 'F', '3')
    """
    return ", ".join(map(str, label)) if isinstance(label, tuple) else str(label)


def cell_names(labels: tuple[AxisLabels, ...] | None, shape: tuple[int, ...]) -> list[str]:
    """One name per cell of a value of ``shape`` (C order): its labels, or its position.

    The labels of a cell, on several axes or the levels of a multi-level
    label alike, are joined by ``", "`` (``"Ada, F"``; :func:`label_text`).

    Parameters
    ----------
    labels : tuple of AxisLabels or None
        One per axis; None names the cells by their positions.
    shape : tuple of int
        Shape of the value.

    Returns
    -------
    list of str
        ``prod(shape)`` names (one, ``"0"``, for a scalar).

    References
    ----------
    A convention of this package (the coordinates of the cells in the
    Bayesian models, the cells in summaries); the cells are in the C order
    of ``numpy.ravel`` and of ``pandas.MultiIndex.from_product``, like
    :func:`to_pandas`.

    Examples
    --------
    >>> cell_names((AxisLabels("sex", ("F", "M")), AxisLabels(None, (1, 2))), (2, 2))
    ['F, 1', 'F, 2', 'M, 1', 'M, 2']
    >>> cell_names((AxisLabels(("county", "sex"), (("C01", "F"), ("C01", "M"))),), (2,))
    ['C01, F', 'C01, M']
    >>> cell_names(None, (3,))
    ['0', '1', '2']
    """
    if labels is None:
        axes = [[str(i) for i in range(n)] for n in shape]
    else:
        axes = [[label_text(x) for x in ax.labels] for ax in labels]
    if not axes:
        return ["0"]
    return [", ".join(parts) for parts in itertools.product(*axes)]


def labels_to_doc(labels: tuple[AxisLabels, ...] | None):
    """The JSON form: a list of ``{"name", "labels"}``, tuples as lists.

    Parameters
    ----------
    labels : tuple of AxisLabels or None

    Returns
    -------
    list of dict or None
        One ``{"name": ..., "labels": [...]}`` per axis; None for None.

    References
    ----------
    :mod:`invariantdp.release`, "The JSON document", field ``labels``
    (optional, version 2); JSON as in RFC 8259.

    Examples
    --------
    >>> labels_to_doc((AxisLabels("sex", ("F", "M")),))
    [{'name': 'sex', 'labels': ['F', 'M']}]
    """
    if labels is None:
        return None

    def plain(x):
        return list(x) if isinstance(x, tuple) else x

    return [{"name": plain(ax.name), "labels": [plain(x) for x in ax.labels]} for ax in labels]


def labels_from_doc(path: str, doc, shape: tuple[int, ...]) -> tuple[AxisLabels, ...] | None:
    """Validate the JSON form against a value of ``shape``; rebuild the labels.

    Parameters
    ----------
    path : str
        Location of ``doc`` in the document, used in error messages.
    doc : list of dict or None
        Output of :func:`labels_to_doc` (e.g. read back from JSON).
    shape : tuple of int
        Shape of the value the labels describe.

    Returns
    -------
    tuple of AxisLabels or None

    Raises
    ------
    InvariantDPError
        If ``doc`` is malformed or does not fit ``shape``.

    References
    ----------
    :mod:`invariantdp.release`, "The JSON document", field ``labels``
    (optional, version 2): the rules checked here.

    Examples
    --------
    >>> labels_from_doc("labels", [{"name": "sex", "labels": ["F", "M"]}], (2,))
    (AxisLabels(name='sex', labels=('F', 'M')),)
    """
    if doc is None:
        return None
    axes = doc_list(path, doc, min_length=len(shape), max_length=len(shape))
    out = []
    for i, (ax, n) in enumerate(zip(axes, shape, strict=True)):
        apath = doc_path(path, i)
        doc_object(apath, ax, required=("name", "labels"))
        labels = doc_list(doc_path(apath, "labels"), ax["labels"], min_length=n, max_length=n)
        multi = isinstance(ax["name"], list)
        try:
            name = (
                tuple(None if x is None else _scalar("name", x) for x in ax["name"])
                if multi
                else (None if ax["name"] is None else _scalar("name", ax["name"]))
            )
            if multi:
                rows = [
                    doc_list(
                        doc_path(apath, "labels"), t, min_length=len(name), max_length=len(name)
                    )
                    for t in labels
                ]
                values = tuple(tuple(_scalar("label", x) for x in t) for t in rows)
            else:
                values = tuple(_scalar("label", x) for x in labels)
        except InvariantDPError as exc:
            raise doc_error(apath, ax, f"must hold JSON scalar labels ({exc})") from None
        out.append(AxisLabels(name, values))
    return tuple(out)

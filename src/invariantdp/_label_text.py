"""Labels as text: what summaries print so that every number says which cell it is.

A released value, its invariants and the statistics of a test are shown on
the labels the curator's data had (:mod:`invariantdp.labels`): the cells of a
county x sex table as ``"C01, F: 347"``, the x11 of a 2 x 2 table as
``"men, admitted"``, its odds ratio as ``"odds of admitted, men vs women"``.
Cells are named by :func:`~invariantdp.labels.cell_names` and labels written
by :func:`~invariantdp.labels.label_text`, the one way the package joins
labels.

Examples
--------
>>> from invariantdp.labels import AxisLabels
>>> sex = AxisLabels("sex", ("men", "women"))
>>> admit = AxisLabels("admission", ("admitted", "rejected"))
>>> two_by_two_text((sex, admit)).odds_ratio
'odds of admitted, men vs women'
>>> axes_text((sex, admit))
'sex (men, women) x admission (admitted, rejected)'
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
import pandas as pd

from .labels import AxisLabels, cell_names, label_text

__all__ = [
    "TwoByTwoText",
    "axes_text",
    "invariant_names",
    "labelled_values",
    "named_values",
    "two_by_two_text",
    "value_name_of",
]

#: a summary line shows at most this many cells (a few from each end beyond it)
SHOWN_CELLS = 12
#: levels of an axis listed by name in :func:`axes_text` (more are counted)
SHOWN_LEVELS = 4


def value_name_of(data) -> str | None:
    """The name of the values of ``data``: a ``Series``' string name (``"count"``), else None.

    Examples
    --------
    >>> value_name_of(pd.Series([3, 5], name="count")), value_name_of([3, 5])
    ('count', None)
    """
    name = getattr(data, "name", None) if isinstance(data, pd.Series) else None
    return name if isinstance(name, str) and name else None


def _axis_name(ax: AxisLabels, unnamed: str) -> str:
    if isinstance(ax.name, tuple):
        names = [str(n) for n in ax.name if n is not None]
        return " x ".join(names) if names else unnamed
    return unnamed if ax.name is None else str(ax.name)


def axes_text(labels: tuple[AxisLabels, ...]) -> str:
    """The axes of a labelled value: ``"county (12 levels) x sex (F, M)"``.

    An unnamed axis is called by its place: ``rows`` and ``columns`` of a
    table, ``axis i`` beyond.

    Examples
    --------
    >>> axes_text((AxisLabels("sex", ("F", "M")), AxisLabels(None, ("yes", "no"))))
    'sex (F, M) x columns (yes, no)'
    """
    places = ("rows", "columns") if len(labels) == 2 else ("index",) if len(labels) == 1 else ()
    parts = []
    for i, ax in enumerate(labels):
        n = len(ax.labels)
        levels = ", ".join(map(label_text, ax.labels)) if n <= SHOWN_LEVELS else f"{n} levels"
        unnamed = places[i] if i < len(places) else f"axis {i}"
        parts.append(f"{_axis_name(ax, unnamed)} ({levels})")
    return " x ".join(parts)


def _number(v, decimals: int) -> str:
    """A number as a summary shows it: integers whole, others to ``decimals`` places
    (trailing zeros dropped), tiny ones in scientific notation."""
    v = v.item() if isinstance(v, np.generic) else v
    if isinstance(v, bool | int) or not math.isfinite(v):
        return str(v)
    if v != 0 and abs(v) < 10.0**-decimals:
        return f"{v:.{decimals}g}"
    text = f"{v:.{decimals}f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


def named_values(names, values, *, decimals: int = 4) -> str:
    """``"name: value"`` pairs joined by ``"; "``, the middle left out beyond
    :data:`SHOWN_CELLS`.

    Examples
    --------
    >>> named_values(["F", "M"], np.array([3.14159, 2.0]), decimals=3)
    'F: 3.142; M: 2'
    """
    names, values = list(names), np.ravel(values)
    if len(names) > SHOWN_CELLS:
        half = SHOWN_CELLS // 4  # as numpy prints a long array: a few from each end
        keep = [*range(half), *range(len(names) - half, len(names))]
        pairs = [f"{names[i]}: {_number(values[i], decimals)}" for i in keep]
        return "; ".join([*pairs[:half], "...", *pairs[half:]])
    return "; ".join(f"{n}: {_number(v, decimals)}" for n, v in zip(names, values, strict=True))


def labelled_values(value, labels: tuple[AxisLabels, ...], *, decimals: int = 4) -> str:
    """The cells of ``value`` on their labels: ``"C01, F: 347; C01, M: 1066; ..."``.

    Examples
    --------
    >>> labelled_values([347, 1066], (AxisLabels("sex", ("F", "M")),))
    'F: 347; M: 1066'
    """
    value = np.asarray(value)
    return named_values(cell_names(labels, value.shape), value, decimals=decimals)


def invariant_names(invariants, labels: tuple[AxisLabels, ...] | None) -> list[str] | None:
    """Names of the invariants: for one-way margins their axes' labels, else their own.

    The margins of a labelled table are named ``"axis=label"`` (``"sex=F"``)
    rather than by their positions; None when nothing names the invariants.

    Examples
    --------
    >>> from invariantdp.invariants import one_way_margins
    >>> axes = (AxisLabels("sex", ("F", "M")), AxisLabels(None, ("yes", "no")))
    >>> invariant_names(one_way_margins((2, 2)), axes)
    ['sex=F', 'sex=M', 'yes', 'no']
    """
    margins = invariants.kind == "one_way_margins" and labels is not None
    if not margins or tuple(len(ax.labels) for ax in labels) != tuple(invariants.shape):
        return None if invariants.names is None else list(invariants.names)
    names = []
    for ax in labels:
        prefix = "" if ax.name is None or isinstance(ax.name, tuple) else f"{ax.name}="
        names += [f"{prefix}{label_text(x)}" for x in ax.labels]
    return names


class TwoByTwoText(NamedTuple):
    """What the cells and margins of a 2 x 2 table are, in words."""

    #: the cell x11 (``"men, admitted"``, or ``"row 1, column 1"``)
    x11: str
    #: what ``(x11 x22) / (x12 x21)`` compares (``"odds of admitted, men vs women"``)
    odds_ratio: str
    #: names of ``(t1., t2., t.1, t.2)``
    margins: tuple[str, str, str, str]


def two_by_two_text(labels: tuple[AxisLabels, AxisLabels] | None) -> TwoByTwoText:
    """Names of x11, of the odds ratio and of the margins of a 2 x 2 table.

    The odds ratio ``(x11 x22) / (x12 x21)`` is the odds of the first column
    (against the second) in the first row, over the same odds in the second
    row; without labels the rows and columns are named by their positions.

    Examples
    --------
    >>> two_by_two_text(None).odds_ratio
    'odds of column 1, row 1 vs row 2'
    """
    if labels is None:
        rows, cols = ("row 1", "row 2"), ("column 1", "column 2")
    else:
        rows, cols = (tuple(label_text(x) for x in ax.labels) for ax in labels)
    return TwoByTwoText(
        x11=f"{rows[0]}, {cols[0]}",
        odds_ratio=f"odds of {cols[0]}, {rows[0]} vs {rows[1]}",
        margins=(*rows, *cols),
    )

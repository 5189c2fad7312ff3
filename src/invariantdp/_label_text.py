"""Labels as text: what summaries print so that every number says which cell it is.

A released value, its invariants and the statistics of a test are shown on
the labels the curator's data had (:mod:`invariantdp.labels`): the cells of a
county x sex table as ``"C01, F: 347"``, the x11 of a 2 x 2 table as
``"men, admitted"``, its odds ratio as ``"odds of admitted, men vs women"``.
Cells are named by :func:`~invariantdp.labels.cell_names`, the one way the
package joins labels.

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

from .labels import AxisLabels, cell_names

__all__ = [
    "TwoByTwoText",
    "axes_text",
    "labelled_values",
    "named_values",
    "two_by_two_text",
    "value_name_of",
]

#: a summary line shows at most this many cells (the first and last half of them)
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


def _label(x) -> str:
    return ", ".join(map(str, x)) if isinstance(x, tuple) else str(x)


def _axis_name(ax: AxisLabels, i: int) -> str:
    if isinstance(ax.name, tuple):
        names = [str(n) for n in ax.name if n is not None]
        return " x ".join(names) if names else f"axis {i}"
    return f"axis {i}" if ax.name is None else str(ax.name)


def axes_text(labels: tuple[AxisLabels, ...]) -> str:
    """The axes of a labelled value: ``"county (12 levels) x sex (F, M)"``."""
    parts = []
    for i, ax in enumerate(labels):
        n = len(ax.labels)
        levels = ", ".join(map(_label, ax.labels)) if n <= SHOWN_LEVELS else f"{n} levels"
        parts.append(f"{_axis_name(ax, i)} ({levels})")
    return " x ".join(parts)


def _number(v, precision: int) -> str:
    v = v.item() if isinstance(v, np.generic) else v
    if isinstance(v, int | bool):
        return str(v)
    if not math.isfinite(v):
        return str(v)
    return f"{v:.{precision}g}"


def named_values(names, values, *, precision: int = 6) -> str:
    """``"name: value"`` pairs joined by ``"; "``, the middle left out beyond
    :data:`SHOWN_CELLS`."""
    names, values = list(names), list(np.ravel(values))
    pairs = [f"{n}: {_number(v, precision)}" for n, v in zip(names, values, strict=True)]
    if len(pairs) > SHOWN_CELLS:
        half = SHOWN_CELLS // 4  # as numpy prints: a few from each end
        pairs = [*pairs[:half], "...", *pairs[-half:]]
    return "; ".join(pairs)


def labelled_values(value, labels: tuple[AxisLabels, ...], *, precision: int = 4) -> str:
    """The cells of ``value`` on their labels: ``"C01, F: 347; C01, M: 1066; ..."``."""
    value = np.asarray(value)
    return named_values(cell_names(labels, value.shape), value, precision=precision)


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
        rows, cols = (tuple(_label(x) for x in ax.labels) for ax in labels)
    return TwoByTwoText(
        x11=f"{rows[0]}, {cols[0]}",
        odds_ratio=f"odds of {cols[0]}, {rows[0]} vs {rows[1]}",
        margins=(*rows, *cols),
    )

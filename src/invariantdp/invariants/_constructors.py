"""Constructors of the structured invariants, and the null-space projector as an operator.

Besides the structures (:func:`totals`, :func:`nested_totals`,
:func:`one_way_margins`), readable constructors of the invariants agencies
publish with their values: :func:`grand_total` (the total of every cell, e.g.
a state's population) and :func:`group_totals` (the totals of the groups of a
labelled table, e.g. every county's population).
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping

import numpy as np
import pandas as pd
from scipy.sparse import linalg as splinalg

from .._validation import InvariantDPError, format_value
from ._invariants import Invariants
from ._structure import check_shape, margins_structure, nested_structure, totals_structure


def one_way_margins(shape) -> Invariants:
    """Invariants fixing every one-way margin of a table of the given shape.

    For an ``r x c`` table the rows are the ``r`` row sums followed by the
    ``c`` column sums, so a 2 x 2 table gives ``(t1., t2., t.1, t.2)``.  The
    null space is the space of interactions; :meth:`Invariants.project`
    centres along every axis (double centring for two axes), in ``O(n)``.

    Parameters
    ----------
    shape : tuple of int
        Shape of the table (any number of axes).

    Returns
    -------
    Invariants
        With one row per margin entry (the sums along every axis but one,
        axis by axis) and values unset.

    References
    ----------
    Cho & Awan, Prop. 32 (tables with invariant one-way margins).

    Examples
    --------
    >>> import numpy as np
    >>> from invariantdp.invariants import one_way_margins
    >>> one_way_margins((2, 2)).apply(np.array([[3, 1], [2, 4]]))
    array([4., 6., 5., 5.])
    >>> one_way_margins((2, 2)).projector() * 4
    array([[ 1., -1., -1.,  1.],
           [-1.,  1.,  1., -1.],
           [-1.,  1.,  1., -1.],
           [ 1., -1., -1.,  1.]])
    """
    return Invariants._from_structure(*margins_structure(shape))


def totals(labels) -> Invariants:
    """Invariants fixing the total of every group of cells.

    Parameters
    ----------
    labels : array_like of int or str
        One group label per cell; its shape is the data shape.  Row ``g`` of
        ``C`` is the indicator of the ``g``-th smallest label.

    Returns
    -------
    Invariants
        With ``structure`` ``{"kind": "totals"}``, so projection onto the null
        space is within-group centring, ``O(n)``.

    References
    ----------
    Gao, Gong & Yu (2022), Example 3 (a single total) and Sec. 5.1 (state
    totals of county counts).

    Examples
    --------
    >>> from invariantdp.invariants import totals
    >>> inv = totals([1, 1, 2, 2, 2])
    >>> inv.apply([3, 4, 1, 1, 1])
    array([7., 3.])
    >>> inv.rank
    2
    """
    return Invariants._from_structure(*totals_structure(labels))


def nested_totals(levels) -> Invariants:
    """Invariants fixing the totals at every level of a hierarchy.

    Parameters
    ----------
    levels : sequence of array_like
        Label arrays, coarsest first, each with one label per cell (e.g.
        state, county and tract of every block).  A group at level ``j`` is
        a path ``(levels[0], ..., levels[j])``, so labels may repeat across
        parents (county ``001`` of two states are two counties).

    Returns
    -------
    Invariants
        Rows: the totals of level 0, then level 1, ...  ``C`` is rank
        deficient (coarse totals are sums of fine ones): ``rank`` is the number
        of finest groups, and the projection onto the null space is centring
        within the finest groups, ``O(n)``.

    References
    ----------
    Bailie, Gong & Meng, Sec. 6.1 (the hierarchy of Census geography and the
    invariants of the 2020 TopDown algorithm).

    Examples
    --------
    >>> from invariantdp.invariants import nested_totals
    >>> state = [0, 0, 0, 1, 1]
    >>> county = [0, 0, 1, 0, 0]
    >>> inv = nested_totals([state, county])
    >>> inv.apply([1, 2, 3, 4, 5])
    array([6., 9., 3., 3., 9.])
    >>> inv.rank
    3
    """
    return Invariants._from_structure(*nested_structure(levels))


def null_space_projector(invariants: Invariants) -> splinalg.LinearOperator:
    """The projector onto ker C as a ``scipy.sparse.linalg.LinearOperator``.

    It applies :meth:`Invariants.project`, so it costs ``O(n)`` per product for
    structured invariants and never stores an ``n x n`` matrix.

    Parameters
    ----------
    invariants : Invariants
        The invariants ``C x = c``; only ``C`` is used.

    Returns
    -------
    scipy.sparse.linalg.LinearOperator
        Symmetric ``n x n`` operator (``n`` cells) with ``P @ v`` the
        orthogonal projection of ``v`` onto ker C.

    Raises
    ------
    TypeError
        If ``invariants`` is not an :class:`Invariants`.

    References
    ----------
    Cho & Awan, Prop. 26 (projecting the noise onto the span of the
    sensitivity space, which is ker C for one-way margins, Prop. 32);
    Gao, Gong & Yu, Sec. 4.

    Examples
    --------
    >>> import numpy as np
    >>> from invariantdp.invariants import null_space_projector, one_way_margins
    >>> P = null_space_projector(one_way_margins((2, 3)))
    >>> np.allclose(P @ (P @ np.arange(6.0)), P @ np.arange(6.0))
    True
    """
    if not isinstance(invariants, Invariants):
        raise TypeError(f"`invariants` must be an Invariants, got {type(invariants).__name__}.")
    n = invariants.n_cells

    def mv(v):
        return invariants.project(np.asarray(v, dtype=float).reshape(-1))

    def mm(V):
        return invariants.project(np.asarray(V, dtype=float).T).T

    return splinalg.LinearOperator((n, n), matvec=mv, rmatvec=mv, matmat=mm, dtype=float)


def _cells_shape(cells) -> tuple[int, ...]:
    """The data shape of ``cells``: a count, a shape, or an object with ``.shape``."""
    if isinstance(cells, numbers.Integral) and not isinstance(cells, bool):
        return check_shape("cells", (int(cells),))
    if isinstance(cells, tuple):
        return check_shape("cells", cells)
    if isinstance(cells, pd.Index | pd.Series | pd.DataFrame | np.ndarray):
        return check_shape("cells", cells.shape)
    raise TypeError(
        "`cells` must be a number of cells, a shape, or the table (a pandas object or array), "
        f"got {type(cells).__name__}."
    )


def grand_total(cells, value=None) -> Invariants:
    """Invariants fixing the total of every cell (a state's population, say).

    Parameters
    ----------
    cells : int, tuple of int, pandas object or array
        The number of cells, the shape of the data, or the table itself (only
        its shape is used: a ``Series`` of ``n`` counts, a ``DataFrame``
        table).
    value : float, optional
        The published total; without it, fill it in from data with
        :meth:`Invariants.of`.

    Returns
    -------
    Invariants
        One row (the sum of all cells), of kind ``"totals"`` (an ``O(n)``
        projection onto its null space).

    References
    ----------
    Gao, Gong & Yu (2022), Example 3 (a single total); Bailie, Gong & Meng,
    Sec. 6.1 (the state populations of the 2020 Census are invariant).

    Examples
    --------
    >>> import pandas as pd
    >>> from invariantdp.invariants import grand_total
    >>> counts = pd.Series([51, 47, 20], index=pd.Index(["Ada", "Bay", "Cole"], name="county"))
    >>> inv = grand_total(counts, 120)
    >>> inv.values.tolist(), inv.n_cells, inv.kind
    ([120.0], 3, 'totals')
    >>> grand_total((2, 3)).of([[1, 2, 3], [4, 5, 6]]).values.tolist()
    [21.0]
    """
    inv = totals(np.zeros(_cells_shape(cells), dtype=np.int64))
    if value is None:
        return inv
    if not isinstance(value, numbers.Real) or isinstance(value, bool) or not np.isfinite(value):
        raise InvariantDPError(f"`value` ({format_value(value)}) must be a finite number.")
    return inv.with_values([value])


def _cell_labels(cells, by) -> tuple[tuple[int, ...], pd.DataFrame]:
    """The data shape and, per cell (C order), its labels on the levels ``by``."""
    if isinstance(cells, pd.DataFrame):
        # cell (i, j) of a table carries the labels of row i and of column j
        r, c = cells.shape
        rows = cells.index.to_frame(index=False).iloc[np.repeat(np.arange(r), c)]
        cols = cells.columns.to_frame(index=False).iloc[np.tile(np.arange(c), r)]
        frame = pd.concat([rows.reset_index(drop=True), cols.reset_index(drop=True)], axis=1)
        shape = cells.shape
    elif isinstance(cells, pd.Series | pd.Index):
        index = cells.index if isinstance(cells, pd.Series) else cells
        frame = index.to_frame(index=False)
        shape = (len(index),)
    else:
        raise TypeError(
            f"`cells` must be a labelled table (a pandas Series, DataFrame or Index), got "
            f"{type(cells).__name__}."
        )
    names = [n for n, given in zip(frame.columns, _level_names(cells), strict=True) if given]
    for level in by:
        if level not in names:
            raise InvariantDPError(
                f"`by` ({format_value(level)}) must name a level of the table's labels {names}."
            )
    return shape, frame[by]


def _level_names(cells) -> list[bool]:
    """Whether each level of the table's labels is named (unnamed ones cannot be grouped by)."""
    axes = [cells.index, cells.columns] if isinstance(cells, pd.DataFrame) else [cells]
    axes = [a.index if isinstance(a, pd.Series) else a for a in axes]
    return [n is not None for a in axes for n in a.names]


def group_totals(cells, by, values=None) -> Invariants:
    """Invariants fixing the total of each group of cells of a labelled table.

    The groups are the cells sharing their labels on the levels ``by`` (every
    county of a county x sex x age table), like ``groupby(level=by).sum()``.

    Parameters
    ----------
    cells : pandas.Series, pandas.DataFrame or pandas.Index
        The table (only its labels are used): a ``Series`` on a (Multi)Index,
        or a ``DataFrame`` whose index and columns name the levels.
    by : str or list of str
        The level names that define the groups.
    values : mapping, pandas.Series or array_like, optional
        The published totals: keyed by group label (a tuple for several
        levels), or in the order the groups first appear.  Without them, fill
        them in from data with :meth:`Invariants.of`.

    Returns
    -------
    Invariants
        One row per group, in order of first appearance, of kind
        ``"totals"`` (an ``O(n)`` projection onto its null space).

    References
    ----------
    Gao, Gong & Yu (2022), Sec. 5.1 (county totals as invariants); Bailie,
    Gong & Meng, Sec. 6.1.

    Examples
    --------
    >>> import pandas as pd
    >>> from invariantdp.invariants import group_totals
    >>> idx = pd.MultiIndex.from_product([["Ada", "Bay"], ["F", "M"]], names=["county", "sex"])
    >>> counts = pd.Series([51, 47, 20, 26], index=idx)
    >>> inv = group_totals(counts, "county", {"Bay": 46, "Ada": 98})
    >>> inv.values.tolist(), inv.apply(counts.to_numpy()).tolist()
    ([98.0, 46.0], [98.0, 46.0])
    >>> group_totals(counts, "sex").of(counts.to_numpy()).values.tolist()
    [71.0, 73.0]
    """
    levels = [by] if isinstance(by, str) else list(by)
    if not levels:
        raise InvariantDPError("`by` must name at least one level.")
    shape, frame = _cell_labels(cells, levels)
    keys = pd.MultiIndex.from_frame(frame) if len(levels) > 1 else pd.Index(frame.iloc[:, 0])
    codes, groups = pd.factorize(keys)
    inv = totals(codes.reshape(shape))
    if values is None:
        return inv
    if isinstance(values, Mapping | pd.Series):
        given = dict(values.items())
        known = set(groups)
        missing = [g for g in groups if g not in given]
        if missing:
            raise InvariantDPError(
                f"`values` has no total for the group {format_value(missing[0])}."
            )
        extra = [g for g in given if g not in known]
        if extra:
            raise InvariantDPError(
                f"`values` has a total for {format_value(extra[0])}, which is not a group of "
                f"the table's {levels}."
            )
        ordered = [given[g] for g in groups]
    else:
        ordered = np.asarray(values, dtype=float).reshape(-1)
        if ordered.size != len(groups):
            raise InvariantDPError(
                f"`values` must hold {len(groups)} totals (one per group of {levels}), got "
                f"{ordered.size}."
            )
    return inv.with_values(ordered)

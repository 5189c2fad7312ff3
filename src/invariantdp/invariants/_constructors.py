"""Constructors of the structured invariants, and the null-space projector as an operator."""

from __future__ import annotations

import numpy as np
from scipy.sparse import linalg as splinalg

from ._invariants import Invariants
from ._structure import margins_structure, nested_structure, totals_structure


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

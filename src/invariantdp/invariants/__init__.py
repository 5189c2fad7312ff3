"""Linear equality invariants ``C s = c`` published exactly with a release.

Besides the general linear map, three structures have constructors and an
``O(n)`` projection onto the null space of ``C`` that never forms an ``n x n``
(or even a dense ``k x n``) matrix:

* :func:`totals` -- group totals (one label per cell);
* :func:`nested_totals` -- totals at every level of a hierarchy
  (e.g. state, county, tract of every block);
* :func:`one_way_margins` -- the one-way margins of a table (for two axes the
  projection is double centring).

With their published values, in a table's own labels: :func:`grand_total`
(the total of every cell) and :func:`group_totals` (the total of each group of
a labelled table, e.g. every county).

The projection ``Pi_N`` onto ``N = ker C`` is what the subspace-DP mechanisms
of Gao, Gong & Yu (2022), Cor. 11 and 14-18, and the semi-DP Gaussian
mechanism of Cho & Awan (Algorithm 1) apply to the noise.

Consumers use the public methods of :class:`Invariants` for its structure:
:meth:`~Invariants.dense_matrix` (read-only dense ``C``),
:meth:`~Invariants.group_codes` (the finest group of every cell),
:meth:`~Invariants.projector_diagonal`, :meth:`~Invariants.as_rows`,
:meth:`~Invariants.without_values` (a copy sharing the cached structure) and
:meth:`~Invariants.same_map`.

Layout of the package: the class in :mod:`._invariants` (its projections and
null-space bases in its base class, :mod:`._null_space`), the constructors
in :mod:`._constructors`, the structure builders in :mod:`._structure`, the
null-space arithmetic (Helmert bases, SVD) in :mod:`._geometry`, document
reading in :mod:`._document` and value consistency in :mod:`._consistency`.
"""

from ._constructors import (
    grand_total,
    group_totals,
    nested_totals,
    null_space_projector,
    one_way_margins,
    totals,
)
from ._invariants import DENSE_LIMIT, MAX_DOCUMENT_CELLS, Invariants
from ._structure import Structure

# pickles written before the package split name the structure factory at this path
from ._structure import make_structure as _make_structure  # noqa: F401

__all__ = [
    "DENSE_LIMIT",
    "MAX_DOCUMENT_CELLS",
    "Invariants",
    "Structure",
    "grand_total",
    "group_totals",
    "nested_totals",
    "null_space_projector",
    "one_way_margins",
    "totals",
]

"""Estimates of the cells of one labelled release, and of sums of cells, with intervals.

:func:`invariantdp.estimate` (re-exported at the top level) runs the GLS
engine (:mod:`invariantdp._gls`) on one release: ``_cell_estimates`` holds
:func:`estimate` and :class:`CellEstimates`, ``_cell_sums`` turns labels and
selections into rows of weights, and ``_lattice_intervals`` the exact
intervals of discrete Gaussian noise on a lattice.
"""

from ._cell_estimates import CellEstimates, estimate
from ._cell_estimates import check_clip as check_clip
from ._cell_estimates import estimate_columns as estimate_columns
from ._cell_estimates import negative_count as negative_count

# isort: split
# Helpers the package's neighbours in invariantdp import from here, since a
# private module is imported only inside its package.  Not public (not in __all__).
from ._lattice_intervals import dg_variances as dg_variances
from ._lattice_intervals import half_widths as half_widths

# isort: split
from ._cell_sums import cell_selection_rows as cell_selection_rows

__all__ = ["CellEstimates", "estimate"]

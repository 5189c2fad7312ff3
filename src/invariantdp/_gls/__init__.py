r"""The constrained GLS engine: best linear unbiased estimates over a tree of units.

A general estimator, independent of the census: the unknowns are the finest
histograms of a tree of units on a product schema, observed through noisy
marginal queries and tied by exact equalities, structural zeros and linear
constraints.  It imports nothing of the package but its exceptions, so every
subpackage may use it; :func:`invariantdp.census.gls` (noisy measurement
files) and :func:`invariantdp.estimate` (one labelled release) are its two
clients.  They import from here, never from the modules below.

Modules, by what they hold:

* ``_problem`` -- the input: units, measurements, constraints (:class:`Problem`).
* ``_eigenspaces`` -- the joint eigenspaces of the marginal queries
  (:class:`EigenAlgebra`); ``_eigenspace_rules`` -- the per-eigenspace
  rules of the passes and segment sums over a level.
* ``_unit_information`` -- a unit's own information and pinned eigenspaces.
* ``_constraints`` -- structural zeros and other constraints: which units they
  affect, the subspace they span, the exact zeros of the variances.
* ``_generalized_gaussian`` and ``_low_rank`` -- the low-rank path for
  constraints that leave the eigen-algebra.
* ``_tree_passes`` -- the bottom-up and top-down passes (:func:`solve`,
  :class:`Solution`); ``_dask_passes`` -- the same passes as Dask tasks.
* ``_dense_factors`` -- the algebra of recoded queries and level-set zeros
  (:class:`FactorAlgebra`: a dense small factor times the eigenspaces of the
  other attributes); ``_block_passes`` -- the passes in it
  (:func:`solve_blocks`, :class:`BlockSolution`); ``_partitioned_passes`` --
  the same passes part by part, one subtree in memory at a time.
* ``_variances`` and ``_unit_pair_covariances`` -- variances and covariances
  of the estimates, read from a solution.
* ``_single_release`` -- the one-unit case: a single labelled release.

References
----------
Cumings-Menon & Zhuravlev (2024), "Least squares estimation for hierarchical
data", arXiv:2404.13164; Gong & Meng, Section 3 (conditioning on invariants).
"""

from ._block_passes import BlockSolution, block_path_refusal, solve_blocks
from ._constraints import constraints_of
from ._dask_passes import solve_dask
from ._dense_factors import FactorAlgebra, dense_attributes, query_rows
from ._eigenspace_rules import segment_starts, segment_sum
from ._eigenspaces import EigenAlgebra
from ._partitioned_passes import (
    partitioned_bottom_up,
    partitioned_top_down,
    replace_root,
    tree_dense,
)
from ._problem import Equality, Linear, Measurement, Problem, Zeros, onto_sole_children
from ._single_release import (
    estimate_release,
    marginal_constraints,
    query_estimates,
    release_problem,
    rows_estimates,
    solve_release,
)
from ._tree_passes import Solution, solve
from ._unit_information import own_info
from ._unit_pair_covariances import slice_cov
from ._variances import (
    group_sum_laws,
    laws_variances,
    query_cov,
    query_variances,
    query_weights,
    row_weights,
    rows_cov,
    rows_variances,
    sum_law,
    unit_law,
    variance_from,
)

__all__ = [
    "BlockSolution",
    "EigenAlgebra",
    "Equality",
    "FactorAlgebra",
    "Linear",
    "Measurement",
    "Problem",
    "Solution",
    "Zeros",
    "onto_sole_children",
    "block_path_refusal",
    "constraints_of",
    "dense_attributes",
    "estimate_release",
    "group_sum_laws",
    "laws_variances",
    "marginal_constraints",
    "own_info",
    "partitioned_bottom_up",
    "partitioned_top_down",
    "query_cov",
    "query_rows",
    "query_estimates",
    "query_variances",
    "query_weights",
    "row_weights",
    "release_problem",
    "replace_root",
    "rows_cov",
    "rows_variances",
    "rows_estimates",
    "segment_starts",
    "segment_sum",
    "slice_cov",
    "solve",
    "solve_blocks",
    "solve_dask",
    "solve_release",
    "sum_law",
    "tree_dense",
    "unit_law",
    "variance_from",
]

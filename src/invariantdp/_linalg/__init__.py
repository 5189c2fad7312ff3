"""Lattice and linear algebra shared by the mechanisms, the invariants and inference.

* ``_fixed_linalg`` -- bases, determinants and products whose results do not
  depend on the BLAS build (canonical row- and null-space bases).
* ``_kernel_lattice`` -- the integer kernel of an invariant matrix and its
  circuits, in exact arithmetic.
* ``_fibres`` -- fibres of linear invariants: cell classes, kernel moves,
  enumeration (the congenial samplers and the count likelihoods).
* ``_span`` -- the span of a sensitivity space, the projection onto it and
  the memory guard (:mod:`invariantdp.sensitivity` re-exports the public part).
* ``_affine`` -- the orthogonal projection onto ``{x : A x = a}`` and the
  least-norm solution of ``A x = a`` for a dense ``A`` (and where the package
  projects otherwise, and why).

Other packages import from here, never from the modules.
"""

from ._affine import AffineSubspace
from ._fibres import BOX_MAX, FIBRE_MAX, KernelMoves, cell_classes, enumerate_fibre, kernel_moves
from ._fixed_linalg import (
    fixed_det,
    fixed_matmul,
    independent_columns,
    null_space_basis,
    pivoted_columns,
    row_space_basis,
    tree_sum,
)
from ._kernel_lattice import MAX_CIRCUIT_COLUMNS, all_circuits, int_kernel_basis
from ._span import (
    MAX_BYTES,
    SpanNorm,
    check_bytes,
    project_onto_span,
    space_array,
    span_basis,
    span_projector,
    symmetric_points,
)

__all__ = [
    "BOX_MAX",
    "AffineSubspace",
    "FIBRE_MAX",
    "MAX_BYTES",
    "MAX_CIRCUIT_COLUMNS",
    "KernelMoves",
    "SpanNorm",
    "all_circuits",
    "cell_classes",
    "check_bytes",
    "enumerate_fibre",
    "fixed_det",
    "fixed_matmul",
    "independent_columns",
    "int_kernel_basis",
    "kernel_moves",
    "null_space_basis",
    "pivoted_columns",
    "project_onto_span",
    "row_space_basis",
    "space_array",
    "span_basis",
    "span_projector",
    "symmetric_points",
    "tree_sum",
]

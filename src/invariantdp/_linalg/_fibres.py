r"""Fibres of linear invariants: kernel lattices, circuits, cell classes, enumeration.

Both the conditional (congenial) samplers of
:func:`~invariantdp.mechanisms.conditional_release` and the latent-count samplers of
:mod:`invariantdp.inference.bayes` move on a *fibre* of the invariants,

.. math:: F = \{ s : A s = a \} \quad (\text{integer points for counts}),

by adding kernel vectors of :math:`A`.  This module is the one home of the
algebra they share:

* :func:`cell_classes` groups the cells whose columns of :math:`A` are
  identical (the cells of one total): inside a class the exchanges
  :math:`e_i - e_j` are kernel moves, and between classes only the
  class-level matrix :math:`\bar A` (one column per class) matters;
* the integer kernel of :math:`A` (a lattice basis, circuits, the Markov
  basis of all circuits, the rational reading of a floating-point kernel
  vector), in exact integer arithmetic, in :mod:`invariantdp._linalg._kernel_lattice`;
* :func:`kernel_moves` -- the moves of the congenial Gibbs sampler, grouped
  into class-disjoint batches;
* :func:`enumerate_fibre` -- every integer point of a bounded class-total
  fibre :math:`\{T : \bar A T = a,\ lo \le T \le hi\}`.

References
----------
P. Diaconis and B. Sturmfels (1998), *Algebraic algorithms for sampling from
conditional distributions*, Ann. Statist. 26, 363-397.
R. Gong and X.-L. Meng (2020), *Congenial differential privacy under mandated
disclosure*, FODS '20, Section 3.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from ._kernel_lattice import fundamental_circuits, int_kernel_basis

__all__ = [
    "BOX_MAX",
    "FIBRE_MAX",
    "CellClasses",
    "KernelMoves",
    "cell_classes",
    "enumerate_fibre",
    "kernel_moves",
]

#: :func:`enumerate_fibre` returns at most this many points (else None)
FIBRE_MAX = 1_000_000
#: :func:`enumerate_fibre` scans a box of free coordinates of at most this many points
BOX_MAX = 5_000_000
_CHUNK = 1 << 18


# ---------------------------------------------------------------------------
# cells with identical columns
# ---------------------------------------------------------------------------


class CellClasses(NamedTuple):
    """Cells grouped by identical columns of a matrix (see :func:`cell_classes`)."""

    #: class of every cell, shape (d,)
    codes: np.ndarray
    #: the cells of each class, in increasing order
    members: list[np.ndarray]
    #: the class-level matrix (one column per class: the column of its first cell)
    matrix: np.ndarray


def cell_classes(A: np.ndarray) -> CellClasses:
    """Group the columns of ``A`` into classes of identical columns.

    Columns are compared after rounding to 12 decimals, so that the same
    total computed in two ways falls into one class.  Classes are numbered in
    the lexicographic order of their (rounded) columns.

    Examples
    --------
    >>> import numpy as np
    >>> cls = cell_classes(np.array([[1, 1, 0, 1], [0, 0, 1, 0]]))
    >>> cls.codes.tolist(), [m.tolist() for m in cls.members]
    ([1, 1, 0, 1], [[2], [0, 1, 3]])
    >>> cls.matrix.tolist()
    [[0, 1], [1, 0]]
    """
    A = np.asarray(A)
    if A.shape[0] == 0:
        codes = np.zeros(A.shape[1], dtype=np.intp)
    else:
        _, codes = np.unique(np.round(A.T, 12), axis=0, return_inverse=True)
        codes = np.asarray(codes, dtype=np.intp).reshape(-1)
    members = [np.flatnonzero(codes == k) for k in range(int(codes.max()) + 1)]
    matrix = np.stack([A[:, m[0]] for m in members], axis=1)
    return CellClasses(codes, members, matrix)


# ---------------------------------------------------------------------------
# moves of the congenial Gibbs sampler
# ---------------------------------------------------------------------------


@dataclass
class KernelMoves:
    """Kernel moves of ``A``: exchanges inside classes and lifted class-level moves."""

    #: cells with identical columns of ``A`` (exchanges need a class of size >= 2)
    classes: list[np.ndarray]
    #: class of every cell
    class_of: np.ndarray
    #: kernel vectors of the class-level matrix (integer-valued for integer noise)
    class_moves: list[np.ndarray]
    #: groups of class moves with disjoint supports (updated together)
    groups: list[list[int]]

    @property
    def n_directions(self) -> int:
        return sum(len(c) - 1 for c in self.classes) + len(self.class_moves)


def kernel_moves(A: np.ndarray, *, integer: bool) -> KernelMoves:
    r"""The moves of the congenial Gibbs sampler on :math:`\{A s = a\}`.

    Cells are grouped by identical columns (:func:`cell_classes`); between
    classes the moves are an integer lattice basis of :math:`\ker \bar A`
    (:func:`int_kernel_basis`) together with the fundamental circuits, or
    for real-valued noise the circuits alone, duplicates (up to sign)
    removed.  Moves are grouped greedily into batches of disjoint class
    supports.

    Examples
    --------
    >>> import numpy as np
    >>> mv = kernel_moves(np.array([[1.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 1.0]]), integer=True)
    >>> len(mv.classes), len(mv.class_moves), mv.n_directions
    (2, 0, 2)
    """
    cls = cell_classes(A)
    Abar = cls.matrix
    if integer:
        cand = int_kernel_basis(Abar) + fundamental_circuits(Abar, integer=True)
    else:
        cand = fundamental_circuits(Abar, integer=False)
    moves: list[np.ndarray] = []
    for v in cand:
        if not np.any(v):
            continue
        if any(np.array_equal(v, w) or np.array_equal(v, -w) for w in moves):
            continue
        moves.append(v)
    groups: list[list[int]] = []
    used: list[set] = []
    for i, v in enumerate(moves):
        supp = set(np.flatnonzero(v).tolist())
        for g, u in zip(groups, used, strict=True):
            if not (supp & u):
                g.append(i)
                u |= supp
                break
        else:
            groups.append([i])
            used.append(set(supp))
    return KernelMoves(cls.members, cls.codes, moves, groups)


# ---------------------------------------------------------------------------
# enumeration of a bounded fibre
# ---------------------------------------------------------------------------


def enumerate_fibre(
    Abar: np.ndarray,
    a: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
    *,
    max_points: int = FIBRE_MAX,
    max_box: int = BOX_MAX,
) -> np.ndarray | None:
    """All integer ``T`` with ``Abar T = a`` and ``lo <= T <= hi``.

    ``Abar`` must have full row rank.  Free coordinates are the columns with
    the smallest ranges that complete a basis (greedy on descending range);
    the box of their values is scanned in vectorised chunks and the basic
    coordinates solved for, keeping integral in-range solutions.

    Returns
    -------
    numpy.ndarray, shape (n_points, K), or None
        None when the box has more than ``max_box`` points or the fibre more
        than ``max_points``.

    Examples
    --------
    >>> import numpy as np
    >>> T = enumerate_fibre(np.array([[1.0, 1.0]]), np.array([3.0]), np.zeros(2), np.full(2, 3.0))
    >>> sorted(T.tolist())
    [[0.0, 3.0], [1.0, 2.0], [2.0, 1.0], [3.0, 0.0]]
    """
    r, K = Abar.shape
    order = np.argsort(-(hi - lo), kind="stable")
    basic: list[int] = []
    for k in order:
        if np.linalg.matrix_rank(Abar[:, basic + [k]]) > len(basic):
            basic.append(int(k))
        if len(basic) == r:
            break
    basic_arr = np.array(sorted(basic), dtype=np.intp)
    free = np.setdiff1d(np.arange(K), basic_arr)
    inv = np.linalg.inv(Abar[:, basic_arr])
    sizes = (hi[free] - lo[free] + 1).astype(np.int64)
    if np.any(sizes <= 0):
        return np.zeros((0, K))
    box = int(np.prod(sizes.astype(object))) if free.size else 1
    if box > max_box:
        return None
    out, n_found = [], 0
    for start in range(0, box, _CHUNK):
        flat = np.arange(start, min(start + _CHUNK, box))
        TF = (
            np.stack(np.unravel_index(flat, tuple(sizes)), axis=1) + lo[free]
            if free.size
            else np.zeros((flat.size, 0))
        )
        TB = (a[None, :] - TF @ Abar[:, free].T) @ inv.T
        TBr = np.round(TB)
        ok = np.all(np.abs(TB - TBr) < 1e-6, axis=1)
        ok &= np.all((TBr >= lo[basic_arr]) & (TBr <= hi[basic_arr]), axis=1)
        T = np.empty((int(ok.sum()), K))
        T[:, free] = TF[ok]
        T[:, basic_arr] = TBr[ok]
        out.append(T)
        n_found += T.shape[0]
        if n_found > max_points:
            return None
    return np.concatenate(out) if out else np.zeros((0, K))

r"""The orthogonal projection onto an affine subspace :math:`\{x : A x = a\}` of dense ``A``.

One thin SVD of ``A`` gives an orthonormal basis ``Q`` of its row space and
the point of least norm :math:`x_0 = A^+ a` (in the row space); the projection
of ``v`` is :math:`v - Q^T Q v + x_0`, the null-space part of ``v`` moved to
the subspace (Gong & Meng 2020, Eq. 4.1: the L2 post-processing onto
:math:`S^*`).  The particular solutions of a system ``A x = a`` are read from
the same object.

Where the package projects otherwise, and why:

* :meth:`Invariants.project <invariantdp.invariants.Invariants.project>` --
  the null-space part :math:`\Pi_N v` of the invariants, ``O(n)`` for
  totals, nested totals and margins, which are never densified (10^7
  cells); for a general ``C`` it uses the canonical row basis below.
* the GLS engine (:mod:`invariantdp._gls`) -- the projection in the metric
  of the noise variances, across a tree of units, per eigenspace of the
  marginal queries; never a dense ``A``.
* the canonical bases :func:`~invariantdp._linalg.row_space_basis` and
  :func:`~invariantdp._linalg.null_space_basis` -- a function of the
  subspace alone, for wherever the basis feeds a seeded draw (the same
  release on every BLAS build); an exact echelon form that can take up to a
  second, where a projection or a particular solution, which do not depend on
  the basis chosen, need only the SVD here.

References
----------
Gong, R. and Meng, X.-L. (2020), "Congenial differential privacy under
mandated disclosure", Section 4 (Eq. 4.1); Golub & Van Loan, *Matrix
Computations*, Section 5.5 (the minimum-norm least squares solution by SVD).
"""

from __future__ import annotations

import numpy as np

__all__ = ["AffineSubspace"]


class AffineSubspace:
    r"""The affine subspace :math:`\{x : A x = a\}` of a dense ``A`` (``k x n``).

    Parameters
    ----------
    matrix : array_like, shape (k, n)
    values : array_like, shape (k,)
        For consistent equations; otherwise :attr:`point` is the least squares
        solution of least norm.
    rtol : float, optional
        Singular values below ``rtol`` times the largest count as zero
        (default ``max(k, n)`` times the machine epsilon, numpy's rank rule).

    Attributes
    ----------
    basis : numpy.ndarray, shape (rank, n)
        Orthonormal rows spanning the row space of ``A``.
    point : numpy.ndarray, shape (n,)
        :math:`A^+ a`, the point of the subspace nearest 0.

    References
    ----------
    Gong & Meng (2020), Eq. 4.1; Golub & Van Loan, Section 5.5.

    Examples
    --------
    >>> s = AffineSubspace([[1.0, 1.0]], [100.0])
    >>> s.point
    array([50., 50.])
    >>> s.project(np.array([42.0, 61.0]))
    array([40.5, 59.5])
    """

    def __init__(self, matrix, values, *, rtol: float | None = None):
        A = np.atleast_2d(np.asarray(matrix, dtype=float))
        a = np.asarray(values, dtype=float).reshape(-1)
        k, n = A.shape
        if a.size != k:
            raise ValueError(f"`values` has {a.size} entries; the matrix has {k} rows.")
        if k == 0 or not np.any(A):
            self.basis, self.point = np.zeros((0, n)), np.zeros(n)
            return
        U, s, Vt = np.linalg.svd(A, full_matrices=False)
        tol = (max(k, n) * np.finfo(float).eps if rtol is None else rtol) * s[0]
        r = int(np.sum(s > tol))
        self.basis = Vt[:r]
        self.point = self.basis.T @ ((U[:, :r].T @ a) / s[:r])

    @property
    def rank(self) -> int:
        return self.basis.shape[0]

    def project(self, v) -> np.ndarray:
        """The orthogonal projection of ``v`` (``(n,)``, or rows ``(m, n)``) onto the subspace."""
        v = np.asarray(v, dtype=float)
        Q = self.basis
        return v - (v @ Q.T) @ Q + self.point

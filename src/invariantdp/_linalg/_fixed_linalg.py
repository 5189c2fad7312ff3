r"""Linear algebra whose results do not depend on the BLAS build.

LAPACK returns *an* orthonormal basis of a subspace, rotated within it as the
BLAS kernels (OpenBLAS picks them by CPU) happen to round, and a pivoted QR
breaks ties between equal columns by rounding too.  Wherever such a choice
feeds a seeded draw, the same seed gives a different release on another
machine.  This module makes the choice from the subspace itself:

* :func:`rref` -- the reduced row echelon form of the row space of ``A``,
  computed exactly (fraction-free Gauss-Jordan on the exact integer
  multiples of the rows: every float is a dyadic rational) when its
  numerical rank agrees with the exact one, and from an SVD otherwise;
* :func:`row_space_basis`, :func:`null_space_basis` -- the orthonormal bases
  obtained by Gram-Schmidt, in order, of the rows of the echelon form (row
  space), or of the basis of ``ker A`` read off it (null space: one vector
  per free column ``f``, 1 at ``f`` and 0 at the other free columns);
* :func:`independent_columns` -- the first linearly independent columns of
  ``A`` (the pivot columns of the echelon form); :func:`pivoted_columns` --
  the columns a pivoted QR would choose, ties broken by the lowest index;
* :func:`fixed_matmul`, :func:`fixed_det`, :func:`tree_sum` -- products,
  determinants and sums computed with element-wise IEEE operations in a
  fixed order, so that their bits depend only on their inputs.

**What is guaranteed.**  When the exact and numerical ranks agree and the
exact work fits (``EXACT_WORK``; every space of the K-norm samplers and
every integer or dyadic matrix of moderate size), the echelon form is the
exact one rounded correctly, and the Gram-Schmidt runs in fixed-order
element-wise arithmetic: the basis is the same to the last bit on every
machine, for every generating set of the same subspace (rows permuted,
rescaled, repeated, or replaced by other combinations).  Otherwise (rows
with rounding noise, or larger spaces) the echelon form comes from an SVD
and the larger Gram-Schmidt from a QR, both by LAPACK: the basis is still
the same function of the subspace, with no rotation, sign or pivot left to
the BLAS, but its last bits may differ between builds.
"""

from __future__ import annotations

from fractions import Fraction
from math import gcd

import numpy as np

__all__ = [
    "EXACT_WORK",
    "fixed_det",
    "fixed_matmul",
    "independent_columns",
    "null_space_basis",
    "pivoted_columns",
    "row_space_basis",
    "rref",
    "tree_sum",
]

#: Most work of the exact echelon form and of the fixed-order Gram-Schmidt, in
#: passes over one array element (a few nanoseconds; Python integers count 64):
#: about a second.
EXACT_WORK = 10**8
# elements of the temporaries of fixed_matmul
_BLOCK_ELEMENTS = 2**22
# float arithmetic on integers is exact below 2**53: products of entries below 2**26
_FLOAT_EXACT = 2.0**26
# a Python-integer operation costs about this many float ones
_OBJECT_COST = 64
# a column of an orthonormal row basis is a pivot when its part orthogonal to the
# earlier pivots' columns has norm above this (it is at most 1)
_PIVOT_TOL = 1e-8
# squared norms this close (relative) are tied: far above rounding, far below real gaps
_TIE = 1e-9


# --- fixed-order arithmetic ----------------------------------------------------------


def tree_sum(X, axis: int = -1) -> np.ndarray:
    """Sum along ``axis`` by pairwise halving, with element-wise adds only.

    ``numpy.sum`` and BLAS may order a sum differently on different CPUs; here
    the order depends on the length alone.
    """
    X = np.moveaxis(np.asarray(X, dtype=float), axis, 0)
    n = X.shape[0]
    if n == 0:
        return np.zeros(X.shape[1:])
    while n > 1:
        h = n // 2
        Y = X[:h] + X[h : 2 * h]
        X = np.concatenate([Y, X[2 * h :]]) if n % 2 else Y
        n = X.shape[0]
    return X[0]


def fixed_matmul(A, B) -> np.ndarray:
    """``A @ B`` for 2-D float arrays, each entry a :func:`tree_sum` of exact products."""
    A = np.asarray(A, dtype=float)
    B = np.asarray(B, dtype=float)
    n, k = A.shape
    m = B.shape[1]
    out = np.empty((n, m))
    step = max(1, _BLOCK_ELEMENTS // max(1, k * m))
    for i in range(0, n, step):
        out[i : i + step] = tree_sum(A[i : i + step, :, None] * B[None, :, :], axis=1)
    return out


def fixed_det(X) -> np.ndarray:
    """Determinants of a stack ``(N, s, s)`` by Gaussian elimination with partial pivoting,
    in element-wise operations (LAPACK's LU rounds by the BLAS kernel)."""
    X = np.array(X, dtype=float)
    N, s, _ = X.shape
    det = np.ones(N)
    rows = np.arange(N)
    for i in range(s):
        p = i + np.argmax(np.abs(X[:, i:, i]), axis=1)  # ties: the first row
        swap = p != i
        if np.any(swap):
            top = X[rows, i].copy()
            X[rows, i] = X[rows, p]
            X[rows, p] = top
            det = np.where(swap, -det, det)
        piv = X[:, i, i]
        det = det * piv
        if i + 1 < s:
            safe = np.where(piv != 0.0, piv, 1.0)
            f = X[:, i + 1 :, i] / safe[:, None]
            X[:, i + 1 :, i:] -= f[:, :, None] * X[:, None, i, i:]
    return det


# --- exact echelon form -----------------------------------------------------------------


def _integer_rows(A: np.ndarray, rank: int):
    """Exact primitive integer multiples of the nonzero rows of ``A``, first entry positive,
    each once: float-valued when every entry is below ``2**53``, else Python integers
    (None when the elimination in Python integers would exceed ``EXACT_WORK``)."""
    A = A[np.any(A != 0.0, axis=1)]
    if A.shape[0] == 0:
        return A
    mant, ex = np.frexp(A)
    mant = np.ldexp(mant, 53)  # integers below 2**53: A = mant * 2**(ex - 53)
    low = np.abs(mant).astype(np.int64)
    low &= -low  # lowest set bit
    lowest = np.where(A != 0.0, ex - 53 + np.frexp(low.astype(float))[1] - 1, np.iinfo(int).max)
    shift = lowest.min(axis=1)  # A_i * 2**-shift_i is the smallest integer multiple
    top = np.where(A != 0.0, ex, np.iinfo(int).min).max(axis=1) - shift
    if np.all(top <= 53):
        ints = np.ldexp(A, -shift[:, None])
        g = np.gcd.reduce(np.abs(ints).astype(np.int64), axis=1)
        ints = ints / g[:, None]
        first = ints[np.arange(len(ints)), np.argmax(ints != 0.0, axis=1)]
        ints = ints * np.sign(first)[:, None] + 0.0  # + 0.0: no -0.0 (other bytes)
        seen: dict[bytes, int] = {}
        for i, row in enumerate(ints):
            seen.setdefault(row.tobytes(), i)
        return ints[sorted(seen.values())]
    if A.shape[0] * A.shape[1] * (rank + 1) * _OBJECT_COST > EXACT_WORK:
        return None
    out = set()
    for row in A:
        fr = [Fraction(float(x)) for x in row]
        den = 1
        for f in fr:
            den = den * f.denominator // gcd(den, f.denominator)
        ints = [f.numerator * (den // f.denominator) for f in fr]
        g = 0
        for v in ints:
            g = gcd(g, v)
        sign = 1 if next(v for v in ints if v) > 0 else -1
        out.add(tuple(sign * v // g for v in ints))
    return np.array(list(out), dtype=object)


def _exact_rref(A: np.ndarray, max_rank: int):
    """``(R, pivots)`` of the exact reduced row echelon form, or None.

    Fraction-free Gauss-Jordan on the integer rows (every entry stays an
    integer minor of ``A``): float arithmetic while the entries are below
    ``2**26`` (then every product and difference is exact), Python integers
    beyond.  None when the rank exceeds ``max_rank`` (``A`` carries rounding
    noise) or the work exceeds ``EXACT_WORK``.  ``R`` is correctly rounded.
    """
    A = _integer_rows(A, max_rank)
    if A is None:
        return None
    m, d = A.shape
    if m == 0:
        return np.zeros((0, d)), []
    work = 0
    exact_float = A.dtype != object
    prev = 1
    pivots: list[int] = []
    r = 0
    for j in range(d):
        if r == m:
            break
        nz = np.flatnonzero(A[r:, j] != 0)
        if nz.size == 0:
            continue
        if r == max_rank:
            return None
        i = r + int(nz[0])
        if i != r:
            A[[r, i]] = A[[i, r]]
        if exact_float and np.max(np.abs(A)) >= _FLOAT_EXACT:
            A = np.array([[int(v) for v in row] for row in A], dtype=object)
            prev, exact_float = int(prev), False
        work += m * d * (1 if exact_float else _OBJECT_COST)
        if work > EXACT_WORK:
            return None
        p = A[r, j]
        others = np.concatenate([np.arange(r), np.arange(r + 1, m)])
        B = A[others]
        B = p * B - B[:, j : j + 1] * A[r]
        A[others] = B / prev if exact_float else B // prev
        prev = p
        pivots.append(j)
        r += 1
    R = A[:r]
    piv = R[np.arange(r), pivots]
    if exact_float:
        R = R / piv[:, None]
    else:
        R = np.array([[v / p for v in row] for row, p in zip(R, piv, strict=True)], dtype=float)
    return R, pivots


def _svd_rref(Q: np.ndarray):
    """The reduced echelon form from the orthonormal rows ``Q`` of an SVD (rounding only)."""
    rank = Q.shape[0]
    # pivots in order: the first column not in the span of the earlier pivots' columns;
    # W holds the columns' parts orthogonal to those (their norms, not a running
    # difference, decide: a difference of O(1) terms would leave 1e-16 behind)
    W = Q.copy()
    pivots: list[int] = []
    for _ in range(rank):
        left = np.sum(W * W, axis=0)
        left[pivots] = 0.0
        cand = np.flatnonzero(left > _PIVOT_TOL**2)
        j = int(cand[0]) if cand.size else int(np.argmax(left))
        u = W[:, j] / np.sqrt(left[j])
        W -= np.outer(u, u @ W)
        pivots.append(j)
    order = np.argsort(pivots)
    pivots = [pivots[k] for k in order]
    R = np.linalg.solve(Q[:, pivots], Q)
    R[:, pivots] = np.eye(rank)
    return R, pivots


def rref(A, *, tol: float | None = None) -> tuple[np.ndarray, list[int]]:
    """The reduced row echelon form of the row space of ``A``: ``(R, pivots)``.

    ``R`` has one row per dimension, 1 at its pivot column and 0 at the
    others; it depends on the row space only.  Computed exactly when the
    exact rank equals the numerical one (singular values above ``tol``) and
    the work fits ``EXACT_WORK``, else from an SVD (module notes).
    """
    A = np.asarray(A, dtype=float)
    m, d = A.shape
    if m == 0 or not np.any(A):
        return np.zeros((0, d)), []
    # the numerical rank, as before the exact form: LAPACK's count of singular values
    # above tol changes with the BLAS only for one within rounding of tol
    _, s, Vt = np.linalg.svd(A, full_matrices=False)
    if tol is None:
        tol = max(m, d) * np.finfo(float).eps * s[0]
    rank = int(np.sum(s > tol))
    if rank and m * d * (rank + 1) <= 4 * EXACT_WORK:  # the exact form counts its own work
        exact = _exact_rref(A, rank)
        if exact is not None:
            return exact
    return _svd_rref(Vt[:rank])


def independent_columns(A, *, tol: float | None = None) -> np.ndarray:
    """The first linearly independent columns of ``A`` (the pivots of :func:`rref`), sorted."""
    return np.asarray(rref(A, tol=tol)[1], dtype=np.intp)


def pivoted_columns(A) -> np.ndarray:
    """Columns of ``A`` chosen like a pivoted QR's, ties broken by the lowest index.

    At each step the column with the largest part orthogonal to the columns
    chosen so far; columns within a relative ``1e-9`` of the largest count
    as tied (LAPACK breaks such ties, common between equal integer columns,
    by rounding, so its pivots change with the BLAS build).  Stops at the
    numerical rank; returns the columns in the order chosen.
    """
    A = np.asarray(A, dtype=float)
    if A.size == 0:
        return np.zeros(0, dtype=np.intp)
    s = np.linalg.svd(A, compute_uv=False)
    rank = int(np.sum(s > max(A.shape) * np.finfo(float).eps * s[0]))
    W = A.copy()
    chosen: list[int] = []
    for _ in range(rank):
        left = np.sum(W * W, axis=0)
        left[chosen] = -1.0
        j = int(np.flatnonzero(left >= (1.0 - _TIE) * left.max())[0])
        u = W[:, j] / np.sqrt(left[j])
        W -= np.outer(u, u @ W)
        chosen.append(j)
    return np.asarray(chosen, dtype=np.intp)


# --- Gram-Schmidt ---------------------------------------------------------------------


def _orthonormal_rows(R: np.ndarray) -> np.ndarray:
    """Gram-Schmidt of the rows of ``R`` in order (twice, for orthogonality to rounding).

    In fixed-order element-wise arithmetic within ``EXACT_WORK``; beyond, the
    Q factor of LAPACK's QR of ``R.T`` with the diagonal of ``R`` made
    positive (the same basis up to rounding).
    """
    k, d = R.shape
    if 8 * k * k * d > EXACT_WORK:
        Q, T = np.linalg.qr(R.T)
        return (Q * np.sign(np.diag(T))).T
    Q = np.empty((k, d))
    for i in range(k):
        v = R[i]
        for _ in range(2):
            if i:
                c = tree_sum(Q[:i] * v, axis=1)
                v = v - tree_sum(c[:, None] * Q[:i], axis=0)
        Q[i] = v / np.sqrt(tree_sum(v * v))
    return Q


def row_space_basis(A, *, tol: float | None = None) -> np.ndarray:
    """Orthonormal basis of the row space of ``A`` as the rows of an ``(s, d)`` array.

    Gram-Schmidt, in order, of the rows of :func:`rref`: row ``k`` lies in
    the span of the first ``k`` echelon rows, is 0 at their later pivots and
    positive at its own.
    """
    return _orthonormal_rows(rref(A, tol=tol)[0])


def null_space_basis(A, *, tol: float | None = None) -> np.ndarray:
    """Orthonormal basis of ``ker A`` as the columns of a ``(d, d - rank)`` array.

    Gram-Schmidt, in order of the free columns ``f`` of :func:`rref`, of the
    kernel vectors that are 1 at ``f``, 0 at the other free columns.
    """
    A = np.asarray(A, dtype=float)
    d = A.shape[1]
    if A.shape[0] == 0:
        return np.eye(d)
    R, pivots = rref(A, tol=tol)
    free = np.setdiff1d(np.arange(d), pivots)
    N = np.zeros((free.size, d))
    N[np.arange(free.size), free] = 1.0
    N[:, pivots] = -R[:, free].T
    return _orthonormal_rows(N).T

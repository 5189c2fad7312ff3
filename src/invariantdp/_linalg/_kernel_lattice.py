r"""The integer kernel of an invariant matrix, in exact arithmetic.

The moves of the fibre samplers (:mod:`invariantdp._linalg._fibres`) are kernel
vectors of :math:`A`; here is the algebra that finds them exactly:

* :func:`int_kernel_basis` -- a basis of the lattice
  :math:`\ker A \cap \mathbb Z^K`, in exact integer arithmetic;
* :func:`fundamental_circuits` -- one circuit per non-basic column of a
  pivoted basis; :func:`all_circuits` -- every circuit (minimal-support
  kernel vector) up to sign, which is a Markov basis for the totally
  unimodular matrices of totals, nested totals and margins (Diaconis &
  Sturmfels 1998);
* :func:`kernel_circuit` -- the kernel vector of a support, exact for an
  integer matrix;
* :func:`primitive_integer` -- the primitive integer vector on the ray of a
  floating-point kernel vector, with the package's one rational tolerance
  :data:`MAX_DENOMINATOR`.

References
----------
P. Diaconis and B. Sturmfels (1998), *Algebraic algorithms for sampling from
conditional distributions*, Ann. Statist. 26, 363-397.
"""

from __future__ import annotations

import itertools
from fractions import Fraction
from math import gcd

import numpy as np
from scipy import linalg

from ..exceptions import InvariantDPError
from ._fixed_linalg import pivoted_columns

__all__ = [
    "MAX_CIRCUIT_COLUMNS",
    "MAX_DENOMINATOR",
    "SNAP_TOLERANCE",
    "all_circuits",
    "fundamental_circuits",
    "int_kernel_basis",
    "kernel_circuit",
    "primitive_integer",
]

#: Reading a floating-point kernel vector of a *non-integer* matrix as rational: the nearest
#: fraction with denominator at most MAX_DENOMINATOR, accepted within SNAP_TOLERANCE
#: (relative).  Integer matrices never need it: their kernel vectors are computed exactly
#: (:func:`kernel_circuit`).  The pair is chosen so that a snap is both unique and
#: meaningful.  Two fractions with denominators <= Q differ by at least 1/Q**2, so the
#: nearest one is the true one when the float error is below 1/(2 Q**2); with Q = 1000 that
#: is 5e-7, far above both the ~1e-13 error of LAPACK kernel vectors and the 1e-8 tolerance.
#: And the ~3e5 fractions of [0, 1] with denominator <= 1000, each widened by 1e-8, cover
#: under 1% of the line, so an irrational ratio is refused, not rounded.  With
#: Q = 10**6 (the old congenial choice) the fractions are 1e-12 apart: every float lies
#: within any usable tolerance of one, so nothing would ever be refused (sqrt(2) becomes
#: 941664/665857), and with no tolerance check a wrong snap went unnoticed.
MAX_DENOMINATOR = 1000
SNAP_TOLERANCE = 1e-8
#: :func:`all_circuits` enumerates supports of at most this many class columns
MAX_CIRCUIT_COLUMNS = 18
#: kernel vectors are used in float64 arithmetic: larger integer entries are not exact
_MAX_EXACT = 2**53
_ZERO = 1e-12  # entries below this (relative to the largest) of a kernel vector are zero


# ---------------------------------------------------------------------------
# integer kernel vectors
# ---------------------------------------------------------------------------


def _is_integer_matrix(M: np.ndarray) -> bool:
    return bool(np.all(np.isfinite(M)) and np.all(M == np.round(M)))


def _exact_array(ints: list[int]) -> np.ndarray:
    """Python integers as an int64 array; refuse those that float64 cannot hold exactly."""
    big = max((abs(i) for i in ints), default=0)
    if big > _MAX_EXACT:
        raise InvariantDPError(
            f"the integer kernel of the invariants has an entry of size {big:.3g}, beyond "
            "2**53: moves along it cannot be represented exactly in float64, so the exact "
            "lattice samplers cannot be used for these invariants."
        )
    return np.array(ints, dtype=np.int64)


def _primitive(fracs: list[Fraction]) -> np.ndarray:
    """The primitive integer vector proportional to the rationals ``fracs`` (same signs)."""
    den = 1
    for f in fracs:
        den = den * f.denominator // gcd(den, f.denominator)
    ints = [int(f * den) for f in fracs]
    g = 0
    for i in ints:
        g = gcd(g, abs(i))
    return _exact_array([i // max(g, 1) for i in ints])


def primitive_integer(v: np.ndarray) -> np.ndarray | None:
    """The primitive integer vector on the ray of ``v`` (None if ``v`` is not rational).

    ``v`` is scaled so that its smallest non-zero entry has modulus 1, every
    entry is read as the nearest fraction with denominator at most
    :data:`MAX_DENOMINATOR`, and the result is cleared of denominators and of
    common factors; the sign of ``v`` is kept.  ``None`` (not rational) when
    an entry is further than :data:`SNAP_TOLERANCE` (relative) from its
    fraction.  For kernel vectors of integer matrices use the exact
    :func:`kernel_circuit`.

    Examples
    --------
    >>> primitive_integer(np.array([0.5, -1.0, 1.5])).tolist()
    [1, -2, 3]
    >>> primitive_integer(np.array([1.0, np.sqrt(2.0)])) is None
    True
    """
    v = np.asarray(v, dtype=float)
    mags = np.abs(v)
    if not np.any(mags > 0) or not np.all(np.isfinite(v)):
        return None
    nz = mags > _ZERO * mags.max()
    w = np.where(nz, v, 0.0) / mags[nz].min()
    fracs = [Fraction(float(x)).limit_denominator(MAX_DENOMINATOR) for x in w]
    if any(
        abs(float(f) - x) > SNAP_TOLERANCE * max(1.0, abs(x)) for f, x in zip(fracs, w, strict=True)
    ):
        return None
    return _primitive(fracs)


def _exact_kernel_line(M: np.ndarray) -> np.ndarray | None:
    """The primitive integer vector spanning ``ker M`` for an integer ``M`` (None unless 1-D).

    Gauss-Jordan elimination in exact rationals: no tolerance is involved.
    """
    rows = [[Fraction(int(round(x))) for x in row] for row in np.asarray(M, dtype=float)]
    n = M.shape[1]
    pivots: list[int] = []
    r = 0
    for c in range(n):
        p = next((i for i in range(r, len(rows)) if rows[i][c] != 0), None)
        if p is None:
            continue
        rows[r], rows[p] = rows[p], rows[r]
        lead = rows[r][c]
        rows[r] = [x / lead for x in rows[r]]
        for i in range(len(rows)):
            if i != r and rows[i][c] != 0:
                f = rows[i][c]
                rows[i] = [x - f * y for x, y in zip(rows[i], rows[r], strict=True)]
        pivots.append(c)
        r += 1
        if r == len(rows):
            break
    free = [c for c in range(n) if c not in pivots]
    if len(free) != 1:
        return None
    v = [Fraction(0)] * n
    v[free[0]] = Fraction(1)
    for i, c in enumerate(pivots):
        v[c] = -rows[i][free[0]]
    return _primitive(v)


def kernel_circuit(M: np.ndarray, support, orient) -> np.ndarray | None:
    """The primitive integer vector of ``ker M`` supported on ``support`` (if unique).

    ``M[:, support]`` must have a one-dimensional kernel; its primitive
    integer spanning vector is returned as a full-length int64 vector,
    signed to have a positive inner product with ``orient`` (a float vector
    over ``support``, e.g. a floating-point kernel vector).  For an
    integer-valued ``M`` the vector is computed exactly in rationals; else
    from the floating-point null space by :func:`primitive_integer`.  None
    when the kernel is not one-dimensional or (non-integer ``M``) not
    rational; :class:`~invariantdp.exceptions.InvariantDPError` when an
    entry exceeds ``2**53`` (not exact in float64).

    Examples
    --------
    >>> import numpy as np
    >>> M = np.array([[3.0, 5.0, 7.0]])
    >>> kernel_circuit(M, [0, 2], orient=[-1.0, 0.5]).tolist()
    [-7, 0, 3]
    """
    M = np.asarray(M, dtype=float)
    support = np.asarray(support, dtype=np.intp)
    sub = M[:, support]
    if _is_integer_matrix(sub):
        ints = _exact_kernel_line(sub)
    else:
        # any basis will do (not the canonical one of _fixed_linalg): only a one-dimensional
        # kernel is used, its line made a primitive integer vector and oriented below
        ns = linalg.null_space(sub) if sub.shape[0] else np.eye(support.size)
        ints = primitive_integer(ns[:, 0]) if ns.shape[1] == 1 else None
    if ints is None:
        return None
    if float(np.dot(ints, np.asarray(orient, dtype=float))) < 0:
        ints = -ints
    out = np.zeros(M.shape[1], dtype=np.int64)
    out[support] = ints
    return out


def _non_rational(what: str) -> InvariantDPError:
    return InvariantDPError(
        f"the invariants have a non-rational {what}: no integer kernel vector with "
        f"denominators up to {MAX_DENOMINATOR} within {SNAP_TOLERANCE:g}; the exact lattice "
        "samplers need integer structure (an integer-valued invariant matrix)."
    )


def int_kernel_basis(M: np.ndarray) -> list[np.ndarray]:
    r"""A basis of the integer lattice :math:`\{z \in \mathbb Z^K : M z = 0\}`.

    ``M`` must be integer-valued.  Column operations on ``M`` (mirrored on
    the identity) in exact Python integers bring it to echelon form; the
    columns of the transform beyond the rank span the lattice.  A pairwise
    Gauss size reduction then shortens the basis vectors, so that the moves
    built from them are short.

    Returns
    -------
    list of numpy.ndarray
        ``K - rank(M)`` float vectors with integer entries.

    Raises
    ------
    InvariantDPError
        If an entry exceeds ``2**53`` (not exact in float64).

    Examples
    --------
    >>> import numpy as np
    >>> [v.tolist() for v in int_kernel_basis(np.array([[1.0, 1.0, 1.0]]))]
    [[-1.0, 1.0, 0.0], [-1.0, 0.0, 1.0]]
    """
    rows, K = M.shape
    cols = [[int(round(M[i, j])) for i in range(rows)] for j in range(K)]
    U = [[int(i == j) for i in range(K)] for j in range(K)]  # U[j] = column j of U
    p = 0
    for i in range(rows):
        while True:
            nz = [j for j in range(p, K) if cols[j][i] != 0]
            if len(nz) <= 1:
                break
            jmin = min(nz, key=lambda j: abs(cols[j][i]))
            for j in nz:
                if j == jmin:
                    continue
                f = cols[j][i] // cols[jmin][i]
                cols[j] = [u - f * v for u, v in zip(cols[j], cols[jmin], strict=True)]
                U[j] = [u - f * v for u, v in zip(U[j], U[jmin], strict=True)]
        nz = [j for j in range(p, K) if cols[j][i] != 0]
        if nz:
            j = nz[0]
            cols[p], cols[j] = cols[j], cols[p]
            U[p], U[j] = U[j], U[p]
            p += 1
    basis = [_exact_array(U[j]).astype(float) for j in range(p, K)]
    # pairwise Gauss reduction: shorter basis vectors make shorter moves
    changed = True
    while changed:
        changed = False
        for i in range(len(basis)):
            for j in range(len(basis)):
                if i == j:
                    continue
                nj = basis[j] @ basis[j]
                f = np.round((basis[i] @ basis[j]) / nj)
                if f != 0:
                    cand = basis[i] - f * basis[j]
                    if cand @ cand < basis[i] @ basis[i]:
                        basis[i] = cand
                        changed = True
    return basis


def fundamental_circuits(M: np.ndarray, *, integer: bool) -> list[np.ndarray]:
    r"""One kernel vector of ``M`` per non-basic column of a pivoted QR basis.

    For the basis :math:`B` chosen as by pivoted QR (ties broken by the lowest
    column, :func:`~invariantdp._linalg._fixed_linalg.pivoted_columns`, so the same
    on every BLAS build) and a column :math:`j \notin B` (in increasing
    order), the vector :math:`e_j - M_B^{+} M_j` is the unique (up to
    scale) kernel vector supported on :math:`B \cup \{j\}`: the fundamental
    circuit of :math:`j`.  With ``integer`` it is returned as its primitive
    integer vector (positive at :math:`j`; computed exactly for an
    integer-valued ``M``, :func:`kernel_circuit`), else scaled to 1 at
    :math:`j` (exact, correctly rounded, for an integer-valued ``M``).

    Raises
    ------
    InvariantDPError
        With ``integer``, if a circuit of a non-integer ``M`` is not rational
        or a circuit has an entry beyond ``2**53`` (:func:`kernel_circuit`).

    Examples
    --------
    >>> import numpy as np
    >>> [v.tolist() for v in fundamental_circuits(np.array([[1.0, 2.0]]), integer=True)]
    [[2.0, -1.0]]
    """
    rows, K = M.shape
    # a pivoted QR's basis with ties broken by index (LAPACK breaks them by rounding,
    # so the moves, hence the sampler's draws, would change with the BLAS build)
    basic = pivoted_columns(M)
    exact = _is_integer_matrix(M)
    out = []
    for j in np.setdiff1d(np.arange(K), basic):
        support = np.sort(np.append(basic, j))
        if integer or exact:
            # B + {j} carries exactly one kernel line; positive at j like e_j - M_B^+ M_j
            ints = kernel_circuit(M, support, orient=(support == j).astype(float))
            if ints is None:
                raise _non_rational("kernel")
            # real-valued moves of an integer M: e_j - M_B^+ M_j exactly (correctly
            # rounded), not LAPACK's least squares, whose rounding changes with the BLAS
            # build and flips the ties between breakpoints of the line sampler
            v = ints.astype(float) if integer else ints / ints[j]
        else:
            y, *_ = linalg.lstsq(M[:, basic], M[:, j])
            v = np.zeros(K)
            v[j] = 1.0
            v[basic] = -y
            v[np.abs(v) < _ZERO] = 0.0
        out.append(v)
    return out


def all_circuits(A: np.ndarray, *, max_columns: int = MAX_CIRCUIT_COLUMNS) -> np.ndarray:
    r"""Every circuit of ``A``, one per :math:`\pm` pair, as primitive integer vectors.

    A circuit is a non-zero kernel vector of minimal support.  The supports
    are searched by size (zero columns are the circuits of size one), which
    takes :math:`\binom{m}{\le r+1}` null-space computations for ``m``
    columns of rank ``r``: ``A`` is meant to be a class-level matrix
    (:func:`cell_classes`).

    Returns
    -------
    numpy.ndarray of int64, shape (n_circuits, m)

    Raises
    ------
    InvariantDPError
        If ``A`` has more than ``max_columns`` columns and a non-trivial
        kernel, or a circuit is not rational or has an entry beyond ``2**53``.

    Examples
    --------
    >>> import numpy as np
    >>> c = all_circuits(np.array([[1.0, 1.0, 0.0], [0.0, 0.0, 1.0]]))
    >>> c.shape, (c * c[:, :1]).tolist()  # one circuit, shown with a positive first entry
    ((1, 3), [[1, -1, 0]])
    """
    A = np.asarray(A, dtype=float)
    k, m = A.shape
    r = np.linalg.matrix_rank(A) if k else 0
    if r == m:
        return np.zeros((0, m), dtype=np.int64)
    if m > max_columns:
        raise InvariantDPError(
            f"the invariants have {m} classes of cells with a non-trivial kernel between "
            f"them; circuits are enumerated for at most {max_columns}."
        )
    out = []
    integer = _is_integer_matrix(A)
    for size in range(2, min(r + 1, m) + 1):
        for S in itertools.combinations(range(m), size):
            ns = linalg.null_space(A[:, S]) if k else np.eye(size)
            if ns.shape[1] != 1:  # a cheap float screen; the circuit itself is exact
                continue
            # positive at its first cell (the sign of a float null space vector is
            # LAPACK's, which changes with the BLAS build)
            full = kernel_circuit(A, S, orient=np.eye(size)[0])
            if full is None:
                if integer:  # exactly, ker A[:, S] is not a single line
                    continue
                raise _non_rational("circuit")
            if np.count_nonzero(full) == size:  # else a smaller circuit, found at its size
                out.append(full)
    zero_cols = [j for j in range(m) if np.all(np.abs(A[:, j]) < _ZERO)] if k else list(range(m))
    for j in zero_cols:
        e = np.zeros(m, dtype=np.int64)
        e[j] = 1
        out.append(e)
    return np.array(out, dtype=np.int64).reshape(-1, m)

"""The span of a sensitivity space, the projection onto it, and the memory guard.

Re-exported by :mod:`invariantdp.sensitivity`, whose functions and K-norm
samplers (and :mod:`invariantdp.distributions._polar_sampler`) share them.
"""

from __future__ import annotations

import abc

import numpy as np

from .._validation import InvariantDPError, check_finite_array
from ._fixed_linalg import row_space_basis

__all__ = [
    "MAX_BYTES",
    "check_bytes",
    "project_onto_span",
    "space_array",
    "span_basis",
    "span_projector",
    "SpanNorm",
    "symmetric_points",
]

#: Largest array, in bytes, that a function of this module or of the K-norm
#: mechanisms allocates; a larger request is refused before any allocation.
MAX_BYTES = 2 * 2**30


def check_bytes(nbytes, what: str, advice: str) -> None:
    """Refuse, before allocating, a computation whose arrays exceed ``MAX_BYTES``.

    ``nbytes`` may be an exact Python int of any size (a float estimate of a
    huge table would overflow before it could be compared).
    """
    if nbytes > MAX_BYTES:
        gib = nbytes / 2**30 if nbytes < 2**1000 else float("inf")
        raise InvariantDPError(
            f"{what} would need {gib:.3g} GiB of memory, more than the "
            f"{MAX_BYTES / 2**30:g} GiB limit; {advice}"
        )


def space_array(space, name: str = "space") -> np.ndarray:
    """``space`` as a checked 2-D float array, one difference vector per row."""
    S = check_finite_array(name, space)
    if S.ndim != 2 or S.shape[0] == 0:
        raise InvariantDPError(
            f"`{name}` must be a non-empty 2-D array (one difference vector per row), "
            f"got shape {S.shape}."
        )
    return S


def span_basis(space, *, tol: float | None = None) -> np.ndarray:
    """Orthonormal basis of ``span(S)`` as the columns of a ``(d, s)`` array.

    The basis depends on the subspace alone, never on the rows that generate
    it nor on the BLAS build, so that the K-norm samplers, whose draws are
    written in these coordinates, give the same release for a seed on every
    machine (an SVD basis is rotated within the span as the BLAS kernels
    round).  Column ``k`` is the ``k``-th vector of the Gram-Schmidt, in
    order, of the rows of the reduced row echelon form of ``S``: it lies in
    the span of the first ``k`` echelon rows, is 0 at their later pivot
    columns and positive at its own.  The echelon form is computed exactly
    (every float is a dyadic rational; the sensitivity spaces are integer)
    and rounded correctly, and the Gram-Schmidt runs in fixed-order
    element-wise arithmetic, so the basis is the same to the last bit for
    rows permuted, rescaled, repeated or recombined.  A space whose exact
    rank exceeds its numerical one (rows with rounding noise), or too large
    for exact arithmetic in about a second, takes its echelon form from an
    SVD: the same basis up to rounding (:mod:`invariantdp._linalg._fixed_linalg`).

    Parameters
    ----------
    space : array_like, shape (m, d)
        Sensitivity space, one difference vector per row.
    tol : float, optional
        Singular values of ``S`` at or below ``tol`` (default ``max(m, d) *
        eps * largest``) count as zero: they decide the dimension ``s``.

    Returns
    -------
    numpy.ndarray, shape (d, s)
        Orthonormal columns spanning ``span(S)``, ``s = rank(S)``.

    References
    ----------
    Cho & Awan, Lemma 29 (``K`` lives in ``span(S)``) and Prop. 26.

    Examples
    --------
    >>> from invariantdp.sensitivity import contingency_sensitivity_space, span_basis
    >>> span_basis(contingency_sensitivity_space(3, 3)).shape
    (9, 4)
    >>> span_basis([[2.0, -2.0, 0.0], [0.0, 3.0, -3.0], [1.0, 0.0, -1.0]]).T.round(6)
    array([[ 0.707107,  0.      , -0.707107],
           [-0.408248,  0.816497, -0.408248]])
    """
    return row_space_basis(space_array(space), tol=tol).T


def span_projector(space) -> np.ndarray:
    r"""The ``d x d`` orthogonal projector :math:`P = \sum_i u_i u_i^T` onto ``span(S)``.

    Parameters
    ----------
    space : array_like, shape (m, d)
        Sensitivity space, one difference vector per row.

    Returns
    -------
    numpy.ndarray, shape (d, d)
        ``B B^T`` for the orthonormal basis ``B`` of :func:`span_basis`.

    References
    ----------
    Cho & Awan, Algorithm 1 (line 3) and Example 8.

    Examples
    --------
    >>> from invariantdp.sensitivity import contingency_sensitivity_space, span_projector
    >>> 4 * span_projector(contingency_sensitivity_space(2, 2))
    array([[ 1., -1., -1.,  1.],
           [-1.,  1.,  1., -1.],
           [-1.,  1.,  1., -1.],
           [ 1., -1., -1.,  1.]])
    """
    S = space_array(space)
    d = S.shape[1]
    check_bytes(
        8.0 * d * d,
        f"the {d} x {d} projector",
        "use project_onto_span(v, space), which applies it without forming it.",
    )
    B = span_basis(S)
    return B @ B.T


def project_onto_span(v, space) -> np.ndarray:
    """Project ``v`` (shape ``(d,)`` or ``(m, d)``) onto ``span(S)`` (Cho & Awan, Prop. 26).

    Parameters
    ----------
    v : array_like, shape (d,) or (m, d)
        Vectors of the ambient space.
    space : array_like, shape (k, d)
        Sensitivity space, one difference vector per row.

    Returns
    -------
    numpy.ndarray
        The orthogonal projections, shaped like ``v`` (the projector is never
        formed: ``(v B) B^T``).

    References
    ----------
    Cho & Awan, Proposition 26 and Example 8.

    Examples
    --------
    >>> from invariantdp.sensitivity import contingency_sensitivity_space, project_onto_span
    >>> project_onto_span([1.0, 0, 0, 0], contingency_sensitivity_space(2, 2)).round(9).tolist()
    [0.25, -0.25, -0.25, 0.25]
    """
    B = span_basis(space)
    v = check_finite_array("v", v)
    if v.shape[-1] != B.shape[0]:
        raise InvariantDPError(f"`v` must have {B.shape[0]} coordinates, got shape {v.shape}.")
    return (v @ B) @ B.T


def symmetric_points(S: np.ndarray) -> np.ndarray:
    """The distinct nonzero points of ``S union -S``."""
    check_bytes(
        4.0 * S.nbytes,
        f"symmetrizing `space` ({S.shape[0]} vectors of {S.shape[1]} coordinates)",
        "pass fewer difference vectors (only one of each pair +-u is needed).",
    )
    P = np.unique(np.vstack([S, -S]), axis=0)
    return P[np.linalg.norm(P, axis=1) > 0]


class SpanNorm(abc.ABC):
    """What the hull norms share: span coordinates, the norm of ambient vectors, the
    sensitivity.  Subclasses set ``basis`` (``(d, s)``, orthonormal columns) and
    ``ambient_dim``, and compute :meth:`norm_of_coordinates`."""

    basis: np.ndarray
    ambient_dim: int

    def coordinates(self, v) -> np.ndarray:
        """``B^T v`` for ambient ``v`` of shape ``(d,)`` or ``(m, d)``."""
        v = np.asarray(v, dtype=float)
        if v.shape[-1] != self.ambient_dim:
            raise InvariantDPError(
                f"`v` must have {self.ambient_dim} coordinates, got shape {v.shape}."
            )
        return v @ self.basis

    @abc.abstractmethod
    def norm_of_coordinates(self, y) -> np.ndarray:
        """``||.||_K`` of points given by their span coordinates ``y`` (shape ``(..., s)``)."""

    def __call__(self, v) -> np.ndarray:
        """``||v||_K``; ``inf`` for vectors off ``span(S)``."""
        v = np.asarray(v, dtype=float)
        y = self.coordinates(v)
        off = np.linalg.norm(v - y @ self.basis.T, axis=-1)
        scale = np.maximum(np.linalg.norm(v, axis=-1), 1.0)
        out = self.norm_of_coordinates(y)
        return np.where(off <= 1e-9 * scale, out, np.inf)

    def sensitivity(self, space) -> float:
        """``sup_{u in space} ||u||_K`` (1 for the space K was built from, Prop. 30)."""
        return float(np.max(self(space_array(space))))

"""Sensitivity spaces, sensitivities and the K-norm of their convex hull.

A *sensitivity space* (Cho & Awan, Def. 4) is the finite, symmetric set
``S = {phi(X) - phi(X') : X, X' adjacent}``, stored here as a 2-D array with
one difference vector per row.  This module gives

* :func:`contingency_sensitivity_space` -- ``S_Semi`` of an ``r x c`` table
  with invariant one-way margins (Prop. 32);
* :func:`sensitivity` -- the ``l_p`` sensitivity ``sup_{u in S} ||u||_p`` (Def. 5);
* :func:`span_basis`, :func:`span_projector`, :func:`project_onto_span` --
  the span of ``S`` and the orthogonal projection onto it (Prop. 26, Example 8);
* :class:`HullNorm` / :func:`hull_norm` -- the norm ``||.||_K`` of
  ``K = Hull(S)`` on ``span(S)`` (Lemma 29), with exact uniform sampling in
  ``K`` (used by the K-norm mechanisms).
"""

from __future__ import annotations

import functools
import itertools
import math

import numpy as np
from scipy import optimize
from scipy.spatial import ConvexHull

from ._validation import InvariantDPError, check_finite_array, check_positive_int

__all__ = [
    "HullNorm",
    "contingency_sensitivity_space",
    "hull_norm",
    "project_onto_span",
    "sensitivity",
    "span_basis",
    "span_projector",
]


def contingency_sensitivity_space(r, c, *, include_zero: bool = False) -> np.ndarray:
    r"""Semi-DP sensitivity space of an ``r x c`` table with invariant one-way margins.

    The nonzero elements are the matrices :math:`v_{ijkl}` with ``+1`` at
    ``(i, j)`` and ``(k, l)``, ``-1`` at ``(i, l)`` and ``(k, j)``, for
    ``i != k``, ``j != l`` (Cho & Awan, Prop. 32, adjacency :math:`A_3`).

    Parameters
    ----------
    r, c : int
        Numbers of rows and columns, each ``>= 2``.
    include_zero : bool, optional
        Append the zero matrix, which Prop. 32 also lists.

    Returns
    -------
    numpy.ndarray, shape (r (r-1) c (c-1) / 2, r c)
        One flattened (C-order) difference table per row, each distinct
        element once (:math:`v_{ijkl} = v_{klij}`).

    References
    ----------
    Cho & Awan, Proposition 32 and Example 7.

    Examples
    --------
    >>> from invariantdp.sensitivity import contingency_sensitivity_space
    >>> contingency_sensitivity_space(2, 2)
    array([[-1.,  1.,  1., -1.],
           [ 1., -1., -1.,  1.]])
    """
    r = check_positive_int("r", r, minimum=2)
    c = check_positive_int("c", c, minimum=2)
    rows = np.array(list(itertools.permutations(range(r), 2)))
    cols = np.array(list(itertools.permutations(range(c), 2)))
    i, k = np.repeat(rows[:, 0], len(cols)), np.repeat(rows[:, 1], len(cols))
    j, l = np.tile(cols[:, 0], len(rows)), np.tile(cols[:, 1], len(rows))
    m = i.size
    out = np.zeros((m, r, c))
    ar = np.arange(m)
    out[ar, i, j] += 1.0
    out[ar, k, l] += 1.0
    out[ar, i, l] -= 1.0
    out[ar, k, j] -= 1.0
    out = np.unique(out.reshape(m, r * c), axis=0)
    if include_zero:
        out = np.vstack([out, np.zeros((1, r * c))])
    return out


def _space(space, name: str = "space") -> np.ndarray:
    S = check_finite_array(name, space)
    if S.ndim != 2 or S.shape[0] == 0:
        raise InvariantDPError(
            f"`{name}` must be a non-empty 2-D array (one difference vector per row), "
            f"got shape {S.shape}."
        )
    return S


def _p(p) -> float:
    if isinstance(p, str):
        if p.lower() in ("inf", "infinity"):
            return np.inf
        raise InvariantDPError(f"`p` ({p!r}) must be a real >= 1 or 'inf'.")
    if isinstance(p, bool):
        raise TypeError(f"`p` must be a real number >= 1, got bool ({p!r}).")
    p = float(p)
    if np.isnan(p) or p < 1:
        raise InvariantDPError(f"`p` ({p}) must be >= 1 (or inf).")
    return p


def sensitivity(space, p=2) -> float:
    r"""The :math:`\ell_p` sensitivity :math:`\Delta_p = \sup_{u\in S}\|u\|_p`.

    Parameters
    ----------
    space : array_like, shape (m, d)
        Sensitivity space, one difference vector per row.
    p : float or "inf", optional
        ``p >= 1``; ``numpy.inf`` or ``"inf"`` for the max norm.

    References
    ----------
    Cho & Awan, Definition 5; Sec. 5.1: :math:`\Delta_1, \Delta_2,
    \Delta_\infty = 4, 2, 1` for every ``r x c`` table.

    Examples
    --------
    >>> from invariantdp.sensitivity import contingency_sensitivity_space, sensitivity
    >>> S = contingency_sensitivity_space(3, 4)
    >>> [sensitivity(S, p) for p in (1, 2, "inf")]
    [4.0, 2.0, 1.0]
    """
    S = _space(space)
    return float(np.max(np.linalg.norm(S, ord=_p(p), axis=1)))


def span_basis(space, *, tol: float | None = None) -> np.ndarray:
    """Orthonormal basis of ``span(S)`` as the columns of a ``(d, s)`` array.

    Computed by the SVD of the stacked difference vectors; singular values
    below ``tol`` (default ``max(m, d) * eps * largest``) are dropped.

    Examples
    --------
    >>> from invariantdp.sensitivity import contingency_sensitivity_space, span_basis
    >>> span_basis(contingency_sensitivity_space(3, 3)).shape
    (9, 4)
    """
    S = _space(space)
    _, s, Vt = np.linalg.svd(S, full_matrices=False)
    if tol is None:
        tol = max(S.shape) * np.finfo(float).eps * (s[0] if s.size else 0.0)
    B = Vt[: int(np.sum(s > tol))].T
    # reproducible signs: the largest entry of each column is positive
    if B.size:
        idx = np.argmax(np.abs(B), axis=0)
        B = B * np.sign(B[idx, np.arange(B.shape[1])])
    return B


def span_projector(space) -> np.ndarray:
    r"""The ``d x d`` orthogonal projector :math:`P = \sum_i u_i u_i^T` onto ``span(S)``.

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
    B = span_basis(space)
    return B @ B.T


def project_onto_span(v, space) -> np.ndarray:
    """Project ``v`` (shape ``(d,)`` or ``(m, d)``) onto ``span(S)`` (Prop. 26)."""
    B = span_basis(space)
    v = check_finite_array("v", v)
    if v.shape[-1] != B.shape[0]:
        raise InvariantDPError(f"`v` must have {B.shape[0]} coordinates, got shape {v.shape}.")
    return (v @ B) @ B.T


class HullNorm:
    r"""The norm :math:`\|\cdot\|_K` of ``K = Hull(S)`` on ``span(S)`` (Lemma 29).

    ``S`` is any finite set of difference vectors that is symmetric
    (``u in S`` implies ``-u in S``; the negatives are added if missing).
    ``K`` lives in ``span(S)``, of dimension ``s``; points are mapped to
    coordinates ``y = B^T v`` in the orthonormal basis ``B`` of
    :func:`span_basis` and the convex hull of the coordinates is computed by
    Qhull (``scipy.spatial.ConvexHull``, which triangulates every facet).

    Then

    * ``||v||_K = max_f a_f . y / b_f`` over the facet inequalities
      ``a_f . y <= b_f`` (``inf`` when ``v`` is not in the span);
    * a uniform point of ``K`` is drawn exactly, without rejection: the cones
      from the centre over the triangulated facets are simplices that tile
      ``K``; pick one with probability proportional to its volume
      ``|det(vertices)| / s!`` and draw a uniform point in it with flat
      Dirichlet weights on its ``s + 1`` vertices (the centre and the facet's
      ``s`` vertices).

    Building the hull is the only expensive step (a few seconds for the
    9-dimensional spaces of 4 x 4 or 2 x 10 tables); :meth:`from_space`
    caches one instance per sensitivity space.

    Parameters
    ----------
    space : array_like, shape (m, d)
        The difference vectors.

    References
    ----------
    Cho & Awan, Lemma 29, Prop. 30, Theorem 31, Algorithms 2-3; Hardt &
    Talwar (2010) for the K-norm mechanism.

    Examples
    --------
    >>> import numpy as np
    >>> from invariantdp.sensitivity import HullNorm, contingency_sensitivity_space
    >>> K = HullNorm(contingency_sensitivity_space(2, 3))
    >>> K.dim
    2
    >>> float(K(np.array([[1.0, -1.0, 0.0], [-1.0, 1.0, 0.0]]).ravel()))
    1.0
    """

    def __init__(self, space):
        S = _space(space)
        S = np.unique(np.vstack([S, -S]), axis=0)
        S = S[np.linalg.norm(S, axis=1) > 0]
        if S.shape[0] == 0:
            raise InvariantDPError("`space` must contain a nonzero difference vector.")
        self.space = S
        self.ambient_dim = S.shape[1]
        self.basis = span_basis(S)
        self.dim = self.basis.shape[1]
        Y = S @ self.basis
        self.points = Y
        if self.dim == 1:
            m = float(np.max(np.abs(Y)))
            self.half_width = m
            self.volume = 2.0 * m
            self.equations = np.array([[1.0, -m], [-1.0, -m]])
            self.simplices = None
            self.simplex_cdf = None
        else:
            hull = ConvexHull(Y)
            eq = hull.equations  # a . y + b <= 0 inside, with unit a and b < 0
            _, first = np.unique(np.round(eq, 10), axis=0, return_index=True)
            self.equations = eq[np.sort(first)]
            simp = hull.simplices
            vol = np.abs(np.linalg.det(Y[simp])) / math.factorial(self.dim)
            keep = vol > 0
            self.simplices = simp[keep]
            cdf = np.cumsum(vol[keep])
            self.volume = float(cdf[-1])
            self.simplex_cdf = cdf / cdf[-1]
        # cube of Algorithm 3: K is inside prod [-c_i, c_i] in these coordinates
        self.cube = np.max(np.abs(Y), axis=0)

    @classmethod
    def from_space(cls, space) -> HullNorm:
        """A cached instance for ``space`` (same bytes, same object)."""
        S = _space(space)
        return _cached_hull(S.shape, S.tobytes())

    # --- the norm ---------------------------------------------------------------

    def coordinates(self, v) -> np.ndarray:
        """``B^T v`` for ambient ``v`` of shape ``(d,)`` or ``(m, d)``."""
        v = np.asarray(v, dtype=float)
        if v.shape[-1] != self.ambient_dim:
            raise InvariantDPError(
                f"`v` must have {self.ambient_dim} coordinates, got shape {v.shape}."
            )
        return v @ self.basis

    def norm_of_coordinates(self, y) -> np.ndarray:
        """``||.||`` of points given by their span coordinates ``y`` (shape ``(..., s)``)."""
        y = np.asarray(y, dtype=float)
        a, b = self.equations[:, :-1], self.equations[:, -1]
        return np.maximum(np.max((y @ a.T) / (-b), axis=-1), 0.0)

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
        return float(np.max(self(_space(space))))

    # --- uniform sampling in K ------------------------------------------------

    def sample_uniform(self, size=None, rng=None, *, method: str = "triangulation"):
        """Uniform points of ``K`` in span coordinates, shape ``(size, s)``.

        ``method="triangulation"`` (default) is exact and costs ``O(s^2)`` per
        draw.  ``method="rejection"`` is the cube rejection sampler of Cho &
        Awan, Algorithm 3 (lines 4-7), whose acceptance rate
        ``vol(K) / prod(2 c_i)`` collapses with the dimension.
        """
        from ._rng import as_generator

        gen = as_generator(rng)
        m = 1 if size is None else int(size)
        s = self.dim
        if method == "rejection":
            out = np.empty((0, s))
            rate = self.volume / float(np.prod(2.0 * self.cube))
            while out.shape[0] < m:
                batch = int(min(1e6, max(64, 1.2 * (m - out.shape[0]) / max(rate, 1e-9))))
                u = gen.uniform(-1.0, 1.0, size=(batch, s)) * self.cube
                ok = self.norm_of_coordinates(u) <= 1.0
                out = np.vstack([out, u[ok]])
            out = out[:m]
        elif method == "triangulation":
            if s == 1:
                out = gen.uniform(-self.half_width, self.half_width, size=(m, 1))
            else:
                idx = np.searchsorted(self.simplex_cdf, gen.random(m), side="right")
                idx = np.minimum(idx, self.simplex_cdf.size - 1)
                e = gen.standard_exponential((m, s + 1))
                w = e[:, :s] / e.sum(axis=1, keepdims=True)  # last weight: the centre
                out = np.einsum("ms,msd->md", w, self.points[self.simplices[idx]])
        else:
            raise InvariantDPError(f"`method` ({method!r}) must be 'triangulation' or 'rejection'.")
        return out[0] if size is None else out

    def __repr__(self) -> str:
        return (
            f"HullNorm(dim={self.dim}, ambient_dim={self.ambient_dim}, "
            f"vertices={len(self.points)}, volume={self.volume:.6g})"
        )


@functools.lru_cache(maxsize=32)
def _cached_hull(shape, data: bytes) -> HullNorm:
    return HullNorm(np.frombuffer(data, dtype=float).reshape(shape))


def hull_norm(v, space, *, method: str = "auto") -> np.ndarray:
    r"""The norm :math:`\|v\|_K` of ``K = Hull(S)`` on ``span(S)`` (Lemma 29).

    Parameters
    ----------
    v : array_like, shape (d,) or (m, d)
        Vectors in the ambient space; those off ``span(S)`` get ``inf``.
    space : array_like, shape (k, d)
        A finite symmetric set of difference vectors (negatives are added).
    method : {"auto", "facets", "lp"}
        ``"facets"`` evaluates the facet inequalities of the Qhull hull
        (cached); ``"lp"`` solves the linear programme
        ``min sum(lambda)`` s.t. ``S^T lambda = v``, ``lambda >= 0``, which
        needs no hull and works in any dimension.  ``"auto"`` uses facets
        up to dimension 9 and the LP beyond.

    Examples
    --------
    >>> import numpy as np
    >>> from invariantdp.sensitivity import contingency_sensitivity_space, hull_norm
    >>> S = contingency_sensitivity_space(3, 3)
    >>> float(hull_norm(2.5 * S[0], S))
    2.5
    >>> float(hull_norm(2.5 * S[0], S, method="lp"))
    2.5
    """
    S = _space(space)
    v = check_finite_array("v", v)
    if v.shape[-1] != S.shape[1]:
        raise InvariantDPError(f"`v` must have {S.shape[1]} coordinates, got shape {v.shape}.")
    if method not in ("auto", "facets", "lp"):
        raise InvariantDPError(f"`method` ({method!r}) must be 'auto', 'facets' or 'lp'.")
    if method == "auto":
        method = "facets" if np.linalg.matrix_rank(S) <= 9 else "lp"
    if method == "facets":
        return HullNorm.from_space(S)(v)
    Ssym = np.vstack([S, -S])
    V = v.reshape(-1, S.shape[1])
    out = np.empty(V.shape[0])
    for t, vec in enumerate(V):  # one LP per vector (not a hot path)
        res = optimize.linprog(
            np.ones(Ssym.shape[0]), A_eq=Ssym.T, b_eq=vec, bounds=(0, None), method="highs"
        )
        out[t] = res.fun if res.status == 0 else np.inf
    return out[0] if v.ndim == 1 else out

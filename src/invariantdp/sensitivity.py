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

**Size limits.**  Qhull's time and memory grow with the number of facets
of the triangulation -- roughly exponentially in ``s = dim span(S)``: on two
shared cores the contingency space of a 4 x 4 table (``s = 9``, 88 258
simplices) takes 4.4 s, 2 x 11 (``s = 10``) 47 s and 0.8 GB, 3 x 6 over
150 s.  So a hull is built only for ``s <= MAX_HULL_DIM`` (9) and at most
``MAX_HULL_POINTS[s]`` distinct vertices ``+-u`` (points on the unit sphere,
the worst case measured, build in a few seconds); larger ones are refused at
once, naming the linear programme of :func:`hull_norm` and the polar sampler
:class:`~invariantdp.distributions.LPHullNorm` (no facets; draws for
the contingency spaces up to ``(r-1)(c-1) = 16``, 5 x 5, in well under a
second).  No function here allocates more than ``MAX_BYTES`` (2 GiB).

:func:`check_bytes` (the memory guard) is internal to the package: the K-norm
mechanisms share it, it is not in ``__all__``.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
from scipy import optimize
from scipy.spatial import ConvexHull

from ._bounded_cache import bounded_cache
from ._linalg import (
    MAX_BYTES,
    SpanNorm,
    check_bytes,
    fixed_det,
    fixed_matmul,
    project_onto_span,
    space_array,
    span_basis,
    span_projector,
    symmetric_points,
    tree_sum,
)
from ._rng import as_generator
from ._validation import InvariantDPError, check_finite_array, check_positive_int, format_value

__all__ = [
    "MAX_BYTES",
    "MAX_HULL_DIM",
    "MAX_HULL_POINTS",
    "HullNorm",
    "contingency_sensitivity_space",
    "hull_norm",
    "project_onto_span",
    "sensitivity",
    "span_basis",
    "span_projector",
]


#: Largest dimension of ``span(S)`` whose hull ``K`` is computed (module notes).
MAX_HULL_DIM = 9
#: Most distinct vertices ``+-u`` of ``K``, by dimension of ``span(S)`` (module notes):
#: points on the unit sphere build in under ~5 s at these sizes (2-d: 2 million take
#: 19 s; 9-d: 102 take 8.9 s), and the contingency spaces with ``(r-1)(c-1) <= 9``
#: (72 vertices for 4 x 4, 90 for 2 x 10) are inside.
MAX_HULL_POINTS = {
    2: 500_000,
    3: 400_000,
    4: 80_000,
    5: 10_000,
    6: 1_100,
    7: 330,
    8: 150,
    9: 90,
}
# rows per block when a (rows x facets) or (rows x s x s) temporary is formed
_BLOCK_ELEMENTS = 2**22

_HULL_ALTERNATIVES = (
    "for the norm, hull_norm(v, space, method='lp') (one linear programme per vector, any "
    "dimension); for draws, the polar sampler (knorm(..., method='polar'), LPHullNorm of "
    "invariantdp.distributions), or a mechanism that needs no hull: semi_dp_gaussian, "
    "projected_gaussian / extended_gaussian, or lp_mechanism"
)


def _span_exceeds(S: np.ndarray, k: int) -> bool:
    """True when ``span(S)`` certainly has dimension ``> k``, decided without the SVD of ``S``.

    ``G S`` for a Gaussian ``(k + 1) x m`` matrix ``G`` has rank ``min(k + 1,
    rank S)`` almost surely, and rounding cannot lift its ``(k+1)``-th singular
    value to ``1e-8`` of the largest; a few milliseconds where the SVD of a
    large space takes seconds.
    """
    if min(S.shape) <= k:
        return False
    G = np.random.default_rng(0).standard_normal((k + 1, S.shape[0]))
    sv = np.linalg.svd(G @ S, compute_uv=False)
    return bool(sv[k] > 1e-8 * sv[0])


def _hull_refusal(n_points: int, dim) -> str | None:
    """Why the hull of ``n_points`` vertices spanning ``dim`` dimensions is not built.

    ``dim`` is an int, or a string such as ``"at least 10"`` from :func:`_span_exceeds`.
    """
    if isinstance(dim, str) or dim > MAX_HULL_DIM:
        return (
            f"span(S) has dimension {dim}, and the facets of K = Hull(S) are enumerated "
            f"up to dimension {MAX_HULL_DIM} only (their number explodes with the "
            "dimension: a 2 x 11 table, dimension 10, takes 47 s and 3 x 6 over 150 s)"
        )
    if dim >= 2 and n_points > MAX_HULL_POINTS[dim]:
        return (
            f"K = Hull(S) has {n_points} vertices in dimension {dim}, and its facets are "
            f"enumerated for at most {MAX_HULL_POINTS[dim]} vertices in that dimension"
        )
    return None


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

    Raises
    ------
    InvariantDPError
        If the space would need more than ``MAX_BYTES`` (2 GiB) to build: it
        has :math:`r^2 c^2 (r-1)(c-1)/2` entries (about 20 x 20 is the
        largest table; 1000 x 1000 would need petabytes).

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
    m = r * (r - 1) * c * (c - 1)
    # the (m, r, c) work array, its flattened copy and np.unique's sorted copy
    check_bytes(
        3 * 8 * m * r * c,
        f"the sensitivity space of an `r` x `c` = {format_value(r)} x {format_value(c)} table "
        f"({format_value(m // 2)} difference tables of {format_value(r * c)} cells)",
        "its l1, l2 and linf sensitivities are 4, 2 and 1 for every table (Sec. 5.1), "
        "and semi_dp_gaussian needs no enumeration.",
    )
    rows = np.array(list(itertools.permutations(range(r), 2)))
    cols = np.array(list(itertools.permutations(range(c), 2)))
    i, k = np.repeat(rows[:, 0], len(cols)), np.repeat(rows[:, 1], len(cols))
    j, l = np.tile(cols[:, 0], len(rows)), np.tile(cols[:, 1], len(rows))
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


def norm_order(p) -> float:
    """``p`` of an l_p norm as a float >= 1 (``"inf"`` allowed); internal, shared with the audit."""
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

    Returns
    -------
    float
        The largest ``l_p`` norm of a difference vector.

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
    S = space_array(space)
    return float(np.max(np.linalg.norm(S, ord=norm_order(p), axis=1)))


class HullNorm(SpanNorm):
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
    caches one instance per sensitivity space.  Larger hulls are refused
    (see the module notes on size limits).

    Parameters
    ----------
    space : array_like, shape (m, d)
        The difference vectors.

    Raises
    ------
    InvariantDPError
        Before building anything, if ``span(S)`` has dimension above
        ``MAX_HULL_DIM`` (9) or ``K`` has more than ``MAX_HULL_POINTS[s]``
        vertices: the facet enumeration would run for minutes to hours.

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
    >>> round(float(K(np.array([[1.0, -1.0, 0.0], [-1.0, 1.0, 0.0]]).ravel())), 9)
    1.0
    """

    def __init__(self, space):
        S = space_array(space)
        if _span_exceeds(S, MAX_HULL_DIM):
            raise InvariantDPError(
                f"`space` ({S.shape[0]} vectors of {S.shape[1]} coordinates) is too large for "
                f"the exact hull K = Hull(S): {_hull_refusal(0, f'at least {MAX_HULL_DIM + 1}')}"
                f". Use {_HULL_ALTERNATIVES}."
            )
        S = symmetric_points(S)
        if S.shape[0] == 0:
            raise InvariantDPError("`space` must contain a nonzero difference vector.")
        why = _hull_refusal(S.shape[0], np.linalg.matrix_rank(S))  # before the basis
        if why is not None:
            raise InvariantDPError(
                f"`space` ({S.shape[0]} distinct vectors +-u of {S.shape[1]} coordinates) is "
                f"too large for the exact hull K = Hull(S): {why}. Use {_HULL_ALTERNATIVES}."
            )
        basis = span_basis(S)
        self.space = S
        self.ambient_dim = S.shape[1]
        self.basis = basis
        self.dim = basis.shape[1]
        # fixed-order products and determinants: the triangulation and the volumes,
        # hence the draws of a seed, are the same to the bit on every BLAS build
        Y = fixed_matmul(S, basis)
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
            # |det| of (k, s, s) blocks: the volumes of the cones over the facets
            step = max(1, _BLOCK_ELEMENTS // (self.dim * self.dim))
            vol = np.concatenate(
                [np.abs(fixed_det(Y[simp[i : i + step]])) for i in range(0, len(simp), step)]
            ) / math.factorial(self.dim)
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
        S = space_array(space)
        return _cached_hull(S.shape, S.tobytes())

    # --- the norm ---------------------------------------------------------------

    def norm_of_coordinates(self, y) -> np.ndarray:
        """``||.||`` of points given by their span coordinates ``y`` (shape ``(..., s)``)."""
        y = np.asarray(y, dtype=float)
        a, b = self.equations[:, :-1], self.equations[:, -1]
        flat = y.reshape(-1, y.shape[-1])
        out = np.empty(flat.shape[0])
        # blocks of rows keep the (rows x facets) temporary small
        step = max(1, _BLOCK_ELEMENTS // len(b))
        for i in range(0, flat.shape[0], step):
            out[i : i + step] = np.max((flat[i : i + step] @ a.T) / (-b), axis=-1)
        res = np.maximum(out, 0.0).reshape(y.shape[:-1])
        return res[()] if res.ndim == 0 else res

    # --- uniform sampling in K ------------------------------------------------

    #: most expected (candidate x facet) evaluations of the rejection sampler
    MAX_REJECTION_WORK = 2e9

    def check_sample(self, size, method: str) -> tuple[int, float]:
        """The refusals of :meth:`sample_uniform`, before anything is drawn:
        ``(m, rate)``, the number of draws and the cube's acceptance rate."""
        if method not in ("triangulation", "rejection"):
            raise InvariantDPError(f"`method` ({method!r}) must be 'triangulation' or 'rejection'.")
        m = 1 if size is None else check_positive_int("size", size, minimum=0)
        # the exponentials (m, s+1), weights and output (m, s)
        check_bytes(
            3.0 * 8.0 * m * (self.dim + 1), f"`size` ({m}) uniform draws", "draw in batches."
        )
        rate = self.volume / float(np.prod(2.0 * self.cube))
        if method == "rejection" and m / rate * len(self.equations) > self.MAX_REJECTION_WORK:
            raise InvariantDPError(
                f"`method` ('rejection'): the cube rejection sampler accepts a fraction "
                f"{rate:.3g} of its candidates here, so {m} draws would test about "
                f"{m / rate:.3g} candidates against {len(self.equations)} facets (more "
                f"than {self.MAX_REJECTION_WORK:.3g} evaluations); use "
                "method='triangulation', which is exact and needs no rejection."
            )
        return m, rate

    def sample_uniform(self, size=None, rng=None, *, method: str = "triangulation"):
        """Uniform points of ``K`` in span coordinates, shape ``(size, s)``.

        ``method="triangulation"`` (default) is exact and costs ``O(s^2)`` per
        draw.  ``method="rejection"`` is the cube rejection sampler of Cho &
        Awan, Algorithm 3 (lines 4-7), whose acceptance rate
        ``vol(K) / prod(2 c_i)`` (``c`` the half-widths of ``K`` in the
        coordinates of :func:`span_basis`) collapses with the dimension (1/48
        for a 3 x 4 table, 0.0003 for 2 x 10); it is refused, before drawing, when
        the expected number of candidates times the number of facets exceeds
        ``MAX_REJECTION_WORK`` (2e9, a few seconds), and so is any ``size``
        whose arrays would exceed ``MAX_BYTES``.
        """
        m, rate = self.check_sample(size, method)
        s = self.dim
        gen = as_generator(rng)
        if method == "rejection":
            out = np.empty((0, s))
            while out.shape[0] < m:
                batch = int(min(1e6, max(64, 1.2 * (m - out.shape[0]) / max(rate, 1e-9))))
                u = gen.uniform(-1.0, 1.0, size=(batch, s)) * self.cube
                ok = self.norm_of_coordinates(u) <= 1.0
                out = np.vstack([out, u[ok]])
            out = out[:m]
        elif s == 1:
            out = gen.uniform(-self.half_width, self.half_width, size=(m, 1))
        else:
            idx = np.searchsorted(self.simplex_cdf, gen.random(m), side="right")
            idx = np.minimum(idx, self.simplex_cdf.size - 1)
            e = gen.standard_exponential((m, s + 1))
            w = e[:, :s] / tree_sum(e, axis=1)[:, None]  # last weight: the centre
            out = np.empty((m, s))
            # blocks keep the (rows, s, s) gathered vertices small
            step = max(1, _BLOCK_ELEMENTS // (s * s))
            for i in range(0, m, step):
                verts = self.points[self.simplices[idx[i : i + step]]]
                out[i : i + step] = tree_sum(w[i : i + step, :, None] * verts, axis=1)
        return out[0] if size is None else out

    def __repr__(self) -> str:
        return (
            f"HullNorm(dim={self.dim}, ambient_dim={self.ambient_dim}, "
            f"vertices={len(self.points)}, volume={self.volume:.6g})"
        )


@bounded_cache(maxsize=32)
def _cached_hull(shape, data: bytes) -> HullNorm:
    return HullNorm(np.frombuffer(data, dtype=float).reshape(shape))


def facets_within_limits(S: np.ndarray) -> bool:
    """True when :class:`HullNorm` would build the hull of ``S`` (internal, shared)."""
    if _span_exceeds(S, MAX_HULL_DIM):
        return False
    P = symmetric_points(S)
    return _hull_refusal(P.shape[0], np.linalg.matrix_rank(P) if P.shape[0] else 0) is None


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
        (cached; refused beyond the size limits of :class:`HullNorm`);
        ``"lp"`` solves the linear programme ``min sum(lambda)`` s.t.
        ``S^T lambda = v``, ``lambda >= 0``, which needs no hull and works in
        any dimension.  ``"auto"`` uses facets within the size limits and the
        LP beyond.

    Returns
    -------
    float or numpy.ndarray
        ``||v||_K`` per vector (a float for one vector), ``inf`` off the span.

    References
    ----------
    Cho & Awan, Lemma 29 (the norm of the hull on its span) and Prop. 30
    (the K-norm sensitivity of ``S`` in this norm is 1).

    Examples
    --------
    >>> import numpy as np
    >>> from invariantdp.sensitivity import contingency_sensitivity_space, hull_norm
    >>> S = contingency_sensitivity_space(3, 3)
    >>> round(float(hull_norm(2.5 * S[0], S)), 9)
    2.5
    >>> round(float(hull_norm(2.5 * S[0], S, method="lp")), 9)
    2.5
    """
    S = space_array(space)
    v = check_finite_array("v", v)
    if v.shape[-1] != S.shape[1]:
        raise InvariantDPError(f"`v` must have {S.shape[1]} coordinates, got shape {v.shape}.")
    if method not in ("auto", "facets", "lp"):
        raise InvariantDPError(f"`method` ({method!r}) must be 'auto', 'facets' or 'lp'.")
    if method == "auto":
        method = "facets" if facets_within_limits(S) else "lp"
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

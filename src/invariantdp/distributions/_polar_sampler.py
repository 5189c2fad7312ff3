r"""The polar sampler: uniform points of ``K = Hull(S)`` without its facets.

:class:`LPHullNorm` is the counterpart of
:class:`~invariantdp.sensitivity.HullNorm` for sensitivity spaces whose
facets Qhull cannot enumerate (``dim span(S) > MAX_HULL_DIM``, module notes
of :mod:`invariantdp.sensitivity`): the norm ``||.||_K`` is a linear
programme, and the uniform law on ``K`` -- the direction of the K-norm noise
``V = R U`` of :class:`~invariantdp.distributions._knorm_law.KNormNoise` -- is
drawn exactly by rejection in polar coordinates (class notes).

**Size limit.**  Each draw proposes about ``vol(R B) / vol(K)`` uniform
directions (``R B`` the ball through the farthest vertex), a number that
grows about 3-fold per dimension.  Measured for the contingency spaces
``S_Semi`` on two shared cores (mean time per draw; the count of proposals
is geometric, so single draws vary): 2 ms up to 4 x 5 (dimension 12), 0.06
to 0.16 s at dimension 16 (3 x 9, 2 x 17, 5 x 5), 0.7 to 2.7 s at dimension
18 (3 x 10, 4 x 7, 2 x 19; a 2 x 19 draw took 6.7 s), 7 s at dimension 20
(5 x 6).  So the sampler of a contingency space is run for ``(r-1)(c-1) <=
MAX_POLAR_DIM`` (16), where a release stays under a second; a larger one is
refused before drawing.  For other point sets every call is capped
(``LPHullNorm.MAX_DIRECTIONS``, ``LPHullNorm.MAX_LPS`` per draw).

References
----------
.. [1] Hardt, M. and Talwar, K. (2010). "On the geometry of differential
   privacy", STOC.
.. [2] Cho, J. and Awan, J. "Semi-DP and invariant statistics", Lemma 29,
   Prop. 30, Prop. 32, Theorem 31, Algorithm 2.
"""

from __future__ import annotations

import itertools

import numpy as np
from scipy import optimize

from .._bounded_cache import bounded_cache
from .._linalg import SpanNorm, fixed_matmul, space_array, symmetric_points, tree_sum
from .._rng import as_generator
from .._validation import InvariantDPError, check_finite_array, check_positive_int
from ..sensitivity import check_bytes, contingency_sensitivity_space, span_basis

__all__ = ["MAX_POLAR_DIM", "LPHullNorm"]

#: Largest dimension ``(r-1)(c-1)`` of a contingency space whose polar sampler runs
#: (module notes): 5 x 5, 3 x 9, 2 x 17 draw in 0.06 to 0.16 s on average.
MAX_POLAR_DIM = 16
#: Largest relative gap between the LP value of ``||.||_K`` and its dual certificate.
_LP_GAP = 1e-9
# elements of a (rows x vertices) temporary
_BLOCK_ELEMENTS = 2**22


def _points(space) -> np.ndarray:
    """The distinct nonzero points of ``S union -S`` (``space`` checked)."""
    return symmetric_points(space_array(space))


def _contingency_shape(P: np.ndarray) -> tuple[int, int] | None:
    """``(r, c)`` when the symmetric point set ``P`` is ``S_Semi`` of an ``r x c`` table."""
    m, d = P.shape
    for r in range(2, d // 2 + 1):
        c, rem = divmod(d, r)
        # S_Semi is symmetric (-v_ijkl = v_ilkj): r (r-1) c (c-1) / 2 points
        if rem or c < 2 or 2 * m != r * (r - 1) * c * (c - 1):
            continue
        if np.array_equal(contingency_sensitivity_space(r, c), np.unique(P, axis=0)):
            return r, c
    return None


def _lp_norm(P: np.ndarray, y: np.ndarray) -> float:
    """``||y||_K`` for ``K = Hull(P)`` (span coordinates) by the LP of ``hull_norm``.

    The simplex solution is checked against its dual certificate: the dual
    vector ``z`` normalised by ``max |P z|`` lies in the polar of ``K``, so
    ``z . y / max|P z|`` is a lower bound of the norm and the primal value an
    upper bound (when ``P^T lambda = y``); their relative gap and the relative
    residual of the equations must be below ``_LP_GAP`` (both are about 1e-14
    for the contingency spaces).
    """
    res = optimize.linprog(
        np.ones(P.shape[0]), A_eq=P.T, b_eq=y, bounds=(0, None), method="highs-ds"
    )
    if res.status == 2:
        return np.inf
    z = getattr(getattr(res, "eqlin", None), "marginals", None)
    if res.status != 0 or z is None:
        raise InvariantDPError(f"the linear programme of ||.||_K failed: {res.message}")
    upper = float(res.fun)
    denom = float(np.max(np.abs(P @ z)))
    lower = float(z @ y) / denom if denom > 0 else 0.0
    # the primal value bounds the norm from above only if P^T lambda = y holds
    residual = float(np.max(np.abs(P.T @ res.x - y)))
    floor = 64 * np.finfo(float).eps * float(np.max(np.abs(P)))  # rounding of a zero y
    if upper - lower > _LP_GAP * max(upper, 1e-300) or residual > max(
        _LP_GAP * float(np.max(np.abs(y))), floor
    ):
        raise InvariantDPError(
            f"the linear programme of ||.||_K did not certify its value: primal {upper!r}, "
            f"dual bound {lower!r}, residual {residual!r} (relative gap or residual above "
            f"{_LP_GAP:g})"
        )
    return upper


class LPHullNorm(SpanNorm):
    r"""The norm of ``K = Hull(S)`` by linear programming, with an exact polar sampler.

    The counterpart of :class:`~invariantdp.sensitivity.HullNorm` for
    sensitivity spaces whose facets cannot be enumerated
    (``s = dim span(S) > MAX_HULL_DIM``): nothing is built but the span
    basis, the norm is the linear programme of
    :func:`~invariantdp.sensitivity.hull_norm` (``method="lp"``), and uniform
    points of ``K`` are drawn exactly by rejection in polar coordinates.

    **The polar sampler.**  A uniform point of ``K`` is ``U = rho(theta)
    W^(1/s) theta`` with ``W ~ U(0, 1)`` and the direction ``theta`` of
    density proportional to ``rho(theta)^s`` on the unit sphere, where
    ``rho = 1 / ||theta||_K`` is the radial function of ``K``.  Directions
    are proposed uniformly on the sphere and accepted with probability
    ``(rho(theta) / R)^s``, ``R`` the largest vertex norm (``rho <= R``).
    The probability is the product of the steps
    ``(h_1 / R)^s (h_2 / h_1)^s (rho / h_2)^s`` of a chain of upper bounds
    ``R >= h_1 >= h_2 >= rho``, each evaluated only when the previous step
    accepts, so that the linear programme runs about once per draw:

    * any ``Y`` of the polar body ``K° = {Y : |<Y, u>| <= 1, u in S}``
      gives ``<Y, theta> <= ||theta||_K``.  For any ``S``, ``h_1`` uses
      ``Y = u / max_w |<u, w>|`` for the vertices ``u``;
    * for the contingency space ``S_Semi`` of an ``r x c`` table (Cho &
      Awan, Prop. 32; detected from the points), ``h_1`` uses the *cut*
      matrices ``1_B 1_A^T`` (a row set ``B``, a column set ``A``) and
      ``h_2`` the *Ferrers* matrices (0/1 matrices with nested row supports,
      which contain the cuts), whose 2 x 2 interaction contrasts all lie in
      ``{-1, 0, 1}``.  Their maxima are closed forms: ``max_B sum_j
      (sum_{i in B} X_ij)_+`` over the ``2^(r-1) - 1`` row sets, and the
      largest over the ``r!`` row orders of ``sum_j max_k`` (prefix sums of
      column ``j``), with ``r <= c`` after transposition.  The Ferrers bound
      equals ``||theta||_K`` on all but a fraction of about 1e-3 of the
      accepted directions (it misses the half-integral facets that appear
      from 4 x 4 on).

    The value ``||theta||_K`` of the linear programme is certified by its
    dual solution to a relative gap below 1e-9 (about 1e-14 in practice;
    a larger gap raises): a float perturbation of an exact law, like the
    rest of the floating-point mechanisms, which are simulations only.

    **Cost.**  The expected number of directions per draw is
    ``vol(R B) / vol(K)`` (``B`` the unit ball of the span), the steep part:
    measured for the contingency spaces, 3 for 3 x 3, 140 for 4 x 4,
    2 400 for 4 x 5 and 1.7e5 for 5 x 5.  One call tests at most
    ``MAX_DIRECTIONS`` (1e7) directions and solves at most ``MAX_LPS`` (2 000) linear
    programmes per requested draw; beyond, it raises.  For the
    contingency spaces the sampler is refused, before drawing, above
    ``MAX_POLAR_DIM`` (16; module notes).

    Parameters
    ----------
    space : array_like, shape (m, d)
        The difference vectors (negatives are added).

    Attributes
    ----------
    contingency_shape : tuple of int or None
        ``(r, c)`` when the points are ``S_Semi`` of an ``r x c`` table.
    radius : float
        The largest norm ``R`` of a vertex (2 for ``S_Semi``).
    volume : None
        ``vol(K)`` is not computed (it would need the facets).
    last_call : dict
        Counts of the last :meth:`sample_uniform` call: ``draws``,
        ``directions`` proposed and ``linear_programmes`` solved.

    References
    ----------
    Cho & Awan, Lemma 29, Prop. 30, Prop. 32, Theorem 31, Algorithm 2;
    Hardt & Talwar (2010) for the K-norm mechanism.

    Examples
    --------
    >>> import numpy as np
    >>> from invariantdp.distributions._polar_sampler import LPHullNorm
    >>> from invariantdp.sensitivity import contingency_sensitivity_space
    >>> K = LPHullNorm(contingency_sensitivity_space(3, 6))
    >>> K.dim, K.contingency_shape
    (10, (3, 6))
    >>> u = K.sample_uniform(2, rng=0)
    >>> bool(np.all(K.norm_of_coordinates(u) <= 1.0))
    True
    """

    #: most directions proposed per requested draw (5 x 5 needs 1.7e5 on average)
    MAX_DIRECTIONS = 10**7
    #: most linear programmes solved per requested draw (about 1 for ``S_Semi``)
    MAX_LPS = 2_000

    def __init__(self, space):
        S = _points(space)
        if S.shape[0] == 0:
            raise InvariantDPError("`space` must contain a nonzero difference vector.")
        self.space = S
        self.ambient_dim = S.shape[1]
        self.basis = span_basis(S)
        self.dim = self.basis.shape[1]
        # fixed-order arithmetic: the vertices and the bounds built from them are the
        # same to the bit on every BLAS build (span_basis is), so are a seed's draws
        self.points = fixed_matmul(S, self.basis)
        self.radius = float(np.sqrt(np.max(tree_sum(self.points**2, axis=1))))
        self.volume = None
        self.contingency_shape = _contingency_shape(S)
        self.last_call = {"draws": 0, "directions": 0, "linear_programmes": 0}
        # vertex duals u / max_w |<u, w>|: rows of the first bound for any S
        self._vertex_duals = None
        if self.contingency_shape is not None:
            self._setup_contingency(*self.contingency_shape)

    @classmethod
    def from_space(cls, space) -> LPHullNorm:
        """A cached instance for ``space`` (same bytes, same object)."""
        S = np.ascontiguousarray(check_finite_array("space", space))
        return _cached_lp_hull(S.shape, S.tobytes())

    def _setup_contingency(self, r, c):
        # work with r <= c: the ambient X (r x c) or its transpose
        self._transpose = r > c
        rr, cc = (c, r) if self._transpose else (r, c)
        Bm = self.basis.reshape(r, c, self.dim)
        if self._transpose:
            Bm = Bm.transpose(1, 0, 2)
        self._table_basis = Bm.reshape(rr * cc, self.dim)  # X = theta @ this.T
        self._table_shape = (rr, cc)
        # row sets B modulo complements: those without row 0
        sets = np.array(list(itertools.product((0.0, 1.0), repeat=rr - 1)))[1:]
        sets = np.hstack([np.zeros((len(sets), 1)), sets])
        # (s, nB * cc): column sums over B of each basis vector
        sums = tree_sum(sets[:, :, None, None] * Bm[None], axis=1)  # (nB, cc, s)
        self._cut_matrix = np.ascontiguousarray(sums.transpose(2, 0, 1)).reshape(self.dim, -1)
        self._n_sets = len(sets)
        self._orders = np.array(list(itertools.permutations(range(rr))))

    # --- the norm ---------------------------------------------------------------

    def norm_of_coordinates(self, y) -> np.ndarray:
        """``||.||_K`` of points given by span coordinates (one linear programme each)."""
        y = np.asarray(y, dtype=float)
        flat = y.reshape(-1, y.shape[-1])
        out = np.array([_lp_norm(self.points, row) for row in flat]).reshape(y.shape[:-1])
        return out[()] if out.ndim == 0 else out

    # --- lower bounds of the norm (upper bounds of the radial function) --------

    def _first_bound(self, theta: np.ndarray) -> np.ndarray:
        """A cheap lower bound of ``||theta||_K`` (rows of ``theta``)."""
        if self.contingency_shape is not None:
            Z = theta @ self._cut_matrix
            np.maximum(Z, 0.0, out=Z)
            Z = Z.reshape(len(theta), self._n_sets, -1).sum(axis=2)
            return Z.max(axis=1)
        if self._vertex_duals is None:
            P = self.points
            step = max(1, _BLOCK_ELEMENTS // len(P))
            scale = np.concatenate(
                [np.max(np.abs(P[i : i + step] @ P.T), axis=1) for i in range(0, len(P), step)]
            )
            self._vertex_duals = (P / scale[:, None]).T
        return np.max(np.abs(theta @ self._vertex_duals), axis=1)

    def _second_bound(self, theta: np.ndarray) -> np.ndarray | None:
        """The Ferrers bound (contingency spaces), a tighter lower bound of ``||theta||_K``."""
        if self.contingency_shape is None:
            return None
        X = (theta @ self._table_basis.T).reshape(len(theta), *self._table_shape)
        prefix = np.cumsum(X[:, self._orders], axis=2)  # (n, orders, r, c)
        best = np.maximum(prefix.max(axis=2), 0.0).sum(axis=-1)
        return best.max(axis=1)

    # --- uniform sampling in K ------------------------------------------------

    def check_sample(self, size, method: str) -> tuple[int, None]:
        """The refusals of :meth:`sample_uniform` that come before anything is drawn:
        ``(m, None)``, ``m`` the number of draws (the acceptance rate is not known)."""
        if method != "polar":
            raise InvariantDPError(
                f"`method` ({method!r}) must be 'polar': the facets of K are not enumerated "
                f"here (dimension {self.dim})."
            )
        m = 1 if size is None else check_positive_int("size", size, minimum=0)
        s = self.dim
        check_bytes(3.0 * 8.0 * m * (s + 1), f"`size` ({m}) uniform draws", "draw in batches.")
        if self.contingency_shape is not None and s > MAX_POLAR_DIM:
            r, c = self.contingency_shape
            raise InvariantDPError(
                f"the polar sampler of K = Hull(S_Semi) for a {r} x {c} table (dimension "
                f"(r-1)(c-1) = {s}) is run for (r-1)(c-1) <= {MAX_POLAR_DIM} only: its "
                "rejection rate vol(K) / vol(2 B) falls about 3-fold per dimension "
                "(5 x 5 already tests about 1.7e5 directions per draw)."
            )
        return m, None

    def sample_uniform(self, size=None, rng=None, *, method: str = "polar"):
        """Uniform points of ``K`` in span coordinates, shape ``(size, s)`` (class notes).

        Raises
        ------
        InvariantDPError
            Before drawing, for a contingency space with ``s > MAX_POLAR_DIM``
            or a ``size`` whose arrays would exceed ``MAX_BYTES``; while
            drawing, after ``MAX_DIRECTIONS`` directions or ``MAX_LPS``
            linear programmes without ``size`` acceptances.
        """
        m, _ = self.check_sample(size, method)
        s = self.dim
        gen = as_generator(rng)
        out = np.empty((m, s))
        got, tested, lps = 0, 0, 0
        max_dirs, max_lps = self.MAX_DIRECTIONS * max(m, 1), self.MAX_LPS * max(m, 1)
        R = self.radius
        batch = 1024
        while got < m:
            if tested >= max_dirs or lps >= max_lps:
                raise InvariantDPError(
                    f"the polar sampler stopped after {tested} directions and {lps} linear "
                    f"programmes with {got} of the {m} draws (limits per draw: "
                    f"MAX_DIRECTIONS = {self.MAX_DIRECTIONS:g}, MAX_LPS = {self.MAX_LPS}): "
                    f"vol(K) is too small a fraction of the ball of radius {R:.4g} in "
                    f"dimension {s}; use a mechanism that needs no K-norm sampler "
                    "(semi_dp_gaussian, projected_gaussian / extended_gaussian, lp_mechanism)."
                )
            n = min(batch, max_dirs - tested)
            tested += n
            theta = gen.standard_normal((n, s))
            theta /= np.sqrt(tree_sum(theta * theta, axis=1))[:, None]
            # step 1: (h1 / R)^s with h1 = min(R, 1 / bound)
            h = np.minimum(R, 1.0 / self._first_bound(theta))
            keep = gen.random(n) < (h / R) ** s
            theta, h = theta[keep], h[keep]
            if theta.shape[0] == 0:
                batch = self._next_batch(batch, got, tested, m)
                continue
            second = self._second_bound(theta)
            if second is not None:
                h2 = np.minimum(h, 1.0 / second)
                keep = gen.random(len(h)) < (h2 / h) ** s
                theta, h = theta[keep], h2[keep]
            # last step: (rho / h)^s with rho from the linear programme (at most 1 up to
            # the certified LP gap); stop at the m-th acceptance
            for t, ht in zip(theta, h, strict=True):
                if got == m or lps >= max_lps:
                    break
                lps += 1
                rho = 1.0 / _lp_norm(self.points, t)
                if gen.random() < min(1.0, (rho / ht) ** s):
                    out[got] = (rho * gen.random() ** (1.0 / s)) * t
                    got += 1
            batch = self._next_batch(batch, got, tested, m)
        self.last_call = {"draws": m, "directions": tested, "linear_programmes": lps}
        return out[0] if size is None else out

    @staticmethod
    def _next_batch(batch: int, got: int, tested: int, m: int) -> int:
        """Directions to propose next: enough for the remaining draws at the rate seen so far
        (times 1.25), 4 times more while nothing was accepted; 1024 to 32768."""
        want = 1.25 * (m - got) * tested / got if got else 4.0 * batch
        return int(min(2**15, max(1024, want)))

    def __repr__(self) -> str:
        return (
            f"LPHullNorm(dim={self.dim}, ambient_dim={self.ambient_dim}, "
            f"vertices={len(self.points)}, contingency_shape={self.contingency_shape})"
        )


@bounded_cache(maxsize=32)
def _cached_lp_hull(shape, data: bytes) -> LPHullNorm:
    return LPHullNorm(np.frombuffer(data, dtype=float).reshape(shape))

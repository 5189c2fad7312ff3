r"""The K-norm noise law for any polytope norm, sampled exactly (no MCMC).

:class:`KNormNoise` is the law that :func:`invariantdp.mechanisms.knorm`
adds and records in its release (:func:`knorm_from_params` rebuilds it from
the JSON parameters): density :math:`c\,\exp(-\|v\|_K / \text{scale})` on
``span(K)`` with ``scale = Delta / epsilon`` (Hardt & Talwar 2010; Cho &
Awan, Prop. 7 and Algorithm 2), for the l1, l2, linf norms and the norm of
a polytope ``K = Hull(vertices)`` such as the sensitivity space of a table
with fixed margins (Cho & Awan, Prop. 32).

Draws use ``V = R U`` with ``R ~ Gamma(s + 1, scale)``, ``s = dim span(K)``,
and ``U`` uniform in ``K`` (so that ``||V||_K ~ Gamma(s, scale)``), by one of
three exact samplers (``method``):

* ``"triangulation"``: a simplex of a triangulation of ``K`` picked with
  probability proportional to its volume, then a flat-Dirichlet combination
  of its vertices (``O(s^2)`` per draw once the hull is built);
* ``"rejection"``: the cube rejection sampler of Cho & Awan, Algorithm 3;
* ``"polar"``: rejection in polar coordinates with one linear programme per
  draw (:class:`~invariantdp.distributions.LPHullNorm`), which needs
  no facets.

**Size limits.**  The first two need the facets of ``K``, enumerated by
Qhull for ``s <= MAX_HULL_DIM`` (9) only (module notes of
:mod:`invariantdp.sensitivity`); ``"auto"`` (the default) uses the
triangulation there and the polar sampler beyond, where the norm is a
linear programme per vector and ``vol(K)`` is not known: ``logpdf`` then
needs ``normalized=False`` and ``cov`` raises.  The polar sampler draws from
the contingency spaces up to ``(r-1)(c-1) = MAX_POLAR_DIM`` (16; 0.2 s per
5 x 5 draw) and refuses larger ones before drawing.  The noise is floating
point drawn from a numpy ``Generator``: a simulation law, which is why the
mechanism refuses ``secure=True`` (see :func:`invariantdp.mechanisms.knorm`).

References
----------
.. [1] Hardt, M. and Talwar, K. (2010). "On the geometry of differential
   privacy", STOC.
.. [2] Cho, J. and Awan, J. "Semi-DP and invariant statistics", Prop. 7,
   Algorithms 2-3, Theorem 31, Prop. 32.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special

from .._bounded_cache import bounded_cache
from .._linalg import fixed_matmul
from .._rng import as_generator
from .._validation import InvariantDPError, check_positive, check_positive_int
from ..sensitivity import (
    HullNorm,
    check_bytes,
    contingency_sensitivity_space,
    facets_within_limits,
)
from ._polar_sampler import LPHullNorm

__all__ = ["KNormNoise", "knorm_from_params"]


#: the uniform samplers of a polytope K (module notes)
METHODS = ("auto", "triangulation", "rejection", "polar")


def check_method(method) -> str:
    """``method`` if it names a uniform sampler of ``K``; internal, shared with the mechanisms."""
    if not isinstance(method, str) or method not in METHODS:
        raise InvariantDPError(
            f"`method` ({method!r}) must be 'auto', 'triangulation', 'rejection' or 'polar'."
        )
    return method


def choose_method(method, facets: bool, without: str) -> str:
    """The uniform sampler of a polytope ``K`` that ``method`` stands for: the one rule.

    ``"auto"`` is the triangulation when the facets of ``K`` are enumerated
    (``facets``) and the polar sampler otherwise; a facet method
    (``"triangulation"``, ``"rejection"``) without them is refused,
    ``without`` saying which ``K`` and why.  Internal, shared with
    :func:`~invariantdp.mechanisms.semi_dp_knorm`, which decides ``facets``
    from the table's shape before building ``K``.
    """
    check_method(method)
    if method == "auto":
        return "triangulation" if facets else "polar"
    if method != "polar" and not facets:
        raise InvariantDPError(
            f"`method` ({method!r}) needs the facets of {without}; use method='polar' (or 'auto')."
        )
    return method


@bounded_cache(maxsize=32)
def _polytope(shape, data: bytes):
    """The norm of ``K = Hull(V)``: its facets when Qhull can enumerate them, else the LP.

    Cached by the bytes of ``V``: a law rebuilt from the same vertices (every
    :meth:`NoiseLaw.distribution <invariantdp.release.NoiseLaw.distribution>`
    of a release) decides once.
    """
    V = np.frombuffer(data, dtype=float).reshape(shape)
    if V.ndim == 2 and V.shape[0] > 0 and not facets_within_limits(V):
        return LPHullNorm.from_space(V)
    return HullNorm.from_space(V)


class KNormNoise:
    r"""The K-norm noise law: density :math:`\propto \exp(-\|v\|_K / \text{scale})`.

    Parameters
    ----------
    norm : {"l1", "l2", "linf", "polytope"}
        The norm; ``"polytope"`` is the norm of ``K = Hull(vertices)`` on its span.
    dim : int
        Ambient dimension ``d``.
    scale : float
        ``Delta / epsilon``.
    vertices : array_like, shape (m, d), optional
        For ``"polytope"``: the finite symmetric set whose hull is ``K``.
        Its facets are enumerated (:class:`~invariantdp.sensitivity.HullNorm`)
        within the limits of :mod:`invariantdp.sensitivity`; beyond, the norm
        is a linear programme and draws use the polar sampler
        (:class:`~invariantdp.distributions.LPHullNorm`; module notes).

    References
    ----------
    Hardt & Talwar (2010), "On the geometry of differential privacy"; Cho &
    Awan, "Semi-DP and invariant statistics", Prop. 7 and Algorithms 2-3.

    Examples
    --------
    >>> from invariantdp.distributions import KNormNoise
    >>> from invariantdp.sensitivity import contingency_sensitivity_space
    >>> V = KNormNoise("polytope", 4, 2.0, contingency_sensitivity_space(2, 2))
    >>> V.rvs(size=3, random_state=0).shape
    (3, 4)
    >>> round(float(V.cov()[0, 0]), 12)  # Laplace(scale 4) along (1,-1,-1,1)/2: 32/4
    8.0
    """

    def __init__(self, norm: str, dim: int, scale: float, vertices=None):
        if norm not in ("l1", "l2", "linf", "polytope"):
            raise InvariantDPError(f"`norm` ({norm!r}) must be 'l1', 'l2', 'linf' or 'polytope'.")
        self.norm_name = norm
        self.dim = int(dim)
        self.scale = check_positive("scale", scale)
        if norm == "polytope":
            if vertices is None:
                raise InvariantDPError("`vertices` are required for a polytope norm.")
            V = np.ascontiguousarray(vertices, dtype=float)
            # the facets when Qhull can enumerate them, else the linear programme
            self.hull = _polytope(V.shape, V.tobytes())
            if self.hull.ambient_dim != self.dim:
                raise InvariantDPError(
                    f"`vertices` have {self.hull.ambient_dim} coordinates, `dim` is {self.dim}."
                )
            self.intrinsic_dim = self.hull.dim
        else:
            self.hull = None
            self.intrinsic_dim = self.dim

    # --- the norm and its ball -------------------------------------------------

    def norm(self, v) -> np.ndarray:
        """``||v||_K`` (``inf`` off the span for a polytope)."""
        v = np.asarray(v, dtype=float)
        if self.hull is not None:
            return self.hull(v)
        p = {"l1": 1, "l2": 2, "linf": np.inf}[self.norm_name]
        return np.linalg.norm(v, ord=p, axis=-1)

    def _polar(self) -> LPHullNorm:
        """The polar sampler of the polytope (:class:`._polar_sampler.LPHullNorm`)."""
        if isinstance(self.hull, LPHullNorm):
            return self.hull
        return LPHullNorm.from_space(self.hull.space)

    def _needs_facets(self, what: str) -> None:
        if isinstance(self.hull, LPHullNorm):
            raise InvariantDPError(
                f"{what} needs vol(K), which is computed from the facets of K = Hull(vertices); "
                f"they are not enumerated in dimension {self.intrinsic_dim} (above "
                "MAX_HULL_DIM, or too many vertices). norm(v) and logpdf(v, normalized=False) "
                "(the log density up to its constant) are available."
            )

    def unit_ball_volume(self) -> float:
        """Volume of ``K`` (in span coordinates for a polytope).

        Raises ``InvariantDPError`` for a polytope whose facets are not
        enumerated (:class:`~invariantdp.distributions.LPHullNorm`).
        """
        d = self.intrinsic_dim
        if self.norm_name == "l1":
            return 2.0**d / math.factorial(d)
        if self.norm_name == "l2":
            return float(np.exp(0.5 * d * np.log(np.pi) - special.gammaln(d / 2 + 1)))
        if self.norm_name == "linf":
            return 2.0**d
        self._needs_facets("unit_ball_volume()")
        return self.hull.volume

    # --- distribution interface ------------------------------------------------

    def rvs(self, size=None, random_state=None, *, method: str = "auto"):
        """Draws of the noise, shape ``(d,)`` or ``(size, d)``.

        ``method`` picks the uniform sampler of a polytope ``K`` (module
        notes): ``"triangulation"``, ``"rejection"`` (both need the facets),
        ``"polar"`` (no facets), or ``"auto"``: the triangulation when the
        facets are enumerated, the polar sampler otherwise.
        """
        method = self.resolve_method(method)
        m = 1 if size is None else check_positive_int("size", size, minimum=0)
        s, d = self.intrinsic_dim, self.dim
        # the output and, at most, two temporaries of the same shape
        check_bytes(
            3.0 * 8.0 * m * max(d, s + 1),
            f"`size` ({m}) draws in {d} dimensions",
            "draw in batches.",
        )
        gen = as_generator(random_state)
        if self.norm_name == "l1":
            out = gen.laplace(0.0, self.scale, size=(m, d))
        elif self.norm_name == "l2":
            z = gen.standard_normal((m, d))
            r = gen.gamma(d, self.scale, size=m)
            out = r[:, None] * z / np.linalg.norm(z, axis=1, keepdims=True)
        elif self.norm_name == "linf":
            r = gen.gamma(d + 1, self.scale, size=m)
            out = r[:, None] * gen.uniform(-1.0, 1.0, size=(m, d))
        else:
            sampler = self._polar() if method == "polar" else self.hull
            sampler.check_sample(m, method)  # its refusals, before the radii are drawn
            r = gen.gamma(s + 1, self.scale, size=m)
            u = sampler.sample_uniform(m, gen, method=method)
            # fixed-order products: the same release bits on every BLAS build
            out = fixed_matmul(r[:, None] * u, sampler.basis.T)
        return out[0] if size is None else out

    def resolve_method(self, method: str) -> str:
        """The uniform sampler ``method`` stands for (``"auto"`` resolved), checked."""
        if self.hull is None:
            return check_method(method)
        return choose_method(
            method,
            not isinstance(self.hull, LPHullNorm),
            f"K = Hull(vertices), which are not enumerated in dimension {self.intrinsic_dim}",
        )

    def logpdf(self, v, *, normalized: bool = True) -> np.ndarray:
        r"""Log density w.r.t. Lebesgue measure on the span.

        :math:`-\|v\|_K/\text{scale} - \log(\Gamma(s+1)\,\text{vol}(K)\,\text{scale}^s)`.
        With ``normalized=False``, only :math:`-\|v\|_K/\text{scale}` (``-inf`` off the
        span): the log density up to its constant, enough for likelihood ratios and
        available when ``vol(K)`` is not (polytopes beyond the facet enumeration,
        whose norm is a linear programme per vector).
        """
        if not normalized:
            return -self.norm(v) / self.scale
        s = self.intrinsic_dim
        const = special.gammaln(s + 1) + np.log(self.unit_ball_volume()) + s * np.log(self.scale)
        return -self.norm(v) / self.scale - const

    def pdf(self, v) -> np.ndarray:
        return np.exp(self.logpdf(v))

    def mean(self) -> np.ndarray:
        return np.zeros(self.dim)

    def cov(self) -> np.ndarray:
        """Exact covariance: ``E[R^2] E[U U^T]`` with ``E[R^2] = (s+1)(s+2) scale^2``."""
        s, d, sc = self.intrinsic_dim, self.dim, self.scale
        if self.norm_name == "l1":
            return 2.0 * sc**2 * np.eye(d)
        if self.norm_name == "l2":
            return (d + 1.0) * sc**2 * np.eye(d)
        if self.norm_name == "linf":
            return (d + 1.0) * (d + 2.0) / 3.0 * sc**2 * np.eye(d)
        self._needs_facets("cov()")
        H = self.hull
        if s == 1:
            M = np.array([[H.half_width**2 / 3.0]])
        else:
            # second moment of the uniform law on the simplex (0, v_1, ..., v_s):
            # (sum v_i v_i^T + (sum v_i)(sum v_i)^T) / ((s+1)(s+2)), mixed by volume
            P = H.points[H.simplices]  # (k, s, s)
            w = np.diff(np.concatenate([[0.0], H.simplex_cdf]))
            tot = P.sum(axis=1)
            M = np.einsum("k,kij,kil->jl", w, P, P) + np.einsum("k,kj,kl->jl", w, tot, tot)
            M /= (s + 1.0) * (s + 2.0)
        B = H.basis
        return (s + 1.0) * (s + 2.0) * sc**2 * (B @ M @ B.T)

    def __repr__(self) -> str:
        return f"KNormNoise(norm={self.norm_name!r}, dim={self.dim}, scale={self.scale:g})"


def knorm_from_params(p: dict) -> KNormNoise:
    vertices = None
    if p["norm"] == "polytope":
        space = p.get("space")
        if space is not None:
            vertices = contingency_sensitivity_space(space["r"], space["c"])
        else:
            vertices = np.asarray(p["vertices"], dtype=float)
    return KNormNoise(p["norm"], p["dim"], p["scale"], vertices)

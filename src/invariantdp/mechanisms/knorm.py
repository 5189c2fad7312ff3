r"""The K-norm mechanism for any polytope norm, sampled exactly (no MCMC).

The noise ``V`` has density :math:`c\,\exp(-\epsilon \|v\|_K / \Delta)` on
``span(K)`` (Hardt & Talwar 2010; Cho & Awan, Prop. 7 and Algorithm 2).  With
``s = dim span(K)`` it factors as ``V = R U`` with

* ``R ~ Gamma(s + 1, scale = Delta / epsilon)``, and
* ``U`` uniform in ``K``.

**Method.**  ``K = Hull(vertices)`` is computed once (Qhull in the
coordinates of an orthonormal basis of the span, cached per vertex set).
The cones from the centre over the triangulated facets are simplices that
tile ``K``; a uniform point of ``K`` is a simplex picked with probability
proportional to its volume ``|det|/s!`` followed by a flat-Dirichlet
combination of its vertices.  Each draw costs ``O(s^2)`` arithmetic and a
binary search, whatever the dimension, so tens of thousands of draws per
second are routine for every ``r x c`` table with ``(r-1)(c-1) <= 9``
(building the hull takes up to a few seconds, once).  Larger polytopes are
refused at once (:mod:`invariantdp.sensitivity`, size limits): their facet
enumeration would run for minutes to hours.  The cube rejection sampler of
Cho & Awan, Algorithm 3, is available as ``method="rejection"`` for
comparison; its acceptance rate ``vol(K) / vol(cube)`` collapses with the
dimension.

**Simulation only.**  The noise is floating point, drawn from a numpy
``Generator``: attackable through its low-order bits (Mironov 2012) and
reproducible from a seed.  ``secure=True`` is refused; for a release to
publish, use ``discrete_laplace`` / ``discrete_gaussian(..., secure=True)``
(integer counts) or ``odds_ratio_release(..., secure=True)`` (2 x 2 tables).
"""

from __future__ import annotations

import numpy as np

from .._rng import as_generator
from .._validation import InvariantDPError, check_epsilon, check_positive
from ..distributions.knorm import KNormNoise
from ..release import NoiseLaw, PrivacyGuarantee, Release
from ._base import (
    check_data,
    make_release,
    randomness_note,
    refuse_secure,
)

__all__ = ["KNormNoise", "knorm"]


def _knorm_law(norm: str, dim: int, scale: float, vertices=None, space=None) -> NoiseLaw:
    params = {"norm": norm, "dim": int(dim), "scale": float(scale)}
    if space is not None:
        params["space"] = space
    elif vertices is not None:
        params["vertices"] = np.asarray(vertices, dtype=float).tolist()
    return NoiseLaw("knorm", params)


#: what to use instead of a floating-point mechanism for a release to publish
_SECURE_ALTERNATIVES = (
    "discrete_laplace(x, ..., secure=True) or discrete_gaussian(x, ..., secure=True) for "
    "integer counts, or odds_ratio_release(table, ..., secure=True) for a 2 x 2 table"
)


def knorm(
    x,
    vertices,
    epsilon=None,
    *,
    sensitivity=1.0,
    rng=None,
    method: str = "triangulation",
    secure=False,
) -> Release:
    r"""K-norm mechanism for the polytope norm of ``K = Hull(vertices)``.

    Releases ``x + V`` with ``V`` of density
    :math:`\propto \exp(-\epsilon\|v\|_K/\Delta)` on ``span(vertices)``.
    With ``vertices`` the sensitivity space ``S`` (a finite symmetric set of
    difference vectors) and ``sensitivity=1`` (Prop. 30) this is the
    optimal K-norm mechanism of Cho & Awan (Theorem 31); the span may be a
    proper subspace (rank-deficient sensitivity spaces, Lemma 29).

    Parameters
    ----------
    x : array_like
        The confidential query value; ``x.size`` must equal the number of
        columns of ``vertices``.
    vertices : array_like, shape (m, d)
        Points whose convex hull is ``K`` (negatives are added).
    epsilon : float
        ``epsilon > 0`` (required; positional or keyword).
    sensitivity : float, optional
        ``Delta``, the K-norm sensitivity (default 1: the sensitivity space is
        contained in ``K``).
    rng : None, int, SeedSequence or numpy.random.Generator
    method : {"triangulation", "rejection"}
        Exact uniform sampler of ``K`` (see the module notes) or the cube
        rejection sampler of Algorithm 3.
    secure : bool, optional
        Must be False: the noise is floating point, so the release is a
        simulation, not for publication (module notes); ``secure=True`` raises
        and names the secure mechanisms (``discrete_laplace``,
        ``discrete_gaussian``, ``odds_ratio_release`` with ``secure=True``).

    Returns
    -------
    Release
        epsilon-DP; noise family ``"knorm"``; ``metadata["randomness"]`` is
        ``"simulation"`` and ``metadata["method"]`` the uniform sampler.

    Raises
    ------
    InvariantDPError
        For ``secure=True``, and, before any work, when ``K`` is too large for
        the facet enumeration (:class:`~invariantdp.sensitivity.HullNorm`).

    References
    ----------
    Hardt & Talwar (2010); Awan & Slavkovic (2021); Cho & Awan, Prop. 7,
    Lemma 29, Prop. 30, Theorem 31, Algorithms 2-3.

    Examples
    --------
    >>> import numpy as np
    >>> from invariantdp.mechanisms import knorm
    >>> S = np.array([[1.0, -1.0, 0.0], [0.0, 1.0, -1.0], [1.0, 0.0, -1.0]])
    >>> r = knorm([5.0, 5.0, 5.0], S, epsilon=1.0, rng=0)
    >>> round(float(r.value.sum()), 9)  # K spans the zero-sum plane: the total is kept
    15.0
    """
    refuse_secure("knorm", secure, alternatives=_SECURE_ALTERNATIVES)
    if epsilon is None:
        raise TypeError("`epsilon` is required: knorm(x, vertices, epsilon).")
    xv = check_data(x)
    epsilon = check_epsilon(epsilon)
    if np.ndim(sensitivity) != 0:
        raise InvariantDPError("`sensitivity` must be a number (the K-norm sensitivity).")
    delta = check_positive("sensitivity", sensitivity)
    V = np.asarray(vertices, dtype=float)
    if V.ndim != 2 or V.shape[1] != xv.size:
        raise InvariantDPError(
            f"`vertices` must have shape (m, {xv.size}) to match `x`, got {V.shape}."
        )
    gen = as_generator(rng)
    noise = KNormNoise("polytope", xv.size, delta / epsilon, V)
    v = noise.rvs(random_state=gen, method=method)
    return make_release(
        xv + v.reshape(xv.shape),
        "knorm",
        _knorm_law("polytope", xv.size, delta / epsilon, vertices=V),
        PrivacyGuarantee(
            "epsilon-DP",
            {"epsilon": epsilon},
            "data sets whose query values differ by a vector of `sensitivity` * Hull(vertices)",
        ),
        data_shape=xv.shape,
        metadata={
            "sensitivity": delta,
            "norm": "polytope",
            "method": method,
            **randomness_note(secure),
        },
    )

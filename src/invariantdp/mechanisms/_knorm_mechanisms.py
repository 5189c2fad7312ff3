r"""K-norm mechanisms: the l_p mechanisms and the K-norm mechanism of any polytope.

The noise ``V`` has density :math:`c\,\exp(-\epsilon \|v\|_K / \Delta)` on
``span(K)`` (Hardt & Talwar 2010; Cho & Awan, Prop. 7 and Algorithm 2):

* :func:`lp_mechanism` -- ``K`` the unit ball of the l1, l2 or linf norm
  (Cho & Awan, Algorithms 4-6), sampled in closed form;
* :func:`knorm` -- ``K = Hull(vertices)``, e.g. a sensitivity space, sampled
  exactly as ``V = R U`` (a Gamma radius times a uniform point of ``K``) by
  the triangulation sampler of :class:`~invariantdp.distributions._knorm_law.KNormNoise`
  or, when the facets of ``K`` cannot be enumerated, by its polar rejection
  sampler (see :mod:`invariantdp.distributions._knorm_law` for the methods and
  their size limits); :func:`~invariantdp.mechanisms.semi_dp_knorm` is the
  semi-DP case.

Every release records its noise law with :func:`knorm_law` (family
``"knorm"``), except the l1 mechanism, whose noise is i.i.d. Laplace and is
recorded as the family ``"laplace"``.  **Simulation only.**  The noise is floating point, drawn from
a numpy ``Generator``: attackable through its low-order bits (Mironov 2012)
and reproducible from a seed.  ``secure=True`` is refused, and a call
with neither ``rng`` nor ``secure=False`` warns
(:class:`~invariantdp.exceptions.SimulationWarning`); for a release to
publish, use ``discrete_laplace_mechanism`` / ``discrete_gaussian_mechanism``
(integer counts) or ``laplace_mechanism`` / ``gaussian_mechanism`` with
``secure=True``, or ``odds_ratio_release(..., secure=True)`` (2 x 2 tables).
"""

from __future__ import annotations

import numpy as np

from .._rng import as_generator
from .._validation import check_epsilon, check_positive
from ..distributions import KNormNoise, check_method
from ..exceptions import InvariantDPError
from ..families import laplace_scale
from ..privacy import QueryAdjacency
from ..release import NoiseLaw, Release
from ..secure import random_source
from ._base import (
    check_data,
    check_float_scale,
    guarantee,
    make_release,
    resolve_secure,
    resolve_sensitivity,
    warn_unasked_simulation,
)
from ._side_channels import query_adjacency

__all__ = ["knorm", "knorm_law", "lp_mechanism"]


def knorm_law(norm: str, dim: int, scale: float, vertices=None, space=None) -> NoiseLaw:
    """The noise law (family ``"knorm"``) of a K-norm mechanism, as a Release records it.

    ``norm`` is ``"l1"``, ``"l2"``, ``"linf"`` or ``"polytope"``; a polytope
    is given by its ``vertices`` or by a named ``space`` (e.g.
    ``{"kind": "contingency", "r": 2, "c": 3}``, Cho & Awan, Prop. 32).
    """
    params = {"norm": norm, "dim": int(dim), "scale": float(scale)}
    if space is not None:
        params["space"] = space
    elif vertices is not None:
        params["vertices"] = np.asarray(vertices, dtype=float).tolist()
    return NoiseLaw("knorm", params)


#: what to use instead of a floating-point mechanism for a release to publish
_SECURE_ALTERNATIVES = (
    "discrete_laplace_mechanism(x, ..., secure=True) or discrete_gaussian_mechanism(x, ..., "
    "secure=True) for integer counts, or odds_ratio_release(table, ..., secure=True) for a "
    "2 x 2 table"
)


def knorm(
    x,
    vertices,
    epsilon=None,
    *,
    sensitivity=1.0,
    rng=None,
    method: str = "auto",
    secure=None,
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
    method : {"auto", "triangulation", "rejection", "polar"}
        Uniform sampler of ``K``: the exact triangulation sampler, the cube
        rejection sampler of Algorithm 3 (both need the facets of ``K``), or
        the exact polar rejection sampler, which needs no facets
        (:class:`~invariantdp.distributions.LPHullNorm`).  ``"auto"`` (default)
        is the triangulation when the facets are enumerated (dimension
        ``<= MAX_HULL_DIM`` and few enough vertices) and the polar sampler
        beyond.
    secure : None or bool, optional
        None (default) or False: a simulation (floating-point noise; None without
        ``rng`` warns, ``SimulationWarning``); True is refused (module notes).

    Returns
    -------
    Release
        epsilon-DP; noise family ``"knorm"``; ``metadata["randomness"]`` is
        ``"simulation"`` and ``metadata["method"]`` the uniform sampler used.

    Raises
    ------
    InvariantDPError
        For ``secure=True``; before any work, for ``method="triangulation"``
        or ``"rejection"`` when ``K`` is too large for the facet enumeration
        (:class:`~invariantdp.sensitivity.HullNorm`), and for the polar
        sampler of a contingency space with ``(r-1)(c-1) > MAX_POLAR_DIM``
        (16); while drawing, when the polar sampler reaches its caps
        (:class:`~invariantdp.distributions.LPHullNorm`).

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
    resolve_secure(secure, rng, "knorm", exact=False, alternatives=_SECURE_ALTERNATIVES)
    if epsilon is None:
        raise TypeError("`epsilon` is required: knorm(x, vertices, epsilon).")
    xv = check_data(x)
    epsilon = check_epsilon(epsilon)
    check_method(method)
    if np.ndim(sensitivity) != 0:
        raise InvariantDPError("`sensitivity` must be a number (the K-norm sensitivity).")
    delta = check_positive("sensitivity", sensitivity)
    V = np.asarray(vertices, dtype=float)
    if V.ndim != 2 or V.shape[1] != xv.size:
        raise InvariantDPError(
            f"`vertices` must have shape (m, {xv.size}) to match `x`, got {V.shape}."
        )
    gen = as_generator(rng)
    scale = laplace_scale(delta, epsilon)
    noise = KNormNoise("polytope", xv.size, scale, V)
    method = noise.resolve_method(method)
    v = noise.rvs(random_state=gen, method=method)
    release = make_release(
        xv + v.reshape(xv.shape),
        "knorm",
        knorm_law("polytope", xv.size, scale, vertices=V),
        guarantee(
            "epsilon-DP",
            {"epsilon": epsilon},
            adjacency=QueryAdjacency(
                "polytope",
                delta,
                relation="data sets whose query values differ by a vector of "
                "`sensitivity` * Hull(vertices)",
            ),
        ),
        data_shape=xv.shape,
        metadata={
            "sensitivity": delta,
            "norm": "polytope",
            "method": method,
        },
        labels=x,
    )
    warn_unasked_simulation(secure, rng, "knorm", _SECURE_ALTERNATIVES)
    return release


_LP_ALTERNATIVES = (
    "laplace_mechanism(..., secure=True) (the l1 case) or gaussian_mechanism(..., secure=True)"
)


def _check_p(p):
    if isinstance(p, str):
        if p.lower() in ("inf", "infinity"):
            return np.inf
        raise InvariantDPError(f"`p` ({p!r}) must be 1, 2 or inf.")
    if isinstance(p, bool) or not isinstance(p, int | float | np.number):
        raise TypeError(f"`p` must be 1, 2 or inf, got {type(p).__name__} ({p!r}).")
    if p not in (1, 2, np.inf):
        raise InvariantDPError(f"`p` ({p}) must be 1, 2 or inf.")
    return float(p)


def lp_mechanism(x, p, sensitivity=1.0, epsilon=None, *, rng=None, secure=None) -> Release:
    r"""The :math:`\ell_p` K-norm mechanism for ``p`` in {1, 2, inf} (epsilon-DP).

    Simulation only: floating-point noise from a numpy generator, which
    leaks the data through the low-order bits of the output (Mironov 2012).
    ``secure=True`` is refused (no exact sampler); for a production release
    use ``laplace_mechanism(..., secure=True)`` (the ``p = 1`` case) or
    ``gaussian_mechanism(..., secure=True)``.

    The noise ``V`` has density proportional to
    :math:`\exp(-\epsilon \|v\|_p / \Delta_p)` on :math:`\mathbb R^d`:

    * ``p = 1``: i.i.d. ``Laplace(Delta_1 / epsilon)`` (Algorithm 4);
    * ``p = 2``: ``r Z / ||Z||_2`` with ``Z ~ N(0, I_d)`` and
      ``r ~ Gamma(d, epsilon / Delta_2)`` (Algorithm 5, Wang et al. 2014);
    * ``p = inf``: ``r U`` with ``U ~ Unif[-1, 1]^d`` and
      ``r ~ Gamma(d + 1, epsilon / Delta_inf)`` (Algorithm 6, Steinke & Ullman 2016).

    Parameters
    ----------
    x : array_like
        The confidential query value (flattened to ``d`` coordinates for the norm).
    p : {1, 2, inf}
    sensitivity : float or array_like, optional
        :math:`\ell_p` sensitivity (default 1) or a sensitivity space.
    epsilon : float
        ``epsilon > 0`` (required; positional as in ``lp_mechanism(x, p,
        sensitivity, epsilon)`` or by keyword).
    rng : None, int, SeedSequence or numpy.random.Generator
    secure : None or bool, optional
        None (default) or False: a simulation (no exact l_p sampler; None
        without ``rng`` warns, ``SimulationWarning``); True is refused.

    Returns
    -------
    Release
        ``epsilon``-DP guarantee; noise family ``"laplace"`` (``scale``) for
        ``p = 1``, else ``"knorm"`` with ``norm`` (``"l2"`` or ``"linf"``),
        ``dim`` and ``scale``.

    References
    ----------
    Cho & Awan, Appendix B, Algorithms 4-6; Hardt & Talwar (2010).

    Examples
    --------
    >>> from invariantdp.mechanisms import lp_mechanism
    >>> r = lp_mechanism([0.0, 0.0, 0.0], "inf", epsilon=1.0, rng=4)
    >>> r.noise.params["norm"], r.simulation
    ('linf', True)
    """
    resolve_secure(secure, rng, "lp_mechanism", exact=False, alternatives=_LP_ALTERNATIVES)
    if epsilon is None:
        raise TypeError("`epsilon` is required: lp_mechanism(x, p, sensitivity, epsilon).")
    xv = check_data(x)
    p = _check_p(p)
    epsilon = check_epsilon(epsilon)
    delta = resolve_sensitivity(sensitivity, p, dim=xv.size)
    gen = random_source(rng, False)
    scale = laplace_scale(delta, epsilon)
    check_float_scale(scale, "sensitivity / epsilon")
    d = xv.size
    name = {1.0: "l1", 2.0: "l2", np.inf: "linf"}[p]
    v = KNormNoise(name, d, scale).rvs(random_state=gen)
    # l1 noise is i.i.d. Laplace: recorded as that family, which every consumer knows
    law = NoiseLaw("laplace", {"scale": scale}) if p == 1 else knorm_law(name, d, scale)
    release = make_release(
        xv + v.reshape(xv.shape),
        f"lp_mechanism[{name}]",
        law,
        guarantee(
            "epsilon-DP",
            {"epsilon": epsilon},
            adjacency=query_adjacency(name, delta, np.ndim(sensitivity) != 0),
        ),
        data_shape=xv.shape,
        metadata={
            "sensitivity": delta,
            "norm": name,
            "p": p if np.isfinite(p) else "inf",
        },
        labels=x,
    )
    warn_unasked_simulation(secure, rng, "lp_mechanism", _LP_ALTERNATIVES)
    return release

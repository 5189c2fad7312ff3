"""Semi-DP mechanisms for ``r x c`` tables with invariant one-way margins.

With the one-way margins published exactly, the semi-adjacent parameter is
``a(t) = 3`` and the semi-DP sensitivity space is ``S_Semi`` of Prop. 32
(the matrices ``v_ijkl`` with two ``+1`` and two ``-1``), whose
sensitivities are ``Delta_1, Delta_2, Delta_inf = 4, 2, 1`` and whose span is
the ``(r-1)(c-1)``-dimensional space of tables with zero margins (Cho & Awan,
Sec. 5.1).

Both mechanisms add floating-point noise drawn from a numpy ``Generator``:
their releases are **simulations, not for publication** (the low-order bits
of float noise leak, Mironov 2012; a seed makes the noise reproducible), and
``secure=True`` is refused; called with neither ``rng`` nor ``secure=False``
they warn (:class:`~invariantdp.exceptions.SimulationWarning`).  For a release to publish, use
``odds_ratio_release(table, ..., secure=True)`` for a 2 x 2 table (the
semi-DP Tulap release of ``x11``, which keeps the margins), or
``discrete_laplace_mechanism`` / ``discrete_gaussian_mechanism(table, ...,
secure=True)`` (exact
integer noise in every cell; the margins are not kept).
"""

from __future__ import annotations

import numpy as np

from .._bounded_cache import bounded_cache
from .._rng import as_generator
from .._validation import InvariantDPError, check_counts, check_epsilon, check_positive
from ..distributions import MAX_POLAR_DIM, KNormNoise, choose_method
from ..families import gaussian_sigma, laplace_scale
from ..invariants import one_way_margins
from ..privacy import QueryAdjacency
from ..release import NoiseLaw, Release
from ..sensitivity import MAX_HULL_DIM, contingency_sensitivity_space
from ._base import guarantee, make_release, resolve_secure, warn_unasked_simulation
from ._knorm_mechanisms import knorm_law

__all__ = ["semi_dp_gaussian", "semi_dp_knorm"]

_ADJ = (
    "semi-adjacent: tables with the released one-way margins at distance a(t) = 3 in the "
    "replace-one-record adjacency (Cho & Awan, Def. 13, Theorem 16)"
)


_SECURE_ALTERNATIVES = (
    "odds_ratio_release(table, ..., secure=True) for a 2 x 2 table (it keeps the margins), "
    "or discrete_laplace_mechanism(table, ..., secure=True) / discrete_gaussian_mechanism("
    "table, ..., secure=True) (exact integer noise; the margins are not kept)"
)


@bounded_cache(maxsize=64)
def _margins(shape):
    return one_way_margins(shape)


@bounded_cache(maxsize=64)
def _space(r, c):
    S = contingency_sensitivity_space(r, c)
    S.setflags(write=False)
    return S


def _table(table):
    raw = np.asarray(table)
    if raw.ndim != 2:
        raise InvariantDPError(f"`table` must be a 2-D r x c table, got {raw.ndim} dimension(s).")
    x = check_counts("table", table)
    r, c = x.shape
    if r < 2 or c < 2:
        raise InvariantDPError(f"`table` must have at least 2 rows and 2 columns, got {x.shape}.")
    return x


def _semi_dp(definition, params, shape, norm, sensitivity):
    """The guarantee ``(D_t, A_{a(t)}, f)`` with ``a(t) = 3`` (Cho & Awan, Theorem 16)."""
    r, c = shape
    return guarantee(
        definition,
        params,
        adjacency=QueryAdjacency(norm, sensitivity, relation=_ADJ),
        semi_adjacent_parameter=3,
        dataspace=f"{r} x {c} tables with the released one-way margins",
    )


def semi_dp_gaussian(table, *, mu, rng=None, secure=None) -> Release:
    r"""Semi-DP Gaussian mechanism for an ``r x c`` table (Algorithm 1).

    Releases ``x + N`` with :math:`N \sim N_d(0, (\Delta_2/\mu)^2 P)`,
    :math:`\Delta_2(S_{Semi}) = 2` and ``P`` the projector onto
    ``span(S_Semi)`` (the tables with zero margins; ``P`` is applied by
    double centring, Example 8 for ``2 x 2``).  The release is
    :math:`(D_t, A_{a(t)}, G_\mu)`-DP with ``a(t) = 3`` (Prop. 28) and keeps
    the margins exactly.

    Parameters
    ----------
    table : array_like of int, shape (r, c)
        Confidential counts, ``r, c >= 2``.
    mu : float
        GDP parameter ``mu > 0``.
    rng : None, int, SeedSequence or numpy.random.Generator
    secure : None or bool, optional
        None (default) or False: a simulation (floating-point noise; None without
        ``rng`` warns, ``SimulationWarning``); True is refused (module notes).

    Returns
    -------
    Release
        ``value`` is the noisy table; noise family ``"projected_gaussian"``
        with ``scale = 2 / mu`` and the margins structure;
        ``metadata["randomness"]`` is ``"simulation"``.

    References
    ----------
    Cho & Awan, Algorithm 1, Prop. 28, Prop. 32, Example 8; Figure 2.

    Examples
    --------
    >>> from invariantdp.mechanisms import semi_dp_gaussian
    >>> r = semi_dp_gaussian([[10, 4, 6], [3, 8, 9]], mu=1.0, rng=0)
    >>> r.value.sum(axis=1).round(9), r.value.sum(axis=0).round(9)
    (array([20., 20.]), array([13., 12., 15.]))
    """
    resolve_secure(secure, rng, "semi_dp_gaussian", exact=False, alternatives=_SECURE_ALTERNATIVES)
    x = _table(table)
    mu = check_positive("mu", mu)
    gen = as_generator(rng)
    inv = _margins(x.shape)
    sigma = gaussian_sigma(2.0, mu=mu)  # Delta_2(S_Semi) = 2 (Prop. 32)
    e = gen.standard_normal(x.size)
    e *= sigma
    noise = inv.project(e).reshape(x.shape)
    release = make_release(
        x + noise,
        "semi_dp_gaussian",
        NoiseLaw("projected_gaussian", {"scale": sigma, "invariants": inv.structure_dict()}),
        _semi_dp("GDP", {"mu": mu}, x.shape, "l2", 2.0),
        invariants=inv.of(x),
        data_shape=x.shape,
        metadata={"sensitivity": 2.0, "norm": "l2", "a(t)": 3},
        secure=False,
        labels=table,
    )
    warn_unasked_simulation(secure, rng, "semi_dp_gaussian", _SECURE_ALTERNATIVES)
    return release


def semi_dp_knorm(table, *, epsilon, rng=None, method: str = "auto", secure=None) -> Release:
    r"""Optimal semi-DP K-norm mechanism for an ``r x c`` table (Algorithms 2-3).

    Releases ``x + V`` with ``V`` of density
    :math:`\propto \exp(-\epsilon \|v\|_K)` on ``span(S_Semi)``,
    ``K = Hull(S_Semi)`` and :math:`\Delta_K = 1` (Prop. 30): the optimal
    K-norm mechanism for :math:`(D_t, A_{a(t)}, f_{\epsilon,0})`-DP
    (Theorem 31).

    The draw is exact and needs no MCMC: ``V = R U`` with
    ``R ~ Gamma(s + 1, 1/epsilon)``, ``s = (r-1)(c-1)``, and ``U`` uniform
    in ``K`` (see :mod:`invariantdp.distributions._knorm_law`), by one of

    * ``method="triangulation"``: a simplex of the centre-to-facet
      triangulation of ``K`` picked with probability proportional to its
      volume, and a flat-Dirichlet point in it.  It needs the facets of
      ``K``, enumerated for ``(r-1)(c-1) <= 9`` only (the first call for a
      4 x 4 or 2 x 10 table builds the hull in a few seconds, later calls
      reuse it; 3 x 6 would take over 150 s);
    * ``method="rejection"``: the cube rejection sampler of Algorithm 3
      (also on the facets);
    * ``method="polar"``: rejection in polar coordinates, a uniform
      direction accepted with probability ``(rho_K / 2)^s``, screened by
      the cut and Ferrers lower bounds of ``||.||_K`` so that about one
      linear programme runs per draw
      (:class:`~invariantdp.distributions.LPHullNorm`); no set-up, one
      release in about 2 ms up to 4 x 5 and 0.2 s (mean; the number of
      proposals is geometric) for 5 x 5;
    * ``method="auto"`` (default): the triangulation for
      ``(r-1)(c-1) <= 9``, the polar sampler beyond.

    Tables with ``(r-1)(c-1) > MAX_POLAR_DIM`` (16: 5 x 5, 3 x 9, 2 x 17)
    are refused at once: the polar sampler's rejection rate falls about
    3-fold per dimension (a 2 x 19 release, dimension 18, averages 2.6 s
    and passes 5 s in about one case in six; 5 x 6 averages 7 s).  Use
    :func:`semi_dp_gaussian`, which keeps the margins at any size.

    Parameters
    ----------
    table : array_like of int, shape (r, c)
        Confidential counts, ``r, c >= 2`` and ``(r-1)(c-1) <= 16``.
    epsilon : float
    rng : None, int, SeedSequence or numpy.random.Generator
    method : {"auto", "triangulation", "rejection", "polar"}
    secure : None or bool, optional
        None (default) or False: a simulation (floating-point noise; None without
        ``rng`` warns, ``SimulationWarning``); True is refused (module notes).

    Returns
    -------
    Release
        Noise family ``"knorm"`` (polytope of the contingency space);
        ``metadata["randomness"]`` is ``"simulation"`` and
        ``metadata["method"]`` the uniform sampler used.

    Raises
    ------
    InvariantDPError
        For ``secure=True``, and, before any work, for a table with
        ``(r-1)(c-1) > MAX_POLAR_DIM`` (16), or with ``(r-1)(c-1) > 9`` and
        ``method="triangulation"`` or ``"rejection"``.

    References
    ----------
    Cho & Awan, Lemma 29, Prop. 30, Theorem 31, Algorithms 2-3; Figure 3.

    Examples
    --------
    >>> from invariantdp.mechanisms import semi_dp_knorm
    >>> r = semi_dp_knorm([[10, 4], [3, 8]], epsilon=1.0, rng=0)
    >>> r.guarantee.semi_adjacent_parameter
    3
    >>> r.value.sum(axis=0).round(9)
    array([13., 12.])
    """
    resolve_secure(secure, rng, "semi_dp_knorm", exact=False, alternatives=_SECURE_ALTERNATIVES)
    x = _table(table)
    r, c = x.shape
    s = (r - 1) * (c - 1)
    if s > MAX_POLAR_DIM:
        raise InvariantDPError(
            f"`table` ({r} x {c}) is too large for semi_dp_knorm: K = Hull(S_Semi) has "
            f"dimension (r-1)(c-1) = {s}, and the exact K-norm samplers handle "
            f"(r-1)(c-1) <= {MAX_POLAR_DIM} only (the polar sampler's rejection rate falls "
            "about 3-fold per dimension: 5 x 5 takes 0.2 s per release, 5 x 6 about 7 s); "
            "use semi_dp_gaussian, which keeps the margins at any size."
        )
    # the rule of KNormNoise, decided from the shape before S_Semi is enumerated: its facets
    # are enumerated exactly when (r-1)(c-1) <= MAX_HULL_DIM
    method = choose_method(
        method,
        s <= MAX_HULL_DIM,
        f"K = Hull(S_Semi), enumerated for (r-1)(c-1) <= {MAX_HULL_DIM} only, and `table` "
        f"({r} x {c}) has (r-1)(c-1) = {s}",
    )
    epsilon = check_epsilon(epsilon)
    gen = as_generator(rng)
    S = _space(r, c)
    # the K-norm sensitivity of S_Semi in its own norm is 1 (Prop. 30)
    scale = laplace_scale(1.0, epsilon)
    law = KNormNoise("polytope", x.size, scale, S)
    v = law.rvs(random_state=gen, method=method).reshape(x.shape)
    release = make_release(
        x + v,
        "semi_dp_knorm",
        knorm_law("polytope", x.size, scale, space={"kind": "contingency", "r": r, "c": c}),
        _semi_dp("epsilon-DP", {"epsilon": epsilon}, x.shape, "K", 1.0),
        invariants=_margins(x.shape).of(x),
        data_shape=x.shape,
        metadata={"sensitivity": 1.0, "norm": "K", "a(t)": 3, "method": method},
        secure=False,
        labels=table,
    )
    warn_unasked_simulation(secure, rng, "semi_dp_knorm", _SECURE_ALTERNATIVES)
    return release

"""Semi-DP mechanisms for ``r x c`` tables with invariant one-way margins.

With the one-way margins published exactly, the semi-adjacent parameter is
``a(t) = 3`` and the semi-DP sensitivity space is ``S_Semi`` of Prop. 32
(the matrices ``v_ijkl`` with two ``+1`` and two ``-1``), whose
sensitivities are ``Delta_1, Delta_2, Delta_inf = 4, 2, 1`` and whose span is
the ``(r-1)(c-1)``-dimensional space of tables with zero margins (Cho & Awan,
Sec. 5.1).
"""

from __future__ import annotations

import functools

import numpy as np

from .._rng import as_generator
from .._validation import InvariantDPError, check_counts, check_epsilon, check_positive
from ..invariants import one_way_margins
from ..release import NoiseLaw, PrivacyGuarantee, Release
from ..sensitivity import contingency_sensitivity_space
from .knorm import KNormNoise, _knorm_law

__all__ = ["semi_dp_gaussian", "semi_dp_knorm"]

_ADJ = (
    "semi-adjacent: tables with the released one-way margins at distance a(t) = 3 in the "
    "replace-one-record adjacency (Cho & Awan, Def. 13, Theorem 16)"
)


@functools.lru_cache(maxsize=64)
def _margins(shape):
    return one_way_margins(shape)


@functools.lru_cache(maxsize=64)
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


def _guarantee(definition, params, shape):
    r, c = shape
    return PrivacyGuarantee(
        definition,
        params,
        _ADJ,
        3,
        f"{r} x {c} tables with the released one-way margins",
    )


def semi_dp_gaussian(table, *, mu, rng=None) -> Release:
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

    Returns
    -------
    Release
        ``value`` is the noisy table; noise family ``"projected_gaussian"``
        with ``scale = 2 / mu`` and the margins structure.

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
    x = _table(table)
    mu = check_positive("mu", mu)
    gen = as_generator(rng)
    inv = _margins(x.shape)
    sigma = 2.0 / mu
    e = gen.standard_normal(x.size)
    e *= sigma
    noise = inv.project(e).reshape(x.shape)
    return Release(
        value=x + noise,
        mechanism="semi_dp_gaussian",
        noise=NoiseLaw("projected_gaussian", {"scale": sigma, "invariants": inv.structure_dict()}),
        guarantee=_guarantee("GDP", {"mu": mu}, x.shape),
        invariants=inv.of(x),
        query=None,
        data_shape=x.shape,
        metadata={"query": "identity", "sensitivity": 2.0, "norm": "l2", "a(t)": 3},
    )


def semi_dp_knorm(table, *, epsilon, rng=None, method: str = "triangulation") -> Release:
    r"""Optimal semi-DP K-norm mechanism for an ``r x c`` table (Algorithms 2-3).

    Releases ``x + V`` with ``V`` of density
    :math:`\propto \exp(-\epsilon \|v\|_K)` on ``span(S_Semi)``,
    ``K = Hull(S_Semi)`` and :math:`\Delta_K = 1` (Prop. 30): the optimal
    K-norm mechanism for :math:`(D_t, A_{a(t)}, f_{\epsilon,0})`-DP
    (Theorem 31).

    The draw is exact and needs no MCMC: ``V = R U`` with
    ``R ~ Gamma(s + 1, 1/epsilon)`` and ``U`` uniform in ``K``, drawn by
    picking a simplex of the centre-to-facet triangulation of ``K`` with
    probability proportional to its volume and a flat-Dirichlet point in it
    (see :mod:`invariantdp.mechanisms.knorm`).  ``method="rejection"``
    reproduces the cube rejection sampler of Algorithm 3 instead.

    Parameters
    ----------
    table : array_like of int, shape (r, c)
    epsilon : float
    rng : None, int, SeedSequence or numpy.random.Generator
    method : {"triangulation", "rejection"}

    Returns
    -------
    Release
        Noise family ``"knorm"`` (polytope of the contingency space).

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
    x = _table(table)
    epsilon = check_epsilon(epsilon)
    gen = as_generator(rng)
    r, c = x.shape
    S = _space(r, c)
    law = KNormNoise("polytope", x.size, 1.0 / epsilon, S)
    v = law.rvs(random_state=gen, method=method).reshape(x.shape)
    return Release(
        value=x + v,
        mechanism="semi_dp_knorm",
        noise=_knorm_law(
            "polytope", x.size, 1.0 / epsilon, space={"kind": "contingency", "r": r, "c": c}
        ),
        guarantee=_guarantee("epsilon-DP", {"epsilon": epsilon}, x.shape),
        invariants=_margins(x.shape).of(x),
        query=None,
        data_shape=x.shape,
        metadata={
            "query": "identity",
            "sensitivity": 1.0,
            "norm": "K",
            "a(t)": 3,
            "sampler": method,
        },
    )

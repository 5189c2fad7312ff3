"""Induced subspace DP mechanisms under linear equality invariants.

Gao, Gong & Yu (2022): for invariants ``C s = c`` with null space ``N``,

* **projected** mechanisms add ``Pi_N e`` with ``e`` the noise of an ordinary
  DP mechanism (Cor. 11; Gaussian Cor. 14, Laplace Cor. 17);
* **extended** mechanisms add ``Q_N e_N`` with ``e_N`` DP noise for the
  query ``Q_N^T A`` in the ``n - n_c`` null-space coordinates (Cor. 15, 18).

Both satisfy the invariants exactly in every draw (``C Pi_N = 0``), are
unbiased, and are ``N``-subspace DP (Def. 5-6).  The projection is chosen by
the structure of the :class:`~invariantdp.Invariants` (``O(n)`` for totals,
nested totals and table margins).  Since the noise never depends on the
data, agents holding parts of ``x`` and a common seed reproduce the central
release exactly (:func:`~invariantdp.mechanisms.distributed_privatize`,
Algorithm 4, in :mod:`._distributed`).

All four mechanisms add floating-point noise drawn from a numpy
``Generator``: their releases are **simulations, not for publication** (the
low-order bits of float noise leak, Mironov 2012; a seed makes the noise
reproducible -- which is exactly what Algorithm 4 relies on), and
``secure=True`` is refused; called with neither ``rng`` nor ``secure=False``
they warn (:class:`~invariantdp.exceptions.SimulationWarning`).  For a release to publish, use
``discrete_laplace_mechanism`` / ``discrete_gaussian_mechanism(x, ...,
secure=True)`` on integer counts (exact integer noise; the invariants are not kept).
"""

from __future__ import annotations

from .._rng import as_generator
from .._validation import InvariantDPError, check_epsilon
from ..families import gaussian_sigma, laplace_scale
from ..invariants import Invariants
from ..privacy import QueryAdjacency
from ..release import NoiseLaw, Release
from ._base import (
    check_data,
    gaussian_calibration,
    guarantee,
    make_release,
    resolve_secure,
    resolve_sensitivity,
    warn_unasked_simulation,
)

__all__ = [
    "extended_gaussian",
    "extended_laplace",
    "projected_gaussian",
    "projected_laplace",
]


_SECURE_ALTERNATIVES = (
    "discrete_laplace_mechanism(x, ..., secure=True) or discrete_gaussian_mechanism(x, ..., "
    "secure=True) on integer counts (exact integer noise; the invariants are not kept)"
)


def _prepare(x, invariants):
    """Validated data, and the invariants with their values (from ``x`` if absent)."""
    if not isinstance(invariants, Invariants):
        raise TypeError(f"`invariants` must be an Invariants, got {type(invariants).__name__}.")
    xv = check_data(x)
    if xv.shape != invariants.shape and xv.shape != (invariants.n_cells,):
        raise InvariantDPError(
            f"`x` must have shape {invariants.shape} to match `invariants`, got {xv.shape}."
        )
    if invariants.values is None:
        with_values = invariants.of(xv)
    else:
        try:
            invariants.check(xv, name="x")
        except InvariantDPError as exc:
            raise InvariantDPError(f"`invariants` are inconsistent with the data: {exc}") from None
        with_values = invariants
    if invariants.rank >= invariants.n_cells:
        raise InvariantDPError(
            f"`invariants` have rank {invariants.rank} = n: nothing is left to privatize."
        )
    return xv, with_values


_ADJ = (
    "neighbouring data sets (bounded DP); the guarantee is N-subspace DP on the null "
    "space N of the invariants (induced subspace DP, Gao, Gong & Yu Def. 6)"
)


def _subspace_dp(definition, params, invariants, metadata):
    """The induced subspace DP guarantee (Gao, Gong & Yu, Def. 6) of a release."""
    return guarantee(
        definition,
        params,
        adjacency=QueryAdjacency(metadata["norm"], metadata["sensitivity"], relation=_ADJ),
        dataspace=f"data of shape {invariants.shape} with {invariants.n_invariants} linear "
        f"invariants (rank {invariants.rank}) published exactly",
    )


def _noise_law(family, scale, invariants):
    return NoiseLaw(family, {"scale": float(scale), "invariants": invariants.structure_dict()})


def _gaussian(inv, mu, epsilon, delta, sensitivity, transform=None):
    """``(sigma, (definition, params), metadata)`` of Gaussian noise on ``inv.n_cells`` cells."""
    mu, gparams, how = gaussian_calibration(mu, epsilon, delta)
    delta2 = resolve_sensitivity(sensitivity, 2, dim=inv.n_cells, transform=transform)
    sigma = gaussian_sigma(delta2, mu=mu)
    return sigma, ("GDP", gparams), {"sensitivity": delta2, "norm": "l2", "calibration": how}


def _laplace(inv, epsilon, sensitivity, transform=None):
    """``(scale, (definition, params), metadata)`` of Laplace noise on ``inv.n_cells`` cells."""
    epsilon = check_epsilon(epsilon)
    delta1 = resolve_sensitivity(sensitivity, 1, dim=inv.n_cells, transform=transform)
    return (
        laplace_scale(delta1, epsilon),
        ("epsilon-DP", {"epsilon": epsilon}),
        {"sensitivity": delta1, "norm": "l1"},
    )


def _release(name, xv, inv, noise, scale, privacy, metadata, labels, asked) -> Release:
    """The release ``x + noise`` of the subspace mechanism ``name`` (a simulation).

    ``noise`` is a new array of the mechanism's own: the value is summed into
    it (the same numbers as ``x + noise``, without another array of n cells).
    ``asked`` is the ``(secure, rng)`` of the call: neither says a simulation
    was intended, the release is made with a warning.
    """
    value = noise.reshape(xv.shape)
    value += xv
    # the mechanism's caller is one frame further than for a call from its body
    warn_unasked_simulation(*asked, name, _SECURE_ALTERNATIVES, stacklevel=4)
    return make_release(
        value,
        name,
        _noise_law(name, scale, inv),
        _subspace_dp(*privacy, inv, metadata),
        data_shape=xv.shape,
        metadata=metadata,
        invariants=inv,
        labels=labels,
    )


def projected_gaussian(
    x, invariants, *, mu=None, epsilon=None, delta=None, sensitivity=1.0, rng=None, secure=None
) -> Release:
    r"""Projected Gaussian mechanism: ``x + Pi_N e``, ``e ~ N(0, sigma^2 I_n)``.

    ``sigma = sensitivity / mu`` (mu-GDP), or ``mu`` from ``(epsilon, delta)``
    through the exact Balle & Wang relation (instead of the classical
    :math:`c_{\epsilon,\delta}` of Lemma 13, which over-noises).  The noise
    has covariance :math:`\sigma^2 \Pi_N`, mean squared error
    :math:`(n - n_c)\sigma^2` (Cor. 14), and equals in law the unconstrained
    Gaussian mechanism conditioned on the invariants (Theorem 22).

    Parameters
    ----------
    x : array_like
        The confidential query (shape ``invariants.shape``).
    invariants : Invariants
        ``C`` with the values ``c``; values absent are computed from ``x``,
        values present must agree with ``x``.
    mu, epsilon, delta : float
        ``mu``, or both ``epsilon`` and ``delta``.
    sensitivity : float or array_like, optional
        :math:`\Delta_2(A)` (default 1), or the sensitivity space of the query.
    rng : None, int, SeedSequence or numpy.random.Generator
    secure : None or bool, optional
        None (default) or False: a simulation (floating-point noise; None without
        ``rng`` warns, ``SimulationWarning``); True is refused (module notes).

    Returns
    -------
    Release
        Noise family ``"projected_gaussian"`` with ``scale`` and the
        invariant structure (``Release.noise.distribution()`` is a
        :class:`~invariantdp.distributions.SubspaceNoise`); ``metadata["randomness"]`` is
        ``"simulation"``.

    References
    ----------
    Gao, Gong & Yu (2022), Theorem 10, Cor. 11 and 14, Theorem 22.

    Examples
    --------
    >>> import numpy as np
    >>> from invariantdp.invariants import totals
    >>> from invariantdp.mechanisms import projected_gaussian
    >>> x = np.array([120.0, 80.0, 50.0, 30.0, 20.0])
    >>> r = projected_gaussian(x, totals([0, 0, 1, 1, 1]), mu=1.0, rng=0)
    >>> r.invariants.check(r.value)  # state totals held exactly
    >>> r.invariants.values
    array([200., 100.])
    """
    resolve_secure(
        secure, rng, "projected_gaussian", exact=False, alternatives=_SECURE_ALTERNATIVES
    )
    xv, inv = _prepare(x, invariants)
    sigma, privacy, metadata = _gaussian(inv, mu, epsilon, delta, sensitivity)
    e = as_generator(rng).standard_normal(inv.n_cells)
    e *= sigma
    noise = invariants.project(e, out=e)  # e is ours: projected where it lies
    return _release(
        "projected_gaussian", xv, inv, noise, sigma, privacy, metadata, x, (secure, rng)
    )


def projected_laplace(x, invariants, *, epsilon, sensitivity=1.0, rng=None, secure=None) -> Release:
    r"""Projected Laplace mechanism: ``x + Pi_N e``, ``e ~ Lap(sensitivity/epsilon)^n``.

    (epsilon, 0)-induced subspace DP (Cor. 17); unbiased; the invariants hold
    exactly.  ``sensitivity`` is :math:`\Delta_1(A)` or a sensitivity space.
    Simulation only: ``secure=True`` is refused (module notes), and
    ``metadata["randomness"]`` is ``"simulation"``.

    Parameters
    ----------
    x : array_like
        The confidential query (shape ``invariants.shape``).
    invariants : Invariants
        ``C`` with the values ``c``; values absent are computed from ``x``,
        values present must agree with ``x``.
    epsilon : float
        ``epsilon > 0``.
    sensitivity : float or array_like, optional
        :math:`\Delta_1(A)` (default 1) or a sensitivity space.
    rng : None, int, SeedSequence or numpy.random.Generator
    secure : None or bool, optional
        None (default) or False: a simulation (floating-point noise; None without
        ``rng`` warns, ``SimulationWarning``); True is refused (module notes).

    Returns
    -------
    Release
        ``epsilon``-DP guarantee (induced subspace DP), noise family
        ``"projected_laplace"`` with ``scale`` and the invariants.

    References
    ----------
    Gao, Gong & Yu (2022), Lemma 16, Cor. 17; Sec. 5.1 (county populations
    with state totals invariant).

    Examples
    --------
    >>> from invariantdp.invariants import totals
    >>> from invariantdp.mechanisms import projected_laplace
    >>> r = projected_laplace([5.0, 7.0, 9.0], totals([0, 0, 0]), epsilon=1.0, rng=0)
    >>> round(float(r.value.sum()), 9)
    21.0
    """
    resolve_secure(secure, rng, "projected_laplace", exact=False, alternatives=_SECURE_ALTERNATIVES)
    xv, inv = _prepare(x, invariants)
    b, privacy, metadata = _laplace(inv, epsilon, sensitivity)
    noise = invariants.project(as_generator(rng).laplace(0.0, b, size=inv.n_cells))
    return _release("projected_laplace", xv, inv, noise, b, privacy, metadata, x, (secure, rng))


def _null_transform(invariants):
    return lambda S: invariants.null_space_coordinates(S).reshape(S.shape[0], -1)


def extended_gaussian(
    x, invariants, *, mu=None, epsilon=None, delta=None, sensitivity=1.0, rng=None, secure=None
) -> Release:
    r"""Extended Gaussian mechanism: ``x + Q_N e_N``, ``e_N ~ N(0, sigma^2 I_{n-n_c})``.

    ``sigma = Delta_2(Q_N^T A) / mu``: the sensitivity of the query restricted
    to the null space, never larger than :math:`\Delta_2(A)`, so the mean
    squared error :math:`(n - n_c)\sigma^2` (Cor. 15) is at most that of
    :func:`projected_gaussian`.

    Parameters
    ----------
    sensitivity : float or array_like, optional
        :math:`\Delta_2(Q_N^T A)` (default 1), or the sensitivity space of the
        query ``A`` in the data coordinates, from which
        :math:`\max_u \|Q_N^T u\|_2` is computed.

    Other parameters (including ``secure``: simulation only) are as in
    :func:`projected_gaussian`.

    Returns
    -------
    Release
        GDP guarantee with ``mu``, noise family ``"extended_gaussian"`` with
        ``scale = sigma`` and the invariants.

    References
    ----------
    Gao, Gong & Yu (2022), Theorem 12, Algorithm 1, Cor. 15.

    Examples
    --------
    >>> import numpy as np
    >>> from invariantdp.invariants import totals
    >>> from invariantdp.mechanisms import extended_gaussian
    >>> S = np.array([[1.0, -1.0, 0.0], [5.0, 5.0, 5.0]])  # the second lies in the row space
    >>> r = extended_gaussian([1.0, 2.0, 3.0], totals([0, 0, 0]), mu=1.0, sensitivity=S, rng=0)
    >>> round(r.metadata["sensitivity"], 12)
    1.414213562373
    """
    resolve_secure(secure, rng, "extended_gaussian", exact=False, alternatives=_SECURE_ALTERNATIVES)
    xv, inv = _prepare(x, invariants)
    sigma, privacy, metadata = _gaussian(
        inv, mu, epsilon, delta, sensitivity, transform=_null_transform(invariants)
    )
    e = as_generator(rng).standard_normal(inv.n_cells - inv.rank)
    e *= sigma
    noise = invariants.null_space_apply(e)
    return _release("extended_gaussian", xv, inv, noise, sigma, privacy, metadata, x, (secure, rng))


def extended_laplace(x, invariants, *, epsilon, sensitivity=1.0, rng=None, secure=None) -> Release:
    r"""Extended Laplace mechanism: ``x + Q_N w_N``, ``w_N ~ Lap(Delta_1(Q_N^T A)/epsilon)``.

    (epsilon, 0)-induced subspace DP (Cor. 18).  ``Q_N`` is the basis of
    :meth:`Invariants.null_space_apply` (Helmert for structured invariants);
    ``sensitivity`` is :math:`\Delta_1(Q_N^T A)` or the sensitivity space of
    ``A``, from which it is computed in that basis.  Simulation only:
    ``secure=True`` is refused (module notes), and ``metadata["randomness"]``
    is ``"simulation"``.

    Parameters
    ----------
    x : array_like
        The confidential query (shape ``invariants.shape``).
    invariants : Invariants
        ``C`` with the values ``c``; values absent are computed from ``x``,
        values present must agree with ``x``.
    epsilon : float
        ``epsilon > 0``.
    sensitivity : float or array_like, optional
        :math:`\Delta_1(Q_N^T A)` (default 1) or the sensitivity space of ``A``.
    rng : None, int, SeedSequence or numpy.random.Generator
    secure : None or bool, optional
        None (default) or False: a simulation (floating-point noise; None without
        ``rng`` warns, ``SimulationWarning``); True is refused (module notes).

    Returns
    -------
    Release
        ``epsilon``-DP guarantee (induced subspace DP), noise family
        ``"extended_laplace"`` with ``scale`` and the invariants.

    References
    ----------
    Gao, Gong & Yu (2022), Theorem 12, Cor. 18.

    Examples
    --------
    >>> from invariantdp.invariants import totals
    >>> from invariantdp.mechanisms import extended_laplace
    >>> r = extended_laplace([5.0, 7.0, 9.0], totals([0, 0, 0]), epsilon=1.0, rng=0)
    >>> round(float(r.value.sum()), 9)
    21.0
    """
    resolve_secure(secure, rng, "extended_laplace", exact=False, alternatives=_SECURE_ALTERNATIVES)
    xv, inv = _prepare(x, invariants)
    b, privacy, metadata = _laplace(
        inv, epsilon, sensitivity, transform=_null_transform(invariants)
    )
    w = as_generator(rng).laplace(0.0, b, size=inv.n_cells - inv.rank)
    noise = invariants.null_space_apply(w)
    return _release("extended_laplace", xv, inv, noise, b, privacy, metadata, x, (secure, rng))

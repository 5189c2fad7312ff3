r"""Mechanisms with exact samplers: discrete Laplace, discrete Gaussian and Tulap.

The discrete mechanisms add integer noise to integer-valued data, so that
``x + noise`` is exact in float64 (``|x| < 2**52``, noise scale at most
``2**46``); the Tulap mechanism adds the canonical noise of
:math:`f_{\epsilon,\delta}` (Awan & Slavkovic 2018; Cho & Awan, Def. 35).
Their signatures follow the pattern of :mod:`invariantdp.mechanisms._additive`::

    name(x, *, <privacy parameters>, sensitivity=1, rng=None, secure=None)

All three have an exact sampler, so without ``rng`` (``secure=None``, the
default) the noise is drawn exactly from :mod:`secrets`
(:mod:`invariantdp.secure`; the exact arithmetic is in :mod:`._grid`), as
``secure=True`` asks.  A seed or numpy generator given as ``rng`` (or
``secure=False``) makes a simulation, recorded as such in
``Release.metadata["randomness"]`` (the rule:
:func:`~invariantdp.mechanisms._base.resolve_secure`).  The laws themselves are
:data:`invariantdp.distributions.discrete_laplace`,
:data:`~invariantdp.distributions.discrete_gaussian` and
:data:`~invariantdp.distributions.tulap`.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from .._validation import check_delta, check_epsilon, check_positive, check_positive_int
from ..distributions import (
    MAX_NOISE_SCALE,
    check_noise_scale,
    draw_discrete_laplace,
    draw_tulap,
    float_up,
    tulap_bounds,
    tulap_plan,
    tulap_privacy_shapes,
)
from ..distributions import discrete_gaussian as discrete_gaussian_law
from ..exceptions import InvariantDPError
from ..families import (
    TULAP,
    exact_gaussian_variance,
    gaussian_sigma,
    laplace_scale,
    rho_of_mu,
)
from ..privacy import QueryAdjacency
from ..release import NoiseLaw, Release
from ..secure import random_source
from ._base import check_data, guarantee, make_release, resolve_secure, resolve_sensitivity
from ._grid import (
    MAX_EXACT_DATA,
    exact_gaussian_noise,
    exact_laplace_noise,
    exact_norm,
    space_support,
    zcdp_reference_epsilon,
)
from ._side_channels import (
    VACUOUS_DELTA,
    public_shape,
    query_adjacency,
    secure_integers,
    secure_lattice_index,
)

__all__ = ["discrete_gaussian_mechanism", "discrete_laplace_mechanism", "tulap_mechanism"]


def _check_integer_valued(xv, name="x"):
    if not np.all(xv == np.round(xv)):
        raise InvariantDPError(f"`{name}` must be integer-valued for integer noise.")
    if not np.all(np.abs(xv) < MAX_EXACT_DATA):
        raise InvariantDPError(
            f"`{name}` has entries of magnitude 2**52 or more (up to "
            f"{float(np.max(np.abs(xv))):.6g}): integer noise added to them would not be "
            "exact in float64."
        )


def _integer_sensitivity(sensitivity, p, dim):
    value = resolve_sensitivity(sensitivity, p, dim=dim)
    if p == 1 and value != np.round(value):
        raise InvariantDPError(f"`sensitivity` ({value}) must be a whole number for integer noise.")
    return value


def _check_integer_scale(scale: float, what: str) -> None:
    check_noise_scale(
        scale,
        f"the noise scale {what}",
        ": integer noise of a larger scale cannot be drawn and added to float64 data exactly "
        "(numpy's geometric saturates and would return the data unchanged); raise the privacy "
        "parameter or lower `sensitivity`.",
    )


#: the data rule of the secure integer mechanisms, recorded in their metadata
INTEGER_RULE = (
    "x integer-valued (otherwise the call is refused as a whole), clamped to |x| <= 2**52 - 1"
)


def _integer_data(x, secure: bool):
    """``(shape, data)``: the public shape; the data checked now for a simulation only.

    A secure call reads its data last, after every public check
    (:func:`._side_channels.secure_integers`).
    """
    if secure:
        return public_shape(x), None
    xv = check_data(x)
    _check_integer_valued(xv)
    return xv.shape, xv


def _integer_rule(secure: bool) -> dict:
    return {"data_rule": INTEGER_RULE} if secure else {}


def discrete_laplace_mechanism(x, *, epsilon, sensitivity=1, rng=None, secure=None) -> Release:
    r"""Geometric mechanism: ``x + Lap_Z(sensitivity / epsilon)`` per coordinate.

    ``Lap_Z(t)`` is the discrete Laplace (double geometric) law
    :math:`P(k) \propto e^{-|k|/t}` on the integers; for an integer-valued
    query with integer :math:`\ell_1` sensitivity it gives epsilon-DP.
    The scale ``t = sensitivity / epsilon`` must be at most ``2**46`` and
    ``|x| < 2**52``, so that ``x + noise`` is exact in float64 (a secure
    release clamps its data to ``|x| <= 2**52 - 1`` instead of refusing
    them, a rule that does not depend on the data).  The noise is drawn
    securely unless ``rng`` is given; with a seed or generator it comes
    from numpy: a simulation (a seed is a key: two releases with the same
    seed share their noise exactly; see :mod:`invariantdp.secure`).

    Parameters
    ----------
    x : array_like of integers
    epsilon : float
    sensitivity : int or array_like, optional
        Integer :math:`\ell_1` sensitivity (default 1) or a sensitivity space.
    rng : None, int, SeedSequence or numpy.random.Generator
        A seed or generator makes the release a simulation (reproducible,
        not for publication); must be None (or a
        :class:`~invariantdp.secure.SecureGenerator`) with ``secure=True``.
    secure : None or bool, optional
        None (the default): secure unless ``rng`` is given; False: a
        simulation.  Secure draws the noise for a production release: exact
        :math:`\mathrm{Lap}_{\mathbb Z}(\Delta/\epsilon)` (the exact rational
        value of ``sensitivity / epsilon``) from :mod:`secrets`, with the same
        work for every cell whatever its noise, so that the run time reveals
        nothing about the data (see :mod:`invariantdp.secure`).  Public
        parameters are checked before the data are read; non-integer data
        are refused as a whole, without showing them.

    Returns
    -------
    Release
        Integer-valued; noise family ``"discrete_laplace"`` with
        ``scale = sensitivity / epsilon``; the adjacency states the
        :math:`\ell_1` sensitivity.  Guarantee: ``epsilon``-DP (simulation),
        or, for the value with its run time, ``(epsilon, delta)``-DP with
        ``delta = (1 + e**epsilon) timing_tv`` below ``2**-64`` (secure).

    References
    ----------
    Ghosh, Roughgarden & Sundararajan (2012); Canonne, Kamath & Steinke
    (2020), Def. 3; Gong & Meng (2020) (double geometric); Jin et al. (2022),
    IEEE S&P (timing attacks).

    Examples
    --------
    >>> from invariantdp.mechanisms import discrete_laplace_mechanism
    >>> r = discrete_laplace_mechanism([3, 7, 0], epsilon=0.5, rng=2)
    >>> bool((r.value == r.value.round()).all()), r.simulation
    (True, True)
    """
    secure = resolve_secure(secure, rng, "discrete_laplace_mechanism")
    gen = random_source(rng, secure)
    epsilon = check_epsilon(epsilon)
    shape, xv = _integer_data(x, secure)
    delta1 = _integer_sensitivity(sensitivity, 1, math.prod(shape))
    t = laplace_scale(delta1, epsilon)
    _check_integer_scale(t, "sensitivity / epsilon")
    tv = None
    if secure:
        exact = exact_norm(sensitivity, 1) / Fraction(epsilon)
        xv = secure_integers(x)
        noise, tv = exact_laplace_noise(exact, shape, gen, epsilon)
    else:
        noise = draw_discrete_laplace(gen, t, shape)
    return make_release(
        xv + noise,
        "discrete_laplace",
        NoiseLaw("discrete_laplace", {"scale": t}),
        guarantee(
            "epsilon-DP",
            {"epsilon": epsilon},
            adjacency=query_adjacency("l1", delta1, np.ndim(sensitivity) != 0),
            timing_tv=tv,
        ),
        data_shape=shape,
        metadata={
            "sensitivity": delta1,
            "norm": "l1",
            **space_support(sensitivity, math.prod(shape)),
            **_integer_rule(secure),
        },
        secure=secure,
        labels=x,
    )


def discrete_gaussian_mechanism(
    x, *, mu=None, rho=None, sensitivity=1, rng=None, secure=None
) -> Release:
    r"""Discrete Gaussian mechanism: ``x + N_Z(0, sigma^2)`` per coordinate.

    ``sigma = sensitivity / mu`` (or ``sensitivity / sqrt(2 rho)``); the
    release is :math:`\rho`-zCDP with :math:`\rho = \Delta_2^2/(2\sigma^2)`
    (Canonne, Kamath & Steinke 2020, Theorem 4).  The noise is drawn by the
    CKS rejection sampler (Algorithm 3).  ``sigma`` must be at most
    ``2**46`` and ``|x| < 2**52`` (clamped to ``2**52 - 1`` by a secure
    release).  The noise is drawn securely unless ``rng`` is given (then
    from numpy: a simulation).

    Parameters
    ----------
    x : array_like of integers
    mu : float, optional
        Sets ``sigma = sensitivity / mu`` (then ``rho = mu^2 / 2``).
    rho : float, optional
        zCDP parameter, instead of ``mu``.
    sensitivity : float or array_like, optional
        :math:`\ell_2` sensitivity (default 1) of the integer-valued query.
    rng : None, int, SeedSequence or numpy.random.Generator
        A seed or generator makes the release a simulation (reproducible,
        not for publication); must be None (or a
        :class:`~invariantdp.secure.SecureGenerator`) with ``secure=True``.
    secure : None or bool, optional
        None (the default): secure unless ``rng`` is given; False: a
        simulation.  Secure draws the noise for a production release: exact
        :math:`N_{\mathbb Z}(0, \sigma^2)` with the rational
        :math:`\sigma^2 = \Delta_2^2/\mu^2` (or :math:`\Delta_2^2/(2\rho)`;
        :math:`\Delta_2^2` summed exactly for a sensitivity space) by CKS
        Algorithm 3 from :mod:`secrets`, every trial doing the same work
        (see :mod:`invariantdp.secure`); data handled as by
        :func:`discrete_laplace_mechanism`.

    Returns
    -------
    Release
        Integer-valued; zCDP guarantee with ``rho`` (secure: and
        ``timing_tv``, the run time's share, which its tradeoff function
        accounts for), noise family ``"discrete_gaussian"`` with ``sigma``;
        the adjacency states the :math:`\ell_2` sensitivity.

    References
    ----------
    Canonne, Kamath & Steinke (2020), Def. 1, Theorem 4 and Algorithm 3.

    Examples
    --------
    >>> from invariantdp.mechanisms import discrete_gaussian_mechanism
    >>> r = discrete_gaussian_mechanism([3, 7, 0], rho=0.5, rng=2)
    >>> r.guarantee.params
    {'rho': 0.5}
    """
    secure = resolve_secure(secure, rng, "discrete_gaussian_mechanism")
    gen = random_source(rng, secure)
    if (mu is None) == (rho is None):
        raise InvariantDPError(f"give exactly one of `mu` or `rho`; got mu={mu}, rho={rho}.")
    if mu is not None:
        rho = rho_of_mu(check_positive("mu", mu))
    else:
        rho = check_positive("rho", rho)
    shape, xv = _integer_data(x, secure)
    delta2 = resolve_sensitivity(sensitivity, 2, dim=math.prod(shape))
    sigma = gaussian_sigma(delta2, rho=rho)
    _check_integer_scale(sigma, "sigma")
    tv = None
    if secure:
        d2 = exact_norm(sensitivity, 2)
        s2 = exact_gaussian_variance(d2, **({"mu": mu} if mu is not None else {"rho": rho}))
        xv = secure_integers(x)
        noise, tv = exact_gaussian_noise(s2, shape, gen, zcdp_reference_epsilon(rho))
    else:
        noise = discrete_gaussian_law(sigma).rvs(size=shape, random_state=gen)
    return make_release(
        xv + noise,
        "discrete_gaussian",
        NoiseLaw("discrete_gaussian", {"sigma": sigma}),
        guarantee(
            "zCDP",
            {"rho": rho},
            adjacency=query_adjacency("l2", delta2, np.ndim(sensitivity) != 0),
            timing_tv=tv,
        ),
        data_shape=shape,
        metadata={"sensitivity": delta2, "norm": "l2", **_integer_rule(secure)},
        secure=secure,
        labels=x,
    )


def _tulap_value(k: np.ndarray, g: np.ndarray, u: np.ndarray, step: float) -> np.ndarray:
    """The secure Tulap release ``step * fl((k + G) + U)``: a function of ``k + G`` and ``U``.

    ``k + G`` is an exact integer (``|k| < 2**51``, ``|G| < 2**52``) and the
    two roundings that follow depend on nothing else, so the double released
    is a function of the exact Tulap release ``k + N`` (Mironov's attack
    reads the data off roundings that involve ``x`` itself).
    """
    return step * ((k + g).astype(float) + u)


def _check_tulap_scale(epsilon: float, shapes) -> None:
    """Refuse Tulap noise that is not bounded well below ``2**52``.

    The noise is below its truncation bound ``c`` (``delta > 0``), and below
    ``2**52`` with probability ``1 - 1e-27`` when ``1 / epsilon <= 2**46``.
    """
    if 1.0 / epsilon <= MAX_NOISE_SCALE:
        return
    c = float(tulap_bounds(*shapes)[1])
    if not c <= MAX_NOISE_SCALE:
        raise InvariantDPError(
            f"`epsilon` ({epsilon:.6g}) gives Tulap noise of scale 1/epsilon = {1 / epsilon:.6g} "
            f"and support bound {c:.6g}: one of them must be <= 2**46 (~7.04e13) for the noise "
            "to be drawn and added exactly; raise `epsilon` (or `delta`, which bounds the "
            "support)."
        )


def tulap_mechanism(
    x, *, epsilon, delta=0.0, sensitivity=1.0, coordinates_changed=None, rng=None, secure=None
) -> Release:
    r"""Tulap mechanism: ``x + sensitivity * Tulap(0, exp(-epsilon), q)``.

    Tulap is the canonical noise distribution of :math:`f_{\epsilon,\delta}`
    (Awan & Slavkovic 2018; Cho & Awan, Def. 35): for a scalar statistic of
    sensitivity ``sensitivity`` the release is :math:`f_{\epsilon,\delta}`-DP
    exactly.  For an array each coordinate gets independent noise, and
    ``sensitivity`` bounds the change of *each* coordinate: the release is
    :math:`f_{\epsilon,\delta}`-DP only when neighbours differ in one
    coordinate.  The guarantee recorded is the one for neighbours that
    differ in at most ``coordinates_changed`` coordinates (by default all of
    them), by basic composition: ``(m epsilon, m delta)`` for ``m``
    coordinates (a histogram under add/remove-one changes one cell:
    ``coordinates_changed=1``; under replace-one, two).  With a seed or
    generator as ``rng`` (or ``secure=False``) the noise is floating point
    from numpy: a simulation, whose output bits can reveal ``x`` (Mironov
    2012).

    Without ``rng`` (or with ``secure=True``) the release is exact end to end.
    ``x`` is rounded to the lattice ``sensitivity * Z``:
    ``k = floor(x / sensitivity + 1/2)``, computed exactly (data on the lattice
    keep their value, and neighbours ``|x - x'| <= sensitivity`` always get
    ``|k - k'| <= 1``), clamped to ``|k| <= 2**51 - 1``; a rule that does not
    depend on the data, so no data are refused.  The release is
    ``sensitivity * fl((k + G) + U)`` where ``(G, U)``, the integer part and
    the ``2**-53``-cell of the uniform part of an exact Tulap draw, come from
    :mod:`secrets`; ``k + G`` is exact, and the two roundings that follow are
    fixed functions of the exact Tulap release ``k + N``, so nothing about
    ``x`` leaks beyond it.  The truncation for ``delta > 0`` is decided on the
    noise alone and exactly (interval arithmetic on ``b = exp(-epsilon)``, the
    uniform part refined), so the noise law is exactly
    ``Tulap(0, exp(-epsilon), q)`` for the real ``b`` and ``q`` of the doubles
    ``epsilon`` and ``delta``
    (:func:`~invariantdp.distributions._exact_samplers.draw_tulap_exact`), and every
    draw does the same work, so that the run time says nothing about the noise
    (:mod:`invariantdp.secure`).

    Every sampler here has a bounded expected number of trials whatever
    (epsilon, delta): when the truncated support is narrow (``q > 1/2``,
    e.g. ``epsilon = 1e-6, delta = 0.5``) the draw is proposed uniformly on
    it.  Noise of scale ``1/epsilon`` and support bound both above ``2**46``
    is refused.

    Parameters
    ----------
    x : array_like
    epsilon : float
        Per coordinate.
    delta : float, optional
        Per coordinate.
    sensitivity : float, optional
        Sensitivity of each coordinate (default 1): neighbours have
        ``|x_i - x'_i| <= sensitivity`` (the :math:`\ell_\infty` norm).
        With ``secure=True`` in ``[2**-900, 2**900]``.
    coordinates_changed : int, optional
        How many coordinates neighbours may differ in (default: all); the
        recorded guarantee is composed over them.
    rng : None, int, SeedSequence or numpy.random.Generator
        A seed or generator makes the release a simulation (reproducible,
        not for publication); must be None (or a
        :class:`~invariantdp.secure.SecureGenerator`) with ``secure=True``.
    secure : None or bool, optional
        None (the default): secure unless ``rng`` is given; True: draw the
        noise exactly from :mod:`secrets` for a production release (above,
        and :mod:`invariantdp.secure`); False: a simulation.

    Returns
    -------
    Release
        ``(epsilon, delta)``-DP guarantee composed over ``coordinates_changed``
        (with the per-coordinate ``epsilon_per_coordinate``,
        ``delta_per_coordinate`` when they differ; secure: for the value with
        its run time, ``delta`` including its share, ``timing_tv``); noise
        family ``"tulap"`` with ``b``, ``q``
        (:func:`~invariantdp.distributions.tulap_params`) and ``scale``.

    References
    ----------
    Awan & Slavkovic (2018), Def. 4.1 and Thm 4.3; Cho & Awan, Def. 35
    (the canonical noise distribution); Dwork & Roth (2014), Thm 3.16
    (basic composition).

    Examples
    --------
    >>> from invariantdp.mechanisms import tulap_mechanism
    >>> r = tulap_mechanism(12.0, epsilon=1.0, delta=0.01, rng=3)
    >>> sorted(r.noise.params), r.simulation
    (['b', 'q', 'scale'], True)
    >>> s = tulap_mechanism([0.0, 4.0], epsilon=1.0, sensitivity=2.0, secure=True)
    >>> s.simulation, s.guarantee.params["epsilon"], s.guarantee.params["coordinates_changed"]
    (False, 2.0, 2)
    >>> h = tulap_mechanism([0.0, 4.0], epsilon=1.0, coordinates_changed=1, rng=0).guarantee
    >>> h.params
    {'epsilon': 1.0, 'delta': 0.0}
    >>> h.adjacency
    'query values differing by at most 1 in each coordinate (linf norm), in one coordinate'
    """
    secure = resolve_secure(secure, rng, "tulap_mechanism")
    gen = random_source(rng, secure)
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    if np.ndim(sensitivity) != 0:
        raise InvariantDPError("`sensitivity` must be a number for the Tulap mechanism.")
    scale = check_positive("sensitivity", sensitivity)
    if secure and not 2.0**-900 <= scale <= 2.0**900:
        raise InvariantDPError(
            f"`sensitivity` ({scale!r}) must be in [2**-900, 2**900] with `secure=True` (the "
            "exact rounding to the lattice sensitivity * Z)."
        )
    shape = public_shape(x) if secure else None  # a secure call reads the data last
    xv = None if secure else check_data(x)
    shape = shape if secure else xv.shape
    size = math.prod(shape)
    changed = _coordinates_changed(coordinates_changed, size)
    # the family's calibration: (b, q) = tulap_params(epsilon, delta), scale = sensitivity
    noise, _ = TULAP.calibrate(epsilon=epsilon, delta=delta, sensitivity=scale)
    shapes = tulap_privacy_shapes(epsilon, delta)
    shapes = tuple(float(v) for v in shapes)
    _check_tulap_scale(epsilon, shapes)
    params, tv = _composed(epsilon, delta, changed, secure), None
    if secure:
        k = secure_lattice_index(x, scale)
        # the run time's share is kept below 2**-64 up to epsilon 60 (or the coordinate's own):
        # beyond, the composed guarantee is vacuous whatever its delta
        at = min(params["epsilon"], max(epsilon, 60.0))
        plan = tulap_plan(epsilon, delta, size, epsilon_total=at)
        g, j = plan.draw(gen, size)
        u = ((j - (1 << 52)).astype(float) + 0.5) * 2.0**-53
        value = _tulap_value(k, g.reshape(shape), u.reshape(shape), scale)
        tv = size * plan.tv_per_draw()
        extra = {"data_rule": LATTICE_RULE}
    else:
        value = xv + scale * draw_tulap(gen, *shapes, shape)
        extra = {}
    return make_release(
        value,
        "tulap",
        NoiseLaw("tulap", noise),
        guarantee(
            "(epsilon, delta)-DP",
            params,
            adjacency=tulap_adjacency(scale, changed),
            timing_tv=tv,
        ),
        data_shape=shape,
        metadata={
            "sensitivity": scale,
            "norm": "linf",
            "coordinates_changed": changed,
            **extra,
        },
        secure=secure,
        labels=x,
    )


#: the data rule of the secure Tulap mechanism, recorded in its metadata
LATTICE_RULE = (
    "x rounded to the lattice sensitivity * k with k = floor(x / sensitivity + 1/2) "
    "(exactly), clamped to |k| <= 2**51 - 1"
)


def _coordinates_changed(value, size: int) -> int:
    if value is None:
        return size
    m = check_positive_int("coordinates_changed", value)
    if m > size:
        raise InvariantDPError(
            f"`coordinates_changed` ({m}) must be at most the number of coordinates ({size})."
        )
    return m


def _composed(epsilon: float, delta: float, m: int, secure: bool) -> dict:
    """(epsilon, delta) of ``m`` coordinates by basic composition, rounded up.

    The per-coordinate parameters of the noise are recorded too when they
    differ from the guarantee's (``m > 1``, or a secure release whose delta
    includes its run time's share).
    """
    if m == 1 and not secure:
        return {"epsilon": epsilon, "delta": delta}
    return {
        "epsilon": float_up(m * Fraction(epsilon)),
        "delta": min(float_up(m * Fraction(delta)), VACUOUS_DELTA),
        "epsilon_per_coordinate": epsilon,
        "delta_per_coordinate": delta,
        "coordinates_changed": m,
    }


def tulap_adjacency(sensitivity: float, m: int) -> QueryAdjacency:
    """The neighbours of the Tulap mechanism: per-coordinate changes, in ``m`` coordinates."""
    return QueryAdjacency("linf", float(sensitivity), coordinates_changed=int(m))

r"""Additive Laplace and Gaussian mechanisms, simulated or sampled exactly on a grid.

Every mechanism releases ``x + noise`` with noise independent of ``x`` and
returns a :class:`~invariantdp.Release` recording the exact noise law and the
privacy guarantee.  Signatures follow one pattern::

    name(x, *, <privacy parameters>, sensitivity=1.0, rng=None, secure=None)

``sensitivity`` is the sensitivity of the query in the norm the mechanism is
calibrated by (l2 for Gaussian noise, l1 for Laplace noise, ...), given as a
number or as a sensitivity space (a 2-D array of difference vectors, whose
largest norm is used).  Gaussian noise has standard deviation
``sensitivity / mu`` under mu-GDP (Dong, Roth & Su 2022; Cho & Awan, Prop. 6),
or is calibrated from ``epsilon, delta`` through the exact Balle & Wang (2018)
relation; Laplace noise has scale ``sensitivity / epsilon``.

Without ``rng`` (``secure=None``, the default, or ``secure=True``) the noise
is sampled exactly from :mod:`secrets` (:mod:`invariantdp.secure`): integer
noise on a power-of-two grid, calibrated to the sensitivity of the data
rounded to that grid (see :func:`laplace_mechanism`; the exact arithmetic is
in :mod:`._grid`).  A seed or numpy generator as ``rng`` (or
``secure=False``) draws from a ``numpy.random.Generator``: a *simulation*,
recorded as such in ``Release.metadata["randomness"]``; the floating-point
samplers also leak the data through the low-order bits of the output
(Mironov 2012).  The rule is
:func:`~invariantdp.mechanisms._base.resolve_secure`.

The other additive mechanisms: the discrete Laplace, discrete Gaussian and
Tulap mechanisms in :mod:`invariantdp.mechanisms._integer_noise`, the l_p and
K-norm mechanisms (:func:`~invariantdp.mechanisms.knorm`), the projected and
extended ones in :mod:`invariantdp.mechanisms._subspace_mechanisms`.  The old names
``laplace`` and ``gaussian`` (and, from this module, ``discrete_laplace``,
``discrete_gaussian``, ``tulap`` and ``lp_mechanism``) are deprecated
aliases, kept for one release.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from .._deprecation import moved_names
from .._validation import check_epsilon
from ..distributions import TIMING_DELTA
from ..exceptions import InvariantDPError
from ..families import (
    exact_gaussian_variance,
    gaussian_sigma,
    laplace_scale,
    rho_of_mu,
)
from ..release import NoiseLaw, Release
from ..secure import random_source
from ._base import (
    check_data,
    check_float_scale,
    gaussian_calibration,
    guarantee,
    make_release,
    resolve_secure,
    resolve_sensitivity,
)
from ._grid import (
    GRID_RULE,
    changed_coordinates,
    check_grid_noise,
    exact_gaussian_noise,
    exact_laplace_noise,
    exact_norm,
    grid_for,
    grid_l1_sensitivity,
    grid_l2_sensitivity_sq,
    no_grid,
    space_support,
    sqrt_up,
    zcdp_for,
    zcdp_reference_epsilon,
)
from ._side_channels import public_shape, query_adjacency, secure_grid_index

__all__ = ["gaussian_mechanism", "laplace_mechanism"]


def laplace_mechanism(x, *, epsilon, sensitivity=1.0, rng=None, secure=None, grid=None) -> Release:
    r"""Laplace mechanism: ``x + Lap(sensitivity / epsilon)`` in every coordinate.

    A simulation when ``rng`` is given (or ``secure=False``): floating-point
    Laplace noise from a numpy generator, which leaks the data through the
    low-order bits of the output (Mironov 2012), not for publication.

    Otherwise (``secure=None``, the default, or ``True``) it samples
    exactly on a grid ``gamma = 2**k`` (the approach of OpenDP, an exact
    cousin of Mironov's snapping): ``x`` is rounded to
    the nearest multiple of ``gamma`` and the release is
    ``gamma * (round(x / gamma) + K)`` with ``K ~ Lap_Z(t)`` drawn exactly from
    :mod:`secrets` (CKS 2020, Algorithm 2).  Rounding moves each coordinate by
    at most ``gamma / 2``, so the rounded data of neighbours differ, in grid
    units, by at most ``|x_i - x'_i| / gamma + 1`` in each of the at most
    ``s`` coordinates that change; that distance is an integer vector, so
    its :math:`\ell_1` norm is at most
    :math:`\Delta_\gamma = \lfloor\Delta_1/\gamma\rfloor + s`.  With
    ``t = Delta_gamma / epsilon`` the geometric mechanism makes the rounded
    release exactly epsilon-DP (Ghosh, Roughgarden & Sundararajan 2012), and
    the output double is a function of it.  ``s`` is the number of
    coordinates (a number ``sensitivity``) or the largest support of a row
    (a sensitivity space, which must then list every possible difference).
    Data beyond ``(2**52 - 1) gamma`` in magnitude are clamped to it first
    (a rule of the public grid, never a refusal that depends on the data;
    a coarser ``grid`` widens the range), and the noise is drawn with the
    same work for every cell, so that the run time says nothing about it:
    the guarantee recorded is that of the value with its run time,
    ``(epsilon, delta)``-DP with ``delta = (1 + e**epsilon) timing_tv``
    below ``2**-64`` (:mod:`invariantdp.secure`).

    Parameters
    ----------
    x : array_like
        The confidential query value (any shape).
    epsilon : float
        ``epsilon > 0``.
    sensitivity : float or array_like, optional
        :math:`\ell_1` sensitivity (default 1), or a sensitivity space whose
        largest :math:`\ell_1` norm is used.
    rng : None, int, SeedSequence or numpy.random.Generator
        A seed or generator makes the release a simulation (reproducible,
        not for publication); must be None (or a
        :class:`~invariantdp.secure.SecureGenerator`) with ``secure=True``.
    secure : None or bool, optional
        None (the default): secure unless ``rng`` is given; True: exact grid
        sampling from :mod:`secrets` for a production release; False: a
        simulation.
    grid : float, optional
        With the secure path: the grid ``gamma``, a power of two.  Default:
        the largest power of two below ``2**-20 min(scale, Delta_1 / s)``
        (but at least ``2**-40 scale``), which keeps the rounding's share of
        the noise below ``2**-20``.  Data are clamped to ``(2**52 - 1)
        gamma``: a coarser grid admits larger data.

    Returns
    -------
    Release
        epsilon-DP (simulation) or (epsilon, delta)-DP with the run time's
        share (secure), for neighbours within the :math:`\ell_1`
        sensitivity (the adjacency says so).  Noise family ``"laplace"`` with
        ``scale`` (simulation), or ``"grid_laplace"`` with ``grid`` and
        ``scale = gamma * t``: the exact law of ``value - gamma * round(x /
        gamma)`` (secure).

    References
    ----------
    Dwork et al. (2006); Gao, Gong & Yu, Lemma 16; Cho & Awan, Algorithm 4;
    Mironov (2012); Canonne, Kamath & Steinke (2020), Def. 3; Jin et al.
    (2022), IEEE S&P (timing attacks).

    Examples
    --------
    >>> import numpy as np
    >>> from invariantdp.mechanisms import laplace_mechanism
    >>> r = laplace_mechanism([10.0, 20.0], epsilon=1.0, sensitivity=2.0, rng=0)
    >>> r.noise.params, r.simulation
    ({'scale': 2.0}, True)
    >>> s = laplace_mechanism([10.0, 20.0], epsilon=1.0, sensitivity=2.0, secure=True)
    >>> s.noise.family, s.metadata["grid"], s.simulation
    ('grid_laplace', 9.5367431640625e-07, False)
    >>> bool(np.all(s.value / s.metadata["grid"] % 1 == 0))  # on the grid
    True
    """
    secure = resolve_secure(secure, rng, "laplace_mechanism")
    gen = random_source(rng, secure)
    epsilon = check_epsilon(epsilon)
    shape = public_shape(x) if secure else None  # a secure call reads the data last
    xv = None if secure else check_data(x)
    size = math.prod(shape) if secure else xv.size
    delta1 = resolve_sensitivity(sensitivity, 1, dim=size)
    scale = laplace_scale(delta1, epsilon)
    check_float_scale(scale, "sensitivity / epsilon")
    space = np.ndim(sensitivity) != 0
    tv = None
    if secure:
        d = changed_coordinates(sensitivity, size)
        gamma = grid_for(grid, scale, delta1 / d)
        grid_sens = grid_l1_sensitivity(exact_norm(sensitivity, 1), gamma, d)
        t = Fraction(grid_sens) / Fraction(epsilon)
        check_grid_noise(t, "scale")
        k = secure_grid_index(x, gamma)
        noise, tv = exact_laplace_noise(t, shape, gen, epsilon)
        value = gamma * (k + noise).astype(float)
        law = NoiseLaw("grid_laplace", {"grid": gamma, "scale": gamma * float(t)})
        extra = {
            "grid": gamma,
            "grid_sensitivity": grid_sens,
            "rounding": GRID_RULE,
        }
    else:
        no_grid(grid)
        shape = xv.shape
        value = xv + gen.laplace(0.0, scale, size=shape)
        law, extra = NoiseLaw("laplace", {"scale": scale}), {}
    return make_release(
        value,
        "laplace",
        law,
        guarantee(
            "epsilon-DP",
            {"epsilon": epsilon},
            adjacency=query_adjacency("l1", delta1, space),
            timing_tv=tv,
        ),
        data_shape=shape,
        metadata={"sensitivity": delta1, "norm": "l1", **space_support(sensitivity, size), **extra},
        secure=secure,
        labels=x,
    )


def gaussian_mechanism(
    x, *, mu=None, epsilon=None, delta=None, sensitivity=1.0, rng=None, secure=None, grid=None
) -> Release:
    r"""Gaussian mechanism: ``x + N(0, sigma^2 I)`` with ``sigma = sensitivity / mu``.

    A simulation when ``rng`` is given (or ``secure=False``): floating-point
    Gaussian noise from a numpy generator leaks the data through the
    low-order bits of the output (Mironov 2012), not for publication.

    Otherwise (``secure=None``, the default, or ``True``) it samples
    exactly on a grid ``gamma = 2**k``, as :func:`laplace_mechanism` does:
    the release is ``gamma * (round(x / gamma) + K)`` with
    ``K_i ~ N_Z(0, s^2)`` i.i.d., exact discrete Gaussians from
    :mod:`secrets` (CKS 2020, Algorithm 3).  In grid units the rounded data
    of neighbours differ by an integer vector ``e`` with
    ``|e_i| <= |x_i - x'_i| / gamma + 1`` on at most ``m`` coordinates, so
    :math:`\|e\|_2 \le \Delta_2/\gamma + \sqrt m` and the integer
    :math:`\|e\|_2^2` is at most
    :math:`D = \lfloor(\Delta_2/\gamma + \sqrt m)^2\rfloor` (computed with
    rational upper bounds of the square roots).  With
    :math:`s^2 = D / (2\rho)` (exact rationals) the release is
    :math:`\rho`-zCDP (CKS 2020, Theorem 4, summed over coordinates).  The
    discrete Gaussian is not claimed to be mu-GDP, so the recorded
    guarantee is zCDP: ``rho = mu**2 / 2`` when ``mu`` is given; for
    ``epsilon, delta`` the largest ``rho`` whose zCDP implies the requested
    (epsilon, delta)-DP through CKS Corollary 13 (at epsilon = 1,
    delta = 1e-5: ``rho = 0.0306``, noise 8% above the exact Gaussian
    calibration, 17% below the conversion ``epsilon = rho + 2 sqrt(rho log(1/delta))``).
    The noise is drawn with the same work for every cell and the target is
    ``delta - 2**-64``: the run time's share (at most ``2**-64``, recorded as
    ``timing_tv``) keeps the pair (value, run time) (epsilon, delta)-DP.
    Data are clamped to ``(2**52 - 1) gamma`` as in
    :func:`laplace_mechanism`.

    Parameters
    ----------
    x : array_like
        The confidential query value.
    mu : float, optional
        mu-GDP parameter.
    epsilon, delta : float, optional
        Instead of ``mu``: the smallest ``mu`` whose Gaussian tradeoff gives
        (epsilon, delta)-DP, from the exact Balle & Wang (2018) relation
        :math:`\delta = \Phi(-\epsilon/\mu + \mu/2) - e^\epsilon\Phi(-\epsilon/\mu - \mu/2)`
        (simulation), or the zCDP calibration above (secure).
    sensitivity : float or array_like, optional
        :math:`\ell_2` sensitivity (default 1) or a sensitivity space (which,
        with ``secure=True``, must list every possible difference: ``m`` is
        its largest row support, otherwise the number of coordinates).
    rng : None, int, SeedSequence or numpy.random.Generator
        A seed or generator makes the release a simulation (reproducible,
        not for publication); must be None (or a
        :class:`~invariantdp.secure.SecureGenerator`) with ``secure=True``.
    secure : None or bool, optional
        None (the default): secure unless ``rng`` is given; True: exact grid
        sampling from :mod:`secrets` for a production release (a zCDP
        guarantee, above); False: a simulation (mu-GDP).
    grid : float, optional
        With the secure path: the grid, a power of two.  Default: the
        largest power of two below ``2**-20 min(sigma, Delta_2 / sqrt(m))``
        (at least ``2**-40 sigma``).  Data are clamped to ``(2**52 - 1) gamma``.

    Returns
    -------
    Release
        Simulation: GDP guarantee with ``mu`` (and the target epsilon, delta
        when given), noise family ``"gaussian"``.  Secure: zCDP with ``rho``
        and ``timing_tv`` (and the target ``epsilon, delta`` when given, which
        hold with the run time), noise family ``"grid_gaussian"`` with
        ``grid`` and ``sigma = gamma * s``.  The adjacency states the
        :math:`\ell_2` sensitivity.

    References
    ----------
    Dong, Roth & Su (2022); Cho & Awan, Prop. 6; Balle & Wang (2018);
    Canonne, Kamath & Steinke (2020), Algorithm 3, Theorem 4, Corollary 13.

    Examples
    --------
    >>> from invariantdp.mechanisms import gaussian_mechanism
    >>> r = gaussian_mechanism([1.0, 2.0, 3.0], mu=0.5, sensitivity=2.0, rng=1)
    >>> r.noise.params["scale"]
    4.0
    >>> s = gaussian_mechanism([1.0, 2.0, 3.0], epsilon=1.0, delta=1e-5, secure=True)
    >>> s.guarantee.definition, round(s.guarantee.params["rho"], 4)
    ('zCDP', 0.0306)
    """
    secure = resolve_secure(secure, rng, "gaussian_mechanism")
    gen = random_source(rng, secure)
    mu_, gparams, how = gaussian_calibration(mu, epsilon, delta)
    shape = public_shape(x) if secure else None  # a secure call reads the data last
    xv = None if secure else check_data(x)
    size = math.prod(shape) if secure else xv.size
    delta2 = resolve_sensitivity(sensitivity, 2, dim=size)
    sigma = gaussian_sigma(delta2, mu=mu_)
    check_float_scale(sigma, "sigma = sensitivity / mu")
    space = np.ndim(sensitivity) != 0
    if secure:
        value, law, definition, params, extra, tv = _secure_gaussian(
            x, shape, mu is not None, gparams, sensitivity, delta2, grid, gen
        )
    else:
        no_grid(grid)
        shape = xv.shape
        value = xv + sigma * gen.standard_normal(shape)
        law, definition, params = NoiseLaw("gaussian", {"scale": sigma}), "GDP", gparams
        extra, tv = {"calibration": how}, None
    return make_release(
        value,
        "gaussian",
        law,
        guarantee(definition, params, adjacency=query_adjacency("l2", delta2, space), timing_tv=tv),
        data_shape=shape,
        metadata={"sensitivity": delta2, "norm": "l2", **extra},
        secure=secure,
        labels=x,
    )


def _secure_gaussian(x, shape, from_mu, gparams, sensitivity, delta2, grid, gen):
    """The exact grid path of :func:`gaussian_mechanism`: zCDP calibration, grid, noise.

    For a target (epsilon, delta) the zCDP is calibrated to
    ``delta - 2**-64``: the run time adds at most ``2**-64`` (the
    constant-work samplers' precision at that epsilon), so the pair (value,
    run time) is (epsilon, delta)-DP.
    """
    if from_mu:
        rho = rho_of_mu(gparams["mu"])
        params = {"rho": rho}
        how = "sigma = sensitivity / mu: rho = mu^2 / 2 zCDP (CKS 2020, Theorem 4)"
        eps_ref = zcdp_reference_epsilon(rho)
    else:
        eps_ref, target = gparams["epsilon"], gparams["delta"]
        if not target > 2 * TIMING_DELTA:
            raise InvariantDPError(
                f"`delta` ({target!r}) must be above 2**-63 for a secure release: its run time "
                "may add up to 2**-64 to delta."
            )
        rho = zcdp_for(eps_ref, target - TIMING_DELTA)
        params = {"rho": rho, "epsilon": eps_ref, "delta": target}
        how = (
            "largest rho whose zCDP implies (epsilon, delta - 2**-64)-DP (CKS 2020, "
            "Corollary 13); the run time adds at most 2**-64"
        )
    size = math.prod(shape)
    m = changed_coordinates(sensitivity, size)
    gamma = grid_for(grid, gaussian_sigma(delta2, rho=rho), delta2 / math.sqrt(m))
    grid_sens2 = grid_l2_sensitivity_sq(exact_norm(sensitivity, 2), gamma, m)
    s2 = exact_gaussian_variance(grid_sens2, rho=rho)
    check_grid_noise(sqrt_up(s2), "sigma")
    k = secure_grid_index(x, gamma)
    noise, tv = exact_gaussian_noise(s2, shape, gen, eps_ref)
    law = NoiseLaw("grid_gaussian", {"grid": gamma, "sigma": gamma * math.sqrt(s2)})
    value = gamma * (k + noise).astype(float)
    extra = {
        "calibration": how,
        "grid": gamma,
        "grid_sensitivity_squared": grid_sens2,
        "rounding": GRID_RULE,
    }
    return value, law, "zCDP", params, extra, tv


# the old names of this module (renamed, or moved to .discrete and .knorm)
__getattr__ = moved_names(
    __name__,
    {
        "laplace": "invariantdp.mechanisms.laplace_mechanism",
        "gaussian": "invariantdp.mechanisms.gaussian_mechanism",
        "discrete_laplace": "invariantdp.mechanisms.discrete_laplace_mechanism",
        "discrete_gaussian": "invariantdp.mechanisms.discrete_gaussian_mechanism",
        "tulap": "invariantdp.mechanisms.tulap_mechanism",
        "lp_mechanism": "invariantdp.mechanisms.lp_mechanism",
    },
)

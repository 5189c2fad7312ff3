"""Additive noise mechanisms: Laplace, Gaussian, discrete, Tulap and l_p.

Every mechanism releases ``x + noise`` with noise independent of ``x`` and
returns a :class:`~invariantdp.Release` recording the exact noise law and the
privacy guarantee.  Signatures follow one pattern::

    name(x, *, <privacy parameters>, sensitivity=1.0, rng=None, secure=False)

``sensitivity`` is the sensitivity of the query in the norm the mechanism is
calibrated by (l2 for Gaussian noise, l1 for Laplace noise, ...), given as a
number or as a sensitivity space (a 2-D array of difference vectors, whose
largest norm is used).  Gaussian noise has standard deviation
``sensitivity / mu`` under mu-GDP (Dong, Roth & Su 2022; Cho & Awan, Prop. 6),
or is calibrated from ``epsilon, delta`` through the exact Balle & Wang (2018)
relation; Laplace noise has scale ``sensitivity / epsilon``.

``secure=False`` (the default) draws from a ``numpy.random.Generator``: a
*simulation*, recorded as such in ``Release.metadata["randomness"]``; the
floating-point Laplace, Gaussian and l_p samplers also leak the data through
the low-order bits of the output (Mironov 2012).  ``secure=True`` samples
exactly from :mod:`secrets` (:mod:`invariantdp.secure`): integer noise for the
discrete mechanisms and Tulap, and for ``laplace`` / ``gaussian`` integer
noise on a power-of-two grid, calibrated to the sensitivity of the data
rounded to that grid (see :func:`laplace`).  ``lp_mechanism`` has no exact
sampler and refuses ``secure=True``.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from .._validation import (
    InvariantDPError,
    check_delta,
    check_epsilon,
    check_positive,
)
from ..distributions.discrete import (
    GRID_RANGE,
    MAX_NOISE_SCALE,
    discrete_gaussian_int,
    discrete_laplace_int,
    draw_discrete_laplace,
)
from ..distributions.discrete import (
    discrete_gaussian as _discrete_gaussian_dist,
)
from ..distributions.tulap import (
    draw_tulap,
    draw_tulap_exact,
    tulap_bounds,
    tulap_params,
    tulap_privacy_shapes,
)
from ..release import NoiseLaw, PrivacyGuarantee, Release
from ..secure import random_source
from ._base import (
    check_data,
    gaussian_calibration,
    make_release,
    randomness_note,
    refuse_secure,
    resolve_sensitivity,
)

__all__ = [
    "discrete_gaussian",
    "discrete_laplace",
    "gaussian",
    "laplace",
    "lp_mechanism",
    "tulap",
]

_ADJ = "data sets whose query values differ by a vector of the stated sensitivity"

#: largest noise scale of the floating-point samplers: beyond it x + noise overflows
_MAX_FLOAT_SCALE = 1e300
#: data added to integer noise must satisfy |x| < 2**52, so that x + noise is exact
_MAX_EXACT_DATA = 2.0**52
#: the default grid is 2**-20 of the noise scale (and of the per-coordinate
#: sensitivity), but never finer than 2**-40 of the noise scale
_GRID_BITS = 20
_GRID_FLOOR_BITS = 40
_SIMULATION_ONLY = (
    "Simulation only (``secure=False``): floating-point noise from a numpy generator "
    "leaks the data through the low-order bits of the output (Mironov 2012)."
)


# ---------------------------------------------------------------------------
# shared argument handling (used by the other mechanism modules)
# ---------------------------------------------------------------------------


def _check_float_scale(scale: float, what: str) -> None:
    """Refuse a floating-point noise scale that overflows (e.g. epsilon = 1e-320)."""
    if not scale <= _MAX_FLOAT_SCALE:  # also catches inf and nan
        raise InvariantDPError(
            f"the noise scale {what} ({scale:.6g}) must be <= {_MAX_FLOAT_SCALE:g}: "
            "larger noise overflows float64 (the release would be inf); raise `epsilon` "
            "(or `mu`) or lower `sensitivity`."
        )


# ---------------------------------------------------------------------------
# exact sensitivities and grids for the secure paths
# ---------------------------------------------------------------------------


def _space(sensitivity) -> np.ndarray | None:
    return None if np.ndim(sensitivity) == 0 else np.asarray(sensitivity, dtype=float)


def _exact_norm(sensitivity, p: int) -> Fraction:
    """The sensitivity as an exact rational: ``Delta_1``, or ``Delta_2**2`` for ``p = 2``.

    A number is taken at its exact binary value; for a space, the largest
    row norm is summed in exact arithmetic (a float sum may round down).
    """
    S = _space(sensitivity)
    if S is None:
        value = Fraction(float(sensitivity))
        return value if p == 1 else value * value
    if np.all(S == np.rint(S)) and np.abs(S).max() <= 2**20 and S.shape[1] <= 2**20:
        ints = np.abs(S).astype(np.int64)  # sums below 2**60: exact in int64
        return Fraction(int(np.max(np.sum(ints if p == 1 else ints * ints, axis=1))))
    rows = (
        sum((Fraction(float(v)) if p == 1 else Fraction(float(v)) ** 2 for v in np.abs(row)), 0)
        for row in S
    )
    return max(rows)


def _changed_coordinates(sensitivity, d: int) -> int:
    """How many coordinates neighbours may differ in: ``d``, or the largest row support."""
    S = _space(sensitivity)
    return d if S is None else int(np.max(np.count_nonzero(S, axis=1)))


def _sqrt_up(x: Fraction) -> Fraction:
    """A rational upper bound on ``sqrt(x)``, within ``2**-64``."""
    return Fraction(math.isqrt(math.floor(x * 4**64)) + 1, 2**64)


def _grid_l1_sensitivity(delta1: Fraction, gamma: float, m: int) -> int:
    """Integer l1 sensitivity of ``round(x / gamma)`` when ``x`` has l1 sensitivity ``delta1``.

    Rounding moves each coordinate by at most ``gamma / 2``, so neighbours'
    rounded values differ by at most ``|x_i - x'_i| / gamma + 1`` grid steps
    in each of the at most ``m`` coordinates that change: an integer vector
    of l1 norm at most ``delta1 / gamma + m``, hence ``floor(delta1 / gamma) + m``.
    """
    return math.floor(delta1 / Fraction(gamma)) + m


def _grid_l2_sensitivity_sq(delta2_sq: Fraction, gamma: float, m: int) -> int:
    """Integer bound on the squared l2 sensitivity of ``round(x / gamma)``.

    As for l1, the rounded difference ``e`` has ``|e_i| <= |D_i| + 1`` on at
    most ``m`` coordinates (``D = (x - x') / gamma``), so
    ``||e||_2 <= ||D||_2 + sqrt(m)``; ``||e||_2**2`` is an integer, at most
    ``floor((Delta_2 / gamma + sqrt(m))**2)``, evaluated with rational upper
    bounds of the square roots.
    """
    d2 = delta2_sq / Fraction(gamma) ** 2
    return math.floor(d2 + 2 * _sqrt_up(d2) * _sqrt_up(Fraction(m)) + m)


def _pow2_floor(v: float) -> float:
    """The largest power of two ``<= v`` (``v`` positive and finite)."""
    return math.ldexp(0.5, math.frexp(v)[1])


def _check_grid(grid) -> float:
    g = check_positive("grid", grid)
    if math.frexp(g)[0] != 0.5:
        raise InvariantDPError(
            f"`grid` ({g!r}) must be a power of two (e.g. 2**-10), so that grid multiples "
            "of the data and noise are exact doubles."
        )
    if not GRID_RANGE[0] <= g <= GRID_RANGE[1]:
        raise InvariantDPError(f"`grid` ({g!r}) must be in [2**-960, 2**960].")
    return g


def _grid_for(grid, scale: float, per_coordinate: float) -> float:
    """The grid ``gamma``: the user's, or ``2**-20`` of the noise scale and sensitivity.

    The default never depends on the data: it is the largest power of two
    below ``2**-20 min(scale, per_coordinate)`` (``per_coordinate`` is the
    sensitivity over the number of coordinates that may change, which keeps
    the rounding's share of the calibrated sensitivity below ``2**-20``),
    but at least ``2**-40`` of the scale, so that the noise in grid units
    stays below ``2**46``.
    """
    if grid is not None:
        return _check_grid(grid)
    fine = _pow2_floor(min(scale, per_coordinate)) * 2.0**-_GRID_BITS
    gamma = max(fine, _pow2_floor(scale) * 2.0**-_GRID_FLOOR_BITS)
    if not GRID_RANGE[0] <= gamma <= GRID_RANGE[1]:
        raise InvariantDPError(
            f"the noise scale ({scale:.6g}) is outside the range of the exact grid sampler "
            "(its grid 2**-20 * scale must be in [2**-960, 2**960])."
        )
    return gamma


def _grid_index(xv: np.ndarray, gamma: float) -> np.ndarray:
    """``x / gamma`` rounded to the nearest integer (ties to even), exactly, as int64."""
    with np.errstate(over="ignore", under="ignore"):
        k = np.rint(xv / gamma)  # a division by a power of two is exact
    big = ~(np.abs(k) < _MAX_EXACT_DATA)
    if big.any():
        worst = float(np.max(np.abs(xv)))
        need = _pow2_floor(worst * 2.0**-51) * 2.0
        raise InvariantDPError(
            f"`x` has entries up to {worst:.6g} in magnitude, 2**52 grid steps or more of "
            f"the grid {gamma!r}: integer noise on that grid cannot be added exactly. Pass a "
            f"coarser `grid` (a power of two >= {need!r})."
        )
    return k.astype(np.int64)


def _check_grid_noise(scale: Fraction, what: str) -> None:
    if scale > MAX_NOISE_SCALE:
        raise InvariantDPError(
            f"the noise {what} in grid units ({float(scale):.6g}) must be <= 2**46 (~7.04e13) "
            "to be added exactly: the rounding term (the number of coordinates) over the "
            "privacy parameter is too large; lower the number of coordinates, give a "
            "sensitivity space, or raise the privacy parameter."
        )


def _cdp_log_delta(rho: float, epsilon: float) -> float:
    r"""``log delta`` with which rho-zCDP implies (epsilon, delta)-DP (CKS 2020, Cor. 13).

    :math:`\delta = \inf_{\alpha > 1} e^{(\alpha-1)(\alpha\rho-\epsilon)} (1-1/\alpha)^\alpha
    / (\alpha - 1)`; every ``alpha`` gives a valid delta, the infimum is at the root
    of :math:`(2\alpha - 1)\rho - \epsilon + \log(1 - 1/\alpha)` (increasing in alpha).
    """
    from scipy.optimize import brentq

    def slope(a):
        return (2.0 * a - 1.0) * rho - epsilon + math.log1p(-1.0 / a)

    lo, hi = 1.0 + 1e-9, (epsilon + 1.0) / (2.0 * rho) + 2.0
    a = brentq(slope, lo, hi, xtol=1e-15, rtol=1e-15) if slope(lo) < 0 else lo
    return (a - 1.0) * (a * rho - epsilon) + a * math.log1p(-1.0 / a) - math.log(a - 1.0)


def _zcdp_for(epsilon: float, delta: float) -> float:
    """The largest rho (to 1e-9) whose zCDP implies (epsilon, delta)-DP by CKS Cor. 13.

    Found by root finding on ``log rho``; the result is then checked with a
    margin of 1e-9 in ``log delta`` (far above the rounding error of the
    bound), lowering rho until the check passes, so the stated
    (epsilon, delta) holds.
    """
    from scipy.optimize import brentq

    target = math.log(delta)
    L = -target
    # Bun & Steinke's rho (epsilon = rho + 2 sqrt(rho L)) is valid and CKS is tighter
    simple = epsilon**2 / (math.sqrt(L + epsilon) + math.sqrt(L)) ** 2

    def excess(log_rho):
        return _cdp_log_delta(math.exp(log_rho), epsilon) - target

    lo = math.log(simple)
    while excess(lo) > 0:
        lo -= 1.0
    hi = lo + 1.0
    while excess(hi) <= 0:
        hi += 1.0
    rho = math.exp(brentq(excess, lo, hi, xtol=1e-12))
    while _cdp_log_delta(rho, epsilon) > target - 1e-9:
        rho *= 1.0 - 1e-8
    return rho


def _exact_draws(sampler, n: int, *args) -> np.ndarray:
    return np.array([sampler(*args) for _ in range(n)], dtype=np.int64)


# ---------------------------------------------------------------------------
# mechanisms
# ---------------------------------------------------------------------------


def laplace(x, *, epsilon, sensitivity=1.0, rng=None, secure=False, grid=None) -> Release:
    r"""Laplace mechanism: ``x + Lap(sensitivity / epsilon)`` in every coordinate.

    Simulation only with ``secure=False`` (the default): floating-point
    Laplace noise from a numpy generator, which leaks the data through the
    low-order bits of the output (Mironov 2012); a release for publication
    takes ``secure=True``.

    ``secure=True`` samples exactly on a grid ``gamma = 2**k`` (the approach
    of OpenDP, an exact cousin of Mironov's snapping): ``x`` is rounded to
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
        Source of randomness for simulations; must be None (or a
        :class:`~invariantdp.secure.SecureGenerator`) with ``secure=True``.
    secure : bool, optional
        Exact grid sampling from :mod:`secrets` for a production release.
    grid : float, optional
        With ``secure=True``: the grid ``gamma``, a power of two.  Default:
        the largest power of two below ``2**-20 min(scale, Delta_1 / s)``
        (but at least ``2**-40 scale``), which keeps the rounding's share of
        the noise below ``2**-20``.  ``|x| / gamma`` must be below ``2**52``:
        a coarser grid admits larger data.

    Returns
    -------
    Release
        epsilon-DP.  Noise family ``"laplace"`` with ``scale`` (simulation), or
        ``"grid_laplace"`` with ``grid`` and ``scale = gamma * t``: the exact
        law of ``value - gamma * round(x / gamma)`` (secure).

    References
    ----------
    Dwork et al. (2006); Gao, Gong & Yu, Lemma 16; Cho & Awan, Algorithm 4;
    Mironov (2012); Canonne, Kamath & Steinke (2020), Algorithm 2.

    Examples
    --------
    >>> from invariantdp.mechanisms import laplace
    >>> r = laplace([10.0, 20.0], epsilon=1.0, sensitivity=2.0, rng=0)
    >>> r.noise.params, r.simulation
    ({'scale': 2.0}, True)
    >>> s = laplace([10.0, 20.0], epsilon=1.0, sensitivity=2.0, secure=True)
    >>> s.noise.family, s.metadata["grid"], s.simulation
    ('grid_laplace', 9.5367431640625e-07, False)
    >>> bool(np.all(s.value / s.metadata["grid"] % 1 == 0))  # on the grid
    True
    """
    xv = check_data(x)
    epsilon = check_epsilon(epsilon)
    delta1 = resolve_sensitivity(sensitivity, 1, dim=xv.size)
    gen = random_source(rng, secure)
    scale = delta1 / epsilon
    _check_float_scale(scale, "sensitivity / epsilon")
    if secure:
        d = _changed_coordinates(sensitivity, xv.size)
        gamma = _grid_for(grid, scale, delta1 / d)
        k = _grid_index(xv, gamma)
        grid_sens = _grid_l1_sensitivity(_exact_norm(sensitivity, 1), gamma, d)
        t = Fraction(grid_sens) / Fraction(epsilon)
        _check_grid_noise(t, "scale")
        noise = _exact_draws(discrete_laplace_int, xv.size, t.numerator, t.denominator, gen)
        value = gamma * (k + noise.reshape(xv.shape)).astype(float)
        law = NoiseLaw("grid_laplace", {"grid": gamma, "scale": gamma * float(t)})
        extra = {
            "grid": gamma,
            "grid_sensitivity": grid_sens,
            "rounding": "x rounded to the nearest multiple of grid (ties to even)",
        }
    else:
        _no_grid(grid)
        value = xv + gen.laplace(0.0, scale, size=xv.shape)
        law, extra = NoiseLaw("laplace", {"scale": scale}), {}
    return make_release(
        value,
        "laplace",
        law,
        PrivacyGuarantee("epsilon-DP", {"epsilon": epsilon}, _ADJ),
        data_shape=xv.shape,
        metadata={"sensitivity": delta1, "norm": "l1", **extra, **randomness_note(secure)},
    )


def _no_grid(grid) -> None:
    if grid is not None:
        raise InvariantDPError(
            f"`grid` ({grid!r}) is used only with `secure=True` (exact grid sampling)."
        )


def gaussian(
    x, *, mu=None, epsilon=None, delta=None, sensitivity=1.0, rng=None, secure=False, grid=None
) -> Release:
    r"""Gaussian mechanism: ``x + N(0, sigma^2 I)`` with ``sigma = sensitivity / mu``.

    Simulation only with ``secure=False`` (the default): floating-point
    Gaussian noise from a numpy generator leaks the data through the
    low-order bits of the output (Mironov 2012); a release for publication
    takes ``secure=True``.

    ``secure=True`` samples exactly on a grid ``gamma = 2**k``, as
    :func:`laplace` does: the release is ``gamma * (round(x / gamma) + K)``
    with ``K_i ~ N_Z(0, s^2)`` i.i.d., exact discrete Gaussians from
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
        Source of randomness for simulations; must be None (or a
        :class:`~invariantdp.secure.SecureGenerator`) with ``secure=True``.
    secure : bool, optional
        Exact grid sampling from :mod:`secrets` for a production release.
    grid : float, optional
        With ``secure=True``: the grid, a power of two.  Default: the
        largest power of two below ``2**-20 min(sigma, Delta_2 / sqrt(m))``
        (at least ``2**-40 sigma``).  ``|x| / gamma`` must be below ``2**52``.

    Returns
    -------
    Release
        Simulation: GDP guarantee with ``mu`` (and the target epsilon, delta
        when given), noise family ``"gaussian"``.  Secure: zCDP with ``rho``
        (and the implied ``epsilon, delta`` when given), noise family
        ``"grid_gaussian"`` with ``grid`` and ``sigma = gamma * s``.

    References
    ----------
    Dong, Roth & Su (2022); Cho & Awan, Prop. 6; Balle & Wang (2018);
    Canonne, Kamath & Steinke (2020), Algorithm 3, Theorem 4, Corollary 13.

    Examples
    --------
    >>> from invariantdp.mechanisms import gaussian
    >>> r = gaussian([1.0, 2.0, 3.0], mu=0.5, sensitivity=2.0, rng=1)
    >>> r.noise.params["scale"]
    4.0
    >>> s = gaussian([1.0, 2.0, 3.0], epsilon=1.0, delta=1e-5, secure=True)
    >>> s.guarantee.definition, round(s.guarantee.params["rho"], 4)
    ('zCDP', 0.0306)
    """
    xv = check_data(x)
    mu_, gparams, how = gaussian_calibration(mu, epsilon, delta)
    delta2 = resolve_sensitivity(sensitivity, 2, dim=xv.size)
    gen = random_source(rng, secure)
    sigma = delta2 / mu_
    _check_float_scale(sigma, "sigma = sensitivity / mu")
    if not secure:
        _no_grid(grid)
        return make_release(
            xv + sigma * gen.standard_normal(xv.shape),
            "gaussian",
            NoiseLaw("gaussian", {"scale": sigma}),
            PrivacyGuarantee("GDP", gparams, _ADJ),
            data_shape=xv.shape,
            metadata={
                "sensitivity": delta2,
                "norm": "l2",
                "calibration": how,
                **randomness_note(False),
            },
        )
    if mu is not None:
        rho = mu_ * mu_ / 2.0
        params = {"rho": rho}
        how = "sigma = sensitivity / mu: rho = mu^2 / 2 zCDP (CKS 2020, Theorem 4)"
    else:
        rho = _zcdp_for(gparams["epsilon"], gparams["delta"])
        params = {"rho": rho, "epsilon": gparams["epsilon"], "delta": gparams["delta"]}
        how = "largest rho whose zCDP implies (epsilon, delta)-DP (CKS 2020, Corollary 13)"
    m = _changed_coordinates(sensitivity, xv.size)
    gamma = _grid_for(grid, delta2 / math.sqrt(2.0 * rho), delta2 / math.sqrt(m))
    k = _grid_index(xv, gamma)
    grid_sens2 = _grid_l2_sensitivity_sq(_exact_norm(sensitivity, 2), gamma, m)
    s2 = Fraction(grid_sens2) / (2 * Fraction(rho))
    _check_grid_noise(_sqrt_up(s2), "sigma")
    noise = _exact_draws(discrete_gaussian_int, xv.size, s2.numerator, s2.denominator, gen)
    return make_release(
        gamma * (k + noise.reshape(xv.shape)).astype(float),
        "gaussian",
        NoiseLaw("grid_gaussian", {"grid": gamma, "sigma": gamma * math.sqrt(s2)}),
        PrivacyGuarantee("zCDP", params, _ADJ),
        data_shape=xv.shape,
        metadata={
            "sensitivity": delta2,
            "norm": "l2",
            "calibration": how,
            "grid": gamma,
            "grid_sensitivity_squared": grid_sens2,
            "rounding": "x rounded to the nearest multiple of grid (ties to even)",
            **randomness_note(True),
        },
    )


def _check_integer_valued(xv, name="x"):
    if not np.all(xv == np.round(xv)):
        raise InvariantDPError(f"`{name}` must be integer-valued for integer noise.")
    if not np.all(np.abs(xv) < _MAX_EXACT_DATA):
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
    if not scale <= MAX_NOISE_SCALE:
        raise InvariantDPError(
            f"the noise scale {what} ({scale:.6g}) must be <= 2**46 (~7.04e13): integer noise "
            "of a larger scale cannot be drawn and added to float64 data exactly (numpy's "
            "geometric saturates and would return the data unchanged); raise the privacy "
            "parameter or lower `sensitivity`."
        )


def discrete_laplace(x, *, epsilon, sensitivity=1, rng=None, secure=False) -> Release:
    r"""Geometric mechanism: ``x + Lap_Z(sensitivity / epsilon)`` per coordinate.

    ``Lap_Z(t)`` is the discrete Laplace (double geometric) law
    :math:`P(k) \propto e^{-|k|/t}` on the integers; for an integer-valued
    query with integer :math:`\ell_1` sensitivity it gives epsilon-DP.
    The scale ``t = sensitivity / epsilon`` must be at most ``2**46`` and
    ``|x| < 2**52``, so that ``x + noise`` is exact in float64.  With
    ``secure=False`` (the default) the noise comes from numpy: a
    simulation (a seed is a key: two releases with the same seed share
    their noise exactly; see :mod:`invariantdp.secure`).

    Parameters
    ----------
    x : array_like of integers
    epsilon : float
    sensitivity : int or array_like, optional
        Integer :math:`\ell_1` sensitivity (default 1) or a sensitivity space.
    rng : None, int, SeedSequence or numpy.random.Generator
        Source of randomness for simulations; must be None (or a
        :class:`~invariantdp.secure.SecureGenerator`) with ``secure=True``.
    secure : bool, optional
        Draw the noise for a production release: exact
        :math:`\mathrm{Lap}_{\mathbb Z}(\Delta/\epsilon)` (the exact rational
        value of ``sensitivity / epsilon``) by CKS Algorithm 2 with uniform
        integers from :mod:`secrets` (see :mod:`invariantdp.secure`).  About
        40 microseconds per cell instead of nanoseconds.

    References
    ----------
    Ghosh, Roughgarden & Sundararajan (2012); Canonne, Kamath & Steinke
    (2020), Def. 3 and Algorithm 2; Gong & Meng (2020) (double geometric).

    Examples
    --------
    >>> from invariantdp.mechanisms import discrete_laplace
    >>> r = discrete_laplace([3, 7, 0], epsilon=0.5, rng=2)
    >>> bool((r.value == r.value.round()).all()), r.simulation
    (True, True)
    """
    xv = check_data(x)
    _check_integer_valued(xv)
    epsilon = check_epsilon(epsilon)
    delta1 = _integer_sensitivity(sensitivity, 1, xv.size)
    gen = random_source(rng, secure)
    t = delta1 / epsilon
    _check_integer_scale(t, "sensitivity / epsilon")
    if secure:
        exact = _exact_norm(sensitivity, 1) / Fraction(epsilon)
        noise = _exact_draws(discrete_laplace_int, xv.size, exact.numerator, exact.denominator, gen)
        noise = noise.reshape(xv.shape)
    else:
        noise = draw_discrete_laplace(gen, t, xv.shape)
    return make_release(
        xv + noise,
        "discrete_laplace",
        NoiseLaw("discrete_laplace", {"scale": t}),
        PrivacyGuarantee("epsilon-DP", {"epsilon": epsilon}, _ADJ),
        data_shape=xv.shape,
        metadata={"sensitivity": delta1, "norm": "l1", **randomness_note(secure)},
    )


def discrete_gaussian(x, *, mu=None, rho=None, sensitivity=1, rng=None, secure=False) -> Release:
    r"""Discrete Gaussian mechanism: ``x + N_Z(0, sigma^2)`` per coordinate.

    ``sigma = sensitivity / mu`` (or ``sensitivity / sqrt(2 rho)``); the
    release is :math:`\rho`-zCDP with :math:`\rho = \Delta_2^2/(2\sigma^2)`
    (Canonne, Kamath & Steinke 2020, Theorem 4).  The noise is drawn by the
    CKS rejection sampler (Algorithm 3).  ``sigma`` must be at most
    ``2**46`` and ``|x| < 2**52``.  With ``secure=False`` (the default) the
    noise comes from numpy: a simulation.

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
        Source of randomness for simulations; must be None (or a
        :class:`~invariantdp.secure.SecureGenerator`) with ``secure=True``.
    secure : bool, optional
        Draw the noise for a production release: exact
        :math:`N_{\mathbb Z}(0, \sigma^2)` with the rational
        :math:`\sigma^2 = \Delta_2^2/\mu^2` (or :math:`\Delta_2^2/(2\rho)`;
        :math:`\Delta_2^2` summed exactly for a sensitivity space) by CKS
        Algorithm 3 with uniform integers from :mod:`secrets` (see
        :mod:`invariantdp.secure`).

    Examples
    --------
    >>> from invariantdp.mechanisms import discrete_gaussian
    >>> r = discrete_gaussian([3, 7, 0], rho=0.5, rng=2)
    >>> r.guarantee.params
    {'rho': 0.5}
    """
    xv = check_data(x)
    _check_integer_valued(xv)
    if (mu is None) == (rho is None):
        raise InvariantDPError(f"give exactly one of `mu` or `rho`; got mu={mu}, rho={rho}.")
    if mu is not None:
        rho = check_positive("mu", mu) ** 2 / 2.0
    else:
        rho = check_positive("rho", rho)
    delta2 = resolve_sensitivity(sensitivity, 2, dim=xv.size)
    gen = random_source(rng, secure)
    with np.errstate(over="ignore", divide="ignore"):
        sigma = float(delta2 / np.sqrt(2.0 * rho))
    _check_integer_scale(sigma, "sigma")
    if secure:
        d2 = _exact_norm(sensitivity, 2)
        s2 = d2 / (Fraction(mu) ** 2 if mu is not None else 2 * Fraction(rho))
        noise = _exact_draws(discrete_gaussian_int, xv.size, s2.numerator, s2.denominator, gen)
        noise = noise.reshape(xv.shape)
    else:
        noise = _discrete_gaussian_dist(sigma).rvs(size=xv.shape, random_state=gen)
    return make_release(
        xv + noise,
        "discrete_gaussian",
        NoiseLaw("discrete_gaussian", {"sigma": sigma}),
        PrivacyGuarantee("zCDP", {"rho": rho}, _ADJ),
        data_shape=xv.shape,
        metadata={"sensitivity": delta2, "norm": "l2", **randomness_note(secure)},
    )


#: data within this distance (in units of the sensitivity) of the lattice are on it
_LATTICE_TOL = 2.0**-20
#: lattice indices up to 2**51: then |x / sensitivity - k| < 1/4 even with the rounding
#: of the division, so neighbours (|x - x'| <= sensitivity) get |k - k'| <= 1
_MAX_LATTICE = 2.0**51


def _lattice_index(xv: np.ndarray, step: float) -> np.ndarray:
    """The lattice index ``k = round(x / step)`` (int64) of data on the lattice ``step * Z``.

    Refuses data farther than ``2**-20 * step`` from the lattice, and
    ``|k| >= 2**51``.
    """
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        r = xv / step
        k = np.rint(r)
        ok = (np.abs(r - k) <= _LATTICE_TOL) & (np.abs(k) < _MAX_LATTICE)
    if not ok.all():
        i = int(np.flatnonzero(~ok.reshape(-1))[0])
        v = float(xv.reshape(-1)[i])
        raise InvariantDPError(
            f"`x` must lie on the lattice sensitivity * k (integers |k| < 2**51, within "
            f"2**-20 * sensitivity) for `secure=True` Tulap noise, whose exact release is "
            f"sensitivity * ((k + G) + U); got x = {v!r} with sensitivity {step!r}. Round the "
            "data to that lattice, or use `secure=False` for a simulation."
        )
    return k.astype(np.int64)


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


def tulap(x, *, epsilon, delta=0.0, sensitivity=1.0, rng=None, secure=False) -> Release:
    r"""Tulap mechanism: ``x + sensitivity * Tulap(0, exp(-epsilon), q)``.

    Tulap is the canonical noise distribution of :math:`f_{\epsilon,\delta}`
    (Awan & Slavkovic 2018; Cho & Awan, Def. 35): for a scalar statistic of
    sensitivity ``sensitivity`` the release is :math:`f_{\epsilon,\delta}`-DP
    exactly.  For an array each coordinate gets independent noise, which is
    :math:`f_{\epsilon,\delta}`-DP when neighbouring data change one
    coordinate by at most ``sensitivity``.  With ``secure=False`` (the
    default) the noise is floating point from numpy: a simulation, whose
    output bits can reveal ``x`` (Mironov 2012).

    ``secure=True`` is exact end to end.  ``x`` must lie on the lattice
    ``sensitivity * Z``: ``x / sensitivity`` within ``2**-20`` of an integer
    ``k`` with ``|k| < 2**51`` (the release is centred on ``k * sensitivity``).
    The release is
    ``sensitivity * fl((k + G) + U)`` where ``(G, U)``, the integer part and
    the ``2**-53``-cell of the uniform part of an exact Tulap draw, come from
    :mod:`secrets` (CKS Algorithm 2 for ``G``); ``k + G`` is exact, and the
    two roundings that follow are fixed functions of the exact Tulap
    release ``k + N``, so nothing about ``x`` leaks beyond it.  The
    truncation for ``delta > 0`` is decided on the noise alone and exactly
    (interval arithmetic on ``b = exp(-epsilon)``, the uniform part refined
    bit by bit), so the noise law is exactly ``Tulap(0, exp(-epsilon), q)``
    for the real ``b`` and ``q`` of the doubles ``epsilon`` and ``delta``
    (:func:`~invariantdp.distributions.tulap.draw_tulap_exact`).  Neighbours
    ``|x - x'| <= sensitivity`` on the lattice have ``|k - k'| <= 1``.

    Every sampler here has a bounded expected number of trials whatever
    (epsilon, delta): when the truncated support is narrow (``q > 1/2``,
    e.g. ``epsilon = 1e-6, delta = 0.5``) the draw is proposed uniformly on
    it.  Noise of scale ``1/epsilon`` and support bound both above ``2**46``
    is refused.

    Parameters
    ----------
    x : array_like
    epsilon : float
    delta : float, optional
    sensitivity : float, optional
        Sensitivity of each coordinate (default 1).
    rng : None, int, SeedSequence or numpy.random.Generator
        Source of randomness for simulations; must be None (or a
        :class:`~invariantdp.secure.SecureGenerator`) with ``secure=True``.
    secure : bool, optional
        Draw the noise exactly from :mod:`secrets` for a production release
        (about 30 microseconds per cell; see :mod:`invariantdp.secure`).

    Examples
    --------
    >>> from invariantdp.mechanisms import tulap
    >>> r = tulap(12.0, epsilon=1.0, delta=0.01, rng=3)
    >>> sorted(r.noise.params), r.simulation
    (['b', 'q', 'scale'], True)
    >>> s = tulap([0.0, 4.0], epsilon=1.0, sensitivity=2.0, secure=True)
    >>> s.simulation
    False
    """
    xv = check_data(x)
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    if np.ndim(sensitivity) != 0:
        raise InvariantDPError("`sensitivity` must be a number for the Tulap mechanism.")
    scale = check_positive("sensitivity", sensitivity)
    gen = random_source(rng, secure)
    b, q = tulap_params(epsilon, delta)
    shapes = tulap_privacy_shapes(epsilon, delta)
    shapes = tuple(float(v) for v in shapes)
    _check_tulap_scale(epsilon, shapes)
    shape = xv.shape
    if secure:
        k = _lattice_index(xv, scale)
        g, u = draw_tulap_exact(gen, epsilon, delta, xv.size)
        value = _tulap_value(k, g.reshape(shape), u.reshape(shape), scale)
    else:
        value = xv + scale * draw_tulap(gen, *shapes, shape)
    return make_release(
        value,
        "tulap",
        NoiseLaw("tulap", {"b": b, "q": q, "scale": scale}),
        PrivacyGuarantee("(epsilon, delta)-DP", {"epsilon": epsilon, "delta": delta}, _ADJ),
        data_shape=shape,
        metadata={"sensitivity": scale, **randomness_note(secure)},
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


def lp_mechanism(x, p, sensitivity=1.0, epsilon=None, *, rng=None, secure=False) -> Release:
    r"""The :math:`\ell_p` K-norm mechanism for ``p`` in {1, 2, inf} (epsilon-DP).

    Simulation only: floating-point noise from a numpy generator, which
    leaks the data through the low-order bits of the output (Mironov 2012).
    ``secure=True`` is refused (no exact sampler); for a production release
    use ``laplace(..., secure=True)`` (the ``p = 1`` case) or
    ``gaussian(..., secure=True)``.

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
    secure : bool, optional
        Must be False: there is no exact l_p sampler.

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
    from .knorm import _knorm_law  # lazy: knorm imports this module

    refuse_secure(
        "lp_mechanism",
        secure,
        alternatives="laplace(..., secure=True) (the l1 case) or gaussian(..., secure=True)",
    )
    if epsilon is None:
        raise TypeError("`epsilon` is required: lp_mechanism(x, p, sensitivity, epsilon).")
    xv = check_data(x)
    p = _check_p(p)
    epsilon = check_epsilon(epsilon)
    delta = resolve_sensitivity(sensitivity, p, dim=xv.size)
    gen = random_source(rng, False)
    scale = delta / epsilon
    _check_float_scale(scale, "sensitivity / epsilon")
    d = xv.size
    name = {1.0: "l1", 2.0: "l2", np.inf: "linf"}[p]
    if p == 1:
        v = gen.laplace(0.0, scale, size=d)
        law = NoiseLaw("laplace", {"scale": scale})
    elif p == 2:
        z = gen.standard_normal(d)
        v = gen.gamma(d, scale) * z / np.linalg.norm(z)
        law = _knorm_law("l2", d, scale)
    else:
        v = gen.gamma(d + 1, scale) * gen.uniform(-1.0, 1.0, size=d)
        law = _knorm_law("linf", d, scale)
    return make_release(
        xv + v.reshape(xv.shape),
        f"lp_mechanism[{name}]",
        law,
        PrivacyGuarantee("epsilon-DP", {"epsilon": epsilon}, _ADJ),
        data_shape=xv.shape,
        metadata={
            "sensitivity": delta,
            "norm": name,
            "p": p if np.isfinite(p) else "inf",
            **randomness_note(False),
        },
    )

r"""Gaussian differential privacy: its exact link to (epsilon, delta)-DP, groups, composition.

:math:`\mu`-Gaussian DP (GDP, Dong, Roth & Su 2022) is the tradeoff function
:math:`G_\mu`.  Its exact link with :math:`(\epsilon, \delta)`-DP is the
relation of Balle & Wang (2018, Thm. 8), also Dong, Roth & Su (2022, Cor. 2.13):

.. math:: \delta_\mu(\epsilon) = \Phi\!\left(-\frac{\epsilon}{\mu} + \frac{\mu}{2}\right)
          - e^{\epsilon}\,\Phi\!\left(-\frac{\epsilon}{\mu} - \frac{\mu}{2}\right),

a mechanism is :math:`\mu`-GDP if and only if it is
:math:`(\epsilon, \delta_\mu(\epsilon))`-DP for every :math:`\epsilon \ge 0`.
It is evaluated here in log space, so that :math:`\delta` far below the
smallest double (large :math:`\epsilon`) keeps full relative accuracy, and
inverted in either argument by bracketed root finding.  Conversions of GDP to
zCDP are in :mod:`invariantdp.privacy._zcdp`.

References
----------
.. [1] Balle, B. and Wang, Y.-X. (2018). "Improving the Gaussian mechanism for
   differential privacy: analytical calibration and optimal denoising", ICML,
   Theorem 8.
.. [2] Dong, J., Roth, A. and Su, W. (2022). "Gaussian differential privacy",
   JRSS-B 84(1), Corollaries 2.13 and 3.3, Theorem 2.14 (group privacy).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Iterable
from fractions import Fraction

import numpy as np
from scipy import integrate, optimize, special

from .._validation import (
    InvariantDPError,
    check_in_open_unit,
    check_positive,
    check_positive_int,
    check_real,
    format_value,
)
from ._checks import FLOAT_MAX as _FLOAT_MAX
from ._checks import LOG_FLOAT_MAX as _LOG_FLOAT_MAX
from ._checks import exact_product, finite, positive_list

__all__ = [
    "eps_delta_to_gdp",
    "gdp_composition",
    "gdp_group_privacy",
    "gdp_log_delta",
    "gdp_to_eps_delta",
    "gdp_to_epsilon",
]

_LOG_HALF = math.log(0.5)
_SQRT2 = math.sqrt(2.0)
_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
_LOG_FLOAT_MIN = math.log(math.ulp(0.0))  # smallest positive (subnormal) double


_FLOAT_TINY = sys.float_info.min


def _check_epsilon_or_zero(value) -> float:
    """``epsilon`` of a conversion: 0 (what :func:`gdp_to_epsilon` returns for a large
    delta) or an epsilon the package accepts, ``[2.2250738585072014e-308, 1.8e308]``."""
    epsilon = check_real("epsilon", value)
    if epsilon == 0.0:
        return 0.0
    if not _FLOAT_TINY <= epsilon <= _FLOAT_MAX:
        raise InvariantDPError(
            f"`epsilon` ({epsilon}) must be 0 or in [{_FLOAT_TINY!r}, {_FLOAT_MAX:g}]."
        )
    return epsilon


def _delta_at_zero(mu: float) -> float:
    """``delta_mu(0) = Phi(mu/2) - Phi(-mu/2) = erf(mu / (2 sqrt2))``, no cancellation."""
    return float(special.erf(mu / (2.0 * _SQRT2)))


def _shift(mu: float, epsilon: float) -> float:
    """``s = epsilon/mu - mu/2`` correctly rounded (``inf`` beyond the largest double).

    ``a = -s`` and ``b = -s - mu`` are the arguments of the two Phi's.  In
    floating point ``epsilon/mu - mu/2`` cancels for large ``mu`` with
    ``epsilon ~ mu^2/2``; exact rational arithmetic on the two doubles does not.
    """
    exact = Fraction(epsilon) / Fraction(mu) - Fraction(mu) / 2
    try:
        return float(exact)
    except OverflowError:
        return math.inf


def _log(x: float) -> float:
    return math.log(x) if x > 0.0 else -math.inf


def _log_delta(mu: float, epsilon: float) -> float:
    """``log delta_mu(epsilon)`` for ``mu > 0``, ``epsilon >= 0`` (no checks).

    At ``epsilon = 0`` it is ``log erf(mu / (2 sqrt2))``.

    Written in ``s = epsilon/mu - mu/2``: with ``Phi(x) = erfcx(-x/sqrt2) e^{-x^2/2} / 2``
    and ``(s + mu)^2 = s^2 + 2 epsilon``, the factor ``e^epsilon`` cancels exactly,
    ``e^epsilon Phi(-s - mu) = e^{-s^2/2} erfcx(v) / 2``, ``v = (s + mu)/sqrt2``, so
    no term overflows for any finite ``mu`` and ``epsilon``.  ``-inf`` when ``log
    delta`` is below the most negative double.
    """
    if epsilon == 0.0:
        return _log(_delta_at_zero(mu))
    s = _shift(mu, epsilon)
    if s == math.inf:
        return -math.inf
    v = s / _SQRT2 + mu / _SQRT2  # (s + mu)/sqrt2, no overflow in the sum
    ev = float(special.erfcx(v))
    if s <= 0.0:
        # Phi(-s) >= 1/2: delta = Phi(-s) (1 - e^{x}), x = log(second / first) < 0
        log_first = float(special.log_ndtr(-s))
        x = -0.5 * s * s + _LOG_HALF + _log(ev) - log_first
        if x < -1e-4:  # relative rounding error of 1 - e^x below ~1e-12
            return float(log_first + math.log(-math.expm1(x)))
        return _log_delta_integral(mu, s)
    # s > 0: both Phi's are tail probabilities,
    #   delta = e^{-s^2/2} / 2 * (erfcx(u) - erfcx(v)),  u = s/sqrt2 < v.
    eu = float(special.erfcx(s / _SQRT2))
    if (eu - ev) > 1e-4 * eu:  # relative rounding error below ~1e-12
        return float(-(0.5 * s) * s + _LOG_HALF + math.log(eu - ev))
    return _log_delta_integral(mu, s)


def _log_delta_integral(mu: float, s: float) -> float:
    """``log delta`` from the privacy-loss representation, where the closed forms cancel.

    With the privacy loss ``L ~ N(mu^2/2, mu^2)`` and ``L = epsilon + mu z``,
    ``delta = E[(1 - e^{epsilon - L})_+] = int_0^inf (1 - e^{-mu z}) phi(z + s) dz``,
    an integral of a positive function (no cancellation) that needs neither
    ``mu^2`` (which underflows for tiny ``mu``) nor ``epsilon``.
    """
    if s <= 0.0:  # the mass of phi(z + s) sits at z ~ -s, a few units wide
        val, _ = integrate.quad(
            lambda z: -math.expm1(-mu * z) * math.exp(-0.5 * (z + s) ** 2),
            0.0,
            -s + 40.0,
            points=[-s],
            epsabs=0.0,
            epsrel=1e-13,
            limit=200,
        )
        return float(math.log(val) - _LOG_SQRT_2PI)
    # s > 0: phi(z + s) = phi(s) e^{-s z - z^2/2}; with z = h w the mass sits at w ~ 1
    # and the exponent is at most -w, so [0, 80] holds all of it
    h = 1.0 / max(s, 1.0)
    log_m = math.log(mu) + math.log(h)  # log(mu h): mu h can underflow
    if log_m < -40.0:
        # 1 - e^{-mu h w} = mu h w to relative 1e-15 on [0, 80]: factor mu h out
        def integrand(w: float) -> float:
            z = h * w
            return w * math.exp(-s * z - 0.5 * z * z)

        log_scale = log_m
    else:
        m = math.exp(log_m)

        def integrand(w: float) -> float:
            z = h * w
            return -math.expm1(-m * w) * math.exp(-s * z - 0.5 * z * z)

        log_scale = 0.0
    val, _ = integrate.quad(integrand, 0.0, 80.0, epsabs=0.0, epsrel=1e-13, limit=200)
    return float(-(0.5 * s) * s - _LOG_SQRT_2PI + math.log(h) + log_scale + math.log(val))


def gdp_log_delta(mu, epsilon) -> float:
    r"""Natural log of :math:`\delta_\mu(\epsilon)`, the Balle-Wang relation.

    Accurate in relative terms where :math:`\delta` underflows (large
    :math:`\epsilon`), e.g. ``gdp_log_delta(1, 200)`` is about ``-2e4``, and
    finite for all finite positive ``mu`` and ``epsilon`` unless the log
    itself is below the most negative double.

    Parameters
    ----------
    mu : float
        GDP parameter, ``mu > 0``.
    epsilon : float
        ``epsilon >= 0`` (0 is what :func:`gdp_to_epsilon` returns when
        ``delta`` is at least :math:`\delta_\mu(0)`).

    Returns
    -------
    float
        :math:`\log \delta_\mu(\epsilon)`.

    Raises
    ------
    InvariantDPError
        If :math:`\log \delta` is below ``-1.8e308`` (``epsilon / mu`` above
        ~1.9e154); :func:`gdp_to_eps_delta` returns 0.0 there.

    References
    ----------
    Balle & Wang (2018), Theorem 8; Dong, Roth & Su (2022), Corollary 2.13.

    Examples
    --------
    >>> from invariantdp.privacy import gdp_log_delta
    >>> round(gdp_log_delta(1.0, 200.0), 2)
    -19911.64
    """
    mu = check_positive("mu", mu)
    epsilon = _check_epsilon_or_zero(epsilon)
    out = _log_delta(mu, epsilon)
    if out == -math.inf:
        raise InvariantDPError(
            f"log delta for `mu` ({mu:g}) and `epsilon` ({epsilon:g}) is below the most negative "
            f"double (about -(epsilon/mu)^2/2): it cannot be returned; delta itself is 0.0 in "
            "double precision."
        )
    return out


def gdp_to_eps_delta(mu, epsilon) -> float:
    r"""The :math:`\delta` such that :math:`\mu`-GDP implies :math:`(\epsilon, \delta)`-DP.

    Exact (Balle & Wang 2018, Thm. 8):

    .. math:: \delta = \Phi(-\epsilon/\mu + \mu/2) - e^{\epsilon}\Phi(-\epsilon/\mu - \mu/2),

    computed in log space (see :func:`gdp_log_delta`); the result underflows
    to 0 only when the true value is below the smallest double.

    Parameters
    ----------
    mu : float
        GDP parameter, ``mu > 0``.
    epsilon : float
        ``epsilon >= 0``; at 0, :math:`\delta = 2\Phi(\mu/2) - 1`.

    Returns
    -------
    float
        ``delta`` in (0, 1).

    References
    ----------
    Balle & Wang (2018), Theorem 8; Dong, Roth & Su (2022), Corollary 2.13.

    Examples
    --------
    >>> from invariantdp.privacy import gdp_to_eps_delta
    >>> round(gdp_to_eps_delta(mu=1.0, epsilon=1.0), 6)
    0.126937
    >>> round(gdp_to_eps_delta(mu=1.0, epsilon=0.0), 6)  # 2 Phi(1/2) - 1
    0.382925
    """
    mu = check_positive("mu", mu)
    epsilon = _check_epsilon_or_zero(epsilon)
    if epsilon == 0.0:
        return _delta_at_zero(mu)
    return math.exp(_log_delta(mu, epsilon))


def _root_in_log(fun, lo: float, hi: float, name: str) -> float:
    """Root of increasing ``fun`` on ``(0, inf)``, searched in ``log x``; ``lo < hi`` seeds.

    The bracket grows within the positive doubles only.  A root above the
    largest double raises; a root below the smallest positive double returns
    that double (callers for which rounding up is not safe check this).
    """
    g = lambda t: fun(math.exp(t))  # noqa: E731
    tlo, thi = math.log(lo), math.log(hi)
    while g(tlo) > 0.0:
        if tlo == _LOG_FLOAT_MIN:
            return math.exp(tlo)
        tlo = max(tlo - 2.0 * (1.0 + abs(tlo)), _LOG_FLOAT_MIN)
    while g(thi) < 0.0:
        if thi == _LOG_FLOAT_MAX:
            raise InvariantDPError(
                f"the `{name}` solving the Balle-Wang relation exceeds the largest double "
                f"({_FLOAT_MAX:.6g})."
            )
        thi = min(thi + 2.0 * (1.0 + abs(thi)), _LOG_FLOAT_MAX)
    t = optimize.brentq(g, tlo, thi, xtol=1e-15, rtol=4 * np.finfo(float).eps, maxiter=500)
    # the tolerance in log x is relative to |log x| (up to ~700): polish in x itself
    x = math.exp(t)
    a, b = x * (1.0 - 1e-9), min(x * (1.0 + 1e-9), _FLOAT_MAX)
    if fun(a) <= 0.0 <= fun(b):
        x = optimize.brentq(fun, a, b, xtol=math.ulp(0.0), rtol=4 * np.finfo(float).eps)
    return x


def eps_delta_to_gdp(epsilon, delta) -> float:
    r"""The :math:`\mu` whose GDP guarantee is exactly :math:`(\epsilon, \delta)`-DP at ``epsilon``.

    Solves :math:`\delta_\mu(\epsilon) = \delta` for :math:`\mu` (the Balle-Wang
    relation is increasing in :math:`\mu`).  A Gaussian mechanism with
    standard deviation ``sensitivity / mu`` is then :math:`(\epsilon,
    \delta)`-DP, the analytic Gaussian mechanism of Balle & Wang, and this
    ``mu`` is the largest with that property: the largest double with
    :math:`\delta_\mu(\epsilon) \le \delta` as evaluated, so rounding never
    weakens the guarantee (for large epsilon one ulp of ``mu`` can move
    :math:`\delta` by many orders of magnitude).

    Parameters
    ----------
    epsilon : float
        ``epsilon >= 0``; at 0 the answer is :math:`2\sqrt2\,\mathrm{erf}^{-1}(\delta)`
        (to the safe side), the inverse of :func:`gdp_to_epsilon` where it returns 0.
    delta : float
        ``0 < delta < 1``.

    Returns
    -------
    float
        ``mu > 0``.

    References
    ----------
    Balle & Wang (2018), Theorem 8 and Algorithm 1; Dong, Roth & Su (2022),
    Corollary 2.13.

    Examples
    --------
    >>> from invariantdp.privacy import eps_delta_to_gdp, gdp_to_eps_delta
    >>> mu = eps_delta_to_gdp(epsilon=1.0, delta=1e-5)
    >>> round(mu, 6)
    0.268051
    >>> bool(abs(gdp_to_eps_delta(mu, 1.0) - 1e-5) < 1e-15)
    True
    """
    epsilon = _check_epsilon_or_zero(epsilon)
    delta = check_in_open_unit("delta", delta)
    if epsilon == 0.0:
        # delta_mu(0) = erf(mu / (2 sqrt2)): the largest double with it at most delta, as
        # gdp_to_eps_delta(mu, 0) evaluates it
        mu = 2.0 * _SQRT2 * float(special.erfinv(delta))
        mu = _last_double(lambda m: _delta_at_zero(m) <= delta, max(mu, _FLOAT_TINY), up=True)
        if mu is None:
            raise InvariantDPError(
                f"the `mu` giving `delta` ({delta:g}) at `epsilon` (0) is below the smallest "
                "positive double."
            )
        return mu
    log_target = math.log(delta)
    mu = _root_in_log(lambda m: _log_delta(m, epsilon) - log_target, 0.5, 2.0, "mu")
    # the root to the last ulp, on the safe side: the largest double with delta_mu <= delta
    # (for epsilon >> 1 one ulp of mu moves delta by up to ~sqrt(epsilon) ulps)
    mu = _last_double(lambda m: _log_delta(m, epsilon) <= log_target, mu, up=True)
    if mu is None:
        raise InvariantDPError(
            f"the `mu` giving `delta` ({delta:g}) at `epsilon` ({epsilon:g}) is below the "
            "smallest positive double."
        )
    return mu


def _last_double(ok, x: float, up: bool) -> float | None:
    """The last positive double from ``x`` in direction ``up`` with ``ok`` true.

    ``ok`` is monotone (true, then false in direction ``up``) and ``x`` is near
    the boundary (a root from ``brentq``).  A bracket is grown by relative
    steps that double, then bisected until its ends are adjacent doubles.
    None when ``ok`` is false down to the smallest positive double.
    """

    def move(v: float, k: float, upward: bool) -> float:
        f = 1.0 + k * 2.0**-52
        w = v * f if upward else v / f
        if w == v:  # at least one ulp
            w = math.nextafter(v, math.inf if upward else 0.0)
        return w

    good, k = x, 1.0
    while not ok(good):
        good = move(good, k, not up)
        k *= 2.0
        if good == 0.0 or not math.isfinite(good):
            return None
    bad, k = good, 1.0
    while True:
        bad = move(good, k, up)
        if bad == 0.0 or not math.isfinite(bad) or not ok(bad):
            break
        good, k = bad, 2.0 * k
    if not math.isfinite(bad):  # ok up to the overflow: the largest double, or bisect below it
        if ok(_FLOAT_MAX):
            return _FLOAT_MAX
        bad = _FLOAT_MAX
    while True:
        mid = 0.5 * good + 0.5 * bad
        if mid in (good, bad):
            return good
        if ok(mid):
            good = mid
        else:
            bad = mid


def gdp_to_epsilon(mu, delta) -> float:
    r"""The smallest :math:`\epsilon` with :math:`\mu`-GDP implying :math:`(\epsilon, \delta)`-DP.

    Solves :math:`\delta_\mu(\epsilon) = \delta` for :math:`\epsilon`
    (decreasing in :math:`\epsilon`), rounded on the safe side: the smallest
    double at least ``2.2250738585072014e-308`` (the least epsilon the
    package accepts) with :math:`\delta_\mu(\epsilon) \le \delta`.  When
    ``delta`` is at least :math:`\delta_\mu(0) = 2\Phi(\mu/2) - 1` the answer
    is ``0.0``; an epsilon above the largest double raises
    :class:`~invariantdp.exceptions.InvariantDPError`.

    Parameters
    ----------
    mu : float
        ``mu > 0``.
    delta : float
        ``0 < delta < 1``.

    Returns
    -------
    float
        ``epsilon >= 0``.

    References
    ----------
    Balle & Wang (2018), Theorem 8; Dong, Roth & Su (2022), Corollary 2.13.

    Examples
    --------
    >>> from invariantdp.privacy import gdp_to_epsilon
    >>> round(gdp_to_epsilon(mu=1.0, delta=1e-5), 6)
    4.377178
    """
    mu = check_positive("mu", mu)
    delta = check_in_open_unit("delta", delta)
    log_target = math.log(delta)
    # delta_mu(0) = 2 Phi(mu/2) - 1, as erf: no cancellation for small mu
    delta0 = _delta_at_zero(mu)
    if delta >= delta0:
        return 0.0
    # -log delta_mu(eps) is increasing in eps; a root below the smallest double
    # is returned as that double, a valid (conservative) epsilon
    seed = min(max(1.0, mu * mu), _FLOAT_MAX)
    eps = _root_in_log(lambda e: log_target - _log_delta(mu, e), 1e-3, seed, "epsilon")
    # on the safe side: the smallest double with delta_mu(eps) <= delta, and at least the
    # smallest normal double (the least epsilon the package accepts; larger is still valid)
    tiny = sys.float_info.min
    eps = _last_double(lambda e: e >= tiny and _log_delta(mu, e) <= log_target, eps, up=False)
    if eps is None:  # no double meets delta: the root lies above the largest double
        raise InvariantDPError(
            f"the `epsilon` solving the Balle-Wang relation exceeds the largest double "
            f"({_FLOAT_MAX:.6g})."
        )
    return eps


# ---------------------------------------------------------------------------
# group privacy and composition
# ---------------------------------------------------------------------------


def gdp_group_privacy(mu, k) -> float:
    r"""GDP for groups of size ``k``: :math:`\mu`-GDP gives :math:`k\mu`-GDP.

    :math:`G_\mu` composed with itself ``k`` times is :math:`G_{k\mu}`.

    Parameters
    ----------
    mu : float
        ``mu > 0``.
    k : int
        Group size, ``k >= 1``.

    Returns
    -------
    float
        ``k * mu``, correctly rounded.

    References
    ----------
    Dong, Roth & Su (2022), Theorem 2.14; Cho & Awan, Section 2.2.

    Examples
    --------
    >>> from invariantdp.privacy import gdp_group_privacy
    >>> gdp_group_privacy(mu=0.5, k=3)
    1.5
    """
    mu = check_positive("mu", mu)
    k = check_positive_int("k", k)
    return exact_product(k, mu, "mu", f"k * mu for `k` ({format_value(k)}) and `mu` ({mu:g})")


def gdp_composition(mus: Iterable) -> float:
    r"""Composition of GDP: :math:`\mu = \sqrt{\mu_1^2 + \cdots + \mu_n^2}`.

    Parameters
    ----------
    mus : iterable of float
        The ``mu_i > 0`` of the composed mechanisms.

    Returns
    -------
    float
        The ``mu`` of the composition.

    References
    ----------
    Dong, Roth & Su (2022), Corollary 3.3.

    Examples
    --------
    >>> from invariantdp.privacy import gdp_composition
    >>> gdp_composition([3.0, 4.0])
    5.0
    """
    vals = positive_list("mus", mus)
    # hypot scales internally: no overflow of mu**2 near 1e300, no underflow near 1e-300
    return finite("mu", math.hypot(*vals), "sqrt(sum of `mus` squared)")

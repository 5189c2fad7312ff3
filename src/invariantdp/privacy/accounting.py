r"""Privacy accounting: conversions, group privacy and composition.

Three privacy definitions are tracked by a single number each:

* pure :math:`\epsilon`-DP (and approximate :math:`(\epsilon, \delta)`-DP),
* :math:`\mu`-Gaussian DP (GDP, Dong, Roth & Su 2022), the tradeoff function
  :math:`G_\mu`,
* :math:`\rho`-zero-concentrated DP (zCDP, Bun & Steinke 2016), used by the
  2020 Census TopDown algorithm.

The exact link between GDP and :math:`(\epsilon, \delta)`-DP is the relation of
Balle & Wang (2018, Thm. 8), also Dong, Roth & Su (2022, Cor. 2.13):

.. math:: \delta_\mu(\epsilon) = \Phi\!\left(-\frac{\epsilon}{\mu} + \frac{\mu}{2}\right)
          - e^{\epsilon}\,\Phi\!\left(-\frac{\epsilon}{\mu} - \frac{\mu}{2}\right),

a mechanism is :math:`\mu`-GDP if and only if it is
:math:`(\epsilon, \delta_\mu(\epsilon))`-DP for every :math:`\epsilon \ge 0`.
It is evaluated here in log space, so that :math:`\delta` far below the
smallest double (large :math:`\epsilon`) keeps full relative accuracy, and
inverted in either argument by bracketed root finding.

References
----------
.. [1] Balle, B. and Wang, Y.-X. (2018). "Improving the Gaussian mechanism for
   differential privacy: analytical calibration and optimal denoising", ICML,
   Theorem 8.
.. [2] Dong, J., Roth, A. and Su, W. (2022). "Gaussian differential privacy",
   JRSS-B 84(1), Corollaries 2.13 and 3.3, Theorem 2.14 (group privacy).
.. [3] Bun, M. and Steinke, T. (2016). "Concentrated differential privacy:
   simplifications, extensions, and lower bounds", TCC, Propositions 1.3, 1.4,
   1.6 and 27 and Lemma 2.3.
.. [4] Cho, J. and Awan, J. "Formal privacy guarantees with invariant
   statistics", Section 6 (zCDP group privacy for the 2020 Census).
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np
from scipy import integrate, optimize, special

from .._validation import (
    InvariantDPError,
    check_delta,
    check_epsilon,
    check_in_open_unit,
    check_positive,
    check_positive_int,
    check_real,
)

__all__ = [
    "approximate_dp_composition",
    "approximate_dp_group_privacy",
    "eps_delta_to_gdp",
    "gdp_composition",
    "gdp_group_privacy",
    "gdp_log_delta",
    "gdp_to_eps_delta",
    "gdp_to_epsilon",
    "gdp_to_zcdp",
    "pure_dp_composition",
    "pure_dp_group_privacy",
    "pure_dp_to_zcdp",
    "zcdp_composition",
    "zcdp_group_privacy",
    "zcdp_to_eps_delta",
]

_LOG_HALF = math.log(0.5)
_SQRT2 = math.sqrt(2.0)


# ---------------------------------------------------------------------------
# Gaussian DP <-> (epsilon, delta)-DP  (Balle & Wang 2018)
# ---------------------------------------------------------------------------


def _log_delta(mu: float, epsilon: float) -> float:
    """``log delta_mu(epsilon)`` for ``mu > 0``, ``epsilon >= 0`` (no checks)."""
    a = -epsilon / mu + mu / 2.0  # argument of the first Phi
    b = -epsilon / mu - mu / 2.0  # argument of the second Phi, b = a - mu
    if a >= 0.0:
        # Phi(a) >= 1/2 and the subtracted term is at most Phi(a) e^{-mu^2/2}-ish:
        # no underflow, and the difference is well conditioned.
        log_second = epsilon + special.log_ndtr(b)
        return float(special.log_ndtr(a) + np.log(-np.expm1(log_second - special.log_ndtr(a))))
    # a < 0: both Phi's are tail probabilities.  With Phi(x) = erfcx(-x/sqrt2) e^{-x^2/2} / 2
    # and b^2 = a^2 + 2 epsilon, the factor e^{epsilon} cancels exactly:
    #   delta = e^{-a^2/2} / 2 * (erfcx(u) - erfcx(v)),  u = -a/sqrt2 < v = -b/sqrt2.
    u = -a / _SQRT2
    v = -b / _SQRT2
    eu = special.erfcx(u)
    ev = special.erfcx(v)
    if (eu - ev) > 1e-4 * eu:  # relative rounding error below ~1e-12
        return float(-0.5 * a * a + _LOG_HALF + math.log(eu - ev))
    # Relative gap below 1e-4 (epsilon >> mu^2): the difference of the two erfcx values
    # loses digits.  Use the privacy-loss representation instead (L ~ N(mu^2/2, mu^2)),
    #   delta = E[(1 - e^{epsilon - L})_+] = p_L(epsilon) * int_0^inf (1 - e^{-s})
    #           exp(-s c - s^2 / (2 mu^2)) ds,   c = (epsilon - mu^2/2) / mu^2,
    # whose integrand is positive (no cancellation).  With s = w / c the mass sits at w ~ 1.
    c = (epsilon - 0.5 * mu * mu) / (mu * mu)
    log_p = -0.5 * a * a - math.log(mu) - 0.5 * math.log(2.0 * math.pi)
    q = 1.0 / (2.0 * (c * mu) ** 2)

    def integrand(w: float) -> float:
        return -math.expm1(-w / c) * math.exp(-w - q * w * w)

    val, _ = integrate.quad(integrand, 0.0, 80.0, epsabs=0.0, epsrel=1e-13, limit=200)
    val /= c
    return float(log_p + math.log(val))


def gdp_log_delta(mu, epsilon) -> float:
    r"""Natural log of :math:`\delta_\mu(\epsilon)`, the Balle-Wang relation.

    Accurate in relative terms where :math:`\delta` underflows (large
    :math:`\epsilon`), e.g. ``gdp_log_delta(1, 200)`` is about ``-2e4``.

    Parameters
    ----------
    mu : float
        GDP parameter, ``mu > 0``.
    epsilon : float
        ``epsilon > 0``.

    Returns
    -------
    float
        :math:`\log \delta_\mu(\epsilon)`.

    References
    ----------
    Balle & Wang (2018), Theorem 8; Dong, Roth & Su (2022), Corollary 2.13.

    Examples
    --------
    >>> from invariantdp.privacy.accounting import gdp_log_delta
    >>> round(gdp_log_delta(1.0, 200.0), 2)
    -19911.64
    """
    mu = check_positive("mu", mu)
    epsilon = check_epsilon(epsilon)
    return _log_delta(mu, epsilon)


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
        ``epsilon > 0``.

    Returns
    -------
    float
        ``delta`` in (0, 1).

    References
    ----------
    Balle & Wang (2018), Theorem 8; Dong, Roth & Su (2022), Corollary 2.13.

    Examples
    --------
    >>> from invariantdp.privacy.accounting import gdp_to_eps_delta
    >>> round(gdp_to_eps_delta(mu=1.0, epsilon=1.0), 6)
    0.126937
    """
    return math.exp(gdp_log_delta(mu, epsilon))


def _root_in_log(fun, lo: float, hi: float) -> float:
    """Root of increasing ``fun`` on ``(0, inf)``, searched in ``log x``; ``lo < hi`` seeds."""
    g = lambda t: fun(math.exp(t))  # noqa: E731
    tlo, thi = math.log(lo), math.log(hi)
    for _ in range(400):
        if g(tlo) <= 0.0:
            break
        tlo -= 2.0
    for _ in range(400):
        if g(thi) >= 0.0:
            break
        thi += 2.0
    t = optimize.brentq(g, tlo, thi, xtol=1e-15, rtol=4 * np.finfo(float).eps, maxiter=500)
    return math.exp(t)


def eps_delta_to_gdp(epsilon, delta) -> float:
    r"""The :math:`\mu` whose GDP guarantee is exactly :math:`(\epsilon, \delta)`-DP at ``epsilon``.

    Solves :math:`\delta_\mu(\epsilon) = \delta` for :math:`\mu` (the Balle-Wang
    relation is increasing in :math:`\mu`).  A Gaussian mechanism with
    standard deviation ``sensitivity / mu`` is then :math:`(\epsilon,
    \delta)`-DP, the analytic Gaussian mechanism of Balle & Wang, and this
    ``mu`` is the largest with that property.

    Parameters
    ----------
    epsilon : float
        ``epsilon > 0``.
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
    >>> from invariantdp.privacy.accounting import eps_delta_to_gdp, gdp_to_eps_delta
    >>> mu = eps_delta_to_gdp(epsilon=1.0, delta=1e-5)
    >>> round(mu, 6)
    0.268051
    >>> bool(abs(gdp_to_eps_delta(mu, 1.0) - 1e-5) < 1e-15)
    True
    """
    epsilon = check_epsilon(epsilon)
    delta = check_in_open_unit("delta", delta)
    log_target = math.log(delta)
    return _root_in_log(lambda m: _log_delta(m, epsilon) - log_target, 0.5, 2.0)


def gdp_to_epsilon(mu, delta) -> float:
    r"""The smallest :math:`\epsilon` with :math:`\mu`-GDP implying :math:`(\epsilon, \delta)`-DP.

    Solves :math:`\delta_\mu(\epsilon) = \delta` for :math:`\epsilon`
    (decreasing in :math:`\epsilon`).  When ``delta`` is at least
    :math:`\delta_\mu(0) = 2\Phi(\mu/2) - 1` the answer is ``0.0``.

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
    >>> from invariantdp.privacy.accounting import gdp_to_epsilon
    >>> round(gdp_to_epsilon(mu=1.0, delta=1e-5), 6)
    4.377178
    """
    mu = check_positive("mu", mu)
    delta = check_in_open_unit("delta", delta)
    log_target = math.log(delta)
    delta0 = 2.0 * special.ndtr(mu / 2.0) - 1.0
    if delta >= delta0:
        return 0.0
    # -log delta_mu(eps) is increasing in eps
    return _root_in_log(lambda e: log_target - _log_delta(mu, e), 1e-3, max(1.0, mu * mu))


# ---------------------------------------------------------------------------
# zCDP
# ---------------------------------------------------------------------------


def zcdp_to_eps_delta(rho, delta) -> float:
    r"""The :math:`\epsilon` such that :math:`\rho`-zCDP implies :math:`(\epsilon, \delta)`-DP.

    .. math:: \epsilon = \rho + 2\sqrt{\rho \log(1/\delta)}.

    Parameters
    ----------
    rho : float
        zCDP parameter, ``rho > 0``.
    delta : float
        ``0 < delta < 1``.

    Returns
    -------
    float

    References
    ----------
    Bun & Steinke (2016), Proposition 1.3; Cho & Awan, Section 6.1.

    Examples
    --------
    >>> from invariantdp.privacy.accounting import zcdp_to_eps_delta
    >>> round(zcdp_to_eps_delta(rho=2.56, delta=1e-10), 5)
    17.91528
    """
    rho = check_positive("rho", rho)
    delta = check_in_open_unit("delta", delta)
    return rho + 2.0 * math.sqrt(rho * -math.log(delta))


def zcdp_group_privacy(rho, k) -> float:
    r"""zCDP for groups of size ``k``: :math:`\rho`-zCDP gives :math:`k^2\rho`-zCDP.

    Parameters
    ----------
    rho : float
        ``rho > 0``.
    k : int
        Group size (distance between the data sets), ``k >= 1``.

    Returns
    -------
    float
        ``k**2 * rho``.

    References
    ----------
    Bun & Steinke (2016), Proposition 27; Cho & Awan, Section 6.1 (with
    ``k = a(t)``).

    Examples
    --------
    >>> from invariantdp.privacy.accounting import zcdp_group_privacy
    >>> zcdp_group_privacy(rho=2.56, k=2)
    10.24
    """
    rho = check_positive("rho", rho)
    k = check_positive_int("k", k)
    return k * k * rho


def zcdp_composition(rhos: Iterable) -> float:
    r"""Composition of zCDP: the parameters add, :math:`\sum_i \rho_i`.

    References
    ----------
    Bun & Steinke (2016), Lemma 2.3.

    Examples
    --------
    >>> from invariantdp.privacy.accounting import zcdp_composition
    >>> zcdp_composition([0.5, 1.0, 1.06])
    2.56
    """
    vals = _positive_list("rhos", rhos)
    return float(math.fsum(vals))


def gdp_to_zcdp(mu) -> float:
    r"""A :math:`\mu`-GDP Gaussian mechanism is :math:`\mu^2/2`-zCDP.

    The Gaussian mechanism with :math:`\ell_2` sensitivity :math:`\Delta` and
    standard deviation :math:`\sigma = \Delta/\mu` is :math:`\mu`-GDP and
    :math:`\Delta^2/(2\sigma^2) = \mu^2/2`-zCDP.

    References
    ----------
    Bun & Steinke (2016), Proposition 1.6; Dong, Roth & Su (2022), Theorem 2.7.

    Examples
    --------
    >>> from invariantdp.privacy.accounting import gdp_to_zcdp
    >>> gdp_to_zcdp(mu=2.0)
    2.0
    """
    mu = check_positive("mu", mu)
    return 0.5 * mu * mu


def pure_dp_to_zcdp(epsilon) -> float:
    r""":math:`\epsilon`-DP implies :math:`\epsilon^2/2`-zCDP.

    References
    ----------
    Bun & Steinke (2016), Proposition 1.4.

    Examples
    --------
    >>> from invariantdp.privacy.accounting import pure_dp_to_zcdp
    >>> pure_dp_to_zcdp(epsilon=1.0)
    0.5
    """
    epsilon = check_epsilon(epsilon)
    return 0.5 * epsilon * epsilon


# ---------------------------------------------------------------------------
# Gaussian DP: group privacy and composition
# ---------------------------------------------------------------------------


def gdp_group_privacy(mu, k) -> float:
    r"""GDP for groups of size ``k``: :math:`\mu`-GDP gives :math:`k\mu`-GDP.

    :math:`G_\mu` composed with itself ``k`` times is :math:`G_{k\mu}`.

    References
    ----------
    Dong, Roth & Su (2022), Theorem 2.14; Cho & Awan, Section 2.2.

    Examples
    --------
    >>> from invariantdp.privacy.accounting import gdp_group_privacy
    >>> gdp_group_privacy(mu=0.5, k=3)
    1.5
    """
    mu = check_positive("mu", mu)
    k = check_positive_int("k", k)
    return k * mu


def gdp_composition(mus: Iterable) -> float:
    r"""Composition of GDP: :math:`\mu = \sqrt{\mu_1^2 + \cdots + \mu_n^2}`.

    References
    ----------
    Dong, Roth & Su (2022), Corollary 3.3.

    Examples
    --------
    >>> from invariantdp.privacy.accounting import gdp_composition
    >>> gdp_composition([3.0, 4.0])
    5.0
    """
    vals = _positive_list("mus", mus)
    return float(math.sqrt(math.fsum(m * m for m in vals)))


# ---------------------------------------------------------------------------
# Pure and approximate DP
# ---------------------------------------------------------------------------


def pure_dp_group_privacy(epsilon, k) -> float:
    r"""Pure DP for groups of size ``k``: :math:`\epsilon`-DP gives :math:`k\epsilon`-DP.

    References
    ----------
    Dwork & Roth (2014), Theorem 2.2; Cho & Awan, Section 2.2.

    Examples
    --------
    >>> from invariantdp.privacy.accounting import pure_dp_group_privacy
    >>> pure_dp_group_privacy(epsilon=0.5, k=3)
    1.5
    """
    epsilon = check_epsilon(epsilon)
    k = check_positive_int("k", k)
    return k * epsilon


def approximate_dp_group_privacy(epsilon, delta, k) -> tuple[float, float]:
    r"""Group privacy of :math:`(\epsilon, \delta)`-DP for groups of size ``k``.

    Returns :math:`(k\epsilon,\ \delta \sum_{i=0}^{k-1} e^{i\epsilon})`, the
    standard bound obtained by chaining ``k`` neighbouring pairs.  A returned
    ``delta >= 1`` (``inf`` on overflow) is a valid but vacuous bound.

    References
    ----------
    Vadhan (2017), "The complexity of differential privacy", Lemma 2.2.

    Examples
    --------
    >>> from invariantdp.privacy.accounting import approximate_dp_group_privacy
    >>> eps, delta = approximate_dp_group_privacy(epsilon=1.0, delta=1e-6, k=2)
    >>> eps, round(delta, 12)
    (2.0, 3.718282e-06)
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    k = check_positive_int("k", k)
    # delta * (e^{k eps} - 1) / (e^eps - 1), written with expm1 for small eps
    # delta * sum_{i<k} e^{i eps} = delta * (e^{k eps} - 1) / (e^eps - 1), in log space;
    # a result >= 1 is a valid but vacuous bound and is returned as is (inf on overflow)
    log_factor = k * epsilon + math.log(-math.expm1(-k * epsilon)) - math.log(math.expm1(epsilon))
    if delta == 0.0:
        return k * epsilon, 0.0
    log_out = math.log(delta) + log_factor
    return k * epsilon, math.exp(log_out) if log_out < 709.0 else math.inf


def pure_dp_composition(epsilons: Iterable) -> float:
    r"""Basic composition of pure DP: the :math:`\epsilon_i` add.

    References
    ----------
    Dwork & Roth (2014), Theorem 3.14.

    Examples
    --------
    >>> from invariantdp.privacy.accounting import pure_dp_composition
    >>> pure_dp_composition([0.5, 0.25])
    0.75
    """
    vals = _positive_list("epsilons", epsilons)
    return float(math.fsum(vals))


def approximate_dp_composition(epsilons: Iterable, deltas: Iterable) -> tuple[float, float]:
    r"""Basic composition of :math:`(\epsilon_i, \delta_i)`-DP: both parameters add.

    References
    ----------
    Dwork & Roth (2014), Theorem 3.16.

    Examples
    --------
    >>> from invariantdp.privacy.accounting import approximate_dp_composition
    >>> approximate_dp_composition([0.5, 0.25], [1e-6, 1e-6])
    (0.75, 2e-06)
    """
    eps = _positive_list("epsilons", epsilons)
    dels = [check_delta(d, f"deltas[{i}]") for i, d in enumerate(_as_list("deltas", deltas))]
    if len(dels) != len(eps):
        raise InvariantDPError(
            f"`deltas` has {len(dels)} entries but `epsilons` has {len(eps)}; they must match."
        )
    total_delta = math.fsum(dels)
    if total_delta >= 1.0:
        raise InvariantDPError(f"`deltas` sum to {total_delta}, which must be < 1.")
    return float(math.fsum(eps)), float(total_delta)


# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------


def _as_list(name: str, values) -> list:
    if isinstance(values, str) or not isinstance(values, Iterable):
        raise TypeError(f"`{name}` must be an iterable of numbers, got {type(values).__name__}.")
    out = (
        list(np.asarray(values, dtype=object).ravel())
        if isinstance(values, np.ndarray)
        else list(values)
    )
    if not out:
        raise InvariantDPError(f"`{name}` ({values!r}) must not be empty.")
    return out


def _positive_list(name: str, values) -> list[float]:
    return [
        check_positive(f"{name}[{i}]", check_real(f"{name}[{i}]", v))
        for i, v in enumerate(_as_list(name, values))
    ]

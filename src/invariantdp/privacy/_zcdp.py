r"""Zero-concentrated DP: conversion to (epsilon, delta)-DP, groups, composition, tradeoff.

:math:`\rho`-zCDP (Bun & Steinke 2016) is the accounting of the 2020 Census
TopDown algorithm.  It implies :math:`(\epsilon, \delta)`-DP by two
conversions, chosen with ``method=`` in :func:`zcdp_to_eps_delta`:

* ``"cks"`` (the default): Canonne, Kamath & Steinke (2020, Cor. 13), the
  tight conversion through Renyi DP, the one OpenDP uses;
* ``"bun-steinke"``: Bun & Steinke (2016, Prop. 1.3),
  :math:`\epsilon = \rho + 2\sqrt{\rho\log(1/\delta)}`, the simpler bound the
  Census figures of Cho & Awan (Sec. 6.1) and of the swapping paper
  (Table 6.2) are computed with.

:func:`zcdp_tradeoff` is the tradeoff function implied by :math:`\rho`-zCDP
(the envelope of the CKS conversions), the claim an audit of a zCDP mechanism
checks.

References
----------
.. [1] Bun, M. and Steinke, T. (2016). "Concentrated differential privacy:
   simplifications, extensions, and lower bounds", TCC, Propositions 1.3, 1.4,
   1.6 and 27 and Lemma 2.3.
.. [2] Canonne, C., Kamath, G. and Steinke, T. (2020). "The discrete Gaussian
   for differential privacy", NeurIPS, Corollary 13.
.. [3] Cho, J. and Awan, J. "Formal privacy guarantees with invariant
   statistics", Section 6 (zCDP group privacy for the 2020 Census).
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np
from scipy import optimize

from .._validation import (
    InvariantDPError,
    check_delta,
    check_epsilon,
    check_in_open_unit,
    check_positive,
    check_positive_int,
    format_value,
)
from ._checks import LOG_FLOAT_MAX, exact_product, finite, fsum, positive, positive_list
from ._tradeoff import TradeoffFunction

__all__ = [
    "ZCDP_CONVERSIONS",
    "gdp_to_zcdp",
    "pure_dp_to_zcdp",
    "zcdp_composition",
    "zcdp_group_privacy",
    "zcdp_log_delta",
    "zcdp_to_eps_delta",
    "zcdp_tradeoff",
]

#: the conversions of :func:`zcdp_to_eps_delta`, the default first
ZCDP_CONVERSIONS = ("cks", "bun-steinke")


def _check_method(method) -> str:
    if not isinstance(method, str):
        raise TypeError(f"`method` must be a string, got {type(method).__name__}.")
    if method not in ZCDP_CONVERSIONS:
        raise InvariantDPError(
            f"`method` ({method!r}) must be one of {', '.join(map(repr, ZCDP_CONVERSIONS))}."
        )
    return method


# CKS (2020) Cor. 13: rho-zCDP implies (epsilon, delta)-DP with
#   log delta = min over alpha > 1 of (alpha-1)(alpha rho - epsilon) + (alpha-1) log(1-1/alpha)
#               - log(alpha).
# With alpha = 1 + t the minimum lies at the one root of
# (1 + 2t) rho - epsilon + log(t / (1 + t)) = 0, and there the bound reads
#   epsilon(t) = (1 + 2t) rho - log(1 + 1/t),     log(1/delta)(t) = rho t^2 + log(1 + t),
# both increasing in t: one curve, parametrised by t, gives either conversion by a
# root in s = log t (no overflow or underflow of rho t^2 for any positive double rho).


def _exp(x: float) -> float:
    """``e^x``, ``inf`` beyond the largest double (``math.exp`` raises there)."""
    return math.exp(x) if x <= LOG_FLOAT_MAX else math.inf


def _cks_epsilon_at(log_rho: float, s: float) -> float:
    """``epsilon(t) - rho`` at ``t = e^s``: ``2 rho t - log(1 + 1/t)``."""
    return _exp(math.log(2.0) + log_rho + s) - math.log1p(_exp(-s))


def _cks_log_inv_delta_at(log_rho: float, s: float) -> float:
    """``log(1/delta)(t)`` at ``t = e^s``: ``rho t^2 + log(1 + t)``."""
    return _exp(log_rho + 2.0 * s) + math.log1p(_exp(s))


def _root_in_s(g) -> float:
    """The root of an increasing ``g`` on the real line.

    The bracket grows by doubling steps from 0; where ``g`` overflows to
    ``inf`` at its upper end, bisection brings that end back to a finite
    value before ``brentq`` (whose interpolation needs finite values).
    """
    lo, hi, step = 0.0, 0.0, 1.0
    while g(lo) > 0.0:
        hi, lo, step = lo, lo - step, 2.0 * step
    step = 1.0
    while g(hi) < 0.0:
        lo, hi, step = hi, hi + step, 2.0 * step
    while not math.isfinite(g(hi)):
        mid = 0.5 * (lo + hi)
        if g(mid) < 0.0:
            lo = mid
        else:
            hi = mid
    if g(hi) == 0.0:
        return hi
    return optimize.brentq(g, lo, hi, xtol=1e-300, rtol=4 * 2.0**-52, maxiter=500)


def _cks_epsilon(rho: float, log_inv_delta: float) -> float:
    """The least epsilon of CKS Cor. 13 at ``log(1/delta) > 0`` (0.0 where it is negative)."""
    log_rho = math.log(rho)
    s = _root_in_s(lambda s: _cks_log_inv_delta_at(log_rho, s) - log_inv_delta)
    # an epsilon below 0 certifies (0, delta)-DP: delta(epsilon) decreases in epsilon
    return max(rho + _cks_epsilon_at(log_rho, s), 0.0)


def _cks_log_delta(rho: float, epsilon: float) -> float:
    """``log delta`` of CKS Cor. 13 at ``epsilon >= 0`` (no checks)."""
    log_rho = math.log(rho)
    s = _root_in_s(lambda s: _cks_epsilon_at(log_rho, s) - (epsilon - rho))
    return -_cks_log_inv_delta_at(log_rho, s)


def zcdp_log_delta(rho, epsilon) -> float:
    r"""Natural log of the :math:`\delta` of the (epsilon, delta)-DP that :math:`\rho`-zCDP implies.

    The tight conversion of Canonne, Kamath & Steinke (2020, Cor. 13),

    .. math:: \delta = \inf_{\alpha > 1} \frac{e^{(\alpha-1)(\alpha\rho-\epsilon)}}{\alpha}
              \Big(1 - \frac1\alpha\Big)^{\alpha-1},

    evaluated at its minimising order :math:`\alpha = 1 + t`, where it equals
    :math:`\log\delta = -\rho t^2 - \log(1 + t)` (no cancellation: relative
    accuracy also where :math:`\delta` underflows).  The inverse of
    :func:`zcdp_to_eps_delta` with ``method="cks"``.

    Parameters
    ----------
    rho : float
        ``rho > 0``.
    epsilon : float
        ``epsilon > 0``.

    Returns
    -------
    float
        :math:`\log\delta < 0`.

    References
    ----------
    Canonne, Kamath & Steinke (2020), Corollary 13.

    Examples
    --------
    >>> from invariantdp.privacy import zcdp_log_delta, zcdp_to_eps_delta
    >>> log_delta = zcdp_log_delta(rho=0.5, epsilon=3.0)
    >>> round(log_delta, 6)
    -5.270083
    >>> bool(abs(zcdp_to_eps_delta(0.5, math.exp(log_delta)) - 3.0) < 1e-12)
    True
    """
    rho = check_positive("rho", rho)
    epsilon = check_epsilon(epsilon)
    out = _cks_log_delta(rho, epsilon)
    if out == -math.inf:
        raise InvariantDPError(
            f"log delta for `rho` ({rho:g}) and `epsilon` ({epsilon:g}) is below the most "
            "negative double (about -epsilon^2 / (4 rho)): it cannot be returned; delta itself "
            "is 0.0 in double precision."
        )
    return out


def zcdp_to_eps_delta(rho, delta, *, method="cks") -> float:
    r"""The :math:`\epsilon` such that :math:`\rho`-zCDP implies :math:`(\epsilon, \delta)`-DP.

    ``method="cks"`` (default) is the tight conversion of Canonne, Kamath &
    Steinke (2020, Cor. 13):

    .. math:: \epsilon = \min_{\alpha > 1}\; \alpha\rho
              + \frac{\log(1/\delta) + (\alpha - 1)\log(1 - 1/\alpha) - \log\alpha}{\alpha - 1},

    (``0.0`` where the minimum is negative: the mechanism is then
    :math:`(0, \delta)`-DP).  ``method="bun-steinke"`` is Bun & Steinke
    (2016, Prop. 1.3),

    .. math:: \epsilon = \rho + 2\sqrt{\rho \log(1/\delta)},

    always larger; the Census figures of Cho & Awan (Sec. 6.1) use it.

    Parameters
    ----------
    rho : float
        zCDP parameter, ``rho > 0``.
    delta : float
        ``0 < delta < 1``.
    method : {"cks", "bun-steinke"}
        The conversion (see above).

    Returns
    -------
    float
        ``epsilon >= 0``.

    References
    ----------
    Canonne, Kamath & Steinke (2020), Corollary 13; Bun & Steinke (2016),
    Proposition 1.3; Cho & Awan, Section 6.1.

    Examples
    --------
    >>> from invariantdp.privacy import zcdp_to_eps_delta
    >>> round(zcdp_to_eps_delta(rho=2.56, delta=1e-10, method="bun-steinke"), 5)
    17.91528
    >>> round(zcdp_to_eps_delta(rho=2.56, delta=1e-10), 5)
    17.15831
    """
    rho = check_positive("rho", rho)
    delta = check_in_open_unit("delta", delta)
    method = _check_method(method)
    log_inv_delta = -math.log(delta)
    if method == "cks":
        eps = _cks_epsilon(rho, log_inv_delta)
        return finite("epsilon", eps, f"the CKS epsilon for `rho` ({rho:g})")
    # sqrt(rho) sqrt(log(1/delta)): no overflow of the product for huge rho
    eps = rho + 2.0 * math.sqrt(rho) * math.sqrt(log_inv_delta)
    return finite("epsilon", eps, f"rho + 2 sqrt(rho log(1/delta)) for `rho` ({rho:g})")


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
    >>> from invariantdp.privacy import zcdp_group_privacy
    >>> zcdp_group_privacy(rho=2.56, k=2)
    10.24
    """
    rho = check_positive("rho", rho)
    k = check_positive_int("k", k)
    return exact_product(
        k * k, rho, "rho", f"k**2 * rho for `k` ({format_value(k)}) and `rho` ({rho:g})"
    )


def zcdp_composition(rhos: Iterable) -> float:
    r"""Composition of zCDP: the parameters add, :math:`\sum_i \rho_i`.

    Parameters
    ----------
    rhos : iterable of float
        The ``rho_i > 0`` of the composed mechanisms.

    Returns
    -------
    float
        Their sum.

    References
    ----------
    Bun & Steinke (2016), Lemma 2.3.

    Examples
    --------
    >>> from invariantdp.privacy import zcdp_composition
    >>> zcdp_composition([0.5, 1.0, 1.06])
    2.56
    """
    vals = positive_list("rhos", rhos)
    return fsum("rho", vals, "the sum of `rhos`")


def gdp_to_zcdp(mu) -> float:
    r"""A :math:`\mu`-GDP Gaussian mechanism is :math:`\mu^2/2`-zCDP.

    The Gaussian mechanism with :math:`\ell_2` sensitivity :math:`\Delta` and
    standard deviation :math:`\sigma = \Delta/\mu` is :math:`\mu`-GDP and
    :math:`\Delta^2/(2\sigma^2) = \mu^2/2`-zCDP.

    Parameters
    ----------
    mu : float
        ``mu > 0``.

    Returns
    -------
    float
        ``rho = mu**2 / 2``.

    References
    ----------
    Bun & Steinke (2016), Proposition 1.6; Dong, Roth & Su (2022), Theorem 2.7.

    Examples
    --------
    >>> from invariantdp.privacy import gdp_to_zcdp
    >>> gdp_to_zcdp(mu=2.0)
    2.0
    """
    mu = check_positive("mu", mu)
    return positive("rho", (0.5 * mu) * mu, f"mu**2 / 2 for `mu` ({mu:g})")


def pure_dp_to_zcdp(epsilon) -> float:
    r""":math:`\epsilon`-DP implies :math:`\epsilon^2/2`-zCDP.

    Parameters
    ----------
    epsilon : float
        ``epsilon > 0``.

    Returns
    -------
    float
        ``rho = epsilon**2 / 2``.

    References
    ----------
    Bun & Steinke (2016), Proposition 1.4.

    Examples
    --------
    >>> from invariantdp.privacy import pure_dp_to_zcdp
    >>> pure_dp_to_zcdp(epsilon=1.0)
    0.5
    """
    epsilon = check_epsilon(epsilon)
    return positive("rho", (0.5 * epsilon) * epsilon, f"epsilon**2 / 2 for `epsilon` ({epsilon:g})")


# ---------------------------------------------------------------------------
# the tradeoff function implied by zCDP
# ---------------------------------------------------------------------------


class _ZCDP(TradeoffFunction):
    def __init__(self, rho: float, n_grid: int, tv: float = 0.0):
        self.rho = rho
        self.tv = tv
        self.name = f"implied by rho-zCDP: rho={rho:g}" + (f", tv={tv:g}" if tv else "")
        # (epsilon, delta(epsilon)) pairs of the CKS conversion on a grid of epsilon
        eps = np.concatenate([[0.0], np.geomspace(1e-3, rho + 40.0 * np.sqrt(rho) + 40.0, n_grid)])
        delta = np.exp([_cks_log_delta(rho, float(e)) for e in eps])
        if tv:  # within total variation tv of a rho-zCDP mechanism: delta + (1 + e^eps) tv
            with np.errstate(over="ignore"):
                delta = delta + (1.0 + np.exp(eps)) * tv * (1.0 + 1e-12)
        keep = delta < 1.0
        self.eps, self.delta = eps[keep], delta[keep]

    def __call__(self, alpha):
        a = np.asarray(alpha, dtype=float)
        flat = a.reshape(-1, 1)
        e, d = self.eps[None, :], self.delta[None, :]
        with np.errstate(over="ignore"):
            hi = 1.0 - d - np.exp(e) * (1.0 - flat)
        lo = np.exp(-e) * (flat - d)
        out = np.max(np.maximum(np.maximum(hi, lo), 0.0), axis=1).reshape(a.shape)
        return out[()] if out.ndim == 0 else out

    def __repr__(self) -> str:
        tv = f", tv={self.tv!r}" if self.tv else ""
        return f"zcdp_tradeoff(rho={self.rho!r}{tv})"


def zcdp_tradeoff(rho, *, n_grid=400, tv=0.0) -> TradeoffFunction:
    r"""The tradeoff function implied by :math:`\rho`-zCDP.

    :math:`\rho`-zCDP implies :math:`(\epsilon, \delta(\epsilon))`-DP for every
    :math:`\epsilon \ge 0` with (Canonne, Kamath & Steinke 2020, Cor. 13)

    .. math:: \delta(\epsilon) = \inf_{\alpha > 1}
              \frac{e^{(\alpha-1)(\alpha\rho-\epsilon)}}{\alpha}
              \Big(1 - \frac1\alpha\Big)^{\alpha-1},

    so the mechanism is ``f``-DP for the upper envelope
    :math:`f = \max_\epsilon f_{\epsilon,\delta(\epsilon)}` (taken on a grid
    of ``n_grid`` values of epsilon, which only weakens the claim).  This is
    the claim to audit a zCDP mechanism such as the discrete Gaussian, whose
    exact tradeoff curve is *not* :math:`G_{\Delta/\sigma}`.

    With ``tv > 0`` the claim is that of a mechanism within total variation
    ``tv`` of a :math:`\rho`-zCDP one (e.g. a secure release together with
    its run time, :mod:`invariantdp.secure`): every pair becomes
    :math:`(\epsilon, \delta(\epsilon) + (1 + e^\epsilon)\,tv)`.

    Parameters
    ----------
    rho : float
        ``rho > 0``.
    n_grid : int
        Number of epsilon values in the envelope (at least 10).
    tv : float, optional
        ``0 <= tv < 1`` (default 0).

    Returns
    -------
    TradeoffFunction

    References
    ----------
    Canonne, C. L., Kamath, G. and Steinke, T. (2020). "The discrete Gaussian
    for differential privacy", NeurIPS 33, Cor. 13; Dong, Roth & Su (2022),
    Sec. 2 (a total variation distance tv shifts the tradeoff function).

    Examples
    --------
    >>> from invariantdp.privacy import gaussian_tradeoff, zcdp_tradeoff
    >>> f = zcdp_tradeoff(0.5)  # the Gaussian mechanism with mu = 1 is 0.5-zCDP
    >>> bool(f(0.9) <= gaussian_tradeoff(1.0)(0.9))
    True
    """
    rho = check_positive("rho", rho)
    n_grid = check_positive_int("n_grid", n_grid, minimum=10)
    tv = check_delta(tv, name="tv")
    return _ZCDP(rho, n_grid, tv)

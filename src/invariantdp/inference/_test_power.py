r"""Power and sample size of the DP tests, for planning a study before the release.

The UMP test of a proportion (Awan & Slavkovic 2018) rejects when its
p-value is at most ``alpha``; since the p-value of a released ``Z = X + N``
(Tulap noise ``N``) is :math:`E_{p_0} F(X - z)`, a decreasing function of
``z``, the test rejects exactly when ``Z`` exceeds the critical value ``m``
solving :math:`E_{p_0} F(X - m) = \alpha`, and its power at ``p`` is
:math:`P_p(Z \ge m) = E_p F(X - m)` (the noise is symmetric).  The
two-sided test rejects when :math:`|Z - n p_0| \ge t^*`, with ``t*`` where
its p-value equals ``alpha``.

The sample-size helpers return the smallest ``n`` whose power reaches the
target; the power of these tests grows with ``n`` (the noise does not), and
the search checks it at the answer and one below.

Examples
--------
>>> from invariantdp.inference import ump_binomial_power, ump_binomial_sample_size
>>> round(ump_binomial_power(100, 0.5, null_p=0.5, epsilon=1.0), 6)  # size at the null
0.05
>>> ump_binomial_sample_size(0.6, null_p=0.5, epsilon=1.0, power=0.8)  # two-sided
201
>>> ump_binomial_sample_size(0.6, null_p=0.5, epsilon=1.0, power=0.8, alternative="greater")
160
"""

from __future__ import annotations

import numpy as np
from scipy import optimize, special

from .._validation import (
    InvariantDPError,
    check_alternative,
    check_in_open_unit,
    check_positive,
    check_positive_int,
)
from ._binomial_test import MAX_N, _log_p_one_sided, two_sided_tails
from ._noise import resolve_noise
from ._odds_ratio_test import umpu_odds_ratio_power

__all__ = ["ump_binomial_power", "ump_binomial_sample_size", "umpu_odds_ratio_sample_size"]


def _binomial_critical(n, p0, noise, alternative, log_alpha):
    """The critical value ``m`` (one-sided) or ``t*`` (two-sided) at level ``alpha``."""
    lp0 = float(special.logit(p0))
    center = n * p0
    if alternative != "two-sided":
        side = alternative

        def g(z):
            return _log_p_one_sided(z, n, lp0, noise, side) - log_alpha

        # "greater": the p-value falls as z grows, "less": it rises; a finite bracket
        # around n p0 grown by doubling (the noise has unbounded support)
        sign = 1.0 if alternative == "greater" else -1.0
        width = 1.0 + n
        while g(center - sign * width) <= 0.0 or g(center + sign * width) >= 0.0:
            width *= 2.0
        a, b = sorted((center - sign * width, center + sign * width))
        return optimize.brentq(g, a, b, xtol=1e-12, rtol=1e-12)

    def two(t):
        return np.log(two_sided_tails(t, n, p0, lp0, noise)) - log_alpha

    if two(0.0) <= 0.0:
        return 0.0
    hi = 1.0
    while two(hi) > 0.0:
        hi *= 2.0
    return optimize.brentq(two, 0.0, hi, xtol=1e-12, rtol=1e-12)


def ump_binomial_power(
    n, p, *, null_p, epsilon=None, delta=0.0, alpha=0.05, alternative="two-sided", noise=None
):
    r"""Power of :func:`~invariantdp.inference.ump_binomial_test` at the proportion ``p``.

    Parameters
    ----------
    n : int
        Number of trials.
    p : float or array_like
        Proportion(s) of the alternative, in (0, 1).
    null_p : float
        The proportion under the null hypothesis.
    epsilon, delta : float
        Privacy parameters of the Tulap noise (or give ``noise``).
    alpha : float
        Level of the test, in (0, 1).
    alternative : {"two-sided", "greater", "less"}
        Default "two-sided", as in scipy.stats.
    noise : frozen distribution or TradeoffFunction, optional
        As in :func:`~invariantdp.inference.ump_binomial_test`.

    Returns
    -------
    float or numpy.ndarray
        The rejection probability; ``alpha`` at ``p = null_p`` for the
        one-sided tests (exact size).

    References
    ----------
    Awan & Slavkovic (2018), "Differentially private uniformly most powerful
    tests for binomial data", Theorem 3.2 (the test) and Section 5 (power).

    Examples
    --------
    >>> round(float(ump_binomial_power(200, 0.6, null_p=0.5, epsilon=1.0)), 3)
    0.797
    >>> one = ump_binomial_power(200, 0.6, null_p=0.5, epsilon=1.0, alternative="greater")
    >>> round(float(one), 3)
    0.875
    """
    n = check_positive_int("n", n)
    if n > MAX_N:
        raise InvariantDPError(f"`n` ({n}) must be <= {MAX_N:.0e}.")
    p0 = check_in_open_unit("null_p", null_p)
    alpha = check_in_open_unit("alpha", alpha)
    alternative = check_alternative(alternative)
    ps = np.asarray(p, dtype=float)
    if np.any(~((ps > 0) & (ps < 1))):
        raise InvariantDPError(f"`p` ({p!r}) must be in (0, 1).")
    noise = resolve_noise(epsilon, delta, noise)
    crit = _binomial_critical(n, p0, noise, alternative, float(np.log(alpha)))

    def power(pi):
        lp = float(special.logit(pi))
        if alternative == "two-sided":
            return two_sided_tails(crit, n, p0, lp, noise)
        return float(np.exp(_log_p_one_sided(crit, n, lp, noise, alternative)))

    out = np.vectorize(power, otypes=[float])(ps)
    return float(out) if out.ndim == 0 else out


def _smallest_n(power_at, target: float, max_n: int, name: str) -> int:
    """The smallest ``n`` in ``[1, max_n]`` with ``power_at(n) >= target`` (power rises in n)."""
    lo, hi = 0, 1  # power_at(lo) < target (lo == 0: nothing evaluated yet)
    while power_at(hi) < target:
        if hi >= max_n:
            raise InvariantDPError(
                f"no `n` up to `max_n` ({max_n}) reaches power {target:g} for {name}; the "
                "effect may be too small for this privacy budget."
            )
        lo, hi = hi, min(2 * hi, max_n)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if power_at(mid) >= target:
            hi = mid
        else:
            lo = mid
    return hi


def ump_binomial_sample_size(
    p,
    *,
    null_p,
    power=0.8,
    epsilon=None,
    delta=0.0,
    alpha=0.05,
    alternative="two-sided",
    noise=None,
    max_n=10**7,
) -> int:
    """The smallest number of trials at which the DP binomial test reaches ``power`` at ``p``.

    Parameters are those of :func:`ump_binomial_power`, with ``power`` the
    target in (0, 1) and ``max_n`` the largest ``n`` searched.

    Returns
    -------
    int

    References
    ----------
    Awan & Slavkovic (2018), "Differentially private uniformly most powerful
    tests for binomial data", Theorem 3.2 (the test) and Section 5 (power).

    Examples
    --------
    >>> ump_binomial_sample_size(0.6, null_p=0.5, epsilon=0.1, power=0.8)
    500
    """
    target = check_in_open_unit("power", power)
    max_n = check_positive_int("max_n", max_n)
    check_in_open_unit("p", p)

    def power_at(n):
        return ump_binomial_power(
            n,
            p,
            null_p=null_p,
            epsilon=epsilon,
            delta=delta,
            alpha=alpha,
            alternative=alternative,
            noise=noise,
        )

    return _smallest_n(power_at, target, max_n, f"p = {p:g} against {null_p:g}")


def umpu_odds_ratio_sample_size(
    odds_ratio,
    *,
    row_share,
    column_share,
    power=0.8,
    null_odds_ratio=1.0,
    epsilon=None,
    delta=0.0,
    alpha=0.05,
    alternative="two-sided",
    noise=None,
    max_n=10**7,
) -> int:
    """The smallest table size at which the semi-DP UMPU odds-ratio test reaches ``power``.

    The design fixes the shares of the first row and first column; a table of
    ``n`` records has margins ``(round(n row_share), n - ..., round(n
    column_share), n - ...)``, and the power is
    :func:`~invariantdp.inference.umpu_odds_ratio_power` at ``odds_ratio``.

    Parameters
    ----------
    odds_ratio : float
        The odds ratio of the alternative.
    row_share, column_share : float
        Shares of the first row and the first column, in (0, 1).
    power : float
        Target power, in (0, 1).
    null_odds_ratio, epsilon, delta, alpha, alternative, noise
        As in :func:`~invariantdp.inference.umpu_odds_ratio_power`.
    max_n : int
        Largest table size searched.

    Returns
    -------
    int

    References
    ----------
    Cho & Awan, Theorem 37 (the test) and its power function.

    Examples
    --------
    >>> umpu_odds_ratio_sample_size(2.0, row_share=0.5, column_share=0.5, epsilon=1.0)
    292
    """
    target = check_in_open_unit("power", power)
    max_n = check_positive_int("max_n", max_n)
    r = check_in_open_unit("row_share", row_share)
    c = check_in_open_unit("column_share", column_share)
    check_positive("odds_ratio", odds_ratio)

    def power_at(n):
        if n < 2:
            return 0.0
        t1, c1 = min(max(round(n * r), 1), n - 1), min(max(round(n * c), 1), n - 1)
        return float(
            umpu_odds_ratio_power(
                (t1, n - t1, c1, n - c1),
                odds_ratio=odds_ratio,
                null_odds_ratio=null_odds_ratio,
                epsilon=epsilon,
                delta=delta,
                alpha=alpha,
                alternative=alternative,
                noise=noise,
            )
        )

    return _smallest_n(power_at, target, max_n, f"odds ratio {odds_ratio:g}")

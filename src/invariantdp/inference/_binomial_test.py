"""The DP uniformly most powerful test for a binomial proportion (Awan & Slavkovic 2018).

Naming convention of the tests in :mod:`invariantdp.inference`: the value of
the parameter under the null hypothesis is ``null_<parameter>``
(``null_p`` here, ``null_odds_ratio`` for the odds-ratio test), in the
arguments and in the result; a power function takes the alternative under
the bare parameter name.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
from scipy import optimize, special

from .._deprecation import renamed_attribute, renamed_keywords
from .._results import (
    ConfidenceInterval,
    Summary,
    cached_interval,
    format_table,
    hypothesis_test_rows,
)
from .._validation import (
    InvariantDPError,
    check_alternative,
    check_in_open_unit,
    check_positive_int,
    check_real,
)
from ..families import NoiseTails
from ..release import Release
from ._logconcave_sums import Binomial
from ._noise import (
    check_estimable,
    log_point_tail,
    log_tail,
    release_tails,
    resolve_noise,
    solve_monotone,
    warn_if_impossible,
)
from ._tidy import TidyResult

__all__ = ["BinomialTestResult", "ump_binomial_test"]

#: largest number of trials accepted (counts up to 1e8 are tested)
MAX_N = 5 * 10**8


def _log_p_one_sided(z: float, n: int, logit_p: float, noise: NoiseTails, side: str) -> float:
    """``log E F(X - z)`` ("greater") or ``log E F(z - X)`` ("less"), X ~ Bin(n, p)."""
    if np.isinf(logit_p):
        return log_point_tail(noise, 0 if logit_p < 0 else n, z, side)
    return log_tail(noise, Binomial(n, float(special.expit(logit_p))), z, side)


def two_sided_tails(t, n, p0, lp, noise) -> float:
    """binomialDP's two-sided p-value at distance ``t`` from ``n p0``: the right tail at
    ``n p0 + t`` plus the left tail at ``n p0 - t`` (capped at 1), under logit ``lp``."""
    right = np.exp(_log_p_one_sided(n * p0 + t, n, lp, noise, "greater"))
    left = np.exp(_log_p_one_sided(n * p0 - t, n, lp, noise, "less"))
    return float(min(1.0, right + left))


def _pvalue(z, n, p0, noise, alternative) -> float:
    lp = float(special.logit(p0))
    if alternative == "two-sided":
        return two_sided_tails(abs(z - n * p0), n, p0, lp, noise)
    return float(np.exp(_log_p_one_sided(z, n, lp, noise, alternative)))


def _solve_p(z, n, noise, side, target) -> float:
    """The proportion at which the one-sided p-value equals ``target``."""
    log_t = np.log(target)

    def g(theta):
        return _log_p_one_sided(z, n, theta, noise, side) - log_t

    return float(special.expit(solve_monotone(g, side == "greater", xtol=1e-13)))


def _two_sided_interval(z, n, noise, alpha) -> ConfidenceInterval:
    """``{p : two-sided p-value > alpha}``, split at the proportion ``z / n``."""
    eps = 1e-12
    centre = float(np.clip(z / n, eps, 1.0 - eps))

    def g(theta):
        return _pvalue(z, n, float(special.expit(theta)), noise, "two-sided") - alpha

    c = float(special.logit(centre))
    if g(c) <= 0.0:  # even the best-supported proportion is rejected
        return ConfidenceInterval(centre, centre)
    ends = []
    for direction in (-1.0, 1.0):
        step, far = 1.0, c + direction
        while g(far) > 0.0 and abs(far) < 50.0:
            step *= 2.0
            far = c + direction * step
        if g(far) > 0.0:
            ends.append(0.0 if direction < 0 else 1.0)
            continue
        root = optimize.brentq(g, min(c, far), max(c, far), xtol=1e-13, rtol=1e-13)
        ends.append(float(special.expit(root)))
    return ConfidenceInterval(ends[0], ends[1])


@dataclass(frozen=True)
class BinomialTestResult(TidyResult):
    """Result of :func:`ump_binomial_test`.

    Attributes
    ----------
    statistic : float
        The released ``Z = X + N``.
    n : int
        Number of trials.
    null_p : float
        Null proportion ``p0`` (``p0`` is a deprecated alias).
    pvalue : float
    alternative : str
    epsilon, delta : float or None
    noise : str
    method : str
    estimate : float
        Median-unbiased estimate of the proportion (computed on first access).

    See Also
    --------
    scipy.stats._result_classes.BinomTestResult : the non-private counterpart.

    References
    ----------
    Awan, J. and Slavkovic, A. (2018). "Differentially private uniformly most
    powerful tests for binomial data", NeurIPS 31 (the test, its p-value and
    the interval that inverts it).

    Examples
    --------
    >>> from invariantdp import ump_binomial_test
    >>> res = ump_binomial_test(31.4, 50, 0.4, epsilon=1.0)
    >>> res.alternative, round(res.pvalue, 4), round(res.estimate, 3)
    ('two-sided', 0.0024, 0.627)
    >>> ci = res.confidence_interval(0.95)
    >>> round(ci.low, 3), round(ci.high, 3)
    (0.48, 0.758)
    >>> sorted(res.to_dict())[:3]
    ['alternative', 'confidence_interval', 'confidence_level']
    """

    statistic: float
    n: int
    null_p: float
    pvalue: float
    alternative: str
    epsilon: float | None
    delta: float | None
    noise: str
    method: str = "DP UMP binomial test (Awan & Slavkovic 2018)"
    _noise: NoiseTails = field(default=None, repr=False, compare=False)

    p0 = renamed_attribute("p0", "null_p", "BinomialTestResult")

    @cached_interval
    def confidence_interval(self, confidence_level=0.95) -> ConfidenceInterval:
        """Confidence interval for the proportion by inverting the p-value.

        One-sided alternatives give one-sided intervals (``[low, 1]`` for
        "greater"); "two-sided" inverts the two-sided p-value of binomialDP,
        ``{p : pvalue(p) > 1 - confidence_level}``.
        """
        alpha = 1.0 - confidence_level  # checked by @cached_interval
        z, n, nz = self.statistic, self.n, self._noise
        if self.alternative == "greater":
            return ConfidenceInterval(_solve_p(z, n, nz, "greater", alpha), 1.0)
        if self.alternative == "less":
            return ConfidenceInterval(0.0, _solve_p(z, n, nz, "less", alpha))
        return _two_sided_interval(z, n, nz, alpha)

    @cached_property
    def estimate(self) -> float:
        """Median-unbiased estimate: the proportion where the "greater" p-value is 1/2.

        Raises :class:`~invariantdp.exceptions.InvariantDPError` when the
        p-value varies by less than 1e-6 over all proportions (epsilon below
        ~1e-6 / n), where that crossing is lost in rounding.
        """
        z, n, nz = self.statistic, self.n, self._noise
        ends = [np.exp(_log_p_one_sided(z, n, lp, nz, "greater")) for lp in (-np.inf, np.inf)]
        check_estimable(*ends, nz)
        return _solve_p(z, n, nz, "greater", 0.5)

    def summary(self, confidence_level=0.95) -> Summary:
        rows = [
            ("released statistic Z", self.statistic),
            ("trials n", self.n),
            ("null proportion p0", self.null_p),
            ("noise", self.noise),
            *hypothesis_test_rows(self, confidence_level, "estimate (median-unbiased)"),
        ]
        return format_table(self.method, rows)

    def __str__(self) -> str:
        return str(self.summary())


@renamed_keywords(p0="null_p")
def ump_binomial_test(
    statistic, n, null_p, *, epsilon=None, delta=0.0, alternative="two-sided", noise=None
) -> BinomialTestResult:
    r"""Differentially private UMP test for a binomial proportion.

    ``X ~ Binomial(n, p)`` is released as ``Z = X + N`` with Tulap noise
    ``N ~ Tulap(0, exp(-epsilon), q)``.  The p-value of ``H0: p <= p0``
    against ``p > p0`` is

    .. math:: p = E_{X \sim \mathrm{Bin}(n, p_0)}\, F(X - Z),

    which is a post-processing of ``Z`` and the p-value of the uniformly
    most powerful (epsilon, delta)-DP test (Awan & Slavkovic 2018, Thm 4.5;
    Cho & Awan, Lemma 47 form 3).  That one-sided test is
    ``alternative="greater"``; the default, ``"two-sided"``, is the
    binomialDP two-sided p-value described below.

    Parameters
    ----------
    statistic : float or Release
        The released ``Z``, or the :class:`~invariantdp.Release` of a count
        made by the Tulap mechanism (:func:`~invariantdp.mechanisms.tulap_mechanism`
        with sensitivity 1); then the noise law comes from the release and
        ``epsilon``, ``delta`` and ``noise`` must not be given.
    n : int
        Number of trials, ``n >= 1``.
    null_p : float
        Null proportion ``p0`` in (0, 1).  (Formerly ``p0``, deprecated.)
    epsilon, delta : float
        Privacy parameters of the Tulap noise.
    alternative : {"two-sided", "greater", "less"}
        Default "two-sided", as in :func:`scipy.stats.binomtest`.
        "greater" is the UMP test of ``p <= p0`` against ``p > p0`` above;
        "two-sided" follows the R package binomialDP: with
        ``T = |Z - n p0|``, the right-tail p-value at ``n p0 + T`` plus the
        left-tail p-value at ``n p0 - T``.
    noise : frozen distribution or TradeoffFunction, optional
        The noise law instead of ``epsilon``/``delta``, e.g. ``tulap(b, q)``
        to give Tulap's ``(b, q)`` directly.

    Returns
    -------
    BinomialTestResult

    References
    ----------
    Awan, J. and Slavkovic, A. (2018). "Differentially private uniformly most
    powerful tests for binomial data", NeurIPS 31.

    Examples
    --------
    >>> from invariantdp import ump_binomial_test
    >>> res = ump_binomial_test(3, 10, 0.5, epsilon=0.5, delta=1e-8)
    >>> round(res.pvalue, 10)  # two-sided
    0.4767584937
    >>> one = ump_binomial_test(3, 10, 0.5, epsilon=0.5, delta=1e-8, alternative="greater")
    >>> round(one.pvalue, 10)
    0.7616207531

    From a release of the count (the noise law travels with it):

    >>> from invariantdp.mechanisms import tulap_mechanism
    >>> release = tulap_mechanism(3, epsilon=0.5, delta=1e-8, rng=1)
    >>> res = ump_binomial_test(release, 10, 0.5)
    >>> res.epsilon, res.statistic == float(release.value)
    (0.5, True)
    """
    if isinstance(statistic, Release):
        if statistic.value.size != 1:
            raise InvariantDPError(
                f"the Release must hold one count (mechanism {statistic.mechanism!r} released "
                f"shape {statistic.value.shape})."
            )
        tn = release_tails(statistic, epsilon, delta, noise, "UMP binomial test")
        statistic = float(statistic.value.reshape(()))
    else:
        tn = None
    z = check_real("statistic", statistic)
    if not np.isfinite(z):
        raise InvariantDPError(f"`statistic` ({z}) must be finite.")
    n = check_positive_int("n", n)
    if n > MAX_N:
        raise InvariantDPError(
            f"`n` ({n}) must be <= {MAX_N:.0e}: the exact p-value is not supported for this "
            "many trials (its summation window would not fit in memory)."
        )
    p0 = check_in_open_unit("null_p", null_p)
    alternative = check_alternative(alternative)
    if tn is None:
        tn = resolve_noise(epsilon, delta, noise)
    warn_if_impossible(z, 0, n, tn, "count of n trials")
    return BinomialTestResult(
        statistic=z,
        n=n,
        null_p=p0,
        pvalue=_pvalue(z, n, p0, tn, alternative),
        alternative=alternative,
        epsilon=tn.epsilon,
        delta=tn.delta,
        noise=tn.description,
        _noise=tn,
    )

r"""How many releases an audit needs to catch a given violation with a given power.

:func:`audit_sample_size` computes, from the exact binomial laws of the two
error counts, the power of the Clopper-Pearson threshold tests of
:func:`~invariantdp.audit.audit_samples` against a mechanism whose true
tradeoff curve lies below the claimed one; :func:`timing_sample_size` the
power of one event test of :func:`~invariantdp.audit.audit_timing`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

from .._results import Summary, format_table
from .._validation import InvariantDPError, check_in_open_unit, check_positive_int
from ..privacy import as_tradeoff
from ._threshold import _cp_upper


@dataclass(frozen=True)
class AuditSampleSize:
    r"""Releases per input an audit needs to catch a violation, and why.

    Attributes
    ----------
    n : int
        Releases per input.
    power : float
        Probability (a lower bound, see :func:`audit_sample_size`) that the
        most informative single test is significant with ``n`` releases.
    type1 : float
        Type I error of that test: where the claimed and true curves are
        easiest to tell apart (e.g. about 2e-4, the far tail, for an
        (epsilon, delta) claim at delta = 1e-5).
    type2_true, type2_claimed : float
        The true type II error there, and the least one the claim allows;
        the gap is ``type2_claimed - type2_true``.
    type1_bound, type2_bound : float
        Clopper-Pearson upper bounds on the two errors at the expected counts
        with ``n`` releases, at the per-test level.
    largest_gap, largest_gap_type1 : float
        The largest gap ``f_claimed - f_true`` over all type I errors, and
        where it is (often not where the test is most informative).
    n_tests : int
        The Bonferroni factor assumed.
    significance : float
        Family-wise level of the audit.

    References
    ----------
    Jagielski, Ullman & Oprea (2020), "Auditing differentially private
    machine learning", NeurIPS 33 (Clopper-Pearson bounds from threshold
    tests); Dong, Roth & Su (2022), JRSS-B 84(1) (tradeoff functions).

    Examples
    --------
    >>> from invariantdp.privacy import gaussian_tradeoff
    >>> size = audit_sample_size(gaussian_tradeoff(0.5), gaussian_tradeoff(1.0))
    >>> size.n > 0, size.type2_true < size.type2_claimed
    (True, True)
    """

    n: int
    power: float
    type1: float
    type2_true: float
    type2_claimed: float
    type1_bound: float
    type2_bound: float
    largest_gap: float
    largest_gap_type1: float
    n_tests: int
    significance: float

    def summary(self) -> Summary:
        r"""A printable table of the sample size and the test it rests on."""
        rows = [
            ("releases per input", self.n),
            ("power", self.power),
            ("most informative test: type I", self.type1),
            ("type II: true, claimed", f"{self.type2_true:.4g}, {self.type2_claimed:.4g}"),
            ("Clopper-Pearson bounds at n", f"{self.type1_bound:.4g}, {self.type2_bound:.4g}"),
            ("largest gap (at type I)", f"{self.largest_gap:.4g} ({self.largest_gap_type1:.4g})"),
            ("Bonferroni factor, significance", f"{self.n_tests}, {self.significance:g}"),
        ]
        return format_table("Audit sample size", rows)


_K_POINTS = 81


def _single_test_power(fc, n: int, a: np.ndarray, b: np.ndarray, level: float) -> np.ndarray:
    r"""Lower bound on ``P(f_c(1 - U1) - U2 > 0)`` for ``K1 ~ Bin(n, a)``, ``K2 ~ Bin(n, b)``.

    ``U1, U2`` are the Clopper-Pearson upper bounds (at ``level / 2`` each)
    of :func:`audit_samples`.  For each ``K1`` the condition holds iff
    ``K2 <= k2max``, the largest ``k`` with ``P(Bin(n, y) <= k) < level / 2``
    where ``y = f_c(1 - U1)`` (the Clopper-Pearson bound is below ``y``
    exactly then).  ``K1`` is integrated over ``_K_POINTS`` intervals
    covering ``n a +- 6 sd``, each at its largest ``K1`` (the worst case, as
    the probability decreases in ``K1``), so the result is a lower bound.
    """
    a = a[:, None]
    sd = np.sqrt(n * a * (1.0 - a))
    lo = np.clip(np.floor(n * a - 6.0 * sd) - 1.0, 0.0, n)
    hi = np.clip(np.ceil(n * a + 6.0 * sd) + 1.0, 0.0, n)
    edges = np.round(lo + (hi + 1.0 - lo) * np.linspace(0.0, 1.0, _K_POINTS + 1)[None, :])
    right = edges[:, 1:] - 1.0  # interval i is [edges_i, edges_{i+1} - 1]
    mass = stats.binom.cdf(right, n, a) - stats.binom.cdf(edges[:, :-1] - 1.0, n, a)
    k1 = np.clip(right, 0.0, n)
    u1 = _cp_upper(k1, n, level / 2)
    y = np.asarray(fc(1.0 - u1), dtype=float)
    k2max = stats.binom.ppf(level / 2, n, np.clip(y, 0.0, 1.0)) - 1.0
    g = np.where(y > 0, stats.binom.cdf(k2max, n, b[:, None]), 0.0)
    return np.sum(np.clip(mass, 0.0, 1.0) * g, axis=1)


def _smallest_n(power_at, power: float, max_n: int, unit: str) -> int:
    """The smallest ``n`` (to about 1%) with ``power_at(n) >= power``: doubling, then bisection."""
    hi = 32
    while power_at(hi) < power:
        if hi >= max_n:
            raise InvariantDPError(
                f"`max_n` ({max_n}) {unit} do not reach `power` ({power}): the best test has "
                f"power {power_at(max_n):.3g} there."
            )
        hi = min(hi * 2, max_n)
    lo = hi // 2
    while hi - lo > max(1, hi // 100):
        mid = (lo + hi) // 2
        if power_at(mid) >= power:
            hi = mid
        else:
            lo = mid
    return hi


def audit_sample_size(
    claimed, true, *, power=0.9, significance=0.01, n_tests=4 * 400 * 3, max_n=10**9
) -> AuditSampleSize:
    r"""Releases per input an audit needs to catch a mechanism whose curve is ``true``.

    The threshold tests of an audit on the likelihood ratio statistic of the
    two release laws (Neyman-Pearson: for Laplace, Gaussian and Tulap noise
    on a scalar, the release itself) trace the true tradeoff curve: the test
    with type I error ``a`` has type II error ``true(1 - a)``.  It shows a
    violation when the Clopper-Pearson upper bounds ``U1, U2`` of its two
    error rates, at the per-test level ``significance / n_tests``, satisfy
    ``claimed(1 - U1) > U2``.  This function computes, from the exact
    binomial laws of the two counts, the power of each such test and returns
    the smallest ``n`` (to about 1%) at which the best of them reaches
    ``power``.  The audit runs a test close to that one (its thresholds are
    data quantiles, geometrically spaced in the tails) and many more, so
    with ``4 * max_tests <= n_tests`` its power is about this or higher
    (in simulations of the Gaussian cases below: 20 of 20 and 39 of 40
    audits failed at the computed ``n`` for a stated power of 0.9).

    Parameters
    ----------
    claimed : TradeoffFunction or callable
        The claim audited.
    true : TradeoffFunction or callable
        The mechanism's actual tradeoff curve on the audited pair, e.g.
        ``gaussian_tradeoff(1 / sigma)`` for Gaussian noise of the wrong scale.
    power : float
        Target probability of failing the audit.
    significance : float
        Family-wise level of the audit.
    n_tests : int
        Bonferroni factor: the number of tests the audit runs over all its
        statistics: ``4 * max_tests`` per threshold statistic, so 1600 for
        :func:`audit_samples` and 4800 (the default) for
        :func:`audit_mechanism` with its three statistics (the
        achievable-set tests run fewer; counting them in full is
        conservative).
    max_n : int
        Largest sample size considered.

    Returns
    -------
    AuditSampleSize

    Raises
    ------
    InvariantDPError
        When ``true`` never lies below ``claimed`` (nothing to detect), or
        when ``max_n`` releases do not reach the power.

    Notes
    -----
    The Gaussian mechanism with ``sigma = 3.19`` where ``(epsilon, delta) =
    (1, 1e-5)`` needs ``sigma = 3.7306`` (``mu = 0.268``) has true delta
    ``9.8e-5`` at epsilon = 1, ten times the claim.  Against the
    ``(1, 1e-5)`` claim the gap between the curves is confined to the far
    tail: at most ``8.8e-5`` (at type I ``4e-4``); the most informative test
    has type I error ``2e-4`` (type II ``0.99938`` true, ``0.99945``
    claimed); at ``n = 2.36e7`` per input, the size needed for 90% power
    with 1600 tests (``2.56e7`` with 4800), the Clopper-Pearson bounds at
    the per-test level exceed the two rates by ``1.3e-5`` and ``2.3e-5``.
    Against the ``mu``-GDP claim ``G_0.268`` the gap is largest mid-curve
    (0.018 at type I 0.38) and ``9.3e4`` releases suffice.  A
    violation a hundred times the claim (``sigma = 2.575``, delta ``1e-3``)
    needs ``1.26e6`` releases against the ``(1, 1e-5)`` claim.

    References
    ----------
    Jagielski, Ullman & Oprea (2020), "Auditing differentially private
    machine learning", NeurIPS 33 (Clopper-Pearson bounds from threshold
    tests); Dong, Roth & Su (2022), JRSS-B 84(1) (tradeoff functions).

    Examples
    --------
    >>> from invariantdp.audit import audit_sample_size
    >>> from invariantdp.privacy import eps_delta, gaussian_tradeoff
    >>> claim, truth = gaussian_tradeoff(0.268), gaussian_tradeoff(1 / 3.19)
    >>> size = audit_sample_size(claim, truth, n_tests=1600)
    >>> 5e4 < size.n < 2e5, round(size.type1, 1)
    (True, 0.4)
    """
    fc, ft = as_tradeoff(claimed), as_tradeoff(true)
    power = check_in_open_unit("power", power)
    significance = check_in_open_unit("significance", significance)
    n_tests = check_positive_int("n_tests", n_tests)
    max_n = check_positive_int("max_n", max_n, minimum=20)
    a = np.unique(np.concatenate([np.geomspace(1e-12, 0.5, 400), np.linspace(0.5, 1.0, 101)[:-1]]))
    gap = np.asarray(fc(1.0 - a), dtype=float) - np.asarray(ft(1.0 - a), dtype=float)
    if not np.max(gap) > 1e-15:
        raise InvariantDPError(
            f"`true` ({ft!r}) is nowhere below `claimed` ({fc!r}): there is no violation to detect."
        )
    a = a[gap > 0]
    b = np.asarray(ft(1.0 - a), dtype=float)
    level = significance / n_tests
    # coarse grid of type I errors for the search, refined around the best at the end
    coarse = np.unique(np.linspace(0, a.size - 1, min(a.size, 40)).astype(int))

    def best(n, idx):
        p = _single_test_power(fc, n, a[idx], b[idx], level)
        i = int(np.argmax(p))
        return float(p[i]), int(idx[i])

    hi = _smallest_n(lambda n: best(n, coarse)[0], power, max_n, "releases")
    p, i = best(hi, coarse)
    near = np.arange(max(i - 12, 0), min(i + 13, a.size))
    p, i = best(hi, near)
    k1, k2 = np.round(hi * a[i]), np.round(hi * b[i])
    gaps_a = np.unique(np.concatenate([np.geomspace(1e-12, 0.5, 400), np.linspace(0.5, 1.0, 101)]))
    g_all = np.asarray(fc(1.0 - gaps_a), dtype=float) - np.asarray(ft(1.0 - gaps_a), dtype=float)
    g = int(np.argmax(g_all))
    return AuditSampleSize(
        n=int(hi),
        power=p,
        type1=float(a[i]),
        type2_true=float(b[i]),
        type2_claimed=float(fc(1.0 - a[i])),
        type1_bound=float(_cp_upper(np.array([k1]), hi, level / 2)[0]),
        type2_bound=float(_cp_upper(np.array([k2]), hi, level / 2)[0]),
        largest_gap=float(g_all[g]),
        largest_gap_type1=float(gaps_a[g]),
        n_tests=n_tests,
        significance=significance,
    )


#: tests :func:`~invariantdp.audit.audit_timing` runs with distinct thresholds: every value
#: condition (5 cuts, two sides, or none) with every time condition (9 thresholds, two sides,
#: or none), less the sure event, in both orders of the inputs
TIMING_TESTS = 2 * ((2 * 5 + 1) * (2 * 9 + 1) - 1)


def timing_sample_size(
    claimed, p, p_prime, *, power=0.9, significance=0.01, n_tests=TIMING_TESTS, max_n=10**9
) -> AuditSampleSize:
    r"""Calls per input a timing audit needs to catch an event of (value, run time).

    A leak shows as an event ``E`` of the joint law with probability ``p``
    under one input and ``p_prime`` under the other (e.g. ``{value <= 0 and
    fast}``, where a sampler that runs longer for larger noise puts the
    noise-0 releases of one input and none of the other).
    :func:`~invariantdp.audit.audit_timing` tests it as "reject the second
    input when ``E``" (type I error ``p_prime``, type II ``1 - p``), with
    Clopper-Pearson bounds at the per-test level ``significance / n_tests``;
    this is the smallest ``n`` (to about 1%) at which that test is
    significant against ``claimed`` with probability ``power``, computed
    from the exact binomial laws of the two counts.  The audit finds ``E``
    only if its thresholds, fixed on held-out calls, come close to it.

    Parameters
    ----------
    claimed : TradeoffFunction or callable
        The claim audited, e.g. ``eps_delta(1.0)``.
    p, p_prime : float
        The event's probability under the input it favours and under the other.
    power, significance : float
        Target power and family-wise level.
    n_tests : int
        Bonferroni factor: :data:`TIMING_TESTS` (416) for the default audit.
    max_n : int
        Largest sample size considered.

    Returns
    -------
    AuditSampleSize

    Raises
    ------
    InvariantDPError
        If the event does not violate the claim (``claimed(1 - p_prime) <= 1 - p``)
        or ``max_n`` calls do not reach the power.

    References
    ----------
    Jagielski, Ullman & Oprea (2020), NeurIPS 33; Jin, McMurtry, Rubinstein
    & Ohrimenko (2022), IEEE S&P.

    Examples
    --------
    The package's old discrete Laplace sampler at epsilon = 1 (512 and 1 of
    20,000 calls fell in the event):

    >>> from invariantdp.audit import timing_sample_size
    >>> from invariantdp.privacy import eps_delta
    >>> size = timing_sample_size(eps_delta(1.0), 512 / 20_000, 1 / 20_000)
    >>> size.n < 20_000
    True
    """
    fc = as_tradeoff(claimed)
    power = check_in_open_unit("power", power)
    significance = check_in_open_unit("significance", significance)
    n_tests = check_positive_int("n_tests", n_tests)
    max_n = check_positive_int("max_n", max_n, minimum=20)
    p = check_in_open_unit("p", p)
    p_prime = float(check_in_open_unit("p_prime", p_prime))
    a, b = np.array([p_prime]), np.array([1.0 - p])
    gap = float(fc(1.0 - p_prime)) - (1.0 - p)
    if not gap > 0:
        raise InvariantDPError(
            f"an event of probabilities `p` ({p}) and `p_prime` ({p_prime}) does not violate "
            f"`claimed` ({fc!r}): there is nothing to detect."
        )
    level = significance / n_tests

    def pw(n):
        return float(_single_test_power(fc, n, a, b, level)[0])

    hi = _smallest_n(pw, power, max_n, "calls")
    k1, k2 = np.round(hi * a), np.round(hi * b)
    return AuditSampleSize(
        n=int(hi),
        power=pw(hi),
        type1=p_prime,
        type2_true=1.0 - p,
        type2_claimed=float(fc(1.0 - p_prime)),
        type1_bound=float(_cp_upper(k1, hi, level / 2)[0]),
        type2_bound=float(_cp_upper(k2, hi, level / 2)[0]),
        largest_gap=gap,
        largest_gap_type1=p_prime,
        n_tests=n_tests,
        significance=significance,
    )

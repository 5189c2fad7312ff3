r"""Threshold tests of a claimed tradeoff function on a scalar statistic.

:func:`audit_samples` runs every test ``reject when s > c`` and ``reject
when s < c`` on two samples of a statistic and bounds the two error rates
with Clopper-Pearson intervals (Jagielski, Ullman & Oprea 2020); a claim
``f`` is violated when some test is significantly better than ``f`` allows
(Dong, Roth & Su 2022).  :class:`AuditResult` is the outcome of every audit
of the package.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

from .._results import Summary, format_table
from .._validation import (
    InvariantDPError,
    check_in_open_unit,
    check_positive_int,
    check_real,
)
from ..privacy import TradeoffFunction, as_tradeoff

#: The statistics :func:`audit_mechanism` runs by default, in this order.
STATISTICS = ("threshold", "lattice", "value")


@dataclass(frozen=True)
class AuditResult:
    r"""Outcome of a privacy audit.

    Attributes
    ----------
    passed : bool
        False when some test beats the claimed tradeoff function
        significantly.
    max_violation : float
        Largest point estimate of ``f(1 - type I) - type II`` over the tests
        of :attr:`statistic` (negative or near 0 for a correct claim).
    significant_violation : float
        Largest ``f(1 - type I upper bound) - type II upper bound``; positive
        means a significant violation.
    worst_type1, worst_type2 : float
        Estimated error rates of the test with the largest violation.
    n_samples : int
        Releases per input that the tests were computed from (for an
        achievable-set test, the held-out half).
    n_tests : int
        Number of threshold tests examined (summed over the statistics).
    claim : str
        The tradeoff function audited.
    significance : float
        Family-wise level of the audit.
    statistic : str
        The statistic whose tests give the largest significant violation
        (the one that decides the verdict).
    epsilon : float
        The epsilon at which :attr:`delta_lower` is reported.
    delta_lower : float
        Lower confidence bound (Clopper-Pearson, at the audit's family-wise
        level) on the delta that the mechanism needs at :attr:`epsilon`:
        the largest ``P(M(x') in S) - e^epsilon P(M(x) in S)`` over the
        rejection regions ``S`` tested, with the first probability at its
        lower and the second at its upper bound; 0 when no test gives
        evidence.  An output class impossible under ``x`` but of
        probability ``p`` under ``x'`` gives ``delta_lower`` close to ``p``.
    delta_claimed : float
        The delta that the claim allows at :attr:`epsilon`,
        :math:`\sup_S P(S') - e^\epsilon P(S)` over the claimed curve.
    components : tuple of AuditResult
        With several statistics, the result of each one (each at its share
        of the significance); empty for a single statistic.

    References
    ----------
    Dong, Roth & Su (2022), "Gaussian differential privacy", JRSS-B 84(1)
    (tradeoff functions); Jagielski, Ullman & Oprea (2020), "Auditing
    differentially private machine learning", NeurIPS 33 (Clopper-Pearson
    bounds from threshold tests).

    Examples
    --------
    >>> import numpy as np
    >>> from invariantdp.privacy import gaussian_tradeoff
    >>> rng = np.random.default_rng(0)
    >>> s0, s1 = rng.normal(0.0, 1.0, 20_000), rng.normal(1.0, 1.0, 20_000)
    >>> res = audit_samples(s0, s1, gaussian_tradeoff(1.0))
    >>> res.passed, res.significant_violation <= 0.0, res.n_samples
    (True, True, 20000)
    """

    passed: bool
    max_violation: float
    significant_violation: float
    worst_type1: float
    worst_type2: float
    n_samples: int
    n_tests: int
    claim: str
    significance: float
    statistic: str = "threshold"
    epsilon: float = 0.0
    delta_lower: float = 0.0
    delta_claimed: float = 0.0
    components: tuple = ()

    def summary(self) -> Summary:
        r"""A printable table: the verdict, the deciding test, and each statistic's result."""
        rows = [
            ("claim", self.claim),
            ("releases per input", self.n_samples),
            ("threshold tests", self.n_tests),
            ("deciding statistic", self.statistic),
            ("largest violation f(1-a)-b (estimate)", self.max_violation),
            ("largest significant violation", self.significant_violation),
            ("worst test: type I, type II", f"{self.worst_type1:.4g}, {self.worst_type2:.4g}"),
            (
                f"delta at epsilon={self.epsilon:.4g}: lower bound, claimed",
                f"{self.delta_lower:.4g}, {self.delta_claimed:.4g}",
            ),
            ("family-wise significance", self.significance),
            ("verdict", "pass" if self.passed else "FAIL: claim violated"),
        ]
        notes = [
            f"  {c.statistic}: {'pass' if c.passed else 'FAIL'} (significant violation "
            f"{c.significant_violation:.4g}, delta lower bound {c.delta_lower:.4g})"
            for c in self.components
        ]
        return format_table("Empirical privacy audit", rows, notes)


def _cp_upper(k: np.ndarray, n: int, level: float) -> np.ndarray:
    r"""One-sided Clopper-Pearson upper bounds for ``k`` successes in ``n``."""
    k = np.asarray(k, dtype=float)
    out = np.ones_like(k)
    ok = k < n
    out[ok] = stats.beta.ppf(1.0 - level, k[ok] + 1.0, n - k[ok])
    return out


def _tail_positions(n: int, count: int) -> np.ndarray:
    r"""About ``count`` ranks in ``[0, n)``: evenly spaced, plus geometric in both tails.

    The far tails matter for (epsilon, delta) claims: a Gaussian mechanism
    whose delta is too large differs from its claim only at type I errors
    near delta (e.g. 1e-4), far beyond the reach of evenly spaced quantiles.
    """
    even = np.linspace(0, n - 1, max(count // 2, 2))
    tail = np.geomspace(1, max(n / 2.0, 1.0), max(count // 4, 1))
    pos = np.concatenate([even, tail - 1.0, n - tail])
    return np.unique(np.clip(np.round(pos), 0, n - 1).astype(np.int64))


def _select_cuts(s0: np.ndarray, s1: np.ndarray, max_tests: int) -> np.ndarray:
    r"""At most ``max_tests`` thresholds from the two sorted samples.

    All distinct values when there are few (discrete statistics, where ties
    make the achievable tests); otherwise order statistics of each sample at
    the ranks of :func:`_tail_positions`.
    """
    distinct = np.count_nonzero(s0[1:] != s0[:-1]) + np.count_nonzero(s1[1:] != s1[:-1]) + 2
    if distinct <= max_tests:
        return np.union1d(s0, s1)
    pos = _tail_positions(s0.size, max_tests // 2)
    cuts = np.union1d(s0[pos], s1[pos])
    if cuts.size > max_tests:  # only for a tiny max_tests: keep the extremes
        cuts = cuts[np.unique(np.linspace(0, cuts.size - 1, max_tests).astype(np.int64))]
    return cuts


def _claim_epsilon(f: TradeoffFunction, epsilon) -> float:
    if epsilon is None:
        return float(getattr(f, "epsilon", 0.0))
    eps = check_real("epsilon", epsilon)
    if not 0.0 <= eps < np.inf:
        raise InvariantDPError(f"`epsilon` ({eps}) must be finite and >= 0.")
    return eps


def _claimed_delta(f: TradeoffFunction, eps: float) -> float:
    r"""``sup_a 1 - f(1 - a) - e^eps a``: the delta of ``f`` at ``eps`` (on a grid)."""
    if getattr(f, "epsilon", None) == eps and hasattr(f, "delta"):
        return float(f.delta)
    a = np.concatenate([[0.0], np.geomspace(1e-15, 1.0, 4000)])
    with np.errstate(over="ignore"):
        d = 1.0 - f(1.0 - a) - np.exp(eps) * a
    return float(max(np.max(d), 0.0))


def _as_statistic(name: str, value) -> np.ndarray:
    if np.iscomplexobj(value):
        raise TypeError(f"`{name}` must be real, got complex values.")
    return np.asarray(value, dtype=float).ravel()


def audit_samples(
    sample_x, sample_x_prime, claimed, *, significance=0.01, max_tests=400, epsilon=None
) -> AuditResult:
    r"""Audit a claim from releases already drawn from two neighbouring inputs.

    Every test ``reject when s > c`` and ``reject when s < c`` is run, for
    thresholds ``c`` among the pooled values (evenly spaced quantiles plus
    geometrically spaced far-tail order statistics), in both orders of the
    inputs; the error rates are bounded by one-sided Clopper-Pearson bounds
    at a Bonferroni-corrected level.

    Parameters
    ----------
    sample_x, sample_x_prime : array_like, shape (n,)
        A scalar statistic of ``n`` independent releases from each input.
    claimed : TradeoffFunction or callable
        The tradeoff function ``f`` the mechanism claims (paper convention:
        ``f(alpha)`` is the least type II error at type I error ``1 - alpha``).
    significance : float
        Family-wise probability of failing a correct mechanism.
    max_tests : int
        At most this many thresholds (so at most ``4 * max_tests`` tests),
        which keeps the Bonferroni correction mild.
    epsilon : float, optional
        Where to report the empirical delta lower bound; by default the
        claim's epsilon (for :func:`~invariantdp.privacy.eps_delta`), else 0.

    Returns
    -------
    AuditResult

    References
    ----------
    Jagielski, Ullman & Oprea (2020), "Auditing differentially private
    machine learning", NeurIPS 33 (Clopper-Pearson bounds from threshold
    tests); Dong, Roth & Su (2022), JRSS-B 84(1) (tradeoff functions).

    Examples
    --------
    Gaussian releases with ``mu = 1`` audited against the ``G_1`` claim and
    against the stronger (wrong) claim ``G_0.8``:

    >>> import numpy as np
    >>> from invariantdp.audit import audit_samples
    >>> from invariantdp.privacy import gaussian_tradeoff
    >>> rng = np.random.default_rng(0)
    >>> s0, s1 = rng.normal(0.0, 1.0, 40_000), rng.normal(1.0, 1.0, 40_000)
    >>> audit_samples(s0, s1, gaussian_tradeoff(1.0)).passed
    True
    >>> audit_samples(s0, s1, gaussian_tradeoff(0.8)).passed
    False
    """
    f = as_tradeoff(claimed)
    significance = check_in_open_unit("significance", significance)
    max_tests = check_positive_int("max_tests", max_tests, minimum=2)
    eps = _claim_epsilon(f, epsilon)
    s0 = _as_statistic("sample_x", sample_x)
    s1 = _as_statistic("sample_x_prime", sample_x_prime)
    if s0.size != s1.size or s0.size < 10:
        raise InvariantDPError(
            "`sample_x` and `sample_x_prime` must have the same size, at least 10 "
            f"(got {s0.size} and {s1.size})."
        )
    if not (np.all(np.isfinite(s0)) and np.all(np.isfinite(s1))):
        raise InvariantDPError("the audited statistics must be finite.")
    n = s0.size
    s0, s1 = np.sort(s0), np.sort(s1)
    cuts = _select_cuts(s0, s1, max_tests)
    k1s, k2s = [], []
    # both orders: the claim is symmetric in the two inputs
    for a, b in ((s0, s1), (s1, s0)):
        # "reject H0 (input of a) when s > c": type I = #{a > c}, type II = #{b <= c}
        k1s.append(n - np.searchsorted(a, cuts, side="right"))
        k2s.append(np.searchsorted(b, cuts, side="right"))
        # "reject when s < c": type I = #{a < c}, type II = #{b >= c}
        k1s.append(np.searchsorted(a, cuts, side="left"))
        k2s.append(n - np.searchsorted(b, cuts, side="left"))
    k1, k2 = np.concatenate(k1s), np.concatenate(k2s)
    level = significance / k1.size  # Bonferroni over tests; one tail each
    type1, type2 = k1 / n, k2 / n
    violation = f(1.0 - type1) - type2
    # conservative: the largest plausible type I (lower f) and type II
    u1, u2 = _cp_upper(k1, n, level / 2), _cp_upper(k2, n, level / 2)
    sig = f(1.0 - u1) - u2
    with np.errstate(over="ignore"):
        delta = 1.0 - u2 - np.exp(eps) * u1
    worst = int(np.argmax(violation))
    return AuditResult(
        passed=bool(np.max(sig) <= 0.0),
        max_violation=float(violation[worst]),
        significant_violation=float(np.max(sig)),
        worst_type1=float(type1[worst]),
        worst_type2=float(type2[worst]),
        n_samples=n,
        n_tests=int(k1.size),
        claim=repr(f),
        significance=significance,
        statistic="threshold",
        epsilon=eps,
        delta_lower=float(max(np.max(delta), 0.0)),
        delta_claimed=_claimed_delta(f, eps),
    )

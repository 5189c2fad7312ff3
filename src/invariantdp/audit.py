"""Empirical privacy audits: check a mechanism's claim by hypothesis testing.

A mechanism that is f-DP cannot be told apart from neighbouring inputs more
easily than ``f`` allows: for every test of ``M(x)`` against ``M(x')`` with
type I error ``1 - alpha`` the type II error is at least ``f(alpha)``
(Dong, Roth & Su 2022; Cho & Awan, Sec. 2.2).  The audit draws releases from
both inputs, runs every threshold test on a scalar statistic, bounds its two
error rates with Clopper-Pearson intervals, and reports the largest violation
of ``f``.  It passes unless some test is *significantly* better than ``f``
allows (after a Bonferroni correction over the thresholds), so a correct
mechanism passes with probability at least ``1 - significance``.

The audit does not prove privacy; it catches claims that are wrong by more
than the sampling error, e.g. a noise scale off by a factor of two.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import stats

from ._results import format_table
from ._rng import as_generator
from ._validation import InvariantDPError, check_in_open_unit, check_positive_int
from .privacy.tradeoff import TradeoffFunction, as_tradeoff

__all__ = ["AuditResult", "audit_mechanism", "audit_samples"]


@dataclass(frozen=True)
class AuditResult:
    """Outcome of a privacy audit.

    Attributes
    ----------
    passed : bool
        False when some threshold test beats the claimed tradeoff function
        significantly.
    max_violation : float
        Largest point estimate of ``f(1 - type I) - type II`` over the tests
        (negative or near 0 for a correct claim).
    significant_violation : float
        Largest ``f(1 - type I upper bound) - type II upper bound``; positive
        means a significant violation.
    worst_type1, worst_type2 : float
        Estimated error rates of the test with the largest violation.
    n_samples : int
        Releases drawn from each input.
    n_tests : int
        Number of threshold tests examined.
    claim : str
        The tradeoff function audited.
    significance : float
        Family-wise level of the audit.
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

    def summary(self) -> str:
        rows = [
            ("claim", self.claim),
            ("releases per input", self.n_samples),
            ("threshold tests", self.n_tests),
            ("largest violation f(1-a)-b (estimate)", self.max_violation),
            ("largest significant violation", self.significant_violation),
            ("worst test: type I, type II", f"{self.worst_type1:.4g}, {self.worst_type2:.4g}"),
            ("family-wise significance", self.significance),
            ("verdict", "pass" if self.passed else "FAIL: claim violated"),
        ]
        return format_table("Empirical privacy audit", rows)


def _cp_upper(k: np.ndarray, n: int, level: float) -> np.ndarray:
    """One-sided Clopper-Pearson upper bounds for ``k`` successes in ``n``."""
    k = np.asarray(k, dtype=float)
    out = np.ones_like(k)
    ok = k < n
    out[ok] = stats.beta.ppf(1.0 - level, k[ok] + 1.0, n - k[ok])
    return out


def _threshold_tests(s0: np.ndarray, s1: np.ndarray):
    """Error counts of all tests ``reject when s > c`` (and ``s < c``).

    Thresholds run over the pooled sample values, so ties in discrete
    statistics are handled by the tests that are actually achievable.
    Returns ``(type1_counts, type2_counts)`` for both directions.
    """
    s0 = np.sort(s0)
    s1 = np.sort(s1)
    cuts = np.unique(np.concatenate([s0, s1]))
    # "reject H0 (input x) when s > c": type I = #{s0 > c}, type II = #{s1 <= c}
    t1_up = s0.size - np.searchsorted(s0, cuts, side="right")
    t2_up = np.searchsorted(s1, cuts, side="right")
    # "reject when s < c": type I = #{s0 < c}, type II = #{s1 >= c}
    t1_dn = np.searchsorted(s0, cuts, side="left")
    t2_dn = s1.size - np.searchsorted(s1, cuts, side="left")
    return np.concatenate([t1_up, t1_dn]), np.concatenate([t2_up, t2_dn])


def audit_samples(
    sample_x, sample_x_prime, claimed, *, significance=0.01, max_tests=400
) -> AuditResult:
    """Audit a claim from releases already drawn from two neighbouring inputs.

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
        Thresholds are thinned to at most this many per direction (quantiles
        of the pooled sample), which keeps the Bonferroni correction mild.

    Returns
    -------
    AuditResult
    """
    f = as_tradeoff(claimed)
    significance = check_in_open_unit("significance", significance)
    s0 = np.asarray(sample_x, dtype=float).ravel()
    s1 = np.asarray(sample_x_prime, dtype=float).ravel()
    if s0.size != s1.size or s0.size < 10:
        raise InvariantDPError(
            "`sample_x` and `sample_x_prime` must have the same size, at least 10 "
            f"(got {s0.size} and {s1.size})."
        )
    if not (np.all(np.isfinite(s0)) and np.all(np.isfinite(s1))):
        raise InvariantDPError("the audited statistics must be finite.")
    n = s0.size
    results = []
    # both orders: the claim is symmetric in the two inputs
    for a, b in ((s0, s1), (s1, s0)):
        k1, k2 = _threshold_tests(a, b)
        if k1.size > 2 * max_tests:
            keep = np.unique(np.linspace(0, k1.size - 1, 2 * max_tests).astype(int))
            k1, k2 = k1[keep], k2[keep]
        results.append((k1, k2))
    k1 = np.concatenate([r[0] for r in results])
    k2 = np.concatenate([r[1] for r in results])
    level = significance / k1.size  # Bonferroni over tests; one tail each
    type1, type2 = k1 / n, k2 / n
    violation = f(1.0 - type1) - type2
    # conservative: the largest plausible type I (lower f) and type II
    sig = f(1.0 - _cp_upper(k1, n, level / 2)) - _cp_upper(k2, n, level / 2)
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
    )


def audit_mechanism(
    mechanism: Callable,
    x,
    x_prime,
    *,
    claimed=None,
    statistic: Callable | None = None,
    n_samples=20_000,
    significance=0.01,
    rng=None,
) -> AuditResult:
    """Audit a mechanism on a pair of neighbouring inputs.

    Parameters
    ----------
    mechanism : callable
        ``mechanism(data, rng)`` returning a :class:`~invariantdp.Release`
        (or an array).  Each call must draw fresh noise from ``rng``.
    x, x_prime : array_like or DataFrame
        Neighbouring inputs.  For semi-DP, take invariant-conforming data sets
        at the semi-adjacent distance, e.g. ``x`` and ``x + v`` for a worst
        vector ``v`` of the sensitivity space.
    claimed : TradeoffFunction, optional
        The claim; by default the release's own guarantee
        (``release.guarantee.tradeoff()``).
    statistic : callable, optional
        Maps a release value to a scalar.  By default the value itself for a
        scalar release, or its projection on the difference of the mean
        releases (estimated from an independent pilot sample of 10%).
    n_samples : int
        Releases drawn from each input.
    significance : float
        Family-wise probability of failing a correct mechanism.
    rng : None, int, SeedSequence or Generator

    Returns
    -------
    AuditResult

    Examples
    --------
    >>> import numpy as np
    >>> from invariantdp.audit import audit_mechanism
    >>> from invariantdp.mechanisms import odds_ratio_release
    >>> x = np.array([[12, 5], [4, 9]])
    >>> x_prime = x + np.array([[1, -1], [-1, 1]])
    >>> res = audit_mechanism(
    ...     lambda t, rng: odds_ratio_release(t, epsilon=1.0, rng=rng), x, x_prime,
    ...     n_samples=5000, rng=0)
    >>> res.passed
    True
    """
    n = check_positive_int("n_samples", n_samples, minimum=10)
    gen = as_generator(rng)

    def draw(data, count):
        vals = []
        first = None
        for _ in range(count):
            out = mechanism(data, gen)
            if first is None:
                first = out
            vals.append(np.asarray(getattr(out, "value", out), dtype=float).ravel())
        return np.array(vals), first

    v0, rel = draw(x, n)
    v1, _ = draw(x_prime, n)
    if claimed is None:
        if not hasattr(rel, "guarantee"):
            raise InvariantDPError("give `claimed`: the mechanism does not return a Release.")
        claimed = rel.guarantee.tradeoff()
    if not isinstance(claimed, TradeoffFunction):
        claimed = as_tradeoff(claimed)
    if statistic is not None:
        s0 = np.array([statistic(v) for v in v0])
        s1 = np.array([statistic(v) for v in v1])
    elif v0.shape[1] == 1:
        s0, s1 = v0[:, 0], v1[:, 0]
    else:
        pilot = max(n // 10, 10)
        direction = v1[:pilot].mean(axis=0) - v0[:pilot].mean(axis=0)
        s0, s1 = v0[pilot:] @ direction, v1[pilot:] @ direction
    return audit_samples(s0, s1, claimed, significance=significance)

r"""Empirical privacy audits: check a mechanism's claim by hypothesis testing.

A mechanism that is f-DP cannot be told apart from neighbouring inputs more
easily than ``f`` allows: for every test of ``M(x)`` against ``M(x')`` with
type I error ``1 - alpha`` the type II error is at least ``f(alpha)``
(Dong, Roth & Su 2022; Cho & Awan, Sec. 2.2).  The audit draws releases from
both inputs, runs threshold tests on statistics of the releases, bounds
their two error rates with Clopper-Pearson intervals, and reports the
largest violation of ``f``.  It passes unless some test is *significantly*
better than ``f`` allows (after a Bonferroni correction over the tests and
the statistics), so a correct mechanism passes with probability at least
``1 - significance``: every statistic of a release is a post-processing of
it, so no choice of statistic can make a correct mechanism fail more often.

Two kinds of statistics are run by :func:`audit_mechanism`:

* ``"threshold"`` -- a scalar statistic (the release itself, a projection,
  or a likelihood ratio): catches noise of the wrong *scale*.  Thresholds
  include far-tail quantiles, where an (epsilon, delta) claim is tight.
* ``"lattice"`` and ``"value"`` -- the achievable-output-set test of Mironov
  (2012), :func:`achievable_set_test`: outputs are sorted into classes by
  their low-order bits (:func:`lattice_classes`: the sign, the binade and
  the finest dyadic lattice ``2**v Z`` holding the double, or its exact bit
  pattern);
  classes that occur under one input and are impossible (or much rarer)
  under the other are found on half of the releases and tested on the
  other half.  This catches floating-point leaks that leave the *shape* of
  the noise intact, e.g. ``x + scale * (g + u)`` rounded in double
  precision.  An output with positive probability under ``x`` and none
  under ``x'`` violates epsilon-DP by a delta equal to that probability:
  :attr:`AuditResult.delta_lower` is a Clopper-Pearson lower bound on it.

The audit does not prove privacy; it catches claims that are wrong by more
than the sampling error.  :func:`audit_sample_size` computes how many
releases an audit needs to catch a given violation with a given power.

Helpers for the inputs of an audit:

* :func:`neighbour_from_space` -- for semi-DP (Cho & Awan, Def. 13), an
  invariant-conforming neighbour ``x + v`` at the semi-adjacent distance,
  with ``v`` a worst (largest-norm) vector of the sensitivity space;
* :func:`projection_statistic` and :func:`likelihood_ratio_statistic` --
  scalar statistics of multivariate releases: the projection on the
  difference of the two inputs (optimal for spherical Gaussian noise) or the
  log likelihood ratio of the noise law (optimal for any law with a density,
  by the Neyman-Pearson lemma);
* :func:`zcdp_tradeoff` -- the tradeoff function implied by rho-zCDP, to
  audit zCDP claims (the discrete Gaussian mechanism);
* ``batched=True`` in :func:`audit_mechanism` -- a sampler that returns many
  releases per call (e.g. an additive mechanism applied to ``n`` copies of a
  scalar query), which makes audits with 10^4-10^7 releases fast.

References
----------
.. [1] Mironov, I. (2012). "On significance of the least significant bits
   for differential privacy", ACM CCS, Sec. 3-5 (the achievable-output
   attack on floating-point Laplace noise, and snapping).
.. [2] Dong, J., Roth, A. and Su, W. (2022). "Gaussian differential
   privacy", JRSS-B 84(1) (tradeoff functions).
.. [3] Jagielski, M., Ullman, J. and Oprea, A. (2020). "Auditing
   differentially private machine learning", NeurIPS 33 (Clopper-Pearson
   lower bounds on epsilon and delta from threshold tests).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np
from scipy import stats

from ._results import format_table
from ._rng import as_generator
from ._validation import (
    InvariantDPError,
    check_finite_array,
    check_in_open_unit,
    check_positive,
    check_positive_int,
    check_real,
)
from .privacy.tradeoff import TradeoffFunction, as_tradeoff

__all__ = [
    "STATISTICS",
    "AuditResult",
    "AuditSampleSize",
    "achievable_set_test",
    "audit_mechanism",
    "audit_sample_size",
    "audit_samples",
    "lattice_classes",
    "likelihood_ratio_statistic",
    "neighbour_from_space",
    "projection_statistic",
    "zcdp_tradeoff",
]

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

    def summary(self) -> str:
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

    Examples
    --------
    Gaussian releases with ``mu = 1`` audited against the ``G_1`` claim and
    against the stronger (wrong) claim ``G_0.8``:

    >>> import numpy as np
    >>> from invariantdp.audit import audit_samples
    >>> from invariantdp.privacy import gaussian
    >>> rng = np.random.default_rng(0)
    >>> s0, s1 = rng.normal(0.0, 1.0, 40_000), rng.normal(1.0, 1.0, 40_000)
    >>> audit_samples(s0, s1, gaussian(1.0)).passed
    True
    >>> audit_samples(s0, s1, gaussian(0.8)).passed
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


# ---------------------------------------------------------------------------
# achievable-output-set (lattice) tests, Mironov (2012)
# ---------------------------------------------------------------------------

_CLASS_KINDS = ("lattice", "value")
_MANTISSA = (1 << 52) - 1


def _release_matrix(name: str, value) -> np.ndarray:
    if np.iscomplexobj(value):
        raise TypeError(f"`{name}` must be real, got complex values.")
    a = np.asarray(value, dtype=np.float64)
    if a.ndim == 0 or a.shape[0] == 0:
        raise InvariantDPError(f"`{name}` must hold at least one release, got shape {a.shape}.")
    return np.ascontiguousarray(a.reshape(a.shape[0], -1))


def lattice_classes(values, *, kind="lattice") -> np.ndarray:
    r"""Class of each double by its low-order bits: the output classes of Mironov's test.

    A floating-point mechanism ``fl(x + noise)`` can only produce the
    doubles that its rounding reaches from ``x``; the low-order bits of an
    output therefore carry information about ``x`` that the noise law does
    not account for (Mironov 2012).  Two class maps expose them:

    * ``kind="lattice"``: the sign of ``y``, its binade (the exponent ``e``
      with ``2**e <= |y| < 2**(e+1)``) and the largest ``v`` such that ``y``
      is a multiple of ``2**v`` (``y = m 2**v`` with ``m`` odd: the finest
      dyadic lattice holding ``y``).  E.g. an odd multiple of ``2**-53`` in
      (-1, 1), which the rounded ``2 * (g + u)`` of a rescaled Tulap
      release reaches only from even data, or a double in (0, 1/4) finer
      than ``2**-53``, which ``fl(1 + noise)`` never produces.
    * ``kind="value"``: the exact 64-bit pattern, so each double is its own
      class; for outputs on a coarse grid (integers) this is the exact
      achievable-set test.

    Parameters
    ----------
    values : array_like of float
        Releases (any shape); integers are converted to float64 (exactly up
        to 2**53).
    kind : {"lattice", "value"}

    Returns
    -------
    numpy.ndarray of int64
        One code per entry, with the shape of ``values``.  For
        ``"lattice"`` and finite nonzero ``y`` the code is
        ``sign(y) * (4096 * (E + 1) + v + 1100)``, with ``E`` the biased
        exponent field of the double (``e + 1023``; 0 for subnormals) and
        ``v`` in [-1074, 1023]; ``+0`` is 0, ``-0`` is 1, ``+inf``/``-inf``
        are 2/-2 and NaN is 3.  For ``"value"``, the bit pattern as int64.

    References
    ----------
    Mironov, I. (2012). "On significance of the least significant bits for
    differential privacy", ACM CCS, Sec. 3 (achievable outputs of
    floating-point Laplace noise).

    Examples
    --------
    ``0.75 = 3 * 2**-2`` and ``0.625 = 5 * 2**-3`` share their binade but not
    their lattice; ``2**-2 + 3 * 2**-53`` is an odd multiple of ``2**-53``:

    >>> from invariantdp.audit import lattice_classes
    >>> c = lattice_classes([0.75, 0.625, -0.75, 0.25 + 3 * 2.0**-53, 0.0])
    >>> [int(abs(k) % 4096) - 1100 for k in c[:4]]  # v
    [-2, -3, -2, -53]
    >>> [int(abs(k) // 4096) - 1024 for k in c[:4]]  # e
    [-1, -1, -1, -2]
    >>> int(c[4]), bool(c[0] == -c[2])
    (0, True)
    """
    if kind not in _CLASS_KINDS:
        raise InvariantDPError(f"`kind` ({kind!r}) must be one of {_CLASS_KINDS}.")
    if np.iscomplexobj(values):
        raise TypeError("`values` must be real, got complex values.")
    y = np.ascontiguousarray(np.asarray(values, dtype=np.float64))
    bits = y.view(np.uint64)
    if kind == "value":
        return bits.view(np.int64).copy()
    expo = ((bits >> np.uint64(52)) & np.uint64(0x7FF)).astype(np.int64)
    mant = (bits & np.uint64(_MANTISSA)).astype(np.int64)
    negative = (bits >> np.uint64(63)).astype(bool)
    normal = expo > 0
    significand = np.where(normal, mant | (1 << 52), mant)
    lowest = significand & -significand  # the lowest set bit, a power of two
    tz = np.frexp(lowest.astype(np.float64))[1].astype(np.int64) - 1  # exact
    v = np.where(normal, expo - 1075, -1074) + tz
    code = 4096 * (expo + 1) + v + 1100
    code = np.where(negative, -code, code)
    code = np.where(significand == 0, np.where(negative, 1, 0), code)
    special = expo == 0x7FF
    code = np.where(special & (mant == 0), np.where(negative, -2, 2), code)
    code = np.where(special & (mant != 0), 3, code)
    return code.astype(np.int64)


def _class_ids(A: np.ndarray, B: np.ndarray, kind: str) -> tuple[np.ndarray, np.ndarray]:
    r"""Common integer ids of the output classes of the rows of ``A`` and ``B``."""
    codes = lattice_classes(np.concatenate([A, B]), kind=kind)
    if codes.shape[1] == 1:
        _, ids = np.unique(codes[:, 0], return_inverse=True)
    else:
        _, ids = np.unique(codes, axis=0, return_inverse=True)
    ids = ids.reshape(-1)
    return ids[: A.shape[0]], ids[A.shape[0] :]


def achievable_set_test(
    sample_x,
    sample_x_prime,
    claimed,
    *,
    classes="lattice",
    significance=0.01,
    max_tests=400,
    epsilon=None,
) -> AuditResult:
    r"""Achievable-output-set test (Mironov 2012): outputs possible under one input only.

    Each release is mapped to an output class (:func:`lattice_classes`;
    for a vector release, the tuple of the classes of its coordinates).
    On the first half of the releases the test estimates, for each class
    ``c``, the log likelihood ratio
    ``log((n'(c) + 1/2) / (n(c) + 1/2))`` of the class counts under the
    two inputs (classes unseen in that half get 0); on the second, held-out
    half it runs the threshold tests of :func:`audit_samples` on this score.
    A class that occurs under ``x'`` and never under ``x`` gets the top
    score, so the test ``reject x when the output is in that class`` has
    type I error 0 and power equal to the class's probability: for a
    pure-DP claim that is a violation with delta equal to that
    probability, which :attr:`AuditResult.delta_lower` bounds from below.

    Because the score is fixed before the held-out releases are looked at,
    and any function of a release is a post-processing of it, a mechanism
    that meets its claim passes with probability at least
    ``1 - significance``; in particular mechanisms whose outputs lie on a
    fixed grid (integers, ``2**-k Z``) reachable from every input pass.

    Parameters
    ----------
    sample_x, sample_x_prime : array_like, shape (n,) or (n, d)
        Independent releases (``n >= 20``) from each input, in the order
        drawn.
    claimed : TradeoffFunction or callable
        The claimed tradeoff function.
    classes : {"lattice", "value"}
        The class map of :func:`lattice_classes`.
    significance, max_tests, epsilon
        As in :func:`audit_samples`.

    Returns
    -------
    AuditResult
        With ``statistic`` equal to ``classes`` and ``n_samples`` the size
        of the held-out half.

    References
    ----------
    Mironov, I. (2012). "On significance of the least significant bits for
    differential privacy", ACM CCS, Sec. 3-5.

    Examples
    --------
    Floating-point Laplace noise, ``x + rng.laplace()``, at ``x = 0`` and
    ``x = 1``: 27% of the outputs at ``x = 0`` (most of those in
    (-1/4, 1/4)) lie on a lattice finer than ``2**-53``, which
    ``fl(1 + noise)`` never reaches.

    >>> import numpy as np
    >>> from invariantdp.audit import achievable_set_test
    >>> from invariantdp.privacy import eps_delta
    >>> rng = np.random.default_rng(0)
    >>> y0, y1 = rng.laplace(0.0, 1.0, 4000), 1.0 + rng.laplace(0.0, 1.0, 4000)
    >>> res = achievable_set_test(y0, y1, eps_delta(1.0))
    >>> res.passed, res.delta_lower > 0.2
    (False, True)

    The same outputs rounded to the integer grid pass:

    >>> achievable_set_test(np.round(y0), np.round(y1), eps_delta(1.0)).passed
    True
    """
    if classes not in _CLASS_KINDS:
        raise InvariantDPError(f"`classes` ({classes!r}) must be one of {_CLASS_KINDS}.")
    f = as_tradeoff(claimed)
    significance = check_in_open_unit("significance", significance)
    max_tests = check_positive_int("max_tests", max_tests, minimum=2)
    A = _release_matrix("sample_x", sample_x)
    B = _release_matrix("sample_x_prime", sample_x_prime)
    if A.shape != B.shape or A.shape[0] < 20:
        raise InvariantDPError(
            "`sample_x` and `sample_x_prime` must have the same shape with at least 20 "
            f"releases (got {A.shape} and {B.shape})."
        )
    n = A.shape[0]
    m = n // 2
    id0, id1 = _class_ids(A, B, classes)
    k = int(max(id0.max(), id1.max())) + 1
    c0 = np.bincount(id0[:m], minlength=k)
    c1 = np.bincount(id1[:m], minlength=k)
    score = np.log((c1 + 0.5) / (c0 + 0.5))
    res = audit_samples(
        score[id0[m:]],
        score[id1[m:]],
        f,
        significance=significance,
        max_tests=max_tests,
        epsilon=epsilon,
    )
    return _with_statistic(res, classes)


def _with_statistic(res: AuditResult, name: str) -> AuditResult:
    return replace(res, statistic=name)


def _release_value(out) -> np.ndarray:
    return np.asarray(getattr(out, "value", out), dtype=float)


def _apply_statistic(statistic, V: np.ndarray) -> np.ndarray:
    r"""A scalar per release: vectorised statistics take the whole ``(n, d)`` batch."""
    if getattr(statistic, "vectorized", False):
        out = np.asarray(statistic(V), dtype=float).reshape(-1)
    else:
        out = np.array([float(np.asarray(statistic(v), dtype=float).reshape(())) for v in V])
    if out.shape != (V.shape[0],):
        raise InvariantDPError(
            f"`statistic` must give one number per release, got shape {out.shape} "
            f"for {V.shape[0]} releases."
        )
    return out


def _default_claim(release) -> TradeoffFunction:
    if not hasattr(release, "guarantee"):
        raise InvariantDPError("give `claimed`: the mechanism does not return a Release.")
    g = release.guarantee
    if g.definition == "zCDP":
        return zcdp_tradeoff(g.params["rho"])
    return g.tradeoff()


def _check_statistics(statistics) -> tuple[str, ...]:
    names = (statistics,) if isinstance(statistics, str) else statistics
    if not isinstance(names, Sequence) or len(names) == 0:
        raise InvariantDPError(
            f"`statistics` ({statistics!r}) must be a non-empty sequence of names from "
            f"{STATISTICS}."
        )
    names = tuple(names)
    bad = [s for s in names if s not in STATISTICS]
    if bad or len(set(names)) != len(names):
        raise InvariantDPError(
            f"`statistics` ({statistics!r}) must list distinct names from {STATISTICS}."
        )
    return names


def _combine(parts: list[AuditResult], significance: float, n: int) -> AuditResult:
    r"""One verdict from several statistics, each audited at ``significance / len(parts)``."""
    if len(parts) == 1:
        return parts[0]
    worst = max(parts, key=lambda r: r.significant_violation)
    return AuditResult(
        passed=all(r.passed for r in parts),
        max_violation=worst.max_violation,
        significant_violation=worst.significant_violation,
        worst_type1=worst.worst_type1,
        worst_type2=worst.worst_type2,
        n_samples=n,
        n_tests=sum(r.n_tests for r in parts),
        claim=worst.claim,
        significance=significance,
        statistic=worst.statistic,
        epsilon=worst.epsilon,
        # Bonferroni over the statistics: every bound holds at the family-wise level
        delta_lower=max(r.delta_lower for r in parts),
        delta_claimed=worst.delta_claimed,
        components=tuple(parts),
    )


def audit_mechanism(
    mechanism: Callable,
    x,
    x_prime,
    *,
    claimed=None,
    statistic: Callable | None = None,
    statistics=STATISTICS,
    n_samples=20_000,
    significance=0.01,
    max_tests=400,
    epsilon=None,
    rng=None,
    batched: bool = False,
) -> AuditResult:
    r"""Audit a mechanism on a pair of neighbouring inputs.

    Draws ``n_samples`` releases from each input and runs every statistic
    in ``statistics``, each at level ``significance / len(statistics)``:

    * ``"threshold"``: the threshold tests of :func:`audit_samples` on a
      scalar statistic (``statistic``, or the default described below).
      Catches noise of the wrong scale.
    * ``"lattice"``: :func:`achievable_set_test` on the sign, binade and
      finest dyadic lattice of each output (its low-order bits).  Catches
      floating-point leaks: the floating-point mechanisms of this package
      (``secure=False``) fail it on small data such as 0 and 1.
    * ``"value"``: :func:`achievable_set_test` on the exact outputs.
      Catches outputs on a grid that depends on the data, and mechanisms
      that return the data.

    For a multivariate release the achievable-set tests look at the
    coordinates where ``x`` and ``x_prime`` differ (when both are arrays of
    the release's size), otherwise at all coordinates.

    Parameters
    ----------
    mechanism : callable
        ``mechanism(data, rng)`` returning a :class:`~invariantdp.Release`
        (or an array).  Each call must draw fresh noise from ``rng``.  With
        ``batched=True``: ``mechanism(data, n, rng)`` returning ``n``
        independent releases stacked along the first axis (an array of
        shape ``(n, ...)``).  A secure sampler ignores ``rng``.
    x, x_prime : array_like or DataFrame
        Neighbouring inputs.  For semi-DP, take invariant-conforming data sets
        at the semi-adjacent distance, e.g. ``x`` and ``x + v`` for a worst
        vector ``v`` of the sensitivity space (:func:`neighbour_from_space`).
    claimed : TradeoffFunction, optional
        The claim; by default the release's own guarantee
        (``release.guarantee.tradeoff()``, or :func:`zcdp_tradeoff` for a
        zCDP guarantee).  Required with ``batched=True``.
    statistic : callable, optional
        The scalar statistic of ``"threshold"``: maps a release value to a
        scalar (or, when it has an attribute ``vectorized = True`` like the
        statistics made by :func:`projection_statistic` and
        :func:`likelihood_ratio_statistic`, an ``(n, d)`` batch of flattened
        values to ``n`` scalars).  By default the value itself for a scalar
        release (the likelihood ratio statistic for Laplace, Gaussian and
        Tulap noise); otherwise the projection on ``x_prime - x`` when the
        inputs are arrays of the release's size, or on the difference of the
        mean releases estimated from an independent pilot sample of 10%.
    statistics : sequence of {"threshold", "lattice", "value"}
        The statistics to run (default: all three, :data:`STATISTICS`).
        ``("threshold",)`` audits only the noise scale, e.g. of a
        floating-point simulation.
    n_samples : int
        Releases drawn from each input (the achievable-set tests use half
        of them to find the classes and test on the other half).
    significance : float
        Family-wise probability of failing a correct mechanism.
    max_tests : int
        Thresholds per statistic (see :func:`audit_samples`).
    epsilon : float, optional
        Where the empirical delta lower bound is reported (default: the
        claim's epsilon, or 0).
    rng : None, int, SeedSequence or Generator
    batched : bool
        Whether ``mechanism`` draws ``n`` releases per call (see above).

    Returns
    -------
    AuditResult
        With one component per statistic in ``components``.

    Notes
    -----
    Sample sizes, releases per input for 90% power at significance 0.01
    (:func:`audit_sample_size`; checked by simulation in the test suite):

    * a Gaussian mechanism with ``sigma = 3.19`` claiming ``(1, 1e-5)``-DP
      (which needs ``sigma = 3.7306``; its true delta is ``9.8e-5``, ten
      times the claim): ``2.36e7`` with the threshold statistic alone;
    * the same mechanism against the GDP claim ``mu = 0.268`` (the curve
      ``G_mu`` whose delta at epsilon = 1 is ``1e-5``): ``9.3e4``;
    * ``sigma = 2.575`` claiming ``(1, 1e-5)`` (true delta ``1e-3``):
      ``1.26e6``;
    * a floating-point leak that makes a fraction ``p`` of the outputs
      impossible under the neighbour (pure DP, epsilon = 1, all three
      statistics): about ``200 / p`` (measured: caught 10 times in 10 at
      ``200 / p``, 4 in 10 at ``100 / p``).

    For an (epsilon, delta) claim the gap between the curves lies in the far
    tail (type I errors near delta), which is why ``delta`` violations need
    so many releases; the numbers for the threshold statistic alone hold
    with ``statistics=("threshold",)`` (with all three statistics, about 8%
    more).

    Examples
    --------
    The exact (integer) discrete Laplace mechanism, simulated, on ``n``
    copies of a count: it passes all three statistics.

    >>> import numpy as np
    >>> from invariantdp.audit import audit_mechanism
    >>> from invariantdp.mechanisms import discrete_laplace
    >>> from invariantdp.privacy import eps_delta
    >>> res = audit_mechanism(
    ...     lambda t, n, rng: discrete_laplace(np.full(n, t), epsilon=1.0, rng=rng).value,
    ...     3, 4, claimed=eps_delta(1.0), n_samples=20_000, rng=0, batched=True)
    >>> res.passed
    True

    Floating-point Laplace noise, ``x + rng.laplace()``, on 0 and 1 has the
    right scale (the threshold statistic passes) but leaks through its
    low-order bits:

    >>> float_laplace = lambda t, n, rng: t + rng.laplace(0.0, 1.0, n)
    >>> res = audit_mechanism(
    ...     float_laplace, 0.0, 1.0, claimed=eps_delta(1.0), n_samples=4000, rng=0, batched=True)
    >>> res.passed, res.statistic
    (False, 'lattice')
    >>> [(c.statistic, c.passed) for c in res.components]
    [('threshold', True), ('lattice', False), ('value', True)]

    A 2 x 2 table released through the Tulap odds-ratio mechanism, each
    call returning a :class:`~invariantdp.Release` whose guarantee is the
    claim; a seeded release is a floating-point simulation, so only its
    noise scale is audited:

    >>> from invariantdp.mechanisms import odds_ratio_release
    >>> x = np.array([[12, 5], [4, 9]])
    >>> x_prime = x + np.array([[1, -1], [-1, 1]])
    >>> res = audit_mechanism(
    ...     lambda t, rng: odds_ratio_release(t, epsilon=1.0, rng=rng), x, x_prime,
    ...     statistics=("threshold",), n_samples=2000, rng=0)
    >>> res.passed
    True
    """
    n = check_positive_int("n_samples", n_samples, minimum=20)
    if not callable(mechanism):
        raise TypeError(f"`mechanism` must be callable, got {type(mechanism).__name__}.")
    if statistic is not None and not callable(statistic):
        raise TypeError(f"`statistic` must be callable, got {type(statistic).__name__}.")
    names = _check_statistics(statistics)
    if batched and claimed is None:
        raise InvariantDPError("give `claimed` with `batched=True`: a batch carries no Release.")
    if claimed is not None:
        claimed = as_tradeoff(claimed)
    significance = check_in_open_unit("significance", significance)
    max_tests = check_positive_int("max_tests", max_tests, minimum=2)
    if epsilon is not None:
        _claim_epsilon(claimed, epsilon)
    gen = as_generator(rng)

    if batched:

        def draw(data):
            out = np.asarray(mechanism(data, n, gen), dtype=float)
            if out.ndim == 0 or out.shape[0] != n:
                raise InvariantDPError(
                    f"a batched `mechanism` must return {n} releases along axis 0, "
                    f"got shape {out.shape}."
                )
            return out.reshape(n, -1), None

    else:

        def draw(data):
            vals = []
            first = None
            for _ in range(n):
                out = mechanism(data, gen)
                if first is None:
                    first = out
                vals.append(_release_value(out).ravel())
            return np.array(vals), first

    v0, rel = draw(x)
    v1, _ = draw(x_prime)
    if claimed is None:
        claimed = _default_claim(rel)
    share = significance / len(names)
    diff = _difference(x, x_prime, v0.shape[1])
    parts = []
    for name in names:
        if name == "threshold":
            s0, s1 = _threshold_statistic(statistic, v0, v1, diff, n)
            res = audit_samples(
                s0, s1, claimed, significance=share, max_tests=max_tests, epsilon=epsilon
            )
        else:
            cols = np.flatnonzero(diff) if diff is not None else slice(None)
            res = achievable_set_test(
                v0[:, cols],
                v1[:, cols],
                claimed,
                classes=name,
                significance=share,
                max_tests=max_tests,
                epsilon=epsilon,
            )
        parts.append(res)
    return _combine(parts, significance, n)


def _threshold_statistic(statistic, v0, v1, diff, n):
    if statistic is not None:
        return _apply_statistic(statistic, v0), _apply_statistic(statistic, v1)
    if v0.shape[1] == 1:
        return v0[:, 0], v1[:, 0]
    if diff is not None:
        return v0 @ diff, v1 @ diff
    pilot = max(n // 10, 10)
    direction = v1[:pilot].mean(axis=0) - v0[:pilot].mean(axis=0)
    return v0[pilot:] @ direction, v1[pilot:] @ direction


def _difference(x, x_prime, size: int) -> np.ndarray | None:
    r"""``x_prime - x`` flattened, when both are numeric arrays of ``size`` entries."""
    try:
        a = np.asarray(x, dtype=float).ravel()
        b = np.asarray(x_prime, dtype=float).ravel()
    except (TypeError, ValueError):
        return None
    if a.size != size or b.size != size:
        return None
    with np.errstate(invalid="ignore", over="ignore"):
        d = b - a
    return d if np.all(np.isfinite(d)) and np.any(d != 0) else None


# ---------------------------------------------------------------------------
# how many releases an audit needs
# ---------------------------------------------------------------------------


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

    def summary(self) -> str:
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
        ``gaussian(1 / sigma)`` for Gaussian noise of the wrong scale.
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

    Examples
    --------
    >>> from invariantdp.audit import audit_sample_size
    >>> from invariantdp.privacy import eps_delta, gaussian
    >>> size = audit_sample_size(gaussian(0.268), gaussian(1 / 3.19), n_tests=1600)
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

    hi = 32
    while best(hi, coarse)[0] < power:
        if hi >= max_n:
            raise InvariantDPError(
                f"`max_n` ({max_n}) releases do not reach `power` ({power}): the best test "
                f"has power {best(max_n, coarse)[0]:.3g} there."
            )
        hi = min(hi * 2, max_n)
    lo = hi // 2
    while hi - lo > max(1, hi // 100):
        mid = (lo + hi) // 2
        if best(mid, coarse)[0] >= power:
            hi = mid
        else:
            lo = mid
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


# ---------------------------------------------------------------------------
# helpers: neighbours, statistics, claims
# ---------------------------------------------------------------------------


def neighbour_from_space(x, space, *, p=2, nonnegative=True) -> np.ndarray:
    r"""An invariant-conforming neighbour ``x + v`` with ``v`` a worst vector of ``space``.

    For semi-DP (Cho & Awan, Def. 13) the guarantee concerns data sets with
    the same invariants at the semi-adjacent distance ``a(t)``; their query
    values differ by an element of the sensitivity space ``S`` (e.g.
    :func:`~invariantdp.sensitivity.contingency_sensitivity_space`).  The
    hardest pair for an audit differs by a vector of largest norm: this
    returns ``x + v`` for the first ``v`` in ``S`` maximising
    :math:`\|v\|_p`, preferring (with ``nonnegative``) one that keeps all
    entries of ``x + v`` non-negative.

    Parameters
    ----------
    x : array_like
        The confidential query value (any shape; ``space`` rows are flattened
        C-order differences).
    space : array_like, shape (m, x.size)
        Sensitivity space, one difference vector per row.
    p : float or "inf"
        The norm in which the mechanism is calibrated (2 for Gaussian noise,
        1 for Laplace-type noise).
    nonnegative : bool
        Prefer neighbours with non-negative entries (counts).

    Returns
    -------
    numpy.ndarray
        ``x + v``, with the shape of ``x``.

    Examples
    --------
    >>> import numpy as np
    >>> from invariantdp.audit import neighbour_from_space
    >>> from invariantdp.sensitivity import contingency_sensitivity_space
    >>> x = np.array([[3, 0], [1, 5]])
    >>> neighbour_from_space(x, contingency_sensitivity_space(2, 2))
    array([[2., 1.],
           [2., 4.]])
    """
    from .sensitivity import _p

    xv = check_finite_array("x", x)
    if xv.size == 0:
        raise InvariantDPError("`x` must not be empty.")
    S = check_finite_array("space", space)
    if S.ndim != 2 or S.shape[0] == 0 or S.shape[1] != xv.size:
        raise InvariantDPError(
            f"`space` must be a non-empty 2-D array with {xv.size} columns (one flattened "
            f"difference per row), got shape {S.shape}."
        )
    norms = np.linalg.norm(S, ord=_p(p), axis=1)
    if not np.max(norms) > 0:
        raise InvariantDPError("`space` must contain a nonzero difference vector.")
    worst = np.flatnonzero(norms >= np.max(norms) * (1.0 - 1e-12))
    cand = xv.ravel()[None, :] + S[worst]
    if nonnegative:
        ok = np.flatnonzero(np.all(cand >= 0, axis=1))
        if ok.size:
            return cand[ok[0]].reshape(xv.shape)
    return cand[0].reshape(xv.shape)


def projection_statistic(direction) -> Callable:
    r"""Statistic ``v -> <v, direction>`` on flattened releases (vectorised).

    For spherical (or projected) Gaussian noise and inputs differing by
    ``direction``, the projection is the likelihood ratio statistic, hence
    the most powerful.

    Examples
    --------
    >>> import numpy as np
    >>> from invariantdp.audit import projection_statistic
    >>> projection_statistic([1.0, -1.0])(np.array([[3.0, 1.0], [0.0, 2.0]]))
    array([ 2., -2.])
    """
    d = check_finite_array("direction", direction).ravel()
    if d.size == 0 or not np.any(d != 0):
        raise InvariantDPError("`direction` must be a nonzero vector.")

    def stat(V):
        V = np.asarray(V, dtype=float)
        return V.reshape(-1, d.size) @ d

    stat.vectorized = True
    return stat


def likelihood_ratio_statistic(logpdf: Callable, x, x_prime) -> Callable:
    r"""Log likelihood ratio ``logpdf(v - x') - logpdf(v - x)`` of an additive mechanism.

    ``logpdf`` is the log density (or mass) of the noise, evaluated on an
    ``(n, d)`` batch of flattened noise vectors (e.g.
    ``KNormNoise.logpdf``, ``SubspaceNoise.logpdf`` or a scipy ``logpdf``
    summed over coordinates).  By the Neyman-Pearson lemma threshold tests
    on it trace the exact tradeoff curve of the two release laws, so an
    audit on it has the most power.  Points where both densities vanish get
    0; where one does, ``-inf``/``+inf`` are mapped to the finite extremes
    ``-1e300``/``1e300``.

    Examples
    --------
    >>> import numpy as np
    >>> from scipy import stats
    >>> from invariantdp.audit import likelihood_ratio_statistic
    >>> lap = lambda V: stats.laplace.logpdf(V).sum(axis=1)
    >>> lr = likelihood_ratio_statistic(lap, [0.0], [1.0])
    >>> lr(np.array([[-3.0], [0.5], [4.0]]))
    array([-1.,  0.,  1.])
    """
    if not callable(logpdf):
        raise TypeError(f"`logpdf` must be callable, got {type(logpdf).__name__}.")
    a = check_finite_array("x", x).ravel()
    b = check_finite_array("x_prime", x_prime).ravel()
    if a.shape != b.shape or a.size == 0:
        raise InvariantDPError(
            f"`x` and `x_prime` must have the same non-zero size, got {a.size} and {b.size}."
        )

    def stat(V):
        V = np.asarray(V, dtype=float).reshape(-1, a.size)
        l1 = np.asarray(logpdf(V - b), dtype=float).reshape(-1)
        l0 = np.asarray(logpdf(V - a), dtype=float).reshape(-1)
        with np.errstate(invalid="ignore"):
            out = l1 - l0
        out = np.where(np.isneginf(l1) & np.isneginf(l0), 0.0, out)
        return np.clip(out, -1e300, 1e300)

    stat.vectorized = True
    return stat


class _ZCDP(TradeoffFunction):
    def __init__(self, rho: float, n_grid: int):
        self.rho = rho
        self.name = f"implied by rho-zCDP: rho={rho:g}"
        # (epsilon, delta(epsilon)) pairs of the CKS conversion on a grid of epsilon
        eps = np.concatenate([[0.0], np.geomspace(1e-3, rho + 40.0 * np.sqrt(rho) + 40.0, n_grid)])
        alpha = np.geomspace(1.0 + 1e-6, 1e6, 4000)[None, :]
        log_delta = (
            (alpha - 1.0) * (alpha * rho - eps[:, None])
            + (alpha - 1.0) * np.log1p(-1.0 / alpha)
            - np.log(alpha)
        )
        delta = np.minimum(np.exp(np.min(log_delta, axis=1)), 1.0)
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
        return f"zcdp_tradeoff(rho={self.rho!r})"


def zcdp_tradeoff(rho, *, n_grid=400) -> TradeoffFunction:
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

    Parameters
    ----------
    rho : float
        ``rho > 0``.
    n_grid : int
        Number of epsilon values in the envelope (at least 10).

    Returns
    -------
    TradeoffFunction

    References
    ----------
    Canonne, C. L., Kamath, G. and Steinke, T. (2020). "The discrete Gaussian
    for differential privacy", NeurIPS 33, Cor. 13.

    Examples
    --------
    >>> from invariantdp.audit import zcdp_tradeoff
    >>> from invariantdp.privacy import gaussian
    >>> f = zcdp_tradeoff(0.5)  # the Gaussian mechanism with mu = 1 is 0.5-zCDP
    >>> bool(f(0.9) <= gaussian(1.0)(0.9))
    True
    """
    rho = check_positive("rho", rho)
    n_grid = check_positive_int("n_grid", n_grid, minimum=10)
    return _ZCDP(rho, n_grid)

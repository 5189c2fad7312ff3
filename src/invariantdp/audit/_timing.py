r"""Timing audit: does the run time of a release, with its value, reveal the data?

A release is private only if everything an observer sees is: its value and
also how long it took (Jin, McMurtry, Rubinstein & Ohrimenko 2022).
:func:`audit_timing` calls a mechanism on two neighbouring inputs,
interleaved, recording ``(value, run time)`` pairs with
:func:`time.perf_counter_ns`, and tests events of the joint law,
``{s <= c and t < tau}`` and the like (``s`` a scalar statistic of the
value, ``t`` the run time), with thresholds fixed on held-out calls; the
Clopper-Pearson bounds of each event's probability under the two inputs give
a lower bound on the privacy loss, at the audit's family-wise level
(Bonferroni over the events).  :func:`audit_timing_samples` runs the same
tests on pairs already recorded (e.g. synthetic ones, in tests).

Why the test is valid on a loaded machine: the two inputs' calls alternate
in a random order, so a load that slows the machine slows both alike, and
the thresholds are fixed on calls that are not tested, so choosing them
costs no significance; a correct mechanism (whose run time is independent of
the data given its value) passes with probability at least
``1 - significance`` whatever the load.

References
----------
.. [1] Jin, J., McMurtry, E., Rubinstein, B. I. P. and Ohrimenko, O. (2022).
   "Are we there yet? Timing and floating-point attacks on differential
   privacy systems", IEEE S&P.
.. [2] Jagielski, M., Ullman, J. and Oprea, A. (2020). "Auditing
   differentially private machine learning", NeurIPS 33 (Clopper-Pearson
   bounds on the privacy loss from event counts).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import stats

from .._progress import progress_bar, show_progress
from .._results import Summary, format_table
from .._rng import as_generator
from .._validation import InvariantDPError, check_in_open_unit, check_positive_int
from ..privacy import as_tradeoff
from ._mechanism import _apply_statistic, _default_claim, _difference, _release_value

__all__ = ["TimingAuditResult", "audit_timing", "audit_timing_samples"]

#: quantiles of the held-out run times and values that fix the thresholds of the events
TIME_LEVELS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 0.9)
VALUE_LEVELS = (0.1, 0.25, 0.5, 0.75, 0.9)


@dataclass(frozen=True)
class TimingAuditResult:
    r"""Outcome of a timing audit (:func:`audit_timing`).

    Attributes
    ----------
    passed : bool
        False when some event of (value, run time) separates the inputs
        significantly more than the claim allows.
    epsilon_lower : float
        Lower confidence bound (Clopper-Pearson, family-wise level) on the
        privacy loss of one release with its run time:
        ``max_E log((P(E | x) - delta) / P(E | x'))`` over the events, in both
        orders of the inputs, each probability at its unfavourable bound; 0
        when no event gives evidence.
    delta : float
        The delta at which :attr:`epsilon_lower` is computed.
    event : str
        The event of the largest bound, e.g. ``"value <= 0 and time < 3.1e+04 ns"``.
    count_x, count_x_prime : int
        That event's counts among the tested calls of the input it favours
        and of the other one.
    epsilon_value_lower, epsilon_time_lower : float
        The same bound from the value alone and from the run time alone (an
        event of the run time only is a leak whatever the value).
    significant_violation : float
        Largest ``f(1 - type I upper bound) - type II upper bound`` over the
        events (positive: the claim is violated).
    n_samples, n_holdout : int
        Tested calls and held-out calls per input.
    n_tests : int
        Events tested, counting both orders of the inputs.
    claim : str
        The tradeoff function audited.
    significance : float
        Family-wise level.
    median_ns : tuple of float
        Median run time of the tested calls of each input (information only).

    References
    ----------
    Jin, McMurtry, Rubinstein & Ohrimenko (2022), IEEE S&P; Jagielski, Ullman
    & Oprea (2020), NeurIPS 33.

    Examples
    --------
    >>> import numpy as np
    >>> from invariantdp.privacy import eps_delta
    >>> rng = np.random.default_rng(0)
    >>> z = rng.integers(0, 2, size=(2, 6000))  # values independent of the input...
    >>> t = rng.normal(1e4, 300.0, size=(2, 6000))  # ...and so are the run times
    >>> res = audit_timing_samples(z[0], t[0], z[1], t[1], eps_delta(1.0), n_holdout=1000)
    >>> res.passed, res.epsilon_lower < 1.0
    (True, True)
    """

    passed: bool
    epsilon_lower: float
    delta: float
    event: str
    count_x: int
    count_x_prime: int
    epsilon_value_lower: float
    epsilon_time_lower: float
    significant_violation: float
    n_samples: int
    n_holdout: int
    n_tests: int
    claim: str
    significance: float
    median_ns: tuple

    def summary(self) -> Summary:
        r"""A printable table: the verdict, the loss bound and the event that gives it."""
        rows = [
            ("claim", self.claim),
            ("calls per input: tested, held out", f"{self.n_samples}, {self.n_holdout}"),
            ("events tested", self.n_tests),
            (f"privacy loss lower bound (delta = {self.delta:.3g})", self.epsilon_lower),
            ("  from the value alone", self.epsilon_value_lower),
            ("  from the run time alone", self.epsilon_time_lower),
            ("event of the bound", self.event),
            ("its counts (favoured input, other)", f"{self.count_x}, {self.count_x_prime}"),
            ("median run time, ns", f"{self.median_ns[0]:.4g}, {self.median_ns[1]:.4g}"),
            ("family-wise significance", self.significance),
            ("verdict", "pass" if self.passed else "FAIL: the run time leaks"),
        ]
        return format_table("Timing audit of (value, run time)", rows)


def _samples(name: str, value) -> np.ndarray:
    a = np.asarray(value, dtype=float).reshape(-1)
    if not np.all(np.isfinite(a)):
        raise InvariantDPError(f"`{name}` must hold finite numbers.")
    return a


def _events(s: np.ndarray, t: np.ndarray, cuts: np.ndarray, taus: np.ndarray) -> np.ndarray:
    """Indicators (events x calls) of every value condition crossed with every time one.

    Value conditions: ``s <= c``, ``s > c`` for each cut, and none; time
    conditions: ``t < tau``, ``t >= tau`` for each threshold, and none.
    """
    value = [s <= c for c in cuts] + [s > c for c in cuts] + [np.ones(s.size, dtype=bool)]
    times = [t < u for u in taus] + [t >= u for u in taus] + [np.ones(t.size, dtype=bool)]
    out = np.array([v & w for v in value for w in times])
    return out[:-1]  # drop (none, none): the sure event


def _event_names(cuts, taus) -> list[str]:
    value = [f"value <= {c:.6g}" for c in cuts] + [f"value > {c:.6g}" for c in cuts] + [None]
    times = [f"time < {u:.4g} ns" for u in taus] + [f"time >= {u:.4g} ns" for u in taus] + [None]
    names = [" and ".join(p for p in (v, w) if p) for v in value for w in times]
    return names[:-1]


def _cp_lower(k: np.ndarray, n: int, level: float) -> np.ndarray:
    k = np.asarray(k, dtype=float)
    out = np.zeros_like(k)
    ok = k > 0
    out[ok] = stats.beta.ppf(level, k[ok], n - k[ok] + 1.0)
    return out


def _cp_upper(k: np.ndarray, n: int, level: float) -> np.ndarray:
    k = np.asarray(k, dtype=float)
    out = np.ones_like(k)
    ok = k < n
    out[ok] = stats.beta.ppf(1.0 - level, k[ok] + 1.0, n - k[ok])
    return out


def audit_timing_samples(
    value_x,
    time_x,
    value_x_prime,
    time_x_prime,
    claimed,
    *,
    n_holdout,
    significance=0.01,
    delta=None,
) -> TimingAuditResult:
    r"""Timing audit of (value, run time) pairs already recorded from two neighbouring inputs.

    The first ``n_holdout`` pairs of each input fix the thresholds: cuts
    ``c`` of the value at the quantiles :data:`VALUE_LEVELS` of the pooled
    held-out values (and their distinct values when there are few), run-time
    thresholds ``tau`` at the quantiles :data:`TIME_LEVELS` of the pooled
    held-out times.  On the other pairs every event ``{value <= c or > c}`` x
    ``{time < tau or >= tau}`` (either condition may be absent) is counted
    under both inputs; each event, in both orders of the inputs, is a test of
    the claim with Clopper-Pearson bounds at level ``significance / (2 n_tests)``.

    Parameters
    ----------
    value_x, time_x, value_x_prime, time_x_prime : array_like, shape (n,)
        A scalar statistic of each release and its run time (any unit), in
        the order recorded; the same ``n`` for both inputs.
    claimed : TradeoffFunction or callable
        The claim (paper convention: ``f(alpha)`` is the least type II error
        at type I error ``1 - alpha``).
    n_holdout : int
        Pairs per input that fix the thresholds (at least 20; at least 20
        more are tested).
    significance : float
        Family-wise level.
    delta : float, optional
        Where :attr:`TimingAuditResult.epsilon_lower` is computed (default:
        the claim's delta for an (epsilon, delta) claim, else 0).

    Returns
    -------
    TimingAuditResult

    References
    ----------
    Jin, McMurtry, Rubinstein & Ohrimenko (2022), IEEE S&P (timing attacks on
    DP samplers); Jagielski, Ullman & Oprea (2020), NeurIPS 33.

    Examples
    --------
    A sampler whose run time grows with ``|noise|`` (as CKS Algorithm 2's
    loop does), on neighbours 0 and 1: the event ``{value <= 0 and fast}``
    has noise 0 under 0 and noise -1 (slower) under 1.

    >>> import numpy as np
    >>> from invariantdp.privacy import eps_delta
    >>> rng = np.random.default_rng(1)
    >>> noise = rng.geometric(1 - np.exp(-1.0), size=(2, 8000)) - rng.geometric(
    ...     1 - np.exp(-1.0), size=(2, 8000))
    >>> t = 1000.0 * (1 + np.abs(noise)) + rng.exponential(100.0, size=noise.shape)
    >>> res = audit_timing_samples(noise[0], t[0], 1 + noise[1], t[1], eps_delta(1.0),
    ...                            n_holdout=2000)
    >>> res.passed, res.epsilon_lower > 2.0, res.epsilon_value_lower < 1.0
    (False, True, True)
    """
    f = as_tradeoff(claimed)
    significance = check_in_open_unit("significance", significance)
    h = check_positive_int("n_holdout", n_holdout, minimum=20)
    s0, t0 = _samples("value_x", value_x), _samples("time_x", time_x)
    s1, t1 = _samples("value_x_prime", value_x_prime), _samples("time_x_prime", time_x_prime)
    n_all = s0.size
    if not (t0.size == s1.size == t1.size == n_all) or n_all < h + 20:
        raise InvariantDPError(
            "the four samples must have the same size, at least `n_holdout` + 20 "
            f"({h + 20}); got {s0.size}, {t0.size}, {s1.size}, {t1.size}."
        )
    if delta is None:
        delta = float(getattr(f, "delta", 0.0)) if hasattr(f, "epsilon") else 0.0
    pooled_s = np.concatenate([s0[:h], s1[:h]])
    pooled_t = np.concatenate([t0[:h], t1[:h]])
    distinct = np.unique(pooled_s)
    cuts = (
        distinct[:-1]
        if distinct.size <= len(VALUE_LEVELS) + 1
        else np.unique(np.quantile(pooled_s, VALUE_LEVELS))
    )
    taus = np.unique(np.quantile(pooled_t, TIME_LEVELS))
    n = n_all - h
    e0 = _events(s0[h:], t0[h:], cuts, taus).sum(axis=1)
    e1 = _events(s1[h:], t1[h:], cuts, taus).sum(axis=1)
    names = _event_names(cuts, taus)
    # both orders: an event favouring x (large count under x) or x'
    k_hi = np.concatenate([e0, e1])
    k_lo = np.concatenate([e1, e0])
    n_tests = k_hi.size
    level = significance / (2 * n_tests)  # Bonferroni; one-sided bounds on both counts
    p_hi = _cp_lower(k_hi, n, level)  # P(E | favoured input), at least
    p_lo = _cp_upper(k_lo, n, level)  # P(E | other input), at most
    with np.errstate(divide="ignore", invalid="ignore"):
        loss = np.where(p_hi > delta, np.log((p_hi - delta) / p_lo), -np.inf)
    # reject "the other input" when E: type I = P(E | other), type II = 1 - P(E | favoured)
    violation = np.asarray(f(1.0 - p_lo), dtype=float) - (1.0 - p_hi)
    best = int(np.argmax(loss))
    per = len(names)
    n_value = 2 * len(cuts) + 1  # value conditions, the last one empty
    n_time = 2 * len(taus) + 1
    kinds = np.tile(np.arange(per), 2)
    value_only = (kinds % n_time) == n_time - 1
    time_only = kinds // n_time == n_value - 1

    def bound(mask):
        vals = loss[mask]
        return float(max(np.max(vals), 0.0)) if vals.size else 0.0

    return TimingAuditResult(
        passed=bool(np.max(violation) <= 0.0),
        epsilon_lower=float(max(loss[best], 0.0)),
        delta=float(delta),
        event=names[best % per],
        count_x=int(k_hi[best]),
        count_x_prime=int(k_lo[best]),
        epsilon_value_lower=bound(value_only),
        epsilon_time_lower=bound(time_only),
        significant_violation=float(np.max(violation)),
        n_samples=n,
        n_holdout=h,
        n_tests=n_tests,
        claim=repr(f),
        significance=significance,
        median_ns=(float(np.median(t0[h:])), float(np.median(t1[h:]))),
    )


def _time_calls(mechanism, x, x_prime, total: int, order_rng, bar):
    """``total`` interleaved calls per input: (values, run times in ns) of each input."""
    out = ([], [], [], [])
    data = (x, x_prime)
    clock = time.perf_counter_ns
    for first in order_rng.integers(0, 2, size=total):
        for which in (first, 1 - first):
            start = clock()
            release = mechanism(data[which])
            elapsed = clock() - start
            out[2 * which].append(release)
            out[2 * which + 1].append(elapsed)
        bar.update(2)
    return out


def audit_timing(
    mechanism: Callable,
    x,
    x_prime,
    *,
    claimed=None,
    statistic: Callable | None = None,
    n_samples=20_000,
    n_holdout=None,
    warmup=200,
    significance=0.01,
    delta=None,
    rng=None,
    progress=None,
) -> TimingAuditResult:
    r"""Audit the run time of a mechanism, with its value, on two neighbouring inputs.

    Calls ``mechanism(x)`` and ``mechanism(x_prime)`` in pairs, in a random
    order within each pair, ``warmup`` times untimed and then ``n_holdout +
    n_samples`` times timed (:func:`time.perf_counter_ns` around the call
    only), and runs :func:`audit_timing_samples` on a scalar statistic of
    the values and the run times.  A mechanism whose run time is independent
    of the data given its value (or up to what its guarantee accounts for,
    ``timing_tv``) passes with probability at least ``1 - significance``.

    Parameters
    ----------
    mechanism : callable
        ``mechanism(data)`` returning a :class:`~invariantdp.Release` (or an
        array); one release per call, drawn afresh (``secure=True`` for a
        release for publication).
    x, x_prime : array_like or DataFrame
        Neighbouring inputs.
    claimed : TradeoffFunction, optional
        The claim; by default the release's own guarantee
        (``release.guarantee.tradeoff()``, which for a secure release
        includes its run time's share).
    statistic : callable, optional
        A scalar of a release's value; by default the value itself for a
        scalar release, else its projection on ``x_prime - x`` (for arrays of
        the value's size) or on the difference of the held-out mean values.
    n_samples : int
        Tested calls per input (default 20,000, the size of the acceptance
        test of the package's secure samplers).
    n_holdout : int, optional
        Held-out calls per input that fix the thresholds (default
        ``max(n_samples // 5, 20)``).
    warmup : int
        Untimed calls per input first (caches, plans).
    significance : float
        Family-wise level (default 0.01: the loss bound is a 99% lower bound).
    delta : float, optional
        Where the loss bound is computed (default: the claim's delta).
    rng : None, int, SeedSequence or Generator
        Orders the calls within each pair (not passed to the mechanism).
    progress : bool, optional
        Show a progress bar (default: in a terminal or notebook, not under CI).

    Returns
    -------
    TimingAuditResult

    Notes
    -----
    Sample sizes, calls per input for 90% power at significance 0.01 with
    the default events (:func:`~invariantdp.audit.timing_sample_size`, 416
    tests; checked in the test suite): the discrete Laplace sampler of CKS
    Algorithm 2 that the package used before its constant-time samplers, at epsilon = 1 on
    neighbours 0 and 1, has an event ``{value <= 0 and fast}`` of
    probability about ``0.026`` under 0 and ``5e-5`` under 1 (512 and 1 of
    20,000 calls, measured): 2,752 calls per input catch it against the
    claim epsilon = 1 (6,144 against epsilon = 2); a leak whose best event
    has probabilities ``0.02`` and ``0.005`` (a loss of 1.39 against a claim
    of 1) needs 77,312.  The run time of a Python call varies by
    microseconds on a loaded machine: a leak smaller than that needs many
    more calls, and the audit, a statistical test, cannot prove its absence.

    References
    ----------
    Jin, McMurtry, Rubinstein & Ohrimenko (2022), IEEE S&P; Jagielski, Ullman
    & Oprea (2020), NeurIPS 33.

    Examples
    --------
    >>> from invariantdp.audit import audit_timing
    >>> from invariantdp.mechanisms import discrete_laplace_mechanism
    >>> res = audit_timing(
    ...     lambda t: discrete_laplace_mechanism(t, epsilon=1.0, secure=True), 0, 1,
    ...     n_samples=400, warmup=20, rng=0)
    >>> res.n_samples, res.n_holdout
    (400, 80)
    """
    n = check_positive_int("n_samples", n_samples, minimum=20)
    h = max(n // 5, 20) if n_holdout is None else check_positive_int("n_holdout", n_holdout)
    warmup = check_positive_int("warmup", warmup, minimum=0)
    show_progress(progress)
    if not callable(mechanism):
        raise TypeError(f"`mechanism` must be callable, got {type(mechanism).__name__}.")
    if statistic is not None and not callable(statistic):
        raise TypeError(f"`statistic` must be callable, got {type(statistic).__name__}.")
    if claimed is not None:
        claimed = as_tradeoff(claimed)
    significance = check_in_open_unit("significance", significance)
    order = as_generator(rng)
    with progress_bar(2 * (warmup + h + n), progress, desc="timing audit", unit="call") as bar:
        _time_calls(mechanism, x, x_prime, warmup, order, bar)
        r0, t0, r1, t1 = _time_calls(mechanism, x, x_prime, h + n, order, bar)
    if claimed is None:
        claimed = _default_claim(r0[0])
    v0 = np.array([_release_value(r).ravel() for r in r0])
    v1 = np.array([_release_value(r).ravel() for r in r1])
    s0, s1 = _statistic(statistic, v0, v1, _difference(x, x_prime, v0.shape[1]), h)
    return audit_timing_samples(
        s0, t0, s1, t1, claimed, n_holdout=h, significance=significance, delta=delta
    )


def _statistic(statistic, v0, v1, diff, h):
    if statistic is not None:
        return _apply_statistic(statistic, v0), _apply_statistic(statistic, v1)
    if v0.shape[1] == 1:
        return v0[:, 0], v1[:, 0]
    direction = diff if diff is not None else v1[:h].mean(axis=0) - v0[:h].mean(axis=0)
    return v0 @ direction, v1 @ direction

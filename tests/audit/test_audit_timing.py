"""The timing audit (issue 20), on synthetic (value, run time) samples: deterministic.

The slow tests of real samplers are in ``tests/audit/test_timing_audit.py``.
Here every sample is drawn from a seeded generator (or produced by a fake
clock), so each test checks a property of the test statistic itself: it
catches a planted dependence between value and run time, passes an
independent one at its size, and its loss bound is the Clopper-Pearson
computation it documents.
"""

import numpy as np
import pytest
from scipy import stats

from invariantdp.audit import (
    TIMING_TESTS,
    audit_timing,
    audit_timing_samples,
    timing_sample_size,
)
from invariantdp.audit import _timing as timing_module
from invariantdp.exceptions import InvariantDPError
from invariantdp.privacy import eps_delta


def _laplace(rng, epsilon, size):
    p = 1.0 - np.exp(-epsilon)
    return rng.geometric(p, size) - rng.geometric(p, size)


def _leaky(rng, n, epsilon, *, per_unit=1000.0, jitter=300.0):
    """Noise of a CKS-like loop: run time grows with |noise|; values on neighbours 0 and 1."""
    g0, g1 = _laplace(rng, epsilon, n), _laplace(rng, epsilon, n)
    t0 = per_unit * (1 + np.abs(g0)) + rng.exponential(jitter, n)
    t1 = per_unit * (1 + np.abs(g1)) + rng.exponential(jitter, n)
    return g0, t0, 1 + g1, t1


def _constant(rng, n, epsilon, *, jitter=300.0):
    g0, g1 = _laplace(rng, epsilon, n), _laplace(rng, epsilon, n)
    return g0, 5000 + rng.exponential(jitter, n), 1 + g1, 5000 + rng.exponential(jitter, n)


def test_a_run_time_that_grows_with_the_noise_is_caught():
    rng = np.random.default_rng(1)
    res = audit_timing_samples(*_leaky(rng, 12_000, 1.0), eps_delta(1.0), n_holdout=2000)
    assert not res.passed and res.significant_violation > 0
    # the attack: {value <= 0 and fast} holds noise 0 under 0 and never under 1
    assert res.event.startswith("value <= 0 and time <")
    assert res.epsilon_lower > 3.0 and res.count_x > 100 and res.count_x_prime == 0
    # the value alone is epsilon-DP, and the run time alone the same for both inputs
    assert res.epsilon_value_lower < 1.0 and res.epsilon_time_lower < 0.5
    assert res.n_samples == 10_000 and res.n_holdout == 2000
    assert "FAIL" in str(res.summary())


def test_a_run_time_independent_of_the_noise_passes():
    rng = np.random.default_rng(2)
    res = audit_timing_samples(*_constant(rng, 12_000, 1.0), eps_delta(1.0), n_holdout=2000)
    assert res.passed and res.epsilon_lower <= 1.0
    assert res.epsilon_time_lower == 0.0


def test_the_size_is_at_most_the_significance():
    """Under the null (exact epsilon-DP values, independent run times), 300 audits at the
    family-wise level 0.05 fail at most as often as a Binomial(300, 0.05) allows."""
    rng = np.random.default_rng(3)
    fails = 0
    for _ in range(300):
        res = audit_timing_samples(
            *_constant(rng, 1500, 1.0), eps_delta(1.0), n_holdout=300, significance=0.05
        )
        fails += not res.passed
    assert fails <= stats.binom.ppf(0.999, 300, 0.05)
    # the Bonferroni bound is conservative: far fewer than 5% fail (measured: 0)
    assert fails <= 3


def test_the_loss_bound_is_the_clopper_pearson_ratio_of_the_best_event():
    rng = np.random.default_rng(4)
    z0, t0, z1, t1 = _leaky(rng, 6000, 1.0)
    res = audit_timing_samples(z0, t0, z1, t1, eps_delta(1.0), n_holdout=1000)
    n, level = res.n_samples, 0.01 / (2 * res.n_tests)
    k, k_other = res.count_x, res.count_x_prime
    p_lo = stats.beta.ppf(level, k, n - k + 1)
    p_hi = stats.beta.ppf(1 - level, k_other + 1, n - k_other) if k_other < n else 1.0
    assert res.epsilon_lower == pytest.approx(np.log(p_lo / p_hi), rel=1e-12)
    assert res.delta == 0.0


def test_delta_lowers_the_bound():
    rng = np.random.default_rng(5)
    samples = _leaky(rng, 6000, 1.0)
    plain = audit_timing_samples(*samples, eps_delta(1.0), n_holdout=1000)
    with_delta = audit_timing_samples(*samples, eps_delta(1.0, 0.05), n_holdout=1000)
    assert with_delta.delta == 0.05 and with_delta.epsilon_lower < plain.epsilon_lower
    # the event {value > 0 and fast} (noise 0 under 1, ~30% of the calls) exceeds any small delta
    assert not with_delta.passed


def test_thresholds_come_from_the_held_out_pairs_only():
    """Changing the tested pairs does not move the thresholds; changing the held-out ones does."""
    rng = np.random.default_rng(6)
    z0, t0, z1, t1 = _leaky(rng, 4000, 1.0)
    a = audit_timing_samples(z0, t0, z1, t1, eps_delta(1.0), n_holdout=1000)
    t0b = t0.copy()
    t0b[1000:] = t0b[1000:] * 1.0001
    b = audit_timing_samples(z0, t0b, z1, t1, eps_delta(1.0), n_holdout=1000)
    assert a.event == b.event
    t0c = t0.copy()
    t0c[:1000] += 1e6
    c = audit_timing_samples(z0, t0c, z1, t1, eps_delta(1.0), n_holdout=1000)
    assert c.event != a.event


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"n_holdout": 10}, "`n_holdout`"),
        ({"n_holdout": 190}, "at least `n_holdout` \\+ 20"),
        ({"n_holdout": 50, "significance": 1.5}, "`significance`"),
    ],
)
def test_argument_errors(kwargs, match):
    z = np.zeros(200)
    with pytest.raises(InvariantDPError, match=match):
        audit_timing_samples(z, z, z, z, eps_delta(1.0), **kwargs)


# ---------------------------------------------------------------------------
# audit_timing with a fake clock: the calls, their order and the statistic
# ---------------------------------------------------------------------------


class _FakeClock:
    """``perf_counter_ns`` that advances by what the mechanism 'spent' (deterministic)."""

    def __init__(self):
        self.now = 0
        self.spend = 0

    def perf_counter_ns(self):
        self.now += self.spend + 100
        self.spend = 0
        return self.now


def test_audit_timing_catches_a_leak_through_a_fake_clock(monkeypatch):
    clock = _FakeClock()
    monkeypatch.setattr(timing_module, "time", clock)
    rng = np.random.default_rng(7)
    calls = []

    def leaky(x):
        noise = int(_laplace(rng, 1.0, 1)[0])
        calls.append(x)
        clock.spend = 1000 * abs(noise) + int(rng.integers(0, 50))
        return np.array([x + noise], dtype=float)

    res = audit_timing(
        leaky, 0, 1, claimed=eps_delta(1.0), n_samples=3000, warmup=10, rng=0, progress=False
    )
    # warm-up and timed calls, the two inputs called equally often, interleaved
    assert len(calls) == 2 * (10 + 600 + 3000)
    assert calls.count(0) == calls.count(1)
    assert not res.passed and res.epsilon_lower > 2.0
    assert res.n_samples == 3000 and res.n_holdout == 600


def test_audit_timing_passes_constant_work_and_takes_the_release_claim(monkeypatch):
    from invariantdp.mechanisms import discrete_laplace_mechanism

    clock = _FakeClock()
    monkeypatch.setattr(timing_module, "time", clock)

    def steady(x):
        clock.spend = 5000
        return discrete_laplace_mechanism(x, epsilon=1.0, secure=False)

    res = audit_timing(steady, 0, 1, n_samples=2000, warmup=0, rng=0, progress=False)
    assert res.passed and res.epsilon_time_lower == 0.0
    assert res.claim.startswith("eps_delta(epsilon=1.0")


# ---------------------------------------------------------------------------
# sample sizes
# ---------------------------------------------------------------------------


def test_timing_sample_sizes_stated_in_the_docstring():
    assert TIMING_TESTS == 416
    assert timing_sample_size(eps_delta(1.0), 512 / 20_000, 1 / 20_000).n == 2752
    assert timing_sample_size(eps_delta(2.0), 512 / 20_000, 1 / 20_000).n == 6144
    assert timing_sample_size(eps_delta(1.0), 0.02, 0.005).n == 77312
    with pytest.raises(InvariantDPError, match="nothing to detect"):
        timing_sample_size(eps_delta(1.0), 0.02, 0.01)


def test_timing_sample_size_gives_the_stated_power():
    """Simulate the event's two counts at the computed n: the Clopper-Pearson test of the audit
    is significant in about `power` of the runs (and in fewer at half of n)."""
    p, p_prime = 0.03, 0.002
    size = timing_sample_size(eps_delta(1.0), p, p_prime)
    level = 0.01 / (2 * TIMING_TESTS)
    rng = np.random.default_rng(8)

    def rate(n):
        k = rng.binomial(n, p, 4000)
        k_other = rng.binomial(n, p_prime, 4000)
        lo = stats.beta.ppf(level, np.maximum(k, 1), n - k + 1) * (k > 0)
        hi = stats.beta.ppf(1 - level, k_other + 1, n - k_other)
        return np.mean(lo > np.e * hi)

    assert rate(size.n) >= 0.9 - 3 * np.sqrt(0.09 / 4000)
    assert rate(size.n // 2) < 0.9

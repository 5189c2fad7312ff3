"""The constant-work samplers (issue 20): exact laws, and the same work for every value.

Work is checked, never wall-clock time: a counting source records the
random bytes every call asks for, which is the work a sampler does (every
other operation is vectorised over arrays whose shapes the requests fix).
The discrete Laplace asks the same bytes whatever it draws; the rejection
samplers repeat one fixed request per round, and their number of rounds is
independent of the value kept (chi-square tests on seeded draws).
"""

from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from invariantdp.distributions import discrete_gaussian as dg_law
from invariantdp.distributions import discrete_laplace as dl_law
from invariantdp.distributions import tulap_from_privacy
from invariantdp.distributions._constant import (
    GaussianPlan,
    LaplacePlan,
    Thresholds,
    _bernoulli_bounds,
    precision,
)
from invariantdp.distributions._exact_samplers import TulapPlan
from invariantdp.mechanisms import discrete_laplace_mechanism
from invariantdp.mechanisms._permutation import _thinning, sources_secure
from invariantdp.privacy import zcdp_tradeoff
from invariantdp.secure import SecureGenerator


class Counting:
    """A source that records the size of every request (seeded numpy, or secrets)."""

    def __init__(self, base):
        self.base = base
        self.requests = []

    def bytes(self, n):
        self.requests.append(n)
        return self.base.bytes(n)


def _chi2(draws, pmf, lo, hi):
    k = np.arange(lo + 1, hi)
    obs = [np.sum(draws <= lo), *[np.sum(draws == j) for j in k], np.sum(draws >= hi)]
    p = np.concatenate([[pmf(np.arange(lo - 4000, lo + 1)).sum()], pmf(k), [0.0]])
    p[-1] = 1.0 - p.sum()
    return stats.chisquare(obs, p * draws.size).pvalue


@pytest.mark.parametrize("t", [Fraction(1), Fraction(7, 3), Fraction(1) / Fraction(0.1)])
def test_laplace_plan_with_a_forced_tail_fits_the_exact_law(t):
    """Few binary digits (M small): the tail Q >= 1 is taken often, and completed exactly."""
    plan = LaplacePlan(t, 2, 1.0)
    y, tail = plan.draw(np.random.default_rng(1), 40_000)
    assert tail.mean() > 0.05  # the slow path runs
    assert _chi2(y, lambda k: dl_law.pmf(k, float(t)), -12, 12) > 1e-3


@pytest.mark.parametrize("sigma2", [Fraction(9, 4), Fraction(1, 50), Fraction(400)])
def test_gaussian_plan_with_a_forced_tail_fits_the_exact_law(sigma2):
    plan = GaussianPlan(sigma2, 2, 1.0)
    y = plan.draw(np.random.default_rng(2), 12_000)
    s = float(sigma2) ** 0.5
    lo, hi = int(-3 * s) - 1, int(3 * s) + 1
    assert _chi2(y, lambda k: dg_law.pmf(k, s), lo, hi) > 1e-3


def test_a_tie_is_resolved_with_the_exact_probability():
    """A tie u == c (probability 2**-B) is Bernoulli(pi 2**B - c): checked directly."""
    pi_bounds = _bernoulli_bounds(Fraction(1, 3), "logistic")
    th = Thresholds([pi_bounds], 2)
    lo, _ = pi_bounds(80)
    theta = float(lo * 2**128 - th.ints[0])
    gen = np.random.default_rng(3)
    hits = sum(th.exact_tie(0, gen) for _ in range(4000))
    assert stats.binomtest(hits, 4000, theta).pvalue > 1e-3
    # and a forced tie in a test gives the same
    u = np.array([[[th.ints[0] >> 64, th.ints[0] & (2**64 - 1)]]], dtype=np.uint64)
    outs = [bool(th.test(u, gen)[0, 0]) for _ in range(4000)]
    assert stats.binomtest(sum(outs), 4000, theta).pvalue > 1e-3


class CountingSecure(SecureGenerator):
    """The secure source, recording its requests (a SecureGenerator: accepted as ``rng``)."""

    def __init__(self):
        self.requests = []

    def bytes(self, n):
        self.requests.append(n)
        return super().bytes(n)


def test_discrete_laplace_asks_the_same_bytes_whatever_it_draws():
    """No rejection, no loop: every secure release of one cell makes the same requests."""
    source = CountingSecure()
    patterns, values = set(), set()
    for x in (0, 1) * 300:
        source.requests.clear()
        rel = discrete_laplace_mechanism(x, epsilon=1.0, rng=source, secure=True)
        patterns.add(tuple(source.requests))
        values.add(int(rel.value) - x)
    assert len(values) > 5  # many noise values, one pattern of work
    assert len(patterns) == 1
    (pattern,) = patterns
    plan_words = LaplacePlan(Fraction(1), *precision(1.0, 1)).tests * 2  # W = 2
    assert pattern == (8 * plan_words, 8)  # the tests' words, then the sign word


def _rounds_and_values(plan_draw, per_call, n):
    source = Counting(np.random.default_rng(5))
    rounds, values = [], []
    for _ in range(n):
        source.requests.clear()
        values.append(plan_draw(source))
        rounds.append(len(source.requests) // per_call)
        assert len(source.requests) % per_call == 0
    return np.array(rounds), np.array(values)


def _independence_pvalue(rounds, values):
    r = np.minimum(rounds, 2)
    v = np.minimum(np.abs(values), 2)
    table = np.array([[np.sum((r == i) & (v == j)) for j in range(3)] for i in (1, 2)])
    return stats.chi2_contingency(table).pvalue


def test_gaussian_rounds_are_independent_of_the_value():
    plan = GaussianPlan(Fraction(9, 4), 2, 80.0)
    # one round of a single cell: 4 trials, each a proposal (tests, sign) then its acceptance
    rounds, values = _rounds_and_values(lambda g: int(plan.draw(g, 1)[0]), 3, 6000)
    assert set(np.unique(rounds)) >= {1, 2}
    assert _independence_pvalue(rounds, values) > 1e-3


def test_tulap_truncation_rounds_are_independent_of_the_value():
    plan = TulapPlan(0.5, 0.2, 2, 80.0)  # 1 - q = 0.58: about 2 in 5 trials rejected

    def one(g):
        gg, j = plan.draw(g, 1)
        return int(gg[0])

    # one round: the Laplace tests and sign, the cell, the boundary's refinement word
    rounds, values = _rounds_and_values(one, 4, 6000)
    assert set(np.unique(rounds)) >= {1, 2}
    assert _independence_pvalue(rounds, values) > 1e-3
    law = tulap_from_privacy(0.5, 0.2)
    g, u = plan.draw(np.random.default_rng(6), 20_000)
    edges = law.ppf(np.linspace(0, 1, 21))
    assert (
        stats.chisquare(np.histogram(g + (u - 2**52 + 0.5) * 2.0**-53, bins=edges)[0]).pvalue > 1e-3
    )


# ---------------------------------------------------------------------------
# the secure swap: exact law, work independent of which records swap
# ---------------------------------------------------------------------------


def test_thinning_makes_every_attempt_kept_with_probability_one_third():
    from math import factorial

    d = [1, 0]  # derangement numbers by d(m) = (m - 1)(d(m-1) + d(m-2))
    for m in range(2, 41):
        d.append((m - 1) * (d[-1] + d[-2]))
    for m in [0, 2, 3, 4, 7, 20, 40]:
        assert _thinning(m) * Fraction(d[m], factorial(m)) == Fraction(1, 3)
        assert Fraction(2, 3) <= _thinning(m) <= 1 or m == 0


def test_secure_swap_law_with_strata_of_two_three_and_five():
    from tests.reliability.test_secure_sampling import _swap_law

    j = np.repeat([0, 1, 2], [2, 3, 5])
    k = np.array(list("AB") + list("ABB") + list("ABCCD"))
    gen = np.random.default_rng(7)
    draws = [sources_secure(j, 3, 0.3, gen)[0] for _ in range(6000)]
    for lo, hi in [(0, 2), (2, 5), (5, 10)]:
        law = _swap_law(list(k[lo:hi]), 0.3)
        keys = sorted(law)
        seen = {}
        for src in draws:
            z = tuple(k[src[lo:hi]])
            seen[z] = seen.get(z, 0) + 1
        assert set(seen) <= set(keys)
        obs = np.array([seen.get(key, 0) for key in keys])
        exp = np.array([law[key] for key in keys]) * len(draws)
        keep = exp >= 5
        obs = np.concatenate([obs[keep], [obs[~keep].sum()]])
        exp = np.concatenate([exp[keep], [exp[~keep].sum()]])
        if exp[-1] == 0:
            obs, exp = obs[:-1], exp[:-1]
        assert stats.chisquare(obs, exp).pvalue > 1e-3


def test_secure_swap_work_does_not_depend_on_how_many_records_swap():
    """One stratum of 4 records: the requests of the selection rounds are fixed, and the
    number of derangement attempts is independent of the number selected (m = 0, 2, 3, 4)."""
    j = np.zeros(4, dtype=np.int64)
    source = Counting(np.random.default_rng(8))
    ms, attempts = [], []
    for _ in range(6000):
        source.requests.clear()
        src, _tv = sources_secure(j, 1, 0.5, source)
        ms.append(int(np.count_nonzero(src != np.arange(4))))
        # each attempt asks the keys (4 words) then the thinning (3 words); the selection
        # asks 4 words per round, so count the attempts by their thinning requests
        attempts.append(sum(1 for r in source.requests if r == 24))
    ms, attempts = np.array(ms), np.minimum(np.array(attempts), 3)
    table = np.array(
        [[np.sum((ms == m) & (attempts == a)) for a in (1, 2, 3)] for m in (0, 2, 3, 4)]
    )
    assert table.sum() == 6000 and np.all(table.sum(axis=1) > 100)
    assert stats.chi2_contingency(table).pvalue > 1e-3
    # and the attempts are kept with probability 1/3: P(one attempt) = 1/3
    assert stats.binomtest(int(np.sum(attempts == 1)), 6000, 1 / 3).pvalue > 1e-3


def test_zcdp_tradeoff_shifts_by_the_timing_tv():
    f, g = zcdp_tradeoff(0.5), zcdp_tradeoff(0.5, tv=1e-6)
    alpha = np.linspace(0.0, 1.0, 201)
    assert np.all(g(alpha) <= f(alpha) + 1e-15)
    # at type I error ~1e-3 the shift is visible, at 0.5 it is the size of tv
    assert f(1 - 1e-3) - g(1 - 1e-3) > 1e-6
    assert 0 <= f(0.5) - g(0.5) < 1e-4
    with pytest.raises(ValueError, match="`tv`"):
        zcdp_tradeoff(0.5, tv=1.5)

"""Numerical robustness: Tulap, CND and the tests' p-values for counts up to 1e8.

Property tests over epsilon in [1e-3, 50] and counts up to 1e8: values stay
finite, in range and monotone; and over every epsilon in [1e-300, 1e300]
(log-uniform) and delta in [0, 1): the Tulap law, p-values, intervals and
power stay finite and in range.  numpy RuntimeWarnings are errors in the
test suite, so these tests also check that normal use raises none.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from invariantdp import ump_binomial_test, umpu_odds_ratio_power, umpu_odds_ratio_test
from invariantdp.distributions import canonical_noise, tulap_from_privacy
from invariantdp.privacy import eps_delta

EPS = st.floats(-3.0, np.log10(50.0)).map(lambda e: float(10.0**e))
DELTA = st.one_of(st.just(0.0), st.floats(1e-12, 0.5))
COUNT = st.integers(0, 8).flatmap(lambda k: st.integers(0, 10**k))
#: every property runs twice: the "ci" profile (25 replayed examples) in the fast suite,
#: the "slow" profile (400 fresh examples) under ``-m slow``
PROFILES = [pytest.param("ci", id="fast"), pytest.param("slow", id="slow", marks=pytest.mark.slow)]


def run_property(profile, strategies, check):
    """``check`` over the examples of ``strategies`` drawn by the Hypothesis ``profile``."""
    settings(settings.get_profile(profile))(given(*strategies)(check))()


def _nondecreasing(a, tol=0.0):
    return bool(np.all(np.diff(a) >= -tol))


def check_tulap(epsilon, delta, xs):
    """cdf, sf, logcdf and ppf of Tulap finite, in range, monotone and consistent."""
    law = tulap_from_privacy(epsilon, delta)
    x = np.sort(np.asarray(xs, dtype=float))
    cdf, sf, logcdf = law.cdf(x), law.sf(x), law.logcdf(x)
    assert np.all(np.isfinite(cdf)) and np.all((cdf >= 0) & (cdf <= 1))
    assert _nondecreasing(cdf)
    assert np.allclose(cdf + sf, 1.0, atol=1e-12)
    assert not np.any(np.isnan(logcdf)) and np.all(logcdf <= 0)
    finite = logcdf[np.isfinite(logcdf)]
    assert _nondecreasing(finite, tol=1e-12)
    assert np.allclose(np.exp(logcdf), cdf, rtol=1e-9, atol=1e-300)
    u = np.linspace(0.0, 1.0, 201)[1:-1]
    q = law.ppf(u)
    assert np.all(np.isfinite(q)) and _nondecreasing(q)
    assert np.allclose(law.cdf(q), u, atol=1e-12)


@pytest.mark.parametrize("profile", PROFILES)
def test_tulap_finite_and_monotone(profile):
    xs = st.lists(st.floats(-1e8, 1e8), min_size=2, max_size=50)
    run_property(profile, (EPS, DELTA, xs), check_tulap)


def check_cnd(epsilon, delta, xs):
    f = canonical_noise(eps_delta(epsilon, delta))
    x = np.sort(np.asarray(xs, dtype=float))
    cdf = f.cdf(x)
    assert np.all(np.isfinite(cdf)) and np.all((cdf >= 0) & (cdf <= 1))
    assert _nondecreasing(cdf, tol=1e-15)
    # the CND of f_{eps,delta} is Tulap (Cho & Awan, Def. 35; Awan & Dong 2022)
    assert np.allclose(cdf, tulap_from_privacy(epsilon, delta).cdf(x), atol=1e-9)


@pytest.mark.parametrize("profile", PROFILES)
def test_cnd_finite_and_monotone(profile):
    xs = st.lists(st.floats(-60.0, 60.0), min_size=2, max_size=20)
    run_property(profile, (EPS, DELTA, xs), check_cnd)


@st.composite
def tables(draw, count=COUNT):
    """2 x 2 margins (t1., t2., t.1, t.2) with counts drawn by ``count``."""
    t1, t2 = draw(count), draw(count)
    if t1 + t2 == 0:
        t1 = 1
    c1 = draw(st.integers(0, t1 + t2))
    return t1, t2, c1, t1 + t2 - c1


def check_odds_ratio(margins, epsilon, delta, fracs, alternative):
    t1, t2, c1, _ = margins
    lo, hi = max(0, c1 - t2), min(t1, c1)
    us = np.sort([lo - 3.0 + f * (hi - lo + 6.0) for f in fracs])
    p = np.array(
        [
            umpu_odds_ratio_test(
                u, margins, epsilon=epsilon, delta=delta, alternative=alternative
            ).pvalue
            for u in us
        ]
    )
    assert np.all(np.isfinite(p)) and np.all((p >= 0) & (p <= 1))
    # "greater": larger released statistics are more significant
    mono = -p if alternative == "greater" else p
    assert _nondecreasing(mono, tol=1e-9)


#: both alternatives with the "ci" profile; "greater" with the slow one
ALTERNATIVES = [
    pytest.param("ci", "greater", id="fast-greater"),
    pytest.param("ci", "less", id="fast-less"),
    pytest.param("slow", "greater", id="slow-greater", marks=pytest.mark.slow),
]


@pytest.mark.parametrize("profile, alternative", ALTERNATIVES)
def test_odds_ratio_pvalue_finite_and_monotone(profile, alternative):
    run_property(
        profile,
        (tables(), EPS, DELTA, st.lists(st.floats(0, 1), min_size=2, max_size=4)),
        lambda margins, epsilon, delta, fracs: check_odds_ratio(
            margins, epsilon, delta, fracs, alternative
        ),
    )


def check_binomial(n, p0, epsilon, delta, fracs, alternative):
    zs = np.sort([-3.0 + f * (n + 6.0) for f in fracs])
    p = np.array(
        [
            ump_binomial_test(
                z, n, p0, epsilon=epsilon, delta=delta, alternative=alternative
            ).pvalue
            for z in zs
        ]
    )
    assert np.all(np.isfinite(p)) and np.all((p >= 0) & (p <= 1))
    mono = -p if alternative == "greater" else p
    assert _nondecreasing(mono, tol=1e-9)


N_TRIALS = st.integers(1, 8).flatmap(lambda k: st.integers(1, 10**k))
P0 = st.floats(1e-3, 1 - 1e-3)


@pytest.mark.parametrize("profile, alternative", ALTERNATIVES)
def test_binomial_pvalue_finite_and_monotone(profile, alternative):
    run_property(
        profile,
        (N_TRIALS, P0, EPS, DELTA, st.lists(st.floats(0, 1), min_size=2, max_size=4)),
        lambda n, p0, epsilon, delta, fracs: check_binomial(
            n, p0, epsilon, delta, fracs, alternative
        ),
    )


@pytest.mark.parametrize("epsilon", [1e-3, 1.0, 50.0])
def test_extreme_counts_give_finite_intervals(epsilon):
    res = umpu_odds_ratio_test(
        5e7 + 12.3, (10**8, 10**8, 10**8, 10**8), epsilon=epsilon, alternative="two-sided"
    )
    ci = res.confidence_interval()
    assert np.isfinite(res.pvalue) and np.isfinite(res.estimate)
    assert 0 < ci.low <= res.estimate <= ci.high < np.inf
    b = ump_binomial_test(3e7 + 0.4, 10**8, 0.3, epsilon=epsilon, alternative="greater")
    assert np.isfinite(b.pvalue) and 0 <= b.pvalue <= 1


# --- every epsilon in [1e-300, 1e300] (issue 10, items 3b and 4c) ----------------------------

EPS_ANY = st.floats(-300.0, 300.0).map(lambda e: float(10.0**e))
DELTA_ANY = st.one_of(st.just(0.0), st.floats(0.0, 1.0, exclude_max=True))


@pytest.mark.parametrize("profile", PROFILES)
def test_tulap_any_epsilon(profile):
    xs = st.lists(st.floats(-1e300, 1e300), min_size=2, max_size=30)
    run_property(profile, (EPS_ANY, DELTA_ANY, xs), check_tulap)


SMALL_COUNT = st.integers(0, 4).flatmap(lambda k: st.integers(0, 10**k))


def check_odds_ratio_any(margins, epsilon, delta, frac):
    t1, t2, c1, _ = margins
    lo, hi = max(0, c1 - t2), min(t1, c1)
    u = lo - 2.0 + frac * (hi - lo + 4.0)
    for alt in ("greater", "less", "two-sided"):
        res = umpu_odds_ratio_test(u, margins, epsilon=epsilon, delta=delta, alternative=alt)
        assert np.isfinite(res.pvalue) and 0 <= res.pvalue <= 1
    ci = res.confidence_interval(0.9)
    assert 0 <= ci.low <= ci.high <= np.inf
    power = umpu_odds_ratio_power(
        margins,
        epsilon=epsilon,
        delta=delta,
        odds_ratio=[0.5, 1.0, 4.0],
        alpha=0.1,
        alternative="greater",
    )
    assert np.all(np.isfinite(power)) and np.all((power >= 0) & (power <= 1))
    assert power[1] == pytest.approx(0.1, abs=1e-8)  # the size is exact at any epsilon


@pytest.mark.parametrize("profile", PROFILES)
def test_odds_ratio_any_epsilon(profile):
    strategies = (tables(SMALL_COUNT), EPS_ANY, DELTA_ANY, st.floats(0, 1))
    run_property(profile, strategies, check_odds_ratio_any)


def check_binomial_any(n, p0, epsilon, delta, fracs):
    zs = np.sort([-2.0 + f * (n + 4.0) for f in fracs])
    for alt in ("greater", "less"):
        p = [
            ump_binomial_test(z, n, p0, epsilon=epsilon, delta=delta, alternative=alt).pvalue
            for z in zs
        ]
        assert np.all(np.isfinite(p)) and np.all((np.array(p) >= 0) & (np.array(p) <= 1))
        assert _nondecreasing(-np.array(p) if alt == "greater" else p, tol=1e-9)
    for alt in ("greater", "less", "two-sided"):
        res = ump_binomial_test(zs[0], n, p0, epsilon=epsilon, delta=delta, alternative=alt)
        assert np.isfinite(res.pvalue) and 0 <= res.pvalue <= 1
        ci = res.confidence_interval(0.9)
        assert 0 <= ci.low <= ci.high <= 1


@pytest.mark.parametrize("profile", PROFILES)
def test_binomial_any_epsilon(profile):
    fracs = st.lists(st.floats(0, 1), min_size=2, max_size=3)
    run_property(profile, (N_TRIALS, P0, EPS_ANY, DELTA_ANY, fracs), check_binomial_any)

import csv
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

import invariantdp as idp
from invariantdp.distributions import tulap, tulap_from_privacy
from invariantdp.mechanisms import laplace_mechanism as laplace
from invariantdp.mechanisms import tulap_mechanism

REF = Path(__file__).resolve().parents[1] / "data" / "binomialDP_reference.csv"


def _reference():
    with REF.open() as fh:
        rows = [r for r in csv.DictReader(line for line in fh if not line.startswith("#"))]
    return {r["quantity"]: r for r in rows}


def _noise(row):
    if row["b"]:
        return dict(noise=tulap(float(row["b"]), float(row["q"])))
    return dict(epsilon=float(row["epsilon"]), delta=float(row["delta"]))


def test_binomialDP_reference_values():
    ref = _reference()
    r = ref["tulap_cdf"]
    assert tulap.cdf(0.5, float(r["b"]), float(r["q"])) == pytest.approx(
        float(r["expected"]), abs=float(r["tolerance"])
    )
    for key, alt in (("pvalue_right", "greater"), ("pvalue_two_sided", "two-sided")):
        r = ref[key]
        res = idp.ump_binomial_test(
            float(r["statistic"]), int(r["n"]), float(r["p0"]), alternative=alt, **_noise(r)
        )
        assert res.pvalue == pytest.approx(float(r["expected"]), abs=float(r["tolerance"]))
    r = ref["ci_lower_one_sided"]
    res = idp.ump_binomial_test(
        float(r["statistic"]), int(r["n"]), 0.5, alternative="greater", **_noise(r)
    )
    assert res.confidence_interval(0.95).low == pytest.approx(
        float(r["expected"]), abs=float(r["tolerance"])
    )
    r = ref["ci_upper_one_sided"]
    res = idp.ump_binomial_test(
        float(r["statistic"]), int(r["n"]), 0.5, alternative="less", **_noise(r)
    )
    assert res.confidence_interval(0.95).high == pytest.approx(
        float(r["expected"]), abs=float(r["tolerance"])
    )
    lo, hi = ref["ci_two_sided_low"], ref["ci_two_sided_high"]
    res = idp.ump_binomial_test(
        float(lo["statistic"]), int(lo["n"]), 0.5, alternative="two-sided", **_noise(lo)
    )
    ci = res.confidence_interval(0.95)
    assert ci.low == pytest.approx(float(lo["expected"]), abs=float(lo["tolerance"]))
    assert ci.high == pytest.approx(float(hi["expected"]), abs=float(hi["tolerance"]))


def test_pvalue_is_the_expectation_over_the_binomial():
    n, p0, z = 25, 0.3, 9.4
    k = np.arange(n + 1)
    F = tulap_from_privacy(0.8, 0.01)
    expected = np.sum(stats.binom(n, p0).pmf(k) * F.cdf(k - z))
    res = idp.ump_binomial_test(z, n, p0, epsilon=0.8, delta=0.01, alternative="greater")
    assert res.pvalue == pytest.approx(expected, rel=1e-12)
    less = idp.ump_binomial_test(z, n, p0, epsilon=0.8, delta=0.01, alternative="less")
    assert less.pvalue == pytest.approx(1 - expected, rel=1e-12)


def test_size_and_uniformity(rng):
    n, p0, eps, n_rep = 40, 0.4, 1.0, 3000
    x = rng.binomial(n, p0, size=n_rep)
    z = x + tulap.rvs(np.exp(-eps), 0.0, size=n_rep, random_state=rng)
    p = np.array(
        [idp.ump_binomial_test(zi, n, p0, epsilon=eps, alternative="greater").pvalue for zi in z]
    )
    assert stats.kstest(p, "uniform").pvalue > 1e-3


def test_interval_coverage(rng):
    n, p, eps, n_rep = 50, 0.35, 1.0, 300
    x = rng.binomial(n, p, size=n_rep)
    z = x + tulap.rvs(np.exp(-eps), 0.0, size=n_rep, random_state=rng)
    cover = []
    for zi in z:
        res = idp.ump_binomial_test(zi, n, 0.5, epsilon=eps, alternative="greater")
        cover.append(res.confidence_interval(0.9).low <= p)
    assert abs(np.mean(cover) - 0.9) < 4 * np.sqrt(0.09 / n_rep)


def test_large_n():
    res = idp.ump_binomial_test(50_000_100.5, 10**8, 0.5, epsilon=0.5, alternative="greater")
    z = 100.5 / np.sqrt(10**8 * 0.25 + 2 * np.exp(-0.5) / (1 - np.exp(-0.5)) ** 2)
    assert res.pvalue == pytest.approx(stats.norm.sf(z), rel=1e-3)


@pytest.mark.parametrize(
    "args,kwargs,match",
    [
        ((3, 0, 0.5), {}, r"`n` \(0\) must be >= 1"),
        ((3, 10, 1.5), {}, r"`null_p` \(1.5\) must be in \(0, 1\)"),
        ((3, 10.5, 0.5), {}, "`n` must be an integer"),
        ((3, 10, 0.5), dict(epsilon=-2), r"`epsilon` \(-2.0\) must be > 0"),
        ((3, 10, 0.5), dict(alternative="up"), r"`alternative` \('up'\) must be one of"),
    ],
)
def test_bad_input(args, kwargs, match):
    kw = dict(epsilon=1.0)
    kw.update(kwargs)
    with pytest.raises((ValueError, TypeError), match=match):
        idp.ump_binomial_test(*args, **kw)


# --- extreme epsilon (issue 10, items 3b and 4c) -------------------------------------------


@pytest.mark.parametrize("n,p0,x", [(20, 0.3, 7), (10, 0.5, 3), (200, 0.1, 31), (5, 0.9, 5)])
@pytest.mark.parametrize("epsilon", [50.0, 746.0, 1e4, 1e300])
def test_pvalue_tends_to_binomial_mid_p(n, p0, x, epsilon):
    """ump_binomial_test was nan above epsilon ~745; the limit is the binomial mid-p."""
    B = stats.binom(n, p0)
    res = idp.ump_binomial_test(x, n, p0, epsilon=epsilon, alternative="greater")
    assert res.pvalue == pytest.approx(B.sf(x) + B.pmf(x) / 2, rel=1e-12, abs=1e-15)
    res = idp.ump_binomial_test(x, n, p0, epsilon=epsilon, alternative="less")
    assert res.pvalue == pytest.approx(B.cdf(x - 1) + B.pmf(x) / 2, rel=1e-12, abs=1e-15)
    ci = idp.ump_binomial_test(x, n, p0, epsilon=epsilon, alternative="two-sided")
    low, high = ci.confidence_interval()
    assert 0 <= low <= high <= 1 and np.isfinite(ci.estimate)


def test_pvalue_continuous_across_745():
    eps = np.linspace(700.0, 800.0, 26)
    at_x = [idp.ump_binomial_test(7, 20, 0.3, epsilon=e, alternative="greater").pvalue for e in eps]
    assert np.ptp(at_x) == 0.0
    above = [
        idp.ump_binomial_test(21.2, 20, 0.3, epsilon=e, alternative="greater").pvalue for e in eps
    ]
    assert np.all(np.isfinite(above)) and np.all(np.diff(above) <= 0)
    assert above[0] == pytest.approx(0.3**20 * 0.3 * np.exp(-700.0), rel=1e-9)


@pytest.mark.parametrize("epsilon", [1e-17, 1e-300])
def test_tiny_epsilon(epsilon):
    """epsilon below ~1.1e-16 gave ZeroDivisionError."""
    res = idp.ump_binomial_test(7, 20, 0.3, epsilon=epsilon, alternative="greater")
    assert res.pvalue == pytest.approx(0.5, abs=1e-12)
    with pytest.raises(ValueError, match="estimate .* is not resolvable in double precision"):
        _ = res.estimate
    assert "not resolvable at this epsilon" in res.summary()
    # small but resolvable: the estimate is the proportion with n p = z (p ~ 1/2 + (np - z) eps/2)
    assert idp.ump_binomial_test(
        7, 20, 0.3, epsilon=1e-4, alternative="greater"
    ).estimate == pytest.approx(0.35, rel=1e-3)
    assert idp.ump_binomial_test(
        7, 20, 0.3, epsilon=epsilon, alternative="two-sided"
    ).confidence_interval() == (0.0, 1.0)
    # delta > 0: Uniform(-1/(2 delta), 1/(2 delta)) noise in the limit
    k = np.arange(21)
    expected = np.sum(stats.binom(20, 0.3).pmf(k) * np.clip((k - 7.0) * 0.25 + 0.5, 0, 1))
    got = idp.ump_binomial_test(
        7, 20, 0.3, epsilon=epsilon, delta=0.25, alternative="greater"
    ).pvalue
    assert got == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("alternative", ["greater", "less", "two-sided"])
def test_pvalue_never_above_one_for_large_n(alternative):
    # found by the slow hypothesis suite: with n = 15,569,747 and z below the
    # support, the tail sums grown over different windows gave 1 + 2**-25
    from invariantdp import ump_binomial_test

    for z in (-2.0, 0.0, 15569749.0):
        p = ump_binomial_test(z, 15569747, 0.75, epsilon=1.0, alternative=alternative).pvalue
        assert 0.0 <= p <= 1.0


# --- conventions (issue 11): the null is `null_p`, a Release is accepted, results cache --------


def test_release_of_a_count_is_accepted():
    release = tulap_mechanism(7, epsilon=0.8, delta=1e-6, rng=3)
    res = idp.ump_binomial_test(release, 20, 0.3, alternative="greater")
    same = idp.ump_binomial_test(
        float(release.value), 20, 0.3, epsilon=0.8, delta=1e-6, alternative="greater"
    )
    assert res.pvalue == same.pvalue
    assert (res.epsilon, res.delta, res.noise) == (0.8, 1e-6, same.noise)


@pytest.mark.parametrize(
    "kwargs,match",
    [
        (dict(epsilon=0.8), "Release carries its own noise law"),
        (dict(delta=1e-6), "Release carries its own noise law"),
        (dict(noise=tulap(0.5, 0.0)), "Release carries its own noise law"),
    ],
)
def test_release_refuses_a_second_noise_law(kwargs, match):
    release = tulap_mechanism(7, epsilon=0.8, delta=1e-6, rng=3)
    with pytest.raises(ValueError, match=match):
        idp.ump_binomial_test(release, 20, 0.3, **kwargs)


def test_release_must_be_one_tulap_count():
    with pytest.raises(ValueError, match="needs Tulap .* the Release has 'laplace'"):
        idp.ump_binomial_test(laplace(7.0, epsilon=1.0, rng=1), 20, 0.3, alternative="greater")
    with pytest.raises(ValueError, match=r"must hold one count .* shape \(2,\)"):
        idp.ump_binomial_test(
            tulap_mechanism([3, 4], epsilon=1.0, rng=1), 20, 0.3, alternative="greater"
        )


def test_p0_is_a_deprecated_alias_of_null_p():
    new = idp.ump_binomial_test(3, 10, null_p=0.4, epsilon=1.0, alternative="greater")
    with pytest.warns(DeprecationWarning, match="`p0` .* use `null_p`"):
        old = idp.ump_binomial_test(3, 10, p0=0.4, epsilon=1.0, alternative="greater")
    assert old == new
    with pytest.warns(DeprecationWarning, match="`p0` of BinomialTestResult"):
        assert new.p0 == new.null_p == 0.4
    with pytest.raises(TypeError, match="both `p0`"):
        idp.ump_binomial_test(3, 10, p0=0.4, null_p=0.4, epsilon=1.0, alternative="greater")


def test_estimate_and_interval_are_computed_once():
    res = idp.ump_binomial_test(3, 10, 0.5, epsilon=1.0, alternative="two-sided")
    assert res.estimate is res.estimate
    assert res.confidence_interval() is res.confidence_interval(0.95)
    assert res.confidence_interval(0.9) is not res.confidence_interval(0.95)
    with pytest.raises(ValueError, match="confidence_level"):
        res.confidence_interval(1.5)


def test_str_is_the_summary_text():
    res = idp.ump_binomial_test(3, 10, 0.5, epsilon=1.0, alternative="greater")
    assert isinstance(str(res), str)
    assert str(res) == str(res.summary())
    assert "null proportion p0" in res.summary()


def test_a_statistic_far_outside_zero_to_n_warns():
    import warnings

    with pytest.warns(UserWarning, match=r"below the smallest possible count of n trials"):
        idp.ump_binomial_test(-500.0, 10, 0.5, epsilon=1.0, alternative="greater")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        idp.ump_binomial_test(-3.0, 10, 0.5, epsilon=1.0, alternative="greater")

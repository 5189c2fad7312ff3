import numpy as np
import pytest
from scipy import optimize, stats

import invariantdp as idp
from invariantdp.distributions import tulap, tulap_from_privacy
from invariantdp.families import TULAP
from invariantdp.mechanisms import odds_ratio_release

MARGINS = [(20, 20, 20, 20), (7, 13, 9, 11), (30, 5, 12, 23), (1, 9, 4, 6), (50, 70, 40, 80)]


def _hyper(margins):
    t1, t2, c1, _ = margins
    return stats.hypergeom(t1 + t2, t1, c1)  # number of row-1 items among c1 draws


def _support(margins):
    t1, t2, c1, _ = margins
    return np.arange(max(0, c1 - t2), min(t1, c1) + 1)


def _pvalue_brute_force(u, margins, eps, delta=0.0, w=1.0):
    """Eq. 6 summed over the whole support with scipy's noncentral law."""
    t1, t2, c1, _ = margins
    h = _support(margins)
    pmf = stats.nchypergeom_fisher(t1 + t2, t1, c1, w).pmf(h)
    return float(np.sum(pmf * tulap_from_privacy(eps, delta).cdf(h - u)))


@pytest.mark.parametrize("margins", MARGINS)
@pytest.mark.parametrize("eps,delta", [(1.0, 0.0), (0.3, 0.01), (3.0, 1e-4)])
def test_size_is_exact(margins, eps, delta):
    """E_{H ~ Hyper(w=1)} phi*(H) = alpha, summed independently with scipy."""
    for alpha in (0.01, 0.05, 0.2):
        m = idp.umpu_odds_ratio_critical_value(
            margins, epsilon=eps, delta=delta, alpha=alpha, alternative="greater"
        )
        h = _support(margins)
        size = np.sum(_hyper(margins).pmf(h) * tulap_from_privacy(eps, delta).cdf(h - m))
        assert size == pytest.approx(alpha, abs=1e-10)


@pytest.mark.parametrize("margins", MARGINS[:3])
def test_theorem_37_rejection_probability(margins):
    """P(p <= alpha | x) = phi*(x) = F(x11 - m(t)), computed exactly."""
    eps, alpha = 0.7, 0.05
    F = tulap_from_privacy(eps)
    m = idp.umpu_odds_ratio_critical_value(margins, epsilon=eps, alpha=alpha, alternative="greater")

    def p_of(u):
        return idp.umpu_odds_ratio_test(u, margins, epsilon=eps, alternative="greater").pvalue

    # the p-value decreases in U, so {p <= alpha} = {U >= u*}
    u_star = optimize.brentq(lambda u: p_of(u) - alpha, -50, 100, xtol=1e-12)
    for x in _support(margins):
        reject = F.sf(u_star - x)  # P(x + N >= u*)
        assert reject == pytest.approx(F.cdf(x - m), abs=1e-9)


def test_pvalues_uniform_under_null(rng):
    margins = (40, 60, 45, 55)
    eps = 1.0
    n_rep = 3000
    x = _hyper(margins).rvs(size=n_rep, random_state=rng)
    u = x + tulap.rvs(np.exp(-eps), 0.0, size=n_rep, random_state=rng)
    p = np.array(
        [
            idp.umpu_odds_ratio_test(ui, margins, epsilon=eps, alternative="greater").pvalue
            for ui in u
        ]
    )
    assert stats.kstest(p, "uniform").pvalue > 1e-3
    for alpha in (0.05, 0.1):
        se = np.sqrt(alpha * (1 - alpha) / n_rep)
        assert abs(np.mean(p <= alpha) - alpha) < 4 * se


@pytest.mark.parametrize("margins", MARGINS)
def test_pvalue_matches_brute_force(margins, rng):
    for u in rng.uniform(-3, max(margins) + 3, size=5):
        for w in (0.3, 1.0, 4.0):
            got = idp.umpu_odds_ratio_test(
                u, margins, epsilon=0.9, null_odds_ratio=w, alternative="greater"
            ).pvalue
            assert got == pytest.approx(_pvalue_brute_force(u, margins, 0.9, w=w), rel=1e-10)


def test_windowed_sum_matches_full_support_at_large_n():
    margins = (400_000, 600_000, 300_000, 700_000)
    h = _support(margins)
    pmf = _hyper(margins).pmf(h)
    for u in (120_000.4, 120_450.2, 119_100.0):
        full = np.sum(pmf * tulap_from_privacy(0.5).cdf(h - u))
        got = idp.umpu_odds_ratio_test(u, margins, epsilon=0.5, alternative="greater").pvalue
        assert got == pytest.approx(full, rel=1e-8)


def test_tiny_pvalues_stay_accurate_in_log_space():
    margins = (200, 200, 200, 200)
    # U far in the upper tail: compare with the full-support sum in log space
    h = _support(margins)
    logpmf = _hyper(margins).logpmf(h)
    u = 160.0
    logF = tulap.logcdf(h - u, np.exp(-2.0), 0.0)
    expected = np.exp(np.logaddexp.reduce(logpmf + logF))
    got = idp.umpu_odds_ratio_test(u, margins, epsilon=2.0, alternative="greater").pvalue
    assert 0 < expected < 1e-20
    assert got == pytest.approx(expected, rel=1e-9)


@pytest.mark.parametrize("table", [[[12, 5], [4, 9]], [[3, 1], [1, 3]], [[30, 2], [10, 25]]])
def test_large_epsilon_tends_to_fisher_mid_p(table):
    t = np.array(table)
    margins = (t[0].sum(), t[1].sum(), t[:, 0].sum(), t[:, 1].sum())
    H = _hyper(margins)
    x = t[0, 0]
    mid_p = H.sf(x) + H.pmf(x) / 2
    gaps = [
        abs(idp.umpu_odds_ratio_test(x, margins, epsilon=e, alternative="greater").pvalue - mid_p)
        for e in (1, 5, 20, 50)
    ]
    assert gaps[-1] < 1e-12
    assert all(a >= b for a, b in zip(gaps, gaps[1:], strict=False))


def test_alternatives_and_symmetry():
    margins = (20, 20, 20, 20)
    g = idp.umpu_odds_ratio_test(12.3, margins, epsilon=1.0, alternative="greater")
    s = idp.umpu_odds_ratio_test(12.3, margins, epsilon=1.0, alternative="less")
    two = idp.umpu_odds_ratio_test(12.3, margins, epsilon=1.0, alternative="two-sided")
    assert g.pvalue + s.pvalue == pytest.approx(1.0, abs=1e-12)
    assert two.pvalue == pytest.approx(2 * min(g.pvalue, s.pvalue))
    # swapping the rows of a symmetric-margin table mirrors x11 about 10
    mirror = idp.umpu_odds_ratio_test(20 - 12.3, margins, epsilon=1.0, alternative="less")
    assert mirror.pvalue == pytest.approx(g.pvalue, rel=1e-12)


def test_estimate_and_confidence_interval():
    margins = (20, 20, 20, 20)
    res = idp.umpu_odds_ratio_test(14.3, margins, epsilon=1.0, alternative="two-sided")
    est = res.estimate
    half = idp.umpu_odds_ratio_test(
        14.3, margins, epsilon=1.0, null_odds_ratio=est, alternative="greater"
    )
    assert half.pvalue == pytest.approx(0.5, abs=1e-9)
    low, high = res.confidence_interval(0.9)
    assert low < est < high
    at_low = idp.umpu_odds_ratio_test(
        14.3, margins, epsilon=1.0, null_odds_ratio=low, alternative="greater"
    )
    at_high = idp.umpu_odds_ratio_test(
        14.3, margins, epsilon=1.0, null_odds_ratio=high, alternative="less"
    )
    assert at_low.pvalue == pytest.approx(0.05, abs=1e-9)
    assert at_high.pvalue == pytest.approx(0.05, abs=1e-9)
    wider = res.confidence_interval(0.99)
    assert wider.low < low and wider.high > high
    one_sided = idp.umpu_odds_ratio_test(
        14.3, margins, epsilon=1.0, alternative="greater"
    ).confidence_interval(0.95)
    assert one_sided.high == np.inf and one_sided.low > 1


def test_interval_ends_are_infinite_without_information():
    margins = (5, 5, 5, 5)
    above = idp.umpu_odds_ratio_test(25.0, margins, epsilon=1.0, alternative="two-sided")
    assert above.confidence_interval().high == np.inf
    assert above.estimate == np.inf
    below = idp.umpu_odds_ratio_test(-20.0, margins, epsilon=1.0, alternative="two-sided")
    assert below.confidence_interval().low == 0.0
    assert below.estimate == 0.0


def test_confidence_interval_coverage(rng):
    """Inverting an exact test gives exact conditional coverage."""
    margins, w, eps, n_rep = (30, 30, 25, 35), 2.5, 1.0, 300
    t1, t2, c1, _ = margins
    x = stats.nchypergeom_fisher(t1 + t2, t1, c1, w).rvs(size=n_rep, random_state=rng)
    u = x + tulap.rvs(np.exp(-eps), 0.0, size=n_rep, random_state=rng)
    cover = []
    for ui in u:
        ci = idp.umpu_odds_ratio_test(ui, margins, epsilon=eps, alternative="two-sided")
        lo, hi = ci.confidence_interval(0.9)
        cover.append(lo <= w <= hi)
    se = np.sqrt(0.9 * 0.1 / n_rep)
    assert abs(np.mean(cover) - 0.9) < 4 * se


def test_power_function():
    margins = (50, 50, 50, 50)
    w = np.array([1.0, 1.5, 2.0, 3.0, 5.0])
    power = idp.umpu_odds_ratio_power(
        margins, epsilon=1.0, odds_ratio=w, alpha=0.05, alternative="greater"
    )
    assert power[0] == pytest.approx(0.05, abs=1e-10)
    assert np.all(np.diff(power) > 0)
    # more privacy loss, more power; the non-private limit is the mid-p test
    weaker = idp.umpu_odds_ratio_power(margins, epsilon=0.2, odds_ratio=3.0, alternative="greater")
    assert weaker < power[3]
    two = idp.umpu_odds_ratio_power(margins, epsilon=1.0, odds_ratio=[1.0], alternative="two-sided")
    assert two[0] == pytest.approx(0.05, abs=1e-10)


def test_power_matches_simulation(rng):
    margins, w, eps, n_rep = (40, 40, 40, 40), 2.5, 1.0, 4000
    power = idp.umpu_odds_ratio_power(margins, epsilon=eps, odds_ratio=w, alternative="greater")
    m = idp.umpu_odds_ratio_critical_value(margins, epsilon=eps, alternative="greater")
    x = stats.nchypergeom_fisher(80, 40, 40, w).rvs(size=n_rep, random_state=rng)
    u = x + tulap.rvs(np.exp(-eps), 0.0, size=n_rep, random_state=rng)
    se = np.sqrt(power * (1 - power) / n_rep)
    assert abs(np.mean(u >= m) - power) < 4 * se


def test_release_roundtrip_and_test_from_release():
    release = odds_ratio_release([[12, 5], [4, 9]], epsilon=1.0, delta=0.001, rng=5)
    again = idp.Release.from_json(release.to_json())
    assert again == release
    a = idp.umpu_odds_ratio_test(again, alternative="greater")
    b = idp.umpu_odds_ratio_test(
        float(release.value), (17, 13, 16, 14), epsilon=1.0, delta=0.001, alternative="greater"
    )
    assert a.pvalue == b.pvalue
    assert a.margins == (17, 13, 16, 14)
    with pytest.raises(ValueError, match="Release carries its own noise"):
        idp.umpu_odds_ratio_test(release, epsilon=1.0, alternative="greater")


def test_noise_given_directly():
    a = idp.umpu_odds_ratio_test(
        9.2, (20, 20, 20, 20), noise=tulap(0.3, 0.05), alternative="greater"
    )
    eps = -np.log(0.3)
    b = idp.umpu_odds_ratio_test(
        9.2, (20, 20, 20, 20), noise=tulap_from_privacy(eps, 0.0), alternative="greater"
    )
    assert a.pvalue != b.pvalue
    g = idp.umpu_odds_ratio_test(
        9.2, (20, 20, 20, 20), noise=stats.norm(scale=2.0), alternative="greater"
    )
    h = _support((20, 20, 20, 20))
    expected = np.sum(_hyper((20, 20, 20, 20)).pmf(h) * stats.norm(scale=2.0).cdf(h - 9.2))
    assert g.pvalue == pytest.approx(expected, rel=1e-10)


def test_summary_mentions_the_numbers():
    res = idp.umpu_odds_ratio_test(14.3, (20, 20, 20, 20), epsilon=1.0, alternative="greater")
    text = res.summary()
    assert "p-value" in text and f"{res.pvalue:.6g}" in text
    assert "confidence interval" in text


@pytest.mark.parametrize(
    "kwargs,match",
    [
        (dict(margins=(5, 5, 6, 5)), r"`margins` \(5, 5, 6, 5\) do not add up"),
        (dict(margins=(5, -1, 2, 2)), "`margins`.*non-negative"),
        (dict(margins=(5, 5.5, 5, 5.5)), "`margins`.*whole-number"),
        (dict(margins=(5, 5, 5)), "`margins` must be the four one-way margins"),
        (dict(epsilon=0.0), r"`epsilon` \(0.0\) must be > 0"),
        (dict(epsilon=-1), r"`epsilon` \(-1.0\) must be > 0"),
        (dict(delta=1.0), r"`delta` \(1.0\) must be in \[0, 1\)"),
        (dict(delta=-0.1), r"`delta` \(-0.1\) must be in \[0, 1\)"),
        (dict(alternative="bigger"), r"`alternative` \('bigger'\) must be one of"),
        (dict(null_odds_ratio=0.0), r"`null_odds_ratio` \(0.0\) must be > 0"),
        (dict(statistic=np.nan), r"`statistic` \(nan\) must not be NaN"),
    ],
)
def test_bad_input(kwargs, match):
    args = dict(statistic=3.0, margins=(5, 5, 5, 5), epsilon=1.0)
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        idp.umpu_odds_ratio_test(args.pop("statistic"), args.pop("margins"), **args)


def test_bad_alpha_and_confidence_level():
    with pytest.raises(ValueError, match=r"`alpha` \(1.5\) must be in \(0, 1\)"):
        idp.umpu_odds_ratio_power(
            (5, 5, 5, 5), epsilon=1.0, odds_ratio=2.0, alpha=1.5, alternative="greater"
        )
    res = idp.umpu_odds_ratio_test(3.0, (5, 5, 5, 5), epsilon=1.0, alternative="greater")
    with pytest.raises(ValueError, match=r"`confidence_level` \(0.0\) must be in \(0, 1\)"):
        res.confidence_interval(0.0)


def test_counts_up_to_1e8():
    n = 10**8
    margins = (n // 2, n // 2, n // 4, n - n // 4)
    res = idp.umpu_odds_ratio_test(n // 8 + 5000.5, margins, epsilon=0.01, alternative="greater")
    assert 0 < res.pvalue < 1
    ci = res.confidence_interval()
    assert 0 < ci.low < 1 < ci.high < np.inf or 0 < ci.low


# --- extreme epsilon (issue 10, items 3b and 4c) -------------------------------------------


MID_P_TABLES = [[[14, 6], [6, 14]], [[12, 5], [4, 9]], [[3, 1], [1, 3]], [[30, 2], [10, 25]]]


def _mid_p(table):
    t = np.array(table)
    margins = (t[0].sum(), t[1].sum(), t[:, 0].sum(), t[:, 1].sum())
    H = _hyper(margins)
    x = int(t[0, 0])
    return margins, x, H.sf(x) + H.pmf(x) / 2, H.cdf(x - 1) + H.pmf(x) / 2


@pytest.mark.parametrize("table", MID_P_TABLES)
@pytest.mark.parametrize("epsilon", [50.0, 746.0, 1e4, 1e300])
def test_pvalue_tends_to_fisher_mid_p_beyond_745(table, epsilon):
    """umpu_odds_ratio_test(14., (20, 20, 20, 20), epsilon=746).pvalue was nan."""
    margins, x, greater, less = _mid_p(table)
    res = idp.umpu_odds_ratio_test(float(x), margins, epsilon=epsilon, alternative="greater")
    assert res.pvalue == pytest.approx(greater, rel=1e-12, abs=1e-15)
    res = idp.umpu_odds_ratio_test(float(x), margins, epsilon=epsilon, alternative="less")
    assert res.pvalue == pytest.approx(less, rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("epsilon", [746.0, 1e4, 1e300])
def test_interval_estimate_and_power_beyond_745(epsilon):
    """The CI and power gave a cryptic solver error once exp(-epsilon) underflowed."""
    margins = (20, 20, 20, 20)
    res = idp.umpu_odds_ratio_test(14.0, margins, epsilon=epsilon, alternative="two-sided")
    ci = res.confidence_interval()
    assert 0 < ci.low < res.estimate < ci.high < np.inf
    # the limits are those of the mid-p test, the same as at epsilon = 50
    ref = idp.umpu_odds_ratio_test(14.0, margins, epsilon=50.0, alternative="two-sided")
    assert ci == pytest.approx(ref.confidence_interval(), rel=1e-9)
    assert res.estimate == pytest.approx(ref.estimate, rel=1e-9)
    power = idp.umpu_odds_ratio_power(
        margins, epsilon=epsilon, odds_ratio=[1.0, 3.0], alternative="greater"
    )
    assert power[0] == pytest.approx(0.05, abs=1e-10) and 0.05 < power[1] < 1
    m = idp.umpu_odds_ratio_critical_value(margins, epsilon=epsilon, alternative="greater")
    assert m == pytest.approx(
        idp.umpu_odds_ratio_critical_value(margins, epsilon=50.0, alternative="greater"), rel=1e-9
    )


def test_pvalue_monotone_and_continuous_across_745():
    """Near the old underflow point: converged to mid-p, and monotone below the support."""
    margins = (20, 20, 20, 20)
    eps = np.linspace(700.0, 800.0, 51)
    at_x = [
        idp.umpu_odds_ratio_test(14.0, margins, epsilon=e, alternative="greater").pvalue
        for e in eps
    ]
    assert np.ptp(at_x) == 0.0 and np.isfinite(at_x[0])
    # U above the support: the p-value ~ P(H = 20) * 0.3 e^{-epsilon} decreases to 0
    above = [
        idp.umpu_odds_ratio_test(21.2, margins, epsilon=e, alternative="greater").pvalue
        for e in eps
    ]
    assert np.all(np.isfinite(above)) and np.all(np.diff(above) <= 0) and above[-1] == 0.0
    h = _hyper(margins)
    assert above[0] == pytest.approx(h.pmf(20) * 0.3 * np.exp(-700.0), rel=1e-9)
    # the interval from a statistic above the support is (inf, inf) at any such epsilon
    res = idp.umpu_odds_ratio_test(24.0, margins, epsilon=746.0, alternative="two-sided")
    assert res.confidence_interval().low == np.inf


@pytest.mark.parametrize("epsilon", [1e-17, 1e-100, 1e-300])
def test_tiny_epsilon(epsilon):
    """epsilon below ~1.1e-16 gave ZeroDivisionError; now p ~ 1/2 and no information."""
    margins = (20, 20, 20, 20)
    res = idp.umpu_odds_ratio_test(14.0, margins, epsilon=epsilon, delta=0.0, alternative="greater")
    assert res.pvalue == pytest.approx(0.5, abs=1e-12)
    # the p-value moves by ~epsilon over all odds ratios: no estimate, said so (was 1e11)
    with pytest.raises(ValueError, match="estimate .* is not resolvable in double precision"):
        _ = res.estimate
    assert "not resolvable at this epsilon" in res.summary()
    ci = idp.umpu_odds_ratio_test(
        14.0, margins, epsilon=epsilon, alternative="two-sided"
    ).confidence_interval()
    assert (ci.low, ci.high) == (0.0, np.inf)
    power = idp.umpu_odds_ratio_power(
        margins, epsilon=epsilon, odds_ratio=[1.0, 5.0], alternative="greater"
    )
    np.testing.assert_allclose(power, 0.05, atol=1e-10)
    # with delta > 0 the noise is ~ Uniform(-1/(2 delta), 1/(2 delta)): informative again
    u = idp.umpu_odds_ratio_test(14.0, margins, epsilon=epsilon, delta=0.4, alternative="greater")
    h = _support(margins)
    expected = np.sum(_hyper(margins).pmf(h) * np.clip((h - 14.0) * 0.4 + 0.5, 0, 1))
    assert u.pvalue == pytest.approx(expected, rel=1e-12)


def test_noise_from_release_keeps_epsilon_exact():
    """A release records b = exp(-746) = 0; the family's test view still uses log b = -746."""
    tulap_noise_from_release = TULAP.tails
    tn = tulap_noise_from_release({"b": 0.0, "q": 0.0, "scale": 1.0}, {"epsilon": 746.0})
    assert tn.log_b == -746.0 and tn.epsilon == 746.0
    # (b, q) that do not come from the recorded epsilon are used as recorded
    other = tulap_noise_from_release({"b": 0.3, "q": 0.05}, {"epsilon": 1.0, "delta": 0.0})
    assert other.log_b == pytest.approx(np.log(0.3)) and other.q == 0.05
    with pytest.raises(ValueError, match=r"`scale` \(2.0\).*needs scale 1"):
        tulap_noise_from_release({"b": 0.3, "q": 0.0, "scale": 2.0}, {})
    with pytest.raises(ValueError, match=r"Tulap `b` \(2.0\) must be in \[0, 1\)"):
        tulap_noise_from_release({"b": 2.0, "q": 0.0}, {})
    with pytest.raises(ValueError, match=r"Tulap `q` \(-1.0\) must be in \[0, 1\)"):
        tulap_noise_from_release({"b": 0.3, "q": -1.0}, {})


def test_noise_given_as_privacy_law_or_b_zero():
    a = idp.umpu_odds_ratio_test(
        14.3, (20, 20, 20, 20), noise=tulap_from_privacy(1e-20, 0.2), alternative="greater"
    )
    b = idp.umpu_odds_ratio_test(
        14.3, (20, 20, 20, 20), epsilon=1e-20, delta=0.2, alternative="greater"
    )
    assert a.pvalue == b.pvalue
    c = idp.umpu_odds_ratio_test(
        14.0, (20, 20, 20, 20), noise=tulap(0.0, 0.0), alternative="greater"
    )
    assert c.pvalue == pytest.approx(_mid_p(MID_P_TABLES[0])[2], rel=1e-12)
    with pytest.raises(ValueError, match="loc=0 and scale=1"):
        idp.umpu_odds_ratio_test(
            14.3, (20, 20, 20, 20), noise=tulap_from_privacy(1.0, loc=1.0), alternative="greater"
        )


# --- conventions (issue 11): the null is `null_odds_ratio`, Releases plan tests too -----------


def test_odds_ratio_is_a_deprecated_alias_of_null_odds_ratio():
    new = idp.umpu_odds_ratio_test(
        14.3, (20, 20, 20, 20), epsilon=1.0, null_odds_ratio=2.0, alternative="greater"
    )
    with pytest.warns(DeprecationWarning, match="`odds_ratio` .* use `null_odds_ratio`"):
        old = idp.umpu_odds_ratio_test(
            14.3, (20, 20, 20, 20), epsilon=1.0, odds_ratio=2.0, alternative="greater"
        )
    assert old == new
    with pytest.warns(DeprecationWarning, match="`odds_ratio` of OddsRatioTestResult"):
        assert new.odds_ratio == new.null_odds_ratio == 2.0


def test_power_and_critical_value_from_a_release():
    release = odds_ratio_release([[12, 5], [4, 9]], epsilon=1.0, delta=0.001, rng=5)
    margins = (17, 13, 16, 14)
    kw = dict(epsilon=1.0, delta=0.001, alternative="greater")
    assert idp.umpu_odds_ratio_critical_value(
        release, alternative="greater"
    ) == idp.umpu_odds_ratio_critical_value(margins, **kw)
    assert idp.umpu_odds_ratio_power(
        release, odds_ratio=3.0, alternative="greater"
    ) == idp.umpu_odds_ratio_power(margins, odds_ratio=3.0, **kw)
    with pytest.raises(ValueError, match="Release carries its own noise"):
        idp.umpu_odds_ratio_power(release, odds_ratio=3.0, epsilon=1.0, alternative="greater")


def test_interval_is_computed_once_and_str_is_text():
    res = idp.umpu_odds_ratio_test(14.3, (20, 20, 20, 20), epsilon=1.0, alternative="greater")
    assert res.confidence_interval() is res.confidence_interval(0.95)
    assert str(res) == str(res.summary())
    assert "null odds ratio" in res.summary()


def test_a_statistic_far_outside_its_support_warns_and_a_plausible_one_does_not():
    import warnings

    from invariantdp import umpu_odds_ratio_test

    with pytest.warns(UserWarning, match=r"above the largest possible x11 given the margins"):
        res = umpu_odds_ratio_test(1e9, (17, 13, 16, 14), epsilon=1.0, alternative="greater")
    assert res.pvalue == 0.0  # what the model says; the warning says why it is suspect
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        umpu_odds_ratio_test(
            16 + 10.0, (17, 13, 16, 14), epsilon=1.0, alternative="greater"
        )  # 10 above: plausible


@pytest.mark.parametrize(
    "alternative, sides", [("greater", "one-sided"), ("two-sided", "two-sided")]
)
def test_the_summary_says_the_level_and_the_sides_of_the_interval(alternative, sides):
    from invariantdp import umpu_odds_ratio_test

    res = umpu_odds_ratio_test(12.3, (17, 13, 16, 14), epsilon=1.0, alternative=alternative)
    assert f"90% {sides} confidence interval" in str(res.summary(confidence_level=0.9))

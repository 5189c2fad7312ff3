import csv
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

import invariantdp as idp
from invariantdp.distributions import tulap, tulap_from_privacy

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
    res = idp.ump_binomial_test(float(r["statistic"]), int(r["n"]), 0.5, **_noise(r))
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
    res = idp.ump_binomial_test(z, n, p0, epsilon=0.8, delta=0.01)
    assert res.pvalue == pytest.approx(expected, rel=1e-12)
    less = idp.ump_binomial_test(z, n, p0, epsilon=0.8, delta=0.01, alternative="less")
    assert less.pvalue == pytest.approx(1 - expected, rel=1e-12)


def test_size_and_uniformity(rng):
    n, p0, eps, n_rep = 40, 0.4, 1.0, 3000
    x = rng.binomial(n, p0, size=n_rep)
    z = x + tulap.rvs(np.exp(-eps), 0.0, size=n_rep, random_state=rng)
    p = np.array([idp.ump_binomial_test(zi, n, p0, epsilon=eps).pvalue for zi in z])
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
    res = idp.ump_binomial_test(50_000_100.5, 10**8, 0.5, epsilon=0.5)
    z = 100.5 / np.sqrt(10**8 * 0.25 + 2 * np.exp(-0.5) / (1 - np.exp(-0.5)) ** 2)
    assert res.pvalue == pytest.approx(stats.norm.sf(z), rel=1e-3)


@pytest.mark.parametrize(
    "args,kwargs,match",
    [
        ((3, 0, 0.5), {}, r"`n` \(0\) must be >= 1"),
        ((3, 10, 1.5), {}, r"`p0` \(1.5\) must be in \(0, 1\)"),
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

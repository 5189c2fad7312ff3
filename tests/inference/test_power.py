"""Power and sample size of the DP tests: exact size, Monte Carlo power, minimal n."""

import numpy as np
import pytest

from invariantdp.distributions import tulap, tulap_params
from invariantdp.exceptions import InvariantDPError
from invariantdp.inference import (
    ump_binomial_power,
    ump_binomial_sample_size,
    ump_binomial_test,
    umpu_odds_ratio_power,
    umpu_odds_ratio_sample_size,
)


@pytest.mark.parametrize("alternative", ["greater", "less", "two-sided"])
def test_the_power_at_the_null_is_the_level(alternative):
    size = ump_binomial_power(60, 0.3, null_p=0.3, epsilon=0.5, alpha=0.1, alternative=alternative)
    assert size == pytest.approx(0.1, abs=1e-9)


@pytest.mark.parametrize("alternative, p", [("greater", 0.62), ("two-sided", 0.4)])
def test_the_power_is_the_rejection_rate_of_the_test_by_monte_carlo(alternative, p):
    n, p0, eps, alpha, reps = 80, 0.5, 1.0, 0.05, 1500
    want = ump_binomial_power(n, p, null_p=p0, epsilon=eps, alpha=alpha, alternative=alternative)
    gen = np.random.default_rng(11)
    b, q = tulap_params(eps)
    z = gen.binomial(n, p, size=reps) + tulap.rvs(b, q, size=reps, random_state=gen)
    rejected = np.mean(
        [
            ump_binomial_test(v, n, p0, epsilon=eps, alternative=alternative).pvalue <= alpha
            for v in z
        ]
    )
    se = np.sqrt(want * (1 - want) / reps)
    assert abs(rejected - want) < 4 * se


def test_the_sample_size_is_the_smallest_n_reaching_the_power():
    kw = dict(null_p=0.5, epsilon=0.5, alternative="greater")
    n = ump_binomial_sample_size(0.6, power=0.9, **kw)
    assert ump_binomial_power(n, 0.6, **kw) >= 0.9 > ump_binomial_power(n - 1, 0.6, **kw)
    m = umpu_odds_ratio_sample_size(
        2.0, row_share=0.3, column_share=0.5, epsilon=1.0, alternative="greater"
    )
    margins = lambda k: (round(0.3 * k), k - round(0.3 * k), round(0.5 * k), k - round(0.5 * k))  # noqa: E731
    assert (
        umpu_odds_ratio_power(margins(m), odds_ratio=2.0, epsilon=1.0, alternative="greater") >= 0.8
    )
    assert (
        umpu_odds_ratio_power(margins(m - 1), odds_ratio=2.0, epsilon=1.0, alternative="greater")
        < 0.8
    )
    # a smaller budget needs more records
    assert (
        ump_binomial_sample_size(0.6, power=0.9, null_p=0.5, epsilon=0.1, alternative="greater") > n
    )


def test_bad_input_and_unreachable_power():
    with pytest.raises(ValueError, match=r"`p` \(1.5\) must be in \(0, 1\)"):
        ump_binomial_power(10, 1.5, null_p=0.5, epsilon=1.0, alternative="greater")
    with pytest.raises(InvariantDPError, match="no `n` up to `max_n` \\(50\\)"):
        ump_binomial_sample_size(0.51, null_p=0.5, epsilon=0.1, max_n=50, alternative="greater")
    with pytest.raises(ValueError, match="`power`"):
        ump_binomial_sample_size(0.6, null_p=0.5, epsilon=1.0, power=1.0, alternative="greater")


@pytest.mark.parametrize(
    "name",
    [
        "ump_binomial_test",
        "ump_binomial_power",
        "ump_binomial_sample_size",
        "umpu_odds_ratio_test",
        "umpu_odds_ratio_critical_value",
        "umpu_odds_ratio_power",
        "umpu_odds_ratio_sample_size",
    ],
)
def test_default_alternative_is_two_sided_as_in_scipy(name):
    import inspect

    import invariantdp.inference as inf

    assert inspect.signature(getattr(inf, name)).parameters["alternative"].default == "two-sided"


def test_default_results_are_the_two_sided_ones():
    import invariantdp as idp

    for call in (
        lambda **k: idp.ump_binomial_test(3.7, 10, 0.5, epsilon=0.5, **k),
        lambda **k: idp.umpu_odds_ratio_test(14.3, (20, 20, 20, 20), epsilon=1.0, **k),
    ):
        default, two = call(), call(alternative="two-sided")
        assert default.alternative == "two-sided"
        assert default.pvalue == two.pvalue
        assert default.confidence_interval() == two.confidence_interval()
        # the two-sided p-value is not the one-sided one (the default really changed)
        assert default.pvalue != call(alternative="greater").pvalue
    power = ump_binomial_power(100, 0.6, null_p=0.5, epsilon=1.0)
    assert power == ump_binomial_power(100, 0.6, null_p=0.5, epsilon=1.0, alternative="two-sided")
    assert power < ump_binomial_power(100, 0.6, null_p=0.5, epsilon=1.0, alternative="greater")

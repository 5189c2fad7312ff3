"""A released statistic the noise almost surely cannot reach: a warning pointing at the caller."""

import warnings

import pytest

from invariantdp.inference import ump_binomial_test, umpu_odds_ratio_test


def test_odds_ratio_statistic_far_above_its_support_warns_at_the_call():
    with pytest.warns(UserWarning, match=r"72 above the largest possible x11") as record:
        res = umpu_odds_ratio_test(92.0, (20, 20, 20, 20), epsilon=1.0)
    # beyond the support the test answers as the model says: the largest x11 is certain
    assert res.pvalue == pytest.approx(0.0, abs=1e-12)
    assert record[0].filename == __file__


def test_binomial_count_far_below_zero_warns_at_the_call():
    with pytest.warns(UserWarning, match=r"below the smallest possible count") as record:
        ump_binomial_test(-60.0, 30, epsilon=1.0, null_p=0.5, alternative="greater")
    assert record[0].filename == __file__


def test_a_statistic_within_reach_does_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        umpu_odds_ratio_test(14.3, (20, 20, 20, 20), epsilon=1.0)

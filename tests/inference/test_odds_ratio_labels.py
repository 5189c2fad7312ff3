"""The odds-ratio test says which cell is x11 and which way the odds ratio points
(issue 22, section 3), on the Berkeley admissions table."""

import json

import numpy as np
import pytest
from scipy import stats

from invariantdp import datasets, umpu_odds_ratio_test
from invariantdp.mechanisms import odds_ratio_release


def test_a_labelled_release_names_x11_and_the_odds_ratio():
    table = datasets.berkeley_admissions()
    res = umpu_odds_ratio_test(odds_ratio_release(table, epsilon=1.0, rng=7))
    assert res.x11_cell == "men, admitted"
    assert res.compares == "odds of admitted, men vs women"
    assert res.margin_names == ("men", "women", "admitted", "rejected")
    rows = res.summary().as_dict()
    assert rows["x11 (U = x11 + noise)"] == "men, admitted"
    assert rows["odds ratio"] == "odds of admitted, men vs women"
    assert rows["margins by label"] == "men: 2691, women: 1835; admitted: 1755, rejected: 2771"
    # the JSON says it too, and the null keeps its one name
    doc = json.loads(json.dumps(res.to_dict()))
    assert doc["x11_cell"] == "men, admitted" and doc["compares"] == res.compares
    assert [k for k in doc if "odds_ratio" in k] == ["null_odds_ratio"]


def test_the_estimate_points_the_way_the_labels_say():
    """Men's odds of admission over women's: Fisher's conditional estimate is 1.84; the
    transposed table (rows admission, columns sex) names the same ratio another way and
    gives the same estimate; swapping the rows gives its inverse and says so."""
    table = datasets.berkeley_admissions()
    fisher = stats.contingency.odds_ratio(table.to_numpy()).statistic
    assert fisher == pytest.approx(1.8410, abs=5e-4)
    res = umpu_odds_ratio_test(odds_ratio_release(table, epsilon=50.0, rng=1))
    assert res.estimate == pytest.approx(fisher, rel=0.01)
    swapped = table.iloc[::-1]
    res_w = umpu_odds_ratio_test(odds_ratio_release(swapped, epsilon=50.0, rng=1))
    assert res_w.compares == "odds of admitted, women vs men"
    assert res_w.estimate == pytest.approx(1.0 / fisher, rel=0.01)
    res_t = umpu_odds_ratio_test(odds_ratio_release(table.T, epsilon=50.0, rng=1))
    assert res_t.compares == "odds of men, admitted vs rejected"
    assert res_t.estimate == pytest.approx(fisher, rel=0.01)


def test_an_unlabelled_table_is_named_by_position():
    res = umpu_odds_ratio_test(odds_ratio_release(np.array([[12, 5], [4, 9]]), epsilon=1.0, rng=2))
    assert res.x11_cell == "row 1, column 1"
    assert res.compares == "odds of column 1, row 1 vs row 2"
    plain = umpu_odds_ratio_test(14.3, (20, 20, 20, 20), epsilon=1.0)
    assert plain.x11_cell == "row 1, column 1"

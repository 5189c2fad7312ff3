"""``Release.select``: a sub-release with the marginal noise law and the invariants that bind."""

import numpy as np
import pandas as pd
import pytest

from invariantdp import Release
from invariantdp.exceptions import InvariantDPError
from invariantdp.invariants import Invariants

AGES = ["0-17", "18-64", "65+"]


def _cov():
    a = np.array([[2.0, 0.6, 0.1], [0.6, 3.0, 0.4], [0.1, 0.4, 1.5]])
    return a


def _release(invariants=None):
    x = pd.Series([5.0, 9.0, 3.0], index=pd.Index(AGES, name="age"), name="count")
    return Release.from_published(x, noise="correlated_gaussian", cov=_cov(), invariants=invariants)


def test_select_matches_a_hand_built_correlated_gaussian_release():
    # what a user would build by hand: the kept values and the hand-sliced covariance
    inv = Invariants(
        np.array([[0.0, 1.0, 1.0], [1.0, 1.0, 0.0]]), values=[12.0, 14.0], names=["adults", "young"]
    )
    sub = _release(inv).select(age=["18-64", "65+"])
    hand = Release.from_published(
        pd.Series([9.0, 3.0], index=pd.Index(["18-64", "65+"], name="age"), name="count"),
        noise="correlated_gaussian",
        cov=_cov()[1:, 1:],
        invariants=Invariants(np.array([[1.0, 1.0]]), values=[12.0], names=["adults"]),
    )
    assert sub.to_series().equals(hand.to_series())
    np.testing.assert_array_equal(np.asarray(sub.noise.params["cov"]), _cov()[1:, 1:])
    # the row touching only kept cells binds; the one touching 0-17 is dropped
    assert sub.invariants == hand.invariants
    assert sub.data_shape == (2,)
    assert sub.guarantee == hand.guarantee
    assert sub.metadata["selected_from"] == {"age": ["18-64", "65+"]}
    assert Release.from_json(sub.to_json()) == sub


def test_selected_noise_law_is_the_marginal_of_the_original():
    # draw the full release's noise, keep the cells: its covariance must be the
    # selected release's; each entry's MC standard error is sqrt((s_ii s_jj + s_ij^2)/n)
    rel = _release()
    sub = rel.select(age=["0-17", "65+"])
    rng = np.random.default_rng(20261128)
    n = 40_000
    draws = rng.multivariate_normal(np.zeros(3), _cov(), size=n)[:, [0, 2]]
    emp = draws.T @ draws / n
    law = np.asarray(sub.noise.params["cov"])
    se = np.sqrt((np.outer(np.diag(law), np.diag(law)) + law**2) / n)
    assert np.all(np.abs(emp - law) < 4 * se)
    # and sampling the selected law directly gives the same marginal variances
    direct = rng.multivariate_normal(np.zeros(2), law, size=n)
    var_se = np.sqrt(2 * np.diag(law) ** 2 / n)
    assert np.all(np.abs(direct.var(axis=0) - draws.var(axis=0)) < 4 * np.sqrt(2) * var_se)


def test_select_on_a_table_keeps_the_rectangle_and_independent_noise():
    x = pd.DataFrame(
        [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]],
        index=pd.Index(AGES, name="age"),
        columns=pd.Index(["F", "M"], name="sex"),
    )
    rel = Release.from_published(x, noise="gaussian", variance=4.0)
    sub = rel.select(age=["0-17", "65+"], sex=["M"])
    np.testing.assert_array_equal(sub.value, [[2.0], [6.0]])
    assert sub.noise == rel.noise
    assert [ax.labels for ax in sub.labels] == [("0-17", "65+"), ("M",)]


def test_select_by_a_level_of_a_multiindex():
    idx = pd.MultiIndex.from_product([["A", "B"], AGES], names=["tract", "age"])
    x = pd.Series(np.arange(6.0), index=idx)
    sub = Release.from_published(x, noise="laplace", scale=1.0).select(age=["65+"])
    assert sub.to_series().index.tolist() == [("A", "65+"), ("B", "65+")]
    np.testing.assert_array_equal(sub.value, [2.0, 5.0])


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({}, "at least one"),
        ({"sex": ["F"]}, "`sex` is not an axis"),
        ({"age": ["90+"]}, "not on the axis"),
        ({"age": "65+"}, "must be a list"),
        ({"age": []}, "keeps no cell"),
    ],
)
def test_select_refuses_bad_selections(kwargs, match):
    with pytest.raises(InvariantDPError, match=match):
        _release().select(**kwargs)


def test_select_refuses_a_noise_whose_marginal_is_another_law():
    inv = Invariants(np.ones((1, 3))).of([5.0, 9.0, 3.0])
    x = pd.Series([5.0, 9.0, 3.0], index=pd.Index(AGES, name="age"))
    rel = Release.from_published(x, noise="projected_gaussian", scale=1.0, invariants=inv)
    with pytest.raises(InvariantDPError, match="projected_gaussian"):
        rel.select(age=["65+"])

"""Labels and meaning in every output (issue 22, section 3).

A release made from labelled data says which cell each value is, keeps the
name of the user's value column, and a 2 x 2 table's release says which cell
is x11 and which way its odds ratio points.
"""

import json

import numpy as np
import pandas as pd
import pytest

from invariantdp import InvariantDPError, Release, datasets
from invariantdp.labels import AxisLabels, cell_names, label_text
from invariantdp.mechanisms import discrete_gaussian_mechanism, odds_ratio_release


def _county_sex_age():
    idx = pd.MultiIndex.from_product(
        [["County 01", "County 02", "County 03"], ["Female", "Male"], ["0-17", "18-64", "65+"]],
        names=["county", "sex", "age"],
    )
    return pd.Series(np.arange(100, 118), index=idx, name="count")


def test_summary_shows_the_values_on_their_labels():
    x = pd.DataFrame(
        [[347, 1066], [307, 61]],
        index=pd.Index(["C01", "C02"], name="county"),
        columns=pd.Index(["F", "M"], name="sex"),
    )
    r = discrete_gaussian_mechanism(x, rho=0.5, rng=1)
    rows = r.summary().as_dict()
    assert rows["labels"] == "county (C01, C02) x sex (F, M)"
    shown = rows["value"]
    for cell, v in zip(["C01, F", "C01, M", "C02, F", "C02, M"], r.value.ravel(), strict=True):
        assert f"{cell}: {v:g}" in shown  # whole numbers shown whole
    assert "C01, F" in str(r.summary())


def test_a_long_release_shows_its_first_and_last_cells_by_name():
    r = discrete_gaussian_mechanism(_county_sex_age(), rho=0.5, rng=2)
    shown = r.summary().as_dict()["value (count)"]
    names = cell_names(r.labels, r.value.shape)
    assert shown.startswith(f"{names[0]}: {r.value[0]:g}; ")
    assert shown.endswith(f"{names[-1]}: {r.value[-1]:g}") and "; ...; " in shown
    assert shown.count(": ") == 6  # 18 cells: three from each end


def test_to_series_keeps_the_users_value_name():
    """The user's `count` column came back as `value`."""
    x = _county_sex_age()
    for r in (
        discrete_gaussian_mechanism(x, rho=0.5, rng=3),
        Release.from_published(x, noise="discrete_gaussian", variance=1.0),
    ):
        s = r.to_series()
        assert s.name == "count" and r.value_name == "count"
        assert s.index.names == ["county", "sex", "age"]
        assert list(r.to_frame().columns) == ["count"]
        back = Release.from_json(r.to_json())  # the name survives the JSON
        assert back.to_series().name == "count"
    # without a name the values are called `value`, as before
    assert discrete_gaussian_mechanism(x.rename(None), rho=0.5, rng=3).to_series().name == "value"


def test_cells_are_named_one_way():
    """'County 01/Female/0-17' (a MultiIndex) and 'C01, F' (two axes) read alike now."""
    multi = cell_names((AxisLabels(("county", "sex"), (("C01", "F"), ("C01", "M"))),), (2,))
    axes = cell_names((AxisLabels("county", ("C01",)), AxisLabels("sex", ("F", "M"))), (1, 2))
    assert multi == axes == ["C01, F", "C01, M"]
    assert label_text(("County 01", "Female", "0-17")) == "County 01, Female, 0-17"
    r = discrete_gaussian_mechanism(_county_sex_age(), rho=0.5, rng=4)
    assert "County 01, Female, 0-17: " in r.summary().as_dict()["value (count)"]


def test_odds_ratio_release_of_a_labelled_table_says_which_cell_is_x11():
    table = datasets.berkeley_admissions()
    r = odds_ratio_release(table, epsilon=1.0, rng=5)
    assert r.labels is None  # the value is one number, x11 + noise
    assert r.data_labels == (
        AxisLabels("sex", ("men", "women")),
        AxisLabels("admission", ("admitted", "rejected")),
    )
    rows = r.summary().as_dict()
    assert rows["value"] == f"men, admitted: {round(float(r.value), 4)}"
    assert rows["odds ratio"] == "odds of admitted, men vs women"
    assert rows["invariants"] == (
        "sex=men: 2691; sex=women: 1835; admission=admitted: 1755; admission=rejected: 2771"
    )
    back = Release.from_json(r.to_json())
    assert back == r and back.data_labels == r.data_labels


def test_an_unlabelled_table_is_named_by_positions():
    r = odds_ratio_release(datasets.berkeley_admissions().to_numpy(), epsilon=1.0, rng=5)
    assert r.data_labels is None
    assert r.summary().as_dict()["odds ratio"] == "odds of column 1, row 1 vs row 2"


@pytest.mark.parametrize(
    "metadata, match",
    [
        ({"value_name": 3}, r"`metadata.value_name` \(3\) must be a string"),
        ({"data_labels": [{"name": "sex", "labels": ["men"]}]}, "metadata.data_labels"),
    ],
)
def test_a_document_with_bad_names_is_refused_naming_the_field(metadata, match):
    doc = odds_ratio_release([[3, 4], [5, 6]], epsilon=1.0, rng=0).to_dict()
    doc["metadata"].update(metadata)
    with pytest.raises(InvariantDPError, match=match):
        Release.from_json(json.dumps(doc))

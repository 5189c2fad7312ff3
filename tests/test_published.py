"""From published numbers to a Release: labels, noise in the agency's terms, long format."""

import math

import numpy as np
import pandas as pd
import pytest

from invariantdp import Release
from invariantdp.distributions import tulap_params
from invariantdp.exceptions import InvariantDPError
from invariantdp.invariants import one_way_margins, totals
from invariantdp.labels import AxisLabels, labels_of, to_pandas
from invariantdp.published import from_published, read_published


@pytest.fixture
def counties():
    return pd.Series([1203, 388, 97], index=pd.Index(["Ada", "Bay", "Cole"], name="county"))


# --- the noise law and the guarantee, converted exactly ----------------------


@pytest.mark.parametrize("family, key", [("discrete_gaussian", "sigma"), ("gaussian", "scale")])
def test_rho_and_sensitivity_give_sigma_squared_of_cks_theorem_14(family, key):
    r = from_published([4, 5], noise=family, rho=0.125, sensitivity=2.0)
    assert r.noise.params[key] == pytest.approx(math.sqrt(2.0**2 / (2 * 0.125)), rel=1e-15)
    assert r.guarantee.definition == "zCDP"
    assert r.guarantee.params["rho"] == 0.125


def test_variance_with_sensitivity_states_the_implied_rho():
    r = from_published([4, 5], noise="discrete_gaussian", variance=8.0, sensitivity=1.0)
    assert r.noise.params["sigma"] == pytest.approx(math.sqrt(8.0), rel=1e-15)
    assert r.guarantee.params["rho"] == pytest.approx(1 / 16, rel=1e-15)


def test_without_sensitivity_the_guarantee_is_unstated_and_survives_json():
    r = from_published([4, 5], noise="discrete_gaussian", variance=9.0)
    assert r.noise.params["sigma"] == 3.0
    assert r.guarantee.definition == "unstated"
    doc = r.to_dict()
    assert doc["version"] == 2
    assert Release.from_json(r.to_json()) == r


@pytest.mark.parametrize("family", ["laplace", "discrete_laplace"])
def test_epsilon_and_sensitivity_give_the_laplace_scale(family):
    r = from_published([4, 5], noise=family, epsilon=0.5, sensitivity=2.0)
    assert r.noise.params["scale"] == 4.0
    assert (r.guarantee.definition, r.guarantee.params["epsilon"]) == ("epsilon-DP", 0.5)
    r = from_published([4, 5], noise=family, scale=4.0, sensitivity=2.0)
    assert r.guarantee.params["epsilon"] == 0.5


def test_tulap_from_epsilon_and_delta():
    r = from_published(3.7, noise="tulap", epsilon=1.0, delta=0.01)
    b, q = tulap_params(1.0, 0.01)
    assert (r.noise.params["b"], r.noise.params["q"]) == (b, q)
    assert r.guarantee.definition == "(epsilon, delta)-DP"


def test_a_family_s_own_parameters_are_validated():
    r = from_published([1.5], noise="tulap", b=0.5, q=0.0)
    assert r.noise.distribution().cdf(0.0) == pytest.approx(0.5)
    with pytest.raises(ValueError, match=r"must be in \[0, 1\)"):
        from_published([1.5], noise="tulap", b=1.5, q=0.0)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"variance": 4.0, "rho": 0.5, "sensitivity": 1.0}, "exactly one of"),
        ({"rho": 0.5}, "needs the query's L2 `sensitivity`"),
        ({"variance": -1.0}, r"`variance` \(-1.0\) must be > 0"),
        ({"variance": 4.0, "colour": "red"}, r"\['colour'\] are not parameters"),
    ],
)
def test_parameters_that_do_not_determine_the_law_are_refused(kwargs, match):
    with pytest.raises(InvariantDPError, match=match):
        from_published([4, 5], noise="discrete_gaussian", **kwargs)


def test_values_and_invariants_are_checked_before_anything_is_built(counties):
    with pytest.raises(InvariantDPError, match="must be integers for discrete_gaussian"):
        from_published([4.5, 5], noise="discrete_gaussian", variance=1.0)
    with pytest.raises(InvariantDPError, match="must carry the published values"):
        from_published(counties, noise="gaussian", variance=1.0, invariants=totals([0, 0, 0]))
    with pytest.raises(InvariantDPError, match="act on 4 cells but the data have 3"):
        inv = one_way_margins((2, 2)).of(np.ones((2, 2)))
        from_published(counties, noise="gaussian", variance=1.0, invariants=inv)
    with pytest.raises(TypeError, match="family name or a NoiseLaw"):
        from_published(counties, noise=3)


# --- labels survive the release and its JSON ---------------------------------


def test_series_labels_survive_json_and_come_back_as_pandas(counties):
    inv = totals([0, 0, 0]).of([1200, 390, 100])
    r = Release.from_published(
        counties, noise="discrete_gaussian", rho=0.5, sensitivity=1.0, invariants=inv
    )
    back = Release.from_json(r.to_json())
    assert back == r
    pd.testing.assert_series_equal(back.to_series(), counties.rename("value"))
    assert back.to_frame().columns.tolist() == ["value"]


def test_table_labels_and_multiindex_round_trip():
    df = pd.DataFrame(
        [[10, 20, 30], [40, 50, 60]],
        index=pd.Index(["F", "M"], name="sex"),
        columns=pd.Index(["a", "b", "c"], name="race"),
    )
    r = from_published(df, noise="discrete_laplace", scale=2.0)
    back = Release.from_json(r.to_json())
    pd.testing.assert_frame_equal(back.to_frame(), df)
    assert back.to_series().index.names == ["sex", "race"]
    idx = pd.MultiIndex.from_tuples([("CA", 1), ("CA", 2), ("NV", 1)], names=["state", "tract"])
    s = pd.Series([1.5, 2.5, 3.5], index=idx)
    back = Release.from_json(from_published(s, noise="gaussian", variance=1.0).to_json())
    pd.testing.assert_series_equal(back.to_series(), s.rename("value"))


def test_plain_arrays_carry_no_labels_and_unfit_labels_are_refused():
    assert labels_of(np.arange(3)) is None
    assert labels_of(pd.Series([1, 2])) is None  # positions only
    stamps = pd.Series([1, 2], index=pd.date_range("2020-01-01", periods=2))
    with pytest.raises(InvariantDPError, match=r"index.astype\(str\)"):
        labels_of(stamps)
    with pytest.raises(InvariantDPError, match="has 2 labels but the value has 3"):
        from_published([1, 2, 3], noise="gaussian", variance=1.0).__class__(
            np.zeros(3),
            "m",
            Release.from_published([1.0], noise="gaussian", variance=1.0).noise,
            Release.from_published([1.0], noise="gaussian", variance=1.0).guarantee,
            labels=(AxisLabels(None, ("a", "b")),),
        )
    with pytest.raises(InvariantDPError, match="scalar release has no axes"):
        to_pandas(np.float64(1.0), None)


def test_a_tampered_labels_document_is_refused(counties):
    doc = Release.from_published(counties, noise="gaussian", variance=1.0).to_dict()
    doc["labels"][0]["labels"] = ["Ada", "Bay"]
    with pytest.raises(InvariantDPError, match=r"`labels\[0\]\.labels`"):
        Release.from_dict(doc)
    doc = Release.from_published(counties, noise="gaussian", variance=1.0).to_dict()
    doc["version"] = 1
    with pytest.raises(InvariantDPError, match="needs a document of version 2"):
        Release.from_dict(doc)


# --- the long format of agencies -------------------------------------------------


def _long():
    return pd.DataFrame(
        {
            "county": ["Ada", "Ada", "Bay", "Bay", "Cole", "Cole"],
            "sex": ["F", "M", "F", "M", "F", "M"],
            "count": [51, 47, 20, 26, 8, 5],
            "variance": [4.0] * 6,
        }
    )


def test_long_format_to_a_labelled_table_and_back(tmp_path):
    t = _long()
    r = read_published(
        t,
        value_column="count",
        label_columns=["county", "sex"],
        noise="discrete_gaussian",
        variance_column="variance",
        shape="table",
    )
    assert r.value.shape == (3, 2) and r.noise.params["sigma"] == 2.0
    frame = Release.from_json(r.to_json()).to_frame()
    assert frame.loc["Bay", "M"] == 26 and frame.index.name == "county"
    # the same from a CSV file, kept in the long shape
    t.to_csv(tmp_path / "published.csv", index=False)
    long = read_published(
        tmp_path / "published.csv",
        value_column="count",
        label_columns=["county", "sex"],
        noise="discrete_gaussian",
        variance_column="variance",
    )
    s = long.to_series()
    assert s.loc[("Cole", "F")] == 8 and s.index.names == ["county", "sex"]
    assert s.to_numpy().tolist() == t["count"].tolist()


def test_rows_out_of_order_land_in_their_cells():
    t = _long().iloc[::-1]
    r = read_published(
        t,
        value_column="count",
        label_columns=["county", "sex"],
        noise="gaussian",
        variance=1.0,
        shape="table",
    )
    assert r.to_frame().loc["Ada", "F"] == 51


@pytest.mark.parametrize(
    "change, kwargs, match",
    [
        (lambda t: t.assign(variance=[4.0] * 5 + [9.0]), {}, "must hold one value"),
        (lambda t: pd.concat([t, t.iloc[:1]]), {}, "appears more than once"),
        (lambda t: t.iloc[:-1], {"shape": "table"}, "every combination"),
        (lambda t: t, {"label_columns": ["county", "tract"]}, "unknown column"),
        (lambda t: t.assign(count=["x"] * 6), {}, "must hold numbers"),
    ],
)
def test_long_format_errors(change, kwargs, match):
    args = {
        "value_column": "count",
        "label_columns": ["county", "sex"],
        "noise": "discrete_gaussian",
        "variance_column": "variance",
        **kwargs,
    }
    with pytest.raises(InvariantDPError, match=match):
        read_published(change(_long()), **args)


# --- the labels reach the Bayes models' coordinates ------------------------------


def test_bayes_models_name_units_cells_and_coefficients_by_the_labels(counties):
    pytest.importorskip("pymc")
    from invariantdp.inference.bayes import contingency_table_model, poisson_regression_model

    r = Release.from_published(
        counties, noise="discrete_gaussian", variance=4.0, invariants=totals([0, 0, 0]).of(counties)
    )
    exog = pd.DataFrame({"const": 1.0, "density": [0.3, -0.1, -0.2]}, index=counties.index)
    model = poisson_regression_model(r, exog)
    assert list(model.coords["coef"]) == ["const", "density"]
    assert list(model.coords["unit"]) == ["Ada", "Bay", "Cole"]
    table = pd.DataFrame(
        [[12, 5], [4, 9]], index=pd.Index(["F", "M"], name="sex"), columns=["yes", "no"]
    )
    r = Release.from_published(
        table, noise="discrete_laplace", scale=2.0, invariants=one_way_margins((2, 2)).of(table)
    )
    model = contingency_table_model(r)
    assert list(model.coords["cell"]) == ["F, yes", "F, no", "M, yes", "M, no"]


def test_projected_gaussian_release_as_published_feeds_the_likelihood_models():
    from invariantdp.inference._invariant_likelihoods import release_sigma

    y = pd.Series([10.5, 19.5, 7.25, 12.75], index=pd.Index(list("abcd"), name="county"))
    inv = totals([0, 0, 1, 1]).of(y.to_numpy())  # the state totals the release keeps
    r = Release.from_published(y, noise="projected_gaussian", variance=2.25, invariants=inv)
    assert r.noise.params["scale"] == 1.5
    back = Release.from_json(r.to_json())
    assert back == r and release_sigma(back)[0] == 1.5
    bad = totals([0, 0, 1, 1]).of(y.to_numpy() + [1, 0, 0, 0])
    with pytest.raises(InvariantDPError, match="keeps the invariants exactly"):
        Release.from_published(y, noise="projected_gaussian", variance=2.25, invariants=bad)


def test_a_published_tulap_cell_with_exact_margins_is_tested_like_the_mechanism_s_release():
    from invariantdp.inference import umpu_odds_ratio_test
    from invariantdp.mechanisms import odds_ratio_release

    table = np.array([[12, 5], [4, 9]])
    made = odds_ratio_release(table, epsilon=1.0, rng=3)
    published = Release.from_published(
        float(made.value),
        noise="tulap",
        epsilon=1.0,
        query=[[1.0, 0.0, 0.0, 0.0]],
        invariants=one_way_margins((2, 2)).of(table),
    )
    assert published.data_shape == (2, 2)
    a, b = (
        umpu_odds_ratio_test(made, alternative="greater"),
        umpu_odds_ratio_test(published, alternative="greater"),
    )
    assert a.pvalue == b.pvalue
    with pytest.raises(InvariantDPError, match=r"`query` must have shape \(1, 4\)"):
        Release.from_published(
            1.0,
            noise="tulap",
            epsilon=1.0,
            query=[[1.0, 0.0]],
            invariants=one_way_margins((2, 2)).of(table),
        )


def test_projected_noise_as_published_uses_the_given_invariants_at_any_size():
    """The schema check reuses the release's own C: no rebuild, no document size limit."""
    import numpy as np

    from invariantdp import Release
    from invariantdp.invariants import one_way_margins

    side = 4097  # 4097**2 cells: above the 2**24 bound of documents read from JSON
    inv = one_way_margins((side, side)).with_values(np.full(2 * side, float(side)))
    r = Release.from_published(
        np.ones(side * side), noise="projected_gaussian", variance=4.0, invariants=inv
    )
    assert r.noise.family == "projected_gaussian" and r.invariants.same_map(inv)


def test_an_unstated_guarantee_needs_a_version_2_document():
    from invariantdp import Release

    doc = Release.from_published([1.0, 2.0], noise="gaussian", variance=1.0).to_dict()
    assert doc["version"] == 2
    doc["version"] = 1  # a version-1 reader does not know "unstated"
    with pytest.raises(ValueError, match="needs a document of version 2"):
        Release.from_dict(doc)


# --- rows published exactly are the invariants (issue 22) --------------------------------


def _with_exact_rows(exact, column="rho", noisy=0.5):
    t = _long().drop(columns="variance").assign(**{column: noisy})
    return pd.concat([t, pd.DataFrame(exact)], ignore_index=True)


def _read_exact(t, column="rho", **kwargs):
    key = {"rho": "rho_column", "variance": "variance_column"}[column]
    extra = {"sensitivity": 1.0} if column == "rho" else {}
    return read_published(
        t,
        value_column="count",
        label_columns=["county", "sex"],
        noise="discrete_gaussian",
        **{key: column},
        **extra,
        **kwargs,
    )


def test_a_state_total_with_rho_inf_is_read_as_the_invariant(tmp_path):
    # the call of issue 22 that failed with "`rho` must hold one value ... ([0.5, inf])"
    t = _with_exact_rows([{"county": None, "sex": None, "count": 180, "rho": np.inf}])
    t.to_csv(tmp_path / "published.csv", index=False)
    r = _read_exact(tmp_path / "published.csv")
    assert r.noise.params["sigma"] == 1.0 and r.value.tolist() == _long()["count"].tolist()
    assert r.invariants.kind == "totals" and r.invariants.values.tolist() == [180.0]
    assert r.invariants.apply(np.ones(6)).tolist() == [6.0]
    assert Release.from_json(r.to_json()) == r


def test_variance_zero_rows_are_invariants_and_county_totals_keep_their_structure():
    t = _with_exact_rows(
        [
            {"county": c, "sex": None, "count": v, "variance": 0.0}
            for c, v in (("Ada", 98), ("Bay", 46), ("Cole", 20))
        ],
        column="variance",
        noisy=4.0,
    )
    r = _read_exact(t, column="variance", shape="table")
    assert r.value.shape == (3, 2) and r.invariants.shape == (3, 2)
    assert r.invariants.kind == "totals"  # every county once: the O(n) structure
    assert r.invariants.values.tolist() == [98.0, 46.0, 20.0]
    assert r.invariants.apply(r.value).tolist() == r.to_frame().sum(axis=1).tolist()


def test_totals_of_several_kinds_become_one_matrix_named_by_their_labels():
    t = _with_exact_rows(
        [
            {"county": "All", "sex": "All", "count": 180, "rho": np.inf},
            {"county": "Ada", "sex": "All", "count": 98, "rho": np.inf},
            {"county": "All", "sex": "F", "count": 79, "rho": np.inf},
        ]
    )
    r = _read_exact(t, total_label="All")
    inv = r.invariants
    assert inv.kind == "general" and inv.names == ("total", "county=Ada", "sex=F")
    dense = inv.dense_matrix()
    assert dense.tolist() == [[1] * 6, [1, 1, 0, 0, 0, 0], [1, 0, 1, 0, 1, 0]]
    assert inv.values.tolist() == [180.0, 98.0, 79.0]


@pytest.mark.parametrize(
    "exact, kwargs, match",
    [
        ([{"county": "Total", "sex": None, "count": 1, "rho": np.inf}], {}, "total_label"),
        ([{"county": "Dee", "sex": None, "count": 1, "rho": np.inf}], {"total_label": "T"}, "Dee"),
        (
            [{"county": None, "sex": None, "count": 1, "rho": np.inf}] * 2,
            {},
            "grand total as an invariant row twice",
        ),
        (
            [{"county": "Ada", "sex": None, "count": 1, "rho": np.inf}] * 2,
            {},
            "invariant row 'Ada' of \\['county'\\] twice",
        ),
        (
            [{"county": None, "sex": None, "count": 1, "rho": np.inf}],
            {"invariants": totals([0] * 6).with_values([1])},
            "not both",
        ),
    ],
)
def test_invariant_rows_that_do_not_fit_are_refused(exact, kwargs, match):
    with pytest.raises(InvariantDPError, match=match):
        _read_exact(_with_exact_rows(exact), **kwargs)


def test_an_invariant_row_must_match_a_noisy_row_and_noisy_rows_need_labels():
    t = _with_exact_rows([{"county": None, "sex": None, "count": 1, "rho": np.inf}])
    t = t[~((t["county"] == "Cole") & (t["sex"] == "F"))]
    t = pd.concat(
        [t, pd.DataFrame([{"county": "Cole", "sex": "F", "count": 3, "rho": np.inf}])],
        ignore_index=True,
    )
    with pytest.raises(InvariantDPError, match=r"\['Cole', 'F'\] matches no noisy row"):
        _read_exact(t)
    gap = _with_exact_rows([]).assign(sex=["F", "M", "F", None, "F", "M"])
    with pytest.raises(InvariantDPError, match="must be filled in every noisy row"):
        _read_exact(gap)
    every = _with_exact_rows([]).assign(rho=np.inf)
    with pytest.raises(InvariantDPError, match="no noisy rows"):
        _read_exact(every)

"""Labels survive end to end: mechanism -> JSON -> analyst -> model summary (issue 12)."""

import numpy as np
import pandas as pd
import pytest

from invariantdp import Release
from invariantdp.inference import PrivatizedLogLinear, PrivatizedPoisson
from invariantdp.invariants import totals
from invariantdp.mechanisms import (
    discrete_gaussian_mechanism,
    laplace_mechanism,
    projected_gaussian,
    semi_dp_gaussian,
)


@pytest.fixture
def table():
    return pd.DataFrame(
        [[60, 20, 31], [25, 55, 40]],
        index=pd.Index(["F", "M"], name="sex"),
        columns=pd.Index(["yes", "no", "maybe"], name="answer"),
    )


def test_a_labelled_table_reaches_the_log_linear_summary(table):
    published = semi_dp_gaussian(table, mu=0.5, rng=3).to_json()
    release = Release.from_json(published)  # the analyst's side: nothing but the JSON
    assert release.to_frame().index.tolist() == ["F", "M"]
    assert release.to_frame().columns.name == "answer"
    model = PrivatizedLogLinear(release)
    assert model.exog_names == ["gamma[F,yes]", "gamma[F,no]"]
    text = str(model.fit(disp=0).summary())
    assert "gamma[F,yes]" in text and "gamma[F,no]" in text


def test_labelled_counts_reach_the_poisson_regression_summary():
    counties = pd.Index([f"county {i}" for i in range(12)], name="county")
    density = pd.Series(np.linspace(-1, 1, 12), index=counties)
    counts = pd.Series(np.round(np.exp(5 + 0.5 * density)).astype(int), index=counties)
    state = np.repeat([0, 1], 6)
    release = Release.from_json(projected_gaussian(counts, totals(state), mu=1.0, rng=2).to_json())
    assert release.to_series().index.equals(counties)
    exog = pd.DataFrame({"const": 1.0, "density": density})
    res = PrivatizedPoisson(release, exog).fit(disp=0)
    assert list(res.params.index) == ["const", "density"]
    assert "density" in str(res.summary())


@pytest.mark.parametrize(
    "mechanism",
    [
        lambda x: laplace_mechanism(x, epsilon=1.0, rng=0),
        lambda x: discrete_gaussian_mechanism(x, rho=0.5, rng=0),
        lambda x: discrete_gaussian_mechanism(x, rho=0.5, secure=True),
    ],
)
def test_every_mechanism_keeps_the_labels_of_a_series(mechanism):
    x = pd.Series([3, 4, 5], index=pd.Index(["a", "b", "c"], name="area"))
    back = Release.from_json(mechanism(x).to_json())
    assert back.to_series().index.equals(x.index)
    assert Release.from_json(mechanism(x.to_numpy()).to_json()).labels is None


def test_a_query_release_keeps_no_labels_of_the_data(table):
    from invariantdp.mechanisms import odds_ratio_release

    two = table.iloc[:, :2]
    assert odds_ratio_release(two, epsilon=1.0, rng=0).labels is None  # one statistic


def test_the_formula_interface_names_the_coefficients_and_needs_the_released_response():
    from invariantdp.exceptions import InvariantDPError

    gen = np.random.default_rng(5)
    x = gen.normal(size=40)
    counts = gen.poisson(np.exp(4.0 + 0.5 * x)).astype(float)
    rel = projected_gaussian(counts, totals(np.repeat([0, 1], 20)), mu=0.2, rng=1)
    data = pd.DataFrame({"y": rel.value, "x": x})
    res = PrivatizedPoisson.from_formula("y ~ x", data, release=rel).fit(disp=0)
    assert list(res.params.index) == ["Intercept", "x"]
    direct = PrivatizedPoisson(rel, np.column_stack([np.ones(40), x])).fit(disp=0)
    np.testing.assert_allclose(res.params.to_numpy(), direct.params, rtol=1e-10)
    data["y"] = counts  # the confidential counts are not what was released
    with pytest.raises(InvariantDPError, match="must be the release's values"):
        PrivatizedPoisson.from_formula("y ~ x", data, release=rel)

"""The estimate frame shared by a file read whole and one solved in parts."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from invariantdp.census import Geography, NoisyMeasurements, Schema, gls
from invariantdp.census._estimate_frames import check_geocodes, estimate_frame
from invariantdp.exceptions import InvariantDPError


def test_the_frame_is_glsestimate_s_frame():
    # the Gaussian intervals of a GLS estimate rebuilt from its estimates and variances
    dpq = pd.DataFrame(
        {
            "geocode": ["1", "11", "12", "11", "12"],
            "query_name": ["total_dpq"] * 3 + ["detailed_dpq"] * 2,
            "value": [[10.0], [6.0], [3.0], [2.0, 3.0, 1.0], [1.0, -3.0, 0.0]],
            "variance": 2.0,
        }
    )
    schema = Schema({"age": ["0-17", "18-64", "65+"]})
    nm = NoisyMeasurements.from_frames(dpq, None, schema, Geography({"A": 1, "B": 2}))
    want = gls(nm).estimate("age", "B", 0.8, geocodes=["12"], clip=True)
    est = want["estimate"].to_numpy().reshape(1, 3)
    se = want["std_error"].to_numpy().reshape(1, 3)
    got = estimate_frame(
        {"geocode": ["12"]}, est, se**2, schema.cell_frame("age"), 0.8, ["-"], clip=True
    )
    # GLSEstimate's columns and attrs; its lattice intervals here, the Gaussian ones without
    assert list(got.columns) == list(want.columns) and set(got.attrs) == set(want.attrs)
    for col in ("geocode", "age", "estimate", "std_error", "note"):
        pd.testing.assert_series_equal(got[col], want[col], check_exact=False, rtol=1e-12)
    z = stats.norm.ppf(0.9)
    assert got["moe"].to_numpy() == pytest.approx(z * se.ravel(), rel=1e-12)
    assert got["ci_lower"].to_numpy() == pytest.approx(np.maximum(est - z * se, 0).ravel())
    assert got.attrs["interval"] == ["gaussian"] * 3 and got.attrs["coverage"] == [0.8] * 3


def test_a_cell_without_a_finite_variance_is_not_estimable():
    got = estimate_frame(
        {"geocode": ["1", "2"]}, np.array([[1.0], [2.0]]), np.array([[1.0], [np.inf]]),
        pd.DataFrame(index=[0]), 0.95, ["a", "no measurement"], rows=np.array([1]),
    )  # fmt: skip
    assert got["note"].tolist() == ["no measurement"] and np.isnan(got["estimate"][0])
    assert got.attrs["interval"] == ["not estimable"] and np.isnan(got.attrs["coverage"][0])


def test_geocodes_are_distinct_strings():
    assert check_geocodes("01").tolist() == ["01"]
    assert check_geocodes(("2", "1")).tolist() == ["2", "1"]
    with pytest.raises(InvariantDPError, match=r"`geocodes` must name at least one unit"):
        check_geocodes([])
    with pytest.raises(InvariantDPError, match=r"`geocodes` lists the unit '1' twice"):
        check_geocodes(["1", "2", "1"])
    with pytest.raises(TypeError, match=r"`geocodes` holds 1 \(int\): a geocode is a string"):
        check_geocodes(["01", 1])
    with pytest.raises(InvariantDPError, match=r"`geocodes` \(5\) must be a geocode or a list"):
        check_geocodes(5)

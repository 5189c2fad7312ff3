"""Schema, Geography, NoisyMeasurements and their privacy guarantee."""

import numpy as np
import pandas as pd
import pytest

from invariantdp.census import PL94, CensusPrivacy, Geography, NoisyMeasurements, Schema
from invariantdp.exceptions import InvariantDPError
from invariantdp.privacy import zcdp_to_eps_delta


def test_pl94_is_the_redistricting_schema():
    assert PL94.names == ("hhgq", "votingage", "hispanic", "cenrace")
    assert PL94.shape == (8, 2, 2, 63) and PL94.k == 2016
    assert PL94.query_shape("votingage * hispanic * cenrace") == (2, 2, 63)
    assert PL94.query_cells("hhgq") == 8 and PL94.query_cells("total") == 1
    assert len(PL94.queries) == 16 and PL94.queries[0] == "total" and PL94.queries[-1] == "detailed"


def test_query_names_join_attributes_in_schema_order():
    s = Schema({"a": 2, "b": ["x", "y", "z"], "c": 4})
    assert s.query("a * c") == (0, 2)
    assert s.query_name((2, 0)) == "a * c"
    assert s.query("a * b * c") == s.query("detailed") == (0, 1, 2)
    with pytest.raises(
        InvariantDPError, match=r"must name its attributes in schema order: 'a \* c'"
    ):
        s.query("c * a")
    with pytest.raises(InvariantDPError, match="is not a query of the schema"):
        s.query("a * d")
    with pytest.raises(InvariantDPError, match="is not a query of the schema"):
        s.query("a * a")
    with pytest.raises(TypeError, match="`query` must be a str"):
        s.query(("a",))


def test_a_query_answer_is_the_histogram_summed_in_c_order():
    s = Schema({"a": 2, "b": 3, "c": 2})
    cells = s.cell_frame("a * c")
    assert cells.to_dict("list") == {"a": [0, 0, 1, 1], "c": [0, 1, 0, 1]}
    s2 = Schema({"sex": ["F", "M"], "age": ["y", "o"]})
    assert s2.cell_frame("detailed").to_dict("list") == {
        "sex": ["F", "F", "M", "M"],
        "age": ["y", "o", "y", "o"],
    }
    assert s2.level_codes("age", ["o", "y"]).tolist() == [1, 0]


@pytest.mark.parametrize(
    "attributes, message",
    [
        ({}, "must be a non-empty mapping"),
        ([("a", 2)], "must be a non-empty mapping"),
        ({"a": 0}, "must have at least 1 level"),
        ({"a": ["x", "x"]}, "repeat"),
        ({"a": 2.5}, "must be a level count >= 1 or a non-empty list"),
        ({"total": 2}, "other than 'total' and 'detailed'"),
        ({"a*b": 2}, "without '\\*'"),
    ],
)
def test_schema_rules(attributes, message):
    with pytest.raises(InvariantDPError, match=message):
        Schema(attributes)


def test_geography_defaults_and_rules():
    g = Geography()
    assert dict(zip(g.names, g.widths, strict=True)) == {
        "State": 2,
        "County": 5,
        "Tract": 11,
        "Block_Group": 12,
        "Block": 16,
    }
    assert g.subset("Tract", "Block").names == ("Tract", "Block_Group", "Block")
    assert g.parent("0100102010012345", "Block") == "010010201001"
    with pytest.raises(InvariantDPError, match="must exceed that of `County` \\(5\\)"):
        Geography({"State": 2, "County": 5, "Tract": 5})
    with pytest.raises(InvariantDPError, match="must be an int >= 1"):
        Geography({"State": 0})
    with pytest.raises(InvariantDPError, match="is not a level of the geography"):
        g.index("Place")
    with pytest.raises(InvariantDPError, match="must not be above"):
        g.subset("Tract", "County")
    with pytest.raises(InvariantDPError, match="have no parent"):
        g.parent("01", "State")


def test_units_without_a_parent_are_refused():
    units = (np.array(["01"]), np.array(["01001", "02001"]))
    with pytest.raises(InvariantDPError, match="'02001' of level `County` has no parent"):
        NoisyMeasurements(Schema({"a": 2}), Geography({"State": 2, "County": 5}), units)


def frames():
    dpq = pd.DataFrame(
        {
            "geocode": ["1", "11", "12", "11"],
            "query_name": ["total_dpq", "detailed_dpq", "detailed_dpq", "total_dpq"],
            "value": [[30.0], [9.0, 11.0, 1.0], [4.0, 7.0, 2.0], [21.0]],
            "variance": [1.0, 2.0, 2.0, 0.5],
        }
    )
    con = pd.DataFrame(
        {"geocode": ["1"], "query_name": ["total_con"], "sign": ["="], "value": [[33.0]]}
    )
    return dpq, con


def test_from_frames_builds_arrays_per_level_and_query():
    dpq, con = frames()
    nm = NoisyMeasurements.from_frames(dpq, con, Schema({"a": 3}), Geography({"A": 1, "B": 2}))
    t = nm.measurements[("B", "detailed")]
    assert t.units.tolist() == [0, 1] and t.values.shape == (2, 3)
    assert nm.measurements[("B", "total")].variance.tolist() == [0.5]
    assert nm.invariants[("A", "total")].values.tolist() == [[33.0]]
    long = nm.answers("B", "detailed")
    assert list(long.columns) == ["geocode", "a", "value", "variance"] and len(long) == 6
    assert "2 units" in str(nm.summary())


def test_from_frames_errors_name_the_frame_row_and_field():
    dpq, con = frames()
    dpq.loc[2, "geocode"] = "123"
    with pytest.raises(InvariantDPError, match="dpquery, row 2, field `geocode`"):
        NoisyMeasurements.from_frames(dpq, con, Schema({"a": 3}), Geography({"A": 1, "B": 2}))


def test_privacy_is_zcdp_composed_over_levels_and_queries_with_sensitivity_sqrt2():
    dpq, _ = frames()
    nm = NoisyMeasurements.from_frames(dpq, None, Schema({"a": 3}), Geography({"A": 1, "B": 2}))
    p = nm.privacy
    # rho = Delta^2 / (2 sigma^2) = 1 / sigma^2, the largest over a level's units, summed
    assert p.rho_by_query == {("A", "total"): 1.0, ("B", "detailed"): 0.5, ("B", "total"): 2.0}
    assert p.rho == 3.5
    assert p.sensitivity == pytest.approx(np.sqrt(2)) and "bounded" in p.adjacency
    assert p.epsilon(1e-10) == zcdp_to_eps_delta(3.5, 1e-10)
    assert p.epsilon(1e-10, method="bun-steinke") == pytest.approx(
        3.5 + 2 * np.sqrt(3.5 * np.log(1e10))
    )
    assert "not covered" in str(p.summary())
    assert CensusPrivacy.from_variances({}).rho == 0.0


def test_with_constraint_checks_its_matrix():
    dpq, _ = frames()
    nm = NoisyMeasurements.from_frames(dpq, None, Schema({"a": 3}), Geography({"A": 1, "B": 2}))
    nm2 = nm.with_constraint("B", "11", [[1, -1, 0]], [0])
    assert len(nm2.linear) == 1 and not nm.linear
    with pytest.raises(InvariantDPError, match="must be finite with 3 columns"):
        nm.with_constraint("B", "11", [[1, -1]], [0])
    with pytest.raises(InvariantDPError, match="not units of level `B`"):
        nm.with_constraint("B", "19", [[1, -1, 0]], [0])

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
        Geography({"US": 0, "State": 0})
    with pytest.raises(InvariantDPError, match=r"must be an int >= 0 \(0: a single root unit"):
        Geography({"US": -1})
    root = Geography({"US": 0, "State": 3, "County": 9})  # the release's optimized spine
    assert root.parent("044", "State") == "" and root.parent("044007123", "County") == "044"
    assert root.tree([[""], ["044", "045"], ["044007123"]])[1].tolist() == [0, 0]
    # geocodes are ASCII digits: other scripts' digits and superscripts are refused
    assert root.check_geocodes(["٠٤٤", "0²4", "044"], "State").tolist() == [0, 1]
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


# -- recodes: groups of an attribute's levels ---------------------------------------------


def _group_answer(hist, schema, attrs, recodes):
    """A query answer summed cell by cell with explicit loops (the reference)."""
    factors = [(recodes[a].shape[0] if a in recodes else schema.shape[a]) for a in attrs]
    out = np.zeros(int(np.prod(factors, dtype=np.int64)) if factors else 1)
    for cell in np.ndindex(*schema.shape):
        idx = []
        for a in attrs:
            if a in recodes:
                hit = np.flatnonzero(recodes[a][:, cell[a]])
                if hit.size == 0:
                    break
                idx.append(int(hit[0]))
            else:
                idx.append(cell[a])
        else:
            out[np.ravel_multi_index(idx, factors) if idx else 0] += hist[cell]
    return out


def test_recodes_group_levels_and_query_spec_gives_the_group_matrices():
    s = Schema(
        {"g": 5, "v": ["young", "old"], "r": 3},
        recodes={"inst": ("g", [[0], [1, 2], [4]]), "minor": ("v", {"under 18": [0]})},
    )
    attrs, recodes = s.query_spec("inst * minor")
    assert attrs == (0, 1)
    assert recodes[0].tolist() == [[1, 0, 0, 0, 0], [0, 1, 1, 0, 0], [0, 0, 0, 0, 1]]
    assert recodes[1].tolist() == [[1, 0]] and recodes[0].dtype.kind == "i"
    assert s.query_shape("inst * minor * r") == (3, 1, 3) and s.query_cells("inst") == 3
    assert s.query_spec("v * r") == ((1, 2), {}) and s.is_recoded("inst * r")
    assert s.labels("minor") == ["under 18"] and s.labels("inst") == [0, 1, 2]
    frame = s.cell_frame("inst * minor")
    assert frame.to_dict("list") == {"inst": [0, 1, 2], "minor": ["under 18"] * 3}
    # the C-order Kronecker product of the factors is the loop sum over detailed cells
    hist = np.random.default_rng(3).integers(0, 9, size=s.shape)
    for name in ("inst", "inst * minor", "minor * r", "inst * v * r", "detailed", "total"):
        attrs, recodes = s.query_spec(name)
        mat = np.ones((1, 1))
        for a, n in enumerate(s.shape):
            if a in recodes:
                f = recodes[a]
            elif a in attrs:
                f = np.eye(n)
            else:
                f = np.ones((1, n))
            mat = np.kron(mat, f)
        assert mat.shape[0] == s.query_cells(name)
        expect = _group_answer(hist, s, attrs, recodes)
        np.testing.assert_array_equal(mat @ hist.reshape(-1), expect)
    with pytest.raises(InvariantDPError, match=r"uses the recode\(s\) inst.*query_spec"):
        s.query("inst * r")
    with pytest.raises(InvariantDPError, match="names the attribute 'g' twice"):
        s.query_spec("g * inst")
    assert Schema(s) == s and hash(Schema(s)) == hash(s) and s != Schema(s.as_dict())
    assert "recodes=" in repr(s)


@pytest.mark.parametrize(
    "recodes, message",
    [
        ({"x": ("g", [[0], [0, 1]])}, "must be disjoint"),
        ({"x": ("g", [[]])}, "must be a non-empty list of level indices"),
        ({"x": ("g", [[5]])}, r"level indices of `g` in \[0, 5\)"),
        ({"x": ("g", [[True]])}, "level indices"),
        ({"x": ("q", [[0]])}, "is not an attribute of the schema"),
        ({"g": ("g", [[0]])}, "is the name of an attribute"),
        ({"total": ("g", [[0]])}, "other than 'total' and 'detailed'"),
        ({"x": ("g",)}, r"must be a pair \(attribute, groups\)"),
        ({"x": ("g", [])}, "must be a non-empty list of lists"),
        ([("x", ("g", [[0]]))], "must map recode names"),
    ],
)
def test_recode_rules(recodes, message):
    with pytest.raises(InvariantDPError, match=message):
        Schema({"g": 5, "v": 2}, recodes=recodes)


def test_pl94_carries_the_bureaus_labels_and_recodes():
    # hhgq_person_simple.py, votingage.py, hisp.py and cenrace.py of the Bureau's production code
    assert PL94.labels("hhgq")[0] == "Household"
    assert PL94.labels("hhgq")[3] == "Nursing facilities/Skilled-nursing facilities"
    assert PL94.labels("hhgq")[7] == "Other noninstitutional facilities"
    assert PL94.labels("votingage") == ["17 and under", "18 and over"]
    assert PL94.labels("hispanic") == ["Not Hispanic or Latino", "Hispanic or Latino"]
    races = PL94.labels("cenrace")
    assert races[:6] == ["white", "black", "aian", "asian", "nhopi", "sor"]
    assert races[6] == "white-black" and races[20] == "nhopi-sor"
    assert races[21] == "white-black-aian" and races[40] == "asian-nhopi-sor"
    assert races[55] == "aian-asian-nhopi-sor" and races[62] == "white-black-aian-asian-nhopi-sor"
    sizes = np.bincount([r.count("-") + 1 for r in races])
    assert sizes.tolist() == [0, 6, 15, 20, 15, 6, 1]
    assert PL94.recodes["hhinstlevels"] == (
        "hhgq",
        {
            "Household": [0],
            "Institutional Facility": [1, 2, 3, 4],
            "Non-Institutional Facility": [5, 6, 7],
        },
    )
    nurse = PL94.query_spec("gqNursingTotal * nonvoting")[1]
    assert nurse[0].tolist() == [[0, 0, 0, 1, 0, 0, 0, 0]] and nurse[1].tolist() == [[1, 0]]
    assert PL94.query_shape("hhinstlevels") == (3,)
    # one matrix per recode, the form query_spec gives and selections and invariants read
    hh = PL94.recode_matrix("hhinstlevels")
    assert hh.tolist() == [[1, 0, 0, 0, 0, 0, 0, 0], [0, 1, 1, 1, 1, 0, 0, 0],
                           [0, 0, 0, 0, 0, 1, 1, 1]]  # fmt: skip
    np.testing.assert_array_equal(PL94.query_spec("hhinstlevels")[1][0], hh)
    with pytest.raises(InvariantDPError, match=r"`name` \('hhgq'\) is not a recode of the schema"):
        PL94.recode_matrix("hhgq")
    # integer level indices stay accepted beside the labels
    assert PL94.level_codes("votingage", np.array([1, 0])).tolist() == [1, 0]
    assert PL94.level_codes("votingage", ["18 and over"]).tolist() == [1]
    from invariantdp.census import PL94_UNITS

    assert PL94_UNITS.names == ("h1",) and PL94_UNITS.labels("h1") == ["Vacant", "Occupied"]


def test_problem_items_carry_recodes_and_gls_uses_them():
    from invariantdp._gls import Equality, Measurement, Problem, Zeros
    from invariantdp.census import gls

    s = Schema({"g": 3, "v": 2}, recodes={"gq": ("g", [[1, 2]]), "minor": ("v", [[0]])})
    attrs, rec = s.query_spec("gq * minor")
    parents = [np.array([-1]), np.array([0, 0])]
    p = Problem(
        s.shape,
        parents,
        [Measurement(1, attrs, [0, 1], [[1.0], [2.0]], [1.0, 1.0], recodes=rec)],
        [Equality(0, *s.query_spec("gq")[:1], [0], [[3.0]], recodes=s.query_spec("gq")[1])],
        [Zeros(1, attrs, [1], [[True]], recodes=rec)],
    )
    assert [it.recodes[0].tolist() for it in p.recoded()] == [[[0, 1, 1]]] * 3
    sub = p.subtree(1, [(0, 2)])
    assert sub.measurements[0].recodes[0].tolist() == [[0, 1, 1]]
    with pytest.raises(InvariantDPError, match=r"one row of 1 cells per unit"):
        Problem(s.shape, parents, [Measurement(1, attrs, [0], [[1.0, 2.0]], [1.0], recodes=rec)])
    with pytest.raises(InvariantDPError, match=r"disjoint groups of levels"):
        Problem(s.shape, parents, [Measurement(1, (0,), [0], [[1.0]], [1.0], {0: [[1, 1, 2]]})])
    with pytest.raises(InvariantDPError, match="not among the query's attributes"):
        bad = Measurement(1, (1,), [0], [[1.0, 1.0]], [1.0], {0: [[1, 0, 0]]})
        Problem(s.shape, parents, [bad])
    dpq = pd.DataFrame(
        {
            "geocode": ["1", "11", "12", "11"],
            "query_name": ["total_dpq", "detailed_dpq", "detailed_dpq", "gq * minor_dpq"],
            "value": [[9.0], [1.0] * 6, [2.0] * 6, [1.0]],
            "variance": [1.0, 2.0, 2.0, 4.0],
        }
    )
    nm = NoisyMeasurements.from_frames(dpq, None, s, Geography({"A": 1, "B": 2}))
    prob = nm.to_problem()
    assert [m.recodes for m in prob.measurements if m.recodes][0][0].tolist() == [[0, 1, 1]]
    # gls takes the recoded measurement (the dense-factor passes): it moves the estimates
    full = gls(nm).estimate("total", "B")["estimate"].to_numpy()
    plain_nm = nm.without_queries("gq * minor")
    assert plain_nm.recoded_queries() == []
    plain = gls(plain_nm).estimate("total", "B")["estimate"].to_numpy()
    assert np.all(np.isfinite(full)) and not np.allclose(full, plain)

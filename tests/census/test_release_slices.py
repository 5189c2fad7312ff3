"""Slices of a hierarchy as labelled releases (issue 19, "Models on top").

The joint covariance of a query over many units is checked against the dense
constrained GLS (every pair of units, every query, random hierarchies with
invariants, structural zeros, other equalities, missing measurements and
per-cell variances) and, in the user's terms, against ``GLSEstimate.cov`` of
single units and of sums of two units (a different recursion).  The
invariants a release carries are exact facts of the dense solution.
"""

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from _gls.kkt import DenseGLS, query_matrix
from _gls.problems import random_problem
from _gls.test_tree_passes import CASES, queries
from invariantdp import Release
from invariantdp._gls import slice_cov, solve
from invariantdp._gls._unit_pair_covariances import _law
from invariantdp.census import Geography, NoisyMeasurements, Schema, gls, measure
from invariantdp.census._measurements import QueryTable
from invariantdp.census._slice import slice_invariants
from invariantdp.distributions import discrete_gaussian
from invariantdp.exceptions import InvariantDPError

SCHEMA = Schema({"sex": ["F", "M"], "age": ["0-17", "18-64", "65+"]})
GEO = Geography({"State": 2, "County": 5, "Tract": 11, "Block": 14})


def dense_slice(ref, level, units, attrs):
    """``(estimate, covariance, identified)`` of a query over units, from the KKT solution."""
    q = query_matrix(ref.shape, attrs)
    rows = np.vstack([ref._lift(level, u, q) for u in units])
    ident = np.linalg.norm(rows @ ref.unidentified, axis=1) < 1e-8
    return rows @ ref.x, rows @ ref.cov @ rows.T, ident


def assert_slice_matches(sol, ref, level, units, attrs):
    cov = slice_cov(sol, level, units, attrs)
    _, want, ident = dense_slice(ref, level, units, attrs)
    assert np.array_equal(np.isfinite(np.diag(cov)), ident)
    sub = np.ix_(ident, ident)
    scale = max(np.abs(want).max(initial=0.0), 1.0)
    assert np.max(np.abs(cov[sub] - want[sub]), initial=0.0) <= 1e-8 * scale
    assert np.all(np.isinf(cov[~ident, :])) and np.all(np.isinf(cov[:, ~ident]))


@pytest.mark.parametrize("case", range(len(CASES)))
def test_covariances_between_units_equal_the_dense_gls(case):
    shape, fan, roots, p_missing, n_zero, n_linear, per_cell = CASES[case]
    rng = np.random.default_rng(500 + case)
    prob, _ = random_problem(rng, shape, fan, roots, p_missing, n_zero, n_linear, 1, per_cell)
    sol, ref = solve(prob), DenseGLS(prob)
    for lev, n in enumerate(prob.sizes):
        for attrs in queries(len(shape)):
            assert_slice_matches(sol, ref, lev, np.arange(n), attrs)
            some = np.flatnonzero(rng.random(n) < 0.5)
            if some.size:
                assert_slice_matches(sol, ref, lev, some, attrs)


@pytest.mark.parametrize("seed", [5, 7])
def test_siblings_both_unidentified_from_below(seed):
    # many missing measurements: sibling subtrees with unidentified directions on U,
    # whose conditional covariance given the parent needs the joint posterior
    rng = np.random.default_rng(seed)
    prob, _ = random_problem(rng, (2, 3), (3, 3, 2), 1, 0.6, 2, 1, 1, False)
    sol, ref = solve(prob), DenseGLS(prob)
    both = [
        (lev, c, d)
        for lev in range(1, len(prob.sizes))
        for p in range(prob.sizes[lev - 1])
        if sol.affected[lev - 1][p]
        for c in range(sol.starts[lev][p], sol.starts[lev][p + 1])
        for d in range(c + 1, sol.starts[lev][p + 1])
        if _law(sol, lev, c).null.shape[1] and _law(sol, lev, d).null.shape[1]
    ]
    assert both  # the case is exercised
    for lev, n in enumerate(prob.sizes):
        for attrs in queries(2):
            assert_slice_matches(sol, ref, lev, np.arange(n), attrs)


@pytest.mark.parametrize("case", range(len(CASES)))
def test_the_invariants_of_a_slice_are_exact_facts(case):
    shape, fan, roots, p_missing, n_zero, n_linear, per_cell = CASES[case]
    rng = np.random.default_rng(900 + case)
    prob, _ = random_problem(rng, shape, fan, roots, p_missing, n_zero, n_linear, 2, per_cell)
    sol, ref = solve(prob), DenseGLS(prob)
    names = (
        [f"L{lev}" for lev in range(len(prob.sizes))],
        [
            np.array([f"{lev}-{u}" for u in range(n)], dtype=object)
            for lev, n in enumerate(prob.sizes)
        ],
    )
    schema = Schema({f"a{i}": n for i, n in enumerate(shape)})
    found = 0
    for lev, n in enumerate(prob.sizes):
        for attrs in queries(len(shape)):
            units = np.arange(n)
            inv = slice_invariants(prob, sol.zero_cells, schema, names, lev, attrs, units)
            inv = inv.invariants()
            if inv is None:
                continue
            found += inv.n_invariants
            x, cov, _ = dense_slice(ref, lev, units, attrs)
            c = inv.dense_matrix()
            assert np.abs(c @ cov @ c.T).max() <= 1e-8 * max(np.abs(cov).max(), 1.0)
            assert c @ x == pytest.approx(inv.values, rel=1e-8, abs=1e-8)
            est = sol.alg.marginal(sol.x[lev], attrs).reshape(-1)
            assert c @ est == pytest.approx(inv.values, rel=1e-8, abs=1e-8)
    assert found


def test_a_root_total_bears_on_every_level_it_covers():
    rng = np.random.default_rng(3)
    prob, _ = random_problem(rng, (2, 2), (2, 3), 1, 0.0, 0, 0, 0, False, allow_leaves=False)
    sol = solve(prob)
    names = (["S", "C", "T"], [np.array([str(u) for u in range(n)]) for n in prob.sizes])
    schema = Schema({"a": 2, "b": 2})
    for lev, n in enumerate(prob.sizes):
        inv = slice_invariants(prob, sol.zero_cells, schema, names, lev, (1,), np.arange(n))
        inv = inv.invariants()
        assert inv.names == ("S 0: total",)
        assert np.array_equal(inv.dense_matrix(), np.ones((1, 2 * n)))
        part = slice_invariants(prob, sol.zero_cells, schema, names, lev, (1,), np.arange(n - 1))
        assert lev == 0 or part.invariants() is None  # the slice no longer covers the state


def small_counts(rng):
    rows = []
    for c in range(2):
        for t in range(3):
            for b in range(2):
                geocode = f"01{c:03d}{t:06d}{b:03d}"
                for s in ("F", "M"):
                    for a in ("0-17", "18-64", "65+"):
                        rows.append((geocode, s, a, int(rng.poisson(5))))
    return pd.DataFrame(rows, columns=["geocode", "sex", "age", "count"])


@pytest.fixture(scope="module")
def state():
    rng = np.random.default_rng(19)
    counts = small_counts(rng)
    wl = {lev: {"total": 1.0, "sex": 0.5, "age": 0.5, "detailed": 0.5} for lev in GEO.names}
    nm = measure(
        counts,
        SCHEMA,
        GEO,
        wl,
        invariants={"State": ["total"], "County": ["sex"]},
        secure=False,
        rng=4,
        units=counts["geocode"].unique(),
    )
    return counts, nm, gls(nm)


def test_release_of_estimates_in_the_users_terms(state):
    _, nm, est = state
    r = est.to_release("sex", "Tract")
    frame = est.estimate("sex", "Tract")
    series = r.to_series()
    assert list(series.index.names) == ["geocode", "sex"]
    assert series.index.get_level_values("sex").tolist() == frame["sex"].tolist()
    assert np.allclose(series.to_numpy(), frame["estimate"].to_numpy(), rtol=0, atol=1e-12)
    cov = np.array(r.noise.params["cov"])
    codes = nm.geocodes("Tract")
    for i, u in enumerate(codes):
        own = cov[2 * i : 2 * i + 2, 2 * i : 2 * i + 2]
        assert own == pytest.approx(est.cov("sex", u).to_numpy(), rel=1e-9, abs=1e-12)
        for j in range(i + 1, len(codes)):
            pair = np.ix_(
                [2 * i, 2 * i + 1, 2 * j, 2 * j + 1], [2 * i, 2 * i + 1, 2 * j, 2 * j + 1]
            )
            summed = cov[pair].reshape(2, 2, 2, 2).sum(axis=(0, 2))
            want = est.cov("sex", [u, codes[j]]).to_numpy()  # the sum recursion, independently
            assert summed == pytest.approx(want, rel=1e-9, abs=1e-12)
    assert r.mechanism == "census_gls" and r.simulation
    assert r.guarantee.definition == "zCDP" and r.guarantee.params["rho"] == nm.privacy.rho
    assert r.metadata["level"] == "Tract" and r.metadata["query"] == "sex"
    back = Release.from_json(r.to_json())
    assert back == r and back.noise.family == "correlated_gaussian"


def test_release_carries_the_invariants_its_cells_bear(state):
    counts, nm, est = state
    r = est.to_release("sex", "Tract")
    names = r.invariants.names
    assert "State 01: total" in names
    assert {"County 01000: sex sex=F", "County 01001: sex sex=M"} <= set(names)
    r.invariants.check(r.value)
    c = r.invariants.dense_matrix()
    cov = np.array(r.noise.params["cov"])
    assert np.abs(c @ cov).max() <= 1e-9 * np.abs(cov).max()  # the noise keeps them
    truth = counts.assign(county=counts["geocode"].str[:5]).groupby(["county", "sex"])["count"]
    want = truth.sum().loc[("01000", "F")]
    assert r.invariants.values[names.index("County 01000: sex sex=F")] == want
    # a total slice: the county margins sum to the county totals
    total = est.to_release("total", "Tract")
    assert set(total.invariants.names) == {
        "State 01: total",
        "County 01000: total",
        "County 01001: total",
    }


def test_a_slice_across_units(state):
    _, nm, est = state
    tracts = nm.geocodes("Tract")
    pick = [*tracts[:3], tracts[4]]  # every tract of county 01000 and one of 01001
    r = est.to_release("age", "Tract", geocodes=pick[::-1])
    assert r.to_series().index.get_level_values("geocode").unique().tolist() == pick
    names = set(r.invariants.names)
    assert not any(n.startswith(("State", "County 01001")) for n in names)
    assert "County 01000: total" in names  # its sex margin is fixed, so its total
    full = np.array(est.to_release("age", "Tract").noise.params["cov"])
    rows = np.concatenate([3 * i + np.arange(3) for i in (0, 1, 2, 4)])
    assert np.array(r.noise.params["cov"]) == pytest.approx(full[np.ix_(rows, rows)], abs=1e-12)
    with pytest.raises(InvariantDPError, match="twice"):
        est.to_release("age", "Tract", geocodes=[pick[0], pick[0]])
    with pytest.raises(InvariantDPError, match="not units of level `Tract`"):
        est.to_release("age", "Tract", geocodes=["01999000000"])


def test_structural_zeros_constraints_and_finer_invariants(state):
    counts, nm, _ = state
    zero = np.zeros((1, 6), dtype=bool)
    zero[0, 5] = True  # M, 65+ of the first tract
    nm2 = replace(nm, zeros={("Tract", "detailed"): QueryTable(np.array([0]), zero)})
    county = nm.geocodes("County")[1]
    by_sex = counts[counts["geocode"].str[:5] == county].groupby("sex")["count"].sum()
    gap = float(by_sex["F"] - by_sex["M"])  # consistent with the county's invariant sex margin
    nm2 = nm2.with_constraint("County", county, [[1, 1, 1, -1, -1, -1]], [gap])
    est = gls(nm2)
    r = est.to_release("detailed", "Tract")
    tract = nm.geocodes("Tract")[0]
    name = f"Tract {tract}: structural zero sex=M, age=65+"
    assert name in r.invariants.names
    assert r.value[5] == 0.0 and np.all(np.array(r.noise.params["cov"])[5] == 0.0)
    sex = est.to_release("sex", "Tract")
    i = sex.invariants.names.index(f"County {county}: linear constraint")
    row = sex.invariants.dense_matrix()[i]
    assert sex.invariants.values[i] == pytest.approx(gap * np.abs(row).max())
    assert np.allclose(row[6:], np.tile([1.0, -1.0], 3)) and not row[:6].any()
    # invariants below the slice: every block's total fixes its tract's total
    wl = {lev: {"total": 1.0, "detailed": 0.5} for lev in GEO.names}
    nm3 = measure(
        counts, SCHEMA, GEO, wl, invariants={"Block": ["total"]}, secure=False, rng=5,
        units=counts["geocode"].unique(),
    )  # fmt: skip
    est3 = gls(nm3)
    r3 = est3.to_release("sex", "Tract")
    assert len(r3.invariants.names) == 6
    assert r3.invariants.names[0].endswith("total (sum of its Block invariants)")
    cov3 = np.array(r3.noise.params["cov"])
    assert np.abs(r3.invariants.dense_matrix() @ cov3).max() <= 1e-9 * np.abs(cov3).max()
    truth = counts.assign(t=counts["geocode"].str[:11]).groupby("t")["count"].sum()
    assert r3.invariants.values.tolist() == truth.tolist()
    with pytest.raises(InvariantDPError, match="every cell .* is known exactly"):
        est3.to_release("total", "Tract")  # no noise left to describe


def sparse_measurements():
    """A state measured by its total; three tracts, one measured in detail, two by total."""
    dpq = pd.DataFrame(
        {
            "geocode": ["1", "11", "12", "13"],
            "query_name": ["total_dpq", "detailed_dpq", "total_dpq", "total_dpq"],
            "value": [[30.0], [5.0, 4.0], [12.0], [9.0]],
            "variance": [1.0, 1.0, 1.0, 1.0],
        }
    )
    con = pd.DataFrame(
        {"geocode": ["1"], "query_name": ["total_con"], "sign": ["="], "value": [[30.0]]}
    )
    return NoisyMeasurements.from_frames(
        dpq, con, Schema({"sex": ["F", "M"]}), Geography({"S": 1, "T": 2})
    )


def test_cells_the_data_do_not_identify():
    est = gls(sparse_measurements())
    with pytest.raises(InvariantDPError, match=r"4 cells of 'sex' at level `T` are not estimable"):
        est.to_release("sex", "T")
    r = est.to_release("sex", "T", drop_unidentified=True)
    assert r.to_series().index.tolist() == [("11", "F"), ("11", "M")]
    lost = r.metadata["not_estimable"]
    assert [x["cell"] for x in lost] == [["12", "F"], ["12", "M"], ["13", "F"], ["13", "M"]]
    assert "not estimable" in lost[0]["reason"]
    assert r.invariants is None  # the state total involves cells left out
    with pytest.raises(InvariantDPError, match="no cell of 'sex' at level `T` is estimable"):
        est.to_release("sex", "T", geocodes=["12", "13"], drop_unidentified=True)
    total = est.to_release("total", "T")  # every tract's total is identified
    assert total.invariants.names == ("S 1: total",) and total.value.sum() == pytest.approx(30.0)
    assert Release.from_json(r.to_json()) == r


def test_a_covariance_too_large_for_a_document_is_refused():
    codes = [f"1{u:05d}" for u in range(4100)]
    dpq = pd.DataFrame(
        {
            "geocode": codes,
            "query_name": ["total_dpq"] * len(codes),
            "value": [[1.0]] * len(codes),
            "variance": [1.0] * len(codes),
        }
    )
    nm = NoisyMeasurements.from_frames(dpq, None, Schema({"sex": 2}), Geography({"S": 1, "T": 6}))
    with pytest.raises(InvariantDPError, match=r"4100 units x 1 cells make a 4100 x 4100"):
        gls(nm).to_release("total", "T")


def test_release_of_measurements(state):
    _, nm, _ = state
    r = nm.to_release("County", "age")
    answers = nm.answers("County", "age")
    assert r.value.tolist() == answers["value"].astype(int).tolist()
    assert list(r.to_series().index.names) == ["geocode", "age"]
    assert r.noise.family == "discrete_gaussian"
    assert r.noise.params["sigma"] == pytest.approx(np.sqrt(2.0))
    assert r.metadata["variance"] == pytest.approx(float(discrete_gaussian.var(np.sqrt(2.0))))
    assert r.guarantee.params["rho"] == pytest.approx(0.5) and r.check_guarantee()
    assert "State 01: total" in r.invariants.names  # facts about the confidential counts
    assert Release.from_json(r.to_json()) == r
    one = nm.to_release("Tract", "detailed", geocodes=[nm.geocodes("Tract")[2]])
    assert one.value.size == 6 and one.invariants is None
    fewer = replace(nm, measurements={k: t for k, t in nm.measurements.items() if k[1] != "age"})
    with pytest.raises(InvariantDPError, match="'age' is not measured at level `County`"):
        fewer.to_release("County", "age")


def test_release_of_measurements_refuses_mixed_noise():
    dpq = pd.DataFrame(
        {
            "geocode": ["1", "11", "12"],
            "query_name": ["total_dpq", "total_dpq", "total_dpq"],
            "value": [[30.0], [12.0], [17.0]],
            "variance": [1.0, 1.0, 4.0],
        }
    )
    nm = NoisyMeasurements.from_frames(dpq, None, Schema({"sex": 2}), Geography({"S": 1, "T": 2}))
    with pytest.raises(InvariantDPError, match="2 different noise variances"):
        nm.to_release("T", "total")
    assert nm.to_release("T", "total", geocodes=["12"]).noise.params["sigma"] == 2.0
    dpq2 = dpq.iloc[:2]
    nm2 = NoisyMeasurements.from_frames(dpq2, None, Schema({"sex": 2}), Geography({"S": 1, "T": 2}))
    con = pd.DataFrame(
        {"geocode": ["12"], "query_name": ["total_con"], "sign": ["<="], "value": [[40.0]]}
    )
    with pytest.warns(UserWarning, match="kept but not used"):
        nm3 = NoisyMeasurements.from_frames(
            dpq2, con, Schema({"sex": 2}), Geography({"S": 1, "T": 2})
        )
    assert nm2.to_release("T", "total").value.tolist() == [12]
    with pytest.raises(InvariantDPError, match="not measured by 'total'"):
        nm3.to_release("T", "total")


def test_models_take_the_release_of_estimates(state):
    from invariantdp.inference import PrivatizedPoisson

    _, nm, est = state
    r = est.to_release("total", "Block")
    x = np.column_stack([np.ones(r.value.size), np.arange(r.value.size) % 2])
    fit = PrivatizedPoisson(r, x).fit(disp=0)
    obs = fit.model.observation
    assert obs.family == "correlated_gaussian" and obs.keeps_invariants
    assert obs.invariants.names == r.invariants.names  # the state total and county margins
    assert np.all(np.isfinite(fit.bse)) and fit.bse[1] > 0


def test_noisy_measurements_release_keeps_timing_tv():
    """A secure measurement's guarantee is that of its value and run time: kept by the slice."""
    counts = pd.DataFrame({"geocode": ["11", "12"], "sex": [0, 1], "count": [5, 7]})
    geo = Geography({"A": 1, "B": 2})
    workload = {"A": {"total": 1.0}, "B": {"detailed": 0.5}}
    nm = measure(counts, Schema({"sex": 2}), geo, workload, secure=True, units=["11", "12"])
    assert 0 < nm.timing_tv < 2.0**-40
    r = nm.to_release("B", "sex")
    g = r.guarantee
    assert g.params["timing_tv"] == nm.timing_tv and g.params["rho"] == 0.5
    assert g.neighbours.sensitivity == pytest.approx(np.sqrt(2)) and g.neighbours.norm == "l2"
    back = Release.from_json(r.to_json())
    assert back == r and back.check_guarantee()
    sim = measure(
        counts, Schema({"sex": 2}), geo, workload, secure=False, rng=1, units=["11", "12"]
    )
    assert sim.timing_tv == 0 and "timing_tv" not in sim.to_release("B", "sex").guarantee.params


def test_recoded_invariants_bind_the_release_of_the_dense_factor_path():
    # invariants on groups of levels (a recode) are facts of a release of the plain
    # attribute, summed over the groups; a recode that is no partition of the levels
    # (nursing alone) is no fact of a query that sums its attribute out
    schema = Schema(
        {"g": ["h", "a", "b"], "sex": ["F", "M"]},
        recodes={"grp": ("g", {"home": [0], "gq": [1, 2]}), "nurse": ("g", {"nursing": [2]})},
    )
    geo = Geography({"State": 1, "County": 2, "Tract": 3})
    rng = np.random.default_rng(1)
    rows = [
        (c, g, s, int(rng.poisson(5)))
        for c in ("111", "112", "121")
        for g in ("h", "a", "b")
        for s in ("F", "M")
    ]
    counts = pd.DataFrame(rows, columns=["geocode", "g", "sex", "count"])
    wl = {"State": {"total": 1.0}, "County": {"grp": 1.0, "sex": 1.0}, "Tract": {"detailed": 1.0}}
    nm = measure(
        counts, schema, geo, wl, invariants={"County": ["grp", "nurse * sex"]}, secure=False,
        rng=2, units=counts["geocode"].unique(),
    )  # fmt: skip
    est = gls(nm)
    paths = est.paths()
    assert paths.columns.tolist() == ["level", "fast", "low-rank", "dense", "dense-factor"]
    assert paths["dense-factor"].tolist() == [len(nm.geocodes(lev)) for lev in nm.levels]
    truth = counts.assign(county=counts["geocode"].str[:2])
    for query, names in (
        ("g", ["grp grp=home", "grp grp=gq", "nurse nurse=nursing"]),
        ("sex", ["total"]),
        ("detailed", ["grp grp=home", "grp grp=gq", "nurse * sex nurse=nursing, sex=F"]),
    ):
        rel = est.to_release(query, "Tract")
        inv = rel.invariants
        mat = inv.matrix.toarray()
        cov = np.array(rel.noise.params["cov"])
        np.testing.assert_allclose(mat @ rel.value.reshape(-1), inv.values, atol=1e-9)
        np.testing.assert_allclose(mat @ cov @ mat.T, 0.0, atol=1e-9)
        for name in names:
            assert f"County 11: {name}" in inv.names and f"County 12: {name}" in inv.names
        assert not any("nurse" in n for n in inv.names) or query != "sex"
    gq = est.to_release("g", "Tract").invariants
    want = truth[truth["g"] != "h"].groupby("county")["count"].sum()
    for county in ("11", "12"):
        assert gq.values[list(gq.names).index(f"County {county}: grp grp=gq")] == want[county]

"""GLSEstimate in the user's terms, the single-release entry point (issue 22) and Dask."""

import numpy as np
import pandas as pd
import pytest

from _gls.kkt import DenseGLS
from _gls.problems import random_problem
from invariantdp._gls import (
    estimate_release,
    marginal_constraints,
    release_problem,
    solve,
    solve_dask,
)
from invariantdp.census import Geography, Schema, gls, measure
from invariantdp.distributions import discrete_gaussian
from invariantdp.exceptions import InvariantDPError

SCHEMA = Schema({"sex": ["F", "M"], "age": ["0-17", "18-64", "65+"]})
GEO = Geography({"State": 2, "County": 5, "Tract": 11})


def small_counts(rng, counties=3, tracts=4):
    rows = []
    for c in range(counties):
        for t in range(tracts):
            for s in ("F", "M"):
                for a in ("0-17", "18-64", "65+"):
                    rows.append((f"01{c:03d}{t:06d}", s, a, int(rng.poisson(6))))
    return pd.DataFrame(rows, columns=["geocode", "sex", "age", "count"])


@pytest.fixture(scope="module")
def nm():
    rng = np.random.default_rng(8)
    wl = {lev: {"total": 2.0, "sex": 1.0, "age": 1.0, "detailed": 0.5} for lev in GEO.names}
    wl["Tract"] = {"detailed": 4.0}  # sigma = 1/2: the discrete law's variance is below 1/rho
    counts = small_counts(rng)
    nm = measure(
        counts, SCHEMA, GEO, wl, invariants={"State": ["total"]}, secure=False, rng=9,
        units=counts["geocode"].unique(),
    )  # fmt: skip
    # a structural zero at one tract and an equality that is no marginal query at a county
    zero = np.zeros((1, 6), dtype=bool)
    zero[0, 5] = True
    tract = nm.geocodes("Tract")[0]
    from dataclasses import replace

    from invariantdp.census._measurements import QueryTable

    nm = replace(nm, zeros={("Tract", "detailed"): QueryTable(np.array([0]), zero)})
    county = nm.geocodes("County")[1]
    return nm.with_constraint("County", county, [[1, -1, 0, 0, 0, 0]], [0.0]), tract


def test_estimate_frames_equal_the_dense_gls(nm):
    nm, _ = nm
    est = gls(nm)
    ref = DenseGLS(nm.to_problem())
    for li, level in enumerate(nm.levels):
        for query in ("total", "sex", "age", "detailed"):
            df = est.estimate(query, level)
            attrs = SCHEMA.query(query)
            cells = SCHEMA.query_cells(query)
            assert list(df.columns[:1]) == ["geocode"] and len(df) == cells * len(nm.units[li])
            for u in range(len(nm.units[li])):
                r_est, r_cov, _ = ref.query(li, [u], attrs)
                rows = df.iloc[u * cells : (u + 1) * cells]
                assert rows["estimate"].to_numpy() == pytest.approx(r_est, rel=1e-8, abs=1e-8)
                se = np.sqrt(np.maximum(np.diag(r_cov), 0))
                assert rows["std_error"].to_numpy() == pytest.approx(se, rel=1e-8, abs=1e-7)
    # labels of the schema in the attribute columns; the structural zero is exactly 0
    df = est.estimate("detailed", "Tract")
    assert set(df["sex"]) == {"F", "M"} and set(df["age"]) == {"0-17", "18-64", "65+"}
    assert df.loc[5, "estimate"] == 0.0 and df.loc[5, "std_error"] == 0.0


def test_standard_errors_use_the_discrete_gaussian_variance(nm):
    nm, _ = nm
    table = nm.measurements[("Tract", "detailed")]
    assert table.variance[0] == 0.25
    actual = nm.to_problem().measurements
    tract = [m for m in actual if m.level == 2][0]
    assert tract.variance[0] == pytest.approx(float(discrete_gaussian.var(0.5)))
    assert tract.variance[0] < 0.25 * 0.9


def test_sums_over_groups_and_their_covariance(nm):
    nm, _ = nm
    est = gls(nm)
    ref = DenseGLS(nm.to_problem())
    codes = nm.geocodes("Tract")
    groups = {codes[0]: "east", codes[5]: "east", codes[6]: "east", codes[9]: "west"}
    df = est.estimate("age", "Tract", groups=groups)
    assert list(df["group"]) == ["east"] * 3 + ["west"] * 3
    r_est, r_cov, _ = ref.query(2, [0, 5, 6], (1,))
    assert df["estimate"].to_numpy()[:3] == pytest.approx(r_est, rel=1e-8)
    assert df["std_error"].to_numpy()[:3] == pytest.approx(np.sqrt(np.diag(r_cov)), rel=1e-8)
    cov = est.cov("age", [codes[0], codes[5], codes[6]])
    assert cov.to_numpy() == pytest.approx(r_cov, rel=1e-8, abs=1e-10)
    assert list(cov.index) == ["0-17", "18-64", "65+"]


def test_not_estimable_cells_are_nan_with_the_reason():
    counts = pd.DataFrame(
        {
            "geocode": ["0100000000a"[:-1] + d for d in "12"],
            "sex": ["F", "M"],
            "age": ["0-17"] * 2,
            "count": [3, 4],
        }
    )
    counts["geocode"] = ["01000000001", "01000000002"]
    wl = {"State": {"detailed": 1.0}, "County": {"total": 1.0}, "Tract": {"total": 1.0, "sex": 1.0}}
    est = gls(measure(counts, SCHEMA, GEO, wl, secure=False, rng=1, units=counts["geocode"]))
    df = est.estimate("age", "Tract")
    assert df["estimate"].isna().all() and df["std_error"].isna().all()
    assert (
        df["note"]
        .str.contains("not estimable: no measurement or invariant identifies the age")
        .all()
    )
    sex = est.estimate("sex", "Tract")
    assert sex["estimate"].notna().all() and (sex["note"] == "").all()
    # the two tracts' age counts together are the state's
    both = est.estimate("age", "Tract", groups={"01000000001": "all", "01000000002": "all"})
    state = est.estimate("age", "State")
    assert both["estimate"].to_numpy() == pytest.approx(state["estimate"].to_numpy())


def test_estimate_refuses_bad_arguments(nm):
    nm, _ = nm
    est = gls(nm)
    with pytest.raises(InvariantDPError, match="not a level of the geography"):
        est.estimate("total", "Block")
    with pytest.raises(InvariantDPError, match="must name its attributes in schema order"):
        est.estimate("age * sex", "Tract")
    with pytest.raises(InvariantDPError, match="not units of level `Tract`"):
        est.estimate("total", "Tract", groups={"99999999999": "x"})
    with pytest.raises(InvariantDPError, match="confidence_level"):
        est.estimate("total", "Tract", confidence_level=1.5)
    with pytest.raises(InvariantDPError, match="`scheduler`"):
        gls(nm, scheduler="spark")
    tract = nm.geocodes("Tract")[0]
    with pytest.raises(InvariantDPError, match="lists a unit twice"):
        est.cov("total", [tract, tract])
    with pytest.raises(InvariantDPError, match="lists a unit twice"):
        est.estimate("total", "Tract", groups=pd.Series(["a", "a"], index=[tract, tract]))


def test_paths_and_summary(nm):
    nm, tract = nm
    est = gls(nm)
    paths = est.paths()
    counts = paths.set_index("level").loc["Tract"]
    assert counts["low-rank"] + counts["dense"] >= 1  # k = 6: the correction may fill it
    assert est.path("Tract")[tract] != "fast"
    assert "invariants imposed exactly" in str(est.summary())


# -- the single-release entry point of issue 22 --------------------------------------


@pytest.mark.parametrize("kind", ["total", "nested", "one-way", "matrix", "per-cell"])
def test_a_single_release_equals_the_dense_gls(kind, rng):
    shape = (4, 2, 3)  # e.g. county x sex x age
    k = 24
    truth = rng.poisson(8, k).astype(float)
    t = truth.reshape(shape)
    variance = rng.uniform(0.5, 3, k) if kind == "per-cell" else 2.0
    y = truth + rng.normal(size=k) * np.sqrt(variance)
    margins, mat, rhs = [((), [truth.sum()])], None, None
    if kind == "nested":
        margins.append(((0,), t.sum(axis=(1, 2))))  # county totals
    if kind == "one-way":
        margins += [((1,), t.sum(axis=(0, 2))), ((2,), t.sum(axis=(0, 1)))]
    if kind == "matrix":
        mat = rng.normal(size=(2, k))
        rhs = mat @ truth
    rows = np.vstack([np.eye(k), np.ones((1, k)), rng.normal(size=(2, k))])
    est, cov, sol = estimate_release(shape, y, variance, margins, mat, rhs, rows)
    ref = DenseGLS(release_problem(shape, y, variance, margins, mat, rhs))
    r_est, r_cov = ref.unit(0, 0)
    assert est == pytest.approx(rows @ r_est, rel=1e-8, abs=1e-8)
    assert cov == pytest.approx(rows @ r_cov @ rows.T, rel=1e-8, abs=1e-8)
    path = sol.path(0)[0]
    assert path == {"matrix": "low-rank", "per-cell": "dense"}.get(kind, "fast")


def test_invariant_matrices_split_into_whole_queries_and_the_rest(rng):
    shape = (3, 4)
    k = 12
    county = np.kron(np.eye(3), np.ones((1, 4)))
    other = rng.normal(size=(1, k))
    mat = np.vstack([county[[2, 0, 1]], other, np.ones((1, k))])
    values = mat @ np.arange(k, dtype=float)
    margins, rest, rest_values = marginal_constraints(shape, mat, values)
    assert [m[0] for m in margins] == [(), (0,)]
    assert margins[1][1] == pytest.approx([6.0, 22.0, 38.0])
    assert rest == pytest.approx(other) and rest_values == pytest.approx(values[3:4])


# -- Dask --------------------------------------------------------------------------------


def _same(a, b):
    for key in ("z", "v", "x", "F", "G", "Om", "Gam", "Omt", "anchor"):
        for lev, (p, q) in enumerate(zip(getattr(a, key), getattr(b, key), strict=True)):
            if key == "z" and lev > 1 and q is None:  # not gathered from the Dask workers
                continue
            if p is None or q is None:  # chains exist only with a low-rank path
                assert p is None and q is None and a.basis is None, key
                continue
            assert np.array_equal(p, q, equal_nan=True), key
    for key in ("sub", "Fd", "Gd", "Omd"):
        for p, q in zip(getattr(a, key), getattr(b, key), strict=True):
            assert p.keys() == q.keys(), key
            for u in p:
                pu, qu = p[u], q[u]
                if isinstance(pu, np.ndarray):
                    assert np.array_equal(pu, qu)
                else:
                    assert np.array_equal(pu.cov, qu.cov) and np.array_equal(pu.mean, qu.mean)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_dask_gives_results_identical_to_serial(seed):
    rng = np.random.default_rng(seed)
    prob, _ = random_problem(rng, (2, 3), (4, 2, 3), roots=1 + seed % 2, n_zero=seed, n_linear=1)
    _same(solve(prob), solve_dask(prob, None, None))


def test_a_distributed_client_gives_results_identical_to_serial():
    distributed = pytest.importorskip("distributed")
    rng = np.random.default_rng(9)
    prob, _ = random_problem(rng, (2, 3), (5, 2, 3), n_zero=1, n_linear=1)
    with distributed.Client(
        processes=False, n_workers=2, threads_per_worker=1, dashboard_address=None
    ) as client:
        _same(solve(prob), solve_dask(prob, client, None))

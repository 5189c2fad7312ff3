"""GLSEstimate in the user's terms, the single-release entry point (issue 22) and Dask."""

import itertools
import math
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from _gls.kkt import DenseGLS, leaf_indicators, query_matrix
from _gls.problems import random_problem
from invariantdp._gls import (
    estimate_release,
    marginal_constraints,
    release_problem,
    solve,
    solve_dask,
)
from invariantdp.census import Geography, Schema, gls, measure, read_nmf
from invariantdp.distributions import discrete_gaussian
from invariantdp.exceptions import InvariantDPError

from .nmf_layout import write_release

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


def test_cell_selections_take_the_full_covariance_of_their_cells(nm):
    # adults = two age cells: the standard error is that of their sum, with the
    # covariance of the two estimates (summing their variances would be wrong)
    nm, _ = nm
    est = gls(nm)
    ref = DenseGLS(nm.to_problem())
    cells = {"adults": {"age": ["18-64", "65+"]}, "F adults": {"sex": ["F"], "age": ["65+"]}}
    codes = nm.geocodes("Tract")
    df = est.estimate("sex * age", "Tract", cells=cells)
    assert list(df.columns) == [
        "geocode", "cells", "estimate", "std_error", "moe", "ci_lower", "ci_upper", "note",
    ]  # fmt: skip
    assert df["geocode"].tolist() == list(np.repeat(codes, 2))
    assert df["cells"].tolist() == ["adults", "F adults"] * codes.size
    rows = np.array([[0, 1, 1, 0, 1, 1], [0, 0, 1, 0, 0, 0]], dtype=float)
    naive = []
    for u in range(codes.size):  # the structural-zero tract and its low-rank neighbours included
        r_est, r_cov, _ = ref.query(2, [u], (0, 1))
        got = df.iloc[2 * u : 2 * u + 2]
        assert got["estimate"].to_numpy() == pytest.approx(rows @ r_est, rel=1e-8, abs=1e-8)
        se = np.sqrt(np.diag(rows @ r_cov @ rows.T))
        assert got["std_error"].to_numpy() == pytest.approx(se, rel=1e-7, abs=1e-8)
        naive.append(math.sqrt(rows[0] @ np.diag(np.diag(r_cov)) @ rows[0]))
    assert not np.allclose(df["std_error"].to_numpy()[::2], naive, rtol=1e-3)
    # the same selection summed over a group of tracts, and for chosen units only
    groups = {codes[0]: "east", codes[5]: "east", codes[9]: "west"}
    by = est.estimate("sex * age", "Tract", groups=groups, cells=cells)
    assert by["group"].tolist() == ["east", "east", "west", "west"]
    r_est, r_cov, _ = ref.query(2, [0, 5], (0, 1))
    assert by["estimate"].to_numpy()[:2] == pytest.approx(rows @ r_est, rel=1e-8)
    se = np.sqrt(np.diag(rows @ r_cov @ rows.T))
    assert by["std_error"].to_numpy()[:2] == pytest.approx(se, rel=1e-7)
    part = est.estimate("sex * age", "Tract", cells=cells, geocodes=[codes[3]])
    pd.testing.assert_frame_equal(part, df.iloc[6:8].reset_index(drop=True))
    # the structural zero (M, 65+ at the first tract) alone: exactly 0, no error
    zero = est.estimate("detailed", "Tract", cells={"old men": {"sex": ["M"], "age": ["65+"]}})
    assert zero["estimate"][0] == 0.0 and zero["std_error"][0] == 0.0


def test_cell_selections_of_units_below_the_low_rank_path_are_the_dense_gls():
    # tracts measured by age only (their sex split is not identified) in a county that the
    # low-rank correction anchors (zeros at tracts of the other counties): rounding of R B on
    # the sex eigenspaces must not meet their infinite variances
    from dataclasses import replace

    from invariantdp.census._measurements import QueryTable

    counts = small_counts(np.random.default_rng(8))
    wl = {"State": {"detailed": 1.0}, "County": {"detailed": 1.0}, "Tract": {"age": 1.0}}
    nm = measure(counts, SCHEMA, GEO, wl, secure=False, rng=9, units=counts["geocode"].unique())
    zero = np.zeros((2, 6), dtype=bool)
    zero[0, 5] = zero[1, 1] = True
    nm = replace(nm, zeros={("Tract", "detailed"): QueryTable(np.array([0, 4]), zero)})
    est = gls(nm)
    ref = DenseGLS(nm.to_problem())
    codes = nm.geocodes("Tract")
    assert est.solution.anchor[2][8:, 0].min() >= 0 and (est.path("Tract")[8:] == "fast").all()
    cells = {"adults": {"age": ["18-64", "65+"]}, "kids": {"age": ["0-17"]}}
    rows = np.array([[0, 1, 1], [1, 0, 0]], dtype=float)
    for query in ("age", "sex * age"):
        df = est.estimate(query, "Tract", cells=cells)
        for u in range(codes.size):
            r_est, r_cov, _ = ref.query(2, [u], (1,))
            got = df.iloc[2 * u : 2 * u + 2]
            assert got["estimate"].to_numpy() == pytest.approx(rows @ r_est, rel=1e-8, abs=1e-8)
            se = np.sqrt(np.diag(rows @ r_cov @ rows.T))
            assert got["std_error"].to_numpy() == pytest.approx(se, rel=1e-7, abs=1e-8)
    # summed over a group of those tracts: the crosswalk's selections too
    by = est.estimate("age", "Tract", groups={codes[8]: "g", codes[10]: "g"}, cells=cells)
    r_est, r_cov, _ = ref.query(2, [8, 10], (1,))
    se = np.sqrt(np.diag(rows @ r_cov @ rows.T))
    assert by["std_error"].to_numpy() == pytest.approx(se, rel=1e-7, abs=1e-8)


def test_cell_selections_are_checked_before_any_work(nm):
    nm, _ = nm
    est = gls(nm)
    with pytest.raises(InvariantDPError, match=r"`cells\['a'\]\['age'\]`.*'90\+'.*not among"):
        est.estimate("age", "Tract", cells={"a": {"age": ["90+"]}})
    with pytest.raises(InvariantDPError, match=r"names the level 'sex'; the cells' levels are"):
        est.estimate("age", "Tract", cells={"a": {"sex": ["F"]}})
    with pytest.raises(InvariantDPError, match="must map names to selections"):
        est.estimate("age", "Tract", cells=["18-64"])
    with pytest.raises(InvariantDPError, match=r"must be a list of labels"):
        est.estimate("age", "Tract", cells={"a": {"age": "18-64"}})
    with pytest.raises(InvariantDPError, match=r"'total' has a single cell"):
        est.estimate("total", "Tract", cells={"a": {"age": ["18-64"]}})


def test_crosswalks_take_dicts_series_and_two_column_frames(nm):
    nm, _ = nm
    est = gls(nm)
    codes = nm.geocodes("Tract")
    walk = {codes[0]: "east", codes[5]: "east", codes[9]: "west"}
    want = est.estimate("age", "Tract", groups=walk)
    frame = pd.DataFrame({"tract": list(walk), "area": list(walk.values())})
    pd.testing.assert_frame_equal(est.estimate("age", "Tract", groups=frame), want)
    pd.testing.assert_frame_equal(est.estimate("age", "Tract", groups=pd.Series(walk)), want)
    with pytest.raises(InvariantDPError, match=r"two columns \(unit, area\); it has 3"):
        est.estimate("age", "Tract", groups=frame.assign(x=1))
    with pytest.raises(InvariantDPError, match=r"keys must be geocodes as strings.*1 has type int"):
        est.estimate("age", "Tract", groups={1: "east"})
    with pytest.raises(InvariantDPError, match=f"gives the unit '{codes[0]}' no area"):
        est.estimate("age", "Tract", groups={codes[0]: None})
    with pytest.raises(TypeError, match="`groups` must be a mapping"):
        est.estimate("age", "Tract", groups=[codes[0]])


def test_crosswalk_areas_sort_by_value_and_keep_their_type(nm):
    nm, _ = nm
    est = gls(nm)
    codes = nm.geocodes("Tract")
    # integer district ids: 2 before 10 (as strings "10" would come first), kept as integers
    walk = {codes[0]: 10, codes[1]: 2, codes[2]: 10, codes[3]: 2}
    df = est.estimate("total", "Tract", groups=walk)
    assert df["group"].tolist() == [2, 10]
    assert all(type(g) is int for g in df["group"])
    ref = est.estimate("total", "Tract", groups={c: f"d{a:02d}" for c, a in walk.items()})
    np.testing.assert_array_equal(df["estimate"], ref["estimate"])
    np.testing.assert_array_equal(df["std_error"], ref["std_error"])
    # 1 and "1" are different areas: refused, not merged
    with pytest.raises(TypeError, match=r"of one type.*'1' has type str and 1 type int"):
        est.estimate("total", "Tract", groups={codes[0]: "1", codes[1]: 1})


def test_crosswalk_keys_are_geocodes_or_tabulation_codes_never_both():
    # blocks 18 digits long: a 2-digit group, then a 16-digit tabulation code; two
    # groups hold blocks with the same tabulation code, so that code is ambiguous
    tab = ["4400100000011000", "4400100000011001", "4400100000011002"]
    blocks = ["10" + tab[0], "10" + tab[1], "11" + tab[2], "11" + tab[0]]
    counts = pd.DataFrame({"geocode": blocks, "sex": ["F", "M", "F", "M"], "count": [4, 2, 5, 1]})
    est = gls(
        measure(
            counts, Schema({"sex": ["F", "M"]}), Geography({"G": 2, "Block": 18}),
            {"G": {"total": 1.0}, "Block": {"detailed": 1.0}}, secure=False, rng=2,
            units=blocks,
        )
    )  # fmt: skip
    by_geo = est.estimate("total", "Block", groups={blocks[1]: "a", blocks[2]: "a"})
    by_tab = est.estimate("total", "Block", groups={tab[1]: "a", tab[2]: "a"})
    pd.testing.assert_frame_equal(by_tab, by_geo)
    with pytest.raises(
        InvariantDPError,
        match=f"'{tab[0]}' is the tabulation block code of "
        f"several units of level `Block` \\({blocks[0]}, {blocks[3]}\\)",
    ):
        est.estimate("total", "Block", groups={tab[1]: "a", tab[0]: "b"})
    with pytest.raises(InvariantDPError, match=r"'4400100000011009' is neither a geocode"):
        est.estimate("total", "Block", groups={tab[1]: "a", "4400100000011009": "b"})
    with pytest.raises(InvariantDPError, match=f"'{tab[2]}' is not a geocode .*cannot be mixed"):
        est.estimate("total", "Block", groups={blocks[1]: "a", tab[2]: "b"})


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
    assert sex["estimate"].notna().all() and sex["note"].isna().all()
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
    with pytest.raises(InvariantDPError, match="'99999999999' is not a geocode of level `Tract`"):
        est.estimate("total", "Tract", groups={"99999999999": "x"})
    with pytest.raises(InvariantDPError, match="confidence_level"):
        est.estimate("total", "Tract", confidence_level=1.5)
    with pytest.raises(InvariantDPError, match="`scheduler`"):
        gls(nm, scheduler="spark")
    tract = nm.geocodes("Tract")[0]
    with pytest.raises(InvariantDPError, match="lists a unit twice"):
        est.cov("total", [tract, tract])
    with pytest.raises(InvariantDPError, match=f"lists the unit '{tract}' twice"):
        est.estimate("total", "Tract", groups=pd.Series(["a", "a"], index=[tract, tract]))


def test_paths_and_summary(nm):
    nm, tract = nm
    est = gls(nm)
    paths = est.paths()
    assert paths.columns.tolist() == ["level", "fast", "low-rank", "dense", "dense-factor"]
    counts = paths.set_index("level").loc["Tract"]
    assert counts["low-rank"] + counts["dense"] >= 1  # k = 6: the correction may fill it
    assert (paths["dense-factor"] == 0).all()
    assert paths.iloc[:, 1:].sum(axis=1).tolist() == [len(nm.geocodes(lev)) for lev in nm.levels]
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


# -- intervals from the discrete law of the GLS error ---------------------------------


@pytest.mark.parametrize("variance, half, coverage", [(1.0, 2.0, 0.9909), (0.25, 1.0, 0.9995)])
def test_gls_intervals_use_the_discrete_law_of_the_error(variance, half, coverage):
    # one cell measured once: +-1.96 sd covered 0.883 at variance 1 and 0.787 at 0.25
    from invariantdp import Release, estimate

    counts = pd.DataFrame({"geocode": ["1"], "sex": [0], "count": [5]})
    nm = measure(
        counts,
        Schema({"sex": 1}),
        Geography({"A": 1}),
        {"A": {"detailed": 1 / variance}},
        secure=False,
        rng=3,
        units=["1"],
    )
    df = gls(nm).estimate("detailed", "A")
    y = float(nm.measurements[("A", "detailed")].values[0, 0])
    assert df["ci_upper"].iloc[0] - y == pytest.approx(half, abs=1e-8)
    assert df["estimate"].iloc[0] - df["ci_lower"].iloc[0] == pytest.approx(half, abs=1e-8)
    assert df.attrs["interval"] == ["exact discrete law"]
    assert round(float(df.attrs["coverage"][0]), 4) == coverage
    # the same numbers through invariantdp.estimate: one implementation, one answer
    single = estimate(Release.from_published([y], noise="discrete_gaussian", sigma=variance**0.5))
    assert single["ci_upper"].iloc[0] == pytest.approx(df["ci_upper"].iloc[0], abs=1e-12)
    assert single.attrs["coverage"][0] == pytest.approx(df.attrs["coverage"][0], abs=1e-12)


def _measured_cells(nm):
    """Every noisy cell: ``(index of its table in to_problem(), unit, cell, sigma)``."""
    out = []
    for k, ((_, _), t) in enumerate(nm.measurements.items()):
        n_r = t.values.shape[1]
        for i in range(t.values.shape[0]):
            sig = np.sqrt(np.broadcast_to(t.variance[i], (n_r,)))
            out += [(k, i, j, float(sig[j])) for j in range(n_r)]
    return out


def _error_weights(nm, li, attrs):
    """``a`` with error ``a' e`` of cell 0 of ``attrs`` at unit 0 of level ``li`` (by linearity)."""
    prob = nm.to_problem()
    alg = solve(prob).alg

    def value():
        return alg.marginal(solve(prob).x[li][:1], attrs)[0, 0]

    base, a, sig = value(), [], []
    for k, i, j, s in _measured_cells(nm):
        prob.measurements[k].values[i, j] += 1.0
        a.append(value() - base)
        prob.measurements[k].values[i, j] -= 1.0
        sig.append(s)
    return np.array(a), np.array(sig)


def _exact_law(a, sig, delta=1e-4):
    """``P(|a' e| <= h)`` from below: the law of ``a' e`` with atoms on a grid of ``delta``.

    Each term moves at most ``delta / 2`` to the grid, so the bound counts the grid
    mass within ``h - n delta / 2``.
    """
    keep = np.abs(a) > 1e-12
    a, sig = a[keep], sig[keep]
    reach = np.ceil(10 * sig + 1).astype(int)
    nb = int(math.ceil(float(np.sum(np.abs(a) * reach)) / delta))
    law = np.zeros(2 * nb + 1)
    law[nb] = 1.0
    for aj, sj, rj in zip(a, sig, reach, strict=True):
        ks = np.arange(-rj, rj + 1)
        new = np.zeros_like(law)
        for kk, pk in zip(ks, discrete_gaussian.pmf(ks, sj), strict=True):
            s = int(round(aj * kk / delta))
            if s >= 0:
                new[s:] += pk * law[: law.size - s]
            else:
                new[:s] += pk * law[-s:]
        law = new
    dist = np.abs((np.arange(law.size) - nb) * delta)
    order = np.argsort(dist)
    dist, mass = dist[order], np.cumsum(law[order])
    slack = a.size * delta / 2

    def coverage(h):
        i = np.searchsorted(dist, h - slack, side="right")
        return float(mass[i - 1]) if i else 0.0

    return coverage


@pytest.mark.parametrize("tract_variance", [0.25, pytest.param(1.0, marks=pytest.mark.slow)])
@pytest.mark.parametrize("invariant", [True, False])
def test_gls_interval_coverage_by_the_exact_law_is_at_least_nominal_less_0_005(
    tract_variance, invariant
):
    # a state, 2 counties, 2 tracts each; every unit's error a' e over all 20 noisy cells
    rng = np.random.default_rng(5)
    rows = [(f"1{c}{t}", s, int(rng.poisson(8))) for c in "12" for t in "12" for s in (0, 1)]
    counts = pd.DataFrame(rows, columns=["geocode", "sex", "count"])
    schema, geo = Schema({"sex": 2}), Geography({"S": 1, "C": 2, "T": 3})
    wl = {
        "S": {"total": 1.0, "sex": 0.5},
        "C": {"total": 0.5, "detailed": 0.25},
        "T": {"detailed": 1 / tract_variance},
    }
    inv = {"S": ["total"]} if invariant else {}
    nm = measure(
        counts,
        schema,
        geo,
        wl,
        invariants=inv,
        secure=False,
        rng=1,
        units=counts["geocode"].unique(),
    )
    est = gls(nm)
    worst_plain = 1.0
    for level, query in (("T", "detailed"), ("T", "total"), ("C", "detailed"), ("S", "sex")):
        li, attrs = geo.index(level), schema.query(query)
        coverage = _exact_law(*_error_weights(nm, li, attrs))
        for cl in (0.9, 0.95):
            df = est.estimate(query, level, confidence_level=cl)
            h = float(df["ci_upper"].iloc[0] - df["estimate"].iloc[0])
            assert coverage(h) >= cl - 0.005, (level, query, cl)
            plain = stats.norm.ppf(0.5 + cl / 2) * float(df["std_error"].iloc[0])
            worst_plain = min(worst_plain, coverage(plain) - cl)
    if tract_variance == 0.25:  # what the plain interval did: a tract cell covered 0.90
        assert worst_plain < -0.04


@pytest.mark.slow
@pytest.mark.parametrize("tract_variance", [0.25, 1.0])
def test_gls_interval_coverage_by_simulation(tract_variance):
    # 400 releases of one truth (the package's discrete Gaussian sampler): the frequency
    # with which each tract cell's interval covers it, within 3 MC errors of the claim
    rng = np.random.default_rng(26)
    rows = [(f"1{c}{t}", s, int(rng.poisson(8))) for c in "12" for t in "123" for s in (0, 1)]
    counts = pd.DataFrame(rows, columns=["geocode", "sex", "count"])
    schema, geo = Schema({"sex": 2}), Geography({"S": 1, "C": 2, "T": 3})
    wl = {"S": {"total": 1.0}, "C": {"detailed": 0.5}, "T": {"detailed": 1 / tract_variance}}
    truth = counts["count"].to_numpy()
    reps, cl = 400, 0.95
    per_release = np.empty(reps)
    for seed in range(reps):
        nm = measure(
            counts,
            schema,
            geo,
            wl,
            invariants={"S": ["total"]},
            secure=False,
            rng=seed,
            units=counts["geocode"].unique(),
        )
        df = gls(nm).estimate("detailed", "T", confidence_level=cl)
        hit = (df["ci_lower"].to_numpy() <= truth) & (truth <= df["ci_upper"].to_numpy())
        per_release[seed] = hit.mean()
    # the cells of one release are correlated: the MC error from the releases' fractions
    freq, mc = per_release.mean(), per_release.std(ddof=1) / math.sqrt(reps)
    assert freq >= cl - 0.005 - 3 * mc, (freq, mc)


# -- files in the 2020 release layout (recoded queries, structural zeros) ----------


def _release_gls(root, seed, **shape):
    """``(truth, measurements, gls)`` of a persons file of the independent generator."""
    truth = write_release(root, np.random.default_rng(seed), **shape)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # the kept-but-unused hhgq bounds
        nm = read_nmf(root / "US_Person_PL_PROD")
    return truth, nm, gls(nm)


class _FreeCellKKT:
    """Dense constrained GLS over the leaf cells that no structural zero fixes.

    Independent of the engine: zeros remove unknowns, invariants are KKT rows,
    ``Cov`` is the top-left block of the KKT inverse.
    """

    def __init__(self, prob):
        self.shape, k = prob.shape, prob.k
        self.ind, n_leaves = leaf_indicators(prob.parents, prob.sizes)
        free = np.ones((n_leaves, k), dtype=bool)
        for z in prob.zeros:
            q = query_matrix(prob.shape, z.attrs, z.recodes)
            for i, u in enumerate(z.units):
                cells = q[z.mask[i]].sum(axis=0) > 0
                free[self.ind[z.level][u] > 0] &= ~cells
        self.free = free
        self.n = int(free.sum())
        info, rhs, cons, vals = np.zeros((self.n, self.n)), np.zeros(self.n), [], []
        for m in prob.measurements:
            q = query_matrix(prob.shape, m.attrs, m.recodes)
            for i, u in enumerate(m.units):
                row = self._lift(m.level, u, q)
                w = 1.0 / np.broadcast_to(m.variance[i], (q.shape[0],))
                info += (row.T * w) @ row
                rhs += row.T @ (w * m.values[i])
        for e in prob.equalities:
            q = query_matrix(prob.shape, e.attrs, e.recodes)
            for i, u in enumerate(e.units):
                cons.append(self._lift(e.level, u, q))
                vals.append(e.values[i])
        c = np.vstack(cons)
        kkt = np.block([[info, c.T], [c, np.zeros((c.shape[0], c.shape[0]))]])
        inv = np.linalg.inv(kkt)
        self.x = inv[: self.n] @ np.concatenate([rhs, np.concatenate(vals)])
        self.cov = inv[: self.n, : self.n]

    def _lift(self, level, unit, q):
        leaves = np.flatnonzero(self.ind[level][unit] > 0)
        cols = np.cumsum(self.free.reshape(-1)) - 1
        out = np.zeros((q.shape[0], self.n))
        for leaf in leaves:
            f = np.flatnonzero(self.free[leaf])
            out[:, cols[leaf * self.free.shape[1] + f]] = q[:, f]
        return out

    def query(self, level, units, attrs, recodes=None):
        """``(estimate, covariance)`` of a query summed over ``units``."""
        q = query_matrix(self.shape, attrs, recodes)
        row = sum(self._lift(level, u, q) for u in np.atleast_1d(units))
        return row @ self.x, row @ self.cov @ row.T


@pytest.fixture(scope="module")
def layout_kkt(tmp_path_factory):
    """``(measurements, gls, dense KKT reference)`` of a small release-layout persons file."""
    # tract 1 has one block group of one block (bypassed: in the constraints only)
    root = tmp_path_factory.mktemp("layout")
    _, nm, est = _release_gls(root, 7, counties=1, tracts=2, groups=1, blocks=2)
    return nm, est, _FreeCellKKT(nm.to_problem())


def test_gls_of_a_release_layout_persons_file_is_the_constrained_kkt_solve(layout_kkt):
    nm, est, ref = layout_kkt
    problem = nm.to_problem()
    assert problem.recoded() and problem.zeros
    for level in ("Tract", "Block_Group", "Block"):
        li = nm.levels.index(level)
        units = np.arange(len(nm.geocodes(level)))
        for query in ("total", "votingage"):  # votingage's second cell: voting-age population
            attrs, recodes = nm.schema.query_spec(query)
            df = est.estimate(query, level)
            c = nm.schema.query_cells(query)
            want = [ref.query(li, [u], attrs, recodes) for u in units]
            w_est = np.array([w[0] for w in want])
            w_se = np.sqrt(np.array([np.diag(w[1]) for w in want]))
            got = df["estimate"].to_numpy().reshape(units.size, c)
            np.testing.assert_allclose(got, w_est, rtol=1e-8, atol=1e-8)
            got_se = df["std_error"].to_numpy().reshape(units.size, c)
            np.testing.assert_allclose(got_se, w_se, rtol=1e-8, atol=1e-8)
            # one unit's covariance, and the sum over all units of the level (the US total)
            np.testing.assert_allclose(
                est.cov(query, nm.geocodes(level)[1], level).to_numpy(),
                want[1][1],
                rtol=1e-8,
                atol=1e-8,
            )
            e_sum, c_sum = ref.query(li, units, attrs, recodes)
            np.testing.assert_allclose(
                est.cov(query, list(nm.geocodes(level)), level).to_numpy(), c_sum, atol=1e-8
            )
            groups = dict.fromkeys(nm.geocodes(level).tolist(), "all")
            by_group = est.estimate(query, level, groups=groups)
            np.testing.assert_allclose(by_group["estimate"], e_sum, rtol=1e-8, atol=1e-8)
    with pytest.raises(InvariantDPError, match="recoded queries.*scheduler='serial'"):
        gls(nm, scheduler="dask")


def _kkt_rows(ref, level, units, attrs, recodes=None):
    """The reference's rows of a query at each unit, stacked unit-major."""
    q = query_matrix(ref.shape, attrs, recodes)
    return np.vstack([ref._lift(level, u, q) for u in units])


def test_release_layout_selections_and_crosswalks_are_the_kkt_solve(layout_kkt):
    nm, est, ref = layout_kkt
    schema = nm.schema
    for level in ("Tract", "Block"):
        li = nm.levels.index(level)
        n = len(nm.geocodes(level))
        # voting-age population and everyone (a union of two cells): one row per unit each
        cells = {
            "vap": {"votingage": ["18 and over"]},
            "all": {"votingage": ["17 and under", "18 and over"]},
        }
        df = est.estimate("votingage", level, cells=cells)
        assert list(df.columns[:2]) == ["geocode", "cells"]
        assert df["cells"].tolist() == ["vap", "all"] * n
        rows = _kkt_rows(ref, li, range(n), *schema.query_spec("votingage"))
        sel = np.kron(np.eye(n), np.array([[0.0, 1.0], [1.0, 1.0]]))
        want, cov = sel @ rows @ ref.x, sel @ rows @ ref.cov @ rows.T @ sel.T
        np.testing.assert_allclose(df["estimate"], want, rtol=1e-8, atol=1e-8)
        np.testing.assert_allclose(df["std_error"], np.sqrt(np.diag(cov)), rtol=1e-7, atol=1e-8)
        # a recode's group named on its attribute: the institutional GQ population
        inst = est.estimate(
            "hhgq", level, cells={"inst": {"hhinstlevels": ["Institutional Facility"]}}
        )
        rows = _kkt_rows(ref, li, range(n), *schema.query_spec("hhinstlevels"))[1::3]
        np.testing.assert_allclose(inst["estimate"], rows @ ref.x, rtol=1e-8, atol=1e-8)
        se = np.sqrt(np.diag(rows @ ref.cov @ rows.T))
        np.testing.assert_allclose(inst["std_error"], se, rtol=1e-7, atol=1e-8)
    # a crosswalk of blocks, keyed by the 16-digit tabulation code: two areas
    blocks = nm.geocodes("Block")
    li = nm.levels.index("Block")
    areas = np.array(["east", "west"])[np.arange(blocks.size) % 2]
    walk = pd.DataFrame({"block": [b[-16:] for b in blocks], "area": areas})
    by_tab = est.estimate("votingage", "Block", groups=walk, cells={"vap": cells["vap"]})
    by_geo = est.estimate(
        "votingage", "Block", groups=dict(zip(blocks, areas, strict=True)), cells=cells
    )
    assert by_tab["group"].tolist() == ["east", "west"]
    pd.testing.assert_frame_equal(by_tab, by_geo[by_geo["cells"] == "vap"].reset_index(drop=True))
    for g, area in enumerate(("east", "west")):
        units = np.flatnonzero(areas == area)
        row = _kkt_rows(ref, li, units, *schema.query_spec("votingage"))[1::2].sum(axis=0)
        np.testing.assert_allclose(by_tab["estimate"][g], row @ ref.x, rtol=1e-8, atol=1e-8)
        se = math.sqrt(row @ ref.cov @ row)
        np.testing.assert_allclose(by_tab["std_error"][g], se, rtol=1e-7, atol=1e-8)


def test_to_release_on_the_dense_factor_path_is_the_kkt_solve(layout_kkt):
    nm, est, ref = layout_kkt
    for level, query in (("Block_Group", "votingage"), ("Block", "total"), ("US", "hhgq")):
        li = nm.levels.index(level)
        n = len(nm.geocodes(level))
        rel = est.to_release(query, level)
        rows = _kkt_rows(ref, li, range(n), nm.schema.query(query))
        np.testing.assert_allclose(rel.value.reshape(-1), rows @ ref.x, rtol=1e-8, atol=1e-8)
        cov = np.array(rel.noise.params["cov"])
        np.testing.assert_allclose(cov, rows @ ref.cov @ rows.T, rtol=1e-7, atol=1e-7)
        # the invariants bind: the estimates satisfy them and the noise cannot move them
        inv = rel.invariants
        mat = inv.matrix.toarray() if hasattr(inv.matrix, "toarray") else np.asarray(inv.matrix)
        np.testing.assert_allclose(mat @ rel.value.reshape(-1), inv.values, atol=1e-7)
        np.testing.assert_allclose(mat @ cov @ mat.T, 0.0, atol=1e-7)
    # the US total is an invariant of every level's release of the whole country
    assert "US : total" in est.to_release("total", "Block").invariants.names
    # a block without a GQ type has that type's cell at 0: a fact of its release
    hhgq = est.to_release("hhgq", "Block")
    zeros = [name for name in hhgq.invariants.names if "structural zero" in name]
    assert len(zeros) >= len(nm.geocodes("Block"))
    detailed = est.paths()
    assert list(detailed.columns) == ["level", "fast", "low-rank", "dense", "dense-factor"]
    assert detailed["dense-factor"].tolist() == [len(nm.geocodes(lev)) for lev in nm.levels]
    assert not detailed[["fast", "low-rank", "dense"]].to_numpy().any()


def test_to_release_refuses_a_recoded_query_naming_the_rule(layout_kkt):
    nm, est, _ = layout_kkt
    assert len(est.estimate("hhinstlevels", "Tract")) == 3 * len(nm.geocodes("Tract"))
    with pytest.raises(
        InvariantDPError,
        match=r"`query` \('hhinstlevels'\) uses a recode: to_release takes marginal queries.*"
        r"e\.g\. 'hhgq'",
    ):
        est.to_release("hhinstlevels", "Tract")


def test_totals_and_vap_of_every_level_of_a_release_layout_file_add_up(tmp_path):
    truth, nm, est = _release_gls(tmp_path, 11)
    vap = {"vap": {"votingage": ["18 and over"]}}
    frames = {}
    for level in nm.levels:
        total = est.estimate("total", level)
        adults = est.estimate("votingage", level, cells=vap)
        assert total["geocode"].tolist() == adults["geocode"].tolist() == list(nm.geocodes(level))
        assert total["estimate"].notna().all() and adults["estimate"].notna().all()
        frames[level] = (total, adults)
    # the US total is the invariant: exact, no error; everything below it has an error
    us_total, us_vap = frames["US"]
    assert us_total["estimate"][0] == pytest.approx(truth["hists"]["US"].sum(), abs=1e-6)
    assert us_total["std_error"][0] == 0.0 and us_vap["std_error"][0] > 0
    # the one state is the whole country: its total is the invariant too
    assert frames["State"][0]["std_error"].tolist() == [0.0]
    for level in nm.levels[2:]:
        assert (frames[level][0]["std_error"] > 0).all()
    # children add up to their parent (the GLS estimate is one consistent histogram), and
    # the crosswalk of a parent's children is the parent, standard error included
    for parent, child in itertools.pairwise(nm.levels):
        width = nm.geography.widths[nm.geography.index(parent)]
        for p_frame, c_frame in zip(frames[parent], frames[child], strict=True):
            sums = c_frame.groupby(c_frame["geocode"].str[:width])["estimate"].sum()
            np.testing.assert_allclose(
                sums.loc[p_frame["geocode"]].to_numpy(), p_frame["estimate"], rtol=1e-9, atol=1e-7
            )
        # blocks by their 16-digit tabulation code, the other levels by geocode
        key = (lambda g: g[-16:]) if child == "Block" else (lambda g: g)
        walk = {key(g): g[:width] for g in nm.geocodes(child)}
        for query, cells, p_frame in (("total", None, frames[parent][0]),
                                      ("votingage", vap, frames[parent][1])):  # fmt: skip
            by = est.estimate(query, child, groups=walk, cells=cells)
            assert by["group"].tolist() == p_frame["geocode"].tolist()
            np.testing.assert_allclose(by["estimate"], p_frame["estimate"], rtol=1e-9, atol=1e-7)
            np.testing.assert_allclose(by["std_error"], p_frame["std_error"], rtol=1e-6, atol=1e-7)


def _units_gls(root, seed):
    """``(truth, gls)`` of the units product of a file of the independent generator."""
    truth = write_release(root, np.random.default_rng(seed))
    return truth, gls(read_nmf(root, product="units"))


def test_the_units_product_has_exact_housing_units_and_estimated_occupancy(tmp_path):
    truth, est = _units_gls(tmp_path, 5)
    nu = est.measurements
    assert est.measurements.schema.labels("h1") == ["Vacant", "Occupied"]
    occupied = {"occupied": {"h1": ["Occupied"]}}
    for level in nu.levels:
        h1 = truth["h1"][level][np.argsort(truth["units"][level])]
        total = est.estimate("total", level)
        # housing units are the invariant of every unit: the value, no error (the interval
        # keeps only the margin of 1e-10 relative that holds an integer against rounding)
        np.testing.assert_allclose(total["estimate"], h1.sum(axis=1), atol=1e-6)
        assert (total["std_error"] == 0).all()
        assert (total["moe"] <= 1e-9 * (1 + total["estimate"])).all()
        cells = est.estimate("h1", level)
        occ = est.estimate("h1", level, cells=occupied)
        np.testing.assert_allclose(occ["estimate"], cells["estimate"][1::2], rtol=1e-12)
        np.testing.assert_allclose(occ["std_error"], cells["std_error"][1::2], rtol=1e-9)
        # vacant + occupied = housing units, so both cells carry the same error
        np.testing.assert_allclose(
            cells["estimate"][::2].to_numpy() + occ["estimate"].to_numpy(), h1.sum(axis=1),
            atol=1e-6,
        )  # fmt: skip
        np.testing.assert_allclose(cells["std_error"][::2], occ["std_error"], rtol=1e-9)
        # a unit with housing units has an error on its occupancy; one without is all zeros
        has = h1.sum(axis=1) > 0
        assert (occ["std_error"][has] > 0).all() and (occ["std_error"][~has] == 0).all()
        assert (occ["ci_lower"] <= occ["estimate"]).all()


def _occupancy_hits(est, truth):
    """``(covered, intervals)`` of the 95% intervals of occupied units with an error."""
    hits = trials = 0
    for level in ("Tract", "Block_Group", "Block"):
        h1 = truth["h1"][level][np.argsort(truth["units"][level])]
        df = est.estimate("h1", level, cells={"occupied": {"h1": ["Occupied"]}})
        lo, hi = df["ci_lower"].to_numpy(), df["ci_upper"].to_numpy()
        noisy = df["std_error"].to_numpy() > 0  # units without housing units are exact
        inside = (lo <= h1[:, 1]) & (h1[:, 1] <= hi)
        hits, trials = hits + int(inside[noisy].sum()), trials + int(noisy.sum())
    return hits, trials


def test_occupied_housing_unit_intervals_cover_over_repeated_files(tmp_path):
    # 10 files: the coverage within 4 Monte Carlo standard errors (from the files'
    # fractions, the units of one file being correlated) of 0.95
    fractions = []
    for seed in range(10):
        truth, est = _units_gls(tmp_path / str(seed), 700 + seed)
        hits, trials = _occupancy_hits(est, truth)
        fractions.append(hits / trials)
    freq, mc = np.mean(fractions), np.std(fractions, ddof=1) / math.sqrt(len(fractions))
    assert abs(freq - 0.95) <= 4 * max(mc, math.sqrt(0.95 * 0.05 / (len(fractions) * 30)))


@pytest.mark.slow
def test_occupied_housing_unit_intervals_cover_0_94_to_0_96(tmp_path):
    # 200 files of about 30 occupancy intervals each: a Monte Carlo standard error of
    # about sqrt(0.95 * 0.05 / 6000) = 0.0028; the band 0.94-0.96 is over 3 of them
    hits = trials = 0
    for seed in range(200):
        truth, est = _units_gls(tmp_path / str(seed), 2000 + seed)
        h, t = _occupancy_hits(est, truth)
        hits, trials = hits + h, trials + t
    assert 0.94 <= hits / trials <= 0.96, hits / trials


@pytest.mark.slow
def test_gls_intervals_of_release_layout_files_cover(tmp_path):
    # 200 files x (4 tracts + 8 block groups) x (total, VAP) = 4,800 intervals; at 0.95 the
    # Monte Carlo standard error of the pooled coverage is sqrt(0.95 * 0.05 / 4800) = 0.0031
    # (units of one file are correlated: the band 0.94-0.96 is about 3 such errors); each
    # of the four alone (800 or 1,600 intervals) within 3.5 of its own errors of 0.95
    hits, trials = {}, {}
    for seed in range(200):
        truth, nm, est = _release_gls(tmp_path / str(seed), 1000 + seed)
        for level, query, cell in (
            ("Tract", "total", 0),
            ("Tract", "votingage", 1),
            ("Block_Group", "total", 0),
            ("Block_Group", "votingage", 1),
        ):
            order = np.argsort(truth["units"][level])
            hist = truth["hists"][level][order].reshape(order.size, 8, 2, 2, 63)
            true = (
                hist.sum(axis=(1, 2, 3, 4))
                if query == "total"
                else hist[:, :, 1].sum(axis=(1, 2, 3))
            )
            df = est.estimate(query, level)
            c = nm.schema.query_cells(query)
            lo = df["ci_lower"].to_numpy().reshape(-1, c)[:, cell]
            hi = df["ci_upper"].to_numpy().reshape(-1, c)[:, cell]
            key = (level, query)
            hits[key] = hits.get(key, 0) + int(np.sum((lo <= true) & (true <= hi)))
            trials[key] = trials.get(key, 0) + true.size
    freq = {k: hits[k] / trials[k] for k in hits}
    pooled = sum(hits.values()) / sum(trials.values())
    assert 0.94 <= pooled <= 0.96, (pooled, freq)
    for k, f in freq.items():
        assert abs(f - 0.95) <= 3.5 * math.sqrt(0.95 * 0.05 / trials[k]), (k, f, freq)


def _gls_small(rho=0.02):
    rng = np.random.default_rng(29)
    counts = small_counts(rng, counties=2, tracts=3)
    wl = {lev: {"detailed": rho} for lev in GEO.names}
    units = counts["geocode"].unique()
    return gls(measure(counts, SCHEMA, GEO, wl, secure=False, rng=5, units=units))


def test_estimate_has_the_shape_of_invariantdp_estimate():
    # same value columns in the same order as invariantdp.estimate; moe is the
    # interval's half-width; notes are missing values, not empty strings
    from invariantdp import estimate

    est = _gls_small(rho=4.0)
    df = est.estimate("sex", "Tract", confidence_level=0.9)
    rel = est.to_release("sex", "Tract")
    cells = estimate(rel, confidence_level=0.9)
    value_cols = ["estimate", "std_error", "moe", "ci_lower", "ci_upper", "note"]
    assert list(df.columns) == ["geocode", "sex", *value_cols]
    assert list(cells.columns) == value_cols
    np.testing.assert_allclose(df["moe"], (df["ci_upper"] - df["ci_lower"]) / 2, rtol=1e-12)
    np.testing.assert_allclose(cells["moe"], (cells["ci_upper"] - cells["ci_lower"]) / 2)
    assert df["note"].isna().all() and cells["note"].isna().all()
    np.testing.assert_allclose(df["estimate"].to_numpy(), cells["estimate"].to_numpy(), atol=1e-8)


def test_estimate_geocodes_keeps_the_rows_of_those_units():
    est = _gls_small(rho=4.0)
    full = est.estimate("sex", "Tract")
    tracts = est.measurements.geocodes("Tract")
    pick = [tracts[3], tracts[0]]
    part = est.estimate("sex", "Tract", geocodes=pick)
    expect = full[full["geocode"].isin(pick)].reset_index(drop=True)
    pd.testing.assert_frame_equal(part, expect, check_like=False)
    kept = np.flatnonzero(full["geocode"].isin(pick))
    assert part.attrs["coverage"] == [full.attrs["coverage"][i] for i in kept]
    assert part.attrs["interval"] == [full.attrs["interval"][i] for i in kept]
    with pytest.raises(InvariantDPError, match="geocodes"):
        est.estimate("sex", "Tract", geocodes=["99999999999"])
    with pytest.raises(InvariantDPError, match="`geocodes`"):
        est.estimate("sex", "Tract", geocodes=pick, groups={pick[0]: "g"})


def test_negative_estimates_are_counted_and_clipped_only_on_request():
    est = _gls_small(rho=0.01)  # sigma = 10 on counts near 6: many negative cells
    df = est.estimate("detailed", "Tract")
    n_neg = int((df["estimate"] < 0).sum())
    assert n_neg > 0 and df.attrs["negative"] == n_neg
    clipped = est.estimate("detailed", "Tract", clip=True)
    np.testing.assert_array_equal(clipped["estimate"], np.maximum(df["estimate"], 0.0))
    np.testing.assert_array_equal(clipped["ci_lower"], np.maximum(df["ci_lower"], 0.0))
    np.testing.assert_array_equal(clipped["std_error"], df["std_error"])
    assert clipped.attrs["clipped"] and clipped.attrs["negative"] == n_neg
    text = str(est.summary())
    x = est.solution.x[GEO.index("Tract")]
    assert f"{int((x < 0).sum())} negative cell estimates" in text
    with pytest.raises(TypeError, match=r"`clip` must be True or False, got str \('yes'\)\."):
        est.estimate("total", "Tract", clip="yes")

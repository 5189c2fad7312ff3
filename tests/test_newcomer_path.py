"""The analyst's path end to end, as a newcomer walks it.

A demographer writes a small state's noisy measurement file by hand with pyarrow (from
the layout reference, docs/guide/nmf_layout.md), reads it, and asks in one call each for
the voting-age population (VAP) of every tract and of a 29-block neighbourhood with the
right standard error, in Python and on the command line; compares the two estimate
functions' frames, keeps part of a release, fits a log-linear model with labelled
parameters and a saturated Poisson model without a warning; and relies on the coverage of
the negative binomial and Fay-Herriot intervals.  Every number is checked against an
independent dense computation: the constrained generalised least squares of the file's
measurements over the blocks' cells, solved through its KKT system.
"""

import json
import re
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

import invariantdp  # noqa: E402
from invariantdp.census import Schema, gls, read_nmf  # noqa: E402
from invariantdp.cli import main  # noqa: E402
from invariantdp.inference import PrivatizedLogLinear, PrivatizedPoisson  # noqa: E402

VOTINGAGE = ["17 and under", "18 and over"]
SEX = ["female", "male"]
SCHEMA = {"votingage": VOTINGAGE, "sex": SEX}
#: the spine's geocode widths (the file's own; read_nmf reads them from the geocodes)
WIDTH = {"US": 0, "State": 3, "County": 6, "Tract": 12, "Block_Group": 13, "Block": 17}
#: attribute columns of each query: ``*`` summed out, the attribute, or ``detailed``
QUERIES = {
    "total": ("*", "*"),
    "votingage": ("votingage", "*"),
    "detailed": ("detailed", "detailed"),
}
#: the matrix of each query on a block's 4 cells (votingage x sex, C order)
QUERY_MATRIX = {
    "total": np.ones((1, 4)),
    "votingage": np.kron(np.eye(2), np.ones((1, 2))),
    "detailed": np.eye(4),
}
QUERY_SHAPE = {"total": [1, 1], "votingage": [2, 1], "detailed": [2, 2]}
VARIANCE = {"US": 1.0, "State": 2.0, "County": 4.0, "Tract": 6.0, "Block_Group": 8.0}
VARIANCE["Block"] = 9.0
QUERY_SCALE = {"total": 1.0, "votingage": 1.5, "detailed": 2.0}
#: the neighbourhood: 29 blocks across block groups and tracts of both counties' seam
HOOD = slice(3, 32)


def _units(counties=2, tracts=2, groups=2, blocks=5) -> dict:
    u = {"US": [""], "State": ["044"]}
    u["County"] = [f"044{c:03d}" for c in range(1, counties + 1)]
    u["Tract"] = [f"{c}{t:06d}" for c in u["County"] for t in range(1, tracts + 1)]
    u["Block_Group"] = [f"{t}{g}" for t in u["Tract"] for g in range(1, groups + 1)]
    u["Block"] = [f"{g}{b:04d}" for g in u["Block_Group"] for b in range(1, blocks + 1)]
    return u


def _membership(units: dict) -> dict:
    """``{level: (units, blocks) 0/1 matrix}``: which blocks each unit holds (by prefix)."""
    blocks = np.array(units["Block"])
    return {
        level: np.array(
            [[b.startswith(code) for b in blocks] for code in units[level]], dtype=float
        )
        for level in WIDTH
    }


def _arrow(rows: list, kind: str) -> "pa.Table":
    cols = {
        "geocode": pa.array([r["geocode"] for r in rows], pa.string()),
        "query_name": pa.array([r["query_name"] for r in rows], pa.string()),
        "value": pa.array([r["value"] for r in rows], pa.list_(pa.int64())),
    }
    if kind == "DPQuery":
        cols["variance"] = pa.array([r["variance"] for r in rows], pa.float64())
    else:
        cols["sign"] = pa.array([r["sign"] for r in rows], pa.string())
    cols["query_shape"] = pa.array([r["query_shape"] for r in rows], pa.list_(pa.int64()))
    for i, attr in enumerate(SCHEMA):
        cols[attr] = pa.array([r["attrs"][i] for r in rows], pa.string())
    return pa.table(cols)


def write_state_file(root, rng) -> dict:
    """One state's persons file in the release layout, written with pyarrow alone.

    Every level measures total (not at US), votingage and detailed with rounded
    Gaussian noise of the recorded variance; US and State totals are ``=``
    constraints; every other unit has the always-true ``>= 0`` row that lists it.
    Returns the units, the blocks' true counts and every measurement.
    """
    units = _units()
    member = _membership(units)
    means = rng.uniform(3.0, 40.0, size=(len(units["Block"]), 1))
    block_counts = rng.poisson(means * np.array([0.11, 0.11, 0.39, 0.39]))  # 22% under 18
    measurements = []
    for level in WIDTH:
        counts = (member[level] @ block_counts).astype(np.int64)  # (units, 4)
        dpq, con = [], []
        for query, attrs in QUERIES.items():
            if level == "US" and query == "total":
                continue
            var = VARIANCE[level] * QUERY_SCALE[query]
            exact = counts @ QUERY_MATRIX[query].T
            noisy = exact + np.rint(rng.normal(0.0, np.sqrt(var), exact.shape)).astype(np.int64)
            measurements.append((level, query, noisy, var))
            for code, value in zip(units[level], noisy, strict=True):
                dpq.append(
                    {
                        "geocode": code,
                        "query_name": f"{query}_dpq",
                        "value": value.tolist(),
                        "variance": var,
                        "query_shape": QUERY_SHAPE[query],
                        "attrs": attrs,
                    }
                )
        for code, total in zip(units[level], counts.sum(axis=1), strict=True):
            exact_total = level in ("US", "State")
            con.append(
                {
                    "geocode": code,
                    "query_name": "total_con" if exact_total else "total_nonneg_con",
                    "sign": "=" if exact_total else ">=",
                    "value": [int(total) if exact_total else 0],
                    "query_shape": [1, 1],
                    "attrs": ("*", "*"),
                }
            )
        for kind, rows in (("DPQuery", dpq), ("Constraint", con)):
            folder = root / f"{level}.parquet" / kind
            if level != "US":
                folder = folder / "State=044"
            folder.mkdir(parents=True)
            pq.write_table(_arrow(rows, kind), folder / "part-00000.snappy.parquet")
    return {"units": units, "member": member, "counts": block_counts, "meas": measurements}


class DenseGLS:
    """Constrained GLS over every block cell by one dense KKT solve (independent of gls).

    Minimises the measurements' weighted squared residuals subject to the exact
    totals; ``cov`` is the top-left block of the KKT inverse.
    """

    def __init__(self, truth):
        member = truth["member"]
        n = member["Block"].shape[1] * 4
        info, rhs = np.zeros((n, n)), np.zeros(n)
        for level, query, noisy, var in truth["meas"]:
            A = np.kron(member[level], QUERY_MATRIX[query])  # (units x rows, blocks x cells)
            info += A.T @ A / var
            rhs += A.T @ noisy.reshape(-1) / var
        total = np.kron(member["State"], np.ones((1, 4)))  # US and State: the same total
        state_total = truth["counts"].sum()
        kkt = np.block([[info, total.T], [total, np.zeros((1, 1))]])
        inv = np.linalg.inv(kkt)
        self.x = inv[:n] @ np.append(rhs, state_total)
        self.cov = inv[:n, :n]
        self.member = member

    def vap(self, weights):
        """Estimate and standard error of the VAP of blocks weighted by ``weights``."""
        w = np.kron(weights, [0.0, 0.0, 1.0, 1.0])
        return float(w @ self.x), float(np.sqrt(w @ self.cov @ w))


@pytest.fixture(scope="module")
def state(tmp_path_factory):
    root = tmp_path_factory.mktemp("newcomer") / "US_Person_PL_PROD"
    truth = write_state_file(root, np.random.default_rng(2029))
    nm = read_nmf(root, Schema(SCHEMA))
    return root, truth, nm, gls(nm), DenseGLS(truth)


def test_vap_of_every_tract_in_one_call_is_the_dense_gls(state):
    _, truth, _, est, ref = state
    df = est.estimate("votingage", "Tract", confidence_level=0.9)
    adults = df[df["votingage"] == "18 and over"]
    assert adults["geocode"].tolist() == truth["units"]["Tract"]
    want = np.array([ref.vap(row) for row in truth["member"]["Tract"]])
    np.testing.assert_allclose(adults["estimate"], want[:, 0], rtol=1e-9)
    np.testing.assert_allclose(adults["std_error"], want[:, 1], rtol=1e-9)
    _check_moe(df, adults, want[:, 1])


def _check_moe(df, rows, se):
    """The margin of error at 90% (the ACS convention): z_0.95 standard errors when the
    interval is normal (a group's, or a unit's whose noise lattice the GLS smooths)."""
    assert df.attrs["confidence_level"] == 0.9
    normal = np.array([kind.startswith(("normal", "gaussian")) for kind in df.attrs["interval"]])
    assert normal[rows.index].all()
    # the interval is the GLS error's law, whose discrete part the remainder smooths to a
    # normal within 1e-8 (relative) here
    np.testing.assert_allclose(rows["moe"], stats.norm.ppf(0.95) * np.asarray(se), rtol=1e-6)


def test_vap_of_a_29_block_neighbourhood_in_one_call_has_the_covariance_se(state):
    _, truth, _, est, ref = state
    blocks = truth["units"]["Block"][HOOD]
    assert len(blocks) == 29 and len({b[:12] for b in blocks}) == 4  # spans four tracts
    df = est.estimate("votingage", "Block", 0.9, groups=dict.fromkeys(blocks, "hood"))
    rows = df[df["votingage"] == "18 and over"]
    row = rows.iloc[0]
    weights = np.zeros(len(truth["units"]["Block"]))
    weights[HOOD] = 1.0
    want, want_se = ref.vap(weights)
    assert row["group"] == "hood"
    assert row["estimate"] == pytest.approx(want, rel=1e-9)
    assert row["std_error"] == pytest.approx(want_se, rel=1e-9)
    _check_moe(df, rows, [want_se])
    # summing the blocks' VAP as if independent is what the newcomer must not do
    per_block = est.estimate("votingage", "Block")
    naive = np.sqrt(
        np.sum(
            per_block[per_block["geocode"].isin(blocks)].query("votingage == '18 and over'")[
                "std_error"
            ]
            ** 2
        )
    )
    assert abs(naive - want_se) > 0.1 * want_se


def test_the_cli_gives_the_same_vap_of_tracts_and_of_the_neighbourhood(state, tmp_path, capsys):
    root, truth, _, _, ref = state
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps(SCHEMA))
    groups = tmp_path / "hood.csv"
    blocks = truth["units"]["Block"][HOOD]
    pd.DataFrame({"geocode": blocks, "group": "hood"}).to_csv(groups, index=False)
    base = ["census", "estimate", str(root), "--schema", str(schema), "--query", "votingage"]
    base += ["--confidence-level", "0.9"]
    out_tracts, out_hood = tmp_path / "tracts.csv", tmp_path / "hood_vap.csv"
    assert main([*base, "--level", "Tract", "-o", str(out_tracts)]) == 0
    assert main([*base, "--level", "Block", "--groups", str(groups), "-o", str(out_hood)]) == 0
    capsys.readouterr()
    tracts = pd.read_csv(out_tracts, dtype={"geocode": str})
    adults = tracts[tracts["votingage"] == "18 and over"]
    want = np.array([ref.vap(row) for row in truth["member"]["Tract"]])
    np.testing.assert_allclose(adults["estimate"], want[:, 0], rtol=1e-9)
    np.testing.assert_allclose(adults["std_error"], want[:, 1], rtol=1e-9)
    np.testing.assert_allclose(adults["moe"], stats.norm.ppf(0.95) * want[:, 1], rtol=1e-6)
    hood = pd.read_csv(out_hood).query("votingage == '18 and over'")
    weights = np.zeros(len(truth["units"]["Block"]))
    weights[HOOD] = 1.0
    want, want_se = ref.vap(weights)
    np.testing.assert_allclose(hood[["estimate", "std_error"]].iloc[0], [want, want_se])
    assert hood["moe"].iloc[0] == pytest.approx(stats.norm.ppf(0.95) * want_se, rel=1e-6)


def test_one_estimate_shape_for_gls_and_invariantdp_estimate(state):
    _, _, _, est, _ = state
    gls_frame = est.estimate("votingage", "Tract", confidence_level=0.9)
    cells = invariantdp.estimate(est.to_release("votingage", "Tract"), confidence_level=0.9)
    value_columns = ["estimate", "std_error", "moe", "ci_lower", "ci_upper", "note"]
    assert list(gls_frame.columns) == ["geocode", "votingage", *value_columns]
    assert list(cells.columns) == value_columns
    assert list(cells.index.names) == ["geocode", "votingage"]
    keys = list(zip(gls_frame["geocode"], gls_frame["votingage"], strict=True))
    assert list(cells.index) == keys
    for frame in (gls_frame, cells):
        assert frame["note"].isna().all()  # notes are missing values, not empty strings
        np.testing.assert_allclose(frame["moe"], (frame["ci_upper"] - frame["ci_lower"]) / 2)
    np.testing.assert_allclose(cells["estimate"], gls_frame["estimate"], rtol=1e-9)
    np.testing.assert_allclose(cells["std_error"], gls_frame["std_error"], rtol=1e-9)


def test_select_keeps_the_adults_with_their_covariance(state):
    _, truth, _, est, ref = state
    rel = est.to_release("votingage", "Tract")
    adults = rel.select(votingage=["18 and over"])
    assert adults.value.size == len(truth["units"]["Tract"])
    got = invariantdp.estimate(adults)
    want = np.array([ref.vap(row) for row in truth["member"]["Tract"]])
    np.testing.assert_allclose(got["estimate"], want[:, 0], rtol=1e-9)
    np.testing.assert_allclose(got["std_error"], want[:, 1], rtol=1e-9)
    # the kept cells' joint covariance: their sum's standard error is the state's VAP's
    state_vap = invariantdp.estimate(adults, sums={"state": list(got.index)})
    assert state_vap.loc["state", "std_error"] == pytest.approx(
        ref.vap(np.ones(len(truth["units"]["Block"])))[1], rel=1e-8
    )


def test_loglinear_params_and_per_county_log_odds_ratios_are_labelled(state):
    _, truth, _, est, _ = state
    rel = est.to_release("votingage * sex", "County")
    res = PrivatizedLogLinear(rel, given="geocode").fit(disp=0)
    counties = truth["units"]["County"]
    assert isinstance(res.params, pd.Series)
    assert list(res.params.index[-2:]) == [f"gamma[{c},17 and under,female]" for c in counties]
    lor = res.log_odds_ratios()
    assert list(lor.columns) == ["log_odds_ratio", "se", "ci_lower", "ci_upper"]
    assert lor.index.get_level_values("geocode").tolist() == counties
    np.testing.assert_allclose(lor["log_odds_ratio"], res.params.iloc[-2:], rtol=1e-12)
    np.testing.assert_allclose(lor["se"], res.bse.iloc[-2:], rtol=1e-12)


def test_a_saturated_poisson_fit_of_the_tract_totals_warns_nothing(state):
    _, _, _, est, _ = state
    rel = est.to_release("total", "Tract")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # statsmodels' and numpy's warnings included
        res = PrivatizedPoisson(rel, np.eye(rel.value.size)).fit(disp=0)
    # the saturated fit is the log of the released totals, up to the Poisson shrinkage
    # that the GLS noise allows (a few per cent of counts above a hundred)
    np.testing.assert_allclose(res.params, np.log(rel.value), atol=0.02)
    # the response is named as the release names its values, not "y"
    assert re.search(r"Dep\. Variable:\s+estimate\s", str(res.summary()))


@pytest.mark.slow
def test_negative_binomial_and_fay_herriot_intervals_cover_over_200_releases():
    # the helpers and streams of tests/inference (their comments give the Monte Carlo
    # evidence beyond these 200 releases each)
    from inference.test_fay_herriot import _coverage as fay_herriot_coverage
    from inference.test_negative_binomial import _coverage as nb_coverage

    for noise, seed in (("discrete_gaussian", 2029), ("projected_gaussian", 2030)):
        slope, alpha = nb_coverage(200, seed, noise)
        assert 0.93 <= slope <= 0.97, (noise, slope)
        assert abs(alpha - 0.95) < 3 * np.sqrt(0.95 * 0.05 / 200), (noise, alpha)
    cover, _ = fay_herriot_coverage(200, 2029)
    assert 0.93 <= cover <= 0.97, cover

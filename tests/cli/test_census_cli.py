"""``invariantdp census measure`` and ``invariantdp census estimate``."""

import json
import re
import shutil
import signal
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from invariantdp import datasets
from invariantdp.census import Geography, Schema, gls, measure, read_nmf
from invariantdp.cli import main

from ._helpers import one_error_line, strict_json

pytest.importorskip("pyarrow")

SCHEMA = {"sex": ["F", "M"], "age": ["0-17", "18-64", "65+"]}
WORKLOAD = {
    "State": {"total": 1.0},
    "County": {"total": 0.5, "sex": 0.5},
    "Tract": {"total": 0.5, "sex * age": 0.25},
    "Block_Group": {"detailed": 0.25},
    "Block": {"detailed": 0.25},
}


def _err(capsys):
    return one_error_line(capsys, "census")


def _leftovers(folder):
    return sorted(p.name for p in Path(folder).iterdir() if p.name.startswith("."))


@pytest.fixture(scope="module")
def blocks():
    return datasets.load_csv("examplia_census_blocks", dtype={"geocode": str})


@pytest.fixture
def inputs(tmp_path, blocks):
    """The Examplia blocks, the schema and the workload as files."""
    (tmp_path / "schema.json").write_text(json.dumps(SCHEMA))
    (tmp_path / "wl.json").write_text(json.dumps(WORKLOAD))
    blocks.to_csv(tmp_path / "blocks.csv", index=False)
    _write_units(tmp_path, blocks["geocode"].unique())
    return tmp_path


def _write_units(tmp, codes, name="units.csv"):
    """The public list of units (Examplia's blocks: the file lists every block, empty or not)."""
    pd.DataFrame({"geocode": codes}).to_csv(tmp / name, index=False)


def _measure(tmp, *extra, out="nmf", counts="blocks.csv", seed=("--seed", "3")):
    argv = [
        "census", "measure", str(tmp / counts), "--schema", str(tmp / "schema.json"),
        "--workload", str(tmp / "wl.json"), "--units", str(tmp / "units.csv"), *seed,
        "-o", str(tmp / out), *extra,
    ]  # fmt: skip
    return main(argv)


@pytest.fixture(scope="module")
def nmf(tmp_path_factory, blocks):
    """A noisy measurement file of Examplia down to blocks (seeded), and its folder."""
    tmp = tmp_path_factory.mktemp("nmf")
    (tmp / "schema.json").write_text(json.dumps(SCHEMA))
    (tmp / "wl.json").write_text(json.dumps(WORKLOAD))
    blocks.to_csv(tmp / "blocks.csv", index=False)
    _write_units(tmp, blocks["geocode"].unique())
    assert _measure(tmp, "--invariants", "State:total") == 0
    return tmp


# --- measure ----------------------------------------------------------------------------------


def test_measure_writes_the_library_measurements_as_a_marked_simulation(nmf, blocks, capsys):
    back = read_nmf(nmf / "nmf", Schema(SCHEMA))
    wl = {lev: {Schema(SCHEMA).query_name(Schema(SCHEMA).query(q)): r for q, r in qs.items()}
          for lev, qs in WORKLOAD.items()}  # fmt: skip
    ref = measure(
        blocks, Schema(SCHEMA), Geography(), wl, invariants={"State": ["total"]},
        secure=False, rng=3, units=blocks["geocode"].unique(),
    )  # fmt: skip
    assert back.randomness == "simulation"
    assert back.levels == ("State", "County", "Tract", "Block_Group", "Block")
    assert set(back.measurements) == set(ref.measurements)
    for key, table in ref.measurements.items():
        assert np.array_equal(back.measurements[key].values, table.values)
        assert np.array_equal(back.measurements[key].variance, table.variance)
    total = back.invariants[("State", "total")].values[0, 0]
    assert total == blocks["count"].sum()
    assert back.privacy.rho == pytest.approx(ref.privacy.rho)
    assert _leftovers(nmf) == []


def test_measure_report_and_seed_reproduce(inputs, capsys):
    assert _measure(inputs, "--invariants", "State:total") == 0
    text = capsys.readouterr().out
    assert "wrote noisy measurements to" in text and "Block 1888" in text
    rho = sum(r for qs in WORKLOAD.values() for r in qs.values())
    assert f"rho = {rho:.6g} zCDP" in text
    assert "SIMULATION: not for publication" in text and "seed 3" in text
    assert _measure(inputs, "--invariants", "State:total", out="again") == 0
    a, b = (read_nmf(inputs / d, Schema(SCHEMA)) for d in ("nmf", "again"))
    for key, table in a.measurements.items():
        assert np.array_equal(b.measurements[key].values, table.values)


def test_measure_is_secure_by_default(tmp_path, capsys):
    counts = pd.DataFrame(
        {"geocode": ["01001", "01001", "01003"], "sex": ["F", "M", "F"], "count": [4, 0, 9]}
    )
    counts.to_csv(tmp_path / "c.csv", index=False)
    _write_units(tmp_path, ["01001", "01002", "01003"])
    (tmp_path / "schema.json").write_text(json.dumps({"sex": ["F", "M"]}))
    (tmp_path / "wl.json").write_text(json.dumps({"State": {"total": 1}, "County": {"sex": 1}}))
    assert _measure(tmp_path, counts="c.csv", seed=()) == 0
    text = capsys.readouterr().out
    assert "SIMULATION" not in text and "randomness: secure" in text
    back = read_nmf(tmp_path / "nmf", Schema({"sex": ["F", "M"]}))
    assert back.randomness == "secure" and back.levels == ("State", "County")
    assert back.geocodes("County").tolist() == ["01001", "01002", "01003"]  # 01002: no records
    # --simulate without a seed is a simulation too
    assert _measure(tmp_path, counts="c.csv", seed=("--simulate",), out="sim") == 0
    assert "SIMULATION: not for publication" in capsys.readouterr().out
    assert read_nmf(tmp_path / "sim", Schema({"sex": ["F", "M"]})).randomness == "simulation"


def test_measure_microdata_parquet_workload_csv_invariants_json_and_json_report(
    tmp_path, blocks, capsys
):
    tracts = blocks.assign(geocode=blocks["geocode"].str[:11])
    tracts = tracts[tracts["geocode"].str.startswith("90001")]
    micro = tracts.loc[tracts.index.repeat(tracts["count"])].drop(columns="count")
    micro.to_parquet(tmp_path / "people.parquet", index=False)
    (tmp_path / "schema.json").write_text(json.dumps(SCHEMA))
    pd.DataFrame(
        {"level": ["County", "Tract", "Tract"], "query": ["total", "sex", "age"],
         "rho": [1.0, 0.5, 0.5]}
    ).to_csv(tmp_path / "wl.csv", index=False)  # fmt: skip
    (tmp_path / "inv.json").write_text(json.dumps({"County": ["total", "sex"]}))
    # the units by level: the county, and the tracts (listed with and without a level)
    pd.DataFrame(
        {"level": ["County"] + ["Tract"] * tracts["geocode"].nunique(),
         "geocode": ["90001", *tracts["geocode"].unique()]}
    ).to_csv(tmp_path / "units.csv", index=False)  # fmt: skip
    argv = [
        "census", "measure", str(tmp_path / "people.parquet"), "--schema",
        str(tmp_path / "schema.json"), "--workload", str(tmp_path / "wl.csv"), "--invariants",
        str(tmp_path / "inv.json"), "--seed", "1", "-o", str(tmp_path / "nmf"), "--json",
        "--units", str(tmp_path / "units.csv"),
    ]  # fmt: skip
    assert main(argv) == 0
    doc = strict_json(capsys.readouterr().out)
    # the default geography: the Bureau's levels the workload names, County to Tract
    assert doc["levels"] == {"County": 1, "Tract": int(tracts["geocode"].nunique())}
    assert doc["rho"] == pytest.approx(2.0) and doc["simulation"] is True
    assert doc["invariants"] == [{"level": "County", "query": "total"},
                                 {"level": "County", "query": "sex"}]  # fmt: skip
    back = read_nmf(tmp_path / "nmf", Schema(SCHEMA))
    assert back.invariants[("County", "sex")].values.sum() == len(micro)


def test_force_replaces_a_noisy_measurement_directory_only(nmf, inputs, capsys):
    out = inputs / "nmf"
    assert _measure(inputs) == 0
    capsys.readouterr()
    assert _measure(inputs, "--invariants", "State:total") == 2
    assert "exists; pass --force" in _err(capsys)
    assert ("State", "total") not in read_nmf(out, Schema(SCHEMA)).invariants
    assert _measure(inputs, "--invariants", "State:total", "--force") == 0
    assert ("State", "total") in read_nmf(out, Schema(SCHEMA)).invariants
    capsys.readouterr()
    (inputs / "mine").mkdir()
    (inputs / "mine" / "thesis.tex").write_text("years of work")
    assert _measure(inputs, "--force", out="mine") == 2
    assert "not a noisy measurement file" in _err(capsys)
    assert (inputs / "mine" / "thesis.tex").read_text() == "years of work"
    assert _leftovers(inputs) == []


def test_a_failed_or_interrupted_write_leaves_nothing(inputs, monkeypatch, capsys):
    from invariantdp.census import NoisyMeasurements

    real = NoisyMeasurements.to_nmf

    def half(self, path, fail):
        real(self, path)
        assert any(Path(path).iterdir())  # the files were written ...
        fail()

    def disk_full():
        raise OSError("disk full")

    monkeypatch.setattr(NoisyMeasurements, "to_nmf", lambda s, p: half(s, p, disk_full))
    assert _measure(inputs) == 2
    assert "disk full" in _err(capsys)
    assert not (inputs / "nmf").exists() and _leftovers(inputs) == []  # ... and removed

    outer = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        interrupt = lambda: signal.raise_signal(signal.SIGINT)  # noqa: E731
        monkeypatch.setattr(NoisyMeasurements, "to_nmf", lambda s, p: half(s, p, interrupt))
        with pytest.raises(KeyboardInterrupt):
            _measure(inputs)
        assert not (inputs / "nmf").exists() and _leftovers(inputs) == []
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    finally:
        signal.signal(signal.SIGINT, outer)


MEASURE_ERRORS = [
    (["--schema", "{tmp}/nosuch.json"], "No such file"),
    (["--schema", "{tmp}/list.json"], "must hold a JSON object of attributes"),
    (["--schema", "{tmp}/zero.json"], "`sex` (0) must have at least 1 level"),
    (["--geography", "State=2"], "must be 'default' or levels with widths like"),
    (["--geography", "State:5,County:2"], "must exceed that of `State`"),
    (["--workload", "{tmp}/wl_level.json"], "`level` ('Nation') is not a level of the geography"),
    (["--workload", "{tmp}/wl_query.json"], "`query` ('race') is not a query of the schema"),
    (["--workload", "{tmp}/wl_rho.json"], "rho of County 'total' (-1) must be > 0"),
    (["--workload", "{tmp}/wl_cols.csv"], "lacks the column(s) rho"),
    (["--workload", "{tmp}/wl.txt"], "must be a .json or a .csv file"),
    (["--invariants", "State"], "must be 'Level:query[,Level:query...]'"),
    (["--invariants", "State:race"], "`query` ('race') is not a query of the schema"),
    (["--delta", "2"], "`--delta` (2.0) must be in (0, 1)"),
    (["counts={tmp}/blocks.txt"], "`counts` ('"),
    (["counts={tmp}/no_age.csv"], "`counts` lacks the column(s) age"),
    (["counts={tmp}/tracts.csv"], "column `geocode` must hold geocodes (strings) of the declared"),
    (["--units", "{tmp}/nosuch.csv"], "No such file"),
    (["--units", "{tmp}/units_nocol.csv"], "must have a column geocode (and optionally level)"),
    (["--units", "{tmp}/units_short.csv"], "not a string of 16 digits"),
    (["counts={tmp}/negative.csv"], "column `count` must hold non-negative integers"),
    (["-o", "{tmp}/missing/nmf"], "must be in an existing directory"),
    (["-o", "{tmp}"], "holds `counts`"),
    (["-o", "{tmp}/a_file"], "exists and is not a directory"),
]


@pytest.mark.parametrize("extra, message", MEASURE_ERRORS, ids=[m for _, m in MEASURE_ERRORS])
@pytest.mark.parametrize("secure", [False, True])
def test_measure_bad_input_exits_2_with_one_line(inputs, blocks, extra, message, secure, capsys):
    tmp = inputs
    (tmp / "list.json").write_text("[1, 2]")
    (tmp / "zero.json").write_text(json.dumps({"sex": 0}))
    for name, wl in (("wl_level", {"Nation": {"total": 1}}), ("wl_query", {"State": {"race": 1}}),
                     ("wl_rho", {"County": {"total": -1}})):  # fmt: skip
        (tmp / f"{name}.json").write_text(json.dumps(wl))
    pd.DataFrame({"level": ["State"], "query": ["total"]}).to_csv(tmp / "wl_cols.csv")
    (tmp / "wl.txt").write_text("State total 1")
    blocks.drop(columns="age").to_csv(tmp / "no_age.csv", index=False)
    blocks.assign(geocode=blocks["geocode"].str[:11]).to_csv(tmp / "tracts.csv", index=False)
    blocks.assign(count=blocks["count"] - 4000).to_csv(tmp / "negative.csv", index=False)
    (tmp / "a_file").write_text("x")
    pd.DataFrame({"code": ["1"]}).to_csv(tmp / "units_nocol.csv", index=False)
    _write_units(tmp, ["9000100010011"], "units_short.csv")
    counts, args = "blocks.csv", []
    for item in extra:
        if item.startswith("counts="):
            counts = Path(item[len("counts=") :].format(tmp=tmp)).name
        else:
            args.append(item.format(tmp=tmp))
    if counts == "blocks.txt":
        (tmp / "blocks.txt").write_text("geocode")
    before = sorted(p.name for p in tmp.iterdir())
    argv = [
        "census", "measure", str(tmp / counts), "--schema", str(tmp / "schema.json"),
        "--workload", str(tmp / "wl.json"), "--units", str(tmp / "units.csv"),
        "-o", str(tmp / "nmf"),
    ]  # fmt: skip
    if not secure:
        argv += ["--seed", "1"]
    # a later option wins in argparse: the bad value replaces the good one
    assert main([*argv, *args]) == 2
    err = _err(capsys)
    assert message in err
    # no confidential value in a message (paths, which may hold "-3", set aside)
    shown = re.sub(r"pytest-\d+", "pytest-N", err.replace(str(tmp), "<tmp>"))
    assert "-4000" not in shown and "-3" not in shown
    assert sorted(p.name for p in tmp.iterdir()) == before


# --- estimate ---------------------------------------------------------------------------------


def _estimate(nmf, *extra, out="tracts.csv"):
    argv = [
        "census", "estimate", str(nmf / "nmf"), "--schema", str(nmf / "schema.json"),
        "--level", "Tract", "--query", "sex * age", "-o", str(nmf / out), *extra,
    ]  # fmt: skip
    return main(argv)


def test_estimate_writes_the_gls_estimates(nmf, capsys):
    assert _estimate(nmf, "--confidence-level", "0.9") == 0
    text = capsys.readouterr().out
    assert text.startswith("SIMULATION: not for publication")
    assert "83 units of level Tract (498 rows)" in text and "0 rows not estimable" in text
    got = pd.read_csv(nmf / "tracts.csv", dtype={"geocode": str})
    ref = gls(read_nmf(nmf / "nmf", Schema(SCHEMA))).estimate("detailed", "Tract", 0.9)
    assert list(got.columns) == list(ref.columns)
    assert got["geocode"].tolist() == ref["geocode"].tolist()
    for col in ("estimate", "std_error", "ci_lower", "ci_upper"):
        np.testing.assert_allclose(got[col], ref[col], rtol=1e-14)
    # the intervals are 90% normal intervals (the other units' noise smooths the lattice;
    # a margin of 1e-10 keeps an integer on an end)
    z = (got["ci_upper"] - got["estimate"]) / got["std_error"]
    np.testing.assert_allclose(z, 1.6448536269514722, rtol=1e-7)
    (nmf / "tracts.csv").unlink()


def test_estimate_sums_over_groups_to_parquet_with_a_json_report(nmf, capsys):
    tracts = read_nmf(nmf / "nmf", Schema(SCHEMA)).geocodes("Tract")
    groups = pd.DataFrame({"geocode": tracts[:10], "group": ["north"] * 4 + ["south"] * 6})
    groups.to_csv(nmf / "groups.csv", index=False)
    out = "cities.parquet"
    assert _estimate(nmf, "--groups", str(nmf / "groups.csv"), "--json", out=out) == 0
    doc = strict_json(capsys.readouterr().out)
    assert doc["groups"] == 2 and doc["rows"] == 12 and doc["simulation"] is True
    got = pd.read_parquet(nmf / out)
    est = gls(read_nmf(nmf / "nmf", Schema(SCHEMA)))
    ref = est.estimate("detailed", "Tract", groups=dict(zip(groups["geocode"], groups["group"],
                                                              strict=True)))  # fmt: skip
    np.testing.assert_allclose(got["std_error"], ref["std_error"], rtol=1e-14)
    per_tract = est.estimate("detailed", "Tract").set_index("geocode").loc[tracts[:4]]
    north = got[got["group"] == "north"]["estimate"].to_numpy()
    np.testing.assert_allclose(north, per_tract.groupby(["sex", "age"], sort=False)["estimate"]
                               .sum().to_numpy(), rtol=1e-12)  # fmt: skip
    (nmf / out).unlink()


def test_estimate_cells_gives_the_numbers_of_python(nmf, capsys):
    cells = ["adults=age:18-64,65+", "old women=sex:F;age:65+"]
    argv = [item for c in cells for item in ("--cells", c)]
    assert _estimate(nmf, *argv, "--confidence-level", "0.9") == 0
    text = capsys.readouterr().out
    assert "83 units of level Tract (166 rows)" in text
    assert "selections of cells (column cells): adults, old women" in text
    got = pd.read_csv(nmf / "tracts.csv", dtype={"geocode": str})
    est = gls(read_nmf(nmf / "nmf", Schema(SCHEMA)))
    spec = {"adults": {"age": ["18-64", "65+"]}, "old women": {"sex": ["F"], "age": ["65+"]}}
    ref = est.estimate("sex * age", "Tract", 0.9, cells=spec)
    assert list(got.columns) == list(ref.columns)
    assert got["cells"].tolist() == ref["cells"].tolist()
    for col in ("estimate", "std_error", "moe", "ci_lower", "ci_upper"):
        np.testing.assert_allclose(got[col], ref[col], rtol=1e-14)
    # summed over groups of tracts too
    tracts = est.measurements.geocodes("Tract")
    groups = pd.DataFrame({"geocode": tracts[:5], "group": ["north"] * 2 + ["south"] * 3})
    groups.to_csv(nmf / "groups.csv", index=False)
    (nmf / "tracts.csv").unlink()
    assert _estimate(nmf, *argv, "--groups", str(nmf / "groups.csv"), "--json") == 0
    doc = strict_json(capsys.readouterr().out)
    assert doc["cells"] == ["adults", "old women"] and doc["rows"] == 4
    got = pd.read_csv(nmf / "tracts.csv")
    walk = dict(zip(groups["geocode"], groups["group"], strict=True))
    ref = est.estimate("sex * age", "Tract", groups=walk, cells=spec)
    np.testing.assert_allclose(got["std_error"], ref["std_error"], rtol=1e-14)
    (nmf / "tracts.csv").unlink()


def test_estimate_takes_a_recoded_query_with_cells_as_python_does(tmp_path, capsys):
    from census.nmf_layout import write_release

    write_release(tmp_path, np.random.default_rng(5), counties=1, tracts=2, groups=1, blocks=2)
    folder = tmp_path / "US_Person_PL_PROD"
    out = tmp_path / "inst.csv"
    argv = ["census", "estimate", str(folder), "--schema", "pl94", "--level", "Tract",
            "--query", "hhinstlevels", "--cells", "inst=hhinstlevels:Institutional Facility",
            "-o", str(out)]  # fmt: skip
    assert main(argv) == 0
    assert "selections of cells (column cells): inst" in capsys.readouterr().out
    got = pd.read_csv(out, dtype={"geocode": str})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # the kept-but-unused hhgq bounds
        est = gls(read_nmf(folder))
    spec = {"inst": {"hhinstlevels": ["Institutional Facility"]}}
    ref = est.estimate("hhinstlevels", "Tract", cells=spec)
    assert got["cells"].tolist() == ["inst"] * len(ref)
    for col in ("estimate", "std_error"):
        np.testing.assert_allclose(got[col], ref[col], rtol=1e-14)


def test_estimate_reports_inequalities_kept_but_not_used(tmp_path, capsys):
    from invariantdp.census import NoisyMeasurements

    dpq = pd.DataFrame({"geocode": ["1", "11", "12"], "query_name": ["total_dpq"] * 3,
                        "value": [[10.0], [4.0], [7.0]], "variance": [1.0, 2.0, 2.0]})  # fmt: skip
    con = pd.DataFrame({"geocode": ["11"], "query_name": ["total_con"], "sign": ["<="],
                        "value": [[9.0]]})  # fmt: skip
    geo = Geography({"A": 1, "B": 2})
    with pytest.warns(UserWarning):
        NoisyMeasurements.from_frames(dpq, con, Schema({"sex": 2}), geo).to_nmf(tmp_path / "n")
    (tmp_path / "s.json").write_text(json.dumps({"sex": 2}))
    argv = ["census", "estimate", str(tmp_path / "n"), "--schema", str(tmp_path / "s.json"),
            "--geography", "A:1,B:2", "--level", "B", "--query", "total",
            "-o", str(tmp_path / "b.csv")]  # fmt: skip
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert "note: 1 sets of inequality constraints" in text
    assert len(pd.read_csv(tmp_path / "b.csv")) == 2


ESTIMATE_ERRORS = [
    (["NMF={tmp}/nowhere"], "`NMF_DIR` ("),
    (["--query", "race"], "`--query`: `query` ('race') is not a query of the schema"),
    (["--level", "Nation"], "`--level`: `level` ('Nation') is not a level of the geography"),
    (["--geography", "State:2,County:5"], "`level` ('Tract') is not a level of the geography"),
    (["NMF={tmp}/short"], "`--level` ('Tract') is not a level of `NMF_DIR` (State, County)"),
    (["--confidence-level", "1.5"], "`--confidence-level` (confidence_level = 1.5) must be"),
    (["-o", "{tmp}/t.txt"], "must end in .csv or .parquet"),
    (["-o", "{tmp}/nmf/t.csv"], "is inside `NMF_DIR`"),
    (["-o", "{tmp}/existing.csv"], "exists; pass --force"),
    (["--groups", "{tmp}/g_cols.csv"], "lacks the column(s) group"),
    (["--groups", "{tmp}/g_unit.csv"], "key '99999999999' is not a geocode of level `Tract`"),
    (["--cells", "adults"], "`--cells` ('adults') must be NAME=ATTR:LABEL,LABEL"),
    (["--cells", "a=age:90+"], "'90+' is not a level of 'age' (0-17, 18-64, 65+)"),
    (["--cells", "a=race:x"], "names 'race', which is neither an attribute of --query"),
    (["--cells", "a=age:65+", "--cells", "a=sex:F"], "names the selection 'a' twice"),
    (["--cells", "a=age:65+;age:0-17"], "names 'age' twice"),
    (["--groups", "{tmp}/g_dup.csv"], "lists unit"),
    (["--groups", "{tmp}/g_dup.csv", "-o", "{tmp}/g_dup.csv", "--force"], "same file as"),
    (["--schema", "pl94", "--query", "total"], "is not the schema the file records"),
    (["NMF={tmp}/broken"], "not a readable Parquet file"),
]


@pytest.mark.parametrize("extra, message", ESTIMATE_ERRORS, ids=[m for _, m in ESTIMATE_ERRORS])
def test_estimate_bad_input_exits_2_with_one_line(nmf, extra, message, capsys):
    tmp = nmf
    codes = read_nmf(nmf / "nmf", Schema(SCHEMA)).geocodes("Tract")
    pd.DataFrame({"geocode": codes[:2]}).to_csv(tmp / "g_cols.csv", index=False)
    pd.DataFrame({"geocode": ["99999999999"], "group": ["x"]}).to_csv(tmp / "g_unit.csv",
                                                                      index=False)  # fmt: skip
    pd.DataFrame({"geocode": [codes[0]] * 2, "group": ["x", "y"]}).to_csv(tmp / "g_dup.csv",
                                                                          index=False)  # fmt: skip
    (tmp / "existing.csv").write_text("keep")
    broken = tmp / "broken" / "State.parquet" / "DPQuery"
    broken.mkdir(parents=True, exist_ok=True)
    (broken / "part-0.parquet").write_bytes(b"not parquet")
    for level in ("State", "County"):  # a file of the two top levels only
        if not (tmp / "short" / f"{level}.parquet").exists():
            shutil.copytree(tmp / "nmf" / f"{level}.parquet", tmp / "short" / f"{level}.parquet")
    source, args, query = tmp / "nmf", [], ["--query", "sex * age"]
    for item in extra:
        if item.startswith("NMF="):
            source = Path(item[4:].format(tmp=tmp))
        else:
            args.append(item.format(tmp=tmp))
    before = sorted(p.name for p in tmp.iterdir())
    argv = ["census", "estimate", str(source), "--schema", str(tmp / "schema.json"),
            "--level", "Tract", *query, "-o", str(tmp / "out.csv")]  # fmt: skip
    assert main([*argv, *args]) == 2
    assert message in _err(capsys)
    assert sorted(p.name for p in tmp.iterdir()) == before
    assert (tmp / "existing.csv").read_text() == "keep"


def test_census_without_a_subcommand_prints_its_help(capsys):
    assert main(["census"]) == 2
    text = capsys.readouterr().out
    assert "measure" in text and "estimate" in text

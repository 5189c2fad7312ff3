"""Noisy measurement files: the Bureau's layout written by plain pyarrow, round trips, bad files."""

import warnings

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from invariantdp.census import Geography, Schema, gls, measure, read_nmf
from invariantdp.exceptions import InvariantDPError

SCHEMA = Schema({"votingage": 2, "hispanic": 2})
GEO = Geography({"State": 2, "County": 5, "Tract": 11})


def dpq_rows(rows):
    """A DPQuery table with the Bureau's extra columns (query_shape, plb, a level column)."""
    return pa.table(
        {
            "geocode": pa.array([r[0] for r in rows], pa.string()),
            "query_name": pa.array([r[1] for r in rows], pa.string()),
            "value": pa.array([r[2] for r in rows], pa.list_(pa.int64())),
            "variance": pa.array([r[3] for r in rows], pa.float64()),
            "query_shape": pa.array(
                [r[4] if len(r) > 4 else None for r in rows], pa.list_(pa.int32())
            ),
            "plb": pa.array(["1/2"] * len(rows), pa.string()),
            "State": pa.array([r[0][:2] for r in rows], pa.string()),
        }
    )


def con_rows(rows):
    return pa.table(
        {
            "geocode": pa.array([r[0] for r in rows], pa.string()),
            "query_name": pa.array([r[1] for r in rows], pa.string()),
            "sign": pa.array([r[2] for r in rows], pa.string()),
            "value": pa.array([r[3] for r in rows], pa.list_(pa.int64())),
        }
    )


GOOD = {
    "State": (
        [("01", "total_dpq", [40], 1.0, []), ("01", "detailed_dpq", [9, 11, 8, 12], 4.0, [2, 2])],
        [("01", "total_con", "=", [40])],
    ),
    "County": (
        [
            ("01001", "votingage_dpq", [18, 22], 2.0, [2]),
            ("01002", "votingage_dpq", [0, 1], 2.0, [2]),
        ],
        [("01002", "hispanic_con", "<=", [0, 5])],
    ),
    "Tract": (
        [
            ("01001000100", "detailed_dpq", [5, 6, 4, 5], 8.0, [2, 2]),
            ("01001000200", "detailed_dpq", [4, 5, 4, 6], 8.0, [2, 2]),
            ("01002000100", "total_dpq", [1], 8.0, []),
        ],
        [],
    ),
}


def write(root, files=GOOD, extra=None):
    for level, (dpq, con) in files.items():
        base = root / f"{level}.parquet"
        (base / "DPQuery").mkdir(parents=True)
        pq.write_table(dpq_rows(dpq), base / "DPQuery" / "part-00000.snappy.parquet")
        (base / "DPQuery" / "_SUCCESS").write_text("")  # Spark's marker is skipped
        if con:
            (base / "Constraint").mkdir()
            pq.write_table(con_rows(con), base / "Constraint" / "part-00000.parquet")
    return root


def test_reads_a_directory_written_by_plain_pyarrow(tmp_path):
    with pytest.warns(UserWarning, match="kept but not used"):
        nm = read_nmf(write(tmp_path / "nmf"), SCHEMA)
    assert nm.levels == ("State", "County", "Tract")  # the Bureau's widths, found in the directory
    assert nm.geocodes("County").tolist() == ["01001", "01002"]
    assert nm.measurements[("State", "detailed")].values.tolist() == [[9, 11, 8, 12]]
    assert nm.invariants[("State", "total")].values.tolist() == [[40]]
    zeros = nm.zeros[("County", "hispanic")]
    assert zeros.values.tolist() == [[True, False]]  # the bound of 5 is not a zero
    assert nm.inequality_report()[["level", "query", "sign", "units"]].values.tolist() == [
        ["County", "hispanic", "<=", 1]
    ]
    assert nm.randomness == "unknown"
    est = gls(nm)
    hisp = est.estimate("hispanic", "County")
    assert hisp.loc[2, "estimate"] == 0.0 and hisp.loc[2, "std_error"] == 0.0  # the zero
    assert est.estimate("total", "State").loc[0, "estimate"] == pytest.approx(40.0, abs=1e-9)


def test_to_nmf_then_read_nmf_round_trips_exactly(tmp_path):
    rng = np.random.default_rng(4)
    import pandas as pd

    rows = [
        (f"01{c:03d}{t:06d}", v, h, int(rng.poisson(4)))
        for c in range(3)
        for t in range(2)
        for v in range(2)
        for h in range(2)
    ]
    counts = pd.DataFrame(rows, columns=["geocode", "votingage", "hispanic", "count"])
    wl = {
        "State": {"total": 1.0},
        "County": {"votingage": 0.5, "detailed": 0.25},
        "Tract": {"detailed": 0.1},
    }
    nm = measure(
        counts,
        SCHEMA,
        GEO,
        wl,
        invariants={"State": ["total"], "County": ["hispanic"]},
        secure=False,
        rng=2,
        units=counts["geocode"].unique(),
    )
    nm.to_nmf(tmp_path / "x")
    back = read_nmf(tmp_path / "x", SCHEMA, GEO)
    assert back.randomness == "simulation" and back.levels == nm.levels
    for a, b in zip(nm.units, back.units, strict=True):
        assert a.tolist() == b.tolist()
    for store in ("measurements", "invariants", "zeros", "inequalities"):
        mine, theirs = getattr(nm, store), getattr(back, store)
        assert mine.keys() == theirs.keys()
        for key in mine:
            assert np.array_equal(mine[key].units, theirs[key].units)
            assert np.array_equal(mine[key].values, theirs[key].values)
            if mine[key].variance is not None:
                assert np.array_equal(mine[key].variance, theirs[key].variance)
    with pytest.raises(InvariantDPError, match="exists and is not an empty directory"):
        nm.to_nmf(tmp_path / "x")


def test_files_round_trip_structural_zeros_and_inequalities(tmp_path):
    with pytest.warns(UserWarning):
        nm = read_nmf(write(tmp_path / "a"), SCHEMA)
    nm.to_nmf(tmp_path / "b")
    with pytest.warns(UserWarning):
        back = read_nmf(tmp_path / "b", SCHEMA)
    for store in ("zeros", "inequalities", "invariants"):
        assert getattr(nm, store).keys() == getattr(back, store).keys()
        for key, t in getattr(nm, store).items():
            assert np.array_equal(t.values, getattr(back, store)[key].values)


def bad(tmp_path, level, kind, index, field, value):
    files = {lev: ([list(r) for r in d], [list(r) for r in c]) for lev, (d, c) in GOOD.items()}
    rows = files[level][0 if kind == "DPQuery" else 1]
    rows[index][field] = value
    files = {lev: ([tuple(r) for r in d], [tuple(r) for r in c]) for lev, (d, c) in files.items()}
    return write(tmp_path / "bad", files)


@pytest.mark.parametrize(
    "level, kind, index, field, value, message",
    [
        (
            "County",
            "DPQuery",
            1,
            1,
            "sex_dpq",
            r"County.parquet/DPQuery/part-00000.snappy.parquet, row 1, field `query_name`: "
            r"'sex_dpq' is not a query of the schema \(unknown query name",
        ),
        (
            "State",
            "DPQuery",
            1,
            2,
            [9, 11, 8],
            r"State.parquet/DPQuery/.*, row 1, field `value`: holds 3 numbers but query "
            r"'detailed' of the schema has 4 cells",
        ),
        (
            "Tract",
            "DPQuery",
            2,
            0,
            "0100200010",
            r"Tract.parquet/DPQuery/.*, row 2, field `geocode`: '0100200010' must be a string of "
            r"11 digits \(level Tract\)",
        ),
        (
            "Tract",
            "DPQuery",
            2,
            0,
            "01003000100",
            r"Tract.parquet/DPQuery/.*, row 2, field `geocode`: '01003000100' has no parent: "
            r"'01003' is not a unit of level County",
        ),
        (
            "County",
            "DPQuery",
            0,
            3,
            -2.0,
            r"County.parquet/DPQuery/.*, row 0, field `variance`: \(-2.0\) must be finite and >= 0",
        ),
        (
            "County",
            "DPQuery",
            1,
            3,
            float("nan"),
            r"County.parquet/DPQuery/.*, row 1, field `variance`: \(nan\) must be finite and >= 0",
        ),
        (
            "County",
            "DPQuery",
            1,
            3,
            float("inf"),
            r"row 1, field `variance`: \(inf\) must be finite and >= 0",
        ),
        (
            "County",
            "Constraint",
            0,
            2,
            "<",
            r"County.parquet/Constraint/part-00000.parquet, row 0, field `sign`: '<' must be "
            r"one of",
        ),
        (
            "County",
            "DPQuery",
            0,
            1,
            "votingage_con",
            r"row 0, field `query_name`: 'votingage_con' must end with '_dpq' in DPQuery rows",
        ),
        (
            "State",
            "DPQuery",
            1,
            4,
            [4],
            r"State.parquet/DPQuery/.*, row 1, field `query_shape`: \(4,\) is not the schema's "
            r"shape \(2, 2\) of query 'detailed'",
        ),
        (
            "Tract",
            "DPQuery",
            1,
            0,
            "01001000100",
            r"Tract.parquet/DPQuery/.*, row 1, field `geocode`: repeats unit '01001000100' for "
            r"query 'detailed'",
        ),
        (
            "County",
            "Constraint",
            0,
            3,
            [0, -1],
            r"County.parquet/Constraint/.*, row 0, field `value`: an upper bound below 0",
        ),
    ],
)
def test_each_bad_file_gets_one_error_naming_file_row_and_field(
    tmp_path, level, kind, index, field, value, message
):
    root = bad(tmp_path, level, kind, index, field, value)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        with pytest.raises(InvariantDPError, match=message):
            read_nmf(root, SCHEMA)


def test_query_shape_of_another_layout_is_refused(tmp_path):
    root = bad(tmp_path, "State", "DPQuery", 1, 4, [2, 2, 1])
    with pytest.warns(UserWarning):
        assert read_nmf(root, SCHEMA).measurements[("State", "detailed")].values.shape == (1, 4)
    root2 = bad(tmp_path / "b", "State", "DPQuery", 1, 4, [3, 2])
    with pytest.raises(InvariantDPError, match="field `query_shape`: describes 6 cells"):
        read_nmf(root2, SCHEMA)


def test_directory_problems_are_named(tmp_path):
    with pytest.raises(InvariantDPError, match="holds no <Level>.parquet directory"):
        read_nmf(tmp_path, SCHEMA)
    files = {k: v for k, v in GOOD.items() if k != "County"}
    root = write(tmp_path / "gap", files)
    with pytest.raises(InvariantDPError, match="skip the level\\(s\\) County"):
        read_nmf(root, SCHEMA)
    with pytest.raises(InvariantDPError, match="has no directory for the level\\(s\\) County"):
        read_nmf(root, SCHEMA, GEO)
    broken = write(tmp_path / "broken")
    (broken / "Tract.parquet" / "DPQuery" / "part-00001.parquet").write_text("not parquet")
    with pytest.raises(InvariantDPError, match="part-00001.parquet: not a readable Parquet file"):
        read_nmf(broken, SCHEMA)
    table = pa.table({"geocode": ["01"], "query_name": ["total_dpq"], "value": [[1.0]]})
    nodir = tmp_path / "novar" / "State.parquet" / "DPQuery"
    nodir.mkdir(parents=True)
    pq.write_table(table, nodir / "p.parquet")
    with pytest.raises(InvariantDPError, match="lack the column\\(s\\) variance"):
        read_nmf(tmp_path / "novar", SCHEMA)


def test_other_level_directories_are_reported_not_read(tmp_path):
    root = write(tmp_path / "nmf")
    (root / "US.parquet").mkdir()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        read_nmf(root, SCHEMA, GEO)
    assert any("US are not levels of the geography" in str(w.message) for w in caught)
    # without a geography the levels are the file's: an empty one is an error, not a skip
    with pytest.raises(InvariantDPError, match="US.parquet holds neither a DPQuery nor a"):
        read_nmf(root, SCHEMA)


def test_read_nmf_with_dask_gives_the_same_measurements(tmp_path):
    with pytest.warns(UserWarning):
        serial = read_nmf(write(tmp_path / "nmf"), SCHEMA)
    with pytest.warns(UserWarning):
        parallel = read_nmf(tmp_path / "nmf", SCHEMA, scheduler="dask")
    for key, t in serial.measurements.items():
        assert np.array_equal(t.values, parallel.measurements[key].values)

"""The 2020 release layout: files the package did not write, read with ``read_nmf(folder)``."""

import os
import warnings

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from invariantdp.census import PL94, PL94_UNITS, Geography, gls, read_nmf
from invariantdp.exceptions import InvariantDPError

from .nmf_layout import (
    LEVELS,
    QUERIES,
    QUERY_SHARE,
    WIDTH,
    dg_variance,
    query_answer,
    write_release,
)


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    root = tmp_path_factory.mktemp("release")
    truth = write_release(root, np.random.default_rng(20), states=("044", "050"))
    return root, truth


def read_quiet(*args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return read_nmf(*args, **kwargs)


def test_reads_the_persons_product_with_no_other_argument(release):
    root, truth = release
    with pytest.warns(UserWarning, match=r"inequality constraints .*'hhgq'.*kept but not used"):
        nm = read_nmf(root / "US_Person_PL_PROD")
    assert nm.schema == PL94
    assert nm.geography == Geography(WIDTH)
    for level in LEVELS:  # every unit, bypassed blocks (Constraint only) included
        assert nm.geocodes(level).tolist() == sorted(truth["units"][level])
    skip = truth["skip"]
    assert len(skip) == 1
    for level in LEVELS:
        expect = [q for q, s in zip(QUERIES, QUERY_SHARE[level], strict=True) if s is not None]
        assert sorted(nm.queries(level)) == sorted(expect)
        for query in expect:
            table = nm.measurements[(level, query)]
            codes = nm.geocodes(level)[table.units]
            measured = [g for g in sorted(truth["units"][level]) if g not in skip]
            assert codes.tolist() == measured
            answers, shape, _ = query_answer(truth["hists"][level], query)
            assert table.values.shape == (len(measured), int(np.prod(shape)))
            rows = [truth["units"][level].index(g) for g in codes]
            # the noise is a rounded Gaussian of sd sqrt(sigma^2): within 12 sd of the answer
            sd = np.sqrt([float(truth["sigma_sq"][(level, query, g)]) for g in codes])
            assert np.all(np.abs(table.values - answers[rows]) <= 12 * sd[:, None] + 0.5)
            # the file holds the discrete Gaussian's variance; sigma^2 is read back
            want = np.array([float(truth["sigma_sq"][(level, query, g)]) for g in codes])
            np.testing.assert_allclose(table.variance, want, rtol=1e-12)
    hh = nm.measurements[("Block", "hhinstlevels")]
    assert hh.values.shape[1] == 3
    # invariants: the US total; structural zeros: absent GQ types and nursing x under 18
    assert set(nm.invariants) == {("US", "total")}
    assert nm.invariants[("US", "total")].values[0, 0] == truth["hists"]["US"].sum()
    for level in LEVELS[1:]:
        absent = truth["facilities"][level] == 0
        z = nm.zeros.get((level, "hhgq"))
        full = np.zeros_like(absent)
        if z is not None:
            full[z.units] = z.values
        order = np.argsort(truth["units"][level])
        assert np.array_equal(full, absent[order])
        nurse = nm.zeros.get((level, "gqNursingTotal * nonvoting"))
        if level == "State":
            assert nurse is None
        else:
            assert nurse.units.size == len(truth["units"][level]) and nurse.values.all()
        # every positive bound is kept and reported; lower bounds of 0 alone say nothing
        ub = nm.inequalities[(level, "hhgq", "<=")]
        assert ub.units.size == int((~absent).any(axis=1).sum())
        assert np.array_equal(ub.values, 99999 * truth["facilities"][level][order][ub.units])
        lb = nm.inequalities.get((level, "hhgq", ">="))
        n_lb = int((truth["facilities"][level][:, 1:] > 0).any(axis=1).sum())
        assert (0 if lb is None else lb.units.size) == n_lb
    report = nm.inequality_report()
    assert set(report["sign"]) == {"<=", ">="} and set(report["query"]) == {"hhgq"}


def test_reads_the_units_product_and_chooses_products_by_name(release):
    root, truth = release
    with pytest.raises(InvariantDPError, match=r"several products .*product='persons' or 'units'"):
        read_nmf(root)
    nu = read_nmf(root, product="units")
    assert nu.schema == PL94_UNITS and nu.levels == LEVELS
    for level in LEVELS:
        total = truth["h1"][level].sum(axis=1)[np.argsort(truth["units"][level])]
        inv = nu.invariants.get((level, "total"))
        zero = nu.zeros.get((level, "total"))
        got = np.full(total.size, -1.0)
        if inv is not None:
            got[inv.units] = inv.values[:, 0]
        if zero is not None:  # housing units = 0: every cell of the unit is a structural zero
            got[zero.units] = 0
        assert np.array_equal(got, total)
        assert nu.queries(level) == ["detailed"]
    est = gls(nu)
    block = est.estimate("total", "Block")
    total = truth["h1"]["Block"].sum(axis=1)[np.argsort(truth["units"]["Block"])]
    np.testing.assert_allclose(block["estimate"].to_numpy(), total, atol=1e-6)
    with pytest.raises(InvariantDPError, match="is the units product, not the persons one"):
        read_nmf(root / "US_Unit_PL_PROD", product="persons")


def test_states_select_partitions_and_known_totals_are_added(release):
    root, truth = release
    with pytest.warns(UserWarning) as caught:
        nm = read_nmf(root / "US_Person_PL_PROD", states=["050"])
    assert any(
        "level US is not partitioned by State and was not read" in str(w.message) for w in caught
    )
    assert nm.levels == LEVELS[1:] and nm.geocodes("State").tolist() == ["050"]
    assert all(g.startswith("050") for g in nm.geocodes("Block"))
    with pytest.raises(InvariantDPError, match=r"`states`: 051 are not State partitions"):
        read_quiet(root / "US_Person_PL_PROD", states=["051"])
    pop = {g: int(truth["hists"]["State"][i].sum()) for i, g in enumerate(truth["units"]["State"])}
    nm = read_quiet(root / "US_Person_PL_PROD", invariants={"State": {"total": pop}})
    table = nm.invariants[("State", "total")]
    assert nm.geocodes("State")[table.units].tolist() == ["044", "050"]
    assert table.values[:, 0].tolist() == [pop["044"], pop["050"]]
    with pytest.raises(InvariantDPError, match="contradicts the file's invariant of unit ''"):
        read_quiet(root / "US_Person_PL_PROD", invariants={"US": {"total": {"": 1}}})
    with pytest.raises(InvariantDPError, match=r"not units of level `State`"):
        read_quiet(root / "US_Person_PL_PROD", invariants={"State": {"total": {"099": 1}}})


def test_the_variance_column_is_the_discrete_gaussians_variance():
    from invariantdp.census._nmf_read import variance_parameter
    from invariantdp.distributions import discrete_gaussian

    sigma_sq = np.array([0.05, 0.25, 0.5, 1.0, 1.5, 2.0, 40.0, 1e6])
    var = np.array([dg_variance(s) for s in sigma_sq])
    assert var[1] < 0.22 and var[-1] == 1e6  # they differ only for small sigma^2
    back = variance_parameter(var)
    np.testing.assert_allclose(back, sigma_sq, rtol=1e-10)
    np.testing.assert_allclose(discrete_gaussian.var(np.sqrt(back)), var, rtol=1e-12)
    assert variance_parameter(np.array([0.0]))[0] == 0.0


def _rewrite(path, **columns):
    """The Parquet file at ``path`` with some columns replaced by pyarrow arrays."""
    table = pq.read_table(path)
    for name, array in columns.items():
        table = table.set_column(table.schema.get_field_index(name), name, array)
    pq.write_table(table, path)


def _first_file(product, level, kind):
    base = product / f"{level}.parquet" / kind
    return sorted(p for p in base.rglob("*.parquet"))[0]


@pytest.mark.parametrize(
    "column, make, message",
    [
        (
            "value",
            lambda n: pa.array([["1"]] * n, pa.list_(pa.string())),
            r"field `value`: must be a list of integers or floats, not list<.*string>",
        ),
        (
            "value",
            lambda n: pa.array([[True]] * n, pa.list_(pa.bool_())),
            r"field `value`: must be a list of integers or floats, not list<.*bool>",
        ),
        (
            "variance",
            lambda n: pa.array(["abc"] * n, pa.string()),
            r"field `variance`: must be a number \(float or integer\), not string",
        ),
        (
            "variance",
            lambda n: pa.array([True] * n, pa.bool_()),
            r"field `variance`: must be a number \(float or integer\), not bool",
        ),
        (
            "value",
            lambda n: pa.array([[2**53 + 1, 0]] + [[1, 0]] * (n - 1), pa.list_(pa.int64())),
            r"row 0, field `value`: holds an integer beyond 2\^53",
        ),
        (
            "geocode",
            lambda n: pa.array(list(range(n)), pa.int64()),
            r"field `geocode`: must be a string, not int64",
        ),
    ],
)
def test_raw_pyarrow_errors_become_one_clear_error(tmp_path, column, make, message):
    write_release(tmp_path, np.random.default_rng(3))
    product = tmp_path / "US_Unit_PL_PROD"
    path = _first_file(product, "County", "DPQuery")
    n = pq.read_metadata(path).num_rows
    _rewrite(path, **{column: make(n)})
    with pytest.raises(
        InvariantDPError, match=r"County.parquet/DPQuery/State=044/part-.*" + message
    ):
        read_quiet(product)


def test_a_corrupt_data_page_is_named_by_file_row_and_field(tmp_path):
    write_release(tmp_path, np.random.default_rng(3))
    product = tmp_path / "US_Unit_PL_PROD"
    path = _first_file(product, "Tract", "DPQuery")
    table = pq.read_table(path)
    pq.write_table(table, path, compression="none", use_dictionary=False)
    meta = pq.read_metadata(path)
    column = meta.row_group(0).column(table.schema.get_field_index("variance"))
    start = column.data_page_offset
    raw = bytearray(path.read_bytes())
    raw[start : start + 16] = b"\xff" * 16  # the page header of the variance column
    path.write_bytes(bytes(raw))
    with pytest.raises(
        InvariantDPError,
        match=r"Tract.parquet/DPQuery/State=044/part-.*, row 0 \(row group 0\), field "
        r"`variance`: the data cannot be read",
    ):
        read_quiet(product)


def test_a_missing_or_empty_level_is_an_error_naming_it(tmp_path):
    write_release(tmp_path, np.random.default_rng(3))
    product = tmp_path / "US_Unit_PL_PROD"
    tract = product / "Tract.parquet"
    os.rename(tract / "DPQuery", tract / "DPQueries")
    os.rename(tract / "Constraint", tract / "Constraints")
    with pytest.raises(
        InvariantDPError,
        match=r"Tract.parquet holds neither a DPQuery nor a Constraint directory \(it holds "
        r"Constraints, DPQueries\): the level Tract cannot be read",
    ):
        read_nmf(product)
    os.rename(tract / "DPQueries", tract / "DPQuery")
    os.rename(tract / "Constraints", tract / "Constraint")
    for path in tract.rglob("*.parquet"):  # every Tract file now has 0 rows
        if path.is_file():
            pq.write_table(pq.read_table(path).slice(0, 0), path)
    with pytest.raises(
        InvariantDPError, match=r"the level Tract holds no rows \(2 file\(s\) of 0 rows\)"
    ):
        read_nmf(product)
    with pytest.raises(InvariantDPError, match=r"the level Tract holds no rows"):
        read_nmf(product, PL94_UNITS, Geography(WIDTH))


def test_geocodes_are_ascii_digits(tmp_path):
    write_release(tmp_path, np.random.default_rng(3))
    product = tmp_path / "US_Unit_PL_PROD"
    path = _first_file(product, "State", "Constraint")
    codes = pq.read_table(path).column("geocode").to_pylist()
    codes[0] = "٠٤٤"  # Arabic-Indic digits: str.isdigit() is True
    _rewrite(path, geocode=pa.array(codes, pa.string()))
    with pytest.raises(
        InvariantDPError,
        match=r"State.parquet/Constraint/State=044/.*, row 0, field `geocode`: '٠٤٤' must be a "
        r"string of 3 digits",
    ):
        read_quiet(product)


def test_attribute_columns_define_the_query_and_must_agree_with_its_name(tmp_path):
    write_release(tmp_path, np.random.default_rng(3))
    product = tmp_path / "US_Person_PL_PROD"
    path = _first_file(product, "County", "DPQuery")
    table = pq.read_table(path)
    hhgq = table.column("hhgq").to_pylist()
    row = table.column("query_name").to_pylist().index("hhinstlevels_dpq")
    hhgq[row] = "hhinstlevel"
    _rewrite(path, hhgq=pa.array(hhgq, pa.string()))
    with pytest.raises(
        InvariantDPError,
        match=rf"row {row}, field `hhgq`: 'hhinstlevel' is not '\*', 'hhgq', 'detailed' or a "
        r"recode of 'hhgq' \(hhinstlevels, gqNursingTotal\)",
    ):
        read_quiet(product)
    hhgq[row] = "hhgq"
    _rewrite(path, hhgq=pa.array(hhgq, pa.string()))
    with pytest.raises(
        InvariantDPError,
        match=rf"row {row}, field `query_name`: 'hhinstlevels_dpq' names the query "
        r"'hhinstlevels' but the attribute columns describe 'hhgq'",
    ):
        read_quiet(product)


# -- writing the layout: the Bureau's reader logic accepts it ---------------------------------


def bureau_parse(product, levels):
    """The joins and parsing of the Bureau's reader (``GLS/main_two_pass_alg.py``), our own code.

    Per level: the units are the distinct geocodes of Constraint; DPQuery rows are keyed
    by unit and query name minus its 4-character suffix; a unit without DPQuery rows gets
    an unmeasured ``detailed`` query; Constraint rows are converted as
    ``convert_constr_to_query`` does (``=`` total at invariant levels; ``>=`` and ``<=``
    rows with every bound > 0 ignored; other ``<=`` rows keep their zero cells; the query
    is the attribute columns other than ``*`` joined by " * "; the kept values must be 0).
    Returns ``{level: {geocode: {query: row}}}`` and the constraints by unit.
    """
    non_attr = [
        "geocode",
        "query_name",
        "sign",
        "query_shape",
        "value",
        "variance",
        "plb",
        "State",
        "County",
        "sigma_sq",
    ]
    out, constraints = {}, {}
    for level in levels:
        con = pq.read_table(product / f"{level}.parquet" / "Constraint").to_pylist()
        units = sorted({r["geocode"] for r in con})
        dpq_dir = product / f"{level}.parquet" / "DPQuery"
        rows = pq.read_table(dpq_dir).to_pylist() if dpq_dir.exists() else []
        nodes = {}
        for r in rows:
            nodes.setdefault(r["geocode"], {})[r["query_name"][:-4]] = {
                "value": r["value"],
                "variance": r["variance"],
            }
        for g in units:
            nodes.setdefault(g, {"detailed": {"value": None, "variance": np.inf}})
        assert set(nodes) == set(units), "DPQuery units missing from Constraint"
        for g, node in nodes.items():
            assert "detailed" in node, f"{level} unit {g!r} has no detailed_dpq"
        parsed = {}
        for r in con:
            value = np.array(r["value"]).astype(np.int64)
            if r["query_name"] == "total_con" or r["sign"] == ">=":
                continue
            if r["sign"] == "<=" and np.all(value > 0):
                continue
            if r["sign"] == "<=":
                keep = np.nonzero(~value.astype(bool))[0]
                value = value[keep]
            parts = [
                r[k]
                for k in r
                if isinstance(r[k], str) and not any(k in n for n in non_attr) and "*" not in r[k]
            ]
            assert np.all(value == 0)
            parsed.setdefault(r["geocode"], []).append(" * ".join(parts))
        out[level], constraints[level] = nodes, parsed
    return out, constraints


def test_to_nmf_writes_the_release_layout_the_bureaus_reader_accepts(release, tmp_path):
    root, truth = release
    nm = read_quiet(root / "US_Person_PL_PROD")
    nm.to_nmf(tmp_path / "out")
    out = tmp_path / "out"
    assert sorted(p.name for p in out.iterdir()) == [f"{lev}.parquet" for lev in sorted(LEVELS)]
    assert not (out / "US.parquet" / "DPQuery" / "State=044").exists()
    assert (out / "Block.parquet" / "Constraint" / "State=050").is_dir()
    nodes, constraints = bureau_parse(out, LEVELS)
    for level in LEVELS:
        assert sorted(nodes[level]) == nm.geocodes(level).tolist()  # no unit dropped
        for (lev, q), t in nm.measurements.items():  # no measurement dropped
            if lev == level:
                for u, vals in zip(nm.geocodes(level)[t.units], t.values, strict=True):
                    assert nodes[level][u][q]["value"] == vals.tolist()
        zeros = {(lev, q) for (lev, q) in nm.zeros if lev == level}
        for names in constraints[level].values():
            for name in names:  # every parsed zero constraint is a query of the schema
                assert PL94.canonical(name or "total") in {q for _, q in zeros}
    # the file is read back as it was: nothing lost, its schema recorded in the file
    back = read_quiet(out)
    assert back.schema == PL94 and back.geography == nm.geography
    with pytest.raises(InvariantDPError, match="is not the schema the file records"):
        read_quiet(out, PL94_UNITS)
    for store in ("measurements", "invariants", "zeros", "inequalities"):
        mine, theirs = getattr(nm, store), getattr(back, store)
        assert mine.keys() == theirs.keys()
        for key in mine:
            assert np.array_equal(mine[key].units, theirs[key].units)
            assert np.array_equal(mine[key].values, theirs[key].values)
            if mine[key].variance is not None:
                assert np.array_equal(mine[key].variance, theirs[key].variance)
    names = set(
        pq.read_table(out / "Block.parquet" / "Constraint").column("query_name").to_pylist()
    )
    assert {"hhgq_total_lb_con", "hhgq_total_ub_con", "nurse_nva_0_con"} <= names
    assert pq.read_table(out / "US.parquet" / "Constraint").column("query_name").to_pylist() == [
        "total_con"
    ]


def test_to_nmf_is_atomic(release, tmp_path, monkeypatch):
    root, _ = release
    nm = read_quiet(root / "US_Unit_PL_PROD")
    real = pq.write_table
    calls = []

    def failing(table, where, *args, **kwargs):
        calls.append(where)
        if len(calls) == 7:  # US: 2 files, State: 4 (2 partitions), then the third level
            raise OSError("disk full")
        return real(table, where, *args, **kwargs)

    monkeypatch.setattr(pq, "write_table", failing)
    target = tmp_path / "nmf"
    with pytest.raises(OSError, match="disk full"):
        nm.to_nmf(target)
    assert not target.exists() and list(tmp_path.iterdir()) == []  # no partial folder left
    monkeypatch.setattr(pq, "write_table", real)
    nm.to_nmf(target)  # the retry is not refused
    assert read_quiet(target).levels == LEVELS


def test_read_nmf_with_dask_reads_the_release_layout_the_same(release):
    root, _ = release
    serial = read_quiet(root / "US_Person_PL_PROD")
    parallel = read_quiet(root / "US_Person_PL_PROD", scheduler="dask")
    assert parallel.geography == serial.geography
    for store in ("measurements", "invariants", "zeros", "inequalities"):
        mine, theirs = getattr(serial, store), getattr(parallel, store)
        assert mine.keys() == theirs.keys()
        for key in mine:
            assert np.array_equal(mine[key].values, theirs[key].values)


def test_the_layout_is_documented_in_the_public_guide_and_the_readers_point_there():
    from pathlib import Path

    from invariantdp.census import NoisyMeasurements

    docs = Path(__file__).resolve().parents[2] / "docs" / "guide"
    page = (docs / "nmf_layout.md").read_text(encoding="utf-8")
    title = page.splitlines()[0].removeprefix("# ")
    assert title == "The 2020 noisy measurement files: layout reference"
    assert "nmf_layout" in (docs / "index.md").read_text(encoding="utf-8")  # in the toctree
    # every column the reader takes, and every product and constraint name, on the page
    columns = ["geocode", "query_name", "value", "variance", "sign", "query_shape"]
    names = ["State=044", "US_Person_PL_PROD", "US_Unit_PL_PROD", "hhgq_total_ub", "nurse_nva_0"]
    for fact in columns + names:
        assert f"`{fact}" in page, fact
    # help() on the public functions sends a newcomer to that page, not to a private module
    for doc in (read_nmf.__doc__, NoisyMeasurements.to_nmf.__doc__):
        flat = " ".join(doc.split())
        assert title in flat and "docs/guide/nmf_layout.md" in flat
        assert "module docstring" not in flat

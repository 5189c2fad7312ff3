"""A release-layout file solved in parts: county by county, and state by state on Dask."""

import re
import warnings

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

from invariantdp.census import (
    Geography,
    NMFParts,
    NoisyMeasurements,
    PartsEstimate,
    Schema,
    _nmf_parts,
    gls,
    read_nmf,
)
from invariantdp.exceptions import InvariantDPError

from .nmf_layout import LEVELS, WIDTH, write_release

QUERIES = ["total", "votingage"]
ROW_GROUP = 40  # rows per Parquet row group of the test files


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    root = tmp_path_factory.mktemp("parts")
    truth = write_release(
        root,
        np.random.default_rng(31),
        states=("044", "050"),
        row_group_size=ROW_GROUP,
        counties=3,
        tracts=2,
        blocks=3,
    )
    return root, truth


def quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return fn(*args, **kwargs)


@pytest.fixture(scope="module")
def whole(release):
    root, _ = release
    return quiet(gls, quiet(read_nmf, root, product="persons"))


def same_as_whole(whole, est, levels=LEVELS, queries=QUERIES):
    """Estimates and standard errors equal to 1e-12 of the file's population.

    Rounding in the passes scales with the file's counts: the solve in
    memory itself meets the exact US total invariant only to about 1e-13 of it.
    """
    scale = 1.0 + whole.estimate("total", levels[0])["estimate"].sum()
    for level in levels:
        for q in queries:
            a, b = whole.estimate(q, level), est.estimate(q, level)
            assert list(a.columns) == list(b.columns)
            assert a["geocode"].tolist() == b["geocode"].tolist()
            for col in ("estimate", "std_error"):
                x, y = a[col].to_numpy(), b[col].to_numpy()
                assert np.abs(x - y).max() <= 1e-12 * scale, (level, q, col)


def test_a_state_solved_county_by_county_equals_the_solve_in_memory(release, whole):
    root, truth = release
    parts = NMFParts.open(root, product="persons")
    assert parts.part_level == "County" and parts.state_level == "State"
    assert parts.geography.widths == tuple(WIDTH[lev] for lev in LEVELS)
    est = quiet(gls, parts, queries=QUERIES)
    assert isinstance(est, PartsEstimate) and est.queries == ("total", "votingage")
    same_as_whole(whole, est)
    # the US total is the file's invariant, the State ones its sums
    us = est.estimate("total", "US")
    assert us["estimate"].iloc[0] == pytest.approx(truth["hists"]["US"].sum(), abs=1e-8)
    assert us["std_error"].iloc[0] == pytest.approx(0.0, abs=1e-6)


def file_rows(root, prefix: str) -> int:
    """Rows of the persons product from County down whose geocode starts with ``prefix``."""
    n = 0
    for level in LEVELS[LEVELS.index("County") :]:
        for path in (root / "US_Person_PL_PROD" / f"{level}.parquet").rglob("*.parquet"):
            codes = pq.read_table(path, columns=["geocode"]).column(0).to_pylist()
            n += sum(c.startswith(prefix) for c in codes)
    return n


def test_the_solve_holds_one_county_at_a_time(release, monkeypatch):
    root, truth = release
    steps, spooled = [], []
    chunks, row_group = _nmf_parts._chunks, _nmf_parts._row_group

    def counting_chunks(files, names, reader):
        out = chunks(files, names, reader)
        steps.append(np.concatenate([ch.geocode for ch in out]).astype(str))
        return out

    def counting_row_group(pfile, g, source, first):
        table = row_group(pfile, g, source, first)
        spooled.append(table.num_rows)
        return table

    monkeypatch.setattr(_nmf_parts, "_chunks", counting_chunks)
    monkeypatch.setattr(_nmf_parts, "_row_group", counting_row_group)
    quiet(gls, NMFParts.open(root, product="persons"), queries=QUERIES)
    counties = truth["units"]["County"]
    held = {code: file_rows(root, code) for code in counties}
    # the first step reads the levels above the counties whole (US, the State rows); then
    # each state its own and its counties' rows, and consecutive counties their subtrees'
    # (small ones together), never more rows than the largest county, in each pass
    w = WIDTH["County"]
    county_steps = [codes for codes in steps if codes[0][:w] in held]
    groups = [sorted({c[:w] for c in codes}) for codes in county_steps]
    assert [c for g in groups for c in g] == counties * 2  # in order, once per pass
    for group, codes in zip(groups, county_steps, strict=True):
        assert codes.size == sum(held[c] for c in group) <= max(held.values())
    state_steps = [codes for codes in steps[1:] if codes[0][:w] not in held]
    assert all(max(map(len, codes)) <= w for codes in state_steps)
    assert max(codes.size for codes in steps[1:]) <= max(held.values()) < file_rows(root, "") / 4
    # the state's files are split by county one row group at a time
    assert spooled and max(spooled) <= ROW_GROUP


def test_small_counties_are_solved_together_within_the_largest_ones_rows():
    assert _nmf_parts._groups([5, 1, 1, 3, 5, 2]) == [(0, 1), (1, 4), (4, 5), (5, 6)]
    assert _nmf_parts._groups([2, 2, 2]) == [(0, 1), (1, 2), (2, 3)]
    assert _nmf_parts._groups([4, 1, 1, 1, 1]) == [(0, 1), (1, 5)]
    assert _nmf_parts._groups([]) == []


def test_states_and_known_totals_are_read_as_read_nmf_reads_them(release):
    root, truth = release
    total = int(truth["hists"]["State"][0].sum())
    kwargs = dict(
        product="persons", states=["044"], invariants={"State": {"total": {"044": total}}}
    )
    whole = quiet(gls, quiet(read_nmf, root, **kwargs))
    parts = quiet(NMFParts.open, root, **kwargs)
    assert parts.geography.names == LEVELS[1:] and parts.state_level == "State"
    est = quiet(gls, parts, queries=QUERIES)
    same_as_whole(whole, est, LEVELS[1:])
    state = est.estimate("total", "State")
    assert state["estimate"].tolist() == pytest.approx([total], abs=1e-8)


def test_estimate_selects_units_and_refuses_what_was_not_kept(release):
    root, _ = release
    est = quiet(gls, NMFParts.open(root, product="persons"), queries=["votingage"])
    tracts = est.estimate("votingage", "Tract")
    pick = [tracts["geocode"].iloc[4], tracts["geocode"].iloc[0]]
    sel = est.estimate("votingage", "Tract", geocodes=pick, confidence_level=0.9)
    assert sel["geocode"].tolist() == [pick[1]] * 2 + [pick[0]] * 2
    assert sel["moe"].to_numpy() == pytest.approx(1.6448536269514722 * sel["std_error"])
    with pytest.raises(
        InvariantDPError, match=r"`geocodes` holds \['999'\], not units of level `Tract`"
    ):
        est.estimate("votingage", "Tract", geocodes=["999"])
    with pytest.raises(InvariantDPError, match=r"`query` \('total'\) was not kept.*votingage"):
        est.estimate("total", "Tract")
    with pytest.raises(InvariantDPError, match=r"`frame` \('spark'\) must be 'pandas' or 'dask'"):
        est.estimate("votingage", "Tract", frame="spark")


def test_bad_arguments_are_refused_by_name(release):
    root, truth = release
    parts = NMFParts.open(root, product="persons")
    with pytest.raises(InvariantDPError, match=r"`queries` \('total'\) must be a list"):
        gls(parts, queries="total")
    with pytest.raises(InvariantDPError, match=r"`queries` must name at least one query"):
        gls(parts, queries=[])
    nm = quiet(read_nmf, root, product="units")
    with pytest.raises(InvariantDPError, match=r"`queries` applies to a file solved in parts"):
        gls(nm, queries=["total"])
    block = truth["units"]["Block"][0]
    with pytest.raises(InvariantDPError, match=r"`invariants` at Block: in parts, .*US, State"):
        NMFParts.open(root, product="persons", invariants={"Block": {"total": {block: 1}}})
    with pytest.raises(InvariantDPError, match=r"`scheduler` \('spark'\) must be"):
        gls(parts, scheduler="spark")


def test_a_file_without_levels_below_the_states_is_refused(release, tmp_path):
    root, _ = release
    import shutil

    product = tmp_path / "US_Unit_PL_PROD"
    for level in ("US", "State"):
        shutil.copytree(root / "US_Unit_PL_PROD" / f"{level}.parquet", product / f"{level}.parquet")
    with pytest.raises(InvariantDPError, match=r"no level below it \(levels US, State\)"):
        NMFParts.open(product)


def test_the_units_product_in_parts_equals_the_tree_solve(release):
    root, _ = release
    whole = quiet(gls, quiet(read_nmf, root, product="units"))
    est = quiet(gls, NMFParts.open(root, product="units"), queries=["total", "detailed"])
    same_as_whole(whole, est, queries=["total", "detailed"])


def test_dask_workers_give_the_serial_results_and_frames(release):
    distributed = pytest.importorskip("distributed")
    dd = pytest.importorskip("dask.dataframe")
    root, _ = release
    parts = NMFParts.open(root, product="persons")
    serial = quiet(gls, parts, queries=QUERIES)
    with distributed.Client(
        processes=False, n_workers=2, threads_per_worker=1, dashboard_address=None
    ) as client:
        est = quiet(gls, parts, queries=QUERIES, scheduler="dask", client=client)
        for level in LEVELS:
            for q in QUERIES:
                a, b = serial.estimate(q, level), est.estimate(q, level)
                assert a.equals(b), (level, q)  # the same arithmetic: identical
        lazy = est.estimate("votingage", "Block", frame="dask")
        assert isinstance(lazy, dd.DataFrame) and lazy.npartitions == 2  # one per state
        got, want = lazy.compute(), serial.estimate("votingage", "Block")
        assert got["geocode"].tolist() == want["geocode"].tolist()
        for col in ("estimate", "std_error", "moe", "ci_lower", "ci_upper"):
            assert np.array_equal(got[col].to_numpy(), want[col].to_numpy())
        # back to the driver: each state's summary (z: 2,016 numbers, V: 4 blocks 16 x 16)
        summary = 8 * (2016 + 4 * 16 * 16)
        assert 2 * summary < est.transfer["from_workers"] < 2 * (summary + 2_000)
    assert serial.transfer == {"to_workers": 0, "from_workers": 0}


def test_a_row_outside_every_county_is_named_by_file_row_and_field(tmp_path):
    truth = write_release(tmp_path, np.random.default_rng(3), counties=2, tracts=1, blocks=2)
    path = next((tmp_path / "US_Person_PL_PROD" / "Block.parquet" / "DPQuery").rglob("*.parquet"))
    table = pq.read_table(path)
    codes = table.column("geocode").to_pylist()
    stray = "044999999" + codes[3][WIDTH["County"] :]
    codes[3] = stray
    pq.write_table(table.set_column(0, "geocode", [codes]), path)
    parts = NMFParts.open(tmp_path, product="persons")
    assert truth["units"]["County"] == ["044000001", "044000002"]
    with pytest.raises(
        InvariantDPError,
        match=rf"Block.parquet/DPQuery/State=044/part-00000-c000.snappy.parquet, row 3, field "
        rf"`geocode`: '{stray}' has no parent: '044999999' is not a unit of level County",
    ):
        quiet(gls, parts)


@pytest.mark.parametrize("size", [2, 3])
def test_counties_solved_together_give_the_same_estimates(release, whole, monkeypatch, size):
    root, _ = release

    def runs(rows):
        return [(c, min(c + size, len(rows))) for c in range(0, len(rows), size)]

    monkeypatch.setattr(_nmf_parts, "_groups", runs)
    same_as_whole(whole, quiet(gls, NMFParts.open(root, product="persons"), queries=QUERIES))


def test_dask_on_measurements_read_whole_points_to_the_parts(release):
    root, _ = release
    nm = quiet(read_nmf, root, product="persons")
    with pytest.raises(InvariantDPError, match=r"open the file with NMFParts.open\(folder\)"):
        gls(nm, scheduler="dask")


def test_every_distinct_note_of_the_states_is_announced_once(release):
    root, _ = release
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est = gls(NMFParts.open(root, product="persons"))
    said = [str(w.message) for w in caught if "from reading the states" in str(w.message)]
    assert len(est.notes) > 1 and said == [f"{n} (from reading the states)" for n in est.notes]
    assert all(re.search(r"inequality constraints .* kept but not used", n) for n in est.notes)


class Watched:
    """The ``warnings`` module seen by the solve, its filter-changing calls recorded."""

    def __init__(self, calls):
        self.calls = calls

    def __getattr__(self, name):
        real = getattr(warnings, name)
        if name in ("catch_warnings", "simplefilter", "filterwarnings", "resetwarnings"):
            self.calls.append(name)
        return real


def test_a_threaded_dask_solve_leaves_the_warnings_filters_alone(release, monkeypatch):
    pytest.importorskip("dask")
    root, _ = release
    parts = NMFParts.open(root, product="persons")
    serial = quiet(gls, parts, queries=QUERIES)
    calls = []
    monkeypatch.setattr(_nmf_parts, "warnings", Watched(calls))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")
        before = list(warnings.filters)
        est = gls(parts, queries=QUERIES, scheduler="dask")  # dask's threads, this process
        after = list(warnings.filters)
    assert after == before and calls == []
    said = [str(w.message) for w in caught if "from reading the states" in str(w.message)]
    assert said == [f"{n} (from reading the states)" for n in est.notes] and est.notes
    assert est.notes == serial.notes
    for q in QUERIES:
        assert serial.estimate(q, "Block").equals(est.estimate(q, "Block"))


def two_roots(tmp_path):
    """A file without a State level (roots 1 and 2, one file per level) written by to_nmf."""
    codes = ["1", "11", "12", "111", "121", "2", "21", "211"]
    dpq = pd.DataFrame(
        {
            "geocode": codes,
            "query_name": ["total_dpq"] * 3 + ["detailed_dpq"] * 2 + ["total_dpq"] * 2
            + ["detailed_dpq"],
            "value": [[10.0], [6.0], [3.0], [2.0, 3.0], [1.0, 3.0], [5.0], [4.0], [1.0, 2.0]],
            "variance": 2.0,
        }
    )  # fmt: skip
    geo = Geography({"A": 1, "B": 2, "C": 3})
    nm = NoisyMeasurements.from_frames(dpq, None, Schema({"sex": 2}), geo)
    nm.to_nmf(tmp_path / "nmf")
    return tmp_path / "nmf"


def test_roots_sharing_unpartitioned_files_are_split_by_root(tmp_path):
    folder = two_roots(tmp_path)
    whole = gls(read_nmf(folder))
    parts = NMFParts.open(folder)
    assert parts.state_level == "A" and parts.part_level == "B"
    est = gls(parts, queries=["total", "detailed"])
    for level in ("A", "B", "C"):
        for q in ("total", "detailed"):
            a, b = whole.estimate(q, level), est.estimate(q, level)
            assert a["geocode"].tolist() == b["geocode"].tolist()
            assert np.allclose(a["estimate"], b["estimate"], rtol=1e-12, atol=1e-12)
            assert np.allclose(a["std_error"], b["std_error"], rtol=1e-12, atol=1e-12)


def test_a_row_outside_the_counties_is_named_with_the_real_state_level(tmp_path):
    # "231" starts with root 2, whose only unit of level B is "21"
    folder = two_roots(tmp_path)
    path = folder / "C.parquet" / "DPQuery" / "part-00000.parquet"
    table = pq.read_table(path)
    codes = ["231" if c == "211" else c for c in table.column("geocode").to_pylist()]
    pq.write_table(table.set_column(0, "geocode", [codes]), path)
    parts = NMFParts.open(folder)
    with pytest.raises(
        InvariantDPError, match=r"'231' has no parent: '23' is not a unit of level B in A 2\."
    ):
        gls(parts)


@pytest.mark.parametrize("buffer", [1 << 16, 7])
def test_the_split_writes_a_county_s_rows_in_large_row_groups(release, whole, monkeypatch, buffer):
    # a county's rows from many row groups of a file are written as one row group when they
    # fit the buffer (not one per row group read); a small buffer changes no estimate
    root, _ = release
    monkeypatch.setattr(_nmf_parts, "_SPOOL_ROWS", buffer)
    groups = []
    chunks = _nmf_parts._chunks

    def spool_groups(files, names, reader):
        groups.extend(
            (pq.ParquetFile(f).metadata.num_row_groups, pq.ParquetFile(f).metadata.num_rows)
            for f, *_ in files
            if "invariantdp-parts-" in str(f)
        )
        return chunks(files, names, reader)

    monkeypatch.setattr(_nmf_parts, "_chunks", spool_groups)
    same_as_whole(whole, quiet(gls, NMFParts.open(root, product="persons"), queries=QUERIES))
    assert groups
    if buffer > 1000:
        assert all(g == 1 for g, _ in groups)
        assert max(n for _, n in groups) > ROW_GROUP  # rows of several row groups read
    else:
        assert max(g for g, _ in groups) > 1


def test_estimate_takes_the_shared_arguments_as_the_whole_file_s_estimate(release, whole):
    root, _ = release
    est = quiet(gls, NMFParts.open(root, product="persons"), queries=QUERIES)
    tracts = whole.estimate("total", "Tract")["geocode"]
    one, two = tracts.iloc[3], tracts.iloc[1]
    for geocodes in (one, [one, two]):
        a = whole.estimate("votingage", "Tract", 0.9, geocodes=geocodes, clip=True)
        b = est.estimate("votingage", "Tract", 0.9, geocodes=geocodes, clip=True)
        assert list(a.columns) == list(b.columns) and a["geocode"].tolist() == b["geocode"].tolist()
        assert np.allclose(a["ci_lower"], b["ci_lower"], rtol=1e-9)
        assert set(a.attrs) == set(b.attrs)
        assert b.attrs["interval"] == ["gaussian"] * len(b) == a.attrs["interval"]
        assert b.attrs["coverage"] == [0.9] * len(b)
    # every row's attrs across the states' pieces, in row order
    full = est.estimate("total", "Block")
    assert len(full.attrs["interval"]) == len(full.attrs["coverage"]) == len(full)
    for bad, kind, message in [
        ([], InvariantDPError, r"`geocodes` must name at least one unit"),
        ([one, one], InvariantDPError, rf"`geocodes` lists the unit '{one}' twice"),
        ([int(one)], TypeError, r"`geocodes` holds \d+ \(int\): a geocode is a string"),
    ]:
        with pytest.raises(kind, match=message):
            est.estimate("total", "Tract", geocodes=bad)
    with pytest.raises(TypeError, match=r"`query` must be a str, got NoneType"):
        est.estimate(None, "Tract")
    with pytest.raises(InvariantDPError, match=r"`groups` is not available .* in parts"):
        est.estimate("total", "Tract", 0.95, {one: "a"})
    with pytest.raises(InvariantDPError, match=r"`cells` is not available .* in parts"):
        est.estimate("votingage", "Tract", cells={"adults": {"votingage": ["18 and over"]}})


def test_invariants_are_checked_before_a_file_is_opened(release, monkeypatch):
    root, truth = release
    real = _nmf_parts.pyarrow_modules

    class Closed:
        def __getattr__(self, name):
            if name == "ParquetFile":
                raise AssertionError("a file was opened")
            return getattr(real()[1], name)

    monkeypatch.setattr(_nmf_parts, "pyarrow_modules", lambda: (real()[0], Closed()))
    block = truth["units"]["Block"][0]
    for bad, message in [
        (5, r"`invariants` \(5\) must map levels to"),
        ({"State": 5}, r"`invariants\['State'\]` \(5\) must map queries"),
        ({"State": {"total": 5}}, r"`invariants\['State'\]\['total'\]` must map geocodes"),
        ({"Nowhere": {"total": {"044": 1}}}, r"`invariants` at Nowhere: not a level read"),
    ]:
        with pytest.raises(InvariantDPError, match=message):
            NMFParts.open(root, product="persons", invariants=bad)
    monkeypatch.setattr(_nmf_parts, "pyarrow_modules", real)
    geo = NMFParts.open(root, product="persons").geography
    monkeypatch.setattr(_nmf_parts, "pyarrow_modules", lambda: (real()[0], Closed()))
    with pytest.raises(InvariantDPError, match=r"`invariants` at Block: in parts, .*US, State"):
        NMFParts.open(
            root, geography=geo, product="persons", invariants={"Block": {"total": {block: 1}}}
        )


def test_a_top_the_dense_factor_path_refuses_is_refused_before_any_state(release, monkeypatch):
    root, _ = release
    started = []
    monkeypatch.setattr(_nmf_parts, "block_path_refusal", lambda problem: "a reason")
    monkeypatch.setattr(_nmf_parts, "_state_up", lambda *args: started.append(args))
    with pytest.raises(InvariantDPError, match=r"cannot be solved in parts: a reason\."):
        quiet(gls, NMFParts.open(root, product="persons"))
    assert started == []


def test_gls_checks_the_scheduler_once(release, monkeypatch):
    from invariantdp.census import _estimate

    root, _ = release
    calls = []
    check = _estimate.check_scheduler

    def counting(*args):
        calls.append(args)
        return check(*args)

    # wherever the solve in parts would check it
    for module in (_estimate, _nmf_parts):
        monkeypatch.setattr(module, "check_scheduler", counting, raising=False)
    quiet(gls, NMFParts.open(root, product="persons"))
    assert calls == [("serial", None)]

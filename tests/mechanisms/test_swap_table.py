"""The released table of a swap with many levels (issue 21): levels and cells as arrays.

A census swap lists 200,000 block levels and millions of cells; the release
holds them as :class:`LabelArray` (2-D for the levels) and lists them only
when its document is written.  These tests check the document against an
independent listing (pandas ``groupby`` keys), its round trip, the table
read back on a loaded release, and the pair coding of both key spaces.
"""

import json
import math

import numpy as np
import pandas as pd
import pytest

from invariantdp import InvariantDPError, Release
from invariantdp._validation import LabelArray
from invariantdp.mechanisms import permutation_swap, swapping_invariants, table_on_release_cells
from invariantdp.mechanisms._swap_table import Coding, _coder, _Triples, moved_records


def _json_label(v):
    """A label as JSON holds it: missing values null, infinities as text."""
    if isinstance(v, np.generic):
        v = v.item()
    if v is None or v is pd.NA or (isinstance(v, float) and math.isnan(v)):
        return None
    if isinstance(v, float) and math.isinf(v):
        return str(v)
    return v


def _group_keys(df, cols):
    """The levels of ``cols`` listed by pandas: sorted group keys, missing values a group."""
    if not cols:
        return [[]]
    keys = df.groupby(cols, sort=True, dropna=False).size().index
    keys = keys.tolist() if len(cols) > 1 else [(k,) for k in keys.tolist()]
    return [[_json_label(v) for v in key] for key in keys]


def _census(rng, n, blocks, sizes=7):
    return pd.DataFrame(
        {
            "block": rng.integers(0, blocks, n) * 7 + 11,  # codes far from 0..blocks
            "hh_size": rng.integers(1, sizes + 1, n),
            "tenure": rng.integers(0, 2, n),
        }
    )


def test_many_levels_round_trip(rng):
    # 5,000 block levels on ~30,000 cells (C has two entries per cell: a document
    # is read back while they are at most max(65536, cells), see the schema)
    df = _census(rng, 60_000, 5_000, sizes=3)
    out, rel = permutation_swap(df, swap="block", match="hh_size", swap_rate=0.05, rng=4)
    levels, cells = rel.metadata["levels"], rel.metadata["cells"]
    # in memory: arrays of numbers, not a Python object per level or cell
    for role in ("match", "swap", "hold"):
        assert isinstance(levels[role], LabelArray) and levels[role].array.dtype == np.int64
        assert isinstance(cells[role], LabelArray) and cells[role].array.dtype.kind == "i"
    assert levels["swap"].array.shape == (5_000, 1)
    doc = json.loads(rel.to_json())
    assert doc["metadata"]["levels"]["swap"] == _group_keys(df, ["block"])
    assert doc["metadata"]["levels"]["match"] == _group_keys(df, ["hh_size"])
    assert doc["metadata"]["levels"]["hold"] == _group_keys(df, ["tenure"])
    assert len(doc["metadata"]["cells"]["swap"]) == rel.value.size
    back = Release.from_json(rel.to_json())
    assert back == rel and back.metadata["levels"] == rel.metadata["levels"]
    # the table read back through either release's levels and cells
    for r in (rel, back):
        np.testing.assert_array_equal(table_on_release_cells(r, out), rel.value)
        r.invariants.check(table_on_release_cells(r, df))
    assert swapping_invariants(out, swap="block", match="hh_size").equals(
        swapping_invariants(df, swap="block", match="hh_size")
    )


def test_levels_of_every_kind_of_column_are_their_json_values(rng):
    n = 400
    v = rng.integers(0, 4, n)
    df = pd.DataFrame(
        {
            "county": pd.array([None if x == 0 else f"c{x}" for x in v], dtype="string"),
            "flag": v % 2 == 0,
            "score": np.where(v == 0, np.nan, np.where(v == 1, np.inf, v * 0.5)),
            "kind": pd.Categorical(np.array(["a", "b", "c"])[rng.integers(0, 3, n)]),
            "mixed": pd.Series([x if x % 2 else f"m{x}" for x in rng.integers(0, 4, n)]),
            "small": rng.integers(-3, 3, n).astype(np.int8),
        }
    )
    roles = {"swap": ["county", "small"], "match": ["kind", "flag"]}
    _, rel = permutation_swap(df, swap_rate=0.3, rng=1, **roles)
    doc = json.loads(rel.to_json())
    hold = [c for c in df.columns if c not in roles["swap"]]
    rest = [c for c in hold if c not in roles["match"]]
    assert doc["metadata"]["levels"]["swap"] == _group_keys(df, roles["swap"])
    assert doc["metadata"]["levels"]["match"] == _group_keys(df, roles["match"])
    assert doc["metadata"]["levels"]["hold"] == _group_keys(df, rest)
    back = Release.from_json(rel.to_json())
    assert back == rel
    np.testing.assert_array_equal(table_on_release_cells(back, df), table_on_release_cells(rel, df))


def test_levels_stand_for_their_rows(rng):
    df = pd.DataFrame({"c": ["x", "y", "y", "x"], "n": [1, 2, 2, 1], "h": [0, 1, 0, 1]})
    _, rel = permutation_swap(df, swap=["c", "n"], swap_rate=0.5, rng=0)
    swap = rel.metadata["levels"]["swap"]
    assert swap == [["x", 1], ["y", 2]] and swap != [["x", 1], ["y", 3]]
    assert swap[1] == ["y", 2] and len(swap) == 2 and list(swap) == [["x", 1], ["y", 2]]
    with pytest.raises(ValueError, match="read-only"):
        np.asarray(swap)[0, 0] = "z"
    with pytest.raises(TypeError, match="read-only"):
        rel.metadata["cells"]["swap"] = [0]


def test_a_level_outside_the_release_is_named(rng):
    df = _census(rng, 2_000, 50)
    _, rel = permutation_swap(df, swap="block", match="hh_size", swap_rate=0.1, rng=0)
    other = df.assign(block=df["block"].where(df.index != 5, 10**6))
    for r in (rel, Release.from_json(rel.to_json())):
        with pytest.raises(InvariantDPError, match=r"swap value \(1000000,\), which the release"):
            table_on_release_cells(r, other)
    # a tampered document: a level row of the wrong length covers nothing
    doc = json.loads(rel.to_json())
    doc["metadata"]["levels"]["match"][0] = [1, 2]
    with pytest.raises(InvariantDPError, match="match value .* which the release does not cover"):
        table_on_release_cells(Release.from_dict(doc), df)


@pytest.mark.parametrize("space", ["counted", "hashed"])
def test_triples_and_pairs_are_found_in_sorted_order(rng, space):
    n = 3_000
    sizes = (40, 10**6 if space == "hashed" else 50, 3)
    j, k, l = (rng.integers(0, s, n) for s in sizes)
    x = Coding(j, k.astype(np.int32), l.astype(np.int8), *sizes, None)
    keys = (j * sizes[1] + k) * sizes[2] + l
    uniq, counts = np.unique(keys, return_counts=True)
    for weights in (None, rng.integers(1, 5, n).astype(float)):  # weighted: aggregated rows
        triples = _Triples(x, weights)
        assert (triples.dense is None) == (space == "hashed" or weights is not None)
        if triples.dense is None:
            np.testing.assert_array_equal(triples.uniq, uniq)
            expect = np.bincount(np.unique(keys, return_inverse=True)[1], weights)
            np.testing.assert_array_equal(triples.counts, expect)
        else:
            np.testing.assert_array_equal(triples.dense.reshape(-1)[uniq], counts)
        jk, jl = triples.pairs()
        np.testing.assert_array_equal(jk, np.unique(j * sizes[1] + k))
        np.testing.assert_array_equal(jl, np.unique(j * sizes[2] + l))
    code = _coder(uniq, math.prod(sizes))
    np.testing.assert_array_equal(code(keys), np.searchsorted(uniq, keys))


def test_moved_records_are_where_the_source_differs(rng):
    src = np.arange(200_000)
    some = rng.choice(src.size, 9_000, replace=False)
    src[some] = rng.permutation(some)
    np.testing.assert_array_equal(moved_records(src), np.flatnonzero(src != np.arange(src.size)))
    assert moved_records(np.arange(5)).size == 0


def test_placing_the_moved_records_again_gives_the_table_of_all_records(rng):
    # the simulation path places only the moved records; the secure one every record
    from invariantdp.mechanisms._permutation import sources_global
    from invariantdp.mechanisms._swap_table import encode, swap_table

    df = _census(rng, 20_000, 300)
    roles = (["block"], ["hh_size"], ["tenure"])
    x = encode(df, roles)
    src = sources_global(x.j, x.n_match, 0.3, np.random.default_rng(5))
    moved = moved_records(src)
    fast = swap_table(x, moved=moved, new_k=x.k[src[moved]])
    full = swap_table(x, z=x._replace(k=x.k[src]))
    np.testing.assert_array_equal(fast.table, full.table)
    assert fast.table.dtype == full.table.dtype == np.int64
    assert fast.invariants == full.invariants and (fast.b, fast.n_records) == (
        full.b,
        full.n_records,
    )
    assert all(fast.cells[r] == full.cells[r] for r in ("match", "swap", "hold"))


def test_a_secure_swap_places_every_record_whatever_swaps(monkeypatch, rng):
    # the work after the secure draws must not depend on how many records swap
    import invariantdp.mechanisms._permutation_swap as swapping

    def refuse(src):
        raise AssertionError("the secure path must not single out the moved records")

    import invariantdp.mechanisms._swap_table as table

    monkeypatch.setattr(swapping, "moved_records", refuse)
    flags = []

    def first_positions(codes, size, *, read_all=False):
        flags.append(read_all)
        return first(codes, size, read_all=read_all)

    first = table.first_positions
    monkeypatch.setattr(table, "first_positions", first_positions)
    df = _census(rng, 400, 20)
    out, rel = permutation_swap(df, swap="block", match="hh_size", swap_rate=0.3, secure=True)
    assert flags == [True, True, True]  # every record read for the levels of each role
    assert swapping_invariants(out, swap="block", match="hh_size").equals(
        swapping_invariants(df, swap="block", match="hh_size")
    )
    np.testing.assert_array_equal(table_on_release_cells(rel, out), rel.value)

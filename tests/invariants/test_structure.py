"""Nested labels kept as codes (issue 21): three-level census hierarchies, no label copies.

``nested_totals`` finds the groups on one representative per finest label
when that label names its whole path, and otherwise on every cell; either
way the structure keeps the finest group of every cell, the group of every
level of each finest group and the labels of the finest groups.  These tests
compare both paths with a direct construction (paths found by ``np.unique``
on the rows of the label table), check that nothing a user passes is kept
(or copied per cell), and that releases on these invariants are unchanged.
"""

import json
import pickle

import numpy as np
import pytest

from invariantdp import Release
from invariantdp._validation import LabelArray
from invariantdp.invariants import Invariants, nested_totals, totals
from invariantdp.invariants._structure import GroupMatrix, group_sums
from invariantdp.mechanisms import projected_gaussian


def _census(rng, n, *, names_path=True, shuffle=True):
    """state > county > tract labels of n cells; tract codes unique (GEOIDs) or reused."""
    state = rng.integers(0, 5, n)
    county = state * 100 + rng.integers(0, 7, n)
    local = rng.integers(0, 9, n)
    # a GEOID names its county and state; a local tract number repeats under every county
    tract = county * 1000 + local if names_path else local
    if shuffle:  # finest labels in another order than their paths
        tract = np.where(tract % 2 == 0, -tract, tract)
    return [state, county, tract]


def _direct(levels):
    """The groups of every level as np.unique finds them: (codes per level, sizes, names)."""
    table = np.column_stack([np.unique(lev, return_inverse=True)[1] for lev in levels])
    codes, sizes, names, parent = [], [], [], None
    for j in range(len(levels)):
        paths, code = np.unique(table[:, : j + 1], axis=0, return_inverse=True)
        code = code.ravel()
        own = np.unique(levels[j])[paths[:, -1]]
        if j == 0:
            names += [f"level[0][{u}]" for u in own.tolist()]
        else:
            first = np.zeros(len(paths), dtype=np.int64)
            first[code] = parent
            names += [f"level[{j}][{p}/{u}]" for p, u in zip(first, own.tolist(), strict=True)]
        codes.append(code)
        sizes.append(len(paths))
        parent = code
    return codes, sizes, names


@pytest.mark.parametrize("names_path", [True, False], ids=["geoid", "reused"])
@pytest.mark.parametrize("shuffle", [False, True], ids=["path-order", "other-order"])
def test_three_level_groups_are_the_paths(rng, names_path, shuffle):
    levels = _census(rng, 2000, names_path=names_path, shuffle=shuffle)
    inv = nested_totals(levels)
    codes, sizes, names = _direct(levels)
    assert inv.names == tuple(names)
    got, g = inv.group_codes()
    np.testing.assert_array_equal(got, codes[-1])
    assert g == sizes[-1] == inv.rank and not got.flags.writeable
    # the matrix, built on demand from the codes and maps, is the stacked indicator
    rows = np.concatenate([c + sum(sizes[:j]) for j, c in enumerate(codes)])
    expect = np.zeros((sum(sizes), 2000))
    expect[rows, np.tile(np.arange(2000), 3)] = 1.0
    np.testing.assert_array_equal(inv.matrix.toarray(), expect)
    x = rng.integers(0, 50, 2000).astype(float)
    np.testing.assert_allclose(inv.apply(x), expect @ x, rtol=1e-14)
    # the structure's per-cell codes are the np.unique codes of every level
    for mine, theirs in zip(inv.structure["codes"], codes, strict=True):
        np.testing.assert_array_equal(np.asarray(mine), theirs)


def test_the_document_lists_the_labels_as_given(rng):
    levels = _census(rng, 500)
    levels[0] = levels[0].astype(np.int32)  # an integer dtype of its own survives
    inv = nested_totals(levels)
    doc = inv.to_dict()
    for lev, listed in zip(levels, doc["structure"]["levels"], strict=True):
        assert listed == lev.tolist() and all(type(v) is int for v in listed[:5])
    assert inv.structure["levels"][0].dtype == np.int32
    back = Invariants.from_dict(json.loads(json.dumps(doc)))
    assert back == inv and back.names == inv.names


def test_string_labels_three_levels(rng):
    state = np.array(["CA", "NY", "TX"])[rng.integers(0, 3, 300)]
    county = np.char.add(state, np.array(["001", "003"])[rng.integers(0, 2, 300)])
    tract = np.char.add(county, np.array(["-a", "-b", "-c"])[rng.integers(0, 3, 300)])
    inv = nested_totals([state, county, tract])
    _, sizes, names = _direct([state, county, tract])
    assert inv.names == tuple(names) and inv.rank == sizes[-1]
    assert inv.to_dict()["structure"]["levels"][2] == tract.tolist()


def test_no_label_array_is_kept_or_copied_per_cell(rng):
    levels = _census(rng, 1000)
    expect = [lev.tolist() for lev in levels]
    inv = nested_totals(levels)
    # the labels are the group labels and the finest codes, formed only when read
    groups = inv.structure.matrix_ref
    assert isinstance(groups, GroupMatrix)
    for lab in inv.structure["levels"]:
        assert isinstance(lab, LabelArray) and lab._array is None
        assert lab._codes.base is groups.codes or lab._codes is groups.codes
        assert lab._values.size == inv.rank  # one label per finest group, not per cell
    # a release and its document cache form none of them
    r = projected_gaussian(rng.normal(size=1000) + 50, inv, mu=1.0, rng=0)
    assert all(lab._array is None for lab in inv.structure["levels"])
    for lev in levels:  # the caller's arrays, changed afterwards
        lev[:] = -1
    assert inv.to_dict()["structure"]["levels"] == expect
    assert r.to_dict()["noise"]["params"]["invariants"]["structure"]["levels"] == expect


def test_projected_gaussian_on_three_levels_adds_the_centred_draws(rng):
    levels = _census(rng, 3000, shuffle=True)
    inv = nested_totals(levels)
    x = rng.integers(0, 100, 3000).astype(float)
    r = projected_gaussian(x, inv, mu=0.5, rng=7)
    # the same draws, centred within the finest groups by an independent sum
    e = np.random.default_rng(7).standard_normal(3000) * 2.0
    codes, _, _ = _direct(levels)
    g = codes[-1]
    means = np.bincount(g, weights=e) / np.bincount(g)
    np.testing.assert_allclose(r.value, x + (e - means[g]), rtol=0, atol=1e-12)
    r.invariants.check(r.value)
    np.testing.assert_allclose(r.invariants.values, inv.apply(x))
    back = Release.from_json(r.to_json())
    assert back == r
    assert pickle.loads(pickle.dumps(r)) == r


def test_project_writes_into_out(rng):
    inv = nested_totals(_census(rng, 400))
    v = rng.normal(size=400)
    expect = inv.project(v)
    out = np.empty(400)
    assert inv.project(v, out=out) is out
    np.testing.assert_array_equal(out, expect)
    w = v.copy()
    inv.project(w, out=w)  # in place
    np.testing.assert_array_equal(w, expect)
    many = rng.normal(size=(3, 400))
    dest = np.empty_like(many)
    inv.project(many, out=dest)
    np.testing.assert_array_equal(dest, inv.project(many))
    general = Invariants(np.ones((1, 4)))
    dest = np.empty(4)
    general.project(np.arange(4.0), out=dest)
    np.testing.assert_allclose(dest, np.arange(4.0) - 1.5)
    with pytest.raises(ValueError, match=r"`out` must be a float array of shape \(400,\)"):
        inv.project(v, out=np.empty(399))
    frozen = np.empty(400)
    frozen.setflags(write=False)
    with pytest.raises(ValueError, match="`out` must be a writeable, C-contiguous array"):
        inv.project(v, out=frozen)


def test_group_sums_are_bincount_to_the_bit(rng):
    codes = rng.integers(0, 97, 20_000)
    codes.setflags(write=False)
    w = rng.standard_normal(20_000) * 1e6
    np.testing.assert_array_equal(group_sums(codes, 97, w), np.bincount(codes, w, 97))
    np.testing.assert_array_equal(group_sums(codes, 97), np.bincount(codes, minlength=97))


def test_groups_pickled_with_codes_per_level_still_load():
    # the state a GroupMatrix had before it kept maps: the codes of every level
    inv = nested_totals([[0, 0, 1, 1], [5, 6, 7, 7], [1, 2, 3, 4]])
    level_codes = [np.asarray(c) for c in inv.structure["codes"]]
    old = object.__new__(GroupMatrix)
    old.__setstate__(
        {"codes": tuple(level_codes), "sizes": (2, 3, 4), "shape": (9, 4), "built": None}
    )
    assert old.same_groups(inv.structure.matrix_ref)
    np.testing.assert_array_equal(old.counts, [1.0, 1.0, 1.0, 1.0])


def test_totals_keep_codes_and_group_labels_only(rng):
    labels = rng.integers(10, 20, size=(30, 4))
    inv = totals(labels)
    lab = inv.structure["labels"]
    assert isinstance(lab, LabelArray) and lab._array is None and lab.shape == (30, 4)
    assert inv.to_dict()["structure"]["labels"] == labels.tolist()
    counts = np.unique(labels, return_counts=True)[1]
    groups = np.unique(labels, return_inverse=True)[1].ravel()
    np.testing.assert_allclose(inv.projector_diagonal(), 1.0 - 1.0 / counts[groups])
    kept = labels.tolist()
    labels[:] = 0  # the caller's array, changed afterwards
    assert inv.to_dict()["structure"]["labels"] == kept

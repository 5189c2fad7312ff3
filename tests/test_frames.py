"""Microdata frame checks and codes (invariantdp._frames), shared by swapping and its accounting."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from invariantdp._frames import as_columns, check_columns, check_frame, factorize, group_codes


@st.composite
def frames(draw):
    n = draw(st.integers(1, 40))
    n_cols = draw(st.integers(1, 4))
    data = {}
    for i in range(n_cols):
        kind = draw(st.sampled_from(["int", "str", "float_nan"]))
        values = draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))
        if kind == "str":
            data[f"c{i}"] = [f"v{v}" for v in values]
        elif kind == "float_nan":
            data[f"c{i}"] = [np.nan if v == 0 else float(v) for v in values]
        else:
            data[f"c{i}"] = values
    return pd.DataFrame(data)


@given(df=frames(), k=st.integers(0, 4))
def test_group_codes_are_the_sorted_groups_with_missing_values_as_a_group(df, k):
    cols = list(df.columns[:k])
    codes, size = group_codes(df, cols)
    assert codes.dtype == np.int64 and codes.shape == (len(df),)
    if not cols:
        assert size == 1 and not codes.any()
        return
    expected = df.groupby(cols, sort=True, dropna=False).ngroup().to_numpy()
    np.testing.assert_array_equal(codes, expected)
    assert size == len(np.unique(expected))


def test_check_frame_and_columns_name_the_problem():
    df = pd.DataFrame({"a": [1, 2], "b": [3, 4]})
    assert check_frame(df) == "pandas"
    with pytest.raises(TypeError, match="`data` must be a pandas or Dask DataFrame, got dict"):
        check_frame({"a": [1]})
    with pytest.raises(ValueError, match="`data` must have at least one column"):
        check_frame(pd.DataFrame(index=[0, 1]))
    with pytest.raises(ValueError, match="`data` has the column 'a' more than once"):
        check_frame(pd.DataFrame([[1, 2]], columns=["a", "a"]))
    with pytest.raises(ValueError, match="`data` must hold at least one record"):
        check_frame(df.iloc[:0])
    assert check_columns("match", ["b"], df) == ["b"]
    with pytest.raises(ValueError, match=r"`match` \(\['a', 'a'\]\) names a column more than once"):
        check_columns("match", ["a", "a"], df)
    with pytest.raises(ValueError, match=r"`swap` names unknown column\(s\) \['z'\]"):
        check_columns("swap", ["z"], df)


def test_as_columns():
    assert as_columns(None) == []
    assert as_columns("a") == ["a"]
    assert as_columns(("a", "b")) == ["a", "b"]
    assert as_columns(3) == [3]


@pytest.mark.parametrize(
    "values",
    [
        np.array([5, -3, 5, 0, -3, 7], dtype=np.int8),
        np.array([2**63 + 5, 2**63 + 1, 2**63 + 5], dtype=np.uint64),  # hashed: beyond int64
        np.array([10**12, 3, 10**12], dtype=np.int64),  # range too wide: hashed
        np.random.default_rng(0).integers(-50, 50, size=10_000),
    ],
)
def test_counting_and_hashing_give_the_same_codes(values):

    codes, size = factorize(values)
    want, uniques = pd.factorize(values, sort=True)
    assert codes.tolist() == want.tolist() and size == len(uniques)
    assert factorize(pd.Series(values))[0].tolist() == want.tolist()


@given(codes=st.lists(st.integers(0, 6), min_size=1, max_size=300))
def test_first_positions_are_the_first_record_of_each_code(codes):
    from invariantdp._frames import first_positions

    codes = np.unique(codes, return_inverse=True)[1].ravel()  # every code 0..size-1 occurs
    size = int(codes.max()) + 1
    expect = [codes.tolist().index(c) for c in range(size)]
    assert first_positions(codes, size).tolist() == expect


def test_first_positions_reads_only_as_far_as_the_last_new_code():
    from invariantdp._frames import CHUNK, first_positions

    codes = np.zeros(40 * CHUNK, dtype=np.int64)
    codes[3] = 1
    codes[-1] = 2  # seen only at the very end: every chunk is read
    assert first_positions(codes, 3).tolist() == [0, 3, codes.size - 1]
    codes[-1] = 0
    codes[CHUNK + 5] = 2  # in the second chunk
    assert first_positions(codes, 3).tolist() == [0, 3, CHUNK + 5]


def test_dense_codes_count_and_write_in_place(rng):
    from invariantdp._frames import dense_codes, remap

    keys = rng.integers(0, 50, 100_000) * 3
    uniq, codes, counts = np.unique(keys, return_inverse=True, return_counts=True)
    got, present, lookup, tally = dense_codes(keys.copy(), 150, counts=True)
    np.testing.assert_array_equal(got, codes)
    np.testing.assert_array_equal(present, uniq)
    np.testing.assert_array_equal(tally, counts)
    mine = keys.copy()
    out, _, _ = dense_codes(mine, 150, out=mine)
    assert out is mine
    np.testing.assert_array_equal(mine, codes)
    np.testing.assert_array_equal(remap(lookup, keys, np.empty_like(keys)), codes)


def test_factorize_leaves_the_column_untouched(rng):
    col = pd.Series(rng.integers(5, 9, 1000))  # shifted keys: codes written over them
    before = col.copy()
    codes, size = factorize(col)
    pd.testing.assert_series_equal(col, before)
    assert size == 4 and codes.tolist() == (before - 5).tolist()
    zero = pd.Series(rng.integers(0, 4, 1000))  # int64 from 0: the keys are the column
    codes, _ = factorize(zero)
    assert not np.shares_memory(codes, zero.to_numpy()) and codes.tolist() == zero.tolist()


@given(df=frames(), k=st.integers(0, 4))
def test_narrow_group_codes_are_the_same_codes_in_the_narrowest_type(df, k):
    from invariantdp._frames import narrowest

    cols = list(df.columns[:k])
    wide, size = group_codes(df, cols)
    codes, narrow_size = group_codes(df, cols, narrow=True)
    assert narrow_size == size and codes.dtype == narrowest(size)
    np.testing.assert_array_equal(codes, wide)


def test_narrowest_holds_every_code():
    from invariantdp._frames import narrowest

    assert [narrowest(s).itemsize for s in (1, 127, 128, 32767, 32768, 2**31 - 1, 2**31)] == [
        1,
        1,
        2,
        2,
        4,
        4,
        8,
    ]


def test_first_positions_can_read_every_record():
    from invariantdp._frames import CHUNK, first_positions

    codes = np.zeros(8 * CHUNK, dtype=np.int64)
    codes[1] = 1
    assert first_positions(codes, 2, read_all=True).tolist() == [0, 1]
    codes[-1] = 1  # a later record of a code already seen does not move its first one
    assert first_positions(codes, 2, read_all=True).tolist() == [0, 1]

"""Readable constructors of published invariants: grand_total and group_totals (issue 22)."""

import numpy as np
import pandas as pd
import pytest

from invariantdp import InvariantDPError
from invariantdp.invariants import grand_total, group_totals, totals

CELLS = pd.MultiIndex.from_product(
    [["Ada", "Bay", "Cole"], ["F", "M"], ["0-17", "18+"]], names=["county", "sex", "age"]
)


def test_grand_total_is_the_idiom_it_replaces():
    # what the user wrote by hand: totals(np.zeros(n, dtype=int)).with_values([T])
    hand = totals(np.zeros(12, dtype=int)).with_values([300])
    for cells in (12, (12,), pd.Series(np.ones(12), index=CELLS), CELLS, np.zeros(12)):
        assert grand_total(cells, 300) == hand
    table = pd.DataFrame(np.ones((2, 3)))
    assert grand_total(table).shape == (2, 3) and grand_total(table).values is None
    assert grand_total((2, 3)).of(np.arange(6).reshape(2, 3)).values.tolist() == [15.0]


def test_grand_total_refuses_what_is_not_cells():
    with pytest.raises(TypeError, match="`cells` must be a number of cells"):
        grand_total("12", 3)
    with pytest.raises(InvariantDPError, match=r"`value` \(nan\) must be a finite number"):
        grand_total(3, np.nan)


def test_group_totals_of_a_long_table_follow_first_appearance():
    s = pd.Series(np.arange(12), index=CELLS)
    inv = group_totals(s, "county", {"Cole": 38, "Ada": 6, "Bay": 22})
    assert inv.kind == "totals" and inv.values.tolist() == [6.0, 22.0, 38.0]
    assert inv.apply(s.to_numpy()).tolist() == s.groupby(level="county").sum().tolist()
    both = group_totals(s, ["sex", "county"])
    expected = s.groupby(level=["sex", "county"], sort=False).sum()
    assert both.of(s.to_numpy()).values.tolist() == expected.tolist()
    by_series = group_totals(s, ["sex", "county"], expected)
    assert by_series.values.tolist() == expected.tolist()
    in_order = group_totals(CELLS, "age", [30, 36])
    assert in_order.values.tolist() == [30.0, 36.0]


def test_group_totals_of_a_labelled_table_use_its_index_and_columns():
    table = pd.DataFrame(
        [[1, 2, 3], [4, 5, 6]],
        index=pd.Index(["F", "M"], name="sex"),
        columns=pd.Index(["0-17", "18-64", "65+"], name="age"),
    )
    rows = group_totals(table, "sex").of(table.to_numpy())
    cols = group_totals(table, "age").of(table.to_numpy())
    assert rows.shape == (2, 3) and rows.values.tolist() == [6.0, 15.0]
    assert cols.values.tolist() == [5.0, 7.0, 9.0]


@pytest.mark.parametrize(
    "by, values, error, match",
    [
        ("state", None, InvariantDPError, "must name a level"),
        ([], None, InvariantDPError, "at least one level"),
        ("county", {"Ada": 1, "Bay": 2}, InvariantDPError, "no total for the group 'Cole'"),
        ("county", {"Ada": 1, "Bay": 2, "Cole": 3, "Dee": 4}, InvariantDPError, "'Dee'"),
        ("county", [1, 2], InvariantDPError, "must hold 3 totals"),
    ],
)
def test_group_totals_errors(by, values, error, match):
    with pytest.raises(error, match=match):
        group_totals(pd.Series(np.arange(12), index=CELLS), by, values)
    with pytest.raises(TypeError, match="labelled table"):
        group_totals(np.arange(12), "county")

"""The GLS input classes (_gls/_problem.py): items of no unit, and rows of the wrong size."""

import numpy as np
import pytest

from invariantdp._gls import Measurement, Problem, Zeros, solve, solve_blocks
from invariantdp.exceptions import InvariantDPError


def test_an_item_of_no_unit_is_valid_and_changes_nothing():
    # a level where no unit lacks a type: the reader's zeros of that level are empty
    parents = [np.array([-1]), np.zeros(2, dtype=np.int64)]
    meas = [Measurement(1, (0, 1), np.arange(2), np.arange(12.0).reshape(2, 6), np.ones(2))]
    empty = Zeros(1, (0,), np.array([], dtype=np.int64), np.zeros((0, 3), dtype=bool))
    with_empty = Problem((3, 2), parents, meas, zeros=[empty])
    without = Problem((3, 2), parents, meas)
    assert with_empty.zeros[0].mask.shape == (0, 3)
    assert np.allclose(solve(with_empty).x[0], solve(without).x[0])
    assert np.allclose(solve_blocks(with_empty).histograms(1), solve(without).x[1])


def test_rows_that_do_not_split_into_units_are_refused_by_name():
    parents = [np.array([-1])]
    with pytest.raises(InvariantDPError, match="must have one row of 6 cells per unit; got"):
        Problem((3, 2), parents, [Measurement(0, (0, 1), np.array([0]), np.ones(5), [1.0])])
    with pytest.raises(InvariantDPError, match="must have one row of 3 cells per unit"):
        Problem((3, 2), parents, zeros=[Zeros(0, (0,), np.array([], int), np.ones((1, 3), bool))])

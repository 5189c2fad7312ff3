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


def test_integer_answers_are_kept_without_a_float_copy_and_solve_as_floats():
    # a release's answers are integers: the problem keeps the array it was given (the
    # largest of a state, no float copy) and both paths solve it as its float64 values
    parents = [np.array([-1]), np.zeros(2, dtype=np.int64)]
    ints = np.arange(12, dtype=np.int64).reshape(2, 6) * 7 - 20
    prob = Problem((3, 2), parents, [Measurement(1, (0, 1), np.arange(2), ints, np.ones(2))])
    kept = prob.measurements[0].values
    assert kept.dtype == np.int64 and np.shares_memory(kept, ints)
    floats = Problem(
        (3, 2), parents, [Measurement(1, (0, 1), np.arange(2), ints.astype(float), np.ones(2))]
    )
    assert np.array_equal(solve(prob).x[1], solve(floats).x[1])
    assert np.array_equal(solve_blocks(prob).histograms(1), solve_blocks(floats).histograms(1))


def test_unsigned_64_bit_answers_take_the_float_path_never_wrapping():
    parents = [np.array([-1])]
    big = np.array([[2**63 + 5, 3, 0, 1, 2, 4]], dtype=np.uint64)
    prob = Problem((3, 2), parents, [Measurement(0, (0, 1), np.array([0]), big, [1.0])])
    kept = prob.measurements[0].values
    assert kept.dtype == float and kept[0, 0] == float(2**63 + 5)

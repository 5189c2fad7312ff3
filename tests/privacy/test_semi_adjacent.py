import itertools

import numpy as np
import pytest

from invariantdp._validation import InvariantDPError
from invariantdp.privacy._semi_adjacent import (
    one_way_margins_semi_adjacent_parameter,
    semi_adjacent_parameter,
    semi_adjacent_upper_bound,
)


def one_way_margins(levels):
    """T(X): the level counts of every feature (Cho & Awan, Sec. 3.4)."""

    def T(X):
        return tuple(
            tuple(sum(1 for r in X if r[j] == lev) for lev in range(k))
            for j, k in enumerate(levels)
        )

    return T


def compositions(n, k):
    return [c for c in itertools.product(range(n + 1), repeat=k) if sum(c) == n]


def test_example_3_count_of_three_binary_records():
    count = sum
    assert semi_adjacent_parameter(count, 2, record_space=[0, 1], n=3) == 2
    assert semi_adjacent_parameter(count, 0, record_space=[0, 1], n=3) == 0


@pytest.mark.parametrize("n", [2, 3, 5])
def test_one_invariant_count_gives_two(n):
    for t in range(n + 1):
        exact = semi_adjacent_parameter(sum, t, record_space=[0, 1], n=n)
        assert exact == (2 if 0 < t < n else 0)
        assert one_way_margins_semi_adjacent_parameter([[t, n - t]]) == exact


def test_state_population_totals_give_two():
    # Section 6.1: records carry a state; the per-state population counts are invariant
    T = one_way_margins([3])
    states = [(s,) for s in range(3)]
    assert semi_adjacent_parameter(T, ((2, 1, 1),), record_space=states, n=4) == 2
    assert one_way_margins_semi_adjacent_parameter(np.array([2, 1, 1])) == 2


@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_two_by_two_closed_form_agrees_with_exact_search(n):
    T = one_way_margins([2, 2])
    records = list(itertools.product(range(2), range(2)))
    for r1 in range(n + 1):
        for c1 in range(n + 1):
            t = ((r1, n - r1), (c1, n - c1))
            exact = semi_adjacent_parameter(T, t, record_space=records, n=n)
            assert one_way_margins_semi_adjacent_parameter(t) == exact, t
            assert exact <= semi_adjacent_upper_bound(2)


def test_example_5_two_by_two_attains_three():
    T = one_way_margins([2, 2])
    records = list(itertools.product(range(2), range(2)))
    t = ((2, 1), (2, 1))  # a table with x22 = 0 and x11 >= 1 exists
    assert semi_adjacent_parameter(T, t, record_space=records, n=3) == 3
    # with margins (1, 1), (1, 1) every table is a permutation matrix: swapping suffices
    assert semi_adjacent_parameter(T, ((1, 1), (1, 1)), record_space=records, n=2) == 2


@pytest.mark.parametrize("rows, cols, n", [(2, 3, 4), (3, 2, 3)])
def test_r_by_c_closed_form_agrees_with_exact_search(rows, cols, n):
    T = one_way_margins([rows, cols])
    records = list(itertools.product(range(rows), range(cols)))
    for r in compositions(n, rows):
        for c in compositions(n, cols):
            exact = semi_adjacent_parameter(T, (r, c), record_space=records, n=n)
            assert one_way_margins_semi_adjacent_parameter([r, c]) == exact, (r, c)


def test_theorem_16_bound_for_three_features():
    T = one_way_margins([2, 2, 2])
    records = list(itertools.product(range(2), repeat=3))
    n = 4
    values = []
    for t in itertools.product(compositions(n, 2), repeat=3):
        if any(min(m) == 0 for m in t):
            continue  # only margins where every feature varies
        a = semi_adjacent_parameter(T, t, record_space=records, n=n)
        assert a <= semi_adjacent_upper_bound(3)
        values.append(a)
    # the bound p + 1 = 4 is attained: x = (0,0,0), the others (1,0,0), (0,1,0), (0,0,1)
    assert semi_adjacent_parameter(T, ((3, 1),) * 3, record_space=records, n=n) == 4
    assert 4 in values and min(values) == 3


def test_literal_inf_inf_reading_never_exceeds_two_for_counts():
    # Definition 13 as printed minimises over both data sets, so a swap of two records
    # always suffices; the paper's Example 5 value 3 needs the sup-over-X reading.
    T = one_way_margins([2, 2])
    records = list(itertools.product(range(2), range(2)))
    t = ((2, 1), (2, 1))
    assert semi_adjacent_parameter(T, t, record_space=records, n=3, form="inf-inf") == 2
    assert semi_adjacent_parameter(T, t, record_space=records, n=3, form="sup-inf") == 3


def test_custom_distance_and_non_exchangeable_invariant():
    def hamming(x, y):
        return sum(a != b for a, b in zip(x, y, strict=True))

    T = one_way_margins([2, 2])
    records = list(itertools.product(range(2), range(2)))
    t = ((2, 1), (2, 1))
    assert semi_adjacent_parameter(T, t, record_space=records, n=3, distance=hamming) == 3
    # invariant on the first record only: it can never change, the others are free
    first = lambda X: X[0]  # noqa: E731
    assert semi_adjacent_parameter(first, 1, record_space=[0, 1, 2], n=3) == 1
    # array-valued invariants compare by value
    arr = lambda X: np.bincount(X, minlength=2)  # noqa: E731
    assert semi_adjacent_parameter(arr, np.array([1, 2]), record_space=[0, 1], n=3) == 2


def test_closed_form_degenerate_and_three_feature_cases():
    assert one_way_margins_semi_adjacent_parameter([[5, 0], [0, 5]]) == 0
    assert one_way_margins_semi_adjacent_parameter([[5, 0], [2, 3]]) == 2
    # three features: Theorem 16's bound, never below the exact value
    bound = one_way_margins_semi_adjacent_parameter([[3, 1], [3, 1], [3, 1]])
    assert bound == 4


@pytest.mark.parametrize(
    "call, match",
    [
        (
            lambda: semi_adjacent_parameter(sum, 7, record_space=[0, 1], n=3),
            r"`t` \(7\) is not the invariant",
        ),
        (
            lambda: semi_adjacent_parameter(sum, 1, record_space=range(10), n=7),
            "`record_space` .* the exact search handles at most",
        ),
        (
            lambda: semi_adjacent_parameter(sum, 1, record_space=[0, 1], n=3, form="inf"),
            r"`form` \('inf'\) must be one of",
        ),
        (
            lambda: semi_adjacent_parameter(sum, 1, record_space=[0, 1], n=0),
            r"`n` \(0\) must be >= 1",
        ),
        (
            lambda: semi_adjacent_parameter(sum, 1, record_space=[0, 0, 1], n=2),
            "`record_space` must not repeat",
        ),
        (
            lambda: one_way_margins_semi_adjacent_parameter([[3, 1], [2, 1]]),
            "`margins` total",
        ),
        (
            lambda: one_way_margins_semi_adjacent_parameter([[3, -1]]),
            "`margins\\[0\\]` .* non-negative",
        ),
        (lambda: semi_adjacent_upper_bound(0), r"`p` \(0\) must be >= 1"),
    ],
)
def test_bad_input_raises_value_error(call, match):
    with pytest.raises(InvariantDPError, match=match):
        call()


def test_bad_types():
    with pytest.raises(TypeError, match="`invariant` must be callable"):
        semi_adjacent_parameter(3, 1, record_space=[0, 1], n=2)
    with pytest.raises(TypeError, match="`p` must be an integer"):
        semi_adjacent_upper_bound(2.0)

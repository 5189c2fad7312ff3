"""Accounting of the swapping Permutation Algorithm (Bailie, Gong & Meng, Theorem 5.6)."""

import itertools
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from invariantdp.privacy import (
    largest_stratum,
    min_swapping_epsilon,
    swap_rate_for_epsilon,
    swapping_epsilon,
)

TABLES = pd.read_csv(
    Path(__file__).resolve().parents[1] / "data" / "swapping_epsilon_tables.csv", comment="#"
)


@pytest.mark.parametrize(
    "row", list(TABLES.itertuples(index=False)), ids=lambda r: f"{r.table}-{r.b}"
)
def test_tables_5_2_and_6_3_to_two_decimals(row):
    assert round(swapping_epsilon(int(row.b), float(row.swap_rate)), 2) == pytest.approx(
        row.epsilon, abs=1e-9
    )


def test_closed_form_both_regimes():
    b, p = 100, 0.2
    assert swapping_epsilon(b, p) == pytest.approx(math.log(101) - math.log(0.25))
    # p > 1/2: the max of ln o and ln(b+1) - ln o
    assert swapping_epsilon(b, 0.6) == pytest.approx(math.log(101) - math.log(1.5))
    assert swapping_epsilon(b, 0.99) == pytest.approx(math.log(99.0))
    assert swapping_epsilon(0, 0.3) == 0.0


def test_vectorised_matches_scalar():
    b = np.array([0, 2, 10, 10**6])
    p = np.array([0.3, 0.5, 0.7, 0.999])
    got = swapping_epsilon(b, p)
    assert got.shape == (4,)
    np.testing.assert_allclose(
        got, [swapping_epsilon(int(x), float(y)) for x, y in zip(b, p, strict=True)]
    )


def test_figure_2_1_numbers():
    # b = 10**6: smallest epsilon 6.91 at p = 99.9% (text of Section 2)
    m = min_swapping_epsilon(10**6)
    assert round(m.epsilon, 2) == 6.91 and round(m.swap_rate, 3) == 0.999
    # b = 10, epsilon = 3: the high rate 95.2% agrees; the low rate follows Theorem 5.6
    # (35.4%; the text's 33.2% and epsilon_b = 1.15 use ln b for ln(b + 1))
    low, high = swap_rate_for_epsilon(3.0, 10)
    assert round(high, 3) == 0.953 and round(low, 3) == 0.354
    assert round(math.log(10) / 2, 2) == 1.15  # the text's value, for the record


@pytest.mark.parametrize("b", [2, 10, 264_331, 13_680_081])
def test_min_epsilon_is_the_minimum(b):
    m = min_swapping_epsilon(b)
    p = np.linspace(1e-4, 1 - 1e-4, 20001)
    eps = swapping_epsilon(np.full(p.shape, b), p)
    assert eps.min() >= m.epsilon - 1e-12
    assert swapping_epsilon(b, m.swap_rate) == pytest.approx(m.epsilon, rel=1e-12)
    assert swap_rate_for_epsilon(m.epsilon, b) == pytest.approx((m.swap_rate,), rel=1e-9)


@pytest.mark.parametrize("b", [2, 10, 1000, 264_331, 13_680_081])
@pytest.mark.parametrize("extra", [1e-6, 0.1, 1.0, 3.0, 8.0])
def test_swap_rate_for_epsilon_inverts_both_branches(b, extra):
    eps = min_swapping_epsilon(b).epsilon + extra
    rates = swap_rate_for_epsilon(eps, b)
    assert len(rates) == 2 and rates[0] < rates[1]
    low, high = rates
    p_b = min_swapping_epsilon(b).swap_rate
    assert low < p_b < high
    for p in rates:
        assert swapping_epsilon(b, p) == pytest.approx(eps, rel=1e-10)
    # the branch through p <= 1/2 is reached when epsilon >= ln(b + 1)
    assert (low <= 0.5) == (eps >= math.log1p(b))


def test_swap_rate_for_epsilon_round_trip_from_rates():
    for b in (5, 500, 50_000):
        for p in (0.01, 0.05, 0.3, 0.5, 0.7, 0.95, 0.999):
            eps = swapping_epsilon(b, p)
            rates = swap_rate_for_epsilon(eps, b)
            assert any(abs(r - p) < 1e-9 for r in rates)


def test_unattainable_epsilon_has_no_rate():
    assert swap_rate_for_epsilon(1.0, 10) == ()


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: swapping_epsilon(10, 1.5), r"`swap_rate` \(1.5\) must be in \(0, 1\)"),
        (lambda: swapping_epsilon(10, 0.0), r"`swap_rate` \(0.0\) must be in \(0, 1\)"),
        (lambda: swapping_epsilon(10, 1.0), r"`swap_rate` \(1.0\) must be in \(0, 1\)"),
        (lambda: swapping_epsilon(-3, 0.5), r"`b` \(-3\) must be >= 0"),
        (lambda: swapping_epsilon(1, 0.5), r"`b` \(1\) must be 0 or >= 2"),
        (lambda: swapping_epsilon(2.5, 0.5), r"`b` \(2.5\) must be a whole number"),
        (lambda: swapping_epsilon([2, 3], [0.5, 2.0]), r"`swap_rate` \(2.0\)"),
        (lambda: swap_rate_for_epsilon(-1.0, 10), r"`epsilon` \(-1.0\) must be > 0"),
        (lambda: swap_rate_for_epsilon(2.0, 0), r"`b` \(0\) must be >= 2"),
        (lambda: min_swapping_epsilon(1), r"`b` \(1\)"),
    ],
)
def test_bad_arguments(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_largest_stratum_ignores_strata_of_identical_records():
    df = pd.DataFrame(
        {
            "size": [1, 1, 1, 2, 2, 2, 2, 3],
            "county": ["a", "b", "a", "c", "c", "c", "c", "d"],
        }
    )
    assert largest_stratum(df, "size") == 3
    assert largest_stratum(df, ["size"]) == 3
    assert largest_stratum(df) == 8
    assert largest_stratum(df[df["size"] == 2], "size") == 0


def test_largest_stratum_cross_classifies_and_counts_missing_values():
    df = pd.DataFrame(
        {"s": ["x", "x", "y", "y", "y"], "h": [1, 1, 1, np.nan, np.nan], "k": [0, 1, 0, 0, 1]}
    )
    assert largest_stratum(df, ["s", "h"]) == 2
    assert largest_stratum(df, ["s"]) == 3


def test_largest_stratum_dask_equals_pandas(rng):
    dd = pytest.importorskip("dask.dataframe")
    import dask

    df = pd.DataFrame(
        {"s": rng.integers(0, 4, 500), "k": rng.integers(0, 3, 500), "l": rng.integers(0, 2, 500)}
    )
    with dask.config.set(scheduler="synchronous"):
        assert largest_stratum(dd.from_pandas(df, npartitions=3), "s") == largest_stratum(df, "s")


def test_largest_stratum_bad_input():
    df = pd.DataFrame({"a": [1, 2]})
    with pytest.raises(ValueError, match="`match` names unknown column"):
        largest_stratum(df, "zz")
    with pytest.raises(ValueError, match="`data` must hold at least one record"):
        largest_stratum(df.iloc[:0], "a")


# ---------------------------------------------------------------------------
# Theorem 5.6 against the exact output law of Algorithm 5.1 on small data
# ---------------------------------------------------------------------------


def _derangement_count(m):
    return round(math.factorial(m) * sum((-1) ** i / math.factorial(i) for i in range(m + 1)))


def _output_law(records, p):
    """Exact law of the swapped multiset of (k, l) for one stratum (Algorithm 5.1)."""
    n = len(records)
    p_one = n * p * (1 - p) ** (n - 1)
    law = {}
    for perm in itertools.permutations(range(n)):
        moved = sum(perm[i] != i for i in range(n))
        if moved == 1:
            continue
        prob = p**moved * (1 - p) ** (n - moved) / ((1 - p_one) * _derangement_count(moved))
        out = tuple(sorted((records[perm[i]][0], records[i][1]) for i in range(n)))
        law[out] = law.get(out, 0.0) + prob
    return law


def _hamming(x, y):
    # d_HamS between multisets of records of the same size
    from collections import Counter

    return sum((Counter(x) - Counter(y)).values())


@pytest.mark.parametrize("p", [0.1, 0.3, 0.5, 0.7, 0.9])
def test_theorem_5_6_bounds_the_exact_privacy_loss(p):
    # one stratum of n = 4 records; every data set with the same c_Swap margins
    base = [(0, 0), (0, 1), (1, 0), (1, 1)]
    n = len(base)
    universe = set()
    for perm in itertools.permutations(range(n)):
        universe.add(tuple(sorted((base[perm[i]][0], base[i][1]) for i in range(n))))
    universe = sorted(universe)
    assert len(universe) > 1
    laws = {x: _output_law(list(x), p) for x in universe}
    eps = swapping_epsilon(n, p)
    worst = 0.0
    for x, y in itertools.combinations(universe, 2):
        d = _hamming(x, y)
        for z in set(laws[x]) | set(laws[y]):
            ratio = abs(math.log(laws[x][z] / laws[y][z]))
            worst = max(worst, ratio / d)
    assert worst <= eps + 1e-12
    assert abs(sum(laws[universe[0]].values()) - 1.0) < 1e-12

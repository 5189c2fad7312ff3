"""Synthetic Massachusetts 1940 households (swapping paper, Table 5.1)."""

import pandas as pd
import pytest

from invariantdp import datasets
from invariantdp.privacy import largest_stratum, swapping_epsilon
from invariantdp.synthetic import (
    MASSACHUSETTS_1940_HOUSEHOLD_SIZES,
    massachusetts_1940_households,
)


@pytest.fixture(scope="module")
def households():
    return massachusetts_1940_households(rng=2024)


def test_table_5_1_reproduced_exactly(households):
    table = datasets.massachusetts_1940_ownership()
    got = pd.crosstab(households["county"], households["tenure"])
    assert got["owned"].tolist() == table["owned"].tolist()
    assert got["rented"].tolist() == table["rented"].tolist()
    assert households.groupby("county", observed=True).size().tolist() == table["total"].tolist()
    assert (households["tenure"] == "owned").sum() == 435_805
    assert (households["tenure"] == "rented").sum() == 708_619


def test_household_sizes_and_b(households):
    sizes = households.groupby("size").size().to_dict()
    assert sizes == MASSACHUSETTS_1940_HOUSEHOLD_SIZES
    b = largest_stratum(households, ["state", "size"])
    assert b == 264_331
    assert round(swapping_epsilon(b, 0.5), 2) == 12.48


def test_seeded_and_random(households):
    again = massachusetts_1940_households(rng=2024)
    for col in households.columns:
        assert again[col].dtype == households[col].dtype
        a, b = households[col].array, again[col].array
        codes = (lambda x: x.codes) if isinstance(a, pd.Categorical) else (lambda x: x)
        assert (codes(a) == codes(b)).all()
    other = massachusetts_1940_households(rng=1)
    assert not other["size"].equals(households["size"])


def test_swapped_table_5_1_keeps_margins():
    left = datasets.massachusetts_1940_ownership()
    right = datasets.massachusetts_1940_ownership(swapped=True)
    assert left["total"].tolist() == right["total"].tolist()
    assert left[["owned", "rented"]].sum().tolist() == right[["owned", "rented"]].sum().tolist()


def test_bad_household_sizes():
    with pytest.raises(ValueError, match="`household_sizes` counts sum to 10"):
        massachusetts_1940_households(household_sizes={1: 10}, rng=0)
    with pytest.raises(ValueError, match="`household_sizes` keys"):
        massachusetts_1940_households(household_sizes={0: 1_144_424}, rng=0)

"""Synthetic microdata consistent with published tables, for examples and tests.

:func:`massachusetts_1940_households` builds one record per dwelling that
reproduces Table 5.1 of Bailie, Gong & Meng exactly (county totals, state
ownership totals, and the county x ownership interior), with an illustrative
household size attached so that the swapping scheme of their Section 5.3
(swap the county, match on household size) can be run on it.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ._rng import as_generator
from ._validation import InvariantDPError, check_counts
from .datasets import massachusetts_1940_ownership

__all__ = ["MASSACHUSETTS_1940_HOUSEHOLD_SIZES", "massachusetts_1940_households"]

#: Illustrative numbers of Massachusetts households by size (8 = eight or
#: more persons) summing to the 1,144,424 dwellings of Table 5.1.  Only the
#: two-person count, 264,331, is published (Table 5.2: the largest stratum
#: ``b`` of household size x state); the others are not census figures.
MASSACHUSETTS_1940_HOUSEHOLD_SIZES: dict[int, int] = {
    1: 110_000,
    2: 264_331,
    3: 250_000,
    4: 210_000,
    5: 135_000,
    6: 76_000,
    7: 45_000,
    8: 54_093,
}


def massachusetts_1940_households(*, household_sizes=None, rng=None) -> pd.DataFrame:
    """Synthetic dwelling records of Massachusetts, 1940, matching Table 5.1.

    One row per dwelling with columns ``state`` (``"MA"``), ``county``
    (categorical, the 14 counties), ``size`` (persons in the household) and
    ``tenure`` (categorical ``"owned"``/``"rented"``).  The county x tenure
    counts equal the left half of Table 5.1 exactly, hence so do the county
    totals and the state totals of owned and rented dwellings.  Household
    sizes are a uniformly random assignment of the fixed size counts
    ``household_sizes`` to the dwellings (so they are exact too); rows are in
    random order.

    Parameters
    ----------
    household_sizes : dict of int to int, optional
        Number of households of each size, summing to 1,144,424; default
        :data:`MASSACHUSETTS_1940_HOUSEHOLD_SIZES` (illustrative except the
        published 264,331 two-person households).
    rng : None, int, SeedSequence or numpy.random.Generator
        Source of randomness.

    Returns
    -------
    pandas.DataFrame
        1,144,424 rows.

    References
    ----------
    Bailie, Gong & Meng, Section 5.3, Tables 5.1 and 5.2.

    Examples
    --------
    >>> from invariantdp.synthetic import massachusetts_1940_households
    >>> hh = massachusetts_1940_households(rng=1)
    >>> len(hh), int((hh["tenure"] == "owned").sum())
    (1144424, 435805)
    >>> int(hh.groupby("size").size().max())
    264331
    """
    table = massachusetts_1940_ownership()
    total = int(table["total"].sum())
    sizes = dict(MASSACHUSETTS_1940_HOUSEHOLD_SIZES if household_sizes is None else household_sizes)
    if not sizes:
        raise InvariantDPError("`household_sizes` must not be empty.")
    labels = np.array(list(sizes), dtype=np.int64)
    if np.any(labels < 1):
        raise InvariantDPError(f"`household_sizes` keys ({labels.tolist()}) must be >= 1.")
    counts = check_counts("household_sizes", list(sizes.values()))
    if counts.sum() != total:
        raise InvariantDPError(
            f"`household_sizes` counts sum to {int(counts.sum())}; they must sum to the "
            f"{total} dwellings of Table 5.1."
        )
    gen = as_generator(rng)
    cells = table[["owned", "rented"]].to_numpy()
    county_code = np.repeat(np.repeat(np.arange(len(table)), 2), cells.ravel())
    tenure_code = np.repeat(np.tile(np.arange(2), len(table)), cells.ravel())
    order = gen.permutation(total)
    size = gen.permutation(np.repeat(labels, counts))
    return pd.DataFrame(
        {
            "state": pd.Categorical(np.full(total, "MA")),
            "county": pd.Categorical.from_codes(county_code[order], categories=table.index),
            "size": size.astype(np.int8) if labels.max() < 128 else size,
            "tenure": pd.Categorical.from_codes(tenure_code[order], categories=["owned", "rented"]),
        }
    )

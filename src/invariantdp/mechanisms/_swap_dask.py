"""The Permutation Algorithm on a Dask DataFrame: stratum by stratum, lazily.

:func:`~invariantdp.mechanisms.permutation_swap` with a Dask DataFrame
numbers the records, shuffles them so that every partition holds whole
strata, and swaps each partition with the ``"stratum"`` seed policy (each
stratum from a generator seeded by the hash of its matching values), so the
result is, row for row, that of the pandas ``"stratum"`` path with the same
``rng`` whatever the partitioning.  The released table comes from two
aggregation passes (of the input and of the swapped data).

References
----------
Bailie, Gong & Meng, "Can swapping be differentially private?", Algorithm 5.1.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._validation import InvariantDPError
from ._permutation import sources_by_stratum
from ._swap_table import encode, swap_table

__all__ = ["ROW", "swap_dask"]

#: the column that numbers the records while they are shuffled (refused in the data)
ROW = "__invariantdp_row__"


def _swap_partition(df: pd.DataFrame, swap, match, p, root) -> pd.DataFrame:
    """One partition's strata swapped, each from its own seed, records in their first order."""
    df = df.sort_values(ROW, kind="stable")
    src = sources_by_stratum(df, match, p, root)
    out = df.drop(columns=[ROW])
    for c in swap:
        out[c] = df[c].array.take(src)
    return out


def _add_row_numbers(df: pd.DataFrame, offsets, partition_info=None) -> pd.DataFrame:
    start = int(offsets[partition_info["number"]]) if partition_info else 0
    return df.assign(**{ROW: np.arange(start, start + len(df), dtype=np.int64)})


def swap_dask(ddf, roles, p, root) -> tuple:
    """Swap a Dask DataFrame stratum by stratum: ``(swapped, table, levels)``.

    The swapped data stay lazy; the table is computed from two aggregation
    passes, of the input and of the swapped data (module docstring).
    """
    import dask

    swap, match, rest = roles
    cols = list(ddf.columns)
    lengths = ddf.map_partitions(len).compute()
    lengths = np.asarray(lengths, dtype=np.int64)
    if lengths.sum() == 0:
        raise InvariantDPError("`data` must hold at least one record, got an empty DataFrame.")
    offsets = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    meta = ddf._meta.assign(**{ROW: np.array([], dtype=np.int64)})
    numbered = ddf.map_partitions(_add_row_numbers, offsets, meta=meta)
    if match:
        grouped = numbered.shuffle(on=match)
    else:
        grouped = numbered.repartition(npartitions=1)
    swapped = grouped.map_partitions(_swap_partition, swap, match, p, root, meta=ddf._meta)

    opts = {"dropna": False, "observed": True}
    counts_x, counts_z = dask.compute(
        ddf.groupby(cols, **opts).size(), swapped.groupby(cols, **opts).size()
    )
    frame_x = counts_x.index.to_frame(index=False)
    frame_z = counts_z.index.to_frame(index=False)
    frame_x.columns = cols
    frame_z.columns = cols
    # X and Z coded together, so that their codes and labels agree
    both = encode(pd.concat([frame_x, frame_z], ignore_index=True), roles)
    nx = len(frame_x)
    x = both._replace(j=both.j[:nx], k=both.k[:nx], l=both.l[:nx])
    z = both._replace(j=both.j[nx:], k=both.k[nx:], l=both.l[nx:])
    table = swap_table(x, z=z, wx=counts_x.to_numpy(), wz=counts_z.to_numpy())
    return swapped, table, x.levels

r"""The release of the Permutation Algorithm: the swapped table with :math:`c_{Swap}`.

:func:`swap_table` turns coded records (:class:`Coding`: matching,
swapping and other holding codes with their category labels), before and
after the swap, into what :func:`~invariantdp.mechanisms.permutation_swap`
releases (:class:`SwapTable`): the table :math:`n^Z_{jkl}` on the cells
allowed by the invariants, the invariants :math:`c_{Swap}` (the
:math:`n_{jl}` and :math:`n_{jk}` margins, Definition 5.4) and the largest
stratum ``b`` that fixes the epsilon of Theorem 5.6.

References
----------
Bailie, Gong & Meng, "Can swapping be differentially private?",
Algorithm 5.1 (line 22), Proposition 5.3, Definition 5.4, Theorem 5.6.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import pandas as pd
from scipy import sparse

from .._frames import DENSE_SPACE, dense_codes, group_codes
from .._validation import InvariantDPError
from ..invariants import Invariants
from ._permutation import python_scalar

__all__ = [
    "MAX_CELLS",
    "Coding",
    "SwapTable",
    "counts_on_cells",
    "encode",
    "jsonable",
    "levels_of",
    "swap_table",
]

#: the released table may have at most this many cells (sum over strata of K_j L_j)
MAX_CELLS = 50_000_000


class Coding(NamedTuple):
    """Records coded by role: match ``j``, swap ``k``, other holding ``l`` (see :func:`encode`)."""

    j: np.ndarray
    k: np.ndarray
    l: np.ndarray  # the paper's index l (other holding variables)
    n_match: int
    n_swap: int
    n_rest: int
    levels: dict | None  # role -> category labels of each code (JSON values)


def encode(df: pd.DataFrame, roles, *, labels: bool = True) -> Coding:
    """Code the records of ``df`` by ``roles = (swap, match, rest)`` (lexicographic codes)."""
    swap, match, rest = roles
    j, n_match = group_codes(df, match)
    k, n_swap = group_codes(df, swap)
    l, n_rest = group_codes(df, rest)
    _warn_if_identifier(df, "match", match, n_match)
    _warn_if_identifier(df, "swap", swap, n_swap)
    levels = None
    if labels:
        levels = {
            "match": levels_of(df, match, j, n_match),
            "swap": levels_of(df, swap, k, n_swap),
            "hold": levels_of(df, rest, l, n_rest),
        }
    return Coding(j, k, l, n_match, n_swap, n_rest, levels)


def _warn_if_identifier(df: pd.DataFrame, role: str, cols: list, n_groups: int) -> None:
    """Warn when the ``role`` columns have about one record per level (an ID, a measurement).

    Strata of one record swap nothing, and swapping codes of one record each
    make a released table with a cell per record: almost surely not what was
    meant, so the columns to blame are named.
    """
    n = len(df)
    if n < 100 or n_groups <= n // 2:
        return
    counts = {c: int(df[c].nunique(dropna=False)) for c in cols}
    blamed = [c for c, m in counts.items() if m > n // 10] or list(counts)
    warnings.warn(
        f"the `{role}` columns {cols!r} have {n_groups} levels for {n} records "
        f"({', '.join(f'{c!r}: {counts[c]}' for c in blamed)} distinct values): an identifier "
        "or a continuous variable makes strata or cells of single records; drop or bin it.",
        UserWarning,
        stacklevel=4,
    )


def jsonable(v):
    """A category label as a JSON value (missing values as null, other objects as text)."""
    v = python_scalar(v)
    if v is None or v is pd.NA or v is pd.NaT:
        return None
    if isinstance(v, float) and not math.isfinite(v):
        return None if math.isnan(v) else str(v)
    if isinstance(v, bool | int | float | str):
        return v
    return str(v)


def levels_of(df: pd.DataFrame, cols: list, codes: np.ndarray, size: int) -> list:
    """The labels of ``cols`` for each code ``0..size-1`` (from its first record)."""
    if not cols:
        return [[]] * size
    firsts = pd.Series(codes).drop_duplicates()
    pos = np.empty(size, dtype=np.int64)
    pos[firsts.to_numpy()] = firsts.index.to_numpy()
    rows = df[cols].iloc[pos].itertuples(index=False, name=None)
    return [[jsonable(v) for v in row] for row in rows]


def _pair_codes(j, other, n_other, n_j):
    """Codes of the pairs ``(j, other)`` in sorted order, their keys, and a key -> code map."""
    key = j * np.int64(n_other) + other
    space = int(n_j) * int(n_other)
    if space <= max(DENSE_SPACE, 4 * key.size):
        codes, uniq, lookup = dense_codes(key, space)
        return codes, uniq, lookup.__getitem__
    codes, uniq = pd.factorize(key, sort=True)
    uniq = np.asarray(uniq, dtype=np.int64)
    return codes.astype(np.int64), uniq, lambda k: np.searchsorted(uniq, k)


def _layout(uniq_jk, uniq_jl, x: Coding):
    """Cells (j, k, l) in order: for each (j, k) pair, the l's present with that j.

    Returns the start of each j's block of (j, l) pairs, the number of cells
    of each (j, k) pair and the first cell of each (j, k) pair.
    """
    l_per_j = np.bincount(uniq_jl // x.n_rest, minlength=x.n_match)
    jl_start = np.cumsum(l_per_j) - l_per_j
    rep = l_per_j[uniq_jk // x.n_swap]
    return jl_start, rep, np.cumsum(rep) - rep


@dataclass(frozen=True)
class SwapTable:
    """What a swap computed: the released table, its invariants and ``b`` (Theorem 5.6).

    Attributes
    ----------
    table : numpy.ndarray of int64
        :math:`n^Z_{jkl}` of the swapped records on the cells ``(j, k, l)``
        with :math:`n_{jk} > 0` and :math:`n_{jl} > 0`.
    invariants : Invariants
        :math:`c_{Swap}` of the confidential records: the :math:`n_{jl}`
        rows, then the :math:`n_{jk}` rows (Definition 5.4).
    b : int
        The largest stratum whose records are not all identical.
    n_records : int
    cells : dict
        ``"match"``, ``"swap"``, ``"hold"``: the code of each cell in each role.
    """

    table: np.ndarray
    invariants: Invariants
    b: int
    n_records: int
    cells: dict


def swap_table(x: Coding, z: Coding, *, wx=None, wz=None) -> SwapTable:
    """The table, invariants and ``b`` of a swap (Definition 5.4, Algorithm 5.1 line 22).

    ``x`` codes the confidential records and ``z`` the swapped ones, coded
    alike (the same codes and levels; e.g. ``x._replace(k=x.k[src])`` for a
    permutation ``src`` of the swapping codes); ``wx`` and ``wz`` count
    records that stand for several identical ones (default one each).
    """
    jk, uniq_jk, jk_code = _pair_codes(x.j, x.k, x.n_swap, x.n_match)
    jl, uniq_jl, jl_code = _pair_codes(x.j, x.l, x.n_rest, x.n_match)
    j_of_jk, k_of_jk = np.divmod(uniq_jk, x.n_swap)
    j_of_jl, l_of_jl = np.divmod(uniq_jl, x.n_rest)
    jl_start, rep, block = _layout(uniq_jk, uniq_jl, x)
    n_cells = int(rep.sum())
    if n_cells > MAX_CELLS:
        raise InvariantDPError(
            f"the released table would have {n_cells} cells (more than {MAX_CELLS}); "
            "drop identifiers and other high-cardinality holding columns from `data` first."
        )
    wx = None if wx is None else wx.astype(float)
    wz = None if wz is None else wz.astype(float)
    within_x = jl - jl_start[x.j]
    cell_x = block[jk] + within_x
    # the swapped records lie on the cells of x: swapping keeps n_jk and n_jl
    jk_z = jk_code(z.j * np.int64(x.n_swap) + z.k)
    if z.j is x.j and z.l is x.l:  # only the swapping codes moved: (j, l) is unchanged
        within_z = within_x
    else:
        within_z = jl_code(z.j * np.int64(x.n_rest) + z.l) - jl_start[z.j]
    cell_z = block[jk_z] + within_z
    table_x = np.bincount(cell_x, weights=wx, minlength=n_cells)
    table_z = np.bincount(cell_z, weights=wz, minlength=n_cells).astype(np.int64)

    jk_of_cell = np.repeat(np.arange(uniq_jk.size), rep)
    within = np.arange(n_cells) - np.repeat(block, rep)
    jl_of_cell = np.repeat(jl_start[j_of_jk], rep) + within
    rows = np.concatenate([jl_of_cell, uniq_jl.size + jk_of_cell])
    cols = np.concatenate([np.arange(n_cells), np.arange(n_cells)])
    C = sparse.csr_array(
        (np.ones(2 * n_cells), (rows, cols)), shape=(uniq_jl.size + uniq_jk.size, n_cells)
    )
    n_jl = np.bincount(jl, weights=wx, minlength=uniq_jl.size)
    n_jk = np.bincount(jk, weights=wx, minlength=uniq_jk.size)
    values = np.concatenate([n_jl, n_jk])
    names = None
    if values.size <= 10_000:
        lm, ls, lr = x.levels["match"], x.levels["swap"], x.levels["hold"]
        names = [
            f"n_jl[match={lm[a]}, hold={lr[c]}]" for a, c in zip(j_of_jl, l_of_jl, strict=True)
        ] + [f"n_jk[match={lm[a]}, swap={ls[c]}]" for a, c in zip(j_of_jk, k_of_jk, strict=True)]

    # b (Theorem 5.6): strata whose records are not all identical
    n_j = np.bincount(x.j, weights=wx, minlength=x.n_match)
    j_of_cell = j_of_jk[jk_of_cell]
    varied = np.bincount(j_of_cell[table_x > 0], minlength=x.n_match) >= 2
    return SwapTable(
        table=table_z,
        invariants=Invariants(C, values, (n_cells,), names),
        b=int(n_j[varied].max()) if varied.any() else 0,
        n_records=int(n_j.sum()),
        cells={
            "match": j_of_cell.tolist(),
            "swap": k_of_jk[jk_of_cell].tolist(),
            "hold": l_of_jl[jl_of_cell].tolist(),
        },
    )


def counts_on_cells(data: pd.DataFrame, meta) -> np.ndarray:
    """Counts of the records of ``data`` on the cells of a swap release with metadata ``meta``.

    ``meta`` holds the variables of each role, their ``levels`` and the
    ``cells`` of the released table (as :func:`swap_table` lays them out);
    a level or a record outside those cells raises.
    """
    swap, match, rest = meta["swap"], meta["match"], meta["hold"]
    index = {}
    for role, cols in (("match", match), ("swap", swap), ("hold", rest)):
        lookup = {tuple(v): i for i, v in enumerate(meta["levels"][role])}
        codes, size = group_codes(data, cols)
        mapping = np.empty(size, dtype=np.int64)
        for g, key in enumerate(levels_of(data, cols, codes, size)):
            if tuple(key) not in lookup:
                raise InvariantDPError(
                    f"`data` has {role} value {tuple(key)!r}, which the release does not cover."
                )
            mapping[g] = lookup[tuple(key)]
        index[role] = mapping[codes]
    cells = meta["cells"]
    n_s, n_h = len(meta["levels"]["swap"]), len(meta["levels"]["hold"])
    cell_key = (
        np.asarray(cells["match"], dtype=np.int64) * n_s + np.asarray(cells["swap"])
    ) * n_h + np.asarray(cells["hold"])
    rec_key = (index["match"] * n_s + index["swap"]) * n_h + index["hold"]
    order = np.argsort(cell_key)
    at = np.searchsorted(cell_key, rec_key, sorter=order)
    at = np.minimum(at, cell_key.size - 1)
    found = cell_key[order[at]] == rec_key
    if not found.all():
        raise InvariantDPError(
            "`data` has records outside the cells allowed by the release's invariants."
        )
    return np.bincount(order[at], minlength=cell_key.size).astype(np.int64)

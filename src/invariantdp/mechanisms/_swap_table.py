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

from .._frames import CHUNK, DENSE_SPACE, first_positions, group_codes, narrowest
from .._validation import InvariantDPError, LabelArray
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
    "moved_records",
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


def encode(df: pd.DataFrame, roles, *, labels: bool = True, read_all: bool = False) -> Coding:
    """Code the records of ``df`` by ``roles = (swap, match, rest)`` (lexicographic codes).

    ``read_all`` (a secure swap) finds the labels of the levels on every
    record, so that the run time does not tell where a level first appears.

    The strata codes ``j`` are int64; the swapping and other holding codes
    are kept in the narrowest integer type that holds them (int8 for a
    tenure, int32 for 200,000 blocks), which a census swap holds in memory
    through every pass: keys made of them are computed in int64.
    """
    swap, match, rest = roles
    j, n_match = group_codes(df, match)
    k, n_swap = group_codes(df, swap, narrow=True)
    l, n_rest = group_codes(df, rest, narrow=True)
    _warn_if_identifier(df, "match", match, n_match)
    _warn_if_identifier(df, "swap", swap, n_swap)
    levels = None
    if labels:
        levels = {
            "match": levels_of(df, match, j, n_match, read_all=read_all),
            "swap": levels_of(df, swap, k, n_swap, read_all=read_all),
            "hold": levels_of(df, rest, l, n_rest, read_all=read_all),
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


def levels_of(df: pd.DataFrame, cols: list, codes, size: int, *, read_all=False) -> LabelArray:
    """The labels of ``cols`` for each code ``0..size-1`` (from its first record).

    A ``size x len(cols)`` :class:`LabelArray` of JSON values (:func:`jsonable`
    of every label), standing for the list of rows written to the document:
    a column of numbers is a slice of the column itself, so 200,000 levels
    cost no Python object until the release is written.
    """
    if not cols:
        return LabelArray(np.empty((size, 0), dtype=np.int64), copy=False)
    pos = first_positions(codes, size, read_all=read_all)
    columns = [_json_column(df[c], pos) for c in cols]
    if len(columns) == 1 or len({c.dtype for c in columns}) == 1:
        table = np.stack(columns, axis=1)
    else:  # numbers of several kinds stay Python numbers of their own kind
        table = np.empty((size, len(columns)), dtype=object)
        for i, c in enumerate(columns):
            table[:, i] = c
    return LabelArray(table, copy=False)


def _json_column(column: pd.Series, pos: np.ndarray) -> np.ndarray:
    """:func:`jsonable` of ``column`` at positions ``pos``, as an array.

    Numbers and text are converted by type, all at once; other labels
    (dates, mixed objects) one by one.
    """
    dtype = column.dtype
    if isinstance(dtype, np.dtype) and dtype.kind in "biuf":
        values = column.to_numpy()[pos]
        if dtype.kind != "f" or np.isfinite(values).all():
            return values  # tolist() gives the Python numbers jsonable gives
        out = values.astype(object)
        out[np.isnan(values)] = None
        out[np.isposinf(values)] = "inf"
        out[np.isneginf(values)] = "-inf"
        return out
    values = column.iloc[pos]
    if isinstance(dtype, pd.StringDtype):  # text or missing, nothing else
        out = values.to_numpy(dtype=object)
        out[values.isna().to_numpy()] = None
        return out
    out = np.empty(pos.size, dtype=object)
    out[:] = [jsonable(v) for v in values]
    return out


class _Triples:
    """The triples ``(j, k, l)`` of the records with their number (or weight).

    A triple is keyed ``(j * n_swap + k) * n_rest + l``.  Over a key space of
    at most ``max(DENSE_SPACE, n)`` the records are counted chunk by chunk
    into an array over the whole space (no array of one key per record is
    made, and the pairs present are read off it); over a larger one the
    keys are hashed.
    """

    def __init__(self, x: Coding, weights=None):
        self.n_swap, self.n_rest = np.int64(x.n_swap), np.int64(x.n_rest)
        shape = (int(x.n_match), int(x.n_swap), int(x.n_rest))
        size = x.j.size
        self.dense = None
        if weights is None and math.prod(shape) <= max(DENSE_SPACE, size):
            counts = np.zeros(math.prod(shape), dtype=np.int64)
            for start in range(0, size, CHUNK):
                np.add.at(counts, self.keys(x, slice(start, start + CHUNK)), 1)
            self.dense = counts.reshape(shape)
        else:
            codes, uniq = pd.factorize(self.keys(x, slice(None)), sort=True)
            self.uniq = np.asarray(uniq, dtype=np.int64)
            self.counts = np.bincount(codes, weights=weights, minlength=len(uniq))

    def keys(self, x: Coding, part) -> np.ndarray:
        return (x.j[part] * self.n_swap + x.k[part]) * self.n_rest + x.l[part]

    def pairs(self) -> tuple[np.ndarray, np.ndarray]:
        """The (j, k) and (j, l) pairs present, each sorted by key (``j * n + other``)."""
        if self.dense is not None:
            d = self.dense
            if d.shape[2] <= 64:  # a few l's: their columns added (faster than any over them)
                per_jk = d[:, :, 0].copy()
                for i in range(1, d.shape[2]):
                    per_jk += d[:, :, i]
            else:
                per_jk = d.any(axis=2)
            return np.flatnonzero(per_jk), np.flatnonzero(d.any(axis=1))
        jk, l = np.divmod(self.uniq, self.n_rest)
        first = np.ones(jk.size, dtype=bool)
        first[1:] = jk[1:] != jk[:-1]  # the triples are sorted, so their (j, k) pairs are
        return jk[first], np.unique(jk // self.n_swap * self.n_rest + l)

    def on_cells(self, cell_keys, cells, n_cells: int) -> np.ndarray:
        """The counts on the cells, whose triple keys ``cell_keys()`` gives (if counted).

        ``cells(j, jk_key, jl_key)`` places triples that were hashed.
        """
        if self.dense is not None:
            return self.dense.reshape(-1).take(cell_keys())
        jk, l = np.divmod(self.uniq, self.n_rest)
        j = jk // self.n_swap
        out = np.zeros(n_cells, dtype=self.counts.dtype)
        out[cells(j, jk, j * self.n_rest + l)] = self.counts
        return out


def _coder(uniq: np.ndarray, space: int):
    """``f(keys)``: the place of each key in the sorted ``uniq`` (keys present only)."""
    if space <= max(DENSE_SPACE, 4 * uniq.size):
        lookup = np.zeros(space, dtype=np.int64)
        lookup[uniq] = np.arange(uniq.size)
        return lookup.take
    return lambda keys: np.searchsorted(uniq, keys)


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
        ``"match"``, ``"swap"``, ``"hold"``: the code of each cell in each role
        (:class:`LabelArray`: an array that stands for the list in the document).
    """

    table: np.ndarray
    invariants: Invariants
    b: int
    n_records: int
    cells: dict


def moved_records(src: np.ndarray) -> np.ndarray:
    """The records ``i`` whose swapping values come from another record (``src[i] != i``)."""
    found = []
    for start in range(0, src.size, CHUNK):
        part = src[start : start + CHUNK]
        found.append(start + np.flatnonzero(part != np.arange(start, start + part.size)))
    return np.concatenate(found) if found else np.zeros(0, dtype=np.int64)


def swap_table(x: Coding, *, moved=None, new_k=None, z=None, wx=None, wz=None) -> SwapTable:
    """The table, invariants and ``b`` of a swap (Definition 5.4, Algorithm 5.1 line 22).

    ``x`` codes the confidential records.  The swapped ones are given either
    by the records that ``moved`` and their ``new_k`` swapping codes (the
    others keep theirs), or as ``z``, coded alike (the same codes and
    levels), with ``wx`` and ``wz`` counting records that stand for several
    identical ones (default one each).  The records are read once, in
    chunks, to count their triples ``(j, k, l)`` (:class:`_Triples`);
    everything else works on the pairs and the cells, and only the moved
    records are placed again.
    """
    n_swap, n_rest = np.int64(x.n_swap), np.int64(x.n_rest)
    triples = _Triples(x, wx)
    uniq_jk, uniq_jl = triples.pairs()
    j_of_jk, k_of_jk = np.divmod(uniq_jk, n_swap)
    j_of_jl, l_of_jl = np.divmod(uniq_jl, n_rest)
    jl_start, rep, block = _layout(uniq_jk, uniq_jl, x)
    n_cells = int(rep.sum())
    if n_cells > MAX_CELLS:
        raise InvariantDPError(
            f"the released table would have {n_cells} cells (more than {MAX_CELLS}); "
            "drop identifiers and other high-cardinality holding columns from `data` first."
        )
    jk_code = _coder(uniq_jk, int(x.n_match) * int(x.n_swap))
    jl_code = _coder(uniq_jl, int(x.n_match) * int(x.n_rest))

    def cells(j, jk_key, jl_key):
        """The cell of (j, k, l): the first cell of its (j, k) pair, then l among j's l's."""
        return block.take(jk_code(jk_key)) + (jl_code(jl_key) - jl_start.take(j))

    j_of_cell = np.repeat(j_of_jk.astype(narrowest(x.n_match)), rep)
    jl_of_cell = np.repeat(jl_start[j_of_jk] - block, rep)
    jl_of_cell += np.arange(n_cells)  # the l's of j, in order, in every (j, k) pair's cells
    l_of_cell = l_of_jl.astype(narrowest(x.n_rest))[jl_of_cell]

    def cell_keys():
        keys = np.repeat(uniq_jk * n_rest, rep)
        keys += l_of_cell
        return keys

    table_x = triples.on_cells(cell_keys, cells, n_cells)
    n_jl = np.bincount(jl_of_cell, weights=table_x, minlength=uniq_jl.size)
    n_jk = np.add.reduceat(table_x, block) if n_cells else np.zeros(0)
    C = _invariant_matrix(uniq_jl.size, j_of_jl, j_of_jk, jl_start, rep, block, x.n_match)
    values = np.concatenate([n_jl, n_jk])
    names = None
    if values.size <= 10_000:
        lm, ls, lr = x.levels["match"], x.levels["swap"], x.levels["hold"]
        names = [
            f"n_jl[match={lm[a]}, hold={lr[c]}]" for a, c in zip(j_of_jl, l_of_jl, strict=True)
        ] + [f"n_jk[match={lm[a]}, swap={ls[c]}]" for a, c in zip(j_of_jk, k_of_jk, strict=True)]

    # b (Theorem 5.6): strata whose records are not all identical
    n_j = np.bincount(j_of_jl, weights=n_jl, minlength=x.n_match)
    cells_of_j = np.bincount(j_of_jk, weights=rep, minlength=x.n_match).astype(np.int64)
    varied = np.zeros(x.n_match, dtype=bool)
    has = cells_of_j > 0  # the cells of a stratum are consecutive: count its filled ones
    starts = (np.cumsum(cells_of_j) - cells_of_j)[has]
    varied[has] = np.add.reduceat(table_x > 0, starts, dtype=np.int64) >= 2
    if z is None:
        # swapping keeps n_jk and n_jl: a moved record stays in its stratum and keeps its l
        j = x.j[moved]
        jl_key = j * n_rest + x.l[moved]
        table_z = table_x  # no longer needed: the moved records are placed again in it
        np.add.at(table_z, cells(j, j * n_swap + x.k[moved], jl_key), -1)
        np.add.at(table_z, cells(j, j * n_swap + new_k, jl_key), 1)
    else:  # the swapped records lie on the cells of x: swapping keeps n_jk and n_jl
        table_z = _Triples(z, wz).on_cells(cell_keys, cells, n_cells).astype(np.int64)
    return SwapTable(
        table=table_z,
        invariants=Invariants(C, values, (n_cells,), names),
        b=int(n_j[varied].max()) if varied.any() else 0,
        n_records=int(n_j.sum()),
        cells={
            "match": LabelArray(j_of_cell, copy=False),
            "swap": LabelArray(np.repeat(k_of_jk.astype(narrowest(x.n_swap)), rep), copy=False),
            "hold": LabelArray(l_of_cell, copy=False),
        },
    )


def _invariant_matrix(n_jl, j_of_jl, j_of_jk, jl_start, rep, block, n_match):
    """``C`` of the invariants, in CSR form directly: rows ``n_jl`` then ``n_jk``.

    The row of a ``(j, l)`` pair holds, for every ``(j, k)`` pair of the
    same stratum, the cell ``(j, k, l)``; the row of a ``(j, k)`` pair its
    ``rep`` consecutive cells.  Column indices come out sorted, so no sort
    (or conversion from triplets) is needed.  The entries are stored as
    int8 ones: :class:`~invariantdp.invariants.Invariants` makes its own
    float copy of any matrix it is given.
    """
    n_cells = int(rep.sum())
    itype = np.int32 if 2 * n_cells < 2**31 else np.int64  # scipy's own index type
    k_per_j = np.bincount(j_of_jk, minlength=n_match)
    row_len = k_per_j[j_of_jl]  # a (j, l) row: one cell per k of j
    ends = np.cumsum(row_len)
    jk_start = np.cumsum(k_per_j) - k_per_j
    indices = np.empty(2 * n_cells, dtype=itype)
    # entry e of the row of (j, l) is the cell (j, k, l) of the (j, k) pair
    # jk_start[j] + (e - row start): that pair's first cell plus l's place among j's
    pair = np.repeat((jk_start[j_of_jl] - (ends - row_len)).astype(itype), row_len)
    pair += np.arange(n_cells, dtype=itype)
    cells = indices[:n_cells]
    np.take(block.astype(itype), pair, out=cells, mode="clip")  # in range: unbuffered
    cells += np.repeat((np.arange(n_jl) - jl_start[j_of_jl]).astype(itype), row_len)
    indices[n_cells:] = np.arange(n_cells, dtype=itype)
    indptr = np.concatenate([[0], ends, n_cells + np.cumsum(rep)]).astype(itype)
    shape = (n_jl + rep.size, n_cells)
    return sparse.csr_array((np.ones(2 * n_cells, dtype=np.int8), indices, indptr), shape=shape)


def counts_on_cells(data: pd.DataFrame, meta) -> np.ndarray:
    """Counts of the records of ``data`` on the cells of a swap release with metadata ``meta``.

    ``meta`` holds the variables of each role, their ``levels`` and the
    ``cells`` of the released table (as :func:`swap_table` lays them out);
    a level or a record outside those cells raises.
    """
    swap, match, rest = meta["swap"], meta["match"], meta["hold"]
    index = {}
    for role, cols in (("match", match), ("swap", swap), ("hold", rest)):
        codes, size = group_codes(data, cols)
        mine = levels_of(data, cols, codes, size).array
        mapping = _rows_in(mine, _level_rows(meta["levels"][role], len(cols)))
        missing = np.flatnonzero(mapping < 0)
        if missing.size:
            key = tuple(mine[missing[0]].tolist())
            raise InvariantDPError(
                f"`data` has {role} value {key!r}, which the release does not cover."
            )
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


def _level_rows(levels, n_cols: int) -> np.ndarray:
    """The levels of a role as a 2-D array: its own array, or the rows read from JSON."""
    if isinstance(levels, LabelArray):
        return levels.array
    out = np.empty((len(levels), n_cols), dtype=object)
    for r, row in enumerate(levels):
        # a row of another length (a tampered document) matches nothing
        out[r] = row if len(row) == n_cols else [object()] * n_cols
    return out


def _rows_in(rows: np.ndarray, table: np.ndarray) -> np.ndarray:
    """The index in ``table`` of each row of ``rows`` (equal JSON values), -1 where absent.

    Equal as Python values compare (``1 == 1.0``); a row listed twice is
    found at its last place.
    """
    n = len(rows)
    key = np.zeros(n + len(table), dtype=np.int64)
    size = 1
    for i in range(rows.shape[1]):
        a, b = rows[:, i], table[:, i]
        if a.dtype != b.dtype:  # no silent float conversion of large integers
            a, b = a.astype(object), b.astype(object)
        codes, uniq = pd.factorize(np.concatenate([a, b]), use_na_sentinel=False)
        if size * len(uniq) >= 2**62:
            key, size = _refactorize(key)
        key = key * len(uniq) + codes
        size *= len(uniq)
    mine, theirs = key[:n], key[n:]
    order = np.argsort(theirs, kind="stable")
    ranked = theirs[order]
    at = np.maximum(np.searchsorted(ranked, mine, side="right") - 1, 0)
    return np.where(ranked[at] == mine, order[at], -1)


def _refactorize(key: np.ndarray) -> tuple[np.ndarray, int]:
    codes, uniq = pd.factorize(key)
    return codes.astype(np.int64), len(uniq)

r"""The release of the Permutation Algorithm: the swapped table with :math:`c_{Swap}`.

:func:`build_release` turns coded records (:class:`Coding`: matching,
swapping and other holding codes with their category labels) and the
permutation of the swapping codes into the :class:`~invariantdp.Release` of
:func:`~invariantdp.mechanisms.permutation_swap`: the table
:math:`n^Z_{jkl}` on the cells allowed by the invariants, the invariants
:math:`c_{Swap}` (the :math:`n_{jl}` and :math:`n_{jk}` margins,
Definition 5.4) and the guarantee of Theorem 5.6.

References
----------
Bailie, Gong & Meng, "Can swapping be differentially private?",
Algorithm 5.1 (line 22), Proposition 5.3, Definition 5.4, Theorem 5.6.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
import pandas as pd
from scipy import sparse

from .._frames import group_codes
from .._validation import InvariantDPError
from ..invariants import Invariants
from ..privacy.swapping import swapping_epsilon
from ..release import NoiseLaw, PrivacyGuarantee, Release
from ._base import randomness_note
from ._permutation import python_scalar

__all__ = [
    "MAX_CELLS",
    "Coding",
    "build_release",
    "build_release_weighted",
    "encode",
    "jsonable",
    "levels_of",
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
    levels = None
    if labels:
        levels = {
            "match": levels_of(df, match, j, n_match),
            "swap": levels_of(df, swap, k, n_swap),
            "hold": levels_of(df, rest, l, n_rest),
        }
    return Coding(j, k, l, n_match, n_swap, n_rest, levels)


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


def _pair_codes(j, other, n_other):
    codes, uniq = pd.factorize(j * np.int64(n_other) + other, sort=True)
    return codes.astype(np.int64), np.asarray(uniq, dtype=np.int64)


def _layout(uniq_jk, uniq_jl, x: Coding):
    """Cells (j, k, l) in order: for each (j, k) pair, the l's present with that j.

    Returns the start of each j's block of (j, l) pairs, the number of cells
    of each (j, k) pair and the first cell of each (j, k) pair.
    """
    l_per_j = np.bincount(uniq_jl // x.n_rest, minlength=x.n_match)
    jl_start = np.cumsum(l_per_j) - l_per_j
    rep = l_per_j[uniq_jk // x.n_swap]
    return jl_start, rep, np.cumsum(rep) - rep


def build_release(
    x: Coding, roles, swap_rate: float, policy: str, *, src=None, k_z=None, weights=None
) -> Release:
    """Release of ``H(Z)`` with the invariants ``c_Swap`` (Definition 5.4, Alg. 5.1 line 22).

    ``x`` codes the confidential records; the swapped swapping codes are
    ``x.k[src]`` (a permutation of the records) or ``k_z`` (given directly);
    ``weights`` counts records that stand for several identical ones.
    """
    j, k_x, l, n_match, n_swap, n_rest, levels = x
    jk_x, uniq_jk = _pair_codes(j, k_x, n_swap)
    jl, uniq_jl = _pair_codes(j, l, n_rest)
    if src is not None:
        jk_z = jk_x[src]
    else:
        jk_z = np.searchsorted(uniq_jk, j * np.int64(n_swap) + k_z)
    j_of_jk, k_of_jk = np.divmod(uniq_jk, n_swap)
    j_of_jl, l_of_jl = np.divmod(uniq_jl, n_rest)
    jl_start, rep, block = _layout(uniq_jk, uniq_jl, x)
    n_cells = int(rep.sum())
    if n_cells > MAX_CELLS:
        raise InvariantDPError(
            f"the released table would have {n_cells} cells (more than {MAX_CELLS}); "
            "drop identifiers and other high-cardinality holding columns from `data` first."
        )
    w = None if weights is None else weights.astype(float)
    cell_x = block[jk_x] + (jl - jl_start[j])
    cell_z = block[jk_z] + (jl - jl_start[j])
    table_x = np.bincount(cell_x, weights=w, minlength=n_cells)
    table_z = np.bincount(cell_z, weights=w, minlength=n_cells).astype(np.int64)

    jk_of_cell = np.repeat(np.arange(uniq_jk.size), rep)
    within = np.arange(n_cells) - np.repeat(block, rep)
    jl_of_cell = np.repeat(jl_start[j_of_jk], rep) + within
    n_jl_rows = uniq_jl.size
    rows = np.concatenate([jl_of_cell, n_jl_rows + jk_of_cell])
    cols = np.concatenate([np.arange(n_cells), np.arange(n_cells)])
    C = sparse.csr_array(
        (np.ones(2 * n_cells), (rows, cols)), shape=(n_jl_rows + uniq_jk.size, n_cells)
    )
    n_jl = np.bincount(jl, weights=w, minlength=n_jl_rows)
    n_jk = np.bincount(jk_x, weights=w, minlength=uniq_jk.size)
    values = np.concatenate([n_jl, n_jk])

    # b (Theorem 5.6): strata whose records are not all identical
    n_j = np.bincount(j, weights=w, minlength=n_match)
    j_of_cell = j_of_jk[jk_of_cell]
    distinct = np.bincount(j_of_cell[table_x > 0], minlength=n_match)
    varied = distinct >= 2
    b = int(n_j[varied].max()) if varied.any() else 0
    epsilon = swapping_epsilon(b, swap_rate)

    names = None
    if values.size <= 10_000:
        lm, ls, lr = levels["match"], levels["swap"], levels["hold"]
        names = [
            f"n_jl[match={lm[a]}, hold={lr[c]}]" for a, c in zip(j_of_jl, l_of_jl, strict=True)
        ] + [f"n_jk[match={lm[a]}, swap={ls[c]}]" for a, c in zip(j_of_jk, k_of_jk, strict=True)]
    invariants = Invariants(C, values, (n_cells,), names)
    swap, match, rest = roles
    n_records = int(n_j.sum())
    return Release(
        value=table_z,
        mechanism="permutation_swap",
        noise=NoiseLaw(
            "permutation",
            {
                "swap_rate": swap_rate,
                "selection": "each record of a stratum with probability swap_rate, "
                "re-drawn when exactly one record is selected",
                "permutation": "uniformly random derangement of the selected records",
            },
        ),
        guarantee=PrivacyGuarantee(
            definition="epsilon-DP",
            params={"epsilon": epsilon, "b": b, "swap_rate": swap_rate},
            adjacency="d_HamS^u: symmetric Hamming distance with the swapped records "
            "as privacy units, among data sets with the same swapping invariants",
            dataspace="data sets with the released swapping invariants c_Swap "
            "(n_jl and n_jk margins)",
        ),
        invariants=invariants,
        query=None,
        data_shape=(n_cells,),
        metadata={
            "swap": [jsonable(c) for c in swap],
            "match": [jsonable(c) for c in match],
            "hold": [jsonable(c) for c in rest],
            "n_records": n_records,
            "b": b,
            "seed_policy": policy,
            **randomness_note(policy == "secure"),
            "levels": levels,
            "cells": {
                "match": j_of_cell.tolist(),
                "swap": k_of_jk[jk_of_cell].tolist(),
                "hold": l_of_jl[jl_of_cell].tolist(),
            },
            "value": "counts n_jkl of the swapped data on the cells (match, swap, hold) "
            "allowed by the invariants; invariant rows are the n_jl then the n_jk margins",
        },
    )


def build_release_weighted(x: Coding, wx, z: Coding, wz, roles, swap_rate: float) -> Release:
    """:func:`build_release` from distinct records with counts, ``x`` and ``z`` coded alike.

    ``x`` (with counts ``wx``) are the distinct confidential records and
    give the invariants and ``b``; ``z`` (counts ``wz``) the distinct swapped
    records, whose table is released.
    """
    rel_x = build_release(x, roles, swap_rate, "stratum", k_z=x.k, weights=wx)
    jx, kx, lx, _, n_swap, n_rest, _ = x
    jz, kz, lz = z.j, z.k, z.l
    uniq_jk = np.unique(jx * np.int64(n_swap) + kx)
    uniq_jl = np.unique(jx * np.int64(n_rest) + lx)
    jl_start, _, block = _layout(uniq_jk, uniq_jl, x)
    jk_z = np.searchsorted(uniq_jk, jz * np.int64(n_swap) + kz)
    jl_z = np.searchsorted(uniq_jl, jz * np.int64(n_rest) + lz)
    cell_z = block[jk_z] + (jl_z - jl_start[jz])
    table_z = np.bincount(cell_z, weights=wz.astype(float), minlength=rel_x.value.size)
    return Release(
        value=table_z.astype(np.int64),
        mechanism=rel_x.mechanism,
        noise=rel_x.noise,
        guarantee=rel_x.guarantee,
        invariants=rel_x.invariants,
        query=None,
        data_shape=rel_x.data_shape,
        metadata=rel_x.metadata,
    )

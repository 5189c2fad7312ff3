r"""Data swapping as differential privacy: the Permutation Algorithm (Algorithm 5.1).

The variables of a microdata set are split into *swapping* variables
:math:`V_{Swap}` and *holding* variables :math:`V_{Hold}` (all the others);
the *matching* variables :math:`V_{Match} \subset V_{Hold}` (the swap key)
define strata.  Within each stratum every record is selected with
probability ``p`` (the swap rate), the selection being drawn again whenever
exactly one record is chosen, and the swapping variables of the selected
records are permuted by a uniformly random derangement.  The result keeps
the swapping invariants :math:`c_{Swap}` -- the margins :math:`n_{jl}`
(matching x other holding variables) and :math:`n_{jk}` (matching x swapping
variables) -- exactly (Proposition 5.3, Definition 5.4), and is
:math:`(c_{Swap}, d^u_{HamS}, \epsilon)`-DP with the :math:`\epsilon` of
Theorem 5.6 (:func:`invariantdp.privacy.swapping_epsilon`).

Implementation
--------------
*Selection* draws one uniform per record and re-draws, all at once, the
records of every stratum where exactly one record was chosen, until no such
stratum is left (the conditional law of Algorithm 5.1, line 11).
*Derangements* are exact: for all strata at once a uniform permutation is
drawn within each stratum (a uniform permutation of all selected records,
stably sorted by stratum, orders each stratum uniformly), and the strata
whose permutation has a fixed point draw again.  Conditioning a uniform
permutation on having no fixed point gives the uniform law on derangements;
a stratum is accepted with probability :math:`d(m)/m! \to 1/e`, so the
expected work is about :math:`e` times the number of selected records.

Seed policies
-------------
``"global"`` (default for pandas): one random stream, vectorised across all
strata.  ``"stratum"`` (used for Dask, available for pandas): each stratum
draws from its own generator, seeded by ``SeedSequence(root, spawn_key=h)``
where ``root`` is 128 bits drawn from ``rng`` and ``h`` a BLAKE2 hash of the
stratum's matching values; the records of a stratum are taken in row order.
Its result depends only on ``rng`` and the data, not on how the data are
partitioned, so a Dask computation gives, row for row, the same swapped
data as the pandas ``"stratum"`` path with the same ``rng``.  The two
policies have the same distribution but different draws.  The ``"stratum"``
policy loops over strata in Python (one generator each), so it is slower
when there are very many small strata.

Both seeded policies draw from a numpy ``Generator``, which is predictable
from its output and reproducible from a seed: their releases are
**simulations, not for publication** (``metadata["randomness"]`` is
``"simulation"``).  ``secure=True`` (pandas) draws the selections and
derangements by exact integer sampling from :mod:`secrets` and marks the
release ``"secure"``.
"""

from __future__ import annotations

import hashlib
import math
from typing import NamedTuple

import numpy as np
import pandas as pd
from scipy import sparse

from .._rng import as_generator
from .._validation import InvariantDPError, check_in_open_unit
from ..invariants import Invariants
from ..privacy.swapping import (
    _as_columns,
    _check_columns,
    _check_frame,
    _group_codes,
    swapping_epsilon,
)
from ..release import NoiseLaw, PrivacyGuarantee, Release
from ..secure import random_source
from ._base import randomness_note

__all__ = [
    "SwapResult",
    "SwappingInvariants",
    "permutation_swap",
    "swapping_invariants",
    "table_on_release_cells",
]

#: the released table may have at most this many cells (sum over strata of K_j L_j)
MAX_CELLS = 50_000_000

_ROW = "__invariantdp_row__"


class SwapResult(NamedTuple):
    """Output of :func:`permutation_swap`: the swapped data and its release."""

    data: object
    release: Release


class SwappingInvariants(NamedTuple):
    r"""The swapping invariants :math:`c_{Swap}` (Definition 5.4) as two count tables.

    Attributes
    ----------
    match_hold : pandas.Series
        :math:`n_{jl}`: counts by all holding variables (matching and other).
    match_swap : pandas.Series
        :math:`n_{jk}`: counts by matching x swapping variables.
    """

    match_hold: pd.Series
    match_swap: pd.Series

    def equals(self, other: SwappingInvariants) -> bool:
        """True when both tables are identical (labels and counts)."""
        return self.match_hold.equals(other.match_hold) and self.match_swap.equals(other.match_swap)


# ---------------------------------------------------------------------------
# argument handling
# ---------------------------------------------------------------------------


def _roles(data, swap, match):
    kind = _check_frame(data)
    swap = _check_columns("swap", _as_columns("swap", swap), data)
    if not swap:
        raise InvariantDPError("`swap` ([]) must name at least one swapping variable.")
    match = _check_columns("match", _as_columns("match", match), data)
    both = [c for c in match if c in swap]
    if both:
        raise InvariantDPError(
            f"`match` and `swap` both name {both!r}; a matching variable is a holding "
            "variable and cannot also be swapped."
        )
    hold = [c for c in data.columns if c not in swap]
    if not hold:
        raise InvariantDPError(
            f"`swap` ({swap!r}) names every column of `data`; at least one holding "
            "variable must stay with its record (Sec. 5.1)."
        )
    rest = [c for c in hold if c not in match]
    return kind, swap, match, hold, rest


def swapping_invariants(data: pd.DataFrame, *, swap, match=()) -> SwappingInvariants:
    r"""The swapping invariants :math:`c_{Swap}` of a data set (Definition 5.4).

    Parameters
    ----------
    data : pandas.DataFrame
        Microdata, one row per swapping unit.
    swap : str or sequence of str
        Swapping variables :math:`V_{Swap}`; every other column is a holding
        variable.
    match : str or sequence of str, optional
        Matching variables :math:`V_{Match}` (a subset of the holding ones).

    Returns
    -------
    SwappingInvariants
        ``match_hold`` (:math:`n_{jl}`) and ``match_swap`` (:math:`n_{jk}`),
        sorted by their labels; missing values count as a category.

    References
    ----------
    Bailie, Gong & Meng, Proposition 5.3 and Definition 5.4.

    Examples
    --------
    >>> import pandas as pd
    >>> from invariantdp.mechanisms import swapping_invariants
    >>> df = pd.DataFrame({"county": ["a", "b", "b"], "owned": [1, 0, 1]})
    >>> swapping_invariants(df, swap="county").match_swap.to_dict()
    {'a': 1, 'b': 2}
    """
    kind, swap, match, hold, _ = _roles(data, swap, match)
    if kind != "pandas":
        raise TypeError("`data` must be a pandas DataFrame here; call .compute() first.")
    opts = {"dropna": False, "observed": True, "sort": True}
    n_jl = data.groupby(hold, **opts).size()
    n_jk = data.groupby(match + swap, **opts).size()
    return SwappingInvariants(n_jl, n_jk)


# ---------------------------------------------------------------------------
# the random permutation: global policy, vectorised over strata
# ---------------------------------------------------------------------------


def _select(j: np.ndarray, n_strata: int, p: float, gen: np.random.Generator) -> np.ndarray:
    """Bernoulli(p) selection per record, re-drawn in strata with exactly one selected."""
    n_j = np.bincount(j, minlength=n_strata)
    sel = gen.random(j.size) < p
    sel &= (n_j >= 2)[j]
    redo = np.bincount(j[sel], minlength=n_strata) == 1
    idx = np.flatnonzero(redo[j])
    while idx.size:
        jj = j[idx]
        s = gen.random(idx.size) < p
        sel[idx] = s
        still = np.bincount(jj[s], minlength=n_strata) == 1
        idx = idx[still[jj]]
    return sel


def _small_codes(codes: np.ndarray, n: int) -> np.ndarray:
    # numpy's stable sort is a radix sort for 16-bit integers
    return codes.astype(np.uint16) if n <= 2**16 else codes


def _derange_segments(sizes: np.ndarray, gen: np.random.Generator) -> np.ndarray:
    """Uniform derangements of consecutive segments of the given sizes (all >= 2).

    Returns ``t`` with ``t[i] != i``, ``t[i]`` in the segment of ``i``, each
    segment's restriction an independent uniformly random derangement.
    """
    sizes = np.asarray(sizes, dtype=np.int64)
    starts = np.cumsum(sizes) - sizes
    out = np.empty(int(sizes.sum()), dtype=np.int64)
    todo = np.arange(sizes.size)
    while todo.size:
        sz = sizes[todo]
        m = int(sz.sum())
        local_start = np.cumsum(sz) - sz
        pos = np.repeat(starts[todo] - local_start, sz) + np.arange(m)
        perm = gen.permutation(m)
        if todo.size > 1:
            seg = np.repeat(np.arange(todo.size), sz)
            key = _small_codes(seg, todo.size)[perm]
            perm = perm[np.argsort(key, kind="stable")]
        else:
            seg = np.zeros(m, dtype=np.int64)
        cand = pos[perm]
        fixed = cand == pos
        bad = np.zeros(todo.size, dtype=bool)
        bad[seg[fixed]] = True
        ok = ~bad[seg]
        out[pos[ok]] = cand[ok]
        todo = todo[bad]
    return out


def _sources_global(j: np.ndarray, n_strata: int, p: float, gen) -> np.ndarray:
    """``src`` with ``k_new[i] = k_old[src[i]]`` (Algorithm 5.1, line 18)."""
    src = np.arange(j.size, dtype=np.int64)
    sel = _select(j, n_strata, p, gen)
    items = np.flatnonzero(sel)
    if items.size == 0:
        return src
    if n_strata > 1:
        jsel = j[items]
        order = np.argsort(_small_codes(jsel, n_strata), kind="stable")
        items = items[order]
        sizes = np.bincount(jsel, minlength=n_strata)
        sizes = sizes[sizes > 0]
    else:
        sizes = np.array([items.size])
    sigma = _derange_segments(sizes, gen)
    src[items] = items[sigma]
    return src


# ---------------------------------------------------------------------------
# the random permutation: secure policy (exact, from ``secrets``)
# ---------------------------------------------------------------------------


def _sources_secure(j: np.ndarray, n_strata: int, p: float, gen) -> np.ndarray:
    """Algorithm 5.1 with every random integer from ``gen`` (a SecureGenerator).

    Selection is an exact Bernoulli(p) per record (``p`` as the exact rational
    value of the double: a uniform integer below its denominator compared with
    its numerator), re-drawn while exactly one record of the stratum is
    selected; the derangement is a uniform permutation (Fisher-Yates with
    uniform integers) re-drawn while it has a fixed point.
    """
    from fractions import Fraction

    num, den = Fraction(p).as_integer_ratio()
    src = np.arange(j.size, dtype=np.int64)
    order = np.argsort(j, kind="stable")
    counts = np.bincount(j, minlength=n_strata)
    bounds = np.concatenate([[0], np.cumsum(counts)])
    for g in np.flatnonzero(counts >= 2):
        rec = order[bounds[g] : bounds[g + 1]]
        while True:
            chosen = [i for i in rec.tolist() if gen.integers(0, den) < num]
            if len(chosen) != 1:
                break
        m = len(chosen)
        if m == 0:
            continue
        while True:
            perm = list(range(m))
            for i in range(m - 1, 0, -1):
                k = gen.integers(0, i + 1)
                perm[i], perm[k] = perm[k], perm[i]
            if all(perm[i] != i for i in range(m)):
                break
        chosen = np.asarray(chosen, dtype=np.int64)
        src[chosen] = chosen[np.asarray(perm)]
    return src


# ---------------------------------------------------------------------------
# the random permutation: stratum policy (one generator per stratum)
# ---------------------------------------------------------------------------


def _root_entropy(gen: np.random.Generator) -> list[int]:
    return [int(w) for w in gen.integers(0, 2**32, size=4, dtype=np.uint64)]


def _py(v):
    if isinstance(v, np.generic):
        v = v.item()
    return v


def _stratum_key_words(key: tuple) -> list[int]:
    digest = hashlib.blake2b(repr(tuple(_py(v) for v in key)).encode(), digest_size=16).digest()
    return [int(w) for w in np.frombuffer(digest, dtype="<u4")]


def _sources_by_stratum(data: pd.DataFrame, match: list, p: float, root: list[int]) -> np.ndarray:
    n = len(data)
    src = np.arange(n, dtype=np.int64)
    j, n_strata = _group_codes(data, match)
    order = np.argsort(j, kind="stable")
    counts = np.bincount(j, minlength=n_strata)
    bounds = np.concatenate([[0], np.cumsum(counts)])
    firsts = order[bounds[:-1]]
    keys = (
        list(data[match].iloc[firsts].itertuples(index=False, name=None))
        if match
        else [()] * n_strata
    )
    for g in range(n_strata):
        n_g = int(counts[g])
        if n_g < 2:
            continue
        seq = np.random.SeedSequence(root, spawn_key=_stratum_key_words(keys[g]))
        gen = np.random.Generator(np.random.PCG64(seq))
        while True:
            s = gen.random(n_g) < p
            m = int(s.sum())
            if m != 1:
                break
        if m == 0:
            continue
        while True:
            perm = gen.permutation(m)
            if not np.any(perm == np.arange(m)):
                break
        rec = order[bounds[g] : bounds[g + 1]][s]
        src[rec] = rec[perm]
    return src


# ---------------------------------------------------------------------------
# the release: H(Z) on the cells allowed by c_Swap, with c_Swap as invariants
# ---------------------------------------------------------------------------


def _jsonable(v):
    v = _py(v)
    if v is None or v is pd.NA or v is pd.NaT:
        return None
    if isinstance(v, float) and not math.isfinite(v):
        return None if math.isnan(v) else str(v)
    if isinstance(v, bool | int | float | str):
        return v
    return str(v)


def _levels(df: pd.DataFrame, cols: list, codes: np.ndarray, size: int) -> list:
    if not cols:
        return [[]] * size
    firsts = pd.Series(codes).drop_duplicates()
    pos = np.empty(size, dtype=np.int64)
    pos[firsts.to_numpy()] = firsts.index.to_numpy()
    rows = df[cols].iloc[pos].itertuples(index=False, name=None)
    return [[_jsonable(v) for v in row] for row in rows]


def _pair_codes(j, other, n_other):
    codes, uniq = pd.factorize(j * np.int64(n_other) + other, sort=True)
    return codes.astype(np.int64), np.asarray(uniq, dtype=np.int64)


def _build_release(
    *,
    j,
    k_x,
    l,
    weights,
    k_z=None,
    src=None,
    n_match,
    n_swap,
    n_rest,
    levels,
    roles,
    swap_rate,
    policy,
) -> Release:
    """Release of ``H(Z)`` with the invariants ``c_Swap`` (Definition 5.4, Alg. 5.1 line 22)."""
    jk_x, uniq_jk = _pair_codes(j, k_x, n_swap)
    jl, uniq_jl = _pair_codes(j, l, n_rest)
    if src is not None:
        jk_z = jk_x[src]
    else:
        jk_z = np.searchsorted(uniq_jk, j * np.int64(n_swap) + k_z)
    j_of_jk, k_of_jk = np.divmod(uniq_jk, n_swap)
    j_of_jl, l_of_jl = np.divmod(uniq_jl, n_rest)
    l_per_j = np.bincount(j_of_jl, minlength=n_match)
    jl_start = np.cumsum(l_per_j) - l_per_j
    rep = l_per_j[j_of_jk]
    block = np.cumsum(rep) - rep
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
            "swap": [_jsonable(c) for c in swap],
            "match": [_jsonable(c) for c in match],
            "hold": [_jsonable(c) for c in rest],
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


def table_on_release_cells(release: Release, data: pd.DataFrame) -> np.ndarray:
    """Counts of ``data`` on the cells of a :func:`permutation_swap` release.

    Use it to check the invariants of the confidential data against the
    release: ``release.invariants.check(table_on_release_cells(release, x))``.

    Examples
    --------
    >>> import pandas as pd
    >>> from invariantdp.mechanisms import permutation_swap, table_on_release_cells
    >>> df = pd.DataFrame({"county": list("aabbab"), "owned": [1, 0, 1, 0, 0, 1]})
    >>> out, rel = permutation_swap(df, swap="county", swap_rate=0.5, rng=3)
    >>> rel.invariants.check(table_on_release_cells(rel, df))  # raises if violated
    >>> bool((table_on_release_cells(rel, out) == rel.value).all())
    True
    """
    meta = release.metadata
    if release.mechanism != "permutation_swap":
        raise InvariantDPError(
            f"`release` comes from {release.mechanism!r}, not from permutation_swap."
        )
    swap, match, rest = meta["swap"], meta["match"], meta["hold"]
    _roles(data, swap, match)
    index = {}
    for role, cols in (("match", match), ("swap", swap), ("hold", rest)):
        lookup = {tuple(v): i for i, v in enumerate(meta["levels"][role])}
        codes, size = _group_codes(data, cols)
        mapping = np.empty(size, dtype=np.int64)
        for g, key in enumerate(_levels(data, cols, codes, size)):
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


# ---------------------------------------------------------------------------
# the mechanism
# ---------------------------------------------------------------------------


def permutation_swap(
    data, *, swap, match=(), swap_rate, rng=None, seed_policy=None, secure=False
) -> SwapResult:
    r"""Swap microdata with the Permutation Algorithm (Bailie, Gong & Meng, Algorithm 5.1).

    Within each stratum of the matching variables, every record is selected
    independently with probability ``swap_rate`` (the whole stratum's
    selection is drawn again when exactly one record is chosen), and the
    swapping variables of the selected records are permuted by a uniformly
    random derangement :math:`\sigma`: record ``i`` receives the swapping
    values of record :math:`\sigma(i)`.  Holding variables stay with their
    records.  The swapping invariants :math:`c_{Swap}` -- the margins
    :math:`n_{jl}` and :math:`n_{jk}` -- are unchanged (Proposition 5.3); the
    margin :math:`n_{\cdot kl}` and the interior :math:`n_{jkl}` change.  The
    mechanism is :math:`(c_{Swap}, d^u_{HamS}, \epsilon)`-DP with
    :math:`\epsilon` of Theorem 5.6, Eq. (5.1).

    Parameters
    ----------
    data : pandas.DataFrame or dask.dataframe.DataFrame
        Microdata, one row per swapping unit (e.g. household); not modified.
        Every column is a variable (drop identifiers first).
    swap : str or sequence of str
        Swapping variables :math:`V_{Swap}` (cross-classified if several).
    match : str or sequence of str, optional
        Matching variables :math:`V_{Match}` (swap key), holding columns that
        define the strata; empty (default) means a single stratum.
    swap_rate : float
        Selection probability ``p`` in (0, 1).
    rng : None, int, SeedSequence or numpy.random.Generator
        Source of randomness of a simulation (not for publication: use
        ``secure=True`` for a release to publish).
    seed_policy : {None, "global", "stratum"}
        How random draws are organised (module docstring).  ``None`` means
        ``"global"`` for pandas and ``"stratum"`` for Dask (the only policy
        Dask supports).
    secure : bool, optional
        Swap for a production release: the selections and derangements use
        exact integer sampling from :mod:`secrets` (see
        :mod:`invariantdp.secure`); ``rng`` must then be None and
        ``seed_policy`` None; pandas only.  The records are processed
        stratum by stratum in Python, about a microsecond per record.

    Returns
    -------
    SwapResult
        Named tuple ``(data, release)``.  ``data`` is the swapped DataFrame
        (same index, columns and dtypes; for Dask, a lazy DataFrame whose
        partitions each hold whole strata, rows of a stratum in their
        original order, index preserved).  ``release.value`` is the swapped
        table :math:`n^Z_{jkl}` on the cells ``(j, k, l)`` with
        :math:`n_{jk} > 0` and :math:`n_{jl} > 0` (listed in
        ``release.metadata["cells"]``, category labels in
        ``metadata["levels"]``); ``release.invariants`` maps that table to
        :math:`c_{Swap}` (rows: the :math:`n_{jl}`, then the :math:`n_{jk}`);
        ``release.guarantee`` is ``epsilon-DP`` with ``epsilon``, ``b``
        and ``swap_rate``; ``release.metadata["randomness"]`` is
        ``"secure"`` with ``secure=True`` and ``"simulation"`` otherwise.

    Raises
    ------
    ValueError
        For unknown or repeated columns, a column both swapped and matched,
        no holding column, ``swap_rate`` outside (0, 1) or empty ``data``.

    Notes
    -----
    Strata must fit in memory.  With Dask the data are shuffled on the
    matching variables (with no matching variables, gathered into one
    partition), each partition is swapped with the ``"stratum"`` policy, and
    the release needs two aggregation passes (of the input and of the
    swapped data); the lazy result recomputes to the same values.  Per-stratum
    seeds hash the matching values' ``repr``, so the matching columns must
    have the same dtypes in the Dask and pandas frames being compared.

    References
    ----------
    Bailie, Gong & Meng, "Can swapping be differentially private?",
    Algorithm 5.1, Proposition 5.3, Definition 5.4, Theorem 5.6.

    Examples
    --------
    >>> import pandas as pd
    >>> from invariantdp.mechanisms import permutation_swap, swapping_invariants
    >>> df = pd.DataFrame({
    ...     "county": ["A", "A", "B", "B", "C", "C", "A", "B"],
    ...     "size": [1, 2, 1, 2, 1, 2, 1, 2],
    ...     "owned": [1, 0, 0, 1, 1, 1, 0, 0],
    ... })
    >>> out, release = permutation_swap(
    ...     df, swap="county", match="size", swap_rate=0.5, rng=1)
    >>> swapping_invariants(out, swap="county", match="size").equals(
    ...     swapping_invariants(df, swap="county", match="size"))
    True
    >>> release.guarantee.params["b"], round(release.guarantee.params["epsilon"], 3)
    (4, 1.609)
    """
    kind, swap, match, hold, rest = _roles(data, swap, match)
    swap_rate = check_in_open_unit("swap_rate", swap_rate)
    if not isinstance(secure, bool):
        raise TypeError(
            f"`secure` must be True or False, got {type(secure).__name__} ({secure!r})."
        )
    if secure:
        if seed_policy is not None:
            raise InvariantDPError(
                f"`seed_policy` ({seed_policy!r}) must be None with `secure=True`: secure "
                "draws are not seeded."
            )
        if kind != "pandas":
            raise InvariantDPError("`secure=True` needs a pandas DataFrame; call .compute() first.")
        sgen = random_source(rng, True)
        seed_policy = "secure"
    elif seed_policy is None:
        seed_policy = "global" if kind == "pandas" else "stratum"
    if not secure and seed_policy not in ("global", "stratum"):
        raise InvariantDPError(f"`seed_policy` ({seed_policy!r}) must be 'global' or 'stratum'.")
    if kind == "dask" and seed_policy != "stratum":
        raise InvariantDPError(
            f"`seed_policy` ({seed_policy!r}) must be 'stratum' for a Dask DataFrame."
        )
    if kind == "dask" and _ROW in data.columns:
        raise InvariantDPError(f"`data` must not have a column named {_ROW!r}.")
    gen = None if secure else as_generator(rng)
    roles = (swap, match, rest)
    if kind == "dask":
        return _swap_dask(data, roles, swap_rate, _root_entropy(gen))

    j, n_match = _group_codes(data, match)
    k, n_swap = _group_codes(data, swap)
    l, n_rest = _group_codes(data, rest)
    if secure:
        src = _sources_secure(j, n_match, swap_rate, sgen)
    elif seed_policy == "global":
        src = _sources_global(j, n_match, swap_rate, gen)
    else:
        src = _sources_by_stratum(data, match, swap_rate, _root_entropy(gen))
    out = data.copy(deep=False)
    for c in swap:
        out[c] = data[c].array.take(src)
    levels = {
        "match": _levels(data, match, j, n_match),
        "swap": _levels(data, swap, k, n_swap),
        "hold": _levels(data, rest, l, n_rest),
    }
    release = _build_release(
        j=j,
        k_x=k,
        src=src,
        l=l,
        weights=None,
        n_match=n_match,
        n_swap=n_swap,
        n_rest=n_rest,
        levels=levels,
        roles=roles,
        swap_rate=swap_rate,
        policy=seed_policy,
    )
    return SwapResult(out, release)


# ---------------------------------------------------------------------------
# Dask: stratum by stratum
# ---------------------------------------------------------------------------


def _swap_partition(df: pd.DataFrame, swap, match, p, root) -> pd.DataFrame:
    df = df.sort_values(_ROW, kind="stable")
    src = _sources_by_stratum(df, match, p, root)
    out = df.drop(columns=[_ROW])
    for c in swap:
        out[c] = df[c].array.take(src)
    return out


def _add_row_numbers(df: pd.DataFrame, offsets, partition_info=None) -> pd.DataFrame:
    start = int(offsets[partition_info["number"]]) if partition_info else 0
    return df.assign(**{_ROW: np.arange(start, start + len(df), dtype=np.int64)})


def _swap_dask(ddf, roles, p, root) -> SwapResult:
    import dask

    swap, match, rest = roles
    cols = list(ddf.columns)
    lengths = ddf.map_partitions(len).compute()
    lengths = np.asarray(lengths, dtype=np.int64)
    if lengths.sum() == 0:
        raise InvariantDPError("`data` must hold at least one record, got an empty DataFrame.")
    offsets = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    meta = ddf._meta.assign(**{_ROW: np.array([], dtype=np.int64)})
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
    both = pd.concat([frame_x, frame_z], ignore_index=True)
    j, n_match = _group_codes(both, match)
    k, n_swap = _group_codes(both, swap)
    l, n_rest = _group_codes(both, rest)
    nx = len(frame_x)
    levels = {
        "match": _levels(both, match, j, n_match),
        "swap": _levels(both, swap, k, n_swap),
        "hold": _levels(both, rest, l, n_rest),
    }
    # the Z table on the X records' (j, l) with the Z records' k: recombine by weights
    jz, kz, lz = j[nx:], k[nx:], l[nx:]
    release = _build_release_weighted(
        x=(j[:nx], k[:nx], l[:nx], counts_x.to_numpy()),
        z=(jz, kz, lz, counts_z.to_numpy()),
        n_match=n_match,
        n_swap=n_swap,
        n_rest=n_rest,
        levels=levels,
        roles=roles,
        swap_rate=p,
    )
    return SwapResult(swapped, release)


def _build_release_weighted(*, x, z, n_match, n_swap, n_rest, levels, roles, swap_rate):
    """:func:`_build_release` from distinct records with counts (X and Z separately)."""
    jx, kx, lx, wx = x
    jz, kz, lz, wz = z
    # stack X then Z as one weighted record list whose "swapped k" is its own k;
    # the X part gives the invariants and b, the Z part the released table
    rel_x = _build_release(
        j=jx,
        k_x=kx,
        k_z=kx,
        l=lx,
        weights=wx,
        n_match=n_match,
        n_swap=n_swap,
        n_rest=n_rest,
        levels=levels,
        roles=roles,
        swap_rate=swap_rate,
        policy="stratum",
    )
    jk_codes = jx * np.int64(n_swap) + kx
    jl_codes = jx * np.int64(n_rest) + lx
    uniq_jk = np.unique(jk_codes)
    uniq_jl = np.unique(jl_codes)
    j_of_jl = uniq_jl // n_rest
    l_per_j = np.bincount(j_of_jl, minlength=n_match)
    jl_start = np.cumsum(l_per_j) - l_per_j
    rep = l_per_j[uniq_jk // n_swap]
    block = np.cumsum(rep) - rep
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

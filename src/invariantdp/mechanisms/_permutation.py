r"""The random permutation of the Permutation Algorithm (Bailie, Gong & Meng, Algorithm 5.1).

Given stratum codes ``j`` (the matching variables) and a swap rate ``p``,
each function returns ``src`` with ``k_new[i] = k_old[src[i]]``: every record
of a stratum of two or more is selected with probability ``p`` (the
stratum's selection drawn again while exactly one record is selected) and
the selected records are permuted by a uniformly random derangement.  The
three seed policies of :func:`~invariantdp.mechanisms.permutation_swap`:

* :func:`sources_global` -- one numpy stream, vectorised across strata;
* :func:`sources_by_stratum` -- one generator per stratum, seeded from the
  hash of its matching values (the same draws on any partitioning);
* :func:`sources_secure` -- exact integers from a
  :class:`~invariantdp.secure.SecureGenerator`.

References
----------
Bailie, Gong & Meng, "Can swapping be differentially private?",
Algorithm 5.1 (lines 6-18).
"""

from __future__ import annotations

import hashlib
from fractions import Fraction

import numpy as np
import pandas as pd

from .._frames import group_codes

__all__ = [
    "derange_segments",
    "python_scalar",
    "root_entropy",
    "select",
    "sources_by_stratum",
    "sources_global",
    "sources_secure",
]


# ---------------------------------------------------------------------------
# the random permutation: global policy, vectorised over strata
# ---------------------------------------------------------------------------


def select(j: np.ndarray, n_strata: int, p: float, gen: np.random.Generator) -> np.ndarray:
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


def derange_segments(sizes: np.ndarray, gen: np.random.Generator) -> np.ndarray:
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


def sources_global(j: np.ndarray, n_strata: int, p: float, gen) -> np.ndarray:
    """``src`` with ``k_new[i] = k_old[src[i]]`` (Algorithm 5.1, line 18)."""
    src = np.arange(j.size, dtype=np.int64)
    sel = select(j, n_strata, p, gen)
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
    sigma = derange_segments(sizes, gen)
    src[items] = items[sigma]
    return src


# ---------------------------------------------------------------------------
# the random permutation: secure policy (exact, from ``secrets``)
# ---------------------------------------------------------------------------


def sources_secure(j: np.ndarray, n_strata: int, p: float, gen) -> np.ndarray:
    """Algorithm 5.1 with every random integer from ``gen`` (a SecureGenerator).

    Selection is an exact Bernoulli(p) per record (``p`` as the exact rational
    value of the double: a uniform integer below its denominator compared with
    its numerator), re-drawn while exactly one record of the stratum is
    selected; the derangement is a uniform permutation (Fisher-Yates with
    uniform integers) re-drawn while it has a fixed point.
    """
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


def root_entropy(gen: np.random.Generator) -> list[int]:
    return [int(w) for w in gen.integers(0, 2**32, size=4, dtype=np.uint64)]


def python_scalar(v):
    """A numpy scalar as the Python scalar it holds (anything else unchanged)."""
    if isinstance(v, np.generic):
        v = v.item()
    return v


def _stratum_key_words(key: tuple) -> list[int]:
    digest = hashlib.blake2b(
        repr(tuple(python_scalar(v) for v in key)).encode(), digest_size=16
    ).digest()
    return [int(w) for w in np.frombuffer(digest, dtype="<u4")]


def sources_by_stratum(data: pd.DataFrame, match: list, p: float, root: list[int]) -> np.ndarray:
    n = len(data)
    src = np.arange(n, dtype=np.int64)
    j, n_strata = group_codes(data, match)
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

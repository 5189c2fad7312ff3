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
* :func:`sources_secure` -- exact draws from a
  :class:`~invariantdp.secure.SecureGenerator`, with work that depends on
  the stratum sizes only (not on which records swap).

References
----------
Bailie, Gong & Meng, "Can swapping be differentially private?",
Algorithm 5.1 (lines 6-18).
"""

from __future__ import annotations

import hashlib
import math
from fractions import Fraction

import numpy as np
import pandas as pd

from .._frames import group_codes
from ..distributions import (
    MAX_ROUNDS,
    cached_plan,
    compare,
    exp_neg_bounds,
    lazy_less,
    random_words,
    too_many_rounds,
)
from ..exceptions import InvariantDPError

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
# the random permutation: secure policy (exact, from ``secrets``, constant work)
# ---------------------------------------------------------------------------

#: derangement attempts are thinned to this acceptance, whatever the number selected
_ACCEPT = Fraction(1, 3)
#: the thresholds of q(m) are tabled exactly up to at least this m (beyond, one serves)
_THIN_TABLE = 40


def _thinning(m: int) -> Fraction:
    """``q(m) = m! / (3 d(m))``: with it, an attempt is kept with probability 1/3 for every m.

    A uniform permutation of ``m`` records has no fixed point with probability
    ``d(m) / m!`` (``d`` the derangement numbers; 1 for ``m = 0``); ``q(m)``
    lies in ``[2/3, 1]`` for ``m >= 2`` (its smallest, ``2/3``, at ``m = 2``).
    """
    d, f = 1, 1  # d(0), 0!
    for i in range(1, m + 1):
        d, f = i * d + (-1) ** i, f * i
    return _ACCEPT * f / d


class _Thinning:
    """Fixed-point thresholds of ``q(m)``: exact up to ``size``, one shared beyond."""

    def __init__(self, words: int):
        self.words = words
        bits = 64 * words
        # beyond T, |d(m)/m! - 1/e| <= 1/(T+2)! < 2**-(B + 32): one threshold serves
        self.size = next(
            m for m in range(_THIN_TABLE, 400) if math.factorial(m + 2) > 2 ** (bits + 32)
        )
        exact = [_thinning(m) if m != 1 else Fraction(1) for m in range(self.size + 1)]
        lo, hi = exp_neg_bounds(Fraction(1), int((bits + 64) * 0.302) + 10)
        slack = Fraction(1, math.factorial(self.size + 2))
        far = (_ACCEPT / (hi + slack), _ACCEPT / (lo - slack))
        # q(3) = 1: the threshold 2**B - 1 and its tie (theta = 1) keep it exact
        ints = [min(math.floor(q * 2**bits), 2**bits - 1) for q in exact]
        c_far = math.floor(far[0] * 2**bits)
        if c_far != math.floor(far[1] * 2**bits):
            raise InvariantDPError("the swap's thinning threshold could not be decided.")
        ints.append(c_far)
        self.ints = ints
        self.table = np.array(
            [[(c >> (64 * (words - 1 - w))) & ((1 << 64) - 1) for w in range(words)] for c in ints],
            dtype=np.uint64,
        )

    def test(self, m: np.ndarray, gen) -> np.ndarray:
        """``Bernoulli(q(m))`` per stratum (a tie, probability ``2**-B``, resolved exactly)."""
        idx = np.minimum(m, self.size + 1)
        u = random_words(gen, (m.size, self.words))
        less, tie = compare(u, self.table[idx])
        for i in np.flatnonzero(tie):
            bits = 64 * self.words
            theta = _thinning(int(m[i])) * 2**bits - self.ints[int(idx[i])]
            less[i] = lazy_less(lambda level, t=theta: (t, t), gen)
        return less


def _radix_order(keys: np.ndarray, sid: np.ndarray) -> np.ndarray:
    """Stable order by ``(sid, key)``: LSD radix passes on 16-bit digits, the same for any keys."""
    order = np.arange(keys.size)
    for shift in range(0, 64, 16):
        digit = ((keys[order] >> np.uint64(shift)) & np.uint64(0xFFFF)).astype(np.uint16)
        order = order[np.argsort(digit, kind="stable")]
    top = max(int(sid.max()) if sid.size else 0, 1).bit_length()
    for shift in range(0, top, 16):
        digit = ((sid[order] >> shift) & 0xFFFF).astype(np.uint16)
        order = order[np.argsort(digit, kind="stable")]
    return order


def _select_secure(seg: np.ndarray, n_seg: int, p: float, gen) -> np.ndarray:
    """Exact ``Bernoulli(p)`` per record (``p`` dyadic: a comparison of enough random words),
    each segment drawn again while exactly one of its records is selected."""
    num, den = Fraction(p).as_integer_ratio()
    words = -(-(den.bit_length() - 1) // 64)
    c = num << (64 * words - (den.bit_length() - 1))
    threshold = np.array([(c >> (64 * (words - 1 - w))) & ((1 << 64) - 1) for w in range(words)])
    threshold = threshold.astype(np.uint64)
    sel = np.empty(seg.size, dtype=bool)
    todo = np.arange(seg.size)
    for _ in range(MAX_ROUNDS):
        if todo.size == 0:
            return sel
        sel[todo] = compare(random_words(gen, (todo.size, words)), threshold)[0]
        one = np.bincount(seg[sel], minlength=n_seg) == 1
        todo = np.flatnonzero(one[seg])
    raise too_many_rounds("swap selection")


def sources_secure(j: np.ndarray, n_strata: int, p: float, gen) -> tuple[np.ndarray, Fraction]:
    """Algorithm 5.1 with exact draws from ``gen`` (a SecureGenerator) and constant work.

    Returns ``(src, tv)``.  The run time must not depend on which records
    swap (it would add to what the release reveals), so every
    stratum of ``n >= 2`` records does work that depends on ``n`` only:

    * selection: one exact ``Bernoulli(p)`` per record (``p``, a double, is
      dyadic: a comparison of random words decides it exactly), the stratum
      drawn again while exactly one record is selected (i.i.d. redraws: their
      number is independent of the selection kept);
    * derangement: an attempt gives every record of the stratum a random
      64-bit key, sorts the stratum by key with the same radix passes
      whatever the keys, maps the ``a``-th selected record (in row order) to
      the ``a``-th selected one in key order (a uniform permutation of the
      ``m`` selected), and is kept iff it has no fixed point, no two keys of
      the stratum are equal, and a ``Bernoulli(m! / (3 d(m)))`` succeeds.
      The kept permutation is a uniform derangement, and every attempt is
      kept with probability ``1/3`` (times the chance of distinct keys),
      whatever ``m``: the number of attempts says nothing about ``m``.

    ``tv`` bounds the probability that a kept attempt resolved a tie of its
    thinning test on the slow path, the only work that depends on the draw.
    """
    src = np.arange(j.size, dtype=np.int64)
    counts = np.bincount(j, minlength=n_strata)
    active = np.flatnonzero(counts >= 2)
    if active.size == 0:
        return src, Fraction(0)
    order = np.argsort(j, kind="stable")
    keep = (counts >= 2)[j[order]]
    rec = order[keep]  # records of active strata, grouped by stratum in row order
    new_id = np.full(n_strata, -1, dtype=np.int64)
    new_id[active] = np.arange(active.size)
    seg = new_id[j[rec]]
    sel = _select_secure(seg, active.size, p, gen)
    m = np.bincount(seg[sel], minlength=active.size)
    words = 3  # ties 2**-192: the run time adds below 2**-64 to delta up to epsilon ~80
    thin = cached_plan("swap thinning", words, lambda: _Thinning(words))
    pending = np.arange(active.size)
    for _ in range(MAX_ROUNDS):
        if pending.size == 0:
            # a kept attempt (probability >= 1/6) resolved its thinning tie (2**-B) slowly
            return src, active.size * Fraction(6, 2 ** (64 * words))
        playing = np.zeros(active.size, dtype=bool)
        playing[pending] = True
        pos = np.flatnonzero(playing[seg])  # the pending strata's positions, still grouped
        ok, target = _attempt(seg[pos], sel[pos], pos, gen)
        ok &= thin.test(m[pending], gen)  # ``ok`` lists the pending strata in order
        won = np.zeros(active.size, dtype=bool)
        won[pending[ok]] = True
        chosen = won[seg[pos]] & sel[pos]
        src[rec[pos[chosen]]] = rec[target[chosen]]
        pending = pending[~ok]
    raise too_many_rounds("swap derangement")


def _attempt(seg: np.ndarray, sel: np.ndarray, pos: np.ndarray, gen):
    """One derangement attempt for the strata of ``seg`` (sorted): ``(ok per stratum, target)``.

    ``pos`` are the positions (in the grouped record order) of the records;
    ``target[i]`` is the position whose swapping values record ``i`` receives
    (meaningful for selected records).  ``ok`` tells, for each stratum in
    order, whether the attempt has no fixed point and distinct keys.
    """
    n = seg.size
    starts = np.flatnonzero(np.concatenate([[True], seg[1:] != seg[:-1]]))
    local = np.cumsum(np.concatenate([[0], (seg[1:] != seg[:-1]).astype(np.int64)]))
    n_local = starts.size
    keys = random_words(gen, (n,))
    order = _radix_order(keys, local)
    ties = np.zeros(n_local, dtype=bool)
    same = (local[order][1:] == local[order][:-1]) & (keys[order][1:] == keys[order][:-1])
    ties[local[order][1:][same]] = True
    # rank of each selected record among the selected of its stratum: in row order, in key order
    base = starts  # every stratum's records are contiguous in seg, from starts[k]
    csum = np.cumsum(sel) - sel
    rank_row = csum - csum[base][local]
    sel_key = sel[order]
    csum_k = np.cumsum(sel_key) - sel_key
    seg_key = local[order]
    rank_key = csum_k - csum_k[base][seg_key]  # strata keep their blocks after the sort
    slot = np.where(sel_key, base[seg_key] + rank_key, n)
    by_rank = np.empty(n + 1, dtype=np.int64)
    by_rank[slot] = order  # the selected, in key order, at their stratum's offset
    target_local = by_rank[np.where(sel, base[local] + rank_row, n)]
    fixed = sel & (target_local == np.arange(n))
    has_fixed = np.bincount(local[fixed], minlength=n_local) > 0
    ok = ~has_fixed & ~ties
    target = pos[np.minimum(target_local, n - 1)]
    return ok, target


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

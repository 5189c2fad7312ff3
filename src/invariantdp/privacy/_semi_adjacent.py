r"""The semi-adjacent parameter a(t) of Semi-DP (Cho & Awan, Definition 13).

Given an invariant ``t = T(X*)``, Semi-DP restricts the data space to the
invariant-conforming data sets :math:`D_t = \{X \in D : T(X) = t\}` and calls
two of them adjacent when they are within distance :math:`a(t)`; a mechanism
that is f-DP on the full space is then :math:`f^{\circ a(t)}`-semi-DP
(Proposition 15).  :math:`a(t)` is the worst-case number of record changes
needed to replace one individual's record ``x`` by another value ``y`` while
keeping the invariant.

Two readings of Definition 13
-----------------------------
Definition 13 is printed as

.. math:: a(t) = \sup_{i}\ \sup_{x, y \in D_t^i}\
          \inf\{d(X, Y) : X, Y \in D_t,\ X_i = x,\ Y_i = y\},

with the infimum over *both* data sets.  Read literally, with exchangeable
records and a count invariant this is never above 2 (take ``X`` holding ``x``
at ``i`` and ``y`` at ``j``, and ``Y`` the same data set with the two records
swapped), which contradicts the paper's own Example 5 (a(t) = 3 for the
one-way margins of a 2 x 2 table), the proof of Theorem 16 (which fixes the
data set and counts the changes it needs) and Remark 14 (a(t) must guarantee
that *every* data set in :math:`D_t` has a counterpart within a(t)).  The
reading that matches Examples 3 and 5, Theorem 16 and Remark 14 takes the
worst case over the starting data set:

.. math:: a(t) = \sup_{i}\ \sup_{X \in D_t}\ \sup_{y \in D_t^i}\
          \min\{d(X, Y) : Y \in D_t,\ Y_i = y\}.

:func:`semi_adjacent_parameter` computes this ``form="sup-inf"`` by default,
and the literal formula with ``form="inf-inf"``.

References
----------
.. [1] Cho, J. and Awan, J. "Formal privacy guarantees with invariant
   statistics", Definition 13, Examples 3 and 5, Theorem 16, Proposition 15,
   Remark 14.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence

import numpy as np

from .._validation import InvariantDPError, check_counts, check_positive_int

__all__ = [
    "one_way_margins_semi_adjacent_parameter",
    "semi_adjacent_parameter",
    "semi_adjacent_upper_bound",
]

#: largest data space |X|^n enumerated by the exact search
MAX_DATA_SPACE = 2_000_000
#: largest number of invariant-conforming data sets compared pairwise
MAX_FIBRE = 5_000

_FORMS = ("sup-inf", "inf-inf")


def _same(u, v) -> bool:
    if isinstance(u, np.ndarray) or isinstance(v, np.ndarray):
        return bool(np.array_equal(np.asarray(u), np.asarray(v)))
    try:
        return bool(u == v)
    except ValueError:  # e.g. tuples holding arrays
        return bool(np.array_equal(np.asarray(u, dtype=object), np.asarray(v, dtype=object)))


def semi_adjacent_parameter(
    invariant: Callable,
    t,
    *,
    record_space: Sequence,
    n: int,
    distance: str | Callable = "hamming",
    form: str = "sup-inf",
) -> int:
    r"""Semi-adjacent parameter a(t) by exhaustive search (Definition 13).

    Enumerates the data space :math:`D = \mathcal{X}^n`, keeps the fibre
    :math:`D_t = \{X : T(X) = t\}`, computes all pairwise distances inside it
    and evaluates the sup/inf of Definition 13 exactly.  Meant for small
    discrete data spaces (at most ``MAX_DATA_SPACE`` data sets, and at most
    ``MAX_FIBRE`` of them in the fibre).

    Parameters
    ----------
    invariant : callable
        ``T``: maps a data set (a tuple of ``n`` records) to its invariant
        value; compared with ``t`` by ``==`` (arrays by value).
    t : object
        The invariant value ``T(X*)`` of the confidential data.
    record_space : sequence
        The finite record universe :math:`\mathcal{X}` (hashable records,
        e.g. ints or tuples of feature levels).
    n : int
        Number of records in every data set (bounded DP), ``n >= 1``.
    distance : {"hamming"} or callable, optional
        Adjacency metric ``d(X, Y)`` on :math:`D` (Definition 1).  The default
        is the Hamming distance, the number of records that differ.
    form : {"sup-inf", "inf-inf"}, optional
        ``"sup-inf"`` (default): worst case over the starting data set
        :math:`X \in D_t` of the fewest changes to put ``y`` at position
        ``i``, the reading used by the paper's Examples 3 and 5 and
        Theorem 16.  ``"inf-inf"``: the formula as printed in Definition 13,
        with the infimum over both data sets (see the module notes).

    Returns
    -------
    int
        a(t); 0 when :math:`D_t` holds a single data set.

    Raises
    ------
    ValueError
        If no data set of the space has invariant ``t``, or the space is too
        large to enumerate.

    References
    ----------
    Cho & Awan, Definition 13 and Example 3.

    Examples
    --------
    Example 3 of the paper: three binary records with their count invariant.

    >>> from invariantdp.privacy._semi_adjacent import semi_adjacent_parameter
    >>> count = lambda X: sum(X)
    >>> semi_adjacent_parameter(count, 2, record_space=[0, 1], n=3)
    2
    >>> semi_adjacent_parameter(count, 0, record_space=[0, 1], n=3)
    0
    """
    if not callable(invariant):
        raise TypeError(f"`invariant` must be callable, got {type(invariant).__name__}.")
    if form not in _FORMS:
        raise InvariantDPError(f"`form` ({form!r}) must be one of {', '.join(map(repr, _FORMS))}.")
    n = check_positive_int("n", n)
    records = list(record_space)
    if not records:
        raise InvariantDPError("`record_space` ([]) must not be empty.")
    if len(set(records)) != len(records):
        raise InvariantDPError("`record_space` must not repeat records.")
    if len(records) ** n > MAX_DATA_SPACE:
        raise InvariantDPError(
            f"`record_space` ({len(records)} records) and `n` ({n}) give "
            f"{len(records)}^{n} data sets; the exact search handles at most {MAX_DATA_SPACE}."
        )
    if distance != "hamming" and not callable(distance):
        raise InvariantDPError(f"`distance` ({distance!r}) must be 'hamming' or a callable.")

    fibre = [
        idx
        for idx in itertools.product(range(len(records)), repeat=n)
        if _same(invariant(tuple(records[k] for k in idx)), t)
    ]
    if not fibre:
        raise InvariantDPError(f"`t` ({t!r}) is not the invariant of any data set in the space.")
    if len(fibre) > MAX_FIBRE:
        raise InvariantDPError(
            f"the fibre D_t holds {len(fibre)} data sets; the exact search compares at most "
            f"{MAX_FIBRE} pairwise."
        )
    codes = np.array(fibre, dtype=np.int64)  # (m, n) record indices
    m = codes.shape[0]
    if distance == "hamming":
        dist = np.zeros((m, m), dtype=np.int64)
        for j in range(n):
            dist += codes[:, j, None] != codes[None, :, j]
    else:
        sets = [tuple(records[k] for k in row) for row in fibre]
        dist = np.array([[distance(a, b) for b in sets] for a in sets], dtype=float)
        if np.any(dist < 0) or not np.all(np.isfinite(dist)):
            raise InvariantDPError("`distance` must return finite non-negative values.")

    best = 0
    for i in range(n):
        labels = codes[:, i]
        values = np.unique(labels)
        # column-wise minimum over the Y with Y_i = y, for every y in D_t^i: shape (m, |D_t^i|)
        to_y = np.stack([dist[:, labels == y].min(axis=1) for y in values], axis=1)
        if form == "sup-inf":
            worst = to_y.max()
        else:
            # inf over X with X_i = x as well, then sup over (x, y)
            worst = max(to_y[labels == x].min(axis=0).max() for x in values)
        best = max(best, worst)
    return int(round(float(best)))


def _margins_list(margins) -> list[np.ndarray]:
    if isinstance(margins, np.ndarray) and margins.ndim == 1:
        margins = [margins]
    try:
        out = [check_counts(f"margins[{j}]", m) for j, m in enumerate(margins)]
    except TypeError:
        raise TypeError(
            "`margins` must be a sequence of one-way margins (arrays of level counts)."
        ) from None
    if not out:
        raise InvariantDPError("`margins` must hold at least one feature's counts.")
    for j, m in enumerate(out):
        if m.ndim != 1 or m.size < 1:
            raise InvariantDPError(f"`margins[{j}]` must be a 1-d array of level counts.")
    totals = {int(m.sum()) for m in out}
    if len(totals) != 1:
        raise InvariantDPError(
            f"`margins` total {sorted(totals)}; the one-way margins of one data set"
            " share one total."
        )
    return out


def one_way_margins_semi_adjacent_parameter(margins) -> int:
    r"""Closed form of a(t) when the invariant is the one-way margins of p <= 2 features.

    The records have ``p`` categorical features and ``t`` is the tuple of
    their level counts (Section 3.4, :math:`\mathbf{T}(X)`); the adjacency
    metric is the Hamming distance.  Let a feature *vary* when at least two
    of its levels have non-zero counts.

    * No feature varies: every record is fixed, :math:`a(t) = 0`.
    * One varying feature (e.g. a single invariant count such as a state's
      population): :math:`a(t) = 2` -- change the individual, then one
      record with the new level back to the old one.
    * Two varying features, an ``r x c`` table with invariant row sums
      :math:`r_k` and column sums :math:`c_l` (total ``n``):
      :math:`a(t) = 3` when some table with these margins has an individual
      ``x`` and an empty cell ``y`` differing from ``x`` in both features
      (Example 5), which happens exactly when
      :math:`\min_{r_k > 0} r_k + \min_{c_l > 0} c_l \le n - 1`; otherwise
      :math:`a(t) = 2`.

    Both agree with :func:`semi_adjacent_parameter` and with Theorem 16's
    bound :math:`a(t) \le p + 1`.  For ``p >= 3`` no closed form is known
    (the worst case becomes a set-cover problem), so Theorem 16's bound
    ``p + 1`` is returned: it is attained for some margins and a guarantee
    stated at a larger ``a`` is weaker, hence always valid.  The exact search
    :func:`semi_adjacent_parameter` gives the exact value on small data spaces.

    Parameters
    ----------
    margins : sequence of array_like
        One array of level counts per feature (all with the same total ``n``);
        a single 1-d array is one feature.

    Returns
    -------
    int

    References
    ----------
    Cho & Awan, Theorem 16, Example 5, Section 6.1 (one count: a(t) = 2).

    Examples
    --------
    >>> from invariantdp.privacy._semi_adjacent import one_way_margins_semi_adjacent_parameter
    >>> one_way_margins_semi_adjacent_parameter([[30, 20]])  # one invariant count
    2
    >>> one_way_margins_semi_adjacent_parameter([[3, 2], [4, 1]])  # 2 x 2 one-way margins
    3
    """
    ms = _margins_list(margins)
    n = int(ms[0].sum())
    varying = [m[m > 0] for m in ms if np.count_nonzero(m) >= 2]
    p = len(varying)
    if p == 0:
        return 0
    if p == 1:
        return 2
    if p == 2:
        return 3 if int(varying[0].min()) + int(varying[1].min()) <= n - 1 else 2
    # no closed form is known for p >= 3 (a set-cover problem): Theorem 16's
    # bound is attained for some margins and is always a valid (safe) a(t)
    return semi_adjacent_upper_bound(p)


def semi_adjacent_upper_bound(p) -> int:
    r"""Theorem 16: with the one-way margins of ``p`` features invariant, :math:`a(t) \le p + 1`.

    The bound is attained, e.g. for three binary features and four records
    with margins ``(3, 1)`` each, and it is the value used by Corollary 18,
    :math:`(D_t, A_{a(t)}, f^{\circ(p+1)})`-DP.

    Parameters
    ----------
    p : int
        Number of features whose one-way margins are invariant, ``p >= 1``.

    Returns
    -------
    int
        ``p + 1``.

    References
    ----------
    Cho & Awan, Theorem 16 and Corollary 18.

    Examples
    --------
    >>> from invariantdp.privacy._semi_adjacent import semi_adjacent_upper_bound
    >>> semi_adjacent_upper_bound(2)  # r x c table with invariant one-way margins
    3
    """
    return check_positive_int("p", p) + 1

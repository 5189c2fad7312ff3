r"""Privacy accounting of data swapping (Bailie, Gong & Meng, Theorem 5.6).

The Permutation Algorithm (Algorithm 5.1, :func:`invariantdp.mechanisms.permutation_swap`)
selects each record of a matching stratum with probability ``p`` (the swap
rate) and permutes the swapping variables of the selected records by a
uniformly random derangement.  Conditional on the swapping invariants
:math:`c_{Swap}` (the :math:`n_{jl}` and :math:`n_{jk}` margins) it is pure
:math:`\epsilon`-DP with respect to the Hamming distance :math:`d^u_{HamS}`,
with (Eq. 5.1)

.. math::

    \epsilon = \begin{cases}
        \ln(b+1) - \ln o & 0 < p \le 1/2, \\
        \max\{\ln o,\ \ln(b+1) - \ln o\} & 1/2 < p < 1,
    \end{cases}
    \qquad o = p / (1 - p),

where ``b`` is the size of the largest matching stratum that holds at least
two different records (``epsilon = 0`` when ``b = 0``).

Written in terms of :math:`L = \ln(b+1)`, the map ``p -> epsilon`` falls
from ``+inf`` (``p -> 0``) to its minimum :math:`\epsilon_b = L/2` at
:math:`p_b = \sqrt{b+1} / (1 + \sqrt{b+1})` and rises again to ``+inf``
(``p -> 1``); every :math:`\epsilon > \epsilon_b` is attained by exactly two
swap rates, :math:`\operatorname{expit}(L - \epsilon)` and
:math:`\operatorname{expit}(\epsilon)`.

Note on Figure 2.1 of the paper: its text quotes, for ``b = 10``,
:math:`\epsilon_b = 1.15` and the rates 33.2% and 95.2% for ``epsilon = 3``.
These are the values of Eq. 5.1 with :math:`\ln b` in place of
:math:`\ln(b+1)`; Theorem 5.6 (implemented here) gives 1.20, 35.4% and 95.3%.
The tables (5.2, 6.3) have ``b`` above 10^4, where the two agree to two
decimals.

References
----------
.. [1] Bailie, J., Gong, R. and Meng, X.-L. "Can swapping be differentially
   private? A refreshment stirred, not shaken", Theorem 5.6 (Eq. 5.1),
   Appendix A, Tables 5.2 and 6.3.
"""

from __future__ import annotations

import operator
from typing import NamedTuple

import numpy as np
import pandas as pd
from scipy import special

from .._frames import as_columns, check_columns, check_frame, group_codes
from .._validation import InvariantDPError, check_epsilon, check_in_open_unit

__all__ = [
    "MinimumSwappingEpsilon",
    "largest_stratum",
    "min_swapping_epsilon",
    "swap_rate_for_epsilon",
    "swapping_epsilon",
]


# ---------------------------------------------------------------------------
# argument checks
# ---------------------------------------------------------------------------


def _check_b_scalar(b, *, allow_zero: bool = True) -> int:
    if isinstance(b, bool):
        raise TypeError(f"`b` must be an integer, got bool ({b!r}).")
    if isinstance(b, float | np.floating):
        if not np.isfinite(b) or b != np.round(b):
            raise InvariantDPError(f"`b` ({b}) must be a whole number of records.")
        b = int(b)
    try:
        b = operator.index(b)
    except TypeError:
        raise TypeError(f"`b` must be an integer, got {type(b).__name__} ({b!r}).") from None
    if b < 0:
        raise InvariantDPError(f"`b` ({b}) must be >= 0.")
    if b == 1:
        raise InvariantDPError(
            "`b` (1) must be 0 or >= 2: it is the size of the largest stratum holding at "
            "least two different records (Theorem 5.6)."
        )
    if b == 0 and not allow_zero:
        raise InvariantDPError(
            "`b` (0) must be >= 2 here: with b = 0 every swap rate gives epsilon = 0."
        )
    return b


def _check_b_array(b) -> np.ndarray:
    arr = np.asarray(b)
    if arr.dtype == bool or arr.dtype.kind not in "iuf":
        raise TypeError(f"`b` must hold integers, got dtype {arr.dtype}.")
    if arr.dtype.kind == "f" and (not np.all(np.isfinite(arr)) or not np.all(arr == np.round(arr))):
        raise InvariantDPError("`b` must hold whole numbers of records.")
    if np.any(arr < 0):
        raise InvariantDPError(f"`b` ({arr[arr < 0].flat[0]}) must be >= 0.")
    if np.any(arr == 1):
        raise InvariantDPError(
            "`b` (1) must be 0 or >= 2: it is the size of the largest stratum holding at "
            "least two different records (Theorem 5.6)."
        )
    return arr.astype(float)


def _check_swap_rate_array(p) -> np.ndarray:
    arr = np.asarray(p)
    if arr.dtype == bool or arr.dtype.kind not in "iuf":
        raise TypeError(f"`swap_rate` must hold real numbers, got dtype {arr.dtype}.")
    arr = arr.astype(float)
    bad = ~((arr > 0.0) & (arr < 1.0))
    if np.any(bad):
        raise InvariantDPError(f"`swap_rate` ({arr[bad].flat[0]}) must be in (0, 1).")
    return arr


# ---------------------------------------------------------------------------
# Theorem 5.6
# ---------------------------------------------------------------------------


def swapping_epsilon(b, swap_rate):
    r"""Privacy loss :math:`\epsilon` of the Permutation Algorithm (Theorem 5.6, Eq. 5.1).

    .. math::

        \epsilon = \ln(b+1) - \ln o \ \ (0 < p \le 1/2), \qquad
        \epsilon = \max\{\ln o, \ln(b+1) - \ln o\} \ \ (1/2 < p < 1),

    with :math:`o = p/(1-p)`, and :math:`\epsilon = 0` when ``b = 0``.  The
    guarantee is :math:`(c_{Swap}, d^u_{HamS}, \epsilon)`-DP: pure
    :math:`\epsilon`-DP among data sets with the same swapping invariants,
    with the swapped records (e.g. households) as privacy units.

    Parameters
    ----------
    b : int or array_like of int
        Size of the largest matching stratum holding at least two different
        records (:func:`largest_stratum`); 0 or >= 2.
    swap_rate : float or array_like
        The swap rate ``p`` in (0, 1).  ``b`` and ``swap_rate`` broadcast.

    Returns
    -------
    float or numpy.ndarray
        :math:`\epsilon` (a float when both arguments are scalars).

    Raises
    ------
    ValueError
        If ``b`` is negative, 1 or fractional, or ``swap_rate`` is outside
        (0, 1) (at ``p`` = 0 or 1 no finite epsilon exists, Theorem 5.6).

    References
    ----------
    Bailie, Gong & Meng, Theorem 5.6, Eq. (5.1); Tables 5.2 and 6.3.

    Examples
    --------
    Table 5.2 (Massachusetts 1940, ``b = 264,331`` two-person households):

    >>> from invariantdp.privacy import swapping_epsilon
    >>> [round(swapping_epsilon(264_331, p), 2) for p in (0.01, 0.05, 0.10, 0.50)]
    [17.08, 15.43, 14.68, 12.48]
    """
    scalar = np.ndim(b) == 0 and np.ndim(swap_rate) == 0
    if scalar:
        b_val = float(_check_b_scalar(b))
        p = check_in_open_unit("swap_rate", swap_rate)
        return float(_epsilon(np.float64(b_val), np.float64(p)))
    return _epsilon(_check_b_array(b), _check_swap_rate_array(swap_rate))


def _epsilon(b, p):
    log_b1 = np.log1p(b)
    log_o = special.logit(p)
    low = log_b1 - log_o
    eps = np.where(p <= 0.5, low, np.maximum(log_o, low))
    return np.where(b == 0, 0.0, eps)


def swap_rate_for_epsilon(epsilon, b) -> tuple[float, ...]:
    r"""All swap rates ``p`` at which the Permutation Algorithm has privacy loss ``epsilon``.

    Inverts Eq. (5.1).  With :math:`L = \ln(b+1)` the attainable losses are
    :math:`\epsilon \ge \epsilon_b = L/2`; each :math:`\epsilon > \epsilon_b`
    is attained by two rates,

    .. math::

        p_- = \operatorname{expit}(L - \epsilon), \qquad
        p_+ = \operatorname{expit}(\epsilon),

    (``p_-`` is on the branch :math:`\epsilon = \ln(b+1) - \ln o`, below
    :math:`p_b`; ``p_+`` on :math:`\epsilon = \ln o`, above it) and
    :math:`\epsilon_b` by :math:`p_b` alone.  ``p_-`` is at most 1/2 exactly
    when :math:`\epsilon \ge L`.

    Parameters
    ----------
    epsilon : float
        Target privacy loss, > 0.
    b : int
        Largest stratum size (:func:`largest_stratum`), >= 2.

    Returns
    -------
    tuple of float
        The swap rates in increasing order: two, one (at
        :math:`\epsilon_b`) or none (below :math:`\epsilon_b`; see
        :func:`min_swapping_epsilon`).

    References
    ----------
    Bailie, Gong & Meng, Theorem 5.6, Eq. (5.1) and Figure 2.1.

    Examples
    --------
    >>> from invariantdp.privacy import swap_rate_for_epsilon, swapping_epsilon
    >>> low, high = swap_rate_for_epsilon(3.0, 10)
    >>> round(low, 3), round(high, 3)
    (0.354, 0.953)
    >>> round(swapping_epsilon(10, low), 12), round(swapping_epsilon(10, high), 12)
    (3.0, 3.0)
    >>> swap_rate_for_epsilon(1.0, 10)
    ()
    """
    epsilon = check_epsilon(epsilon)
    b = _check_b_scalar(b, allow_zero=False)
    half = 0.5 * np.log1p(b)
    if epsilon < half:
        return ()
    low = float(special.expit(2.0 * half - epsilon))
    high = float(special.expit(epsilon))
    return (low,) if low >= high else (low, high)


class MinimumSwappingEpsilon(NamedTuple):
    r"""Smallest attainable privacy loss of swapping and the rate attaining it.

    Attributes
    ----------
    epsilon : float
        :math:`\epsilon_b = \frac12 \ln(b + 1)`, below which no swap rate
        gives the Permutation Algorithm epsilon-DP.
    swap_rate : float
        The swap rate :math:`p_b = \sqrt{b+1} / (1 + \sqrt{b+1})` attaining it.

    References
    ----------
    Bailie, Gong & Meng, Theorem 5.6 and Figure 2.1 (outlined diamonds).

    Examples
    --------
    >>> res = min_swapping_epsilon(10)
    >>> round(res.epsilon, 3), round(res.swap_rate, 3)
    (1.199, 0.768)
    """

    epsilon: float
    swap_rate: float


def min_swapping_epsilon(b) -> MinimumSwappingEpsilon:
    r"""Smallest privacy loss :math:`\epsilon_b` of the Permutation Algorithm at ``b``.

    Eq. (5.1) is minimised where its two branches for ``p > 1/2`` meet,
    :math:`\ln o = \ln(b+1) - \ln o`:

    .. math:: \epsilon_b = \tfrac12 \ln(b+1), \qquad
              p_b = \frac{\sqrt{b+1}}{1 + \sqrt{b+1}}.

    Parameters
    ----------
    b : int
        Largest stratum size, >= 2.

    Returns
    -------
    MinimumSwappingEpsilon
        Named tuple ``(epsilon, swap_rate)``.

    References
    ----------
    Bailie, Gong & Meng, Theorem 5.6 and Figure 2.1 (outlined diamonds).

    Examples
    --------
    >>> from invariantdp.privacy import min_swapping_epsilon
    >>> m = min_swapping_epsilon(10**6)
    >>> round(m.epsilon, 2), round(m.swap_rate, 3)
    (6.91, 0.999)
    """
    b = _check_b_scalar(b, allow_zero=False)
    half = 0.5 * float(np.log1p(b))
    return MinimumSwappingEpsilon(half, float(special.expit(half)))


# ---------------------------------------------------------------------------
# b from data
# ---------------------------------------------------------------------------


def _largest_from_codes(j: np.ndarray, row: np.ndarray, weights=None) -> int:
    """``b`` from stratum codes ``j`` and record codes ``row`` (optionally weighted)."""
    if j.size == 0:
        return 0
    n_j = np.bincount(j, weights=weights)
    ext = pd.DataFrame({"j": j, "row": row}).groupby("j", sort=True)["row"].agg(["min", "max"])
    varied = np.zeros(n_j.size, dtype=bool)
    varied[ext.index.to_numpy()] = (ext["min"] != ext["max"]).to_numpy()
    return int(n_j[varied].max()) if varied.any() else 0


def largest_stratum(data, match=()) -> int:
    r"""``b`` of Theorem 5.6: the largest matching stratum with two different records.

    .. math:: b = \max\{0,\ n_j : \text{stratum } j \text{ holds at least two
              different records}\}

    A record is a whole row of ``data`` (all its columns), so pass only the
    variables that take part in the swap (swapping and holding variables).

    Parameters
    ----------
    data : pandas.DataFrame or dask.dataframe.DataFrame
        The confidential microdata, one row per swapping unit (e.g. household).
    match : str or sequence of str, optional
        The matching variables :math:`V_{Match}` (swap key); empty (default)
        means one stratum.  Several columns are cross-classified.

    Returns
    -------
    int
        ``b`` (0 when every stratum holds identical records only).

    References
    ----------
    Bailie, Gong & Meng, Theorem 5.6 and Appendix A (proof: strata of
    identical records are unchanged by any permutation).

    Examples
    --------
    >>> import pandas as pd
    >>> from invariantdp.privacy import largest_stratum
    >>> df = pd.DataFrame({"size": [1, 1, 1, 2, 2], "county": ["a", "b", "a", "c", "c"]})
    >>> largest_stratum(df, "size")   # the two 2-person records are identical
    3
    """
    kind = check_frame(data)
    match = check_columns("match", as_columns(match), data)
    cols = list(data.columns)
    if kind == "dask":
        counts = data.groupby(cols, dropna=False).size().compute()
        if counts.empty:
            raise InvariantDPError("`data` must hold at least one record, got none.")
        distinct = counts.index.to_frame(index=False)
        distinct.columns = cols
        j, _ = group_codes(distinct, match)
        row = np.arange(len(distinct), dtype=np.int64)
        return _largest_from_codes(j, row, weights=counts.to_numpy().astype(float))
    j, _ = group_codes(data, match)
    row, _ = group_codes(data, cols)
    return _largest_from_codes(j, row)

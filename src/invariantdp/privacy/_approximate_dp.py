r"""Pure and approximate differential privacy: group privacy and basic composition.

References
----------
.. [1] Dwork, C. and Roth, A. (2014). "The algorithmic foundations of
   differential privacy", Theorems 2.2, 3.14 and 3.16.
.. [2] Vadhan, S. (2017). "The complexity of differential privacy", Lemma 2.2.
.. [3] Cho, J. and Awan, J. "Formal privacy guarantees with invariant
   statistics", Section 2.2.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from fractions import Fraction

from .._validation import (
    InvariantDPError,
    check_delta,
    check_epsilon,
    check_positive_int,
    format_value,
)
from ._checks import as_list, exact_product, fsum, positive_list

__all__ = [
    "approximate_dp_composition",
    "approximate_dp_group_privacy",
    "pure_dp_composition",
    "pure_dp_group_privacy",
]


def pure_dp_group_privacy(epsilon, k) -> float:
    r"""Pure DP for groups of size ``k``: :math:`\epsilon`-DP gives :math:`k\epsilon`-DP.

    Parameters
    ----------
    epsilon : float
        Privacy-loss parameter of the mechanism, ``epsilon > 0``.
    k : int
        Group size, ``k >= 1``.

    Returns
    -------
    float
        ``k * epsilon``, correctly rounded.

    References
    ----------
    Dwork & Roth (2014), Theorem 2.2; Cho & Awan, Section 2.2.

    Examples
    --------
    >>> from invariantdp.privacy import pure_dp_group_privacy
    >>> pure_dp_group_privacy(epsilon=0.5, k=3)
    1.5
    """
    epsilon = check_epsilon(epsilon)
    k = check_positive_int("k", k)
    return exact_product(k, epsilon, "epsilon", f"k * epsilon for `k` ({format_value(k)})")


def approximate_dp_group_privacy(epsilon, delta, k) -> tuple[float, float]:
    r"""Group privacy of :math:`(\epsilon, \delta)`-DP for groups of size ``k``.

    Returns :math:`(k\epsilon,\ \min(1, \delta \sum_{i=0}^{k-1} e^{i\epsilon}))`,
    the standard bound obtained by chaining ``k`` neighbouring pairs.  A
    returned ``delta`` of 1 is a valid but vacuous bound (every mechanism is
    :math:`(\epsilon, 1)`-DP).

    Parameters
    ----------
    epsilon : float
        ``epsilon > 0``.
    delta : float
        ``0 <= delta < 1``.
    k : int
        Group size, ``k >= 1``.

    Returns
    -------
    (float, float)
        The group ``(epsilon, delta)``.

    References
    ----------
    Vadhan (2017), "The complexity of differential privacy", Lemma 2.2.

    Examples
    --------
    >>> from invariantdp.privacy import approximate_dp_group_privacy
    >>> eps, delta = approximate_dp_group_privacy(epsilon=1.0, delta=1e-6, k=2)
    >>> eps, round(delta, 12)
    (2.0, 3.718282e-06)
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    k = check_positive_int("k", k)
    k_eps = exact_product(k, epsilon, "epsilon", f"k * epsilon for `k` ({format_value(k)})")
    if delta == 0.0:
        return k_eps, 0.0
    # delta * sum_{i<k} e^{i eps} = delta * (e^{k eps} - 1) / (e^eps - 1)
    #   = delta * e^{(k-1) eps} (1 - e^{-k eps}) / (1 - e^{-eps}), in log space
    #   (no overflow for large eps, no cancellation for small eps)
    try:
        km1_eps = float((k - 1) * Fraction(epsilon))
    except OverflowError:
        km1_eps = math.inf
    log_out = (
        math.log(delta) + km1_eps + math.log(-math.expm1(-k_eps)) - math.log(-math.expm1(-epsilon))
    )
    return k_eps, math.exp(log_out) if log_out < 0.0 else 1.0


def pure_dp_composition(epsilons: Iterable) -> float:
    r"""Basic composition of pure DP: the :math:`\epsilon_i` add.

    Parameters
    ----------
    epsilons : iterable of float
        The ``epsilon_i > 0`` of the composed mechanisms.

    Returns
    -------
    float
        Their sum (computed with ``math.fsum``).

    References
    ----------
    Dwork & Roth (2014), Theorem 3.14.

    Examples
    --------
    >>> from invariantdp.privacy import pure_dp_composition
    >>> pure_dp_composition([0.5, 0.25])
    0.75
    """
    vals = positive_list("epsilons", epsilons)
    return fsum("epsilon", vals, "the sum of `epsilons`")


def approximate_dp_composition(epsilons: Iterable, deltas: Iterable) -> tuple[float, float]:
    r"""Basic composition of :math:`(\epsilon_i, \delta_i)`-DP: both parameters add.

    Parameters
    ----------
    epsilons : iterable of float
        The ``epsilon_i > 0``.
    deltas : iterable of float
        The ``delta_i`` in [0, 1), one per ``epsilon_i``; their sum must be < 1.

    Returns
    -------
    (float, float)
        ``(sum of epsilons, sum of deltas)``.

    References
    ----------
    Dwork & Roth (2014), Theorem 3.16.

    Examples
    --------
    >>> from invariantdp.privacy import approximate_dp_composition
    >>> approximate_dp_composition([0.5, 0.25], [1e-6, 1e-6])
    (0.75, 2e-06)
    """
    eps = positive_list("epsilons", epsilons)
    dels = [check_delta(d, f"deltas[{i}]") for i, d in enumerate(as_list("deltas", deltas))]
    if len(dels) != len(eps):
        raise InvariantDPError(
            f"`deltas` has {len(dels)} entries but `epsilons` has {len(eps)}; they must match."
        )
    total_delta = math.fsum(dels)
    if total_delta >= 1.0:
        raise InvariantDPError(f"`deltas` sum to {total_delta}, which must be < 1.")
    return fsum("epsilon", eps, "the sum of `epsilons`"), float(total_delta)

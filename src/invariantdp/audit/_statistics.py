r"""Inputs of an audit: a worst neighbour and scalar statistics of vector releases.

:func:`neighbour_from_space` gives an invariant-conforming neighbour at the
semi-adjacent distance (Cho & Awan, Def. 13); :func:`projection_statistic`
and :func:`likelihood_ratio_statistic` reduce multivariate releases to the
scalar that threshold tests need (the likelihood ratio is the most powerful
by the Neyman-Pearson lemma).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .._validation import InvariantDPError, check_finite_array
from ..sensitivity import norm_order


def neighbour_from_space(x, space, *, p=2, nonnegative=True) -> np.ndarray:
    r"""An invariant-conforming neighbour ``x + v`` with ``v`` a worst vector of ``space``.

    For semi-DP (Cho & Awan, Def. 13) the guarantee concerns data sets with
    the same invariants at the semi-adjacent distance ``a(t)``; their query
    values differ by an element of the sensitivity space ``S`` (e.g.
    :func:`~invariantdp.sensitivity.contingency_sensitivity_space`).  The
    hardest pair for an audit differs by a vector of largest norm: this
    returns ``x + v`` for the first ``v`` in ``S`` maximising
    :math:`\|v\|_p`, preferring (with ``nonnegative``) one that keeps all
    entries of ``x + v`` non-negative.

    Parameters
    ----------
    x : array_like
        The confidential query value (any shape; ``space`` rows are flattened
        C-order differences).
    space : array_like, shape (m, x.size)
        Sensitivity space, one difference vector per row.
    p : float or "inf"
        The norm in which the mechanism is calibrated (2 for Gaussian noise,
        1 for Laplace-type noise).
    nonnegative : bool
        Prefer neighbours with non-negative entries (counts).

    Returns
    -------
    numpy.ndarray
        ``x + v``, with the shape of ``x``.

    References
    ----------
    Cho & Awan, Def. 4 (sensitivity space) and Def. 13 (semi-adjacent
    parameter).

    Examples
    --------
    >>> import numpy as np
    >>> from invariantdp.audit import neighbour_from_space
    >>> from invariantdp.sensitivity import contingency_sensitivity_space
    >>> x = np.array([[3, 0], [1, 5]])
    >>> neighbour_from_space(x, contingency_sensitivity_space(2, 2))
    array([[2., 1.],
           [2., 4.]])
    """
    xv = check_finite_array("x", x)
    if xv.size == 0:
        raise InvariantDPError("`x` must not be empty.")
    S = check_finite_array("space", space)
    if S.ndim != 2 or S.shape[0] == 0 or S.shape[1] != xv.size:
        raise InvariantDPError(
            f"`space` must be a non-empty 2-D array with {xv.size} columns (one flattened "
            f"difference per row), got shape {S.shape}."
        )
    norms = np.linalg.norm(S, ord=norm_order(p), axis=1)
    if not np.max(norms) > 0:
        raise InvariantDPError("`space` must contain a nonzero difference vector.")
    worst = np.flatnonzero(norms >= np.max(norms) * (1.0 - 1e-12))
    cand = xv.ravel()[None, :] + S[worst]
    if nonnegative:
        ok = np.flatnonzero(np.all(cand >= 0, axis=1))
        if ok.size:
            return cand[ok[0]].reshape(xv.shape)
    return cand[0].reshape(xv.shape)


def projection_statistic(direction) -> Callable:
    r"""Statistic ``v -> <v, direction>`` on flattened releases (vectorised).

    For spherical (or projected) Gaussian noise and inputs differing by
    ``direction``, the projection is the likelihood ratio statistic, hence
    the most powerful.

    Parameters
    ----------
    direction : array_like
        Nonzero vector, typically ``x' - x`` (flattened).

    Returns
    -------
    callable
        ``stat(V)`` mapping releases (flattened to ``direction.size``
        coordinates, one per row) to their projections; marked
        ``vectorized``.

    References
    ----------
    Dong, Roth & Su (2022), JRSS-B 84(1), Sec. 2 (Gaussian tradeoff curves
    from the Neyman-Pearson lemma).

    Examples
    --------
    >>> import numpy as np
    >>> from invariantdp.audit import projection_statistic
    >>> projection_statistic([1.0, -1.0])(np.array([[3.0, 1.0], [0.0, 2.0]]))
    array([ 2., -2.])
    """
    d = check_finite_array("direction", direction).ravel()
    if d.size == 0 or not np.any(d != 0):
        raise InvariantDPError("`direction` must be a nonzero vector.")

    def stat(V):
        V = np.asarray(V, dtype=float)
        return V.reshape(-1, d.size) @ d

    stat.vectorized = True
    return stat


def likelihood_ratio_statistic(logpdf: Callable, x, x_prime) -> Callable:
    r"""Log likelihood ratio ``logpdf(v - x') - logpdf(v - x)`` of an additive mechanism.

    ``logpdf`` is the log density (or mass) of the noise, evaluated on an
    ``(n, d)`` batch of flattened noise vectors (e.g.
    ``KNormNoise.logpdf``, ``SubspaceNoise.logpdf`` or a scipy ``logpdf``
    summed over coordinates).  By the Neyman-Pearson lemma threshold tests
    on it trace the exact tradeoff curve of the two release laws, so an
    audit on it has the most power.  Points where both densities vanish get
    0; where one does, ``-inf``/``+inf`` are mapped to the finite extremes
    ``-1e300``/``1e300``.

    Parameters
    ----------
    logpdf : callable
        Log density of the noise on an ``(n, d)`` batch, one value per row.
    x, x_prime : array_like
        The two neighbouring inputs (same size ``d``).

    Returns
    -------
    callable
        ``stat(V)`` giving the log likelihood ratio of each release (row);
        marked ``vectorized``.

    References
    ----------
    Dong, Roth & Su (2022), JRSS-B 84(1), Sec. 2 (tradeoff functions and the
    Neyman-Pearson lemma).

    Examples
    --------
    >>> import numpy as np
    >>> from scipy import stats
    >>> from invariantdp.audit import likelihood_ratio_statistic
    >>> lap = lambda V: stats.laplace.logpdf(V).sum(axis=1)
    >>> lr = likelihood_ratio_statistic(lap, [0.0], [1.0])
    >>> lr(np.array([[-3.0], [0.5], [4.0]]))
    array([-1.,  0.,  1.])
    """
    if not callable(logpdf):
        raise TypeError(f"`logpdf` must be callable, got {type(logpdf).__name__}.")
    a = check_finite_array("x", x).ravel()
    b = check_finite_array("x_prime", x_prime).ravel()
    if a.shape != b.shape or a.size == 0:
        raise InvariantDPError(
            f"`x` and `x_prime` must have the same non-zero size, got {a.size} and {b.size}."
        )

    def stat(V):
        V = np.asarray(V, dtype=float).reshape(-1, a.size)
        l1 = np.asarray(logpdf(V - b), dtype=float).reshape(-1)
        l0 = np.asarray(logpdf(V - a), dtype=float).reshape(-1)
        with np.errstate(invalid="ignore"):
            out = l1 - l0
        out = np.where(np.isneginf(l1) & np.isneginf(l0), 0.0, out)
        return np.clip(out, -1e300, 1e300)

    stat.vectorized = True
    return stat

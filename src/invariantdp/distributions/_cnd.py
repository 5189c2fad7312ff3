"""Canonical noise distributions (CND) of symmetric tradeoff functions."""

from __future__ import annotations

import numpy as np
from scipy import stats

from .._validation import InvariantDPError
from ..privacy import as_tradeoff

__all__ = ["CanonicalNoise", "canonical_noise"]

#: the cdf is evaluated by at most this many applications of f; beyond, the
#: tail must be 0 in double precision (checked) or the evaluation is refused
_MAX_STEPS = 100_000


class CanonicalNoise(stats.rv_continuous):
    r"""The canonical noise distribution of a tradeoff function (Lemma 36).

    Built by :func:`canonical_noise`; behaves as a scipy.stats continuous
    distribution without shape parameters (``loc`` and ``scale`` work as
    usual).  With ``c`` the unique solution of ``f(1 - c) = c``,

    .. math::
        F(x) = \begin{cases}
            f(F(x + 1)) & x < -1/2 \\
            c (1/2 - x) + (1 - c)(x + 1/2) & |x| \le 1/2 \\
            1 - f(1 - F(x - 1)) & x > 1/2.
        \end{cases}

    Evaluating the cdf ``|x|`` units from the centre applies ``f`` about
    ``|x|`` times, so far tails cost time in proportion to the distance.
    Beyond 100000 units the cdf is 0 (or 1) only if it is already 0 in
    double precision at that distance; otherwise (a law as wide as the CND
    of ``eps_delta(1e-6)``) the cdf and quantile refuse with
    :class:`~invariantdp.exceptions.InvariantDPError` rather than truncate.

    Parameters
    ----------
    f : TradeoffFunction or callable
        A nontrivial symmetric tradeoff function.

    References
    ----------
    Cho & Awan, "Semi-DP and invariant statistics", Lemma 36 (after Awan &
    Dong 2022, "Log-concave and multivariate canonical noise distributions
    for differential privacy", NeurIPS 35).

    Examples
    --------
    >>> from invariantdp.distributions import canonical_noise, tulap_from_privacy
    >>> from invariantdp.privacy import eps_delta
    >>> N = canonical_noise(eps_delta(1.0, 0.0))
    >>> bool(abs(N.cdf(-2.3) - tulap_from_privacy(1.0).cdf(-2.3)) < 1e-12)  # Tulap is the CND
    True
    """

    def __init__(self, f, **kwargs):
        f = as_tradeoff(f)
        if not f.is_nontrivial():
            raise InvariantDPError(
                f"`f` ({f!r}) must be a nontrivial tradeoff function (f(alpha) < alpha somewhere)."
            )
        alpha = np.linspace(0.0, 1.0, 257)[1:-1]
        if not np.allclose(f(alpha), 1.0 - f.inverse(1.0 - alpha), atol=1e-6):
            # symmetric f equals its own inverse reflected: f(a) = 1 - f^{-1}(1 - a)
            raise InvariantDPError(f"`f` ({f!r}) must be a symmetric tradeoff function.")
        self.tradeoff = f
        self.c = f.fixed_point()
        super().__init__(name=kwargs.pop("name", "canonical_noise"), **kwargs)

    # Lemma 36 evaluated from the left half, F(x) = 1 - F(-x) on the right
    def _left_cdf(self, y):
        """F(y) for y <= 0."""
        f, c = self.tradeoff, self.c
        steps = np.ceil(np.maximum(-y - 0.5, 0.0))
        far = steps > _MAX_STEPS
        # beyond the cap evaluate F at the cap, -_MAX_STEPS - 1/2: F is monotone
        steps = np.minimum(steps, _MAX_STEPS)
        z = np.where(far, -0.5, y + steps)
        out = c * (0.5 - z) + (1.0 - c) * (z + 0.5)
        todo = steps > 0
        k = 0
        while np.any(todo):
            out = np.where(todo, f(out), out)
            k += 1
            todo = steps > k
        if np.any(far & (out > 0.0)):
            at_cap = float(np.max(out[far]))
            raise InvariantDPError(
                f"the cdf of {self!r} more than {_MAX_STEPS} units from its centre needs more "
                f"than {_MAX_STEPS} applications of f, and the tail is not negligible there "
                f"(F(-{_MAX_STEPS}.5) = {at_cap:.6g}); for eps_delta use "
                "tulap_from_privacy, which has a closed form."
            )
        return np.where(far, 0.0, out)

    def _cdf(self, x):
        neg = np.minimum(x, -x)
        low = self._left_cdf(neg)
        return np.where(x <= 0, low, 1.0 - low)

    def _sf(self, x):
        return self._cdf(-x)

    def _ppf(self, u):
        f, c = self.tradeoff, self.c
        lo = np.minimum(u, 1.0 - u)
        steps = np.zeros_like(lo)
        v = lo.copy()
        todo = v < c
        while np.any(todo):
            v = np.where(todo, f.inverse(v), v)
            steps = steps + todo
            todo = todo & (v < c)
            if np.any(todo & (steps >= _MAX_STEPS)):
                raise InvariantDPError(
                    f"the quantile of {self!r} at {float(np.min(lo)):.6g} lies more than "
                    f"{_MAX_STEPS} units from the centre (more than {_MAX_STEPS} applications "
                    "of the inverse of f); for eps_delta use tulap_from_privacy, which has a "
                    "closed form."
                )
        x = (v - c) / (1.0 - 2.0 * c) - 0.5 - steps
        return np.where(u <= 0.5, x, -x)

    def _isf(self, u):
        return -self._ppf(u)

    def __repr__(self) -> str:
        return f"canonical_noise({self.tradeoff!r})"


def canonical_noise(f) -> CanonicalNoise:
    r"""Canonical noise distribution of a symmetric nontrivial tradeoff function.

    The construction of Awan & Vadhan (2023, Thm 3.9), restated as Lemma 36 of
    Cho & Awan: adding ``Delta * N`` with ``N ~ canonical_noise(f)`` to a
    statistic of sensitivity ``Delta`` is f-DP, and tight (Definition 35).

    Parameters
    ----------
    f : TradeoffFunction or callable
        Symmetric, nontrivial tradeoff function in the paper's convention
        (type I error ``1 - alpha``), e.g. ``eps_delta(1.0)`` or
        ``gaussian(0.5)``.

    Returns
    -------
    CanonicalNoise
        A scipy.stats-style distribution with ``cdf``, ``sf``, ``ppf``,
        ``isf``, ``pdf`` (numerical) and ``rvs`` (inverse transform).

    References
    ----------
    Cho & Awan, Definition 35 and Lemma 36; Awan, J. and Vadhan, S. (2023).
    "Canonical noise distributions and private hypothesis tests", Ann. Statist.

    Examples
    --------
    >>> from invariantdp.privacy import eps_delta
    >>> from invariantdp.distributions import canonical_noise, tulap_from_privacy
    >>> F = canonical_noise(eps_delta(1.0, 0.01))
    >>> bool(abs(F.cdf(-1.3) - tulap_from_privacy(1.0, 0.01).cdf(-1.3)) < 1e-12)
    True
    """
    return CanonicalNoise(f)

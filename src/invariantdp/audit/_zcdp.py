r"""The tradeoff function implied by rho-zCDP, to audit zCDP claims.

Canonne, Kamath & Steinke (2020), Cor. 13: rho-zCDP implies
(epsilon, delta(epsilon))-DP for every epsilon; the upper envelope of those
tradeoff functions is the claim an audit of a zCDP mechanism checks.
"""

from __future__ import annotations

import numpy as np

from .._validation import check_positive, check_positive_int
from ..privacy.tradeoff import TradeoffFunction


class _ZCDP(TradeoffFunction):
    def __init__(self, rho: float, n_grid: int):
        self.rho = rho
        self.name = f"implied by rho-zCDP: rho={rho:g}"
        # (epsilon, delta(epsilon)) pairs of the CKS conversion on a grid of epsilon
        eps = np.concatenate([[0.0], np.geomspace(1e-3, rho + 40.0 * np.sqrt(rho) + 40.0, n_grid)])
        alpha = np.geomspace(1.0 + 1e-6, 1e6, 4000)[None, :]
        log_delta = (
            (alpha - 1.0) * (alpha * rho - eps[:, None])
            + (alpha - 1.0) * np.log1p(-1.0 / alpha)
            - np.log(alpha)
        )
        delta = np.minimum(np.exp(np.min(log_delta, axis=1)), 1.0)
        keep = delta < 1.0
        self.eps, self.delta = eps[keep], delta[keep]

    def __call__(self, alpha):
        a = np.asarray(alpha, dtype=float)
        flat = a.reshape(-1, 1)
        e, d = self.eps[None, :], self.delta[None, :]
        with np.errstate(over="ignore"):
            hi = 1.0 - d - np.exp(e) * (1.0 - flat)
        lo = np.exp(-e) * (flat - d)
        out = np.max(np.maximum(np.maximum(hi, lo), 0.0), axis=1).reshape(a.shape)
        return out[()] if out.ndim == 0 else out

    def __repr__(self) -> str:
        return f"zcdp_tradeoff(rho={self.rho!r})"


def zcdp_tradeoff(rho, *, n_grid=400) -> TradeoffFunction:
    r"""The tradeoff function implied by :math:`\rho`-zCDP.

    :math:`\rho`-zCDP implies :math:`(\epsilon, \delta(\epsilon))`-DP for every
    :math:`\epsilon \ge 0` with (Canonne, Kamath & Steinke 2020, Cor. 13)

    .. math:: \delta(\epsilon) = \inf_{\alpha > 1}
              \frac{e^{(\alpha-1)(\alpha\rho-\epsilon)}}{\alpha}
              \Big(1 - \frac1\alpha\Big)^{\alpha-1},

    so the mechanism is ``f``-DP for the upper envelope
    :math:`f = \max_\epsilon f_{\epsilon,\delta(\epsilon)}` (taken on a grid
    of ``n_grid`` values of epsilon, which only weakens the claim).  This is
    the claim to audit a zCDP mechanism such as the discrete Gaussian, whose
    exact tradeoff curve is *not* :math:`G_{\Delta/\sigma}`.

    Parameters
    ----------
    rho : float
        ``rho > 0``.
    n_grid : int
        Number of epsilon values in the envelope (at least 10).

    Returns
    -------
    TradeoffFunction

    References
    ----------
    Canonne, C. L., Kamath, G. and Steinke, T. (2020). "The discrete Gaussian
    for differential privacy", NeurIPS 33, Cor. 13.

    Examples
    --------
    >>> from invariantdp.audit import zcdp_tradeoff
    >>> from invariantdp.privacy import gaussian_tradeoff
    >>> f = zcdp_tradeoff(0.5)  # the Gaussian mechanism with mu = 1 is 0.5-zCDP
    >>> bool(f(0.9) <= gaussian_tradeoff(1.0)(0.9))
    True
    """
    rho = check_positive("rho", rho)
    n_grid = check_positive_int("n_grid", n_grid, minimum=10)
    return _ZCDP(rho, n_grid)

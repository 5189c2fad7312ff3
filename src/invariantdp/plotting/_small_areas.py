"""Figures of a Fay-Herriot fit: EBLUPs against the direct estimates, shrinkage against the
standard error, and what the full covariance of the estimates changes."""

from __future__ import annotations

import numpy as np

from .._validation import InvariantDPError
from ._axes import get_ax

__all__ = ["plot_eblup", "plot_shrinkage"]


def _check_results(results, what: str):
    if not (hasattr(results, "eblup") and hasattr(results, "direct_weight")):
        raise TypeError(
            f"`{what}` must be the results of FayHerriot(...).fit(), got {type(results).__name__}."
        )
    return results


def _fits(results, compare, labels):
    fits = [(_check_results(results, "results"), labels[0])]
    if compare is not None:
        fits.append((_check_results(compare, "compare"), labels[1]))
        if not np.array_equal(results.model.endog, compare.model.endog):
            raise InvariantDPError(
                "`compare` must be a fit of the same released estimates as `results`."
            )
    return fits


def plot_eblup(results, ax=None, *, compare=None, labels=("EBLUP (full V)", "EBLUP (diagonal V)")):
    """EBLUPs against the direct estimates, each with its interval, and the line y = x.

    Parameters
    ----------
    results : FayHerriotResults
    ax : matplotlib.axes.Axes, optional
    compare : FayHerriotResults, optional
        A second fit of the same estimates (e.g. with the diagonal of V), drawn beside.
    labels : (str, str)
        Legend entries of ``results`` and ``compare``.

    Returns
    -------
    matplotlib.axes.Axes

    References
    ----------
    Rao & Molina (2015), *Small Area Estimation*, Sec. 6.1 (the EBLUP as a
    weighted average of the direct and the synthetic estimate).

    Examples
    --------
    >>> import numpy as np
    >>> from invariantdp import Release
    >>> from invariantdp.inference import FayHerriot
    >>> y = np.array([12.0, 9.5, 14.1, 11.2, 8.7, 13.3, 10.9, 12.6])
    >>> res = FayHerriot(Release.from_published(y, noise="gaussian", sigma=1.0),
    ...                  np.ones((8, 1))).fit()
    >>> ax = plot_eblup(res)
    >>> ax.get_xlabel()
    'direct estimate'
    """
    fits = _fits(results, compare, labels)
    ax = get_ax(ax)
    y = np.asarray(results.model.endog, dtype=float)
    for (res, label), marker in zip(fits, ("o", "s"), strict=False):
        e = res.eblup()
        est = e["estimate"].to_numpy()
        err = np.vstack([est - e["ci_lower"].to_numpy(), e["ci_upper"].to_numpy() - est])
        ax.errorbar(y, est, yerr=err, fmt=marker, ms=3, lw=0.6, alpha=0.8, label=label)
    lo, hi = float(np.min(y)), float(np.max(y))
    ax.plot([lo, hi], [lo, hi], color="0.4", lw=0.8, ls="--", label="y = x (no shrinkage)")
    ax.set_xlabel("direct estimate")
    ax.set_ylabel("EBLUP (95% interval)")
    ax.legend(fontsize="small")
    return ax


def plot_shrinkage(results, ax=None, *, compare=None, labels=("full V", "diagonal V")):
    r"""Each area's shrinkage, :math:`1 - w_i`, against the standard error of its estimate.

    :math:`w_i` is the weight of the area's own direct estimate in its EBLUP
    (:meth:`FayHerriotResults.direct_weight
    <invariantdp.inference.FayHerriotResults.direct_weight>`); for diagonal
    :math:`V` the points lie on :math:`1 - \hat\sigma_u^2/(\hat\sigma_u^2 +
    \mathrm{se}^2)`, drawn as a dashed curve for each fit: with full
    :math:`V` the points leave it.

    Parameters
    ----------
    results : FayHerriotResults
    ax : matplotlib.axes.Axes, optional
    compare : FayHerriotResults, optional
        A second fit of the same estimates (e.g. with the diagonal of V).
    labels : (str, str)

    Returns
    -------
    matplotlib.axes.Axes

    References
    ----------
    Fay & Herriot (1979); Rao & Molina (2015), Eq. 6.1.12.

    Examples
    --------
    >>> import numpy as np
    >>> from invariantdp import Release
    >>> from invariantdp.inference import FayHerriot
    >>> y = np.array([12.0, 9.5, 14.1, 11.2, 8.7, 13.3, 10.9, 12.6])
    >>> res = FayHerriot(Release.from_published(y, noise="gaussian", sigma=1.0),
    ...                  np.ones((8, 1))).fit()
    >>> plot_shrinkage(res).get_ylabel()
    'shrinkage to the model, 1 - w'
    """
    fits = _fits(results, compare, labels)
    ax = get_ax(ax)
    se = np.sqrt(np.diag(results.model.cov))
    grid = np.linspace(0.0, float(se.max()) * 1.05, 200)
    for (res, label), marker in zip(fits, ("o", "s"), strict=False):
        points = ax.scatter(se, 1.0 - res.direct_weight().to_numpy(), s=12, marker=marker)
        points.set_label(f"{label} ($\\hat\\sigma_u^2$ = {res.sigma2_u:.4g})")
        # where the points would lie with V diagonal, at this fit's sigma2_u
        s2 = res.sigma2_u
        ax.plot(grid, grid**2 / (s2 + grid**2), color=points.get_facecolor()[0], lw=0.8, ls="--")
    ax.set_xlabel("standard error of the direct estimate")
    ax.set_ylabel("shrinkage to the model, 1 - w")
    ax.set_ylim(-0.02, 1.02)
    ax.legend(fontsize="small")
    return ax

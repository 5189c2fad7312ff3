r"""Figures of data swapping (Bailie, Gong & Meng, Figures 2.1 and 5.1).

* :func:`plot_swapping_epsilon` -- :math:`\epsilon` of the Permutation
  Algorithm against the swap rate for several largest-stratum sizes ``b``
  (Figure 2.1), with the smallest attainable :math:`\epsilon_b` marked.
* :func:`plot_swapping_mape` -- the mean absolute percentage error that
  swapping induces in the swapping x holding table, over repeated runs at
  several swap rates (Figure 5.1), as computed by
  :func:`invariantdp.mechanisms.swapping_mape`.

Plotting only draws: the simulations live with the mechanism.
``invariantdp.plotting.swapping_mape`` is a deprecated alias of the
mechanisms' function, kept for one release.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._deprecation import moved_function
from ..exceptions import InvariantDPError
from ..mechanisms import swapping_mape as _swapping_mape
from ..privacy import min_swapping_epsilon, swapping_epsilon
from ._axes import get_ax

__all__ = ["plot_swapping_epsilon", "plot_swapping_mape"]

swapping_mape = moved_function(_swapping_mape, "invariantdp.plotting.swapping_mape")

_DEFAULT_B = (2, 10, 100, 10**3, 10**4, 10**5, 10**6)


def plot_swapping_epsilon(b=_DEFAULT_B, *, swap_rates=None, ax=None):
    r"""Privacy loss :math:`\epsilon` against swap rate ``p`` for several ``b`` (Figure 2.1).

    Each curve is Eq. (5.1) of Theorem 5.6 at one ``b``; an outlined diamond
    marks its minimum :math:`\epsilon_b = \ln(b+1)/2` at
    :math:`p_b = \sqrt{b+1}/(1+\sqrt{b+1})`; dotted lines mark the swap rates
    5% and 50%.

    Parameters
    ----------
    b : sequence of int, optional
        Largest-stratum sizes (each 0 or >= 2); default 2 to 10^6.
    swap_rates : array_like, optional
        Swap rates to evaluate, in (0, 1); default a fine grid from 0.005 to
        0.9995.
    ax : matplotlib.axes.Axes, optional

    Returns
    -------
    matplotlib.axes.Axes

    References
    ----------
    Bailie, Gong & Meng, Figure 2.1 and Theorem 5.6.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from invariantdp.plotting import plot_swapping_epsilon
    >>> ax = plot_swapping_epsilon([10, 1000])
    >>> len(ax.get_lines())  # two curves, two diamonds, two reference lines
    6
    """
    bs = [int(v) for v in np.atleast_1d(b)]
    if not bs:
        raise InvariantDPError("`b` must name at least one stratum size.")
    if swap_rates is None:
        p = np.unique(np.concatenate([np.linspace(0.005, 0.995, 397), [0.999, 0.9995]]))
    else:
        p = np.asarray(swap_rates, dtype=float)
    ax = get_ax(ax)
    import matplotlib.pyplot as plt

    colors = plt.get_cmap("viridis")(np.linspace(0.0, 0.9, len(bs)))
    for bi, color in zip(bs, colors, strict=True):
        eps = swapping_epsilon(np.full(p.shape, bi), p)
        label = f"b = {bi:,}"
        ax.plot(p, eps, color=color, label=label)
        if bi >= 2:
            m = min_swapping_epsilon(bi)
            ax.plot(
                [m.swap_rate], [m.epsilon], marker="D", markerfacecolor="white",
                markeredgecolor=color, linestyle="none",
            )  # fmt: skip
    for rate in (0.05, 0.5):
        ax.axvline(rate, color="grey", linestyle=":", linewidth=1)
    ax.set_xlabel("swap rate p")
    ax.set_ylabel(r"$\epsilon$ (Theorem 5.6)")
    ax.set_xlim(0, 1)
    ax.legend(fontsize="small", title="largest stratum")
    ax.set_title(r"Swap rate to $\epsilon$ (Figure 2.1)")
    return ax


def plot_swapping_mape(results: pd.DataFrame, *, ax=None):
    """Box plots of MAPE by swap rate (Figure 5.1).

    Parameters
    ----------
    results : pandas.DataFrame
        Output of :func:`invariantdp.mechanisms.swapping_mape`
        (columns ``swap_rate`` and ``mape``).
    ax : matplotlib.axes.Axes, optional

    Returns
    -------
    matplotlib.axes.Axes

    References
    ----------
    Bailie, Gong & Meng, Figure 5.1.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import pandas as pd
    >>> from invariantdp.plotting import plot_swapping_mape
    >>> res = pd.DataFrame({"swap_rate": [0.1, 0.1, 0.5, 0.5], "mape": [.02, .03, .1, .12]})
    >>> plot_swapping_mape(res).get_xlabel()
    'swap rate'
    """
    missing = {"swap_rate", "mape"} - set(results.columns)
    if missing:
        raise InvariantDPError(f"`results` lacks the column(s) {sorted(missing)}.")
    ax = get_ax(ax)
    rates = np.sort(results["swap_rate"].unique())
    groups = [results.loc[results["swap_rate"] == r, "mape"].to_numpy() * 100 for r in rates]
    ax.boxplot(groups, tick_labels=[f"{r:.0%}" for r in rates])
    ax.set_xlabel("swap rate")
    ax.set_ylabel("MAPE (%)")
    ax.set_title("Error of the swapped table (Figure 5.1)")
    return ax

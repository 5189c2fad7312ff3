"""Figure 1 of Gong & Meng (2020): distances of privatized tables from the confidential one."""

from __future__ import annotations

import numpy as np

from ._axes import get_ax

__all__ = ["plot_release_distances"]


def plot_release_distances(distances, *, metric="L1", ax=None):
    """Box plots of average distances per method (Gong & Meng 2020, Figure 1).

    Parameters
    ----------
    distances : pandas.DataFrame
        Long format with columns ``method``, ``metric`` (``"L1"``/``"L2"``) and
        ``distance`` (one row per confidential table and method: the average
        distance over its releases, Eq. 3.1).
    metric : {"L1", "L2"}
    ax : matplotlib Axes, optional

    Returns
    -------
    matplotlib.axes.Axes

    References
    ----------
    Gong & Meng (2020), Sec. 3, Eq. 3.1 and Figure 1.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import pandas as pd
    >>> d = pd.DataFrame({"method": ["congenial", "congenial", "NNL2", "NNL2"],
    ...                   "metric": "L1", "distance": [3.0, 4.0, 5.0, 6.0]})
    >>> ax = plot_release_distances(d)
    >>> [t.get_text() for t in ax.get_xticklabels()]
    ['congenial', 'NNL2']
    """
    ax = get_ax(ax)
    sub = distances[distances["metric"] == metric]
    methods = list(dict.fromkeys(sub["method"]))
    data = [np.asarray(sub.loc[sub["method"] == m, "distance"]) for m in methods]
    ax.boxplot(data, tick_labels=methods)
    ax.set_ylabel(f"average {metric} distance")
    ax.set_title(f"{metric} distance of releases from the confidential table")
    ax.tick_params(axis="x", labelrotation=15)
    return ax

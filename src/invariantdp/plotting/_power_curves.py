"""Figures for tests of hypotheses: power curves, p-value histograms, p-value vs epsilon."""

from __future__ import annotations

import numpy as np

from ._axes import get_ax

__all__ = ["plot_power_curves", "plot_pvalue_histogram", "plot_pvalue_vs_epsilon"]


def plot_power_curves(x, curves: dict, *, alpha=None, xlabel="odds ratio", ylabel="power", ax=None):
    """Power (or size) against an effect size or a setting for several tests.

    Parameters
    ----------
    x : array_like
        Effect sizes (e.g. odds ratios), or a setting such as epsilon.
    curves : dict
        ``label -> rejection probability array`` (same length as ``x``).
    alpha : float, optional
        Level, drawn as a horizontal reference line.
    xlabel : str, optional
        Label of the x axis.
    ylabel : str, optional
        Label of the y axis: ``"power"``, or ``"size"`` for curves under the
        null hypothesis.
    ax : matplotlib Axes, optional

    Returns
    -------
    matplotlib Axes

    References
    ----------
    Cho & Awan, Sec. 5.3 (power of the semi-private UMPU odds-ratio test).

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> ax = plot_power_curves([1, 2, 4], {"DP": [0.05, 0.3, 0.7]}, alpha=0.05)
    >>> len(ax.get_lines()), ax.get_ylabel()
    (2, 'power')
    >>> plot_power_curves([0.5, 1, 2], {"DP": [0.05, 0.05, 0.05]}, xlabel="epsilon",
    ...                   ylabel="size").get_ylabel()
    'size'
    """
    ax = get_ax(ax)
    x = np.asarray(x, dtype=float)
    for label, power in curves.items():
        ax.plot(x, np.asarray(power, dtype=float), marker="o", ms=3, label=label)
    if alpha is not None:
        ax.axhline(alpha, color="grey", ls=":", lw=1, label=f"level {alpha:g}")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_ylim(0, 1)
    ax.legend(frameon=False)
    return ax


def plot_pvalue_histogram(pvalues, *, bins=20, ax=None, label=None):
    """Histogram of p-values on [0, 1] with the uniform density for reference.

    Under the null hypothesis the p-values of an exact test with continuous
    noise are uniform, so the bars should scatter around the dashed line.

    Parameters
    ----------
    pvalues : array_like
        The p-values, in [0, 1].
    bins : int, optional
        Number of equal-width bins on [0, 1].
    ax : matplotlib Axes, optional
        Axes to draw on (default: a new figure).
    label : str, optional
        Legend label of the bars (no legend when None).

    Returns
    -------
    matplotlib Axes

    References
    ----------
    Awan & Slavkovic (2018), Thm 4.5 (the p-value of the DP UMP binomial
    test, a function of the continuous Tulap release).

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> ax = plot_pvalue_histogram(np.random.default_rng(0).uniform(size=200), bins=10)
    >>> len(ax.patches), ax.get_xlabel()
    (10, 'p-value')
    """
    ax = get_ax(ax)
    p = np.asarray(pvalues, dtype=float)
    ax.hist(p, bins=np.linspace(0, 1, bins + 1), density=True, alpha=0.7, label=label)
    ax.axhline(1.0, color="k", ls="--", lw=1)
    ax.set_xlabel("p-value")
    ax.set_ylabel("density")
    ax.set_xlim(0, 1)
    if label is not None:
        ax.legend(frameon=False)
    return ax


def plot_pvalue_vs_epsilon(epsilons, pvalues, *, band=None, reference=None, ax=None):
    """p-value as a function of the privacy-loss parameter (log-scaled x axis).

    Parameters
    ----------
    epsilons : array_like
        Privacy-loss parameters, positive (the x axis is log-scaled).
    pvalues : array_like
        The p-value at each epsilon (e.g. at the median noise draw).
    band : (array_like, array_like), optional
        ``(low, high)`` arrays shaded around the curve (e.g. quartiles over
        noise draws).
    reference : (float, str), optional
        A horizontal line (e.g. the non-private mid-p value) and its label.
    ax : matplotlib Axes, optional
        Axes to draw on (default: a new figure).

    Returns
    -------
    matplotlib Axes

    References
    ----------
    Awan & Slavkovic (2018), Thm 4.5 (p-values of the DP UMP binomial test).

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> eps = [0.1, 1.0, 10.0]
    >>> ax = plot_pvalue_vs_epsilon(eps, [0.6, 0.2, 0.05], reference=(0.03, "non-private"))
    >>> ax.get_xscale(), len(ax.get_lines())
    ('log', 2)
    """
    ax = get_ax(ax)
    eps = np.asarray(epsilons, dtype=float)
    ax.plot(eps, np.asarray(pvalues, dtype=float), color="C0", label="p-value at the median")
    if band is not None:
        ax.fill_between(eps, band[0], band[1], color="C0", alpha=0.25, label="noise quartiles")
    if reference is not None:
        value, label = reference
        ax.axhline(value, color="C3", ls="--", lw=1, label=label)
    ax.set_xscale("log")
    ax.set_xlabel("epsilon")
    ax.set_ylabel("p-value")
    ax.legend(frameon=False)
    return ax

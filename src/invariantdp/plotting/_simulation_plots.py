"""Figures of simulation studies: size, power or means per setting with Monte Carlo error bars."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from .._validation import check_positive, format_value
from ..exceptions import InvariantDPError
from ._axes import get_ax

__all__ = ["plot_simulation"]


def _select(table, settings, where):
    """The rows of ``table`` whose settings equal ``where``'s values."""
    if where is None:
        return table
    if not isinstance(where, Mapping):
        raise TypeError(f"`where` must be a dict of setting -> value, got {type(where).__name__}.")
    keep = np.ones(len(table), dtype=bool)
    for name, value in where.items():
        if name not in settings:
            raise InvariantDPError(f"`where` names {name!r}, not one of the settings {settings}.")
        keep &= (table[name] == value).to_numpy()
    if not keep.any():
        raise InvariantDPError(f"no setting of the study matches `where` ({dict(where)}).")
    return table[keep]


def _rate_label(table, null) -> str:
    """ "size" where every plotted setting is null, "power" where none is."""
    if null is None:
        return "rejection rate"
    if not isinstance(null, Mapping) or not null:
        raise TypeError("`null` must be a non-empty dict of setting -> value under the null.")
    is_null = np.ones(len(table), dtype=bool)
    for name, value in null.items():
        if name not in table.columns:
            raise InvariantDPError(f"`null` names {name!r}, which is not a setting of the study.")
        is_null &= (table[name] == value).to_numpy()
    if is_null.all():
        return "size"
    if not is_null.any():
        return "power"
    where = ", ".join(
        f"{k} = {v:g}" if isinstance(v, float) else f"{k} = {v}" for k, v in null.items()
    )
    return f"rejection rate (size at {where}, power elsewhere)"


def plot_simulation(
    result,
    x: str,
    *,
    y: str = "rejection_rate",
    hue: str | None = None,
    where: Mapping | None = None,
    alpha: float = 0.05,
    pvalue: str = "pvalue",
    null: Mapping | None = None,
    n_se: float = 2.0,
    logx: bool = False,
    ax=None,
):
    """Per-setting results of a simulation study with Monte Carlo error bars.

    ``y="rejection_rate"`` (the default) draws the share of runs with
    ``pvalue <= alpha`` per setting, the size of the test under a null
    setting and its power elsewhere, with bars of ``n_se`` binomial standard
    errors ``sqrt(r (1 - r) / runs)`` and the level ``alpha`` as a dotted
    line; ``y`` an outcome draws its mean with bars of ``n_se`` standard
    errors of the mean (:meth:`~invariantdp.simulate.SimulationResult.mean`).

    Parameters
    ----------
    result : SimulationResult
        The study (:func:`invariantdp.simulate.simulate`).
    x : str
        The setting on the horizontal axis.
    y : str, optional
        ``"rejection_rate"`` or the name of an outcome.
    hue : str, optional
        A setting drawn as one line per value.
    where : dict, optional
        ``{setting: value}``: plot only those settings.  Every setting other
        than ``x`` and ``hue`` must take one value in what is plotted.
    alpha : float, optional
        Level of the test, for ``y="rejection_rate"``.
    pvalue : str, optional
        The outcome holding the p-values.
    null : dict, optional
        ``{setting: value}`` of the null hypothesis (e.g.
        ``{"odds_ratio": 1.0}``): the y axis then reads "size" when every
        plotted setting is null, "power" when none is.
    n_se : float, optional
        Half-length of the error bars in standard errors (2: about 95%).
    logx : bool, optional
        Draw ``x`` on a logarithmic scale: budgets (``epsilon``, ``rho``,
        ``mu``) swept over orders of magnitude read evenly on it.  Every
        plotted value of ``x`` must then be positive.
    ax : matplotlib Axes, optional

    Returns
    -------
    matplotlib Axes

    References
    ----------
    Morris, T. P., White, I. R. and Crowther, M. J. (2019). "Using simulation
    studies to evaluate statistical methods", Statistics in Medicine 38,
    Table 6 (Monte Carlo standard errors of rejection rates and means).

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from invariantdp.simulate import simulate
    >>> res = simulate(lambda rng, shift: {"pvalue": rng.uniform() ** (1 + shift)},
    ...                {"shift": [0.0, 1.0, 3.0]}, replicates=100, seed=0)
    >>> ax = res.plot("shift", null={"shift": 0.0})
    >>> ax.get_xlabel(), ax.get_ylabel()
    ('shift', 'rejection rate (size at shift = 0, power elsewhere) ± 2 Monte Carlo s.e.')

    A privacy budget swept over orders of magnitude, on a log axis:

    >>> res = simulate(lambda rng, rho: {"pvalue": rng.uniform() ** (1 + rho)},
    ...                {"rho": [0.01, 0.1, 1.0]}, replicates=50, seed=0)
    >>> res.plot("rho", logx=True).get_xscale()
    'log'
    """
    settings = tuple(result.settings)
    for name, value in (("x", x), ("hue", hue)):
        if value is not None and value not in settings:
            raise InvariantDPError(f"`{name}` ({value!r}) must be one of the settings {settings}.")
    if hue == x:
        raise InvariantDPError(f"`hue` ({hue!r}) must be another setting than `x`.")
    n_se = check_positive("n_se", n_se)
    if not isinstance(logx, bool | np.bool_):
        raise TypeError(
            f"`logx` must be True or False, got {type(logx).__name__} ({format_value(logx)})."
        )
    if y == "rejection_rate":
        table = result.rejection_rate(alpha, pvalue=pvalue)
    else:
        table = result.mean(y).rename(columns={"mean": y})
    table = _select(table, settings, where)
    varying = [s for s in settings if s not in (x, hue) and table[s].nunique(dropna=False) > 1]
    if varying:
        raise InvariantDPError(
            f"the settings {tuple(varying)} take several values in the plot: draw one as "
            f"`hue`, or choose one value with `where={{{varying[0]!r}: ...}}`."
        )
    if logx:
        bad = [
            v
            for v in table[x].to_numpy()
            if isinstance(v, bool | np.bool_)
            or not isinstance(v, int | float | np.number)
            or not v > 0
        ]
        if bad:
            raise InvariantDPError(
                f"`logx` (True) needs every plotted value of the setting {x!r} to be a "
                f"positive number, got {bad[0]!r}."
            )
    ax = get_ax(ax)
    groups = [(None, table)] if hue is None else list(table.groupby(hue, sort=False))
    for value, group in groups:
        group = group.sort_values(x)
        ax.errorbar(
            group[x].to_numpy(),
            group[y].to_numpy(dtype=float),
            yerr=n_se * group["mc_se"].to_numpy(dtype=float),
            marker="o",
            ms=4,
            capsize=3,
            label=None if hue is None else f"{hue} = {value}",
        )
    if y == "rejection_rate":
        ax.axhline(alpha, color="grey", ls=":", lw=1, label=f"level {alpha:g}")
        label = _rate_label(table, null)
    else:
        label = f"mean of {y}"
    if logx:
        ax.set_xscale("log")
    ax.set_xlabel(x)
    ax.set_ylabel(f"{label} ± {n_se:g} Monte Carlo s.e.")
    if hue is not None or y == "rejection_rate":
        ax.legend(frameon=False)
    return ax

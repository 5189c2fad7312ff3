"""Figures people would rather look at than read (needs the ``plot`` extra).

Each function takes an optional matplotlib ``ax`` and returns it, like
ArviZ's plotting functions; nothing is shown or saved implicitly.
"""

from .power import plot_power_curves, plot_pvalue_histogram, plot_pvalue_vs_epsilon

__all__: list[str] = ["plot_power_curves", "plot_pvalue_histogram", "plot_pvalue_vs_epsilon"]

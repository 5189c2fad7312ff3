"""Figures people would rather look at than read (needs the ``plot`` extra).

Each function takes an optional matplotlib ``ax`` and returns it, like
ArviZ's plotting functions; nothing is shown or saved implicitly.
"""

from ._congenial_draws import plot_release_distances
from ._power_curves import plot_power_curves, plot_pvalue_histogram, plot_pvalue_vs_epsilon
from ._simulation_plots import plot_simulation
from ._small_areas import plot_eblup, plot_shrinkage
from ._swap_rates import plot_swapping_epsilon, plot_swapping_mape

# deprecated alias of invariantdp.mechanisms.swapping_mape, for one release
from ._swap_rates import swapping_mape as swapping_mape

__all__: list[str] = [
    "plot_eblup",
    "plot_power_curves",
    "plot_pvalue_histogram",
    "plot_pvalue_vs_epsilon",
    "plot_release_distances",
    "plot_shrinkage",
    "plot_simulation",
    "plot_swapping_epsilon",
    "plot_swapping_mape",
]

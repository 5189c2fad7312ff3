"""Mechanisms that produce a :class:`~invariantdp.Release`."""

from ..exceptions import ConvergenceWarning
from .additive import (
    discrete_gaussian,
    discrete_laplace,
    gaussian,
    laplace,
    lp_mechanism,
    tulap,
)
from .congenial import (
    ConditionalRelease,
    LinearInequalities,
    SamplerDiagnostics,
    conditional_release,
    l1_postprocess,
    l1_privacy_level,
    l2_postprocess,
)
from .knorm import KNormNoise, knorm
from .odds_ratio import odds_ratio_release
from .semi_dp import semi_dp_gaussian, semi_dp_knorm
from .subspace import (
    SubspaceNoise,
    distributed_privatize,
    extended_gaussian,
    extended_laplace,
    projected_gaussian,
    projected_laplace,
)
from .swapping import (
    SwappingInvariants,
    SwapResult,
    permutation_swap,
    swapping_invariants,
    swapping_mape,
    table_on_release_cells,
)

__all__ = [
    "ConditionalRelease",
    "ConvergenceWarning",
    "LinearInequalities",
    "SamplerDiagnostics",
    "conditional_release",
    "l1_postprocess",
    "l1_privacy_level",
    "l2_postprocess",
    "KNormNoise",
    "SubspaceNoise",
    "discrete_gaussian",
    "discrete_laplace",
    "distributed_privatize",
    "extended_gaussian",
    "extended_laplace",
    "gaussian",
    "knorm",
    "laplace",
    "lp_mechanism",
    "projected_gaussian",
    "projected_laplace",
    "semi_dp_gaussian",
    "semi_dp_knorm",
    "tulap",
    "odds_ratio_release",
    "SwapResult",
    "SwappingInvariants",
    "permutation_swap",
    "swapping_invariants",
    "swapping_mape",
    "table_on_release_cells",
]

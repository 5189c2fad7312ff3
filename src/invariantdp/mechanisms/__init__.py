"""Mechanisms that produce a :class:`~invariantdp.Release` (or a subclass of it).

Every mechanism returns a :class:`~invariantdp.Release`:
:func:`conditional_release` a :class:`ConditionalRelease` (with its draws and
sampler diagnostics) and :func:`permutation_swap` a :class:`SwapResult` (with
the swapped microdata); both are Releases, and save and load as plain ones.
The one exception is :func:`distributed_privatize`, which returns one agent's
share of a release (Algorithm 4 of Gao, Gong & Yu): the shares together are
the release of the central mechanism.
A mechanism named after its noise law has the suffix ``_mechanism``
(:func:`laplace_mechanism`, :func:`tulap_mechanism`, ...): the short name
(``invariantdp.distributions.tulap``) is the law.  The old names ``laplace``,
``gaussian``, ``discrete_laplace``, ``discrete_gaussian`` and ``tulap`` are
deprecated aliases of the mechanisms, kept for one release.

Modules: :mod:`.additive` (Laplace, Gaussian), :mod:`.discrete` (discrete
Laplace, discrete Gaussian, Tulap), :mod:`.knorm` (l_p and K-norm),
:mod:`.subspace` (projected and extended, Gao, Gong & Yu), :mod:`.semi_dp`
and :mod:`.odds_ratio` (Cho & Awan), :mod:`.congenial` (Gong & Meng),
:mod:`.swapping` (Bailie, Gong & Meng); what they share, including the one
constructor of their releases, is in :mod:`._base`.
"""

from .._deprecation import moved_names
from ._additive import gaussian_mechanism, laplace_mechanism
from ._congenial import (
    ConditionalRelease,
    LinearInequalities,
    SamplerDiagnostics,
    conditional_release,
    l1_postprocess,
    l1_privacy_level,
    l2_postprocess,
)
from ._integer_noise import discrete_gaussian_mechanism, discrete_laplace_mechanism, tulap_mechanism
from ._knorm_mechanisms import KNormNoise, knorm, lp_mechanism
from ._odds_ratio_release import odds_ratio_release
from ._permutation_swap import (
    SwappingInvariants,
    SwapResult,
    permutation_swap,
    swapping_invariants,
    swapping_mape,
    table_on_release_cells,
)
from ._semi_dp import semi_dp_gaussian, semi_dp_knorm
from ._subspace_mechanisms import (
    SubspaceNoise,
    distributed_privatize,
    extended_gaussian,
    extended_laplace,
    projected_gaussian,
    projected_laplace,
)

__all__ = [
    "ConditionalRelease",
    "LinearInequalities",
    "SamplerDiagnostics",
    "conditional_release",
    "l1_postprocess",
    "l1_privacy_level",
    "l2_postprocess",
    "KNormNoise",
    "SubspaceNoise",
    "discrete_gaussian_mechanism",
    "discrete_laplace_mechanism",
    "distributed_privatize",
    "extended_gaussian",
    "extended_laplace",
    "gaussian_mechanism",
    "knorm",
    "laplace_mechanism",
    "lp_mechanism",
    "projected_gaussian",
    "projected_laplace",
    "semi_dp_gaussian",
    "semi_dp_knorm",
    "tulap_mechanism",
    "odds_ratio_release",
    "SwapResult",
    "SwappingInvariants",
    "permutation_swap",
    "swapping_invariants",
    "swapping_mape",
    "table_on_release_cells",
]

# the mechanisms' old names, which the noise laws now own (invariantdp.distributions)
__getattr__ = moved_names(
    __name__,
    {
        "laplace": laplace_mechanism,
        "gaussian": gaussian_mechanism,
        "discrete_laplace": discrete_laplace_mechanism,
        "discrete_gaussian": discrete_gaussian_mechanism,
        "tulap": tulap_mechanism,
        "ConvergenceWarning": "invariantdp.exceptions.ConvergenceWarning",
    },
)

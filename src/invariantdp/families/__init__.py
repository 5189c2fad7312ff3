"""Noise families: the one home of everything the package knows about a noise law.

A :class:`~invariantdp.release.NoiseLaw` names its family by a string
(``"tulap"``, ``"discrete_gaussian"``, ...), the form it takes in a release's
JSON document.  This package maps that name to a :class:`NoiseFamily`, which
gives every consumer what it needs of the law:

* the law itself: the frozen scipy.stats-style distribution of the noise,
  built from the params (:meth:`NoiseFamily.law`);
* the exact sampler of the law, for the families that have one
  (:attr:`NoiseFamily.exact_sampler`; the samplers live in
  :mod:`invariantdp.distributions`);
* its calibration: the params from privacy parameters and a sensitivity
  (``rho`` -> ``sigma``, ``epsilon`` -> ``scale``, ``(epsilon, delta)`` ->
  Tulap's ``(b, q)``) or from an agency's published terms, and the guarantee
  they imply (:meth:`NoiseFamily.calibrate`; the formulas, shared with the
  mechanisms, in :mod:`._calibration`);
* the JSON schema of its params and their validation
  (:meth:`NoiseFamily.validate`, documented in :mod:`invariantdp.release`),
  and the check that a recorded guarantee is implied by the law
  (:meth:`NoiseFamily.check_claim`);
* its support: integer-valued (``integer``) or not, and whether the noise
  keeps the invariants exactly (``keeps_invariants``);
* the view a DP test needs, its cdf on lattices and its tails
  (:meth:`NoiseFamily.tails`, a :class:`NoiseTails`);
* the view a linear estimator needs, for the Gaussian-type families: the
  actual variance of each cell's noise (or its covariance), its lattice step
  and whether exact discrete intervals apply (:meth:`NoiseFamily.cell_noise`,
  a :class:`CellNoise`), and the draws of noise set by an exact variance
  parameter that make a census noisy measurement
  (:meth:`NoiseFamily.measurement_noise`);
* how a PyMC model observes a release with this noise
  (:meth:`NoiseFamily.likelihood`, a :class:`NoiseLikelihood` whose
  :class:`LikelihoodForm` the PyMC layer of :mod:`invariantdp.inference.bayes`
  implements).

Every consumer (the JSON reader, :meth:`NoiseLaw.distribution`, the
mechanisms, the DP tests, the likelihoods and the Bayes models) reads a
release's noise through its family, :attr:`NoiseLaw.spec
<invariantdp.release.NoiseLaw.spec>`; this is the only package that compares
a family name with a string.  A user family is added with
:func:`register_noise_family` and works end to end (read, tested, modelled).
The registry is, with the deprecation registry, the package's only global
state.

Modules: the class and the registry in :mod:`._family`; the Tulap family in
:mod:`._tulap_family`, the Gaussian with a full covariance in
:mod:`._correlated_gaussian`, the others in :mod:`._builtin_families`; their schemas in
:mod:`._schemas`, calibrations in :mod:`._calibration`, claim checks in
:mod:`._claims`, likelihood forms in :mod:`._likelihood`, the test view
in :mod:`._tails` and the estimators' view in :mod:`._cell_noise`.

Examples
--------
>>> from invariantdp.families import TULAP, noise_family
>>> noise_family("tulap") is TULAP
True
>>> law = TULAP.law({"b": 0.5, "q": 0.0})
>>> round(float(law.cdf(0.0)), 12)
0.5
>>> sorted(noise_family("discrete_gaussian").validate({"sigma": 2.0}, "noise.params"))
['integer']
>>> noise_family("discrete_gaussian").calibrate(rho=0.5, sensitivity=1.0)[0]
{'sigma': 1.0}
"""

from ._builtin_families import DISCRETE_GAUSSIAN, DISCRETE_LAPLACE, GAUSSIAN, LAPLACE
from ._cell_noise import CellNoise
from ._claims import overstated
from ._correlated_gaussian import CORRELATED_GAUSSIAN
from ._family import (
    NoiseFamily,
    SchemaContext,
    gaussian_type_families,
    noise_families,
    noise_family,
    register_noise_family,
)
from ._likelihood import (
    DISCRETE_GAUSSIAN_LIKELIHOOD,
    DISCRETE_LAPLACE_LIKELIHOOD,
    GAUSSIAN_LIKELIHOOD,
    LAPLACE_LIKELIHOOD,
    PROJECTED_GAUSSIAN_LIKELIHOOD,
    TULAP_LIKELIHOOD,
    LikelihoodForm,
    NoiseLikelihood,
)
from ._tails import NoiseTails
from ._tulap_family import TULAP, noise_tails

# isort: split
# Helpers the package's neighbours in invariantdp import from here, since a
# private module is imported only inside its package.  Not public (not in __all__).
from ._builtin_families import discrete_gaussian_timing_tv as discrete_gaussian_timing_tv
from ._calibration import exact_gaussian_variance as exact_gaussian_variance
from ._calibration import gaussian_rho as gaussian_rho
from ._calibration import gaussian_sigma as gaussian_sigma
from ._calibration import laplace_rate as laplace_rate
from ._calibration import laplace_scale as laplace_scale
from ._calibration import mu_of_rho as mu_of_rho
from ._calibration import rho_of_mu as rho_of_mu
from ._claims import STRUCTURED_FAMILIES as STRUCTURED_FAMILIES
from ._claims import calibration_norm as calibration_norm
from ._tulap_family import tulap_tails as tulap_tails

__all__ = [
    "CORRELATED_GAUSSIAN",
    "DISCRETE_GAUSSIAN",
    "DISCRETE_GAUSSIAN_LIKELIHOOD",
    "DISCRETE_LAPLACE",
    "DISCRETE_LAPLACE_LIKELIHOOD",
    "GAUSSIAN",
    "GAUSSIAN_LIKELIHOOD",
    "LAPLACE",
    "LAPLACE_LIKELIHOOD",
    "PROJECTED_GAUSSIAN_LIKELIHOOD",
    "TULAP",
    "TULAP_LIKELIHOOD",
    "CellNoise",
    "LikelihoodForm",
    "NoiseFamily",
    "NoiseLikelihood",
    "NoiseTails",
    "SchemaContext",
    "gaussian_type_families",
    "noise_families",
    "noise_family",
    "noise_tails",
    "overstated",
    "register_noise_family",
]

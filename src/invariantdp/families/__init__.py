"""Noise families: the one home of everything the package knows about a noise law.

A :class:`~invariantdp.release.NoiseLaw` names its family by a string
(``"tulap"``, ``"discrete_gaussian"``, ...), the form it takes in a release's
JSON document.  This module maps that name to a :class:`NoiseFamily`, which
holds, for the family:

* its law: the frozen scipy.stats-style distribution of the noise, built from
  the params (:meth:`NoiseFamily.law`); for the scalar families its ``logpdf``
  / ``logcdf`` / ``support`` are scipy's;
* the JSON schema of its params and their validation
  (:meth:`NoiseFamily.validate`, documented in :mod:`invariantdp.release`);
* its support: integer-valued (``integer``) or not, and whether the noise
  keeps the invariants exactly (``keeps_invariants``);
* how a PyMC model observes a release with this noise
  (:meth:`NoiseFamily.likelihood`, a :class:`NoiseLikelihood`: the PyMC
  distribution of :mod:`invariantdp.inference.bayes` and its parameters).

Every consumer (the JSON reader, :meth:`NoiseLaw.distribution`, the UMPU
tests, the likelihoods and the Bayes models) asks this module, through
:attr:`NoiseLaw.spec <invariantdp.release.NoiseLaw.spec>`; this is the only
module that compares a family name with a string.  A user family is added with
:func:`register_noise_family`.

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
"""

from .._deprecation import moved_names
from ._builtin_families import DISCRETE_GAUSSIAN, DISCRETE_LAPLACE, GAUSSIAN, LAPLACE, TULAP
from ._family import (
    NoiseFamily,
    NoiseLikelihood,
    SchemaContext,
    noise_families,
    noise_family,
    register_noise_family,
)

__all__ = [
    "DISCRETE_GAUSSIAN",
    "DISCRETE_LAPLACE",
    "GAUSSIAN",
    "LAPLACE",
    "TULAP",
    "NoiseFamily",
    "NoiseLikelihood",
    "SchemaContext",
    "noise_families",
    "noise_family",
    "register_noise_family",
]

# old submodules of this package import with a DeprecationWarning (invariantdp._old_module_paths)
__getattr__ = moved_names(__name__, {})

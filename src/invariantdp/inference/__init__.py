"""Inference from releases: tests of hypotheses, likelihoods, posteriors.

Two conventions hold for the tests and models here:

* each accepts the :class:`~invariantdp.Release` in place of the released
  value, and then takes the noise law (and the invariants it needs) from it;
  a second noise law given alongside is refused;
* the value of a parameter under the null hypothesis is ``null_<parameter>``
  (``null_p`` in :func:`ump_binomial_test`, ``null_odds_ratio`` in the
  odds-ratio test, its critical value and power, and in the results), and a
  power function takes the alternative under the bare parameter name
  (``odds_ratio=``).  The former spellings ``p0=`` and ``odds_ratio=`` (as
  the null of :func:`umpu_odds_ratio_test`) still work, with a
  ``DeprecationWarning``.
"""

from ._binomial_test import BinomialTestResult, ump_binomial_test
from ._fay_herriot import FayHerriot, FayHerriotResults
from ._invariant_likelihoods import (
    conditional_laplace_logpdf,
    degenerate_gaussian_logpdf,
    projected_gaussian_logpdf,
    projected_gaussian_marginal_loglik,
)
from ._likelihood_models import PrivatizedNegativeBinomial, PrivatizedPoisson
from ._loglinear_model import IndependenceTestResult, LogLinearResults, PrivatizedLogLinear
from ._odds_ratio_test import (
    OddsRatioTestResult,
    umpu_odds_ratio_critical_value,
    umpu_odds_ratio_power,
    umpu_odds_ratio_test,
)
from ._term_tests import LikelihoodRatioTestResult, PrivatizedResults
from ._test_power import ump_binomial_power, ump_binomial_sample_size, umpu_odds_ratio_sample_size

# isort: split
# Helpers the package's neighbours in invariantdp import from here, since a
# private module is imported only inside its package.  Not public (not in __all__).
from ._count_likelihoods import exact_unavailable as exact_unavailable
from ._release_observation import observe_release as observe_release

__all__ = [
    "FayHerriot",
    "FayHerriotResults",
    "IndependenceTestResult",
    "LikelihoodRatioTestResult",
    "LogLinearResults",
    "PrivatizedLogLinear",
    "PrivatizedNegativeBinomial",
    "PrivatizedPoisson",
    "PrivatizedResults",
    "conditional_laplace_logpdf",
    "degenerate_gaussian_logpdf",
    "projected_gaussian_logpdf",
    "projected_gaussian_marginal_loglik",
    "BinomialTestResult",
    "OddsRatioTestResult",
    "ump_binomial_power",
    "ump_binomial_sample_size",
    "ump_binomial_test",
    "umpu_odds_ratio_critical_value",
    "umpu_odds_ratio_power",
    "umpu_odds_ratio_sample_size",
    "umpu_odds_ratio_test",
]

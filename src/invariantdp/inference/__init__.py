"""Inference from releases: tests of hypotheses, likelihoods, posteriors."""

from .binomial import BinomialTestResult, ump_binomial_test
from .likelihood import (
    conditional_laplace_logpdf,
    degenerate_gaussian_logpdf,
    projected_gaussian_logpdf,
    projected_gaussian_marginal_loglik,
)
from .models import IndependenceTestResult, PrivatizedLogLinear, PrivatizedPoisson
from .odds_ratio import (
    OddsRatioTestResult,
    umpu_odds_ratio_critical_value,
    umpu_odds_ratio_power,
    umpu_odds_ratio_test,
)

__all__ = [
    "IndependenceTestResult",
    "PrivatizedLogLinear",
    "PrivatizedPoisson",
    "conditional_laplace_logpdf",
    "degenerate_gaussian_logpdf",
    "projected_gaussian_logpdf",
    "projected_gaussian_marginal_loglik",
    "BinomialTestResult",
    "OddsRatioTestResult",
    "ump_binomial_test",
    "umpu_odds_ratio_critical_value",
    "umpu_odds_ratio_power",
    "umpu_odds_ratio_test",
]

"""Inference from releases: tests of hypotheses, likelihoods, posteriors."""

from .binomial import BinomialTestResult, ump_binomial_test
from .odds_ratio import (
    OddsRatioTestResult,
    umpu_odds_ratio_critical_value,
    umpu_odds_ratio_power,
    umpu_odds_ratio_test,
)

__all__ = [
    "BinomialTestResult",
    "OddsRatioTestResult",
    "ump_binomial_test",
    "umpu_odds_ratio_critical_value",
    "umpu_odds_ratio_power",
    "umpu_odds_ratio_test",
]

"""invariantdp: inference for differentially private releases with invariants.

The public API: a :class:`Release` crosses from curator to analyst; the
mechanisms in :mod:`invariantdp.mechanisms` make releases; the functions in
:mod:`invariantdp.inference` (re-exported here) test hypotheses from them.
"""

from importlib.metadata import PackageNotFoundError, version

from . import datasets, distributions, exceptions, inference, mechanisms, privacy
from ._results import ConfidenceInterval, Summary
from .exceptions import ConvergenceWarning, InvariantDPError
from .inference import (
    BinomialTestResult,
    OddsRatioTestResult,
    ump_binomial_test,
    umpu_odds_ratio_critical_value,
    umpu_odds_ratio_power,
    umpu_odds_ratio_test,
)
from .invariants import Invariants, nested_totals, null_space_projector, one_way_margins, totals
from .release import NoiseLaw, PrivacyGuarantee, Release

try:
    __version__ = version("invariantdp")
except PackageNotFoundError:  # pragma: no cover - running from a source tree
    __version__ = "0+unknown"

__all__ = [
    "BinomialTestResult",
    "ConfidenceInterval",
    "ConvergenceWarning",
    "InvariantDPError",
    "Invariants",
    "NoiseLaw",
    "OddsRatioTestResult",
    "PrivacyGuarantee",
    "Release",
    "Summary",
    "datasets",
    "distributions",
    "exceptions",
    "inference",
    "mechanisms",
    "nested_totals",
    "null_space_projector",
    "one_way_margins",
    "privacy",
    "totals",
    "ump_binomial_test",
    "umpu_odds_ratio_critical_value",
    "umpu_odds_ratio_power",
    "umpu_odds_ratio_test",
]

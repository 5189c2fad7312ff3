"""invariantdp: inference for differentially private releases with invariants.

The public API: a :class:`Release` crosses from curator to analyst; the
mechanisms in :mod:`invariantdp.mechanisms` make releases, and an analyst
builds one from published numbers with :meth:`Release.from_published`
(:mod:`invariantdp.published`); the functions in :mod:`invariantdp.inference`
(re-exported here) test hypotheses from them.  Every noise law belongs to a
family of :mod:`invariantdp.families`.
"""

from importlib.metadata import PackageNotFoundError, version

from . import (
    datasets,
    distributions,
    exceptions,
    families,
    inference,
    labels,
    mechanisms,
    privacy,
    published,
)
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
    "families",
    "inference",
    "labels",
    "mechanisms",
    "nested_totals",
    "null_space_projector",
    "one_way_margins",
    "privacy",
    "published",
    "totals",
    "ump_binomial_test",
    "umpu_odds_ratio_critical_value",
    "umpu_odds_ratio_power",
    "umpu_odds_ratio_test",
]

"""invariantdp: inference for differentially private releases with invariants.

The public API: a :class:`Release` crosses from curator to analyst; the
mechanisms in :mod:`invariantdp.mechanisms` make releases, and an analyst
builds one from published numbers with :meth:`Release.from_published`
(:mod:`invariantdp.published`); the functions in :mod:`invariantdp.inference`
(re-exported here) test hypotheses from them, and :func:`estimate` gives
every cell (or sum of cells) an estimate and interval under the invariants.
Every noise law belongs to a family of :mod:`invariantdp.families`.
"""

from importlib.metadata import PackageNotFoundError, version

from . import (
    census,
    datasets,
    distributions,
    exceptions,
    families,
    inference,
    invariants,
    labels,
    mechanisms,
    privacy,
    published,
)
from ._deprecation import moved_names
from ._estimates import CellEstimates, estimate
from ._results import ConfidenceInterval, Summary
from .exceptions import InvariantDPError
from .inference import (
    ump_binomial_test,
    umpu_odds_ratio_critical_value,
    umpu_odds_ratio_power,
    umpu_odds_ratio_test,
)
from .invariants import Invariants
from .release import NoiseLaw, PrivacyGuarantee, Release

try:
    __version__ = version("invariantdp")
except PackageNotFoundError:  # pragma: no cover - running from a source tree
    __version__ = "0+unknown"

__all__ = [
    "CellEstimates",
    "ConfidenceInterval",
    "InvariantDPError",
    "Invariants",
    "NoiseLaw",
    "PrivacyGuarantee",
    "Release",
    "Summary",
    "census",
    "datasets",
    "distributions",
    "estimate",
    "exceptions",
    "families",
    "inference",
    "invariants",
    "labels",
    "mechanisms",
    "privacy",
    "published",
    "ump_binomial_test",
    "umpu_odds_ratio_critical_value",
    "umpu_odds_ratio_power",
    "umpu_odds_ratio_test",
]

# names the top level re-exported before it kept a curated handful (0.1.0)
__getattr__ = moved_names(
    __name__,
    {
        "BinomialTestResult": "invariantdp.inference.BinomialTestResult",
        "OddsRatioTestResult": "invariantdp.inference.OddsRatioTestResult",
        "ConvergenceWarning": "invariantdp.exceptions.ConvergenceWarning",
        "nested_totals": "invariantdp.invariants.nested_totals",
        "null_space_projector": "invariantdp.invariants.null_space_projector",
        "one_way_margins": "invariantdp.invariants.one_way_margins",
        "totals": "invariantdp.invariants.totals",
    },
)

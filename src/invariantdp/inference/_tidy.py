"""Results as plain data: ``to_dict()`` (JSON-safe) and ``to_frame()`` (one tidy row).

A mixin for the frozen dataclasses of test results: their public fields, and
for a test the estimate and the interval at ``confidence_level``, as Python
scalars; an infinite or undefined number becomes ``None`` so that
``json.dumps(result.to_dict(), allow_nan=False)`` always works.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd

from ..exceptions import InvariantDPError

__all__ = ["TidyResult", "json_safe"]


def json_safe(value):
    """``value`` as JSON data: numpy scalars and arrays to Python, inf and NaN to None.

    Examples
    --------
    >>> json_safe({"p": np.float64(0.5), "ci": (1.0, np.inf), "n": np.int64(3)})
    {'p': 0.5, 'ci': [1.0, None], 'n': 3}
    """
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple | np.ndarray):
        return [json_safe(v) for v in (value.tolist() if isinstance(value, np.ndarray) else value)]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return str(value)


class TidyResult:
    """``to_dict()`` and ``to_frame()`` for a dataclass result (see the module docstring)."""

    def to_dict(self, confidence_level: float = 0.95) -> dict:
        """The result as a JSON-safe dict: public fields, estimate and interval."""
        out = {
            f.name: getattr(self, f.name)
            for f in dataclasses.fields(self)
            if not f.name.startswith("_")
        }
        if hasattr(type(self), "estimate"):
            try:
                out["estimate"] = self.estimate
            except InvariantDPError:  # epsilon too small to locate it: undefined, like NaN
                out["estimate"] = None
        if hasattr(self, "confidence_interval"):
            ci = self.confidence_interval(confidence_level)
            out["confidence_level"] = confidence_level
            out["confidence_interval"] = (ci.low, ci.high)
        return json_safe(out)

    def to_frame(self, confidence_level: float = 0.95) -> pd.DataFrame:
        """One tidy row: the scalar entries of :meth:`to_dict` (an interval as two columns)."""
        d = self.to_dict(confidence_level)
        ci = d.pop("confidence_interval", None)
        if ci is not None:
            d["ci_low"], d["ci_high"] = ci
        row = {k: (v if not isinstance(v, list | dict) else str(v)) for k, v in d.items()}
        return pd.DataFrame([row])

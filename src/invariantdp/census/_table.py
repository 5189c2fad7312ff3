"""The array block of one (level, query): unit indices, values and variances."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["QueryTable"]


@dataclass(frozen=True)
class QueryTable:
    """Rows of one (level, query): unit indices, values ``(n, cells)`` and variances ``(n,)``."""

    units: np.ndarray
    values: np.ndarray
    variance: np.ndarray | None = None

"""Result containers shared by the tests of hypotheses."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

__all__ = ["ConfidenceInterval", "estimate_text", "format_table"]


class ConfidenceInterval(NamedTuple):
    """A confidence interval ``(low, high)``; infinite ends mean no bound."""

    low: float
    high: float


def _fmt_num(x) -> str:
    if isinstance(x, str):
        return x
    if isinstance(x, bool | np.bool_):
        return str(bool(x))
    if isinstance(x, int | np.integer):
        return f"{int(x)}"
    x = float(x)
    if not np.isfinite(x):
        return "inf" if x > 0 else ("-inf" if x < 0 else "nan")
    if x != 0 and (abs(x) < 1e-4 or abs(x) >= 1e7):
        return f"{x:.4e}"
    return f"{x:.6g}"


def format_table(title: str, rows: list[tuple[str, object]], notes: list[str] = ()) -> str:
    """Format a two-column ``summary()`` block, statsmodels style."""
    width = max(len(title), 60)
    key_w = max(len(k) for k, _ in rows)
    lines = [title.center(width), "=" * width]
    for key, val in rows:
        lines.append(f"{key + ':':<{key_w + 2}}{_fmt_num(val)}")
    lines.append("=" * width)
    lines.extend(notes)
    return "\n".join(lines)


def estimate_text(result):
    """``result.estimate`` for a summary, or why there is none.

    A median-unbiased estimate raises where epsilon is so small that the
    p-value is flat in the parameter; a summary says so instead of failing.
    """
    from .exceptions import InvariantDPError

    try:
        return result.estimate
    except InvariantDPError:
        return "not resolvable at this epsilon"

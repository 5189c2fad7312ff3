"""Shared helpers of the plotting modules."""

from __future__ import annotations


def get_ax(ax=None):
    """Return ``ax`` or a new axes; raise a clear error without matplotlib."""
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise ImportError(
            "invariantdp.plotting needs matplotlib: pip install 'invariantdp[plot]'."
        ) from exc
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 4))
    return ax

"""Progress bars for long loops that are not PyMC's (which draws its own).

``progress=None`` (the default of every function that takes it) shows a bar
in a terminal or a notebook and none under CI (the ``CI`` environment
variable) or when the output is not interactive; ``True`` and ``False``
force it.  The bars are :mod:`tqdm`'s (``tqdm.auto``: a widget in Jupyter).
"""

from __future__ import annotations

import os
import sys

__all__ = ["progress_bar", "show_progress"]


def show_progress(progress) -> bool:
    """Whether to show a bar: ``progress`` itself, or the default described above."""
    if progress is not None:
        if not isinstance(progress, bool):
            raise TypeError(f"`progress` must be True, False or None, got {progress!r}.")
        return progress
    if os.environ.get("CI"):
        return False
    return "ipykernel" in sys.modules or sys.stderr.isatty()


def progress_bar(total: int, progress, *, desc: str, unit: str = "it"):
    """A tqdm bar of ``total`` steps, disabled unless :func:`show_progress` says so.

    Examples
    --------
    >>> with progress_bar(3, False, desc="demo") as bar:
    ...     for _ in range(3):
    ...         _ = bar.update(1)
    """
    from tqdm.auto import tqdm

    return tqdm(total=total, disable=not show_progress(progress), desc=desc, unit=unit)

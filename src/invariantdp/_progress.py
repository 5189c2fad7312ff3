"""Progress bars for long loops that are not PyMC's (which draws its own).

``progress=None`` (the default of every function that takes it) shows a bar
in a terminal or a notebook and none under CI (the ``CI`` environment
variable) or when the output is not interactive; ``True`` and ``False``
force it.  The bars are :mod:`tqdm`'s (``tqdm.auto``: a widget in Jupyter).

A loop may count every step: :func:`progress_bar` hands the counts to tqdm
at most every :data:`REFRESH_SECONDS`, because one tqdm update per step of a
fast loop is not free (in a notebook, where every update reaches the widget,
a bar updated 2,400 times added ~20% to a study of 7,200 runs of 10 us).
"""

from __future__ import annotations

import os
import sys
import time

__all__ = ["REFRESH_SECONDS", "progress_bar", "show_progress"]

#: the least time between two updates of the bar the user sees
REFRESH_SECONDS = 0.2


def show_progress(progress) -> bool:
    """Whether to show a bar: ``progress`` itself, or the default described above."""
    if progress is not None:
        if not isinstance(progress, bool):
            raise TypeError(f"`progress` must be True, False or None, got {progress!r}.")
        return progress
    if os.environ.get("CI"):
        return False
    return "ipykernel" in sys.modules or sys.stderr.isatty()


#: the clock of the throttle (a name of its own, so that tests can drive it)
_clock = time.monotonic


class _ThrottledBar:
    """A tqdm bar fed in batches: ``update`` adds to a count, tqdm sees it now and then."""

    def __init__(self, bar, interval: float):
        self._bar = bar
        self._interval = interval
        self._shown = bar.disable is False
        self._pending = 0
        self._last = _clock()
        #: steps counted so far, including those tqdm has not seen yet
        self.n = 0
        #: the updates handed to tqdm (what the throttling saves is visible in tests)
        self.pushes = 0

    def update(self, n: int = 1) -> None:
        self.n += n
        if self._shown:
            self._pending += n
            now = _clock()
            if now - self._last >= self._interval:
                self._push(now)

    def _push(self, now: float) -> None:
        if self._pending:
            self._bar.update(self._pending)
            self._pending = 0
            self.pushes += 1
        self._last = now

    def close(self) -> None:
        if self._shown:
            self._push(_clock())
        self._bar.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def progress_bar(
    total: int, progress, *, desc: str, unit: str = "it", interval: float = REFRESH_SECONDS
):
    """A bar of ``total`` steps, disabled unless :func:`show_progress` says so.

    ``update(n)`` is cheap enough to call once per step of a fast loop: the
    counts reach tqdm at most every ``interval`` seconds, and in full when
    the bar is closed (a ``with`` block closes it).

    Examples
    --------
    >>> with progress_bar(3, False, desc="demo") as bar:
    ...     for _ in range(3):
    ...         bar.update(1)
    >>> bar.n
    3
    """
    from tqdm.auto import tqdm

    bar = tqdm(total=total, disable=not show_progress(progress), desc=desc, unit=unit)
    return _ThrottledBar(bar, interval)

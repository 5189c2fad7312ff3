"""Result containers shared by the result objects: intervals and summaries."""

from __future__ import annotations

import functools
import html
from typing import NamedTuple

import numpy as np

from ._validation import check_confidence_level, format_value
from .exceptions import InvariantDPError

__all__ = [
    "ConfidenceInterval",
    "Summary",
    "cached_interval",
    "estimate_text",
    "format_table",
    "hypothesis_test_rows",
    "short_text",
    "summarise_params",
]


class ConfidenceInterval(NamedTuple):
    """A confidence interval ``(low, high)``; infinite ends mean no bound.

    Attributes
    ----------
    low : float
        Lower end (``-inf`` for a one-sided upper interval).
    high : float
        Upper end (``inf`` for a one-sided lower interval).

    References
    ----------
    Awan & Slavkovic (2018), Sec. 5 (DP confidence intervals from the
    uniformly most powerful tests).

    Examples
    --------
    >>> ci = ConfidenceInterval(0.25, float("inf"))
    >>> ci.low, ci.high
    (0.25, inf)
    """

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


class Summary:
    """What ``summary()`` returns: a titled table of named values, with notes.

    Like statsmodels' ``Summary``, it prints as text (``print(res.summary())``),
    renders as HTML in a notebook, and keeps the values it shows, so that code
    reads them from :attr:`rows` (or :meth:`as_dict`) instead of parsing text.

    Parameters
    ----------
    title : str
    rows : sequence of (str, object)
        Label and value of each line; numbers are formatted for display only.
    notes : sequence of str
        Lines printed under the table.

    References
    ----------
    statsmodels, ``statsmodels.iolib.summary.Summary`` (``as_text``,
    ``as_html``), the object this one mirrors.

    Examples
    --------
    >>> s = Summary("Test", [("p-value", 0.0123), ("n", 10)], ["one note"])
    >>> print(s)  # doctest: +NORMALIZE_WHITESPACE
                                Test
    ============================================================
    p-value: 0.0123
    n:       10
    ============================================================
    one note
    >>> s.as_dict()["n"]
    10
    """

    def __init__(self, title: str, rows, notes=(), *, parts=()):
        self.title = str(title)
        self.rows = tuple((str(k), v) for k, v in rows)
        self.notes = tuple(str(n) for n in notes)
        #: further summaries printed below this one (e.g. MCMC diagnostics)
        self.parts = tuple(parts)
        if not self.rows:
            raise ValueError("a Summary needs at least one row.")

    def extend(self, *more) -> Summary:
        """This summary followed by ``more`` (summaries, or lines of text)."""
        return Summary(self.title, self.rows, self.notes, parts=self.parts + more)

    def as_text(self) -> str:
        """The table as plain text (statsmodels style)."""
        width = max(len(self.title), 60)
        key_w = max(len(k) for k, _ in self.rows)
        lines = [self.title.center(width), "=" * width]
        lines.extend(f"{key + ':':<{key_w + 2}}{_fmt_num(val)}" for key, val in self.rows)
        lines.append("=" * width)
        lines.extend(self.notes)
        lines.extend(str(p) for p in self.parts)
        return "\n".join(lines)

    def as_html(self) -> str:
        """The table as an HTML fragment (what a notebook shows)."""
        body = "".join(
            f"<tr><th>{html.escape(k)}</th><td>{html.escape(_fmt_num(v))}</td></tr>"
            for k, v in self.rows
        )
        notes = "".join(f"<p>{html.escape(n)}</p>" for n in self.notes)
        more = "".join(
            p.as_html() if isinstance(p, Summary) else f"<p>{html.escape(str(p))}</p>"
            for p in self.parts
        )
        return (
            f"<table class='invariantdp-summary'><caption>{html.escape(self.title)}</caption>"
            f"{body}</table>{notes}{more}"
        )

    def as_dict(self) -> dict:
        """``{label: value}`` of the rows (and of the summaries below), as computed."""
        out = dict(self.rows)
        for p in self.parts:
            if isinstance(p, Summary):
                out.update(p.as_dict())
        return out

    def __str__(self) -> str:
        return self.as_text()

    def __repr__(self) -> str:
        return self.as_text()

    def _repr_html_(self) -> str:
        return self.as_html()

    def __contains__(self, text) -> bool:
        return text in self.as_text()

    def __eq__(self, other) -> bool:
        if isinstance(other, Summary):
            return self.as_text() == other.as_text()
        return NotImplemented

    __hash__ = None


def format_table(title: str, rows: list[tuple[str, object]], notes: list[str] = ()) -> Summary:
    """The :class:`Summary` of a result: a two-column block, statsmodels style."""
    return Summary(title, rows, notes)


def estimate_text(result):
    """``result.estimate`` for a summary, or why there is none.

    A median-unbiased estimate raises where epsilon is so small that the
    p-value is flat in the parameter; a summary says so instead of failing.
    """
    try:
        return result.estimate
    except InvariantDPError:
        return "not resolvable at this epsilon"


def hypothesis_test_rows(result, confidence_level: float, estimate_label: str) -> list:
    """The rows a test result's summary ends with: alternative, p-value, estimate, interval.

    ``result`` has ``alternative``, ``pvalue``, ``estimate`` and
    ``confidence_interval(confidence_level)``; the interval's row says its
    level and whether it is one- or two-sided; an infinite end prints as
    ``inf``.
    """
    ci = result.confidence_interval(confidence_level)
    # the interval inverts the test: one-sided for a one-sided alternative
    sides = "two-sided" if result.alternative == "two-sided" else "one-sided"
    return [
        ("alternative", result.alternative),
        ("p-value", result.pvalue),
        (estimate_label, estimate_text(result)),
        (
            f"{confidence_level:.0%} {sides} confidence interval",
            f"({ci.low:.6g}, {ci.high:.6g})",
        ),
    ]


def cached_interval(method):
    """Decorator: a result's ``confidence_interval(confidence_level)`` computed once per level.

    Results are frozen, so an interval cannot change; inverting a test costs
    many p-value evaluations, and ``summary()`` asks for the same interval
    again.  The level is checked before the cache is consulted, and the cache
    lives in the instance ``__dict__`` (as :func:`functools.cached_property`
    does), which frozen dataclasses allow.

    Examples
    --------
    >>> class Result:
    ...     calls = 0
    ...     @cached_interval
    ...     def confidence_interval(self, confidence_level=0.95):
    ...         Result.calls += 1
    ...         return ConfidenceInterval(0.0, confidence_level)
    >>> r = Result()
    >>> r.confidence_interval() == r.confidence_interval(0.95), Result.calls
    (True, 1)
    """

    @functools.wraps(method)
    def wrapper(self, confidence_level=0.95):
        level = check_confidence_level(confidence_level)
        cache = self.__dict__.setdefault("_confidence_intervals", {})
        if level not in cache:
            cache[level] = method(self, level)
        return cache[level]

    return wrapper


# --- abbreviations of long fields (Release.summary) -------------------------


def short_text(v, limit: int = 80) -> str:
    """A string shown as is (cut to ``limit``), anything else as :func:`format_value` echoes it."""
    if isinstance(v, str):
        return v if len(v) <= limit else v[: limit - 3] + "..."
    return format_value(v, limit)


def is_number(v) -> bool:
    """True for an int or float that is not a bool (a parameter worth printing with ``:g``)."""
    return isinstance(v, int | float) and not isinstance(v, bool)


def _summarise(v) -> str:
    if is_number(v):
        return f"{v:.6g}"
    if isinstance(v, str):
        return format_value(v, 40)
    if isinstance(v, dict):
        if "matrix" in v and "shape" in v:  # an invariants object
            kind = (v.get("structure") or {}).get("kind", "general")
            return f"<{kind} invariants on shape {tuple(v.get('shape', ()))}>"
        if len(v) <= 4 and all(is_number(x) or isinstance(x, str) for x in v.values()):
            return "{" + ", ".join(f"{k}: {_summarise(x)}" for k, x in v.items()) + "}"
        return f"<object with {len(v)} keys>"
    if isinstance(v, list | tuple):
        return f"<list of {len(v)}>"
    return format_value(v, 40)


def summarise_params(params: dict) -> str:
    """``{k: v}`` with arrays and nested objects abbreviated: one short line at any size."""
    text = "{" + ", ".join(f"{k}: {_summarise(v)}" for k, v in params.items()) + "}"
    return text if len(text) <= 160 else text[:157] + "..."

"""UMPU odds-ratio p-values agree with those recorded before the fast path (issue 13).

The reference (``tests/data/umpu_reference.json``) was computed by the code of
the commit named in its provenance, on tables of n = 1e2 .. 1e8 (mild and
strong association), null odds ratios 0.5, 1, 2, epsilon 0.1, 1, 10, delta 0
and 1e-3 and all three alternatives (``umpu_reference.py`` makes the grid).

That code was not exact everywhere: where the p-value is tiny or the table
large it anchored two summation windows on log-gamma values, whose rounding
(~1e-8 at n = 1e8) reached the p-value (up to 5e-7 relatively).  Where the
present p-value differs from the reference by more than 1e-12, it must agree
with an independent sum (:func:`exact_pvalue`) and the reference must not.
"""

import json
import warnings
from functools import cache

import numpy as np
import pytest

import invariantdp as idp

from .umpu_reference import PATH, grid
from .umpu_reference import exact_pvalue as _exact_pvalue

REFERENCE = json.loads(PATH.read_text())
#: relative tolerance, or absolute for p-values below TINY
RTOL, TINY = 1e-12, 1e-300
#: agreement with the independent sum (itself a recurrence over up to 3e4 steps at 1e8)
EXACT_RTOL = 5e-12


def _rel(got: float, want: float) -> float:
    if max(abs(got), abs(want)) < TINY:
        return 0.0
    return abs(got - want) / max(abs(got), abs(want))


@cache
def exact_pvalue(u, m, w, eps, delta, alt) -> float:
    return _exact_pvalue(u, m, w, eps, delta, alt)


def _pvalue(row) -> float:
    n, kind, which, u, m, w, eps, delta, alt, _ = row
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # the "far" statistics are improbable
        return idp.umpu_odds_ratio_test(
            u, tuple(m), epsilon=eps, delta=delta, alternative=alt, null_odds_ratio=w
        ).pvalue


def test_reference_covers_the_grid():
    rows = REFERENCE["rows"]
    keys = [[*r[:3], *r[4:9]] for r in rows]  # all but u, which depends on the law's mode
    assert keys == [[n, k, s, list(m), w, e, d, a] for n, k, s, _, m, w, e, d, a in grid()]
    assert len(REFERENCE["provenance"]["commit"]) == 40


@pytest.mark.parametrize("n", sorted({r[0] for r in REFERENCE["rows"]}))
def test_pvalues_match_the_reference_or_the_exact_sum(n):
    rows = [r for r in REFERENCE["rows"] if r[0] == n]
    bad = []
    for row in rows:
        got, want = _pvalue(row), row[-1]
        if _rel(got, want) <= RTOL:
            continue
        n_, kind, which, u, m, w, eps, delta, alt, _ = row
        exact = exact_pvalue(u, tuple(m), w, eps, delta, alt)
        if not (_rel(got, exact) <= EXACT_RTOL and _rel(want, exact) > RTOL):
            bad.append((row[:9], got, want, exact))
    assert not bad, f"{len(bad)} of {len(rows)} differ, e.g. {bad[:3]}"


@pytest.mark.parametrize(
    "n",
    [
        pytest.param(n, marks=pytest.mark.slow) if n > 10**6 else n
        for n in sorted({r[0] for r in REFERENCE["rows"]})
    ],
)
def test_pvalues_match_an_independent_sum(n):
    rows = [r for r in REFERENCE["rows"] if r[0] == n and r[8] != "two-sided"]
    bad = []
    for row in rows:
        n_, kind, which, u, m, w, eps, delta, alt, _ = row
        got, exact = _pvalue(row), exact_pvalue(u, tuple(m), w, eps, delta, alt)
        if _rel(got, exact) > EXACT_RTOL:
            bad.append((row[:9], got, exact))
    assert not bad, f"{len(bad)} of {len(rows)} differ, e.g. {bad[:3]}"


def test_pvalues_are_probabilities():
    p = np.array([r[-1] for r in REFERENCE["rows"]])
    assert np.all((p >= 0) & (p <= 1))

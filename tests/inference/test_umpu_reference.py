"""UMPU odds-ratio p-values agree with those recorded before the fast path (issue 13).

The reference (``tests/data/umpu_reference.json``) was computed by the code of
the commit named in its provenance, on tables of n = 1e2 .. 1e8 (mild and
strong association), null odds ratios 0.5, 1, 2, epsilon 0.1, 1, 10, delta 0
and 1e-3 and all three alternatives (``umpu_reference.py`` makes the grid).
"""

import json
import warnings

import numpy as np
import pytest

import invariantdp as idp

from .umpu_reference import PATH, grid

REFERENCE = json.loads(PATH.read_text())
#: relative tolerance, or absolute for p-values below TINY
RTOL, TINY = 1e-12, 1e-300


def _close(got: float, want: float) -> bool:
    if max(abs(got), abs(want)) < TINY:
        return True
    return abs(got - want) <= RTOL * max(abs(got), abs(want))


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
def test_pvalues_match_the_reference(n):
    rows = [r for r in REFERENCE["rows"] if r[0] == n]
    bad = []
    for row in rows:
        got, want = _pvalue(row), row[-1]
        if not _close(got, want):
            rel = abs(got - want) / max(abs(want), TINY)
            bad.append((row[:9], got, want, rel))
    assert not bad, f"{len(bad)} of {len(rows)} differ, e.g. {bad[:3]}"


def test_pvalues_are_probabilities():
    p = np.array([r[-1] for r in REFERENCE["rows"]])
    assert np.all((p >= 0) & (p <= 1))

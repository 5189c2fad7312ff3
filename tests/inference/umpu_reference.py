"""Grid of UMPU odds-ratio p-values recorded as a reference (issue 13).

``python tests/inference/umpu_reference.py`` records the p-values of
:func:`invariantdp.umpu_odds_ratio_test` on :func:`grid` into
``tests/data/umpu_reference.json`` with the git commit of the code that
computed them; ``test_umpu_reference.py`` checks that later code agrees to
1e-12.  Record it again only from a commit whose p-values are trusted.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np

PATH = Path(__file__).resolve().parents[1] / "data" / "umpu_reference.json"
SIZES = (10**2, 10**4, 10**6, 10**8)
ODDS_RATIOS = (0.5, 1.0, 2.0)
EPSILONS = (0.1, 1.0, 10.0)
DELTAS = (0.0, 1e-3)
ALTERNATIVES = ("greater", "less", "two-sided")


def table(n: int, kind: str) -> tuple[int, int, int, int]:
    """``(x11, x12, x21, x22)``: mildly (sqrt(n)/10) or strongly (n/100) associated."""
    a = n // 4
    d = max(1, int(np.sqrt(n) / 10)) if kind == "mild" else max(1, n // 100)
    return a + d, a - d, a - d, n - 3 * a + d


def margins_of(t) -> tuple[int, int, int, int]:
    x11, x12, x21, x22 = t
    return x11 + x12, x21 + x22, x11 + x21, x12 + x22


def statistics(t, w: float) -> dict[str, float]:
    """Released values: the table's ``x11``, and points near and far from the null bulk."""
    from invariantdp.inference._logconcave_sums import FisherNoncentralHypergeometric

    t1, t2, c1, _ = margins_of(t)
    law = FisherNoncentralHypergeometric(t1, t2, c1, float(np.log(w)))
    mode, sd = law.mode(), law.sd()
    return {
        "observed": t[0] + 0.37,
        "bulk": mode + round(2.0 * sd) + 0.37,
        "far": mode - round(12.0 * sd) - 0.61,
    }


def grid():
    """Rows ``(n, kind, which, u, margins, w, epsilon, delta, alternative)``."""
    for n in SIZES:
        for kind in ("mild", "strong"):
            t = table(n, kind)
            m = margins_of(t)
            for w in ODDS_RATIOS:
                for which, u in statistics(t, w).items():
                    for eps in EPSILONS:
                        for delta in DELTAS:
                            for alt in ALTERNATIVES:
                                yield n, kind, which, u, m, w, eps, delta, alt


def exact_log_pvalue(u, margins, w, eps, delta, side, z=16.0) -> float:
    """Independent one-sided log p-value: one log-recurrence window, anchored at the mode.

    The log pmf is accumulated from the mode outwards (no log-gamma anchor,
    whose rounding at 1e8 is ~1e-8) on the mode +- ``z`` sd and 100 points
    around ``u``, and summed with scipy's ``logsumexp`` and the Tulap logcdf.
    """
    from scipy.special import logsumexp

    from invariantdp.distributions import tulap_from_privacy
    from invariantdp.inference._logconcave_sums import FisherNoncentralHypergeometric

    t1, t2, c1, _ = margins
    law = FisherNoncentralHypergeometric(t1, t2, c1, float(np.log(w)))
    mode, sd = law.mode(), law.sd()
    lo = max(law.lo, min(mode - int(z * sd), int(u) - 100) - 50)
    hi = min(law.hi, max(mode + int(z * sd), int(u) + 100) + 50)
    h = np.arange(lo, hi + 1)
    log_r = np.log(law.ratio(h[:-1]))
    i = mode - lo
    lp = np.empty(h.size)
    lp[i] = 0.0
    lp[i + 1 :] = np.cumsum(log_r[i:])
    lp[:i] = -np.cumsum(log_r[:i][::-1])[::-1]
    x = h - u if side == "greater" else u - h
    log_f = tulap_from_privacy(eps, delta).logcdf(x)
    return float(logsumexp(lp + log_f) - logsumexp(lp))


def exact_pvalue(u, margins, w, eps, delta, alternative) -> float:
    """:func:`exact_log_pvalue` for any alternative (two-sided: twice the smaller, capped)."""
    if alternative == "two-sided":
        sides = [exact_log_pvalue(u, margins, w, eps, delta, s) for s in ("greater", "less")]
        return float(min(1.0, 2.0 * np.exp(min(sides))))
    return float(np.exp(exact_log_pvalue(u, margins, w, eps, delta, alternative)))


def record() -> None:
    import invariantdp as idp

    commit = subprocess.run(
        ["git", "rev-parse", "HEAD"], capture_output=True, text=True, check=True, cwd=PATH.parent
    ).stdout.strip()
    rows = []
    for n, kind, which, u, m, w, eps, delta, alt in grid():
        p = idp.umpu_odds_ratio_test(
            u, m, epsilon=eps, delta=delta, alternative=alt, null_odds_ratio=w
        ).pvalue
        rows.append([n, kind, which, u, list(m), w, eps, delta, alt, p])
    doc = {
        "provenance": {
            "commit": commit,
            "function": "invariantdp.umpu_odds_ratio_test(u, margins, epsilon=, delta=, "
            "alternative=, null_odds_ratio=).pvalue",
            "generator": "tests/inference/umpu_reference.py",
            "note": "recorded before the issue-13 fast path (hypergeometric tails outside the "
            "noise window)",
        },
        "columns": [
            "n",
            "table",
            "statistic",
            "u",
            "margins",
            "null_odds_ratio",
            "epsilon",
            "delta",
            "alternative",
            "pvalue",
        ],
        "rows": rows,
    }
    PATH.write_text(json.dumps(doc, separators=(",", ":")).replace("],[", "],\n[") + "\n")


if __name__ == "__main__":
    record()

"""The shortcuts of the UMPU odds-ratio p-value (issue 13) never change a p-value.

``_log_p_bound`` must bound the log one-sided p-value from above wherever it
is used to return 0 (p below ~1e-310) or 1 (the mirror below ~1e-17).
"""

import numpy as np
import pytest

from invariantdp.inference._noise import resolve_noise
from invariantdp.inference._odds_ratio_test import _log_p_bound, _log_p_one_sided, _pvalue


def _cases(rng, count):
    for _ in range(count):
        n = int(10 ** rng.uniform(1.5, 7))
        t1 = int(rng.integers(1, n))
        c1 = int(rng.integers(1, n))
        margins = (t1, n - t1, c1, n - c1)
        lo, hi = max(0, c1 - (n - t1)), min(t1, c1)
        sd = max(1.0, np.sqrt((hi - lo) / 4.0))
        log_w = float(rng.choice([0.0, rng.normal(0, 1.5)]))
        eps = float(10 ** rng.uniform(-1.5, 1.5))
        delta = float(rng.choice([0.0, 1e-3]))
        u = float(rng.uniform(lo - 3 * sd, hi + 3 * sd))
        yield u, margins, log_w, resolve_noise(eps, delta, None)


@pytest.mark.parametrize("side", ["greater", "less"])
def test_bound_is_an_upper_bound(rng, side):
    useful = 0
    for u, margins, log_w, noise in _cases(rng, 150):
        bound = _log_p_bound(u, margins, log_w, noise, side)
        exact = _log_p_one_sided(u, margins, log_w, noise, side)
        assert exact <= bound, (u, margins, log_w, noise.description, exact, bound)
        useful += bound < -39.0
    assert useful >= 20  # the cases reach the shortcuts


def test_shortcut_values_are_the_sums(rng):
    for u, margins, log_w, noise in _cases(rng, 150):
        for alt in ("greater", "less", "two-sided"):
            p = _pvalue(u, margins, log_w, noise, alt)
            sides = ("greater", "less") if alt == "two-sided" else (alt,)
            logs = [_log_p_one_sided(u, margins, log_w, noise, s) for s in sides]
            full = min(1.0, 2.0 * np.exp(min(logs))) if alt == "two-sided" else np.exp(logs[0])
            if max(p, full) >= 1e-300:
                assert p == pytest.approx(full, rel=1e-12)


def test_no_bound_for_other_noise():
    from scipy import stats

    noise = resolve_noise(None, 0.0, stats.norm())
    assert _log_p_bound(3.0, (10, 10, 10, 10), 0.0, noise, "greater") == np.inf


def test_privacy_noise_is_validated_then_reused():
    from invariantdp import InvariantDPError

    a = resolve_noise(1.0, 0.0, None)
    assert resolve_noise(1.0, 0.0, None) is a
    assert resolve_noise(1, 0, None).log_b == a.log_b
    for _ in range(2):  # a refused value is never cached
        with pytest.raises(InvariantDPError):
            resolve_noise(-1.0, 0.0, None)
        with pytest.raises(InvariantDPError):
            resolve_noise(1.0, 1.5, None)
    with pytest.raises(TypeError):
        resolve_noise(True, 0.0, None)
